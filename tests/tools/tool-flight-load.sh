#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 240
# tracemap flight under load:
# - an overflowed buffer: the dump holds the newest markers, as many as the
#   buffer could hold, each once and in order, up to the trigger;
# - a concurrent consuming `tracemap stream` of the same instance still gets
#   every marker: the recorder consumes nothing;
# - a writer at full speed during the dumps: no torn, duplicated or
#   reordered marker in any file, and every gap in the numbers is marked as
#   dropped events where it happened (trace-cmd report's "EVENTS DROPPED"),
#   with as many KernelShark missed-events entries as marks.
. "$(dirname "$0")/flight.shlib"
fl_require

# ------------------------------------------------- the newest markers
inst=$(tl_instance fload)
idir=$TL_TRACEFS/instances/$inst
fl_start o -B "$inst" -b 64 --marker GLITCH -o o.dat
n=20000
tc_markers "$inst" 0 0 $n
taskset -c 0 sh -c "echo GLITCH > $idir/trace_marker"
fl_wait_dumps o 1
fl_stop $FL_PID
tc_report o-1.dat o1.txt
first=$(grep -o 'seq=[0-9]*' o1.txt | head -1 | cut -d= -f2 | awk '{ print $1 + 0 }')
kept=$((n - first))
[ "$first" -gt 0 ] || tl_fail "a 64 KiB buffer held all $n markers: no overflow to test"
fl_in_order o1.txt "$first" "$kept"
grep 'tracing_mark_write' o1.txt | tail -1 | grep -q GLITCH || tl_fail "the trigger is not the newest marker"
# what the writer overwrote is marked lost before the oldest marker, exactly
head -n "$(grep -n 'seq=' o1.txt | head -1 | cut -d: -f1)" o1.txt | grep -q "CPU:0 \[$first EVENTS DROPPED\]" ||
	tl_fail "no 'CPU:0 [$first EVENTS DROPPED]' before the oldest marker"
if [ -x "$TC_KSHARK" ]; then
	"$TC_KSHARK" o-1.dat > o1.ks || tl_fail "libkshark could not load o-1.dat"
	set -- $(cat o1.ks)
	[ "$8" -eq 1 ] || tl_fail "libkshark shows $8 missed-events entries, not 1: $(cat o1.ks)"
fi
# 64 KiB of 4 KiB pages hold at most about 16 * 4080 bytes of 32-byte marker events
[ "$kept" -gt 1000 ] && [ "$kept" -le 2200 ] || tl_fail "$kept markers kept of a 64 KiB buffer"
tl_log "overflow: the newest $kept of $n markers, in order, then the trigger"

# ------------------------------------------- a concurrent consumer
inst=$(tl_instance fcons 1024)
idir=$TL_TRACEFS/instances/$inst
"$TM" stream -B "$inst" > s.out 2> s.err &
st=$!
tl_bg $st
tl_wait 10 tl_file_is "$idir/buffer_percent" 50 || { cat s.err; tl_fail "the stream did not start"; }
fl_start c -B "$inst" --marker GLITCH --hold-off-ms 0 -o c.dat
tc_markers "$inst" 0 0 3000
taskset -c 0 sh -c "echo GLITCH > $idir/trace_marker"
fl_wait_dumps c 1
tc_markers "$inst" 1 3000 3000
kill -USR1 $FL_PID
fl_wait_dumps c 2
tl_wait 20 grep -q 'seq=00005999' s.out || tl_fail "the stream did not get the last marker"
fl_stop $FL_PID
kill -INT $st
wait $st || { cat s.err; tl_fail "tracemap stream exited $?"; }
tc_expect_seqs s.out 0 6000
for f in c-1.dat c-2.dat; do tc_report $f $f.txt; done
tl_log "a consuming stream beside the recorder got all 6000 markers; 2 dumps"

# -------------------------------------------- a writer at full speed
for kb in 8 1024; do
	inst=$(tl_instance ffull)
	fl_start w$kb -B "$inst" -b $kb --hold-off-ms 0 -o w$kb.dat
	"$TC_MARKERS" "$inst" 0 0 100000000 > /dev/null 2>&1 &
	wr=$!
	tl_bg $wr
	tl_wait 10 grep -q '^entries: [1-9]' "$TL_TRACEFS/instances/$inst/per_cpu/cpu0/stats" ||
		tl_fail "the writer did not start"
	for i in 1 2 3; do
		kill -USR1 $FL_PID
		fl_wait_dumps w$kb $i
	done
	kill $wr
	wait $wr 2>/dev/null
	fl_stop $FL_PID
	for i in 1 2 3; do
		f=w$kb-$i.dat
		tc_report $f $f.txt
		res=$(fl_check_gaps $f.txt 0) || tl_fail "$f: $res"
		set -- $res
		[ "$1" -gt 0 ] || tl_fail "$f: no marker of the writer"
		if [ -x "$TC_KSHARK" ]; then
			"$TC_KSHARK" $f > $f.ks || tl_fail "libkshark could not load $f"
			drops=$(grep -c 'EVENTS DROPPED' $f.txt)
			lines=$(grep -vc -e '^cpus=' -e 'EVENTS DROPPED' $f.txt)
			set -- $res $(cat $f.ks)
			[ "$7" -eq $((lines + drops)) ] && [ "${11}" -eq "$drops" ] ||
				tl_fail "$f: libkshark $(cat $f.ks); the report has $lines events, $drops drop marks"
		fi
		tl_log "$kb KiB, $f: $res (markers, gaps, drop marks)"
	done
done
exit 0
