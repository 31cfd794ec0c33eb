#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
# tracemap flight --dump --all: one command dumps every running recorder.
# Two recorders on two instances; plain --dump refuses and names both and
# --all; --dump --all gives each recorder one dump of its own instance
# (instance A's markers in A's file only, B's in B's); with no recorder it
# fails with a message; --all without --dump, or with a PID, is refused.
# Runs in its own PID namespace, so that the recorders of other tests
# running at the same time are neither seen nor signalled.
if [ -z "$FL_IN_PIDNS" ]; then
	command -v unshare > /dev/null || { echo "SKIP: unshare (util-linux) is needed"; exit 77; }
	[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root for tracefs"; exit 77; }
	FL_IN_PIDNS=1 exec unshare -pf --kill-child=TERM --mount-proc sh "$0" "$@"
fi
. "$(dirname "$0")/flight.shlib"
fl_require

"$TM" flight --dump --all > none.out 2> none.err && tl_fail "--dump --all with no recorder succeeded"
grep -q "no 'tracemap flight' is running" none.err || { cat none.err; tl_fail "no message without a recorder"; }
"$TM" flight --all 2> x1.err && tl_fail "--all without --dump was accepted"
grep -q -- "--all goes with --dump" x1.err || { cat x1.err; tl_fail "no message for --all alone"; }
"$TM" flight --dump 1 --all 2> x2.err && tl_fail "--dump PID --all was accepted"
grep -q "not both" x2.err || { cat x2.err; tl_fail "no message for --dump PID --all"; }

ia=$(tl_instance fla 256)
ib=$(tl_instance flb 256)
mkdir a b
fl_start a -B "$ia" --hold-off-ms 0 -o a/
pa=$FL_PID
fl_start b -B "$ib" --hold-off-ms 0 -o b/
pb=$FL_PID
tc_markers "$ia" 0 0 100
tc_markers "$ib" 1 1000 100

"$TM" flight --dump 2> two.err && tl_fail "plain --dump with two recorders succeeded"
grep -q "several flight recorders run:.* $pa" two.err && grep -q " $pb" two.err &&
	grep -q -- "--dump --all" two.err || { cat two.err; tl_fail "the refusal does not name both and --all"; }

"$TM" flight --dump --all 2> all.err || { cat all.err; tl_fail "--dump --all failed"; }
for p in $pa $pb; do
	grep -q "dump asked of flight recorder $p\$" all.err || { cat all.err; tl_fail "no line for $p"; }
done
fl_wait_dumps a 1
fl_wait_dumps b 1
tc_report a/trace-1.dat a1.txt
tc_report b/trace-1.dat b1.txt
tc_expect_seqs a1.txt 0 100
tc_expect_seqs b1.txt 1000 100
[ -z "$(ls a b | grep -- '-2')" ] || tl_fail "--dump --all gave a recorder more than one dump"
tl_log "--dump --all: one dump from each of two recorders, each of its own instance"

fl_stop $pa
fl_stop $pb
exit 0
