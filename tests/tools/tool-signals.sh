#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
# Nothing left behind: SIGQUIT, SIGUSR1, SIGUSR2 and SIGALRM stop tracemap
# stream like SIGINT, with the instance put back; under nohup SIGHUP does
# not stop it; after SIGKILL the instance is left changed (events on,
# buffer_percent 0, or the private instance), tracemap stat says to run
# 'tracemap reset', reset puts everything back, and a new stream repairs a
# killed stream's private instance by itself. The state files go to a
# private TRACEMAP_STATE_DIR.
. "$(dirname "$0")/../lib.sh"
tl_require_root
tl_require_tracemap
cd "$TL_TMP" || exit 1
export TRACEMAP_STATE_DIR=$TL_TMP/state
inst=$(tl_instance sig)
idir=$TL_TRACEFS/instances/$inst
echo 37 > "$idir/buffer_percent"
tl_instance_state "$idir" > before.txt
EN=$idir/events/sched/sched_switch/enable

start() {
	"$@" > out.txt 2> err.txt &
	tm=$!
	tl_bg $tm
}

# 1. every catchable stop signal: exit 0, everything put back
for sig in QUIT USR1 USR2 ALRM; do
	tl_stream_killed "$inst" $sig
	[ $tl_rc -eq 0 ] || { cat err.txt; tl_fail "SIG$sig: exit $tl_rc"; }
	grep -Eq '^ +all +[0-9]+ ' err.txt || tl_fail "SIG$sig: no statistics"
	tl_put_back "$idir" before.txt "SIG$sig"
done
tl_log "SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM: stopped, put back"

# 2. nohup: SIGHUP is ignored; SIGINT still stops it
start nohup "$TM" stream -B "$inst" -e sched:sched_switch
tl_stream_started "$idir" err.txt
kill -HUP $tm
tl_markers "$inst" 0 0 1
tl_wait 10 grep -q 'seq=0' out.txt || tl_fail "no marker after the SIGHUP"
# the statistics must not come (bounded wait for what must not happen)
tl_wait 2 grep -Eq '^ +all ' err.txt && tl_fail "SIGHUP stopped the stream under nohup"
kill -0 $tm 2> /dev/null || tl_fail "the stream ended after SIGHUP under nohup"
kill -INT $tm
tl_ended $tm SIGINT
tl_put_back "$idir" before.txt "nohup"
tl_log "nohup: SIGHUP ignored, SIGINT stopped it"

# 3. SIGKILL with -B: left changed, stat says so, reset puts it back
start "$TM" stream -B "$inst" -e sched:sched_switch
tl_stream_started "$idir" err.txt
kill -KILL $tm
tl_ended $tm SIGKILL
[ "$(cat "$EN")" = 1 ] && [ "$(cat "$idir/buffer_percent")" = 50 ] ||
	tl_fail "SIGKILL: the changes are not there to repair (the test is wrong)"
"$TM" stat -B "$inst" > stat.txt 2> err.txt || tl_fail "stat failed"
# sched_switch, and sched_waking: enabled to follow what the output causes
grep -q "tracemap pid $tm ended without putting back $inst with 2 event(s) enabled.*run 'tracemap reset'" err.txt ||
	{ cat err.txt; tl_fail "stat did not say what the killed stream left"; }
[ "$(cat "$EN")" = 1 ] || tl_fail "stat changed the instance"
"$TM" reset > out.txt 2> err.txt || { cat err.txt; tl_fail "reset failed"; }
grep -q "put back what tracemap pid $tm" err.txt || { cat err.txt; tl_fail "reset said nothing"; }
tl_put_back "$idir" before.txt "SIGKILL + reset"
"$TM" reset > out.txt 2> err.txt || tl_fail "a second reset failed"
grep -q "nothing to put back" out.txt || tl_fail "a second reset found something"
tl_log "SIGKILL -B: stat said so, reset put it back"

# 4. SIGKILL without -B: the private instance stays until the next stream
start "$TM" stream -e sched:sched_switch
# the library's name for it, tracemap-<pid>-<n>, said on stderr
tl_wait 10 grep -q "private instance tracemap-$tm-[0-9]* " err.txt ||
	{ cat err.txt; tl_fail "no private instance named"; }
pname=$(sed -n "s/.*private instance \(tracemap-$tm-[0-9]*\) .*/\1/p" err.txt)
priv=$TL_TRACEFS/instances/$pname
tl_track_instance "$pname"
tl_wait 10 tl_file_is "$priv/events/sched/sched_switch/enable" 1 || tl_fail "no private instance"
kill -KILL $tm
tl_ended $tm SIGKILL
[ -d "$priv" ] || tl_fail "SIGKILL: the private instance is gone (the test is wrong)"
killed=$tm
start "$TM" stream -B "$inst"
# buffer_percent is 50 before and after: wait for what the repair says
tl_wait 10 grep -q "put back what tracemap pid $killed .*private instance" err.txt ||
	{ cat err.txt; tl_fail "the next stream did not say what it repaired"; }
[ -d "$priv" ] && tl_fail "the next stream did not remove $pname"
kill -INT $tm
tl_ended $tm SIGINT
tl_put_back "$idir" before.txt "SIGKILL, private"
echo "signals and recovery: all checks passed"
