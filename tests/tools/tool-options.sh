#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 180
# tracemap stream's trace-cmd options and its self-filtering, on the real
# tracefs, with exact event counts: a trailing command ends the stream; the
# events tracemap causes itself are absent by default and present with
# --no-filter, other tasks' all there; -F and -P keep only their tasks; -f
# filters; -B makes a missing instance and removes it; -b and -C hold while
# streaming and are put back.
. "$(dirname "$0")/../lib.sh"
tl_require_root
tl_require_tracemap
cd "$TL_TMP" || exit 1

inst=$(tl_instance op)
idir=$TL_TRACEFS/instances/$inst
echo 7 > "$idir/buffer_size_kb"
tl_instance_state "$idir" > before.txt
before_kb=$(cat "$idir/buffer_size_kb")
before_clock=$(cat "$idir/trace_clock")

# run NAME OPTIONS...: tracemap stream -B inst OPTIONS, bounded, into NAME.out/.err
run() {
	name=$1
	shift
	"$TM" stream -B "$inst" "$@" > "$name.out" 2> "$name.err" &
	TMPID=$!
	tl_bg $TMPID
	wait $TMPID
	rc=$?
	[ $rc -eq 0 ] || { cat "$name.err"; tl_fail "tracemap stream $* exited $rc"; }
	grep -q '^ *all ' "$name.err" || { cat "$name.err"; tl_fail "$name: no statistics"; }
	tl_instance_state "$idir" > after.txt
	diff -u before.txt after.txt || tl_fail "tracemap stream $* changed the instance"
}

# count PATTERN FILE
count() { grep -c -- "$1" "$2"; }

# the command: 12 sleeps, each a new process; it ends the stream. A copy of
# sleep with a name of its own: other tasks of this machine run sleep too.
SLP=$TL_TMP/tmslp$$
cp "$(command -v sleep)" "$SLP" || tl_fail "cannot copy sleep"
SLEEPS="i=0; while [ \$i -lt 12 ]; do $SLP 0.02; i=\$((i + 1)); done"

# --- a trailing command, self-filtering --------------------------------
run self -e sched:sched_switch -e sched:sched_wakeup -e sched:sched_waking \
	-e sched:sched_process_exec sh -c "$SLEEPS"
n=$(count "sched_process_exec: *filename=$SLP " self.out)
[ "$n" -eq 12 ] || tl_fail "12 execs of sleep expected, $n printed"
# the tool's own pid never appears: as the task, or in the fields, but for a
# wake-up written by an interrupt that came while it ran (the system's: its
# own wake-ups of other tasks are left out as caused, libtracemap-stream(3))
own=$(grep -E "tracemap-$TMPID |tracemap:$TMPID |pid=$TMPID " self.out |
	grep -cvE "tracemap-$TMPID +\[[0-9]+\] +[0-9.]+: sched_wak(eup|ing): ")
[ "$own" -eq 0 ] || { grep -E "$TMPID" self.out | head -5; tl_fail "$own own events printed"; }
sw=$(count 'sched_switch:' self.out)
[ "$sw" -gt 0 ] || tl_fail "no sched_switch of other tasks printed"
tl_log "self-filtered: 12 execs, $sw switches of other tasks, none of tracemap's"

run nofilter --no-filter -e sched:sched_switch -e sched:sched_wakeup \
	-e sched:sched_process_exec sh -c "$SLEEPS"
own=$(grep -cE "tracemap-$TMPID |tracemap:$TMPID |pid=$TMPID " nofilter.out)
[ "$own" -gt 0 ] || tl_fail "--no-filter printed no event of tracemap's own"
n=$(count "sched_process_exec: *filename=$SLP " nofilter.out)
[ "$n" -eq 12 ] || tl_fail "--no-filter: 12 execs of sleep expected, $n printed"
tl_log "--no-filter: $own of tracemap's own events printed"

# --- -F: the command and its children only ------------------------------
run only -F -e sched:sched_process_exec -e sched:sched_process_exit sh -c "$SLEEPS"
n=$(count 'sched_process_exec:' only.out)
[ "$n" -eq 13 ] || { cat only.out; tl_fail "-F: sh and 12 sleeps should exec, $n did"; }
n=$(count 'sched_process_exit:' only.out)
[ "$n" -eq 13 ] || { cat only.out; tl_fail "-F: 13 exits expected, $n printed"; }
tl_log "-F: exactly the command's 13 execs and exits"

