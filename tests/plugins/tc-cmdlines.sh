#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 90
# Why tc-overflow once showed none of a CPU's markers: trace-cmd 3.1.6
# writes saved_cmdlines into its file by reading it twice (the size, then the
# bytes). Here a FIFO serves a long list to the first read and a short one to
# the second, which is what a busy machine does by chance: trace-cmd-mmap
# record warns "error in size of file", libtracecmd cannot open the file,
# and trace-cmd report prints nothing and exits 0. tc_report must refuse
# that file; the same recording through tl_cmdlines holds every marker once.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tc-common.shlib"
tc_require
feed="$TC_TOP/build/tests/plugins/tc-fifo-feed"
[ -x "$feed" ] || tl_fail "$feed is missing: run 'make check-build'"
command -v unshare > /dev/null ||
	tl_skip "unshare (util-linux) is needed for a private mount namespace"

n=2000
cd "$TL_TMP" || exit 1
awk 'BEGIN { for (i = 1; i <= 3000; i++) printf "%d task-%d\n", 100000 + i, i }' > long
head -50 long > short
mkfifo cmdlines.fifo || tl_fail "cannot make a FIFO in $TL_TMP"
"$feed" cmdlines.fifo long short &
tl_bg $!

# 1. the list shrinks between trace-cmd's two reads (tl_cmdlines is not set up
# yet, so the workload does not read the FIFO itself)
inst=$(tl_instance tc)
tl_cmdlines_as "$TL_TMP/cmdlines.fifo" "$TCM" --verbose record -d --no-filter -B "$inst" -p nop \
	-o race.dat sh -c "$(tc_markers_workload "$inst" $n)" > race.log 2>&1
tc_expect_mapped race.log 2
grep -q "error in size of file '.*saved_cmdlines'" race.log ||
	{ cat race.log; tl_fail "trace-cmd did not notice that saved_cmdlines changed"; }
[ -s race.dat ] || tl_fail "trace-cmd wrote no race.dat"
if (tc_report race.dat race.txt) 2> report.err; then
	[ ! -s race.txt ] || tl_fail "trace-cmd report read a file whose saved_cmdlines is" \
		"short: trace-cmd now copes, update the comment on tl_cmdlines in tests/lib.sh"
	tl_fail "tc_report accepted race.dat, of which trace-cmd report printed nothing"
fi
grep -q 'printed nothing for race.dat' report.err ||
	{ cat report.err; tl_fail "tc_report refused race.dat for another reason"; }
[ ! -s race.txt ] || tl_fail "trace-cmd report printed $(wc -l < race.txt) lines of race.dat"
tl_log "a list that shrinks between trace-cmd's reads: an unreadable file, and tc_report says so"

# 2. the same recording with a stable list
inst=$(tl_instance tc)
# an enabled event (one that never fires) turns the kernel's task-name
# recording on (options/record-cmd): with markers alone no name is saved
tl_cmdlines "$TCM" --verbose record -d --no-filter -B "$inst" -p nop -e syscalls:sys_enter_reboot -o stable.dat \
	sh -c "$(tc_markers_workload "$inst" $n)" > stable.log 2>&1
tc_expect_mapped stable.log 2
! grep -q 'error in size of file' stable.log || { cat stable.log; tl_fail "trace-cmd warned"; }
tc_report stable.dat stable.txt
tc_expect_seqs stable.txt 0 $((2 * n))
grep -q ' tc-markers-[0-9]* *\[' stable.txt ||
	tl_fail "stable.dat does not name the marker writers (tc_workload refreshes the list)"
tl_log "a stable list: all $((2 * n)) markers, writers named"
exit 0
