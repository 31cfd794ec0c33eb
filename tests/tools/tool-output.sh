#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 60
# Write errors of tracemap stream: only a closed pipe ends it quietly (exit
# 0); a full device (/dev/full) or a file size limit (EFBIG) is reported with
# its cause and exit 1, and the events read from the buffers but not written
# are counted: written lines + reported unwritten == markers, exactly.
. "$(dirname "$0")/../lib.sh"
tl_require_root
tl_require_tracemap
cd "$TL_TMP" || exit 1
inst=$(tl_instance out)
idir=$TL_TRACEFS/instances/$inst

# stream_into OUTPUT [BLOCKS]: 100 markers on CPU 0 while streaming into
# OUTPUT, consumed, then SIGINT; the exit status in rc. BLOCKS: a file size
# limit (ulimit -f) for the stream alone; a limit on this shell would cut
# its own log, a file too, and kill it (SIGXFSZ) instead of the stream
# being told EFBIG
stream_into() {
	sh -c 'ulimit -f "$1" && shift && exec "$@"' limit "${2:-unlimited}" \
		"$TM" stream -B "$inst" --watermark 0 --latency-ms 60000 > "$1" 2> err.txt &
	tm=$!
	tl_bg $tm
	tl_wait 10 tl_file_is "$idir/buffer_percent" 0 || { cat err.txt; tl_fail "the stream did not start"; }
	tl_markers "$inst" 0 0 100
	# every marker taken from the buffer before the stop
	tl_wait 10 sh -c "\"$TM\" stat -B $inst | awk '\$1 == 0 { exit \$NF != 0 || \$(NF-1) < 100 }'" ||
		{ "$TM" stat -B "$inst"; tl_fail "the markers were not consumed"; }
	kill -INT $tm
	wait $tm
	rc=$?
	sed 's/^/# /' err.txt | grep -v '^#  *[0-9a]'
}

# unwritten: the count in the message
unwritten() { sed -n 's/.* \([0-9][0-9]*\) events read from the buffers were not written.*/\1/p' err.txt; }

# 1. /dev/full: nothing can be written
stream_into /dev/full
[ $rc -eq 1 ] || tl_fail "/dev/full: exit $rc, expected 1"
grep -q "writing the output failed: No space left on device" err.txt || tl_fail "/dev/full: no cause"
[ "$(unwritten)" = 100 ] || tl_fail "/dev/full: '$(unwritten)' events reported unwritten, expected 100"

# 2. a file size limit: some lines written, the rest counted
: > "$idir/trace"
stream_into small.txt 2
[ $rc -eq 1 ] || tl_fail "file size limit: exit $rc, expected 1"
grep -q "writing the output failed: File too large" err.txt || tl_fail "file size limit: no cause"
lines=$(tr -cd '\n' < small.txt | wc -c)
n=$(unwritten)
tl_log "file size limit: $lines lines written, $n events reported unwritten"
[ "$lines" -gt 0 ] && [ $((lines + n)) -eq 100 ] ||
	tl_fail "$lines lines written + $n reported unwritten is not 100"

# 3. a closed pipe: quiet, exit 0 (it notices at the first write after the close)
: > "$idir/trace"
mkfifo pipe
"$TM" stream -B "$inst" > pipe 2> err.txt &
tm=$!
tl_bg $tm
head -1 < pipe > first.txt &
tl_wait 10 tl_file_is "$idir/buffer_percent" 50 || tl_fail "the piped stream did not start"
tl_markers "$inst" 0 0 10
wait $!
n=0
while kill -0 $tm 2> /dev/null && [ $n -lt 100 ]; do
	tl_markers "$inst" 0 $((10 + n)) 1
	sleep 0.05
	n=$((n + 1))
done
kill -0 $tm 2> /dev/null && tl_fail "the stream did not end with its pipe"
wait $tm
rc=$?
[ $rc -eq 0 ] || { cat err.txt; tl_fail "a closed pipe: exit $rc, expected 0"; }
grep -q "seq=0" first.txt || tl_fail "no first line through the pipe"
grep -q "failed\|not written" err.txt && { cat err.txt; tl_fail "a closed pipe was reported as an error"; }
echo "output errors: all checks passed"
