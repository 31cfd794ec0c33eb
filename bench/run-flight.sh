#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# make bench, the flight recorder (issue 8): side by side in one run,
#  - dump latency (trigger to file closed) and CPU of `tracemap flight` and of
#    the anchor workflow `trace-cmd extract` (in a private mount namespace
#    where the instance is the tracefs root, as the tests run it) for full
#    buffers of each size per CPU;
#  - idle CPU and wakeups of `tracemap flight` with only the signal trigger;
#  - CPU per event of `tracemap flight --marker` while a writer runs at each
#    rate, and that nothing was consumed.
# Markdown on stdout and in build/bench/flight.md; make bench appends it to
# the report of run-bench.sh (BENCH_FLIGHT_APPEND=build/bench/results.md).
#
#   BENCH_FLIGHT_MIB="1 8 32"             buffer sizes per CPU, MiB
#   BENCH_FLIGHT_REPS=3                   dumps per size and tool (medians)
#   BENCH_FLIGHT_IDLE_S=60                the idle measurement
#   BENCH_FLIGHT_RATES="100000 1000000"   writer rates for the marker trigger
#   BENCH_FLIGHT_DURATION_MS=3000         writer time per rate
# An empty BENCH_FLIGHT_MIB or BENCH_FLIGHT_RATES skips that part.
#
# CPU is the process's run time from /proc/PID/schedstat (ns, every thread
# of trace-cmd extract through /usr/bin/time).

O=build
B=$O/bench
TM=$O/tracemap
TRACEFS=/sys/kernel/tracing
SIZES=${BENCH_FLIGHT_MIB-1 8 32}
REPS=${BENCH_FLIGHT_REPS:-3}
IDLE_S=${BENCH_FLIGHT_IDLE_S:-60}
RATES=${BENCH_FLIGHT_RATES-100000 1000000}
EV_DUR=${BENCH_FLIGHT_DURATION_MS:-3000}

