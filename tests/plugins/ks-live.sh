#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 180
# The KernelShark plugin, headless (libkshark): opening a live instance gives
# exactly what trace-cmd report shows of a snapshot of the same buffer (pid,
# CPU, time, event name and info of every entry, in order) taken by
# trace-cmd-mmap's extract, and also task names as trace-cmd report shows
# them for a tracemap snapshot (extract runs with the instance bound over the
# tracefs mount, where there is no saved_cmdlines to name tasks); reopening
# after M more markers (the plugin's refresh) gives N+M, also while the
# first stream stays open (Append), which keeps its own N, and after an
# event type new to the buffer appeared, whose events then have their name
# and info; nothing was
# consumed, so a consuming extract afterwards still gets them all; an
# overflowed buffer shows its drops.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tc-common.shlib"
tc_require
command -v unshare > /dev/null || tl_skip "unshare (util-linux) is needed for a private mount namespace"
KSL="$TC_TOP/build/tests/plugins/ks-live"
KSP="$TC_TOP/build/plugins/kernelshark/plugin-tracemap.so"
[ -f /usr/include/kernelshark/libkshark.h ] || tl_skip "KernelShark's headers are not installed (libkshark-dev)"
[ -x "$KSL" ] && [ -f "$KSP" ] || tl_fail "$KSL or $KSP is missing: run 'make all check-build'"

inst=$(tl_instance ksl)
[ "$(tc_can_map)" = yes ] || tl_skip "this kernel cannot map the ring buffer (Linux 6.10 or later is needed; tool-nomap.sh checks that the live view refuses)"
idir="$TL_TRACEFS/instances/$inst"
tc_in_instance "$inst" true || tl_skip "cannot bind an instance in a private mount namespace"
cd "$TL_TMP" || exit 1

# ks_load OUT [ks-live options]: the plugin's view of the instance, entries in OUT
ks_load() {
	_out=$1; shift
	"$KSL" "$@" "$KSP" "$idir" > "$_out.raw" 2> "$_out.err" ||
		{ cat "$_out.err" >&2; tl_fail "ks-live could not open $idir through the plugin"; }
	grep -v -e '^loading plugin' -e '^#' "$_out.raw" | tr -s ' ' > "$_out"
	grep '^# streams' "$_out.raw" > "$_out.sum"
}

# snapshot OUT: trace-cmd report of a non-consuming extract in ks-live's
# layout, and (OUT.tm) of tracemap snapshot
snapshot() {
	tc_in_instance "$inst" "$TCM" --mode=snapshot extract -o "$1.dat" > "$1.log" 2>&1
	tc_report "$1.dat" "$1.rep"
	grep -v '^cpus=' "$1.rep" | sed 's/^ *//' | tr -s ' ' > "$1"
	"$TC_TOP/build/tracemap" snapshot -B "$inst" -o "$1.tm.dat" > "$1.tm.log" 2>&1 ||
		{ cat "$1.tm.log" >&2; tl_fail "tracemap snapshot -B $inst failed"; }
	tc_report "$1.tm.dat" "$1.tm.rep"
	grep -v '^cpus=' "$1.tm.rep" | sed "s/^$inst: //; s/^ *//" | tr -s ' ' > "$1.tm"
}

# same_view SNAP KS: equal but for task names (pid, CPU, time, event, info)
same_view() {
	sed 's/^.*-\([0-9]* \[\)/\1/' "$1" > "$1.nocomm"
	sed 's/^.*-\([0-9]* \[\)/\1/' "$2" > "$2.nocomm"
	diff -u "$1.nocomm" "$2.nocomm" > "$2.diff" ||
		{ head -20 "$2.diff" >&2; tl_fail "KernelShark's view differs from trace-cmd report of $1"; }
}

# sum_field SUMFILE LINE FIELD: a number of ks-live's summary line LINE
sum_field() { sed -n "$2p" "$1" | awk -v f="$3" '{ for (i = 2; i < NF; i++) if ($i == f) print $(i + 1) }'; }

# 1. markers only, buffer at rest: every line equal, task names included
n=1500
tc_markers "$inst" 0 0 $n
tc_markers "$inst" 1 $n $n
echo 0 > "$idir/tracing_on"
snapshot snap1
ks_load ks1
[ "$(wc -l < snap1)" -eq $((2 * n)) ] || tl_fail "the snapshot holds $(wc -l < snap1) events, not $((2 * n))"
same_view snap1 ks1
diff -u snap1.tm ks1 > diff1 || { head -20 diff1 >&2; tl_fail "KernelShark's view differs from trace-cmd report of tracemap snapshot"; }
tc_expect_seqs ks1 0 $((2 * n))
grep -q "format tep data name $inst\$" ks1.sum || { cat ks1.sum >&2; tl_fail "the stream is not tep data named $inst"; }
tl_log "markers only: $((2 * n)) entries equal to trace-cmd report"

