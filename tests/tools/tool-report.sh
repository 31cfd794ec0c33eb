#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
# tracemap stream prints events the way trace-cmd report does: a fixed
# workload runs once under `tracemap stream -B inst` and once under
# `trace-cmd record -B inst` (same instance, same events); the workload's
# lines must be equal once the pid, CPU and time values are masked. The
# column layout (comm-pid padding, [cpu], time precision, event name
# padding) is kept in what is compared, and checked on every line.
. "$(dirname "$0")/../lib.sh"
tl_require_root
tl_require_tracemap
command -v trace-cmd > /dev/null || tl_skip "trace-cmd is not installed"
cd "$TL_TMP" || exit 1

EVENTS="sched:sched_process_exec sched:sched_process_exit syscalls:sys_enter_umask
	syscalls:sys_exit_umask syscalls:sys_enter_exit_group"
eopts=
for e in $EVENTS; do eopts="$eopts -e $e"; done

# The workload: markers (ftrace:print, its address resolved through
# kallsyms), umask calls with known arguments and results, an exit code.
# It stays a moment so that the live stream finds its comm in /proc even
# when this machine is busy (trace-cmd takes it from saved_cmdlines at the end).
W='echo "tracemap-cmp start pid=$$" > "$M"
umask 022; umask 077; umask 022
i=0; while [ $i -lt 10 ]; do echo "seq=$i" > "$M"; i=$((i + 1)); done
echo "tracemap-cmp end" > "$M"
sleep 0.3
exit 3'

inst=$(tl_instance st)
idir=$TL_TRACEFS/instances/$inst
export M="$idir/trace_marker"

# 1. tracemap stream
# shellcheck disable=SC2086
"$TM" stream -B "$inst" $eopts > tm.txt 2> tm.err &
tm=$!
tl_bg $tm
tl_wait 10 tl_file_is "$idir/events/syscalls/sys_enter_umask/enable" 1 ||
	{ cat tm.err; tl_fail "tracemap stream did not enable the events"; }
sh -c "$W"
[ $? -eq 3 ] || tl_fail "workload exit status"
tl_wait 10 grep -q 'tracemap-cmp end' tm.txt || tl_fail "the workload's end marker never arrived"
kill -INT $tm
wait $tm || { cat tm.err; tl_fail "tracemap stream exited with $?"; }

# sched_switch goes through libtraceevent's plugin in trace-cmd: so must it here
"$TM" stream -B "$inst" -e sched:sched_switch > sw.txt 2> sw.err &
tm=$!
tl_bg $tm
tl_wait 10 grep -q sched_switch sw.txt || { cat sw.err; tl_fail "no sched_switch line"; }
kill -INT $tm
wait $tm || tl_fail "tracemap stream (sched_switch) exited with $?"
# the plugin's task states: S D T t Z X x W joined with '|', R, '+' for preempted
bad=$(grep 'sched_switch:' sw.txt | head -20 | grep -Ev \
	'sched_switch: +.+:[0-9]+ \[-?[0-9]+\] [A-Za-z|+]+ ==> .+:[0-9]+ \[-?[0-9]+\]$' | head -1)
[ -z "$bad" ] || tl_fail "sched_switch is not printed the way the plugin prints it: $bad"

# 2. trace-cmd record on the same instance (exits 1 on this VM after writing
# a complete file, see the notes); its report is the reference. The task
# names it writes are the kernel's list as the workload exits (tl_cmdlines).
# shellcheck disable=SC2086
tl_cmdlines trace-cmd record -d --no-filter -B "$inst" $eopts -o tc.dat \
	sh -c "trap 'sh $TL_TMP/cmdlines-refresh.sh' EXIT; $W" > tc.log 2>&1
trace-cmd report -i tc.dat > tc.raw 2> tc.err || { cat tc.err; tl_fail "trace-cmd report failed"; }
# a trace.dat of an instance prefixes the lines with its name
sed -n "s/^$inst: //p" tc.raw > tc.txt

pid_of() { sed -n 's/.*tracemap-cmp start pid=\([0-9]*\).*/\1/p' "$1" | head -1; }
pm=$(pid_of tm.txt)
pc=$(pid_of tc.txt)
[ -n "$pm" ] && [ -n "$pc" ] || tl_fail "no start marker (tracemap: '$pm', trace-cmd: '$pc')"

# The workload's lines, the pid and the values of [cpu] and time masked.
# The regex pins the time precision and the event name padding; the column
# widths (pids of both runs may differ in length) are checked below.
lines_of() {
	awk -v pid="$2" '{
		# comm may hold blanks: the pid is the last "-N" before " ["
		i = index($0, " [")
		if (!i)
			next
		head = substr($0, 1, i - 1)
		if (head !~ ("-" pid " *$"))
			next
		print
	}' "$1" | sed -E \
		-e 's/^( *[^ ].*)-'"$2"' +\[[0-9]{3}\] +[0-9]+\.[0-9]{6}: /\1-PID [CPU] TIME: /' \
		-e 's/([^0-9])'"$2"'([^0-9]|$)/\1PID\2/g'
}
lines_of tm.txt "$pm" > tm.cmp
lines_of tc.txt "$pc" > tc.cmp
n=$(wc -l < tc.cmp)
[ "$n" -ge 20 ] || { cat tc.txt; tl_fail "trace-cmd report shows only $n workload lines"; }
if ! diff -u tc.cmp tm.cmp > cmp.diff; then
	cat cmp.diff
	tl_fail "tracemap stream and trace-cmd report differ for the workload's events"
fi
grep -q 'sys_exit_umask:       0x3f' tm.cmp || tl_fail "no umask result in the comparison"
grep -q 'print:                tracing_mark_write: seq=9' tm.cmp ||
	tl_fail "no resolved marker address in the comparison"
tl_log "$n workload lines equal to trace-cmd report"

# Every line of both outputs has trace-cmd's layout: '[' after max(16, comm)
# + '-' + max(5, pid) + ' ', the time with 6 decimals, the name padded to 20.
check_layout() {
	awk '{
		i = index($0, " [")
		head = substr($0, 1, i - 1)
		if (!i || !match(head, /-[0-9]+ *$/)) { print "no comm-pid: " $0; bad++; next }
		pid = substr(head, RSTART + 1); sub(/ +$/, "", pid)
		comm = substr(head, 1, RSTART - 1); sub(/^ +/, "", comm)
		want = (length(comm) > 16 ? length(comm) : 16) + 1 + (length(pid) > 5 ? length(pid) : 5) + 1
		if (i != want) { print "column " i " != " want ": " $0; bad++; next }
		rest = substr($0, i + 1)
		if (rest !~ /^\[[0-9][0-9][0-9]\] +[0-9]+\.[0-9][0-9][0-9][0-9][0-9][0-9]: [^ ]+: /) {
			print "layout: " $0; bad++; next
		}
	} END { exit bad > 0 }' "$1"
}
check_layout tm.txt || tl_fail "tracemap stream lines off trace-cmd's layout"
check_layout tc.txt || tl_fail "the layout check does not fit trace-cmd report itself"

exit 0
