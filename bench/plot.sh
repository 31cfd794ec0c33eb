#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The figures of make bench, beside results.md: CPU per event against the
# offered rate for every consumer, and the highest lossless rate of each.
#
#   bench/plot.sh RAW.txt REPS OUTDIR [REPS-AS-SHOWN]   (the title's words, default REPS)
#
# Writes OUTDIR/cpu-per-event.png and OUTDIR/lossless-rate.png with gnuplot
# (Debian gnuplot-nox, installed by make bench) from the medians
# bench/summarize.awk computes; prints the Markdown that shows them.
raw=$1 reps=$2 dir=$3 shown=${4:-$2}
[ -r "$raw" ] && [ -n "$reps" ] && [ -d "$dir" ] ||
	{ echo "usage: $0 RAW.txt REPS OUTDIR [REPS-AS-SHOWN]" >&2; exit 1; }
command -v gnuplot > /dev/null || { echo "plot: gnuplot is not installed (Debian gnuplot-nox): no figures" >&2; exit 1; }
awk -f "$(dirname "$0")/summarize.awk" -v reps="$reps" -v plotdir="$dir" "$raw" > /dev/null || exit 1
[ -s "$dir/cpu.dat" ] && [ -s "$dir/lossless.dat" ] || { echo "plot: no data" >&2; exit 1; }
ncol=$(head -1 "$dir/cpu.dat" | awk -F'\t' '{ print NF }')

gnuplot <<GP || exit 1
set terminal pngcairo size 1100,650 font "sans,10" noenhanced
set colorsequence podo
set linetype 9 lc rgb "#808080"
set linetype 10 lc rgb "#8B4513"
set linetype 11 lc rgb "#FF1493"
set linetype 12 lc rgb "#2F4F4F"
set linetype 13 lc rgb "#9ACD32"
set linetype 14 lc rgb "#4B0082"
set linetype 15 lc rgb "#DC143C"
set datafile separator "\t"
set datafile missing "?"
set key outside right top
set grid ytics mytics
set logscale y
set ylabel "CPU ns per delivered event (log)"
set xlabel "offered events/s (max: as fast as the writer goes)"
set title "CPU per event: medians of $shown repetitions (make bench)"
set output "$dir/cpu-per-event.png"
plot for [c=2:$ncol] "$dir/cpu.dat" using 0:c:xtic(1) with linespoints lw 2 pt (c % 6 + 4) lc (c - 1) title columnheader(c)
set output "$dir/lossless-rate.png"
unset logscale y
unset key
set style fill solid 0.6
set boxwidth 0.7
# right-aligned at the tick: long names run down and left, not off the canvas
set xtics rotate by 35 right
set bmargin 17
set lmargin 34
set ylabel "highest offered rate with zero loss (events/s; 0: none)"
set xlabel ""
set title "Highest lossless rate per consumer (max = the writer's own rate)"
set format y "%.1s%c"
plot "$dir/lossless.dat" using 0:2:xtic(1) with boxes
GP
echo "![CPU per event against offered rate](cpu-per-event.png)"
echo
echo "![Highest lossless rate per consumer](lossless-rate.png)"
