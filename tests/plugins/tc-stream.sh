#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
# trace-cmd-mmap stream: every marker written on both CPUs is printed while
# the stream still runs, exactly once, and the stream stops promptly on SIGINT.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tc-common.shlib"
tc_require
command -v stdbuf > /dev/null || tl_skip "stdbuf (coreutils) is needed to see stream's output live"

n=3000
cd "$TL_TMP" || exit 1
inst=$(tl_instance tc)
# stdbuf: stream's stdout is a file here, line-buffer it to see it live
stdbuf -oL "$TCM" --verbose stream -d --no-filter -B "$inst" -e syscalls:sys_enter_getppid \
	> out.txt 2> err.log &
pid=$!
tc_recording $pid err.log
tc_markers_both "$inst" $n
tl_wait 20 tc_count_ge out.txt 'seq=' $((2 * n)) ||
	tl_fail "only $(grep -c seq= out.txt) of $((2 * n)) markers printed within 20 s"
tc_dead $pid && tl_fail "the stream ended before SIGINT"
cp out.txt live.txt
tl_log "all $((2 * n)) markers printed live"

# trace-cmd 3.1.6 answers the first SIGINT with one more blocking read of
# the pipes (trace_stream_read(..., -1)); with every page already printed it
# waits there for new data, and a second SIGINT ends that wait.
kill -INT $pid
if ! tl_wait 3 tc_dead $pid; then
	tl_log "trace-cmd waits for data after the first SIGINT: second SIGINT"
	kill -INT $pid
fi
start=$(date +%s)
tl_wait 5 tc_dead $pid || tl_fail "stream did not stop within 5 s of the second SIGINT"
wait $pid
tl_log "stopped within $(( $(date +%s) - start + 1 )) s"
tc_expect_seqs out.txt 0 $((2 * n))
tl_log "each marker exactly once"
exit 0
