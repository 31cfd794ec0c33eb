#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
# A kernel that cannot map the ring buffer (before Linux 6.10; make
# check-kernels boots Debian's 6.1): the consuming stream falls back to
# read() and delivers every marker exactly once; snapshot, flight, the
# non-consuming stream and the KernelShark live view refuse with one
# message that names the kernel they need, make no file and leave tracefs
# as they found it. Skips on a kernel that maps.
. "$(dirname "$0")/../lib.sh"
tl_require_root
tl_require_tracemap
cd "$TL_TMP" || exit 1
inst=$(tl_instance nomap)
idir=$TL_TRACEFS/instances/$inst
tl_can_map "$inst" && tl_skip "this kernel maps the ring buffer: the fallback is checked on kernels before 6.10 (make check-kernels)"

# the consuming stream, through read(): 1000 markers, each once
"$TM" stream -B "$inst" --watermark 0 --latency-ms 100 > out.txt 2> err.txt &
tm=$!
tl_bg $tm
tl_wait 20 tl_file_is "$idir/buffer_percent" 0 || { cat err.txt; tl_fail "the stream did not start"; }
tl_markers "$inst" 0 0 1000
# the kernel's read count of CPU 0 (the last but one column of tracemap stat)
tl_wait 30 sh -c "\"$TM\" stat -B $inst 2>/dev/null | awk '\$1 == 0 { exit \$(NF-1) < 1000 }'" ||
	{ "$TM" stat -B "$inst"; tl_fail "the markers were not consumed through read()"; }
tl_wait 30 sh -c "[ \$(grep -c 'seq=' out.txt) -ge 1000 ]" ||
	tl_fail "the stream printed $(grep -c 'seq=' out.txt) of 1000 markers"
kill -INT $tm
wait $tm || { cat err.txt; tl_fail "the stream exited $? after SIGINT"; }
tl_seqs out.txt > got.txt
seq 0 999 > want.txt
cmp -s got.txt want.txt || { diff want.txt got.txt | head; tl_fail "markers lost or repeated through read()"; }
tl_log "stream: 1000 of 1000 markers through read()"

# refuse: exit 1, one line naming the kernel version, no file, no instance
# left, nothing changed in the instance given
before=$(tl_instance_state "$idir")
refuses() {
	what=$1; shift
	"$@" > rout.txt 2> rerr.txt < /dev/null
	rc=$?
	[ $rc -ne 0 ] || tl_fail "$what: exit 0 without the mapping"
	grep -q 'Linux 6.10 or later' rerr.txt || { cat rerr.txt; tl_fail "$what: the message does not name the kernel needed"; }
	# besides the notes of an instance made and removed, one line
	[ "$(grep -v -e '^tracemap: created instance' -e '^tracemap: removed instance' rerr.txt | grep -c .)" -eq 1 ] ||
		{ cat rerr.txt; tl_fail "$what: more than one line of error"; }
	[ "$(tl_instance_state "$idir")" = "$before" ] || tl_fail "$what: changed the state of $inst"
	tl_log "$what: $(cat rerr.txt)"
}
refuses snapshot "$TM" snapshot -B "$inst" -o snap.dat
[ ! -e snap.dat ] || tl_fail "snapshot left snap.dat behind"
refuses flight "$TM" flight -B "$inst" -o fl.dat --marker GLITCH
[ ! -e fl.dat ] || tl_fail "flight left fl.dat behind"
# without a trigger flight reads nothing until a dump: it must refuse at the start all the same
refuses "flight without a trigger" timeout 60 "$TM" flight -B "$inst" -o fl2.dat
[ ! -e fl2.dat ] || tl_fail "flight left fl2.dat behind"
refuses "flight into a directory" "$TM" flight -B "$inst" -o fl/ --marker GLITCH
[ ! -e fl ] || tl_fail "flight left the directory fl/ behind"
refuses "non-consuming stream" "$TM" stream -B "$inst" --non-consuming
# a display that is not there: the refusal comes before KernelShark would start
refuses "live view" env DISPLAY=:4242 "$TM" view -B "$inst"

# a private instance, made and removed by the tool
private=tmtest-nomap-$$-new
tl_track_instance "$private"
refuses "non-consuming stream of a new instance" "$TM" stream -B "$private" --non-consuming
[ ! -d "$TL_TRACEFS/instances/$private" ] || tl_fail "the stream left the instance $private behind"
refuses "live view of a private instance" env DISPLAY=:4242 "$TM" view
ls "$TL_TRACEFS/instances" | grep -q '^tracemap-view' && tl_fail "the live view left its private instance behind"
exit 0