# 2. with scheduler events: the same entries; task names may differ only where
# trace-cmd report learns a name from a sched_switch it printed before
echo 1 > "$idir/events/sched/sched_switch/enable"
echo 1 > "$idir/events/sched/sched_wakeup/enable"
echo 1 > "$idir/tracing_on"
tc_markers "$inst" 0 $((2 * n)) $n
tc_markers "$inst" 1 $((3 * n)) $n
echo 0 > "$idir/tracing_on"
echo 0 > "$idir/events/sched/enable"
snapshot snap2
ks_load ks2
same_view snap2 ks2
same_view snap2.tm ks2
nsched=$(grep -c ': sched_' ks2)
[ "$nsched" -gt 0 ] || tl_fail "no scheduler events in the view"
tc_expect_seqs ks2 0 $((4 * n))
tl_log "with $nsched scheduler events: $(wc -l < ks2) entries equal (pid, CPU, time, event, info)"

# 3. reopen after M more markers (the refresh): N + M
m=700
echo 1 > "$idir/tracing_on"
ks_load ks3 --count --then "$TC_MARKERS $inst 1 $((4 * n)) $m"
first=$(sum_field ks3.sum 1 markers)
second=$(sum_field ks3.sum 2 markers)
[ "$first" = $((4 * n)) ] && [ "$second" = $((4 * n + m)) ] ||
	{ cat ks3.sum >&2; tl_fail "refresh: $first then $second markers, expected $((4 * n)) then $((4 * n + m))"; }
tl_log "refresh: $first markers, then $second"

# 3b. reopen while the older stream stays open (KernelShark's Append): the
# plugin writes its new image over the old one only when nobody reads that,
# so the older stream still holds its own markers
ks_load ks3b --count --append --then "$TC_MARKERS $inst 1 $((4 * n + m)) $m"
old=$(sed -n 's/^# stream 0 markers //p' ks3b.raw)
new=$(sed -n 's/^# stream 1 markers //p' ks3b.raw)
[ "$old" = $((4 * n + m)) ] && [ "$new" = $((4 * n + 2 * m)) ] ||
	{ cat ks3b.raw >&2; tl_fail "append: streams of $old and $new markers, expected $((4 * n + m)) and $((4 * n + 2 * m))"; }
tl_log "append: the open stream keeps $old markers, the new one has $new"

# 3c. a refresh after an event type the previous image had no format for
# appeared in the buffer (its events are there, the event is off again): the
# writer's kernel part, shared by the images of one process, grows with it,
# so the new events have their name and info
exec_on="$idir/events/sched/sched_process_exec/enable"
ks_load ks3c --then "echo 1 > $exec_on && /bin/true && echo 0 > $exec_on"
sed -n '1,/^# streams/p' ks3c.raw > ks3c.first
sed -n '/^# streams/,$p' ks3c.raw | grep -v '^#' | tr -s ' ' > ks3c.second
grep -q 'sched_process_exec' ks3c.first && tl_fail "the first load already holds sched_process_exec events"
grep -q ': sched_process_exec: filename=/bin/true pid=' ks3c.second ||
	{ grep exec ks3c.second | head -5 >&2; tl_fail "after the refresh sched_process_exec of /bin/true has no name or info"; }
tl_log "refresh after a new event type: $(grep -c ': sched_process_exec: ' ks3c.second) sched_process_exec entries with name and info"

# 4. nothing was consumed: a consuming extract gets every marker once
tc_in_instance "$inst" "$TCM" extract -o cons.dat > cons.log 2>&1
tc_report cons.dat cons.txt
tc_expect_seqs cons.txt 0 $((4 * n + 2 * m))
tl_log "a consuming extract afterwards: all $((4 * n + 2 * m)) markers"

# 5. an overflowed buffer: the view holds what the snapshot holds, and drops
small=$(tl_instance ksl 16)
idir="$TL_TRACEFS/instances/$small"
inst=$small
tc_markers "$inst" 0 0 20000
echo 0 > "$idir/tracing_on"
snapshot snap5
ks_load ks5
kept=$(grep -c 'seq=' ks5)
[ "$kept" -gt 0 ] && [ "$kept" -lt 20000 ] || tl_fail "the 16 KiB buffer kept $kept of 20000 markers"
tl_seqs ks5 | awk '{ print $1 + 0 }' > ks5.seqs
seq $((20000 - kept)) 19999 > ks5.want
cmp -s ks5.seqs ks5.want || tl_fail "the view does not hold the newest $kept markers in order"
same_view snap5 ks5
drops=$(sum_field ks5.sum 1 overflow)
[ "${drops:-0}" -ge 1 ] || { cat ks5.sum >&2; tl_fail "the overflowed buffer shows no drops in KernelShark"; }
tl_log "overflow: newest $kept of 20000 markers, $drops drop marks"
exit 0