# --- -f on the -e before it --------------------------------------------
run filt -e sched:sched_process_exec -f "filename ~ \"*/tmslp$$\"" \
	sh -c "$SLEEPS; true; true; /bin/true"
n=$(count 'sched_process_exec:' filt.out)
[ "$n" -eq 12 ] || { cat filt.out; tl_fail "-f: 12 sleep execs expected, $n printed"; }
tl_log "-f: 12 of 15 execs"

# --- -P: only that task -------------------------------------------------
mkfifo go
sh -c 'read x < go; i=0; while [ $i -lt 9 ]; do echo $i > /dev/null; i=$((i + 1)); done' &
target=$!
tl_bg $target
"$TM" stream -B "$inst" -P "$target" -e syscalls:sys_enter_write > pid.out 2> pid.err &
tm=$!
tl_bg $tm
tl_wait 10 tl_file_is "$idir/set_event_pid" "$target" || { cat pid.err; tl_fail "-P: set_event_pid"; }
tl_wait 10 tl_file_is "$idir/events/syscalls/sys_enter_write/enable" 1 || tl_fail "-P: not enabled"
echo go > go
wait $target
tl_wait 10 sh -c "[ \$(grep -c sys_enter_write pid.out) -ge 9 ]"
kill -INT $tm
wait $tm || { cat pid.err; tl_fail "-P: tracemap exited $?"; }
n=$(grep -c 'sys_enter_write:' pid.out)
m=$(grep -cE -- "-$target +\[" pid.out)
[ "$n" -eq 9 ] && [ "$m" -eq 9 ] || { cat pid.out; tl_fail "-P: 9 writes of $target expected: $n, $m"; }
[ -z "$(cat "$idir/set_event_pid")" ] || tl_fail "-P: set_event_pid not put back"
tl_instance_state "$idir" > after.txt
diff -u before.txt after.txt || tl_fail "-P changed the instance"
tl_log "-P: exactly the 9 writes of $target"

# --- -b and -C: while streaming, and put back -----------------------------
run bc -b 2048 -C global -e sched:sched_process_exec \
	sh -c "cat $idir/buffer_size_kb > kb.txt; cat $idir/trace_clock > clock.txt"
# the kernel rounds up to whole sub-buffers of data
kb=$(cat kb.txt)
[ "$kb" -ge 2048 ] && [ "$kb" -lt 2064 ] || tl_fail "-b 2048: buffer_size_kb was $kb"
grep -q '\[global\]' clock.txt || tl_fail "-C global: trace_clock was $(cat clock.txt)"
[ "$(cat "$idir/buffer_size_kb")" = "$before_kb" ] || tl_fail "-b: size not put back"
[ "$(cat "$idir/trace_clock")" = "$before_clock" ] || tl_fail "-C: clock not put back"
tl_log "-b and -C held while streaming, put back after"

# --- -B of a missing instance: made, said, removed ----------------------
new=tmtest-opnew-$$
tl_track_instance "$new"
timeout 60 "$TM" stream -B "$new" -b 512 -F -e sched:sched_process_exec \
	sh -c "cat $TL_TRACEFS/instances/$new/buffer_size_kb > newkb.txt" > new.out 2> new.err ||
	{ cat new.err; tl_fail "-B $new exited $?"; }
grep -q "created instance $new" new.err || { cat new.err; tl_fail "-B: not said it was made"; }
grep -q "removed instance $new" new.err || { cat new.err; tl_fail "-B: not said it was removed"; }
kb=$(cat newkb.txt)
[ "$kb" -ge 512 ] && [ "$kb" -lt 528 ] || tl_fail "-B -b 512: buffer_size_kb was $kb"
[ -d "$TL_TRACEFS/instances/$new" ] && tl_fail "-B: $new is still there"
n=$(count 'sched_process_exec:' new.out)
[ "$n" -eq 2 ] || { cat new.out; tl_fail "-B $new: the execs of sh and cat expected, $n"; }
tl_log "-B $new: made, streamed, removed"
exit 0
