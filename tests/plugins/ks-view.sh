#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 240
# tracemap view under Xvfb: it makes a private instance with the -e events
# and the -b size, KernelShark shows it (CPU plots drawn, table rows, no
# dialog, following from --follow, in tail mode; the check waits for the
# window to be painted); the instance is removed when KernelShark
# is killed and when tracemap view gets SIGTERM; with -B the instance's
# events and buffer size are put back. KS_SCREENSHOT=FILE.png keeps the
# screenshot of the first view. A view opened on one event draws the
# events that follow (the whole copy stays in view in tail mode).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tc-common.shlib"
. "$(dirname "$0")/ks-xvfb.shlib"
tc_require
tl_require_tracemap
ks_require
ks_xvfb
cd "$TL_TMP" || exit 1

# view_start ARGS...: tracemap view in the background; $vpid, $vinst, $vdir
view_start() {
	"$TM" view "$@" > view.log 2>&1 &
	vpid=$!
	tl_bg $vpid
	vinst=
	[ $# -ge 2 ] && [ "$1" = -B ] && vinst=$2
	# the library's name for a private one, tracemap-view-<pid>-<n>, said on stderr
	if [ -z "$vinst" ]; then
		tl_wait 90 grep -q "private instance tracemap-view-$vpid-" view.log ||
			{ cat view.log >&2; tl_fail "tracemap view did not name its private instance"; }
		vinst=$(sed -n 's/.*private instance \(tracemap-view-[0-9]*-[0-9]*\) .*/\1/p' view.log)
	fi
	vdir="$TL_TRACEFS/instances/$vinst"
	tl_wait 90 ks_has_title "^Kernel Shark ($vdir)" ||
		{ ks_titles >&2; cat view.log >&2; tl_fail "no KernelShark window on $vdir within 90 s"; }
	ks_no_dialog
}

# ks_pid: KernelShark's pid, the child of tracemap view
ks_pid() { ps -o pid= --ppid "$vpid" | tr -d ' '; }
gone() { [ ! -d "$1" ]; }

# 1. a private instance with sched events, 512 KiB, following every 500 ms
view_start -e sched:sched_switch -e sched:sched_wakeup -b 512 --follow 500
tl_track_instance "$vinst"
[ -d "$vdir" ] || tl_fail "no private instance $vinst"
[ "$(cat "$vdir/events/sched/sched_switch/enable")" = 1 ] || tl_fail "sched_switch is not enabled in $vinst"
# the kernel rounds up to whole sub-buffers
kb=$(cut -d' ' -f1 "$vdir/buffer_size_kb")
[ "$kb" -ge 512 ] && [ "$kb" -lt 520 ] || tl_fail "buffer_size_kb of $vinst is $kb, not 512"
# both CPUs in turns of 20, so that both plots span the range however
# late a busy machine runs the second writer
i=0
while [ $i -lt 10 ]; do
	tc_markers "$vinst" 0 $((i * 20)) 20
	tc_markers "$vinst" 1 $((200 + i * 20)) 20
	i=$((i + 1))
done
tl_wait 30 ks_has_title "tracemap: [0-9]* events.*, refresh [2-9][0-9]* at .*, following every 500 ms, tail mode" ||
	{ ks_titles >&2; tl_fail "--follow 500 did not refresh twice within 30 s"; }
win=$(ks_window '^Kernel Shark')
# drawn SHOT BANDS KEY MIN: the window shows BANDS plot bands or more and
# MIN or more of KEY (the title changes before KernelShark paints: a
# condition for tl_wait)
drawn() { ks_shot "$win" "$1"; [ "$(ks_val "$1" bands)" -ge "$2" ] && [ "$(ks_val "$1" "$3")" -ge "$4" ]; }
tl_wait 30 drawn v1 2 table_rows 5 || { cat v1.txt >&2; tl_fail "the view of $vinst lacks CPU plots or table rows"; }
tl_log "view of $vinst: $(ks_val v1 bands) plot bands, $(ks_val v1 table_rows) table rows"
[ -n "$KS_SCREENSHOT" ] && ks_png v1 "$KS_SCREENSHOT"

# 2. KernelShark killed: tracemap view removes the instance and says so
kpid=$(ks_pid)
[ -n "$kpid" ] || tl_fail "no KernelShark child of tracemap view"
kill -KILL "$kpid"
tl_wait 20 tc_dead $vpid || tl_fail "tracemap view did not end within 20 s of KernelShark's death"
wait $vpid; st=$?
[ $st -eq 1 ] || tl_fail "tracemap view exited $st after KernelShark was killed, not 1"
grep -q 'KernelShark was killed by signal 9' view.log || { cat view.log >&2; tl_fail "no message about the killed KernelShark"; }
gone "$vdir" || tl_fail "$vinst is left after KernelShark was killed"
tl_log "KernelShark killed: $vinst removed"

# 3. SIGTERM to tracemap view: KernelShark is asked to exit, the instance removed, exit 0
view_start -e sched:sched_switch
tl_track_instance "$vinst"
kill -TERM $vpid
tl_wait 30 tc_dead $vpid || tl_fail "tracemap view did not end within 30 s of SIGTERM"
wait $vpid; st=$?
[ $st -eq 0 ] || { cat view.log >&2; tl_fail "tracemap view exited $st after SIGTERM"; }
gone "$vdir" || tl_fail "$vinst is left after SIGTERM"
[ -z "$(ks_titles | grep '^Kernel Shark')" ] || tl_fail "KernelShark is still shown"
tl_log "SIGTERM: KernelShark closed, $vinst removed"

# 4. -B: the events it enabled and the size it set are put back
inst=$(tl_instance ksv)
idir="$TL_TRACEFS/instances/$inst"
before=$(tl_instance_state "$idir"; cat "$idir/buffer_size_kb")
view_start -B "$inst" -e sched:sched_switch -b 256
[ "$(cat "$idir/events/sched/sched_switch/enable")" = 1 ] || tl_fail "sched_switch is not enabled in $inst"
kill -TERM "$(ks_pid)"
tl_wait 30 tc_dead $vpid || tl_fail "tracemap view did not end within 30 s of KernelShark's exit"
wait $vpid
after=$(tl_instance_state "$idir"; cat "$idir/buffer_size_kb")
[ "$before" = "$after" ] || tl_fail "tracemap view -B $inst did not put the instance back"
tl_log "-B: $inst as it was"

# 5. a view opened on one event (what an idle machine's first copy may
# hold) shows the events that follow in tail mode: the whole copy stays in
# view, not the microsecond KernelShark opened the one event with
inst=$(tl_instance ksv1)
tc_markers "$inst" 0 0 1
view_start -B "$inst" --follow 500
tl_wait 30 ks_has_title "tracemap: 1 events, refresh [0-9]* at" ||
	{ ks_titles >&2; tl_fail "the view of one event did not refresh within 30 s"; }
tc_markers "$inst" 0 1 200
tl_wait 30 ks_has_title "tracemap: 201 events, refresh [0-9]* at .*, tail mode" ||
	{ ks_titles >&2; tl_fail "the view did not show the 200 new markers within 30 s"; }
win=$(ks_window '^Kernel Shark')
tl_wait 30 drawn w1 1 rows_colored 5 ||
	{ cat w1.txt >&2; tl_fail "after one event and 200 more, the graph draws none of them"; }
tl_log "one event, then 200: $(ks_val w1 bands) plot band, $(ks_val w1 rows_colored) coloured rows"
kill -TERM $vpid
tl_wait 30 tc_dead $vpid || tl_fail "tracemap view did not end within 30 s of SIGTERM"
exit 0
