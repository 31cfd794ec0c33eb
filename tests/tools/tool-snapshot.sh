#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 180
# tracemap snapshot: a trace.dat of what the buffer holds, without consuming.
# - trace-cmd report of it equals, event for event (time stamps, payloads,
#   task names), the report of a `trace-cmd-mmap --mode snapshot extract` of
#   the same buffer state; the instance name is in the file;
# - run twice it gives the same events, also through a pipe; -M picks CPUs;
# - libkshark loads it with exactly as many entries as the report has lines;
# - a consuming reader afterwards still gets every marker;
# - bad arguments fail with a message and no file.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../plugins/tc-common.shlib"
tl_require_tracemap
tc_require
command -v unshare > /dev/null || tl_skip "unshare (util-linux) is needed for a private mount namespace"

inst=$(tl_instance snap 512)
tl_require_mmap "$inst"
idir=$TL_TRACEFS/instances/$inst
tc_in_instance "$inst" true || tl_skip "cannot bind an instance in a private mount namespace"
cd "$TL_TMP" || exit 1

# events with task names and payloads besides the markers, then a frozen
# buffer; sched events only of this test's tasks, so that a busy machine
# cannot overwrite the markers in the 512 KiB buffer
echo $$ > "$idir/set_event_pid"
echo 1 > "$idir/options/event-fork"
echo 1 > "$idir/events/sched/sched_switch/enable"
echo 1 > "$idir/events/sched/sched_wakeup/enable"
n0=2000; n1=1500
tc_markers "$inst" 0 0 $n0
tc_markers "$inst" 1 $n0 $n1
echo 0 > "$idir/tracing_on"
total=$((n0 + n1))

# report lines without the "instance: " prefix trace-cmd puts before a named
# buffer and without the column padding
events_of() { grep -v '^cpus=' "$1" | sed "s/^$inst://; s/^ *//"; }

# same_events REF MINE: line for line equal but for the task name column
# (pids are compared): the extract runs where the bound instance is the
# tracefs root, which has no saved_cmdlines, so trace-cmd names tasks only
# from sched_switch events it saw earlier in the file. The names of ours are
# checked on their own below.
same_events() {
	sed 's/^.*-\([0-9]* *\[[0-9]*\]\)/\1/' "$1" > "$1.nocomm"
	sed 's/^.*-\([0-9]* *\[[0-9]*\]\)/\1/' "$2" > "$2.nocomm"
	cmp -s "$1.nocomm" "$2.nocomm" && return 0
	diff "$1.nocomm" "$2.nocomm" | head
	return 1
}

"$TM" snapshot -B "$inst" -o a.dat > a.log || { cat a.log; tl_fail "snapshot a failed"; }
"$TM" snapshot -B "$inst" -o b.dat > b.log || tl_fail "snapshot b failed"
grep -Eq "^a.dat: cpu0 [0-9]+ events .*, cpu1 [0-9]+ events .*; lost 0 events, 0 gaps.*copy [0-9.]+ ms" a.log ||
	{ cat a.log; tl_fail "no one-line report"; }
tc_report a.dat a.txt
tc_report b.dat b.txt
tc_expect_seqs a.txt 0 $total
grep -q "^$inst: " a.txt || tl_fail "the instance name $inst is not in the file"
events_of a.txt > a.ev
events_of b.txt > b.ev
cmp -s a.ev b.ev || { diff a.ev b.ev | head; tl_fail "two snapshots of a frozen buffer differ"; }
tl_log "snapshot: $(wc -l < a.ev) events, all $total markers, twice the same"

# the same buffer state through trace-cmd's own writer
tc_in_instance "$inst" "$TCM" --mode=snapshot extract -o ref.dat > ref.log 2>&1 ||
	{ cat ref.log; tl_fail "trace-cmd-mmap --mode=snapshot extract failed"; }
tc_report ref.dat ref.txt
events_of ref.txt > ref.ev
[ "$(wc -l < ref.ev)" -gt $total ] || tl_fail "the reference holds only $(wc -l < ref.ev) events"
same_events ref.ev a.ev || tl_fail "trace-cmd report differs from the extract's"
tl_log "report equals trace-cmd-mmap snapshot extract's, $(wc -l < a.ev) events"
# task names from saved_cmdlines as of the copy: the writer of every marker
bad=$(grep 'seq=' a.ev | grep -vc '^tc-markers-[0-9]* ')
[ "$bad" -eq 0 ] || tl_fail "$bad markers not attributed to the tc-markers task"

# libkshark (headless KernelShark) loads every entry
if [ -x "$TC_KSHARK" ]; then
	"$TC_KSHARK" a.dat > ks.txt || tl_fail "libkshark could not load a.dat"
	set -- $(cat ks.txt)
	[ "$4" -eq "$(wc -l < a.ev)" ] && [ "$6" -eq $total ] ||
		tl_fail "libkshark: $(cat ks.txt); the report has $(wc -l < a.ev) events, $total markers"
	tl_log "libkshark: $(cat ks.txt)"
fi

# -o -: a pipe (no seeking), the report line on stderr
"$TM" snapshot -B "$inst" -o - 2> pipe.log | cat > pipe.dat || tl_fail "snapshot -o - failed"
grep -q '^-: cpu0 ' pipe.log || { cat pipe.log; tl_fail "no report line on stderr for -o -"; }
tc_report pipe.dat pipe.txt
events_of pipe.txt | cmp -s - a.ev || tl_fail "the snapshot through a pipe differs from the file's"

# -M: one CPU
"$TM" snapshot -B "$inst" -M 2 -o cpu1.dat > cpu1.log || tl_fail "snapshot -M 2 failed"
grep -q '^cpu1.dat: cpu1 ' cpu1.log || { cat cpu1.log; tl_fail "-M 2 did not dump CPU 1 alone"; }
tc_report cpu1.dat cpu1.txt
tc_expect_seqs cpu1.txt $n0 $n1
events_of cpu1.txt > cpu1.ev
grep '\[001\]' a.ev | cmp -s - cpu1.ev || tl_fail "-M 2 does not hold CPU 1's events of the full dump"

# nothing was consumed: a consuming reader gets every marker
tc_in_instance "$inst" "$TCM" extract -o cons.dat > cons.log 2>&1
tc_report cons.dat cons.txt
tc_expect_seqs cons.txt 0 $total
tl_log "a consuming extract afterwards: all $total markers"

# errors: a message, exit 1, no file
"$TM" snapshot -B "no-such-$inst" -o bad1.dat 2> bad1.err && tl_fail "an unknown instance was accepted"
grep -q "no instance 'no-such-$inst'" bad1.err || { cat bad1.err; tl_fail "no message for an unknown instance"; }
"$TM" snapshot -B "$inst" -o "$TL_TMP/no/dir/x.dat" 2> bad2.err && tl_fail "an unwritable -o was accepted"
grep -q "cannot create" bad2.err || { cat bad2.err; tl_fail "no message for an unwritable -o"; }
"$TM" snapshot -B "$inst" -M 0 -o bad3.dat 2> bad3.err && tl_fail "an empty CPU mask was accepted"
[ ! -e bad1.dat ] && [ ! -e bad3.dat ] || tl_fail "a failed snapshot left a file"
exit 0
