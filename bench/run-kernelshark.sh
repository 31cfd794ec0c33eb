#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# make bench, the live KernelShark view (issue 9), side by side in one run:
#  - one refresh of a buffer holding each number of events: the plugin's part
#    (non-consuming copy + trace.dat image written over the last one),
#    KernelShark's load of that image,
#    and the whole refresh through the plugin; against the anchor workflow of
#    today, `trace-cmd extract` of the same buffer (in a private mount
#    namespace where the instance is the tracefs root, as the tests run it)
#    and KernelShark opening the file;
#  - CPU of the real KernelShark (under Xvfb) following at 1 refresh/s, on an
#    idle instance and while a writer adds 100k events/s.
# Markdown on stdout and in build/bench/kernelshark.md; make bench appends it
# to the report of run-bench.sh (BENCH_KS_APPEND=build/bench/results.md).
#
#   BENCH_KS_EVENTS="100000 1000000"   events in the buffer (half per CPU)
#   BENCH_KS_REPS=3                    repetitions (medians)
#   BENCH_KS_FOLLOW_S=10               seconds of each following measurement
#
# Headless loads (libkshark) leave out the GUI's table model and graph.

O=build
B=$O/bench
TOP=$(pwd)
TRACEFS=/sys/kernel/tracing
EVENTS=${BENCH_KS_EVENTS:-100000 1000000}
REPS=${BENCH_KS_REPS:-3}
FOLLOW_S=${BENCH_KS_FOLLOW_S:-10}
PLUGIN=$O/plugins/kernelshark/plugin-tracemap.so

die() { echo "run-kernelshark: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root for tracefs"
[ -d $TRACEFS/instances ] || die "tracefs is not mounted at $TRACEFS: run 'sh scripts/mount-tracefs.sh'"
for f in $B/ks-refresh $B/tm-load $PLUGIN; do
	[ -e "$f" ] || die "$f is missing: run 'make bench' (KernelShark and Qt5 headers are needed)"
done
command -v trace-cmd > /dev/null || die "trace-cmd is not installed"

# the tests' helpers: private instances removed at exit, Xvfb and KernelShark
# shell helpers; tests/lib.sh makes $TL_TMP and cleans up
KS_TOP=$TOP
. "$TOP/tests/lib.sh"
. "$TOP/tests/plugins/ks-xvfb.shlib"
OUT=$(mktemp -d /dev/shm/tmbench-ks.XXXXXX) || die "cannot create a directory in /dev/shm"
trap 'rm -rf "$OUT"; tl_cleanup' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }
field() { tr ' ' '\n' | sed -n "s/^$1=//p"; }
runtime_ns() { awk '{ print $1 }' "/proc/$1/schedstat"; }
now_ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }

# fill INST N: N/2 raw markers on each CPU in one second, nothing else
fill() {
	echo > "$TRACEFS/instances/$1/trace"
	$B/tm-load -B "$1" -r $(($2 / 2)) -d 1000 -c 0 > /dev/null &
	$B/tm-load -B "$1" -r $(($2 / 2)) -d 1000 -c 1 > /dev/null
	wait
}

echo "# KernelShark bench: refresh of [$EVENTS] events, $REPS each; following ${FOLLOW_S} s idle and at 100k ev/s" >&2
: > "$OUT/refresh.raw"
for n in $EVENTS; do
	# about 40 bytes an event, with room to spare: nothing is overwritten
	inst=$(tl_instance bnks $((n * 48 / 2 / 1024 + 1024)))
	fill "$inst" "$n"
	line=$($B/ks-refresh -r "$REPS" -B "$inst" -p "$PLUGIN" -o "$OUT/img.dat" | grep '^first=') ||
		die "ks-refresh failed on $inst"
	rm -f "$OUT/img.dat"
	r=1
	: > "$OUT/anchor"
	while [ "$r" -le "$REPS" ]; do
		[ $r -gt 1 ] && fill "$inst" "$n"
		t0=$(now_ms)
		unshare -m --propagation private sh -c '
			mount --bind "$1/instances/$2" "$1" || exit 99
			exec trace-cmd extract -o "$3"' sh "$TRACEFS" "$inst" "$OUT/x.dat" \
			> "$OUT/x.log" 2>&1
		t1=$(now_ms)
		[ -s "$OUT/x.dat" ] || { cat "$OUT/x.log" >&2; die "trace-cmd extract of $inst wrote nothing"; }
		l=$($B/ks-refresh -r 1 -f "$OUT/x.dat") || die "KernelShark cannot load the extract of $inst"
		echo "$((t1 - t0)) $(echo "$l" | field load) $(echo "$l" | field entries)" >> "$OUT/anchor"
		rm -f "$OUT/x.dat"
		r=$((r + 1))
	done
	echo "events=$n $line extract=$(cut -d' ' -f1 "$OUT/anchor" | median) xload=$(cut -d' ' -f2 "$OUT/anchor" | median) xentries=$(cut -d' ' -f3 "$OUT/anchor" | median)" >> "$OUT/refresh.raw"
	echo "  $(tail -1 "$OUT/refresh.raw")" >&2
