#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Run the EXAMPLE programs of the man pages (built by make check-build into
# build/Documentation/examples) on a private instance and check exactly what
# they print: the pages must show programs that work.
# timeout: 120
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh

# TRACEMAP_EXAMPLES: the examples built elsewhere (debian/tests/examples)
EX=${TRACEMAP_EXAMPLES:-build/Documentation/examples}
for p in libtracemap libtracemap-cpu libtracemap-read libtracemap-print libtracemap-stream libtracemap-dump libtracemap-format libtracemap-event; do
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

# libtracemap-format(3): the lines of trace-cmd report, every marker compiled
"$EX/libtracemap-format" "$inst" > "$out" 2> "$out.err" || { cat "$out.err"; tl_fail "libtracemap-format failed"; }
head -2 "$out"
cat "$out.err"
[ "$(grep -c "^ *[^ ].*-[0-9]* *\[[0-9]\{3\}\] *[0-9]*\.[0-9]\{6\}: print: *tracing_mark_write: seq=[0-9]*$" "$out")" -eq 100 ] ||
	tl_fail "libtracemap-format: expected 100 lines 'comm-pid [cpu] time: print: tracing_mark_write: seq=N'"
expect_seqs "$out" 0 99
grep -qx "100 events, 0 through libtraceevent, 1 types compiled" "$out.err" ||
	tl_fail "libtracemap-format: expected 100 events, all compiled"

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

# libtracemap-stream(3): the task switches, not its own; no exit when idle
sw=$(tl_instance dc 512) || exit 1
tl_track_instance "$sw"
sdir=$TL_TRACEFS/instances/$sw
percent=$(cat "$sdir/buffer_percent")
# a program of a name of its own: other tasks of this machine run sleep too
slp=$TL_TMP/tmexslp
cp "$(command -v sleep)" "$slp" || tl_fail "cannot copy sleep"
"$EX/libtracemap-stream" "$sw" > "$out" 2> "$out.err" &
pid=$!
tl_bg $pid
tl_wait 10 tl_file_is "$sdir/events/sched/sched_switch/enable" 1 ||
	{ cat "$out.err"; tl_fail "libtracemap-stream did not enable sched:sched_switch"; }
[ "$(cat "$sdir/buffer_percent")" = 50 ] || tl_fail "the default stream did not set buffer_percent 50"
i=0
while [ $i -lt 5 ]; do "$slp" 0.05; i=$((i + 1)); done
# idle for longer than a second: it must still be there
sleep 1.5
kill -0 $pid 2>/dev/null || tl_fail "libtracemap-stream exited when idle"
tl_wait 5 sh -c "[ \$(grep -c ' tmexslp:[0-9]* -> ' '$out') -ge 5 ]" ||
	{ head "$out"; tl_fail "libtracemap-stream: the switches of tmexslp did not arrive"; }
kill -INT $pid
wait $pid || { cat "$out.err"; tl_fail "libtracemap-stream: exit status $? after SIGINT"; }
grep -vqE '^[0-9]+ [0-9]+ .*:-?[0-9]+ -> .*:-?[0-9]+$' "$out" &&
	{ grep -vE '^[0-9]+ [0-9]+ .*:-?[0-9]+ -> .*:-?[0-9]+$' "$out" | head -3
	  tl_fail "libtracemap-stream: lines not 'CPU TIME prev:pid -> next:pid'"; }
n=$(sed -n 's/.* tmexslp:\([0-9]*\) -> .*/\1/p' "$out" | sort -u | wc -l)
[ "$n" -eq 5 ] || tl_fail "libtracemap-stream: 5 tmexslp processes switched out, $n seen"
# its own switches never, away from it or to it
grep -qE " [^ ]*:$pid -> | -> [^ ]*:$pid\$" "$out" && tl_fail "libtracemap-stream printed its own switches"
[ "$(cat "$sdir/events/sched/sched_switch/enable")" = 0 ] || tl_fail "sched_switch not put back"
[ "$(cat "$sdir/buffer_percent")" = "$percent" ] || tl_fail "buffer_percent not put back"
tl_log "libtracemap-stream: $(wc -l < "$out") switches, the 5 tmexslp ones among them, none of its own"

# libtracemap-event(3): exec events, a __string field and the task name
# other tasks exec too: a large COUNT, stopped once the line of ours came
"$EX/libtracemap-event" "$sw" 1000000 > "$out" 2> "$out.err" &
pid=$!
tl_bg $pid
tl_wait 10 grep -q ready "$out" || { cat "$out.err"; tl_fail "libtracemap-event did not start"; }
"$slp" 0 &
spid=$!
wait $spid
tl_wait 10 grep -qE "^$spid tmexslp $slp\$" "$out" ||
	{ cat "$out"; tl_fail "libtracemap-event: no '$spid tmexslp $slp' line"; }
kill $pid
wait $pid
[ "$(cat "$sdir/events/sched/sched_process_exec/enable")" = 0 ] ||
	tl_log "libtracemap-event was killed: sched_process_exec stays on in $sw (removed at exit)"
tl_log "libtracemap-event: $(grep -c . "$out") lines, '$spid tmexslp $slp' among them"

# libtracemap-dump(3): a trace.dat of what is there, nothing consumed
tl_markers "$inst" "$cpu" 500 40
"$EX/libtracemap-dump" "$inst" "$TL_TMP/dump.dat" > "$out" || tl_fail "libtracemap-dump failed"
cat "$out"
grep -qx "cpu$cpu: 40 events, 0 lost" "$out" && grep -q "^$TL_TMP/dump.dat: 40 events in [0-9]* pages$" "$out" ||
	tl_fail "libtracemap-dump: expected 40 events on cpu$cpu"
if command -v trace-cmd > /dev/null; then
	trace-cmd report "$TL_TMP/dump.dat" > "$TL_TMP/dump.txt" 2> /dev/null ||
		tl_fail "trace-cmd report cannot read the example's dump"
	expect_seqs "$TL_TMP/dump.txt" 500 539
fi
"$EX/libtracemap" "$inst" > "$out" || tl_fail "libtracemap failed"
grep -q "^cpu$cpu: 40 events" "$out" || tl_fail "libtracemap: the dump consumed events"

echo "PASS: every example printed what its page says"
exit 0
