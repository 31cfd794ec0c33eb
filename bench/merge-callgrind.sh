#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Instructions per event of the library's ordered merge, exact and
# repeatable: bench/tm-merge drains synthetic two-CPU rings under
# valgrind --tool=callgrind, counting only the draining (run_stream, or
# run_walk for the walk without a merge). Prints a Markdown table.
#
#   sh bench/merge-callgrind.sh [tm-merge binary]     (default build/bench/tm-merge)
#   MERGE_SCENARIOS="idle fine" MERGE_EVENTS=400000 sh bench/merge-callgrind.sh
#
# Needs valgrind (Debian package valgrind); build the program first with
# `make build/bench/tm-merge`.

BIN=${1:-build/bench/tm-merge}
SCENARIOS=${MERGE_SCENARIOS:-idle lead fine equal bursts}
N=${MERGE_EVENTS:-400000}

die() { echo "merge-callgrind: $*" >&2; exit 1; }

command -v valgrind >/dev/null || die "valgrind is not installed: apt-get install valgrind"
[ -x "$BIN" ] || die "$BIN is missing: run 'make build/bench/tm-merge'"

# instructions of function $2 in a run of mode $1, scenario $3
count() {
	out=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null --collect-atstart=no \
		--toggle-collect="$2" "$BIN" -m "$1" -s "$3" -n "$N" 2>&1) ||
		die "$BIN -m $1 -s $3 failed: $out"
	echo "$out" | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

echo "Instructions per event ($N events, callgrind, $BIN)"
echo
echo "| scenario | stream (merge) | walk (no merge) | merge - walk |"
echo "|---|---|---|---|"
for s in $SCENARIOS; do
	a=$(count stream run_stream "$s")
	b=$(count walk run_walk "$s")
	[ -n "$a" ] && [ -n "$b" ] || die "no instruction count from callgrind"
	awk -v s="$s" -v a="$a" -v b="$b" -v n="$N" \
		'BEGIN { printf "| %s | %.1f | %.1f | %.1f |\n", s, a / n, b / n, (a - b) / n }'
done