done

# following at 1 refresh/s: KernelShark's CPU over FOLLOW_S seconds
follow_cpu() {	# follow_cpu RATE: CPU % of KernelShark (RATE 0: no writer)
	_c0=$(runtime_ns $KSPID); _t0=$(now_ms)
	if [ "$1" -gt 0 ]; then
		$B/tm-load -B "$finst" -r "$1" -d $((FOLLOW_S * 1000)) -c 0 > /dev/null
	else
		sleep "$FOLLOW_S"
	fi
	_c1=$(runtime_ns $KSPID); _t1=$(now_ms)
	awk -v c=$((_c1 - _c0)) -v t=$((_t1 - _t0)) 'BEGIN { printf "%.1f", c / 1e4 / t }'
}
ks_require
ks_xvfb
finst=$(tl_instance bnksf)
# KernelShark calls an empty buffer an error: start with 1000 events
$B/tm-load -B "$finst" -r 10000 -d 100 -c 1 > /dev/null
TRACEMAP_FOLLOW_MS=1000 kernelshark -p "$TOP/$PLUGIN" "$TRACEFS/instances/$finst" \
	> "$OUT/ks.log" 2>&1 &
KSPID=$!
tl_bg $KSPID
tl_wait 60 ks_has_title "tracemap: [0-9]* events, refresh 2 " || die "KernelShark did not follow $finst"
idle=$(follow_cpu 0)
busy=$(follow_cpu 100000)
tl_wait 30 ks_has_title " refresh [0-9]* at" || die "KernelShark stopped following $finst"
refreshes=$(ks_titles | sed -n 's/.* refresh \([0-9]*\) at.*/\1/p' | head -1)

{
	echo
	echo "## KernelShark live view (issue 9)"
	echo
	echo "One refresh of a buffer holding N events (trace_marker_raw, half per CPU), median of $REPS, ms."
	echo "*plugin*: non-consuming copy and trace.dat image written over the last one, on a refresh (*first*: the first one of a process,"
	echo "which also reads kallsyms and the formats of the ftrace events and of those in the buffer, into a new file); *load*: KernelShark (libkshark) loading that image;"
	echo "*refresh*: both through the plugin (kshark_open of the instance directory). Anchor: \`trace-cmd extract\`"
	echo "of the same buffer (it consumes; refilled per repetition), then KernelShark loading the file."
	echo
	echo "| events | first | plugin | load | refresh | plugin/load | extract | load (extract) | anchor total | refresh/anchor |"
	echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	while read -r l; do
		echo "$l" | tr ' ' '\n' | awk -F= '{ v[$1] = $2 } END {
			a = v["extract"] + v["xload"]
			printf "| %d | %.1f | %.1f | %.1f | %.1f | %.0f %% | %.0f | %.1f | %.1f | %.2f |\n",
				v["events"], v["first"], v["plugin"], v["load"], v["refresh"],
				100 * v["plugin"] / v["load"],
				v["extract"], v["xload"], a, v["refresh"] / a }'
	done < "$OUT/refresh.raw"
	echo
	echo "Targets: the plugin's part at most 10 % of KernelShark's load; the refresh faster than the anchor."
	echo
	echo "KernelShark (GUI under Xvfb) following an instance at 1 refresh/s, ${FOLLOW_S} s each, CPU of its process:"
	echo "idle instance ${idle} %, while 100k events/s are written ${busy} % ($refreshes refreshes in all)."
} | tee $B/kernelshark.md
[ -n "$BENCH_KS_APPEND" ] && cat $B/kernelshark.md >> "$BENCH_KS_APPEND"
exit 0
