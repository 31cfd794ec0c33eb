#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 240
# tracemap flight, its triggers and what it leaves behind:
# - a marker trigger: the markers written before it are in the dump once and
#   in order, and the trigger is the dump's last event; SIGUSR1 and
#   `tracemap flight --dump` each give one more file, never overwriting;
#   Ctrl-C puts back overwrite mode, the buffer size and the events;
# - an event-filter trigger (-T/-F) with --after-ms: the trigger event is in
#   the dump after every marker written before it, and the markers written
#   in the window after it are in the same file; the private instance is
#   removed at the end;
# - the hold-off drops triggers that follow a dump too closely;
# - the traced command failing dumps and ends the recorder; succeeding ends
#   it without a dump;
# - with only the signal trigger the recorder does not wake up while idle;
# - bad arguments fail before anything is changed.
. "$(dirname "$0")/flight.shlib"
fl_require

inst=$(tl_instance fl)
idir=$TL_TRACEFS/instances/$inst
echo 0 > "$idir/options/overwrite"	# not the default: the restore must be exact
state() { tl_instance_state "$idir"; grep -H . "$idir/options/overwrite" "$idir/buffer_size_kb"; }
state > before.txt

# ------------------------------------------------ marker, SIGUSR1, --dump
mkdir m
fl_start m -B "$inst" -e sched:sched_switch -b 2048 --marker GLITCH --hold-off-ms 0 -o m/
[ "$(cat "$idir/options/overwrite")" = 1 ] || tl_fail "overwrite mode is not on while recording"
kb=$(cat "$idir/buffer_size_kb"); [ "$kb" -ge 2048 ] && [ "$kb" -lt 2100 ] || tl_fail "-b 2048 gave buffer_size_kb $(cat "$idir/buffer_size_kb")"
[ "$(cat "$idir/events/sched/sched_switch/enable")" = 1 ] || tl_fail "-e sched:sched_switch is not on"
tc_markers "$inst" 0 0 1000
taskset -c 0 sh -c "echo 'GLITCH here' > $idir/trace_marker"
fl_wait_dumps m 1
grep -q "^marker 'GLITCH': m/trace-1.dat: cpu0 [0-9]* events" m.out || { cat m.out; tl_fail "no report line for the marker trigger"; }
tc_report m/trace-1.dat m1.txt
fl_in_order m1.txt 0 1000
trig=$(grep -n 'tracing_mark_write: GLITCH here' m1.txt | cut -d: -f1)
[ -n "$trig" ] || tl_fail "the trigger marker is not in the dump"
[ "$(head -n "$trig" m1.txt | grep -c 'seq=')" -eq 1000 ] || tl_fail "not every marker precedes the trigger"
tl_log "marker trigger: markers 0..999 once and in order, then the trigger"
if [ -x "$TC_KSHARK" ]; then
	"$TC_KSHARK" m/trace-1.dat > ks.txt || tl_fail "libkshark could not load m/trace-1.dat"
	set -- $(cat ks.txt)
	# libkshark makes one entry for each drop mark
	lines=$(grep -vc '^cpus=' m1.txt)
	drops=$(grep -c 'EVENTS DROPPED' m1.txt)
	[ "$4" -eq "$lines" ] && [ "$6" -eq 1000 ] && [ "$8" -eq "$drops" ] ||
		tl_fail "libkshark: $(cat ks.txt), the report has $lines lines, $drops drop marks and 1000 markers"
fi

kill -USR1 $FL_PID
fl_wait_dumps m 2
"$TM" flight --dump $FL_PID || tl_fail "tracemap flight --dump $FL_PID failed"
fl_wait_dumps m 3
grep -q '^SIGUSR1: m/trace-3.dat' m.out || { cat m.out; tl_fail "the third dump is not m/trace-3.dat"; }
for f in 2 3; do
	tc_report m/trace-$f.dat m$f.txt
	tc_expect_seqs m$f.txt 0 1000
done
fl_stop $FL_PID
state > after.txt
diff -u before.txt after.txt || tl_fail "the instance was not put back after Ctrl-C"
[ "$(ls m | wc -l)" -eq 3 ] || tl_fail "expected 3 files in m/: $(ls m)"
tl_log "SIGUSR1 and --dump: two more files; Ctrl-C restored the instance"

# --------------------------------- event filter, --after-ms, private instance
fl_start e -T syscalls:sys_enter_close -F 'fd == 7777777' --after-ms 1500 --hold-off-ms 0 \
	-o "$TL_TMP/e.dat"
pinst=$(fl_private e)
case $pinst in tracemap-flight-$FL_PID-[0-9]*) ;; *) tl_fail "private instance '$pinst'";; esac
tl_track_instance "$pinst"
[ -d "$TL_TRACEFS/instances/$pinst" ] || tl_fail "no private instance $pinst"
tc_markers "$pinst" 0 0 500
taskset -c 0 /usr/bin/python3 -c 'import os
try:
    os.close(7777777)
except OSError:
    pass'
tc_markers "$pinst" 0 500 100
fl_wait_dumps e 1
grep -q "^event syscalls:sys_enter_close: $TL_TMP/e-1.dat: " e.out || { cat e.out; tl_fail "no report line for the event trigger"; }
tc_report e-1.dat e1.txt
fl_in_order e1.txt 0 600
trig=$(grep -n 'sys_enter_close.*fd: 0x0076adf1' e1.txt | cut -d: -f1)
[ -n "$trig" ] || tl_fail "the trigger event (close of fd 7777777) is not in the dump"
before=$(head -n "$trig" e1.txt | grep -c 'seq=')
[ "$before" -eq 500 ] || tl_fail "$before markers before the trigger event, not the 500 written before it"
tl_log "event trigger: 500 markers, the trigger, and the 100 markers of --after-ms"
fl_stop $FL_PID
[ ! -d "$TL_TRACEFS/instances/$pinst" ] || tl_fail "the private instance $pinst is still there"

