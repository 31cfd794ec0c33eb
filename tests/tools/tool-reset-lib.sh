#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
# tracemap reset after a library consumer that is not tracemap (a small C
# program linked to libtracemap.so) was killed with SIGKILL: it removes the
# private instance the consumer's stream made (opened with NULL), and in a
# named instance turns sched_switch off and puts back its filter,
# set_event_pid and buffer_percent, saying what it did for each; tracemap
# stat says what is left before. Closed normally, the private instance is
# gone. A program linked against TRACEMAP_0.1 still gets the top level for
# NULL and "" (read only here: the top level is shared).
. "$(dirname "$0")/../lib.sh"
tl_require_root
tl_require_tracemap
LC="$PWD/build/tests/tools/lib-consumer"
[ -x "$LC" ] || tl_fail "$LC is missing: run 'make check-build'"
cd "$TL_TMP" || exit 1
export TRACEMAP_STATE_DIR=$TL_TMP/state

inst=$(tl_instance nr)
idir=$TL_TRACEFS/instances/$inst
tl_require_mmap "$inst"
tl_instance_state "$idir" > before.txt
grep -H . "$idir/set_event_pid" "$idir/events/sched/sched_switch/filter" >> before.txt

# start OUT [INSTANCE]: a consumer whose stream is open once OUT names its instance
start() {
	"$LC" hold $2 > "$1" 2> "$1.err" &
	lc=$!
	tl_bg $lc
	tl_wait 10 grep -q '^instance ' "$1" || { cat "$1.err"; tl_fail "the consumer did not open its stream"; }
}

# closed: the private instance goes, and nothing is left to put back
start priv.out
priv=$(sed -n 's/^instance \([^ ]*\) created 1$/\1/p' priv.out)
[ -n "$priv" ] || tl_fail "no private instance made: $(cat priv.out)"
tl_track_instance "$priv"
[ -d "$TL_TRACEFS/instances/$priv" ] || tl_fail "$priv does not exist"
kill -TERM $lc
wait $lc
[ -d "$TL_TRACEFS/instances/$priv" ] && tl_fail "the private instance $priv is left after close"
[ -z "$(ls "$TRACEMAP_STATE_DIR" 2> /dev/null)" ] || tl_fail "a record is left after close"
tl_log "NULL: private instance $priv, gone at close"

# SIGKILL: two consumers, a private instance and a named one
start priv.out
killed1=$lc
priv=$(sed -n 's/^instance \([^ ]*\) created 1$/\1/p' priv.out)
tl_track_instance "$priv"
start named.out "$inst"
killed2=$lc
grep -q "^instance $inst created 0" named.out || tl_fail "the named stream: $(cat named.out)"
kill -KILL $killed1 $killed2
wait $killed1 $killed2 2> /dev/null
[ -d "$TL_TRACEFS/instances/$priv" ] || tl_fail "SIGKILL: $priv is gone (the test is wrong)"
tl_file_is "$idir/events/sched/sched_switch/enable" 1 && tl_file_is "$idir/buffer_percent" 25 ||
	tl_fail "SIGKILL: nothing left to repair in $inst (the test is wrong)"

"$TM" stat -B "$inst" > stat.out 2> stat.err || { cat stat.err; tl_fail "stat failed"; }
grep -q "lib-consumer pid $killed2 ended without putting back $inst with 1 event(s) enabled.*run 'tracemap reset'" stat.err ||
	{ cat stat.err; tl_fail "stat did not say what the killed consumer left in $inst"; }
grep -q "lib-consumer pid $killed1 ended without putting back the instance $priv it created" stat.err ||
	{ cat stat.err; tl_fail "stat did not say what the killed consumer left in $priv"; }
tl_file_is "$idir/events/sched/sched_switch/enable" 1 || tl_fail "stat changed $inst"

"$TM" reset > reset.out 2> reset.err || { cat reset.err; tl_fail "reset failed"; }
cat reset.err
grep -q "put back what lib-consumer pid $killed1 (no longer running) left in instance $priv: removed the private instance it created" reset.err ||
	tl_fail "reset did not say it removed $priv"
grep "put back what lib-consumer pid $killed2 (no longer running) left in instance $inst:" reset.err |
	grep "sched:sched_switch off" | grep "the filter of sched:sched_switch" |
	grep "set_event_pid" | grep -q "buffer_percent 50" ||
	tl_fail "reset did not say what it put back in $inst"
[ -d "$TL_TRACEFS/instances/$priv" ] && tl_fail "reset left $priv"
tl_instance_state "$idir" > after.txt
grep -H . "$idir/set_event_pid" "$idir/events/sched/sched_switch/filter" >> after.txt
diff -u before.txt after.txt || tl_fail "reset did not put $inst back"
"$TM" reset > reset.out 2> reset.err || tl_fail "a second reset failed"
grep -q "nothing to put back" reset.out || { cat reset.err; tl_fail "a second reset found something"; }
tl_log "SIGKILL: stat said so, reset removed $priv and put $inst back"

# a binary of 0.1.0 keeps NULL and "" as the top level; one built now is refused NULL
"$LC" old-top > old.out 2> old.err || { cat old.err; tl_fail "old-top failed"; }
grep -qx "old NULL $TL_TRACEFS" old.out && grep -qx "old empty $TL_TRACEFS" old.out ||
	{ cat old.out; tl_fail "TRACEMAP_0.1 tracemap_instance_dir does not give the top level"; }
grep -qx "new NULL -22" old.out && grep -q "TRACEMAP_TOP_LEVEL" old.err ||
	{ cat old.out old.err; tl_fail "TRACEMAP_0.4 tracemap_instance_dir took NULL"; }
tl_log "TRACEMAP_0.1: NULL and \"\" are the top level; TRACEMAP_0.4: NULL refused"
echo "tracemap reset after a library consumer: all checks passed"
