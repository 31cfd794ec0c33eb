#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
# The tracer of a library stream (tracemap_stream_opts.tracer) and the
# crash record: a library consumer asks for the function tracer with
# options/func_stack_trace in an instance the test made.
# - A kernel that refuses the function tracer (EPERM, a locked-down one):
#   the open fails saying so, and leaves nothing: func_stack_trace (set
#   before the tracer) is back, no event is on, no record is left.
# - A kernel that takes it: SIGKILL the consumer, and tracemap reset puts
#   the tracer and func_stack_trace back.
# - Either way: a record of a process that is gone, naming current_tracer
#   and func_stack_trace, is put back by tracemap reset, which says so.
# The top level's options/func_stack_trace is never changed: where the
# instance's flag is not proven its own (tl_stack_own), the consumer asks
# for no func_stack_trace and the record names none (said in the log).
. "$(dirname "$0")/../lib.sh"
tl_require_root
tl_require_tracemap
LC="$PWD/build/tests/tools/lib-consumer"
[ -x "$LC" ] || tl_fail "$LC is missing: run 'make check-build'"
cd "$TL_TMP" || exit 1
export TRACEMAP_STATE_DIR=$TL_TMP/state

inst=$(tl_instance ni)
idir=$TL_TRACEFS/instances/$inst
tl_require_mmap "$inst"
[ -f "$idir/options/func_stack_trace" ] || tl_skip "$inst has no options/func_stack_trace"
# state: what the consumer must leave as it found it
state() {
	tl_instance_state "$idir"
	grep -H . "$idir/current_tracer" "$idir/options/func_stack_trace" \
		"$idir/set_event_pid" "$idir/events/sched/sched_switch/filter"
}
top_stack=$(cat "$TL_TRACEFS/options/func_stack_trace")
if tl_stack_own "$idir"; then
	# its own flag: off, so that turning it on is a change
	echo 0 > "$idir/options/func_stack_trace" || tl_fail "cannot turn func_stack_trace off"
	stack= put_stack="func_stack_trace 0"
else
	tl_log "$TL_STACK_SKIP"
	stack=nostack put_stack=
fi
state > before.txt

"$LC" hold "$inst" function $stack > hold.out 2> hold.err &
lc=$!
tl_bg $lc
opened_or_ended() { grep -q '^instance ' hold.out || tl_gone $lc; }
tl_wait 30 opened_or_ended ||
	tl_fail "the consumer neither opened its stream nor ended"
if grep -q '^instance ' hold.out; then
	# the kernel takes the function tracer: kill the consumer while it is set
	tl_file_is "$idir/current_tracer" function || tl_fail "the stream did not set the tracer"
	[ -n "$stack" ] || tl_file_is "$idir/options/func_stack_trace" 1 ||
		tl_fail "the stream did not set func_stack_trace"
	kill -KILL $lc
	wait $lc 2> /dev/null
	"$TM" reset > reset.out 2> reset.err || { cat reset.err; tl_fail "reset failed"; }
	grep "put back what lib-consumer pid $lc (no longer running) left in instance $inst:" reset.err |
		grep "current_tracer nop" | grep -q "$put_stack" ||
		{ cat reset.err; tl_fail "reset did not say it put the tracer back"; }
	tl_log "function tracer taken: reset put it back after SIGKILL"
else
	wait $lc && tl_fail "the consumer ended with 0 without a stream"
	grep -q "Operation not permitted" hold.err ||
		{ cat hold.err; tl_fail "the refusal was not EPERM (the test expects this kernel's)"; }
	grep -q "function tracers" hold.err || { cat hold.err; tl_fail "the refusal does not say why"; }
	[ -z "$(ls "$TRACEMAP_STATE_DIR" 2> /dev/null)" ] ||
		{ ls -l "$TRACEMAP_STATE_DIR"; tl_fail "a record is left after the refusal"; }
	tl_log "function tracer refused (EPERM): $(grep -o 'cannot[^:]*' hold.err | head -1)"
fi
state > after.txt
diff -u before.txt after.txt || tl_fail "$inst is not as it was"

# a record of a process that is gone, as tracer.c writes it
if [ -z "$stack" ]; then
	echo 1 > "$idir/options/func_stack_trace" || tl_fail "cannot set func_stack_trace"
	rec_stack="func_stack_trace=0
"
else
	rec_stack=
fi
sh -c 'echo $$ > dead.pid'
dead=$(cat dead.pid)
tl_gone "$dead" || tl_fail "pid $dead still runs"
mkdir -p "$TRACEMAP_STATE_DIR"
old=$(cat "$idir/current_tracer")
printf 'pid=%s\nstart=1\ncomm=lib-consumer\ntracefs=%s\ninstance=%s\n%scurrent_tracer=%s\n' \
	"$dead" "$TL_TRACEFS" "$inst" "$rec_stack" "$old" > "$TRACEMAP_STATE_DIR/$dead-0.state"
"$TM" reset > reset.out 2> reset.err || { cat reset.err; tl_fail "reset of the record failed"; }
grep "put back what lib-consumer pid $dead (no longer running) left in instance $inst:" reset.err |
	grep "current_tracer $old" | grep -q "$put_stack" ||
	{ cat reset.err; tl_fail "reset did not say it put back the tracer and func_stack_trace"; }
[ -n "$stack" ] || tl_file_is "$idir/options/func_stack_trace" 0 ||
	tl_fail "reset left func_stack_trace on"
[ -z "$(ls "$TRACEMAP_STATE_DIR")" ] || tl_fail "the record is left after reset"
state > after.txt
diff -u before.txt after.txt || tl_fail "$inst is not as it was after reset"
tl_file_is "$TL_TRACEFS/options/func_stack_trace" "$top_stack" ||
	tl_fail "the top level's func_stack_trace changed"
tl_log "a record with current_tracer${put_stack:+ and func_stack_trace}: put back and said"
echo "the tracer in the crash record: all checks passed"
