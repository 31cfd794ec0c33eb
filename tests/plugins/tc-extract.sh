#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
# trace-cmd-mmap extract: consume mode recovers every marker once and empties
# the buffer; snapshot mode recovers every marker and leaves them there, so
# a second snapshot recovers them again. trace-cmd extract always includes
# the top-level buffer, so it runs where a private instance is the top level.
# Without the mapping, snapshot mode is refused before trace-cmd runs (exit
# 2, one line naming Linux 6.10, nothing written, nothing consumed) and
# consume mode recovers every marker through libtracefs.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tc-common.shlib"
tc_require
command -v unshare > /dev/null || tl_skip "unshare (util-linux) is needed for a private mount namespace"

inst=$(tl_instance tc)
tc_in_instance "$inst" true || tl_skip "cannot bind an instance in a private mount namespace"

n0=3000; n1=1200
tc_markers "$inst" 0 0 $n0
tc_markers "$inst" 1 $n0 $n1
total=$((n0 + n1))
cd "$TL_TMP" || exit 1

if [ "$(tc_can_map)" = yes ]; then
	for i in 1 2; do
		tc_in_instance "$inst" "$TCM" --mode=snapshot --verbose extract -o snap$i.dat \
			> snap$i.log 2>&1
		tc_count_ge snap$i.log ': mapped .*(snapshot)' 2 || { cat snap$i.log; tl_fail "snapshot $i did not map both CPUs"; }
		tc_report snap$i.dat snap$i.txt
		tc_expect_seqs snap$i.txt 0 $total
		tl_log "snapshot $i: all $total markers"
	done
else
	tc_in_instance "$inst" "$TCM" --mode=snapshot --verbose extract -o snap.dat > snap.log 2>&1
	rc=$?
	[ $rc -eq 2 ] || { cat snap.log; tl_fail "snapshot without the mapping: exit $rc, expected 2"; }
	grep -v -q -e 'serving the tracefs_cpu_' -e '--mode=snapshot .*Linux 6.10 or later is needed.*nothing extracted' snap.log &&
		{ cat snap.log; tl_fail "snapshot without the mapping: more than the one refusal"; }
	[ "$(grep -c 'Linux 6.10 or later' snap.log)" -eq 1 ] ||
		{ cat snap.log; tl_fail "snapshot without the mapping: no refusal naming Linux 6.10"; }
	[ ! -e snap.dat ] && [ -z "$(ls | grep '^snap\.dat\.')" ] ||
		tl_fail "the refused snapshot wrote files: $(ls snap.dat*)"
	sed 's/^/# /' snap.log
	tl_log "snapshot without the mapping: refused before trace-cmd ran, in one line"
fi
[ "$(cat "$TL_TRACEFS/instances/$inst/tracing_on")" = 1 ] ||
	tl_fail "snapshot extract disabled tracing in the instance"

tc_in_instance "$inst" "$TCM" --verbose extract -o cons.dat > cons.log 2>&1
if [ "$(tc_can_map)" = yes ]; then
	tc_count_ge cons.log ': mapped .*(consume)' 2 || { cat cons.log; tl_fail "consume did not map both CPUs"; }
else
	tc_expect_mapped cons.log 2
fi
tc_report cons.dat cons.txt
tc_expect_seqs cons.txt 0 $total
tl_log "consume: all $total markers (the snapshot left them all there)"

# consumed: nothing is left for another reader (without the mapping, a
# second extract through libtracefs would find what was left)
echo 1 > "$TL_TRACEFS/instances/$inst/tracing_on"
mode=--mode=snapshot
[ "$(tc_can_map)" = yes ] || mode=--no-mmap
tc_in_instance "$inst" "$TCM" $mode extract -o after.dat > after.log 2>&1
tc_report after.dat after.txt
left=$(grep -c 'seq=' after.txt)
[ "$left" -eq 0 ] || tl_fail "$left markers still in the buffer after a consuming extract"
tl_log "after consume: buffer empty"
exit 0
