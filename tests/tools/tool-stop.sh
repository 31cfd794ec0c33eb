#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
# Ctrl-C (SIGINT) and SIGTERM stop tracemap stream within a second and leave
# the instance as it was: every event's enable state and buffer_percent. The
# statistics go to stderr. Without -B the private instance tracemap-<pid> is
# there while it runs and gone afterwards. --raw prints one line per event.
. "$(dirname "$0")/../lib.sh"
tl_require_root
tl_require_tracemap
cd "$TL_TMP" || exit 1

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# stop_run SIGNAL OPTIONS...: stream, make events, stop, check.
stop_run() {
	sig=$1
	shift
	: > "$idir/trace"	# what a --non-consuming run left in the buffer
	"$TM" stream -B "$inst" "$@" > out.txt 2> err.txt &
	tm=$!
	tl_bg $tm
	tl_wait 10 tl_file_is "$idir/events/sched/sched_switch/enable" 1 ||
		{ cat err.txt; tl_fail "the events were not enabled"; }
	case " $* " in
	*" --non-consuming "*) want=37 ;;	# follow mode leaves it alone
	*" --watermark 50 "*) want=50 ;;
	*) want=50 ;;	# output to a file: read at its pace
	esac
	[ "$(cat "$idir/buffer_percent")" = $want ] ||
		tl_fail "buffer_percent $(cat "$idir/buffer_percent") while streaming $*, not $want"
	tl_markers "$inst" 0 0 200
	tl_markers "$inst" 1 200 200
	# the last marker, unless a busy machine made the kernel overwrite it
	tl_wait 10 grep -q 'seq=399' out.txt || tl_log "seq=399 did not arrive"
	t0=$(now_ms)
	kill "-$sig" $tm
	wait $tm
	rc=$?
	ms=$(($(now_ms) - t0))
	[ $rc -eq 0 ] || { cat err.txt; tl_fail "tracemap stream $* exited $rc after SIG$sig"; }
	tl_log "SIG$sig $*: stopped in $ms ms"
	[ $ms -lt $STOP_MS ] || tl_fail "stopping took $ms ms (bound $STOP_MS ms)"
	tl_instance_state "$idir" > after.txt
	diff -u before.txt after.txt || tl_fail "SIG$sig $* left the instance changed"
	grep -Eq '^ +all +[0-9]+ ' err.txt || { cat err.txt; tl_fail "no statistics on stderr"; }
	grep -Eq "^ +1 +$backend +[0-9]+ " err.txt || tl_fail "no statistics of cpu1 ($backend)"
	# each marker once; one that is missing must have been reported lost (the
	# sched events of a busy machine can overrun a reader that prints text)
	got=$(tl_seqs out.txt | wc -l)
	[ "$(tl_seqs out.txt | sort -u | wc -l)" -eq "$got" ] || tl_fail "duplicate markers"
	if [ "$got" -ne 400 ]; then
		lost=$(awk '$1 == "all" { print $4 }' err.txt)
		gaps=$(awk '$1 == "all" { print $5 }' err.txt)
		cat err.txt
		[ "$got" -lt 400 ] && { [ "${lost:-0}" -ge $((400 - got)) ] || [ "${gaps:-0}" -gt 0 ]; } ||
			tl_fail "$got markers, not 400, and only ${lost:-0} events reported lost"
		tl_log "$((400 - got)) markers lost under load, reported: $lost lost, $gaps gaps"
	fi
}

# a stop takes under a second, times the runner's scale for a slower
# machine (QEMU's TCG in make check-kernels, a loaded one)
STOP_MS=$((1000 * ${TEST_TIMEOUT_SCALE:-1}))
inst=$(tl_instance st 1024)
idir=$TL_TRACEFS/instances/$inst
# a state to keep: one event of the system enabled before, an odd watermark
echo 37 > "$idir/buffer_percent"
echo 1 > "$idir/events/sched/sched_wakeup/enable"
tl_instance_state "$idir" > before.txt
# without the mapping (before Linux 6.10) the consuming stream reads with
# read(), and the non-consuming one is refused (tool-nomap.sh)
backend=mmap
tl_can_map "$inst" || backend=read

stop_run INT -e sched
stop_run TERM -e sched:sched_switch -e syscalls:sys_enter_umask
stop_run INT -e sched --unordered
[ $backend = read ] ||
	stop_run INT -e sched_switch --non-consuming --latency-ms 20
stop_run TERM -e sched --busy-poll
stop_run INT -e sched --watermark 50 --latency-ms 30