# ----------------------------------------------------------- hold-off
fl_start h -B "$inst" --hold-off-ms 5000 -o h.dat
kill -USR1 $FL_PID
fl_wait_dumps h 1
kill -USR1 $FL_PID
"$TM" flight --dump $FL_PID
fl_stop $FL_PID
[ "$(grep -c '\.dat: cpu' h.out)" -eq 1 ] || { cat h.out; tl_fail "the hold-off did not hold off"; }
grep -Eq '[0-9]+ triggers fell in the hold-off' h.err || { cat h.err; tl_fail "no hold-off count at exit"; }
tl_log "hold-off: $(grep -o '[0-9]* triggers fell' h.err)"

# ------------------------------------------------------- the command
timeout 60 "$TM" flight -B "$inst" -o c.dat -- sh -c "echo seq=00000042 > $idir/trace_marker; exit 3" \
	> c.out 2> c.err || { cat c.err; tl_fail "flight with a failing command exited $?"; }
grep -q '^command exited 3: c-1.dat: ' c.out || { cat c.out c.err; tl_fail "no dump when the command exited 3"; }
tc_report c-1.dat c1.txt
grep -q 'seq=00000042' c1.txt || tl_fail "the command's marker is not in its dump"
timeout 60 "$TM" flight -B "$inst" -o ok.dat -- true > ok.out 2> ok.err ||
	tl_fail "flight with a succeeding command exited $?"
[ ! -e ok-1.dat ] && ! grep -q '\.dat' ok.out || tl_fail "a succeeding command made a dump"
tl_log "command: exit 3 dumped, exit 0 did not"

# -o DIR/ creates the directory before recording, a missing one elsewhere is refused at once
timeout 60 "$TM" flight -B "$inst" -o newdir/ -- sh -c 'exit 1' > nd.out 2> nd.err ||
	{ cat nd.err; tl_fail "flight -o newdir/ exited $?"; }
grep -q 'created newdir for the dumps' nd.err && [ -f newdir/trace-1.dat ] ||
	{ cat nd.out nd.err; tl_fail "-o newdir/ did not create the directory and dump into it"; }
timeout 20 "$TM" flight -B "$inst" -o "$TL_TMP/no/such/dir/x.dat" > nd2.out 2> nd2.err &&
	tl_fail "flight with an output directory that does not exist started"
grep -q "cannot write dumps into $TL_TMP/no/such/dir: No such file" nd2.err ||
	{ cat nd2.err; tl_fail "no message for a missing output directory"; }
# a -B that does not exist is refused before anything is made
timeout 20 "$TM" flight -B "no-such-$inst" -o baddir/ > nd3.out 2> nd3.err &&
	tl_fail "flight with an instance that does not exist started"
grep -q "no instance 'no-such-$inst'" nd3.err || { cat nd3.err; tl_fail "no message for an unknown instance"; }
[ ! -e baddir ] || tl_fail "flight refused the instance but left the dump directory baddir behind"

# --------------------------------------------- idle: no wakeups at all
fl_start i -B "$inst" -o i.dat --max-dumps 1
ctx() { awk '/^voluntary_ctxt_switches/ { print $2 }' /proc/$FL_PID/status; }
c0=$(ctx)
sleep 2
c1=$(ctx)
[ "$c0" = "$c1" ] || tl_fail "the recorder woke up $((c1 - c0)) times in 2 s with only a signal trigger"
kill -USR1 $FL_PID
fl_wait_dumps i 1
# --max-dumps 1: it ends by itself
tl_wait 10 tc_dead $FL_PID || tl_fail "--max-dumps 1 did not end the recorder after its dump"
wait $FL_PID || tl_fail "the recorder exited $? after --max-dumps"
state > after.txt
diff -u before.txt after.txt || tl_fail "the instance was not put back after --max-dumps"
tl_log "idle with a signal trigger: 0 wakeups in 2 s; --max-dumps 1 ended it"

# ----------------------------------------------------------- errors
state > before.txt
timeout 20 "$TM" flight -B "$inst" -F 'pid == 1' -o x.dat 2> x1.err && tl_fail "-F without -T was accepted"
grep -q 'needs -T' x1.err || { cat x1.err; tl_fail "no message for -F without -T"; }
timeout 20 "$TM" flight -B "$inst" -T sched:no_such_event -o x.dat 2> x2.err && tl_fail "an unknown -T event was accepted"
grep -q '^tracemap: -T sched:no_such_event: no such event' x2.err || { cat x2.err; tl_fail "no message for an unknown -T"; }
timeout 20 "$TM" flight -B "$inst" -T sched:sched_switch -F 'no_such_field == 1' -o x.dat 2> x3.err &&
	tl_fail "a bad -F filter was accepted"
grep -q "^tracemap: -F 'no_such_field == 1': names a field" x3.err || { cat x3.err; tl_fail "no message for a bad -F"; }
"$TM" flight --dump 999999999 2> x4.err && tl_fail "--dump to a process that is no recorder worked"
state > after.txt
diff -u before.txt after.txt || tl_fail "a failed start changed the instance"
exit 0
