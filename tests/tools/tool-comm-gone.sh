#!/bin/sh
# timeout: 60
# A task that is gone by the time its events are printed, whose pid
# saved_cmdlines still gives to a dead task (the kernel's list keeps the
# names of dead tasks whose pids were taken again), is shown with the name
# the events gave it (sched_switch names the task it switches to before
# the task writes anything), not the dead task's. The stream reads at the
# file's pace with a 1 s tick, so the writer has exited and been reaped
# before its marker is printed; saved_cmdlines names the writer's pid
# "stale-name" (a private mount namespace binds a copy over the file,
# tl_cmdlines). Loading that list whole named the writer after it.
. "$(dirname "$0")/../lib.sh"
tl_require_root
tl_require_tracemap
cd "$TL_TMP" || exit 1

inst=$(tl_instance cg)
idir=$TL_TRACEFS/instances/$inst

# the writer: blocks until told (it leaves the CPU named comm-writer and is
# switched in again under that name), writes one marker and exits. It and
# the task that wakes it share CPU 0, so that a task, not the idle task,
# hands it the CPU: this VM's kernel writes no sched_switch from the idle
# task of CPU 1 (the switch that would name it).
cat > comm-writer <<'W'
#!/bin/sh
read go < "$1"
echo "comm-gone pid=$$" > "$2"
W
chmod +x comm-writer
mkfifo go
taskset -c 0 ./comm-writer go "$idir/trace_marker" &
w=$!
tl_bg $w

tl_cmdlines_setup
echo "$w stale-name" > "$TL_TMP/saved_cmdlines"
tl_cmdlines_bg "$TM" stream -B "$inst" --latency-ms 1000 -e sched:sched_switch > out.txt 2> err.txt
tm=$!
tl_bg $tm
tl_wait 10 tl_file_is "$idir/events/sched/sched_switch/enable" 1 ||
	{ cat err.txt; tl_fail "tracemap stream did not enable its event"; }
taskset -c 0 sh -c 'echo go > go'
wait $w
# gone, and printed only now (the tick is 1 s; half the buffer is far away)
[ -e /proc/$w ] && tl_fail "the writer $w still exists after it was reaped"
grep -q "comm-gone pid=$w" out.txt &&
	tl_skip "the marker was printed before the writer had gone: nothing to test"
tl_wait 10 grep -q "comm-gone pid=$w" out.txt ||
	{ cat err.txt; tl_fail "the marker of pid $w never arrived"; }
kill -INT $tm
wait $tm || { cat err.txt; tl_fail "tracemap stream exited with $?"; }

line=$(grep "comm-gone pid=$w" out.txt)
tl_log "$line"
grep -q "==> comm-writer:$w " out.txt ||
	tl_fail "no sched_switch to comm-writer:$w: the test did not see what it relies on"
case $line in
*"comm-writer-$w "*) ;;
*"stale-name-$w "*) tl_fail "pid $w, gone, shown with the dead task's name from saved_cmdlines: $line" ;;
*) tl_fail "pid $w not shown as comm-writer: $line" ;;
esac
echo "PASS: a task gone before its events were printed is shown with the name its sched_switch gave, not a dead task's from saved_cmdlines"
