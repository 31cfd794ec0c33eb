#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
# trace-cmd-mmap record -N localhost:PORT to a stock trace-cmd listen on
# loopback: the listener's file holds every marker exactly once. The
# recorders write the mapped pages into the TCP sockets (without the
# mapping: what libtracefs reads, TCP only).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tc-common.shlib"
tc_require

n=3000
cd "$TL_TMP" || exit 1
mkdir listen || exit 1

port=$(tc_free_port) || tl_skip "no free TCP port found"

"$TRACE_CMD" listen $TC_LISTEN_OPTS -p $port -d "$TL_TMP/listen" -o net > listen.log 2>&1 &
lpid=$!
tl_bg $lpid
tl_wait 10 tc_port_listening $port ||
	{ cat listen.log; tl_fail "trace-cmd listen did not listen on $port"; }

new_files() { ls listen | grep -v -x -F -f before.lst; }
# the listener says "CPUn data recorded" per CPU while it writes the file,
# then closes it and deletes its per-CPU temporary files (.cpuN)
listener_done() {
	tc_count_ge listen.log 'data recorded at' $((2 * clients)) && ! new_files | grep -qv '\.dat$'
}

# run_client PROTO N BUFFER_KB: record -N (TCP with -t) with N markers per CPU
# and check the listener's new file.
run_client() {
	inst=$(tl_instance tc "$3")
	ls listen > before.lst
	tl_cmdlines timeout 60 "$TCM" --verbose --stats record -d --no-filter -B "$inst" \
		-N localhost:$port $4 -e syscalls:sys_enter_getppid \
		sh -c "$(tc_markers_workload "$inst" $2)" > rec.log 2>&1
	[ $? -ne 124 ] || { cat rec.log; tl_fail "record -N ($1) did not finish within 60 s"; }
	tc_expect_mapped rec.log 2

	clients=$((clients + 1))
	tl_wait 20 listener_done ||
		{ ls -l listen; cat listen.log; tl_fail "no complete file from the listener within 20 s"; }
	f=listen/$(new_files | head -1)
	[ -f "$f" ] || tl_fail "the listener wrote no new file"
	grep " pages (" rec.log | sed "s/^/# /"
	tc_report "$f" net.txt
	tc_expect_seqs net.txt 0 $((2 * $2))
	tl_log "$1: the listener's $(basename "$f") holds all $((2 * $2)) markers exactly once"
}
clients=0

# TCP: the recorders write batches of pages into the sockets
run_client TCP 3000 "" -t
# UDP (the default of -N): one page per datagram; a 64 KiB buffer makes the
# recorders write several pages per call, which the listener reads page-wise.
# Without the mapping libtracefs splices half a buffer at once, as stock
# trace-cmd does, and the listener's socket drops what it cannot hold:
# exactly once holds over TCP only (the pacing that keeps UDP whole is the
# mapping's, see tc-listen-udp.sh)
if [ "$(tc_can_map)" = yes ]; then
	run_client UDP 1000 64
else
	tl_log "UDP left out: without the mapping the recorders send as stock trace-cmd does, and the listener drops datagrams"
fi

kill $lpid
exit 0
