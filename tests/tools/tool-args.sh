#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 60
# Bad arguments: tracemap exits 1 with a message that names the problem, and
# nothing is changed: the instance's enable files, buffer_percent and
# tracing_on stay as they were, and no private instance is left behind.
. "$(dirname "$0")/../lib.sh"
tl_require_root
tl_require_tracemap
cd "$TL_TMP" || exit 1

inst=$(tl_instance st)
idir=$TL_TRACEFS/instances/$inst
echo 37 > "$idir/buffer_percent"
echo 1 > "$idir/events/sched/sched_wakeup/enable"
tl_instance_state "$idir" > before.txt

# a CPU this machine does not have, as a mask
ncpu=$(ls -d "$TL_TRACEFS"/per_cpu/cpu* | wc -l)
absent=$(printf '%x' $((1 << ncpu)))

# fails "PATTERN" ARGS...: exit 1, PATTERN on stderr, nothing on stdout, no change
nr=0
fails() {
	pattern=$1
	shift
	"$TM" "$@" > out.txt 2> err.txt &
	pid=$!
	wait $pid
	rc=$?
	nr=$((nr + 1))
	[ $rc -eq 1 ] || { cat err.txt; tl_fail "tracemap $* exited $rc, not 1"; }
	grep -q -- "$pattern" err.txt || { cat err.txt; tl_fail "tracemap $*: no '$pattern' on stderr"; }
	[ -s out.txt ] && tl_fail "tracemap $* wrote to stdout: $(head -2 out.txt)"
	ls "$TL_TRACEFS/instances" | grep -q "^tracemap-$pid-" && tl_fail "tracemap $* left tracemap-$pid-N"
	tl_instance_state "$idir" > after.txt
	diff -u before.txt after.txt || tl_fail "tracemap $* changed the instance"
}

fails "usage:"
fails "unknown command" bogus
fails "unknown option" stream --bogus
fails "needs an argument" stream -B
fails "needs an argument" stream -B "$inst" -e
fails "needs an argument" stream -B "$inst" --latency-ms
fails "cannot run 'no-such-command-x'" stream -B "$inst" no-such-command-x
fails "exclude each other" stream -B "$inst" --top
# a missing -B instance is made, and removed again after the error
fails "no such event" stream -B "tmtest-st-none-$$" -e sched:no_such_event
[ -d "$TL_TRACEFS/instances/tmtest-st-none-$$" ] && tl_fail "-B left tmtest-st-none-$$ behind"
fails "empty event name" stream -B "$inst" -e sched:
fails "empty system name" stream -B "$inst" -e :sched_switch
fails "is not valid" stream -B "$inst" -e sched:sched_switch -f 'no_such_field == 1'
fails "applies to the -e before it" stream -B "$inst" -f 'pid == 1' -e sched
fails "give process ids" stream -B "$inst" -P 12x
fails "give process ids" stream -B "$inst" -P 0
fails "no process 1073741823" stream -B "$inst" -P 1073741823
fails "give the buffer size" stream -B "$inst" -b 0
fails "give the buffer size" stream -B "$inst" -b lots
fails "no such trace clock" stream -B "$inst" -C no_such_clock
fails "give one" stream -B "$inst" -F
fails "exclude each other" stream -B "$inst" -P 1 -F true
fails "invalid instance name" stream -B ../x
fails "no such event" stream -B "$inst" -e sched:no_such_event
fails "no such event" stream -B "$inst" -e sched:sched_switch -e no_such_system
fails "no such event" stream -B "$inst" -e 'no_such_system:*'
fails "always recorded" stream -B "$inst" -e ftrace:print
fails "invalid CPU mask" stream -B "$inst" -e sched -M xyz
fails "selects no CPU" stream -B "$inst" -e sched -M 0
fails "CPU $ncpu" stream -B "$inst" -e sched -M "$absent"
fails "give a number" stream -B "$inst" --latency-ms 0
fails "give a number" stream -B "$inst" --latency-ms 12x
fails "give a number" stream -B "$inst" --watermark 101
# the same without -B: the private instance is made and removed again
fails "CPU $ncpu" stream -e sched -M "$absent"
fails "invalid CPU mask" stream -M 'g'
fails "no such event" stream -e sched:no_such_event
fails "no instance" stat -B tmtest-st-none
fails "unknown option" stat --bogus
fails "exclude each other" stat -B "$inst" --top
tl_log "$nr bad command lines: exit 1, a message, nothing changed"

# --help and --version are not errors
"$TM" --version | grep -qx 'tracemap [0-9]*\.[0-9]*\.[0-9]*' || tl_fail "tracemap --version"
"$TM" stream --version | grep -qx 'tracemap [0-9]*\.[0-9]*\.[0-9]*' ||
	tl_fail "tracemap stream --version"
"$TM" --help > help.txt || tl_fail "tracemap --help failed"
grep -q '^usage: tracemap stream' help.txt || tl_fail "--help has no usage"
"$TM" stream --help | cmp -s - help.txt || tl_fail "tracemap stream --help differs"
exit 0
