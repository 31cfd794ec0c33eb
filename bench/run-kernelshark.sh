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
#  - the real KernelShark (under Xvfb) following a full buffer: refresh
#    times, its CPU and the plugin's share, for each follow period, buffer
#    size and write rate (issue 22's matrix).
# Markdown on stdout and in build/bench/kernelshark.md; make bench appends it
# to the report of run-bench.sh (BENCH_KS_APPEND=build/bench/results.md).
#
#   BENCH_KS_EVENTS="100000 1000000"   events in the buffer (half per CPU; "": no such part)
#   BENCH_KS_REPS=3                    repetitions (medians)
#   BENCH_KS_FOLLOW_S=10               seconds of each following measurement
#   BENCH_KS_PERIODS="500 1000"        follow periods (ms)
#   BENCH_KS_SIZES="1 8 32"            buffer sizes (MiB per CPU)
#   BENCH_KS_RATES="0 100000"          events/s written while following (0: idle)
#
# Headless loads (libkshark) leave out the GUI's table model and graph.

O=build
B=$O/bench
TOP=$(pwd)
TRACEFS=/sys/kernel/tracing
EVENTS=${BENCH_KS_EVENTS-100000 1000000}
REPS=${BENCH_KS_REPS:-3}
FOLLOW_S=${BENCH_KS_FOLLOW_S:-10}
PERIODS=${BENCH_KS_PERIODS:-500 1000}
SIZES=${BENCH_KS_SIZES:-1 8 32}
RATES=${BENCH_KS_RATES:-0 100000}
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

median() { sort -n | awk 'NF { v[++n] = $1 } END { if (n) print v[int((n + 1) / 2)]; else print "-" }'; }
maxof() { awk 'NF && (!n++ || $1 > m) { m = $1 } END { print n ? m : "-" }'; }
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

echo "# KernelShark bench: refresh of [$EVENTS] events, $REPS each; following [$PERIODS] ms x [$SIZES] MiB x [$RATES] ev/s, ${FOLLOW_S} s each" >&2
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

