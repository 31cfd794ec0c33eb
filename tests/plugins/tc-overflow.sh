#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
# Overflow: a 16 KiB buffer per CPU and a fast writer on both CPUs, partly
# while the recorders are stopped (SIGSTOP), so the kernel overwrites pages.
# The drops trace-cmd report shows ("[N EVENTS DROPPED]") must equal the
# markers missing from the file, per CPU, and no marker may appear twice.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tc-common.shlib"
tc_require

n=20000
cd "$TL_TMP" || exit 1
inst=$(tl_instance tc 16)
[ "$(cat "$TL_TRACEFS/instances/$inst/options/overwrite")" = 1 ] ||
	tl_skip "the instance does not overwrite when full (options/overwrite is 0)"

tl_cmdlines_bg "$TCM" --verbose --stats record -d --no-filter -B "$inst" -p nop -o ov.dat \
	> ov.log 2>&1
pid=$!
tc_recording $pid ov.log
recorders=$(ps -o pid= --ppid $pid)

# free running: the writer may or may not outrun the recorders
tc_markers "$inst" 0 0 $n
tc_markers "$inst" 1 $((2 * n)) $n
# recorders stopped: the buffer certainly wraps
kill -STOP $recorders
tc_markers "$inst" 0 $n $n
tc_markers "$inst" 1 $((3 * n)) $n
kill -CONT $recorders
tl_cmdlines_refresh
tc_stop $pid INT
grep ' pages (' ov.log | sed 's/^/# /'
! grep -q 'error in size of file' ov.log ||
	{ cat ov.log >&2; tl_fail "trace-cmd copied a file that changed while it read it"; }

tc_report ov.dat ov.txt
! grep -q 'CPU:[0-9]* \[EVENTS DROPPED\]' ov.txt ||
	tl_fail "trace-cmd report shows drops without a count"
tl_seqs ov.txt | awk '{ print $1 + 0 }' > seqs
[ "$(sort -u seqs | wc -l)" -eq "$(wc -l < seqs)" ] || tl_fail "a marker appears twice"

total_missing=0
for cpu in 0 1; do
	lo=$((cpu * 2 * n)); hi=$((lo + 2 * n))
	got=$(awk -v lo=$lo -v hi=$hi '$1 >= lo && $1 < hi' seqs | wc -l)
	missing=$((2 * n - got))
	dropped=$(sed -n "s/^.*CPU:$cpu \[\([0-9]*\) EVENTS DROPPED\].*/\1/p" ov.txt |
		awk '{ s += $1 } END { print s + 0 }')
	tl_log "cpu $cpu: $got of $((2 * n)) markers, $missing missing, $dropped reported dropped"
	[ "$dropped" -eq "$missing" ] ||
		tl_fail "cpu $cpu: trace-cmd report shows $dropped dropped, $missing markers are missing"
	total_missing=$((total_missing + missing))
done
[ $total_missing -gt 0 ] || tl_fail "nothing was lost: the test did not overflow the buffer"

# KernelShark's library marks every drop trace-cmd report shows
if [ -x "$TC_KSHARK" ]; then
	"$TC_KSHARK" ov.dat > ks.txt || tl_fail "libkshark could not load ov.dat"
	read -r _ streams _ entries _ markers _ overflow < ks.txt
	drops=$(grep -c 'EVENTS DROPPED\]' ov.txt)
	[ "$markers" -eq "$(wc -l < seqs)" ] && [ "$overflow" -eq "$drops" ] ||
		tl_fail "libkshark: $(cat ks.txt); report: $(wc -l < seqs) markers, $drops drops"
	tl_log "libkshark: $markers markers and $overflow drop marks, as trace-cmd report"
fi
exit 0