die() { echo "run-flight: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root for tracefs"
[ -d $TRACEFS/instances ] || die "tracefs is not mounted at $TRACEFS: run 'sh scripts/mount-tracefs.sh'"
[ -x $TM ] && [ -x $B/tm-load ] || die "$TM or $B/tm-load is missing: run 'make bench'"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (Debian package time)"

OUT=$(mktemp -d /dev/shm/tmbench-fl.XXXXXX) || die "cannot create a directory in /dev/shm"
INSTS=
PIDS=
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	for i in $INSTS; do
		[ -d "$TRACEFS/instances/$i" ] || continue
		n=0
		while ! rmdir "$TRACEFS/instances/$i" 2>/dev/null && [ $n -lt 50 ]; do
			sleep 0.1; n=$((n + 1))
		done
	done
	rm -rf "$OUT"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

seq_n=0
# mkinst KB: a private instance of KB per CPU; its name in $INST
mkinst() {
	seq_n=$((seq_n + 1))
	INST=tmtest-bnfl-$$-$seq_n
	mkdir "$TRACEFS/instances/$INST" || die "cannot create instance $INST"
	INSTS="$INSTS $INST"
	echo "$1" > "$TRACEFS/instances/$INST/buffer_size_kb" || die "cannot size $INST to $1 KiB"
}

# fill: write raw markers on both CPUs until both buffers overran (full)
fill() {
	n=0
	while [ $n -lt 120 ]; do
		$B/tm-load -B "$INST" -r 0 -d 300 -c 0 > /dev/null &
		w0=$!
		$B/tm-load -B "$INST" -r 0 -d 300 -c 1 > /dev/null
		wait $w0
		full=1
		for c in 0 1; do
			grep -q '^overrun: [1-9]' "$TRACEFS/instances/$INST/per_cpu/cpu$c/stats" || full=0
		done
		[ $full = 1 ] && return 0
		n=$((n + 1))
	done
	die "the buffers of $INST did not fill within 120 rounds"
}

runtime_ns() { awk '{ print $1 }' "/proc/$1/schedstat"; }
wakeups() { awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$1/status"; }
wait_for() {	# wait_for SECONDS COMMAND...
	_end=$(( $(date +%s) + $1 )); shift
	while ! "$@"; do
		[ "$(date +%s)" -lt "$_end" ] || return 1
		sleep 0.02
	done
}
lines_ge() { [ "$(grep -c "$1" "$2" 2>/dev/null)" -ge "$3" ]; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }

# start_flight NAME ARGS: tracemap flight in the background, ready; $FPID
start_flight() {
	_n=$1; shift
	$TM flight "$@" > "$OUT/$_n.out" 2> "$OUT/$_n.err" &
	FPID=$!
	PIDS="$PIDS $FPID"
	wait_for 20 grep -q 'flight recorder on' "$OUT/$_n.err" ||
		{ cat "$OUT/$_n.err" >&2; die "tracemap flight $* did not start"; }
}
stop_flight() {
	kill -INT "$FPID"
	wait "$FPID"
}

: > "$OUT/dump.raw"
echo "# flight bench: dumps of full buffers of [$SIZES] MiB per CPU, $REPS each; idle ${IDLE_S} s; marker trigger at [$RATES] ev/s" >&2
for mib in $SIZES; do
	mkinst $((mib * 1024))
	start_flight f$mib -B "$INST" --hold-off-ms 0 -o "$OUT/f$mib.dat"
	r=1
	while [ $r -le "$REPS" ]; do
		fill
		c0=$(runtime_ns $FPID)
		kill -USR1 $FPID
		wait_for 60 lines_ge '\.dat: cpu' "$OUT/f$mib.out" $r || die "no dump $r of $mib MiB"
		c1=$(runtime_ns $FPID)
		line=$(grep '\.dat: cpu' "$OUT/f$mib.out" | sed -n "${r}p")
		f=$(echo "$line" | sed 's/^SIGUSR1: \([^:]*\):.*/\1/')
		echo "tool=flight mib=$mib rep=$r $(echo "$line" | sed -n 's/.*copy \([0-9.]*\) ms, write \([0-9.]*\) ms, trigger to file \([0-9.]*\) ms.*/copy=\1 write=\2 latency=\3/p') cpu=$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }') size=$(stat -c %s "$f") events=$(echo "$line" | awk '{ for (i = 1; i <= NF; i++) if ($(i + 1) == "events") s += $i; print s }')" >> "$OUT/dump.raw"
		rm -f "$f"
		echo "  flight $mib MiB rep $r: $(tail -1 "$OUT/dump.raw")" >&2
		r=$((r + 1))
	done
	stop_flight
	[ "$(grep -h '^read events:' "$TRACEFS/instances/$INST/per_cpu/cpu"*/stats | awk '{ s += $3 } END { print s }')" = 0 ] ||
		die "tracemap flight consumed events of $INST"
	r=1
	while [ $r -le "$REPS" ]; do
		fill
		/usr/bin/time -f "%e %U %S" -o "$OUT/time" unshare -m --propagation private sh -c '
			mount --bind "$1/instances/$2" "$1" || exit 99
			exec trace-cmd extract -o "$3"' sh "$TRACEFS" "$INST" "$OUT/x.dat" > "$OUT/x.log" 2>&1 ||
			{ cat "$OUT/x.log" >&2; die "trace-cmd extract failed"; }
		ev=$(trace-cmd report "$OUT/x.dat" 2> /dev/null | grep -vc '^cpus=')
		echo "tool=extract mib=$mib rep=$r $(awk '{ printf "latency=%.1f cpu=%.1f", $1 * 1000, ($2 + $3) * 1000 }' "$OUT/time") size=$(stat -c %s "$OUT/x.dat") events=$ev" >> "$OUT/dump.raw"
		rm -f "$OUT/x.dat"
		echo "  extract $mib MiB rep $r: $(tail -1 "$OUT/dump.raw")" >&2
		r=$((r + 1))
	done
done

# idle: only the signal trigger
mkinst 1024
start_flight idle -B "$INST"
c0=$(runtime_ns $FPID); w0=$(wakeups $FPID)
sleep "$IDLE_S"
c1=$(runtime_ns $FPID); w1=$(wakeups $FPID)
stop_flight
IDLE="$(awk -v a="$c0" -v b="$c1" -v s="$IDLE_S" 'BEGIN { printf "%.4f %% CPU (%.2f ms in %d s)", (b - a) / (s * 1e7), (b - a) / 1e6, s }'), $((w1 - w0)) wakeups"
echo "  idle: $IDLE" >&2

# per event with a marker trigger that never fires
: > "$OUT/ev.raw"
for rate in $RATES; do
	mkinst 1024
	start_flight ev$rate -B "$INST" --marker 'tracemap-bench-never'
	c0=$(runtime_ns $FPID)
	$B/tm-load -B "$INST" -r "$rate" -d "$EV_DUR" -c 0 > "$OUT/load"
	sleep 0.2	# the follower's last round (it looks every 50 ms)
	c1=$(runtime_ns $FPID)
	stop_flight
	written=$(sed -n 's/^written=\([0-9]*\) .*/\1/p' "$OUT/load")
	achieved=$(sed -n 's/.* rate=\([0-9]*\) .*/\1/p' "$OUT/load")
	consumed=$(grep -h '^read events:' "$TRACEFS/instances/$INST/per_cpu/cpu"*/stats | awk '{ s += $3 } END { print s }')
	echo "rate=$rate achieved=$achieved written=$written cpu_ms=$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }') ns_per_ev=$(awk -v a="$c0" -v b="$c1" -v n="$written" 'BEGIN { printf "%.1f", n ? (b - a) / n : 0 }') consumed=$consumed" >> "$OUT/ev.raw"
	echo "  marker trigger: $(tail -1 "$OUT/ev.raw")" >&2
done

{
	echo "## Flight recorder (issue 8)"
	echo
	echo "Command: \`make bench\` (bench/run-flight.sh; BENCH_FLIGHT_MIB=\"$SIZES\" BENCH_FLIGHT_REPS=$REPS" \
		"BENCH_FLIGHT_IDLE_S=$IDLE_S BENCH_FLIGHT_RATES=\"$RATES\" BENCH_FLIGHT_DURATION_MS=$EV_DUR)," \
		"$(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r), $(nproc) CPUs."
	echo
	echo "Dumps of full buffers (both CPUs written until they overran), medians of $REPS. *latency*:" \
		"trigger to file closed (flight: SIGUSR1 received to close(), as the recorder reports it;" \
		"extract: the command's wall time). *copy*: the non-consuming copy of every CPU, the only" \
		"time the writer can change what the dump holds. CPU: the process's run time." \
		"trace-cmd extract consumes the buffer and writes its default (v7, zstd)."
	echo
	echo "| tool | MiB/CPU | latency ms | copy ms | write ms | CPU ms | file MiB | events |"
	echo "|---|---|---|---|---|---|---|---|"
	for mib in $SIZES; do
		for tool in flight extract; do
			grep "^tool=$tool mib=$mib " "$OUT/dump.raw" > "$OUT/sel"
			m() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" "$OUT/sel" | median; }
			echo "| $tool | $mib | $(m latency) | $(m copy) | $(m write) | $(m cpu) |" \
				"$(m size | awk '{ if ($1 == "-") print "-"; else printf "%.1f", $1 / 1048576 }') | $(m events) |"
		done
	done
	echo
	echo "Idle, signal trigger only, ${IDLE_S} s: $IDLE."
	echo
	echo "Marker trigger (\`--marker\`, never matching), writer of trace_marker_raw events on CPU 0 for" \
		"$EV_DUR ms, 1 MiB per CPU; CPU of the recorder per event written; *consumed*: the kernel's" \
		"read-events counters afterwards."
	echo
	echo "| offered ev/s | achieved ev/s | events | recorder CPU ms | ns/event | consumed |"
	echo "|---|---|---|---|---|---|"
	awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	       printf "| %s | %s | %s | %s | %s | %s |\n", v["rate"], v["achieved"], v["written"],
		      v["cpu_ms"], v["ns_per_ev"], v["consumed"] }' "$OUT/ev.raw"
	echo
	echo "Targets: copy of 32 MiB/CPU under 100 ms; idle CPU under 0.1 %; never consuming."
} > $B/flight.md
cat $B/flight.md
[ -n "$BENCH_FLIGHT_APPEND" ] && { echo; cat $B/flight.md; } >> "$BENCH_FLIGHT_APPEND"
exit 0
