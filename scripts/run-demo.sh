#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The main job (make run): `tracemap stream` on a private instance while a
# short workload runs on both CPUs, then Ctrl-C (SIGINT) and the per-CPU
# statistics. The workload starts processes and writes numbered markers;
# the job checks that every marker arrived exactly once, in order, that
# tracemap's own events are under 5 % of what it printed (they are left
# out, and so is what its output causes), and that the private instance is
# gone afterwards. Nothing at the top level of tracefs is touched.
#
#   scripts/run-demo.sh [seconds]      TRACEMAP=path/to/tracemap
secs=${1:-3}
TM=${TRACEMAP:-build/tracemap}
TFS=/sys/kernel/tracing
EVENTS="sched:sched_process_exec sched:sched_process_exit sched:sched_wakeup"

die() { echo "run-demo: $*" >&2; exit 1; }
[ -x "$TM" ] || die "$TM is not built: run make"
[ "$(id -u)" -eq 0 ] || die "tracefs needs root: run as root"
[ -d "$TFS/instances" ] || die "tracefs is not mounted at $TFS: run sh scripts/mount-tracefs.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tracemap-demo.XXXXXX") || exit 1
pid=
cleanup() {
	[ -n "$pid" ] && kill -INT "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

eopts=
for e in $EVENTS; do eopts="$eopts -e $e"; done
echo "== tracemap stream$eopts   (a private instance; the workload runs ${secs} s)"
# shellcheck disable=SC2086
"$TM" stream $eopts > "$tmp/events.txt" 2> "$tmp/stderr.txt" &
pid=$!

# up when it has named its private instance and our events are enabled there (bounded: 10 s)
n=0
inst=
until [ -n "$inst" ] && [ "$(cat "$TFS/instances/$inst/events/sched/sched_wakeup/enable" 2>/dev/null)" = 1 ]; do
	inst=$(sed -n 's/^tracemap: streaming the private instance \([^ ]*\) .*/\1/p' "$tmp/stderr.txt")
	kill -0 "$pid" 2>/dev/null || { cat "$tmp/stderr.txt"; pid=; die "tracemap stream exited"; }
	n=$((n + 1))
	[ $n -gt $((200 * ${TEST_TIMEOUT_SCALE:-1})) ] && die "tracemap stream did not start within $((10 * ${TEST_TIMEOUT_SCALE:-1})) s"
	sleep 0.05
done
idir=$TFS/instances/$inst

# the workload: on each CPU, short-lived processes and numbered markers
end=$(($(date +%s) + secs))
for cpu in 0 1; do
	[ -d "$TFS/per_cpu/cpu$cpu" ] || continue
	taskset -c $cpu sh -c '
		i=0
		while [ $(date +%s) -lt '"$end"' ]; do
			echo "demo cpu'"$cpu"' step=$i" > "'"$idir/trace_marker"'"
			ls / > /dev/null
			i=$((i + 1))
			sleep 0.05
		done
		echo $i > "'"$tmp/steps$cpu"'"' &
done
wait_workload() {
	for cpu in 0 1; do
		[ -d "$TFS/per_cpu/cpu$cpu" ] || continue
		n=0
		until [ -s "$tmp/steps$cpu" ]; do
			n=$((n + 1))
			[ $n -gt $((secs * 20 + 200)) ] && die "the workload on cpu$cpu did not finish"
			sleep 0.05
		done
	done
}
wait_workload
want=0
for f in "$tmp"/steps*; do want=$((want + $(cat "$f"))); done

# every marker printed, then Ctrl-C
n=0
while [ "$(grep -c 'demo cpu' "$tmp/events.txt")" -lt $want ]; do
	n=$((n + 1))
	[ $n -gt 100 ] && break
	sleep 0.05
done
kill -INT $pid
wait $pid
rc=$?
tmpid=$pid
pid=
[ $rc -eq 0 ] || { cat "$tmp/stderr.txt"; die "tracemap stream exited $rc"; }

lines=$(wc -l < "$tmp/events.txt")
echo "== $lines events printed; the first ones:"
head -12 "$tmp/events.txt"
echo "== the workload's markers (first and last):"
grep 'demo cpu' "$tmp/events.txt" | sed -n '1,3p'
echo "   ..."
grep 'demo cpu' "$tmp/events.txt" | tail -3
echo "== events per name:"
awk '{ i = index($0, "] "); if (!i) next; s = substr($0, i + 2); sub(/^ *[0-9.]+: /, "", s)
	sub(/:.*/, "", s); n[s]++ } END { for (e in n) printf "%10d  %s\n", n[e], e }' \
	"$tmp/events.txt" | sort -rn
# tracemap's own events: as the task, or as the task its sched events name;
# not a wake-up from an interrupt that came while it ran (the system's: its
# own wake-ups of other tasks are left out, libtracemap-stream(3))
irq=$(grep -cE "tracemap-$tmpid +\[[0-9]+\] +[0-9.]+: sched_wak(eup|ing): " "$tmp/events.txt")
own=$(grep -E "tracemap-$tmpid |tracemap:$tmpid |pid=$tmpid( |$)" "$tmp/events.txt" |
	grep -cvE "tracemap-$tmpid +\[[0-9]+\] +[0-9.]+: sched_wak(eup|ing): ")
echo "== events of tracemap itself ($tmpid): $own of $lines (left out unless --no-filter);"
echo "   $irq wake-ups by interrupts that came while it ran (the system's)"
echo "== tracemap's statistics (stderr, after Ctrl-C):"
grep -v '^tracemap: streaming' "$tmp/stderr.txt"

# checks: every marker exactly once, each CPU's in order, the instance gone
got=$(grep -c 'demo cpu' "$tmp/events.txt")
uniq=$(grep -o 'demo cpu[0-9]* step=[0-9]*' "$tmp/events.txt" | sort -u | wc -l)
[ "$got" -eq "$want" ] && [ "$uniq" -eq "$want" ] ||
	die "$want markers written, $got printed ($uniq distinct)"
for cpu in 0 1; do
	grep -o "demo cpu$cpu step=[0-9]*" "$tmp/events.txt" | sed 's/.*=//' |
		awk '$1 != NR - 1 { exit 1 }' || die "cpu$cpu markers out of order"
done
[ -d "$idir" ] && die "the private instance $inst was left behind"
[ $((own * 20)) -le "$lines" ] || die "$own of $lines events are tracemap's own (more than 5 %)"
echo "== ok: $want markers exactly once and in order; $inst removed"
exit 0
