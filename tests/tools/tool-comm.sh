#!/bin/sh
# timeout: 60
# A task whose pid saved_cmdlines gives to a dead task (after the pids
# wrapped, the kernel's list still names the last task that had the pid)
# is shown with its own name: the stream checks a pid's name in /proc the
# first time it sees the pid. The stream runs with a saved_cmdlines that
# names the live writer "stale-name" (a private mount namespace binds a
# copy over the file, tl_cmdlines); before the check it printed that name.
. "$(dirname "$0")/../lib.sh"
tl_require_root
tl_require_tracemap
cd "$TL_TMP" || exit 1

inst=$(tl_instance cm)
idir=$TL_TRACEFS/instances/$inst

# the live task: writes one marker when told, then stays a moment
cat > comm-writer <<'W'
#!/bin/sh
read go < "$1"
echo "comm-check pid=$$" > "$2"
sleep 3
W
chmod +x comm-writer
mkfifo go
./comm-writer go "$idir/trace_marker" &
w=$!
tl_bg $w

tl_cmdlines_setup
echo "$w stale-name" > "$TL_TMP/saved_cmdlines"
tl_cmdlines_bg "$TM" stream -B "$inst" -e sched:sched_process_exit > out.txt 2> err.txt
tm=$!
tl_bg $tm
tl_wait 10 tl_file_is "$idir/events/sched/sched_process_exit/enable" 1 ||
	{ cat err.txt; tl_fail "tracemap stream did not enable its event"; }
echo go > go
tl_wait 10 grep -q "comm-check pid=$w" out.txt ||
	{ cat err.txt; tl_fail "the marker of pid $w never arrived"; }
kill -INT $tm
wait $tm || { cat err.txt; tl_fail "tracemap stream exited with $?"; }

line=$(grep "comm-check pid=$w" out.txt)
tl_log "$line"
case $line in
*"comm-writer-$w "*) ;;
*"stale-name-$w "*) tl_fail "pid $w shown with the dead task's name from saved_cmdlines: $line" ;;
*) tl_fail "pid $w not shown as comm-writer: $line" ;;
esac
echo "PASS: a live task is shown with its own name, not the one saved_cmdlines kept for its pid"
