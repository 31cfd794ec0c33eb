#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 600
# record -N over UDP (trace-cmd's default) through the mapping loses no more
# than stock trace-cmd at the same rate: a stock trace-cmd listen in its own
# network namespace, reached over a veth pair, and 1 or 4 recording hosts at
# 20k and 100k markers/s each (one second of markers, half on each CPU). For
# each case the plugin runs, then stock; the markers in the listener's files
# are counted exactly (no marker twice), and the plugin's loss must not pass
# stock's. Whatever the plugin loses is what the listener's socket dropped:
# its RcvbufErrors counter shows it, and the plugin's --stats says how many
# pages it sent as datagrams, and how many at most in a row: pages go out as
# they fill, not in bursts of half a buffer.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tc-common.shlib"
tc_require
[ "$(tc_can_map)" = yes ] ||
	tl_skip "this kernel cannot map the ring buffer (Linux 6.10 or later is needed): trace-cmd-mmap sends what stock trace-cmd does, nothing to compare"
command -v ip > /dev/null || tl_skip "ip (Debian package iproute2) is needed for network namespaces"
cd "$TL_TMP" || exit 1

ns=tmnp-udp-$$
va=tmua$$
vb=tmub$$
net_cleanup() {
	ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	ip link del "$va" 2>/dev/null
}
trap 'net_cleanup; tl_cleanup' EXIT
ip netns add "$ns" || tl_skip "cannot create a network namespace"
ip link add "$va" type veth peer name "$vb" 2> veth.err ||
	tl_skip "this kernel cannot make a veth pair ($(head -1 veth.err); CONFIG_VETH, module veth)"
ip link set "$vb" netns "$ns" &&
	ip addr add 10.231.77.1/24 dev "$va" && ip link set "$va" up &&
	ip netns exec "$ns" ip addr add 10.231.77.2/24 dev "$vb" &&
	ip netns exec "$ns" ip link set "$vb" up && ip netns exec "$ns" ip link set lo up ||
	tl_fail "cannot set up the veth pair $va/$vb"

# The listener resolves its clients' names: /etc/hosts of its namespace
# names the peer (ip netns exec gives it a private mount namespace).
printf '127.0.0.1 localhost\n10.231.77.1 tm-udp-peer\n10.231.77.2 tm-udp-listener\n' > hosts
mkdir listen
ip netns exec "$ns" sh -c "mount --bind $TL_TMP/hosts /etc/hosts &&
	exec $TRACE_CMD listen $TC_LISTEN_OPTS -p 19555 -d $TL_TMP/listen -o net" > listen.log 2>&1 &
tl_bg $!
listening() { ip netns exec "$ns" grep -q ':4C63 00000000:0000 0A' /proc/net/tcp; }
tl_wait 10 listening || { cat listen.log; tl_fail "trace-cmd listen did not listen in $ns"; }

rcvbuf_errors() {
	ip netns exec "$ns" awk '/^Udp:/ { n++; if (n == 2) print $6 }' /proc/net/snmp
}

clients=0
new_files() { ls listen | grep -v -x -F -f before.lst; }
listener_done() {
	tc_count_ge listen.log 'data recorded at' $((2 * clients)) && ! new_files | grep -qv '\.dat$'
}

# run WHO HOSTS RATE: HOSTS recorders (WHO: mmap or stock) at RATE markers/s
# each; sets lost (markers missing from the listener's files) and drops (the
# listener's RcvbufErrors during the run).
run() {
	n=$(($3 / 2))
	ls listen > before.lst
	e0=$(rcvbuf_errors)
	pids=
	for h in $(seq 1 "$2"); do
		inst=$(tl_instance udp)
		case $1 in
		mmap) cmd="$TCM --verbose --stats" ;;
		stock) cmd=$TRACE_CMD ;;
		esac
		wl=$(tc_workload 2 "$TC_MARKERS -r $n $inst 0 0 $n & $TC_MARKERS -r $n $inst 1 $n $n; wait")
		# a stable saved_cmdlines, or trace-cmd may write a file it cannot read
		tl_cmdlines_bg timeout 60 $cmd record -d --no-filter -B "$inst" \
			-e syscalls:sys_enter_getppid -N 10.231.77.2:19555 sh -c "$wl" \
			> "rec-$1-$h.log" 2>&1
		pids="$pids $!"
		tl_bg $!
	done
	# trace-cmd's exit status says nothing here (it fails on set_ftrace_filter
	# where function tracing is locked); the file and the counts do
	for p in $pids; do
		wait "$p"
		[ $? -ne 124 ] || { cat rec-"$1"-*.log; tl_fail "a $1 recorder did not finish within 60 s"; }
	done
	[ "$1" = stock ] || for h in $(seq 1 "$2"); do tc_expect_mapped "rec-$1-$h.log" 2; done
	clients=$((clients + $2))
	tl_wait 30 listener_done ||
		{ ls -l listen; cat listen.log; tl_fail "the listener did not finish $2 files within 30 s"; }
	got=0
	for f in $(new_files); do
		tc_report "listen/$f" report.txt
		tl_seqs report.txt > seqs.txt
		[ -z "$(uniq -d seqs.txt)" ] || tl_fail "listen/$f holds a marker twice"
		got=$((got + $(wc -l < seqs.txt)))
	done
	[ "$(new_files | wc -l)" -eq "$2" ] || tl_fail "$(new_files | wc -l) new files for $2 hosts"
	lost=$(($2 * 2 * n - got))
	drops=$(($(rcvbuf_errors) - e0))
	tl_log "$1, $2 host(s) at $3/s: $got of $(($2 * 2 * n)) markers, lost $lost;" \
		"listener RcvbufErrors +$drops"
	[ "$1" = mmap ] || return 0
	# --stats: "sent as N UDP datagrams, at most M in a row" per CPU
	sed -n 's/.* sent as \([0-9]*\) UDP datagrams, at most \([0-9]*\) in a row.*/\1 \2/p' \
		rec-mmap-*.log > udp-stats.txt
	[ "$(wc -l < udp-stats.txt)" -eq $((2 * $2)) ] ||
		{ cat rec-mmap-*.log; tl_fail "--stats did not count the UDP datagrams of $((2 * $2)) CPUs"; }
	sent=$(awk '{ s += $1 } END { print s }' udp-stats.txt)
	burst=$(awk '$2 > m { m = $2 } END { print m + 0 }' udp-stats.txt)
	tl_log "  the plugin sent $sent datagrams, at most $burst in a row"
}

for hosts in 1 4; do
	for rate in 20000 100000; do
		run mmap $hosts $rate
		mlost=$lost mdrops=$drops
		[ "$mlost" -eq 0 ] || [ "$mdrops" -gt 0 ] ||
			tl_fail "the plugin lost $mlost markers that the listener's socket did not drop"
		# pages go out as they fill: at 20k/s (88 pages/s per CPU) never half a
		# second's worth at once (a watermark wake-up handed out 89 or more)
		[ $rate -ne 20000 ] || [ "$burst" -le 44 ] ||
			tl_fail "the plugin sent $burst datagrams in a row at $rate/s"
		run stock $hosts $rate
		[ "$mlost" -le "$lost" ] ||
			tl_fail "$hosts host(s) at $rate/s: the plugin lost $mlost markers, stock $lost"
	done
done
echo "UDP: the plugin lost no more than stock in every case"