# Following: the real KernelShark under Xvfb, one instance and one
# KernelShark per point of PERIODS x SIZES x RATES. The buffer is filled
# first (every CPU until the writer overwrites), so that each refresh
# copies and loads a full buffer; then, over FOLLOW_S seconds, RATE
# events/s are written on CPU 0 (0: none, the instance idle). KernelShark's
# CPU is that of all its threads (/proc/PID/stat: the copy and the image's
# open run in a worker thread). Each refresh's times come from the
# plugin's TRACEMAP_KS_STATS lines of the window: the whole refresh (from
# the timer to the view shown), and for refreshes that load a new copy the
# plugin's part (copy, view kept) against KernelShark's (open, load).
# refreshed_since N K: the stats lines count N + K refreshes or more
refreshed_since() { [ "$(grep -c '^tracemap: refresh ' "$OUT/ks.log")" -ge $(($1 + $2)) ]; }
follow_point() {	# follow_point PERIOD_MS MIB RATE: one line of follow.raw
	_inst=$(tl_instance kc-bnf $(($2 * 1024)))
	# full: each CPU's writer goes on until the buffer overwrites, at most 30 s
	for _cpu in 0 1; do
		_t=0
		until grep -q '^overrun: [1-9]' "$TRACEFS/instances/$_inst/per_cpu/cpu$_cpu/stats"; do
			[ $_t -lt 60 ] || die "cannot fill CPU $_cpu of $_inst in 30 s"
			$B/tm-load -B "$_inst" -r 0 -d 500 -c $_cpu > /dev/null
			_t=$((_t + 1))
		done
	done
	TRACEMAP_KS_STATS=1 TRACEMAP_FOLLOW_MS=$1 kernelshark -p "$TOP/$PLUGIN" \
		"$TRACEFS/instances/$_inst" > "$OUT/ks.log" 2>&1 &
	_ks=$!
	tl_bg $_ks
	# the first two refreshes: KernelShark's start-up is over
	tl_wait 300 grep -q '^tracemap: refresh 2: ' "$OUT/ks.log" ||
		{ tail -5 "$OUT/ks.log" >&2; die "KernelShark did not follow $_inst ($2 MiB) within 300 s"; }
	_n0=$(grep -c '^tracemap: refresh ' "$OUT/ks.log")
	_c0=$(awk '{ print $14 + $15 }' /proc/$_ks/stat); _t0=$(now_ms)
	_wl=
	if [ "$3" -gt 0 ]; then
		$B/tm-load -B "$_inst" -r "$3" -d 900000 -c 0 > /dev/null &
		_wl=$!
		tl_bg $_wl
	fi
	sleep "$FOLLOW_S"
	# a large buffer takes longer than the window to load: two refreshes at least
	tl_wait 600 refreshed_since "$_n0" 2 ||
		die "fewer than 2 refreshes in 600 s ($1 ms, $2 MiB, $3 ev/s)"
	_c1=$(awk '{ print $14 + $15 }' /proc/$_ks/stat); _t1=$(now_ms)
	_n1=$(grep -c '^tracemap: refresh ' "$OUT/ks.log")
	[ -n "$_wl" ] && kill $_wl
	kill $_ks
	tl_wait 30 tl_gone $_ks || die "KernelShark did not end after SIGTERM"
	# its memory back before the next point (tl_cleanup tries again at exit)
	rmdir "$TRACEFS/instances/$_inst" 2> /dev/null
	grep '^tracemap: refresh ' "$OUT/ks.log" | sed -n "$((_n0 + 1)),${_n1}p" > "$OUT/window"
	[ -s "$OUT/window" ] || die "no refresh in the ${FOLLOW_S} s window ($1 ms, $2 MiB, $3 ev/s)"
	# refresh time: "asked X ms ago"; loaded: "plugin P ms = S %"
	_times=$(sed -n 's/.* asked \([0-9.]*\) ms ago.*/\1/p' "$OUT/window")
	_shares=$(sed -n 's/.* plugin [0-9.]* ms = \([0-9.]*\) %.*/\1/p' "$OUT/window")
	_plugin=$(sed -n 's/.* plugin \([0-9.]*\) ms = .*/\1/p' "$OUT/window")
	echo "period=$1 mib=$2 rate=$3 refreshes=$(wc -l < "$OUT/window")" \
		"loaded=$(echo "$_shares" | grep -c .)" \
		"median=$(echo "$_times" | median) max=$(echo "$_times" | maxof)" \
		"plugin=$(echo "$_plugin" | median) share=$(echo "$_shares" | median)" \
		"share_max=$(echo "$_shares" | maxof)" \
		"cpu=$(awk -v c=$((_c1 - _c0)) -v hz="$(getconf CLK_TCK)" -v t=$((_t1 - _t0)) \
			'BEGIN { printf "%.1f", 100 * c / hz / (t / 1000) }')" >> "$OUT/follow.raw"
	echo "  $(tail -1 "$OUT/follow.raw")" >&2
}
ks_require
ks_xvfb
: > "$OUT/follow.raw"
for period in $PERIODS; do
	for mib in $SIZES; do
		for rate in $RATES; do
			follow_point "$period" "$mib" "$rate"
		done
	done
done

{
	echo
	echo "## KernelShark live view (issues 9 and 22)"
	[ -s "$OUT/refresh.raw" ] && {
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
	}
	echo
	echo "KernelShark (GUI under Xvfb) following a full buffer, ${FOLLOW_S} s a point (longer until 2 refreshes ended), while the given"
	echo "events/s are written on CPU 0 (0: idle). *refreshes*: in the window, *loaded* of them with new data"
	echo "(the others found nothing new and kept the view); *refresh*: from the timer to the view shown, ms;"
	echo "*plugin*: the plugin's part of a loaded refresh (copy, view kept), ms, and its *share* of the"
	echo "loaded refresh's work (plugin against KernelShark's open and load), median and max;"
	echo "*CPU*: all of KernelShark's threads, % of one CPU."
	echo
	echo "| period ms | MiB/CPU | events/s | refreshes | loaded | refresh median | refresh max | plugin | share | share max | CPU % |"
	echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	while read -r l; do
		echo "$l" | tr ' ' '\n' | awk -F= '{ v[$1] = $2 } END {
			printf "| %d | %d | %d | %d | %d | %s | %s | %s | %s | %s | %s |\n",
				v["period"], v["mib"], v["rate"], v["refreshes"], v["loaded"],
				v["median"], v["max"], v["plugin"], v["share"] == "-" ? "-" : v["share"] " %",
				v["share_max"] == "-" ? "-" : v["share_max"] " %", v["cpu"] }'
	done < "$OUT/follow.raw"
	echo
	echo "Goals (issue 22): following at 1 s costs under 10 % of a CPU at 1 MiB per CPU; the plugin's share of a refresh under 10 %."
} | tee $B/kernelshark.md
[ -n "$BENCH_KS_APPEND" ] && cat $B/kernelshark.md >> "$BENCH_KS_APPEND"
exit 0