# -M 2: only CPU 1 is read
: > "$idir/trace"
"$TM" stream -B "$inst" -M 2 > out.txt 2> err.txt &
tm=$!
tl_bg $tm
tl_wait 10 tl_file_is "$idir/buffer_percent" 50 || tl_fail "-M 2: the stream did not start"
tl_markers "$inst" 0 0 30
tl_markers "$inst" 1 30 20
tl_wait 10 grep -q 'seq=49' out.txt || tl_fail "-M 2: cpu1's markers did not arrive"
kill -INT $tm
wait $tm || tl_fail "-M 2: exited $?"
[ "$(tl_seqs out.txt | tr '\n' ' ')" = "$(seq 30 49 | tr '\n' ' ')" ] ||
	tl_fail "-M 2: markers $(tl_seqs out.txt | tr '\n' ' ')"
grep -Eq "^ +0 +$backend" err.txt && tl_fail "-M 2: statistics of cpu0"
grep -Eq "^ +1 +$backend +[0-9]+ " err.txt || { cat err.txt; tl_fail "-M 2: cpu1 statistics"; }
[ "$(grep -c 'seq=' "$idir/per_cpu/cpu0/trace")" -eq 30 ] || tl_fail "-M 2 consumed cpu0"
: > "$idir/trace"
tl_instance_state "$idir" > after.txt
diff -u before.txt after.txt || tl_fail "-M 2 left the instance changed"

# under load: a busy writer on both CPUs while streaming sched events
"$TM" stream -B "$inst" -e sched > /dev/null 2> err.txt &
tm=$!
tl_bg $tm
tl_wait 10 tl_file_is "$idir/events/sched/sched_switch/enable" 1 ||
	tl_fail "the events were not enabled"
for c in 0 1; do
	taskset -c $c sh -c 'while :; do echo load; done' > "$idir/trace_marker" &
	tl_bg $!
done
sleep 0.5
t0=$(now_ms)
kill -INT $tm
wait $tm || { cat err.txt; tl_fail "tracemap stream under load exited $?"; }
ms=$(($(now_ms) - t0))
for p in $TL_PIDS; do kill "$p" 2>/dev/null; done
tl_log "SIGINT under load: stopped in $ms ms"
[ $ms -lt $STOP_MS ] || tl_fail "stopping under load took $ms ms (bound $STOP_MS ms)"
tl_instance_state "$idir" > after.txt
diff -u before.txt after.txt || tl_fail "the run under load left the instance changed"

# no -B: a private instance, removed at exit; --raw: "[CPU] TS SIZE" per event
"$TM" stream --raw > raw.txt 2> err.txt &
tm=$!
tl_bg $tm
# the library's name for it, tracemap-<pid>-<n>, said on stderr
tl_wait 10 grep -q "private instance tracemap-$tm-[0-9]* " err.txt ||
	{ cat err.txt; tl_fail "the private instance tracemap-$tm-N is not named on stderr"; }
pname=$(sed -n "s/.*private instance \(tracemap-$tm-[0-9]*\) .*/\1/p" err.txt)
priv=$TL_TRACEFS/instances/$pname
tl_track_instance "$pname"
test -d "$priv" || { cat err.txt; tl_fail "no private instance $pname"; }
[ "$(cat "$priv/buffer_percent")" = 50 ] || tl_fail "private instance: buffer_percent not 50"
taskset -c 0 sh -c 'i=0; while [ $i -lt 50 ]; do echo "seq=$i"; i=$((i + 1)); done' > "$priv/trace_marker"
taskset -c 1 sh -c 'i=50; while [ $i -lt 80 ]; do echo "seq=$i"; i=$((i + 1)); done' > "$priv/trace_marker"
tl_wait 10 sh -c '[ $(wc -l < raw.txt) -ge 80 ]' || tl_fail "$(wc -l < raw.txt) raw lines, not 80"
kill -TERM $tm
wait $tm || { cat err.txt; tl_fail "tracemap stream --raw exited $?"; }
[ ! -d "$priv" ] || tl_fail "the private instance $pname was left behind"
[ "$(wc -l < raw.txt)" -eq 80 ] || tl_fail "$(wc -l < raw.txt) raw lines, not 80"
grep -Evq '^\[00[01]\] [0-9]+ [0-9]+$' raw.txt && tl_fail "raw line format: $(head -1 raw.txt)"
[ "$(grep -c '^\[000\]' raw.txt)" -eq 50 ] || tl_fail "cpu0 raw lines"
# time order across the two CPUs (written one after the other)
awk '{ if ($2 < last) exit 1; last = $2 }' raw.txt || tl_fail "raw lines out of time order"
exit 0
