#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 90
# A task whose pid saved_cmdlines gives to a dead task (after the pids
# wrapped, the kernel's list still names the last task that had the pid)
# is shown with its own name. Each case runs a writer of one marker while
# the stream reads a saved_cmdlines that names the writer "stale-name" (a
# private mount namespace binds a copy over the file, tl_cmdlines):
#  - live: the writer still runs when its marker is printed; the stream
#    checks a pid's name in /proc the first time it sees the pid (before
#    that check it printed the stale name);
#  - gone: the writer has exited and been reaped before its marker is
#    printed (the stream reads at the file's pace with a 1 s tick); the
#    sched_switch that handed it the CPU named it (loading saved_cmdlines
#    whole named it after the dead task).
. "$(dirname "$0")/../lib.sh"
tl_require_root
tl_require_tracemap
cd "$TL_TMP" || exit 1
tl_cmdlines_setup

# the writer: blocks until told (it leaves the CPU named comm-writer and is
# switched in again under that name), writes one marker, stays $3 s
cat > comm-writer <<'W'
#!/bin/sh
read go < "$1"
echo "comm-check pid=$$" > "$2"
sleep "$3"
W
chmod +x comm-writer
mkfifo go

# run_case NAME STAY EVENT STREAM-OPTION...: the writer (and the task that wakes it)
# on CPU 0, so that a task, not the idle task, hands it the CPU: this VM's
# kernel writes no sched_switch from the idle task of CPU 1. Sets w, idir.
run_case() {
	name=$1 stay=$2 event=$3
	shift 3
	inst=$(tl_instance "cm$name")
	idir=$TL_TRACEFS/instances/$inst
	taskset -c 0 ./comm-writer go "$idir/trace_marker" "$stay" &
	w=$!
	tl_bg $w
	echo "$w stale-name" > "$TL_TMP/saved_cmdlines"
	tl_cmdlines_bg "$TM" stream -B "$inst" -e "$event" "$@" > "$name.out" 2> "$name.err"
	tm=$!
	tl_bg $tm
	tl_wait 10 tl_file_is "$idir/events/$(echo "$event" | tr : /)/enable" 1 ||
		{ cat "$name.err"; tl_fail "$name: tracemap stream did not enable $event"; }
	taskset -c 0 sh -c 'echo go > go'
	if [ "$stay" = 0 ]; then
		wait $w
		[ -e /proc/$w ] && tl_fail "$name: the writer $w still exists after it was reaped"
		grep -q "comm-check pid=$w" "$name.out" &&
			tl_skip "$name: the marker was printed before the writer had gone: nothing to test"
	fi
	tl_wait 10 grep -q "comm-check pid=$w" "$name.out" ||
		{ cat "$name.err"; tl_fail "$name: the marker of pid $w never arrived"; }
	kill -INT $tm
	wait $tm || { cat "$name.err"; tl_fail "$name: tracemap stream exited with $?"; }
	line=$(grep "comm-check pid=$w" "$name.out")
	tl_log "$name: $line"
	case $line in
	*"comm-writer-$w "*) ;;
	*"stale-name-$w "*) tl_fail "$name: pid $w shown with the dead task's name from saved_cmdlines: $line" ;;
	*) tl_fail "$name: pid $w not shown as comm-writer: $line" ;;
	esac
}

# no sched_switch: only /proc can name the live writer
run_case live 3 sched:sched_process_exit
run_case gone 0 sched:sched_switch --latency-ms 1000
grep -q "==> comm-writer:$w " gone.out ||
	tl_fail "gone: no sched_switch to comm-writer:$w: the test did not see what it relies on"
echo "PASS: a live task and a task gone before its marker was printed are shown with their own names, not the one saved_cmdlines kept for their pid"
