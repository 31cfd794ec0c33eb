#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
# record -A over the network: the guest side (trace-cmd agent) maps its
# buffers and writes the pages into the sockets; the host side reads the
# sockets through libtracefs (alloc_fd passes through). Both run through
# trace-cmd-mmap. trace-cmd 3.1.6's agent always reads the top-level buffer,
# so both run where a private instance is the top level; time
# synchronisation is off (--tsync-interval -1).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tc-common.shlib"
tc_require
command -v unshare > /dev/null || tl_skip "unshare (util-linux) is needed for a private mount namespace"

n=2000
cd "$TL_TMP" || exit 1
inst=$(tl_instance tc)
tc_in_instance "$inst" true || tl_skip "cannot bind an instance in a private mount namespace"
port=$(tc_free_port) || tl_skip "no free TCP port found"

tc_in_instance_bg "$inst" "$TCM" --verbose --stats agent -N 127.0.0.1 -p $port > agent.log 2>&1
apid=$!
tl_bg $apid
tl_wait 10 tc_port_listening $port ||
	{ cat agent.log; tl_fail "trace-cmd agent did not listen on $port"; }

# --notimeout: the host waits for the agent's metadata (kallsyms, formats)
# at most 5 s otherwise, then records an empty guest file and reports
# "error writing to host-127.0.0.1.dat" at the end, as it did in a 6.1
# guest under TCG, whose agent took longer. stdbuf: the host's "Hit Ctrl^C
# to stop recording" is seen when it is said.
tc_in_instance_bg "$inst" stdbuf -oL "$TCM" --verbose record --notimeout -d --no-filter \
	-o host.dat --tsync-interval -1 -A 127.0.0.1:$port -d --no-filter -p nop > host.log 2>&1
hpid=$!
# the agent's recorders map the buffers
tc_recording $hpid agent.log
tc_track_children $apid
# and the host has the metadata and records: SIGINT only then
tl_wait 60 grep -q 'Hit Ctrl^C to stop recording' host.log ||
	{ cat host.log; tl_fail "the host did not start recording within 60 s"; }

tc_markers_both "$inst" $n
tc_stop $hpid INT
grep ' pages (' agent.log | sed 's/^/# /'
[ -f host-127.0.0.1.dat ] || { cat host.log agent.log; tl_fail "the host wrote no guest file"; }
tc_report host-127.0.0.1.dat guest.txt
tc_expect_seqs guest.txt 0 $((2 * n))
tl_log "record -A: the host's file holds all $((2 * n)) guest markers exactly once"
exit 0
