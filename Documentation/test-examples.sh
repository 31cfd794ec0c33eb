#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1
#
# Run the EXAMPLE programs of the man pages (built by make check-build into
# build/Documentation/examples) on a private instance and check exactly what
# they print: the pages must show programs that work.
# timeout: 120
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh

EX=build/Documentation/examples
for p in libtracemap libtracemap-cpu libtracemap-read libtracemap-print libtracemap-stream; do
	[ -x "$EX/$p" ] || tl_fail "$EX/$p is not built: run 'make check-build' first"
done
tl_require_root

inst=$(tl_instance dc 64) || exit 1
tl_track_instance "$inst"
cpu=$(sed 's/[-,].*//' /sys/devices/system/cpu/online)
tl_log "instance $inst, CPU $cpu"

out=$TL_TMP/out
# a consuming reader without the read() fallback tells whether the kernel maps
if ! "$EX/libtracemap-cpu" "$inst" "$cpu" consume > "$out" 2>&1; then
	grep -q "Operation not supported" "$out" && tl_skip "the kernel cannot map trace_pipe_raw (Linux 6.10 or later)"
	cat "$out"
	tl_fail "libtracemap-cpu consume on an empty instance failed"
fi
grep -qx "events: 0" "$out" || { cat "$out"; tl_fail "empty instance: expected 'events: 0'"; }
subbuf=$(sed -n 's/.* sub-buffers of \([0-9]*\) bytes$/\1/p' "$out")
[ -n "$subbuf" ] || { cat "$out"; tl_fail "libtracemap-cpu did not print the sub-buffer size"; }

# expect_seqs FILE FIRST LAST: FILE holds exactly the markers FIRST..LAST in order
expect_seqs() {
	grep -a -o 'seq=[0-9]*' "$1" | cut -d= -f2 > "$TL_TMP/got"
	seq "$2" "$3" > "$TL_TMP/want"
	cmp -s "$TL_TMP/got" "$TL_TMP/want" ||
		tl_fail "$1: expected markers $2..$3 in order, got $(wc -l < "$TL_TMP/got")" \
			"($(head -1 "$TL_TMP/got")..$(tail -1 "$TL_TMP/got"))"
}

tl_markers "$inst" "$cpu" 0 100

# libtracemap(3): a snapshot of every CPU, twice: nothing is removed
"$EX/libtracemap" "$inst" > "$out" || tl_fail "libtracemap failed"
cat "$out"
grep -q "^cpu$cpu: 100 events, time [0-9]* to [0-9]*$" "$out" ||
	tl_fail "libtracemap: expected 100 events on cpu$cpu"
others=$(grep -v "^cpu$cpu:" "$out" | grep -vc ": 0 events$")
[ "$others" -eq 0 ] || tl_fail "libtracemap: events on CPUs no marker was written on"
"$EX/libtracemap" "$inst" > "$out.2" || tl_fail "libtracemap failed the second time"
cmp -s "$out" "$out.2" || tl_fail "libtracemap: a second snapshot differs from the first"

# libtracemap-cpu(3): snapshot, rewind, snapshot
"$EX/libtracemap-cpu" "$inst" "$cpu" snapshot > "$out" || tl_fail "libtracemap-cpu snapshot failed"
cat "$out"
grep -qx "events: 100" "$out" && grep -qx "events after rewind: 100" "$out" &&
	grep -q "^delivered 200 events in " "$out" ||
	tl_fail "libtracemap-cpu snapshot: expected 100 events before and after the rewind"

# libtracemap-read(3): consume and print decoded, then nothing is left
"$EX/libtracemap-read" "$inst" "$cpu" > "$out" || tl_fail "libtracemap-read failed"
head -3 "$out"
[ "$(wc -l < "$out")" -eq 100 ] || tl_fail "libtracemap-read: expected 100 lines, got $(wc -l < "$out")"
[ "$(grep -c "^$cpu  *[0-9]*\.[0-9]* print: tracing_mark_write: seq=[0-9]*$" "$out")" -eq 100 ] ||
	tl_fail "libtracemap-read: lines are not 'CPU TIME print: tracing_mark_write: seq=N'"
expect_seqs "$out" 0 99
"$EX/libtracemap-read" "$inst" "$cpu" > "$out" || tl_fail "libtracemap-read failed the second time"
[ ! -s "$out" ] || tl_fail "libtracemap-read: consumed events were delivered again"
"$EX/libtracemap" "$inst" > "$out" || tl_fail "libtracemap failed"
grep -q "^cpu$cpu: 0 events$" "$out" || tl_fail "libtracemap: consumed events still in the snapshot"

# libtracemap-cpu(3): consume through the mapping, then with read()
tl_markers "$inst" "$cpu" 100 50
"$EX/libtracemap-cpu" "$inst" "$cpu" consume > "$out" || tl_fail "libtracemap-cpu consume failed"
cat "$out"
grep -q "^cpu$cpu: mmap backend, consume mode" "$out" && grep -qx "events: 50" "$out" &&
	grep -q "^delivered 50 events in " "$out" ||
	tl_fail "libtracemap-cpu consume: expected 50 events through the mapping"
tl_markers "$inst" "$cpu" 150 30
"$EX/libtracemap-cpu" "$inst" "$cpu" read > "$out" || tl_fail "libtracemap-cpu read failed"
cat "$out"
grep -q "^cpu$cpu: read backend, read mode, 0 sub-buffers of $subbuf bytes$" "$out" &&
	grep -qx "events: 30" "$out" ||
	tl_fail "libtracemap-cpu read: expected 30 events with the read backend"

