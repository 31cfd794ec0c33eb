#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
# tracemap stream fails when it cannot put back what it changed: the write
# of the old buffer_size_kb at the end is made to fail (strace's fault
# injection on that one file). The run says which file, exits 1, leaves
# the crash record, and tracemap reset puts the size back.
. "$(dirname "$0")/../lib.sh"
tl_require_root
tl_require_tracemap
command -v strace > /dev/null || tl_skip "strace is not installed (apt-get install strace)"
cd "$TL_TMP" || exit 1
strace -f -qq -o /dev/null true 2> strace.err ||
	{ cat strace.err; tl_skip "strace cannot trace here"; }
export TRACEMAP_STATE_DIR=$TL_TMP/state

inst=$(tl_instance pb)
idir=$TL_TRACEFS/instances/$inst
tl_require_mmap "$inst"
old=$(cat "$idir/buffer_size_kb")
new=$((old + 1024))
# the stream writes the new size, then the old one back: the second write fails
strace -f -qq -o strace.out -P "$idir/buffer_size_kb" -e trace=write \
	-e inject=write:error=EIO:when=2 \
	"$TM" stream -B "$inst" -b "$new" -e sched:sched_switch -- true > out.txt 2> err.txt
rc=$?
grep -q INJECTED strace.out || { cat strace.out; tl_fail "no write of buffer_size_kb was refused"; }
[ "$rc" -eq 1 ] || { cat err.txt; tl_fail "the stream exited $rc with the size not put back (want 1)"; }
grep -q "cannot write $old to $idir/buffer_size_kb: Input/output error" err.txt ||
	{ cat err.txt; tl_fail "no message names the file that was not put back"; }
tl_file_is "$idir/buffer_size_kb" "$new" ||
	tl_fail "buffer_size_kb is $(cat "$idir/buffer_size_kb"), not the stream's $new"
[ -n "$(ls "$TRACEMAP_STATE_DIR" 2> /dev/null)" ] || tl_fail "no crash record is left for tracemap reset"
"$TM" reset > reset.out 2> reset.err || { cat reset.err; tl_fail "reset failed"; }
grep "left in instance $inst:" reset.err | grep -q "buffer_size_kb $old" ||
	{ cat reset.err; tl_fail "reset did not say it put buffer_size_kb back"; }
tl_file_is "$idir/buffer_size_kb" "$old" || tl_fail "reset did not put buffer_size_kb back"
[ -z "$(ls "$TRACEMAP_STATE_DIR")" ] || tl_fail "the record is left after reset"
tl_log "exit 1 and the file named; tracemap reset put buffer_size_kb $old back"
echo "a put-back that fails: exit 1, said, repaired by reset: all checks passed"
