#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
# tracemap snapshot writes the formats a reader needs and no others: those
# of the events in the pages (also of an event disabled since it was
# recorded), those of the enabled events (also of one not in the pages),
# and the ftrace ones (the markers' print); every event of the file decodes.
. "$(dirname "$0")/../lib.sh"
tl_require_tracemap
command -v trace-cmd > /dev/null || tl_skip "trace-cmd is needed to read the file (make deps)"

inst=$(tl_instance fmts 256)
tl_require_mmap "$inst"
idir=$TL_TRACEFS/instances/$inst
cd "$TL_TMP" || exit 1

# only this shell and its children: the exec events are exactly ours
echo 1 > "$idir/options/event-fork"
echo $$ > "$idir/set_event_pid"
echo 1 > "$idir/events/sched/sched_process_exec/enable"
for i in 1 2 3; do /bin/true; done
echo 0 > "$idir/events/sched/sched_process_exec/enable"
echo 1 > "$idir/events/sched/sched_kthread_stop/enable"
tl_markers "$inst" 0 0 5
echo 0 > "$idir/tracing_on"

"$TM" snapshot -B "$inst" -o f.dat > f.log 2>&1 || { cat f.log; tl_fail "snapshot failed"; }
trace-cmd dump --events -i f.dat 2>/dev/null | sed -n 's/^name: //p' | sort > names
printf 'sched_kthread_stop\nsched_process_exec\n' > want
cmp -s names want || { diff want names; tl_fail "the file's event formats are not those of the pages and the enabled events"; }
n=$(trace-cmd dump --ftrace-events -i f.dat 2>/dev/null | grep -c '^name: ')
want_n=$(ls -d "$TL_TRACEFS"/events/ftrace/*/format | wc -l)
[ "$n" -eq "$want_n" ] || tl_fail "$n ftrace formats in the file, $want_n in tracefs"

trace-cmd report f.dat > r.txt 2>&1 || { tail r.txt; tl_fail "trace-cmd report failed"; }
n=$(grep -c 'sched_process_exec: *filename=/bin/true ' r.txt)
[ "$n" -eq 3 ] || { grep sched_process_exec r.txt; tl_fail "$n exec events of /bin/true decoded, 3 written"; }
[ "$(tl_seqs r.txt | tr '\n' ' ')" = "0 1 2 3 4 " ] || tl_fail "markers: $(tl_seqs r.txt | tr '\n' ' ')"
! grep -Eiq 'unknown|failed to parse|\[FAILED' r.txt || { grep -Ei 'unknown|failed' r.txt | head; tl_fail "events that do not decode"; }
echo "PASS: formats of 2 events and $want_n ftrace ones; 3 exec events and 5 markers decode"
