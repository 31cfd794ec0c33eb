#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 150
# Signals a tracemap stream gets from others:
# - a SIGCHLD of a child it inherited (`( sleep 1 & exec tracemap stream )`)
#   does not end it: events written after that child ended are printed,
#   and SIGINT then stops it with exit 0; the traced command's own end still
#   ends a stream;
# - SIGRTMIN and SIGRTMAX stop it like SIGINT, with everything put back;
# - after kill -ILL, -SEGV or -SYS (no chance to put anything back) the next
#   stream puts back what the killed one left and says so.
# The state files go to a private TRACEMAP_STATE_DIR.
. "$(dirname "$0")/../lib.sh"
tl_require_root
tl_require_tracemap
cd "$TL_TMP" || exit 1
ulimit -c 0
export TRACEMAP_STATE_DIR=$TL_TMP/state
inst=$(tl_instance sigchld)
idir=$TL_TRACEFS/instances/$inst
echo 37 > "$idir/buffer_percent"
tl_instance_state "$idir" > before.txt
EN=$idir/events/sched/sched_switch/enable

# 1. a child inherited through exec ends: the stream goes on
( sleep 1 & echo $! > child.pid; exec "$TM" stream -B "$inst" -e sched:sched_switch ) \
	> out.txt 2> err.txt &
tm=$!
tl_bg $tm
tl_stream_started "$idir" err.txt
tl_wait 10 tl_gone "$(cat child.pid)" || tl_fail "the inherited sleep did not end"
tl_markers "$inst" 0 0 1
tl_wait 10 grep -q 'seq=0' out.txt ||
	{ cat err.txt; tl_fail "the stream ended with its inherited child (no marker after it)"; }
kill -0 $tm 2> /dev/null || tl_fail "the stream is gone after its inherited child ended"
kill -INT $tm
tl_ended $tm SIGINT
[ $tl_rc -eq 0 ] || { cat err.txt; tl_fail "exit $tl_rc after SIGINT"; }
grep -Eq '^ +all +[0-9]+ ' err.txt || tl_fail "no statistics after SIGINT"
tl_put_back "$idir" before.txt "inherited child"
tl_log "an inherited child's SIGCHLD: the stream went on, SIGINT stopped it"

# the traced command's end still ends the stream, even with an inherited child
( sleep 30 & exec "$TM" stream -B "$inst" -e sched:sched_switch -- sh -c 'exit 0' ) \
	> out.txt 2> err.txt &
tm=$!
tl_bg $tm
tl_ended $tm "the traced command's end"
[ $tl_rc -eq 0 ] || { cat err.txt; tl_fail "exit $tl_rc after the command ended"; }
tl_put_back "$idir" before.txt "command"

# 2. real-time signals stop it like SIGINT
for sig in RTMIN RTMAX; do
	tl_stream_killed "$inst" $sig
	[ $tl_rc -eq 0 ] || { cat err.txt; tl_fail "SIG$sig: exit $tl_rc"; }
	tl_put_back "$idir" before.txt "SIG$sig"
done
tl_log "SIGRTMIN, SIGRTMAX: stopped, put back"

# 3. signals of a fault (sent by kill): the next stream repairs and says so
for sig in ILL SEGV SYS; do
	tl_stream_killed "$inst" $sig
	[ "$(cat "$EN")" = 1 ] || tl_fail "SIG$sig: nothing left to repair (the test is wrong)"
	killed=$tm
	"$TM" stream -B "$inst" > out.txt 2> err.txt &
	tm=$!
	tl_bg $tm
	# buffer_percent is 50 before and after: wait for what the repair says
	tl_wait 10 grep -q "put back what tracemap pid $killed" err.txt ||
		{ cat err.txt; tl_fail "after SIG$sig the next stream did not say what it repaired"; }
	[ "$(cat "$EN")" = 0 ] || tl_fail "after SIG$sig the next stream left sched_switch enabled"
	kill -INT $tm
	tl_ended $tm SIGINT
	tl_put_back "$idir" before.txt "SIG$sig, then a stream"
done
tl_log "SIGILL, SIGSEGV, SIGSYS: the next stream put back what was left"
