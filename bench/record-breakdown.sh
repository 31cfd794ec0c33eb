#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Where trace-cmd record spends its CPU, stock (splice) against
# trace-cmd-mmap (the mapping): one recording of each of a private instance
# while tm-load writes trace_marker_raw events at a rate, profiled with
# perf (cpu-clock, 20 kHz, call graphs, every process of the recording), the
# samples sorted by what the stack was doing, in ns per event the kernel
# handed to the reader. The split behind bench/README.md's "trace-cmd-mmap
# record against splice".
#
#   bench/record-breakdown.sh [RATE (0: max)] [MS]     needs root, perf, trace-cmd
#
# BENCH_BREAKDOWN_APPEND=FILE also appends the split to FILE as a section of
# the bench report (make bench does, at 1M events/s and at the writer's max).
O=build
B=$O/bench
RATE=${1:-0}
MS=${2:-2000}
T=/sys/kernel/tracing
TCM=$O/plugins/trace-cmd/trace-cmd-mmap
[ "$(id -u)" -eq 0 ] || { echo "needs root" >&2; exit 1; }
for p in perf trace-cmd; do
	command -v $p > /dev/null && continue
	echo "$p is not installed" >&2
	[ -n "$BENCH_BREAKDOWN_APPEND" ] &&
		printf '\n## Where trace-cmd record'"'"'s CPU goes\n\nNot measured: %s is not installed.\n' $p >> "$BENCH_BREAKDOWN_APPEND"
	exit 1
done
[ -x $B/tm-load ] && [ -x $TCM ] || { echo "run 'make bench' first (tm-load, trace-cmd-mmap)" >&2; exit 1; }
tmp=$(mktemp -d /dev/shm/tmbench-rb.XXXXXX) || exit 1
inst=
group=
cleanup() {
	[ -n "$group" ] && kill -KILL -- -$group 2>/dev/null
	[ -n "$inst" ] && [ -d $T/instances/$inst ] && rmdir $T/instances/$inst 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# the stack of one sample -> what it was doing
CLASSIFY='
function flush(   c) {
	if (!n) return
	c = "other kernel work"
	if (user) c = "user space"
	if (late) c = "after Ctrl-C: trace-cmd assembles trace.dat (copies the per-CPU files)"
	if (stack ~ / ring_buffer_map_get_reader/) c = "GET_READER ioctl (kernel walks every event of the page)"
	else if (stack ~ / (ring_buffer_read_page|tracing_buffers_splice_read|splice_to_pipe)/) c = "splice of ring-buffer pages"
	else if (stack ~ / (shmem_file_write_iter|generic_perform_write|iter_file_splice_write)/) c = "writing the output file"
	else if (stack ~ / (do_select|do_sys_poll|ep_poll|schedule)/) c = "waiting (select, poll, scheduler)"
	else if (stack ~ / (exit_mmap|dup_mmap|do_exit|execve|load_elf|do_mmap|__x64_sys_munmap|openat|_dl_)/) c = "start and exit (exec, fork, mmap, open)"
	cnt[c]++; total++
	n = 0; stack = ""; user = 0; late = 0
}
/^$/ { flush(); next }
/^[^ \t]/ {
	n = 1
	for (i = 1; i <= NF; i++)
		if ($i ~ /^[0-9]+\.[0-9]+:$/)
			late = substr($i, 1, length($i) - 1) + 0 > stop
	next
}
{ stack = stack " " $2; if (n == 1) { n = 2; user = $0 !~ /kernel\.kallsyms/ } }
END { flush(); for (c in cnt) printf "%6.1f %%  %6.1f ns/event  %s\n", 100 * cnt[c] / total, cnt[c] * 50000 / ev, c
      printf "%6.1f %%  %6.1f ns/event  all (%d samples)\n", 100, total * 50000 / ev, total }'

# the report goes to the terminal and, asked for, to the bench report
exec 3>&1 > $tmp/report.txt
for mode in stock mmap; do
	inst=tmbench-rb-$$-$mode
	mkdir $T/instances/$inst || exit 1
	echo 1024 > $T/instances/$inst/buffer_size_kb
	tc=trace-cmd
	[ $mode = mmap ] && tc=$TCM
	# its own process group: whatever trace-cmd leaves behind is killed with it
	setsid perf record -q -F 20000 -g -k CLOCK_MONOTONIC -o $tmp/$mode.perf -- taskset -c 1 \
		$tc record -d --no-filter -B $inst -e syscalls:sys_enter_reboot -o $tmp/$mode.dat \
		> $tmp/$mode.log 2>&1 &
	pid=$!
	group=$pid
	# ready: every per-CPU reader of the instance is open
	n=0
	while [ "$(ls -l /proc/[0-9]*/fd 2>/dev/null | grep -c "instances/$inst/per_cpu/cpu[0-9]*/trace_pipe_raw")" -lt "$(nproc)" ] &&
	      [ $n -lt 100 ]; do
		sleep 0.05
		n=$((n + 1))
	done
	$B/tm-load -B $inst -r "$RATE" -d "$MS" -c 0 > $tmp/load.txt
	# the recorders drained what was written
	n=0
	while grep -q "entries: [1-9]" $T/instances/$inst/per_cpu/cpu*/stats && [ $n -lt 40 ]; do
		sleep 0.05
		n=$((n + 1))
	done
	ev=$(cat $T/instances/$inst/per_cpu/cpu*/stats | awk '/^read events:/ { s += $3 } END { print s + 0 }')
	# Ctrl-C for trace-cmd (perf's child), at most 5 s, then the group goes;
	# CLOCK_MONOTONIC (= uptime here) splits recording from writing trace.dat
	stop=$(cut -d' ' -f1 /proc/uptime)
	pkill -INT -P $pid
	n=0
	while kill -0 $pid 2>/dev/null && [ $n -lt 100 ]; do
		sleep 0.05
		n=$((n + 1))
	done
	kill -KILL -- -$group 2>/dev/null
	wait $pid
	group=
	echo "== $mode trace-cmd record: $(cat $tmp/load.txt); $ev events read"
	[ "$ev" -gt 0 ] && perf script -i $tmp/$mode.perf 2>/dev/null | awk -v ev="$ev" -v stop="$stop" "$CLASSIFY" | sort -t'%' -k2 -rn
	# the recorders may still hold the buffer for a moment
	n=0
	while ! rmdir $T/instances/$inst 2>/dev/null && [ $n -lt 40 ]; do
		sleep 0.05
		n=$((n + 1))
	done
	inst=
done
exec 1>&3 3>&-
cat $tmp/report.txt
if [ -n "$BENCH_BREAKDOWN_APPEND" ]; then
	rate=$RATE
	[ "$rate" = 0 ] && rate="the writer's maximum"
	{
		echo
		echo "## Where trace-cmd record's CPU goes, stock (splice) against trace-cmd-mmap, offered $rate"
		echo
		echo "\`sh bench/record-breakdown.sh $RATE $MS\`, $(date -u '+%Y-%m-%d %H:%M UTC'): perf cpu-clock at 20 kHz over"
		echo "every process of one recording of each, samples sorted by their stack, ns per event read."
		echo "bench/README.md explains the split (trace-cmd-mmap record against splice)."
		echo
		echo '```text'
		cat $tmp/report.txt
		echo '```'
	} >> "$BENCH_BREAKDOWN_APPEND"
fi
