#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 60
# tracemap stat: exact per-CPU counts from the meta page (entries, read,
# unread) before and after a consuming stream, the mapping reported, the
# sub-buffer size and count the kernel maps, the watermark; and looking
# changes nothing: the events stay in the buffer.
. "$(dirname "$0")/../lib.sh"
tl_require_root
tl_require_tracemap
cd "$TL_TMP" || exit 1
[ "$(ls -d "$TL_TRACEFS"/per_cpu/cpu* | wc -l)" -ge 2 ] || tl_skip "needs two CPUs"

# row FILE CPU: "mmap subbuf_size subbufs entries overrun read unread" of that CPU
row() { awk -v c="$2" '$1 == c && $2 ~ /^(yes|no)$/ { $1 = ""; print substr($0, 2) }' "$1"; }

inst=$(tl_instance st 64)
tl_require_mmap "$inst"
idir=$TL_TRACEFS/instances/$inst
echo 37 > "$idir/buffer_percent"
tl_markers "$inst" 0 0 25
tl_markers "$inst" 1 25 4

"$TM" stat -B "$inst" > s1.txt 2> err.txt || { cat err.txt; tl_fail "tracemap stat failed"; }
cat s1.txt | sed 's/^/# /'
grep -qx "instance: $inst" s1.txt || tl_fail "no instance line"
grep -qx "watermark (buffer_percent): 37" s1.txt || tl_fail "watermark not shown"
grep -qx "trace_clock: local" s1.txt || tl_fail "trace_clock not shown"
# 64 KiB per CPU in 4080-byte data pages, plus the reader page
subbufs=$(( ($(cat "$idir/buffer_size_kb") * 1024 + 4079) / 4080 + 1 ))
[ "$(row s1.txt 0)" = "yes 4096 $subbufs 25 0 0 25" ] ||
	tl_fail "cpu0: '$(row s1.txt 0)', expected 'yes 4096 $subbufs 25 0 0 25'"
[ "$(row s1.txt 1)" = "yes 4096 $subbufs 4 0 0 4" ] ||
	tl_fail "cpu1: '$(row s1.txt 1)', expected 'yes 4096 $subbufs 4 0 0 4'"

# looking consumed nothing
"$TM" stat -B "$inst" > s2.txt || tl_fail "second tracemap stat failed"
cmp -s s1.txt s2.txt || { diff s1.txt s2.txt; tl_fail "tracemap stat changed the counts"; }
[ "$(grep -c 'seq=' "$idir/trace")" -eq 29 ] || tl_fail "the events left the buffer"
[ "$(cat "$idir/buffer_percent")" = 37 ] || tl_fail "buffer_percent changed"

# after a consuming stream: everything read, nothing unread
"$TM" stream -B "$inst" > out.txt 2> err.txt &
tm=$!
tl_bg $tm
tl_wait 10 grep -q 'seq=28' out.txt || tl_fail "the stream did not deliver the markers"
kill -INT $tm
wait $tm || tl_fail "tracemap stream exited $?"
"$TM" stat -B "$inst" > s3.txt || tl_fail "third tracemap stat failed"
[ "$(row s3.txt 0)" = "yes 4096 $subbufs 25 0 25 0" ] || tl_fail "cpu0 after: '$(row s3.txt 0)'"
[ "$(row s3.txt 1)" = "yes 4096 $subbufs 4 0 4 0" ] || tl_fail "cpu1 after: '$(row s3.txt 1)'"

# 8 KiB sub-buffers are shown as the kernel maps them
: > "$idir/trace"
# some kernels refuse the write (EPERM): the rest of the test has run
echo 8 2>/dev/null > "$idir/buffer_subbuf_size_kb" ||
	tl_skip "this kernel refuses buffer_subbuf_size_kb 8 (the checks before it passed)"
"$TM" stat -B "$inst" > s4.txt || tl_fail "tracemap stat (8 KiB) failed"
grep -qx "buffer_subbuf_size_kb: 8" s4.txt || tl_fail "sub-buffer size line"
row s4.txt 0 | grep -q '^yes 8192 ' || tl_fail "cpu0 with 8 KiB: '$(row s4.txt 0)'"
exit 0