# libtracemap-read(3) -o: whole sub-buffers, the flush at the end included
tl_markers "$inst" "$cpu" 180 300
"$EX/libtracemap-read" -o "$TL_TMP/pages" "$inst" "$cpu" || tl_fail "libtracemap-read -o failed"
size=$(wc -c < "$TL_TMP/pages")
tl_log "pages: $size bytes"
[ "$size" -gt 0 ] && [ $((size % subbuf)) -eq 0 ] ||
	tl_fail "libtracemap-read -o: $size bytes is not a whole number of $subbuf-byte sub-buffers"
expect_seqs "$TL_TMP/pages" 180 479

# libtracemap-read(3) -f: waits for new events until SIGINT
"$EX/libtracemap-read" -f "$inst" "$cpu" > "$TL_TMP/follow" 2>&1 &
pid=$!
tl_bg $pid
tl_markers "$inst" "$cpu" 480 20
n=0
while [ "$(grep -c 'seq=' "$TL_TMP/follow")" -lt 20 ] && [ $n -lt 100 ]; do
	sleep 0.1
	n=$((n + 1))
done
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 0 ] || tl_fail "libtracemap-read -f: exit status $rc after SIGINT"
expect_seqs "$TL_TMP/follow" 480 499

# libtracemap-print(3): the error of a missing instance goes to the caller's sink
"$EX/libtracemap-print" > "$out" || tl_fail "libtracemap-print failed"
cat "$out"
grep -q "libtracemap error: no instance 'no-such-instance' (" "$out" &&
	grep -qx "cpu0 of no-such-instance: No such device" "$out" &&
	grep -qx "messages: 1 error, 0 warning, 0 info, 0 debug" "$out" ||
	tl_fail "libtracemap-print: expected one error message and ENODEV"
"$EX/libtracemap-print" "$inst" > "$out" || tl_fail "libtracemap-print $inst failed"
grep -qx "cpu0 of $inst: open" "$out" && grep -qx "messages: 0 error, 0 warning, 0 info, 0 debug" "$out" ||
	{ cat "$out"; tl_fail "libtracemap-print: expected cpu0 of $inst to open silently"; }

# libtracemap-stream(3): two CPUs writing at once, merged in time order
cpus=$(tr ',' '\n' < /sys/devices/system/cpu/online | while IFS=- read -r a b; do
	seq "$a" "${b:-$a}"; done | head -2 | tr '\n' ' ')
set -- $cpus
a=$1 b=${2:-$1}
big=$(tl_instance dc 512) || exit 1
tl_track_instance "$big"
percent=$(cat "$TL_TRACEFS/instances/$big/buffer_percent")

# check_stream OUT ERR CPU_A FIRST_A CPU_B FIRST_B PER_CPU
check_stream() {
	[ "$(wc -l < "$1")" -eq $(($7 * 2)) ] || tl_fail "libtracemap-stream: expected $(($7 * 2)) lines, got $(wc -l < "$1")"
	grep "^$3 " "$1" > "$1.a"
	grep "^$5 " "$1" > "$1.b"
	expect_seqs "$1.a" "$4" $(($4 + $7 - 1))
	expect_seqs "$1.b" "$6" $(($6 + $7 - 1))
	inversions=$(awk '$2 < max { n++ } $2 >= max { max = $2 } END { print n + 0 }' "$1")
	late=$(sed -n 's/.* \([0-9]*\) late, .*/\1/p' "$2" | awk '{ n += $1 } END { print n + 0 }')
	lost=$(sed -n 's/.* \([0-9]*\) lost, .*/\1/p' "$2" | awk '{ n += $1 } END { print n + 0 }')
	tl_log "stream: $(awk '{ print $1 }' "$1" | uniq | wc -l) runs of one CPU," \
		"$inversions out of time order, $late counted late, $lost lost"
	[ "$inversions" -eq "$late" ] ||
		tl_fail "libtracemap-stream: $inversions events out of time order but $late counted late"
	[ "$lost" -eq 0 ] || tl_fail "libtracemap-stream: $lost events lost"
}

tl_markers "$big" "$a" 0 3000 &
tl_markers "$big" "$b" 10000 3000 &
wait
timeout 30 "$EX/libtracemap-stream" "$big" 6000 > "$out" 2> "$out.err" ||
	{ cat "$out.err"; tl_fail "libtracemap-stream on a filled buffer failed"; }
cat "$out.err"
check_stream "$out" "$out.err" "$a" 0 "$b" 10000 3000

# live: the stream waits, the writers start after it
"$EX/libtracemap-stream" "$big" 2000 > "$out" 2> "$out.err" &
pid=$!
tl_bg $pid
n=0
while [ "$(cat "$TL_TRACEFS/instances/$big/buffer_percent")" != 0 ] && [ $n -lt 100 ]; do
	sleep 0.1
	n=$((n + 1))
done
[ $n -lt 100 ] || tl_fail "libtracemap-stream did not set buffer_percent to 0"
tl_markers "$big" "$a" 20000 1000 &
w1=$!
tl_markers "$big" "$b" 30000 1000 &
w2=$!
wait $w1 $w2
n=0
while kill -0 $pid 2>/dev/null && [ $n -lt 200 ]; do
	sleep 0.1
	n=$((n + 1))
done
wait $pid || { cat "$out.err"; tl_fail "libtracemap-stream did not deliver 2000 live events"; }
cat "$out.err"
check_stream "$out" "$out.err" "$a" 20000 "$b" 30000 1000
[ "$(cat "$TL_TRACEFS/instances/$big/buffer_percent")" = "$percent" ] ||
	tl_fail "buffer_percent was not restored to $percent"

echo "PASS: every example printed what its page says"
exit 0
