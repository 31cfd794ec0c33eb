#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 180
# trace-cmd-mmap record: markers written on both CPUs during the run are in
# the file exactly once; the workload's events equal those of a stock
# trace-cmd record; KernelShark's library loads every entry; SIGINT during
# a run without a command still leaves a complete, valid file.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tc-common.shlib"
tc_require

n=20000
cd "$TL_TMP" || exit 1

# the workload: markers plus one getppid() each (-g), pinned, from both CPUs
workload() { tc_markers_workload "$1" $n -g; }

# the workload's events, without pids and times: "[cpu] event: info"
events_of() {
	grep -E ' tc-markers-[0-9]+ +\[' "$1" |
		sed -E 's/^.* tc-markers-[0-9]+ +(\[[0-9]+\]) +[0-9.]+: +/\1 /' | sort
}

# 1. record with a command, through the mapping
inst=$(tl_instance tc)
tl_cmdlines "$TCM" --verbose --stats record -d --no-filter -B "$inst" \
	-e syscalls:sys_enter_getppid -o mm.dat sh -c "$(workload "$inst")" > mm.log 2>&1
tc_expect_mapped mm.log 2
grep ' pages (' mm.log | sed 's/^/# /'
tc_report mm.dat mm.txt
tc_expect_seqs mm.txt 0 $((2 * n))
tl_log "record: $((2 * n)) markers exactly once"

# 2. the same workload through stock trace-cmd
inst2=$(tl_instance tc)
tl_cmdlines "$TRACE_CMD" record -d --no-filter -B "$inst2" -e syscalls:sys_enter_getppid \
	-o stock.dat sh -c "$(workload "$inst2")" > stock.log 2>&1
tc_report stock.dat stock.txt
tc_expect_seqs stock.txt 0 $((2 * n))
events_of mm.txt > mm.events
events_of stock.txt > stock.events
[ "$(wc -l < mm.events)" -eq $((4 * n)) ] ||
	tl_fail "$(wc -l < mm.events) workload events through the mapping, expected $((4 * n))"
cmp -s mm.events stock.events || {
	diff stock.events mm.events | head >&2
	tl_fail "the workload's events differ from a stock trace-cmd record"
}
tl_log "record: the $((4 * n)) workload events equal stock trace-cmd's"

# 3. KernelShark's library: as many entries as trace-cmd report shows events
if [ -x "$TC_KSHARK" ]; then
	"$TC_KSHARK" mm.dat > ks.txt || tl_fail "libkshark could not load mm.dat"
	nev=$(grep -c -E '^ *.+ +\[[0-9]+\] +[0-9]+\.[0-9]+: ' mm.txt)
	read -r _ streams _ entries _ markers _ overflow < ks.txt
	[ "$entries" -eq "$nev" ] && [ "$markers" -eq $((2 * n)) ] && [ "$overflow" -eq 0 ] ||
		tl_fail "libkshark loaded $(cat ks.txt), trace-cmd report shows $nev events"
	tl_log "libkshark: $entries entries in $streams streams, $markers markers"
else
	tl_log "no $TC_KSHARK (libkshark-dev missing): KernelShark check left out"
fi

# 4. no command, SIGINT while recording
inst3=$(tl_instance tc)
tl_cmdlines_bg "$TCM" --verbose record -d --no-filter -B "$inst3" -e syscalls:sys_enter_getppid \
	-o sig.dat > sig.log 2>&1
pid=$!
tc_recording $pid sig.log
tc_markers_both "$inst3" $n
tl_cmdlines_refresh
tc_stop $pid INT
tc_report sig.dat sig.txt
tc_expect_seqs sig.txt 0 $((2 * n))
tl_log "SIGINT: complete file with all $((2 * n)) markers"
exit 0
