#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 600
# What a refresh keeps beyond ks-follow.sh's plots, marker A and table
# (issue 22), in the real KernelShark under Xvfb, following every 500 ms:
# 1. marker B (its line drawn, the times of both markers as they were);
# 2. KernelShark's TEP advanced filter: "common_pid == the task that wrote
#    3 of the markers" leaves exactly 3 table lines, refresh after refresh,
#    while the other task's markers keep coming;
# 2b. KernelShark's task filter (Filter -> Show tasks: only that task)
#    leaves its 3 markers, over 2 refreshes with new events;
# 3. lost events, as KernelShark shows them for a recorded file: a 16 KiB
#    buffer flooded on every CPU, fully zoomed out, shows the
#    missed_events plugin's blue mark in each CPU plot (the losses
#    happened right before its first event), over refreshes too;
#    the rows loaded hold one lost-events row per CPU whose counts add up
#    to the kernel's overrun, and none of unknown size (missed_events=-1).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tc-common.shlib"
. "$(dirname "$0")/ks-xvfb.shlib"
tc_require
ks_require

inst=$(tl_instance ks-keep 4096)
idir="$TL_TRACEFS/instances/$inst"
ks_xvfb
cd "$TL_TMP" || exit 1
# two tasks: one writes 3 markers and stays, the other one every 20 ms
sh -c 'for i in 1 2 3; do echo "special $i" > "$1/trace_marker"; done; exec sleep 600' sh "$idir" &
sp=$!
tl_bg $sp
( i=0; while :; do echo "tick $i" > "$idir/trace_marker"; i=$((i + 1)); sleep 0.02; done ) &
wl=$!
tl_bg $wl
specials() { [ "$(grep -c 'special [123]' "$idir/trace")" = 3 ]; }
tl_wait 20 specials || tl_fail "the 3 special markers are not in $inst"
printf 'instance = %s\n' "$inst" > live.tracemap

# ks_start DESCRIPTOR LOG: KernelShark following every 500 ms; $ks, $win
ks_start() {
	TRACEMAP_FOLLOW_MS=500 TRACEMAP_KS_STATS=1 kernelshark -geometry 1000x900+0+0 \
		-p "$KS_PLUGIN" "$TL_TMP/$1" > "$2" 2>&1 &
	ks=$!
	tl_bg $ks
	tl_wait 90 ks_status ' - tracemap: [0-9]* events.*, refresh [0-9]* at .*, following every 500 ms' ||
		{ ks_titles >&2; tail -5 "$2" >&2; tl_fail "$1: no refresh within 90 s"; }
	win=$(ks_window '^Kernel Shark')
}

# ks_quit: File -> Quit (the menu's last entry), exit 0; not Ctrl+Q: the
# closed dialog can leave the keyboard focus nowhere (no window manager),
# while an open menu takes the keys
ks_quit() {
	xdotool mousemove 20 10 click 1
	tl_wait 10 ks_popup || tl_fail "the File menu did not open"
	xdotool key Up Return
	tl_wait 30 tc_dead $ks || tl_fail "KernelShark did not exit within 30 s of File -> Quit"
	wait $ks || tl_fail "KernelShark exited $? after File -> Quit, not 0"
}

# next_refresh: wait until a refresh newer than the one shown now is shown
next_refresh() {
	_r=$(ks_refreshes)
	tl_wait 30 ks_refreshed_to $((${_r:-0} + 1)) || { ks_titles >&2; tl_fail "no refresh after ${_r:-0}"; }
}

ks_start live.tracemap ks.log
drawn() { ks_shot "$win" open; [ "$(ks_val open table_lines)" -ge 10 ]; }
tl_wait 30 drawn || { cat open.txt >&2; tl_fail "the view has no table"; }

# 1. marker A on one row, marker B (its button, then a row) on another
xdotool mousemove 500 600 click 1
xdotool mousemove 444 72 click 1
xdotool mousemove 500 660 click 1
marked() { ks_shot "$win" m0; [ "$(ks_val m0 marker_a)" -ge 0 ] && [ "$(ks_val m0 marker_b)" -ge 0 ]; }
tl_wait 20 marked || { cat m0.txt >&2; tl_fail "markers A and B are not both drawn after clicks on two rows"; }
for n in 1 2 3; do
	next_refresh
	ks_shot "$win" b$n
	[ "$(ks_val b$n marker_b)" -ge 0 ] || { cat b$n.txt >&2; tl_fail "refresh $(ks_refreshes): marker B was lost"; }
	[ "$(ks_val b$n marks_hash)" = "$(ks_val m0 marks_hash)" ] ||
		tl_fail "refresh $(ks_refreshes): the times of markers A and B changed"
done
tl_log "markers A and B kept over 3 refreshes (to refresh $(ks_refreshes))"

# 2. the TEP advanced filter: only the special task's 3 markers
ks_adv_filter "ftrace/print:common_pid == $sp"
three() { ks_shot "$win" f0; [ "$(ks_val f0 table_lines)" = 3 ]; }
tl_wait 30 three || { cat f0.txt >&2; tl_fail "the TEP filter does not leave the 3 special rows"; }
events() { ks_title | sed -n 's/.* - tracemap: \([0-9]*\) events.*/\1/p'; }
# three_kept WHAT N SHOT: N refreshes with new events keep the table at 3 lines
three_kept() {
	_e0=$(events)
	_n=1
	while [ $_n -le "$2" ]; do
		next_refresh
		ks_shot "$win" "$3$_n"
		[ "$(ks_val "$3$_n" table_lines)" = 3 ] || { cat "$3$_n.txt" >&2
			tl_fail "refresh $(ks_refreshes): the $1 was lost ($(ks_val "$3$_n" table_lines) table lines, not 3)"; }
		_n=$((_n + 1))
	done
	_e1=$(events)
	[ "$_e1" -gt "$_e0" ] || tl_fail "no new events over $2 refreshes ($_e0, then $_e1): the $1 was not tested"
	tl_log "$1 kept over $2 refreshes (to refresh $(ks_refreshes), $_e0 -> $_e1 events): 3 table lines"
}
three_kept "TEP filter" 3 f

# 2b. the task filter: Filter -> Clear all filters (the last entry), then
# Filter -> Show tasks (4th from the end) with only the special task shown
filter_menu() {
	xdotool mousemove 60 10 click 1
	tl_wait 10 ks_popup || tl_fail "the Filter menu did not open"
	xdotool key "$@" Return
}
filter_menu Up
cleared() { ks_shot "$win" c0; [ "$(ks_val c0 table_lines)" -gt 3 ]; }
tl_wait 30 cleared || { cat c0.txt >&2; tl_fail "Clear all filters left $(ks_val c0 table_lines) table lines"; }
filter_menu Up Up Up Up
tl_wait 20 ks_dialog_geometry > /dev/null || tl_fail "no Show tasks dialog within 20 s"
# shellcheck disable=SC2046
set -- $(ks_dialog_geometry)
# its rows are the tasks by pid, 29 pixels apart: the special task's first
# when its pid is the lower one; "all" off, that row on, Apply
row=0
[ "$sp" -lt "$wl" ] || row=1
xdotool mousemove $(($1 + 76)) $(($2 + 55)) click 1
xdotool mousemove $(($1 + 41)) $(($2 + 112 + row * 29)) click 1
xdotool mousemove $(($1 + 40)) $(($2 + $4 - 23)) click 1
dialog_gone() { ! ks_dialog_geometry > /dev/null; }
tl_wait 20 dialog_gone || tl_fail "the Show tasks dialog did not close on Apply"
three_t() { ks_shot "$win" t0; [ "$(ks_val t0 table_lines)" = 3 ]; }
tl_wait 30 three_t || { cat t0.txt >&2; tl_fail "showing the special task leaves $(ks_val t0 table_lines) table lines, not its 3"; }
three_kept "task filter" 2 t
ks_quit
kill $wl

# 3. lost events: a 16 KiB buffer flooded on every CPU
dinst=$(tl_instance ks-keep-drop 16)
ddir="$TL_TRACEFS/instances/$dinst"
ncpu=$(ls -d "$ddir"/per_cpu/cpu* | wc -l)
flood() {
	_c=0; _pids=
	while [ $_c -lt $ncpu ]; do
		tc_markers "$dinst" $_c $(($1 + _c * 10000)) 2000 &
		_pids="$_pids $!"
		_c=$((_c + 1))
	done
	for _p in $_pids; do
		wait $_p || tl_fail "flooding $dinst failed"
	done
}
overrun() { cat "$ddir"/per_cpu/cpu*/stats | awk '/^overrun:/ { n += $2 } END { print n }'; }
flood 0
printf 'instance = %s\n' "$dinst" > drop.tracemap
ks_start drop.tracemap drop.log
flood 100000
lost=$(overrun)
[ "$lost" -gt 0 ] || tl_fail "flooding $dinst lost nothing: the buffer is too big for the test"
# the refresh after next copied the buffer after the flood
next_refresh
next_refresh
# "- -": the whole copy in view (KernelShark draws the marks while the view
# holds 10000 events or fewer, the buffer holds far fewer). The view
# opened on the whole copy, which tail mode keeps whole: - - then holds
# the view, or leaves it as it was. A view - - held starts at the copy's
# first event, whose lost-events mark KernelShark then does not draw (the
# CPU flooded first, when the floods did not overlap: under load, and in
# the 6.12 guest); tail mode keeps the whole copy a bin inside the left
# edge, so a held view goes back to it (Tools -> tracemap: tail mode)
xdotool mousemove 190 72 click 1
whole() { ks_status 'view held' || ks_status 'following every 500 ms, tail mode'; }
tl_wait 20 whole || { ks_titles >&2; tl_fail "- - left the view neither held nor in tail mode"; }
if ks_status 'view held'; then
	ks_menu 2
	tl_wait 20 ks_status 'following every 500 ms, tail mode' ||
		{ ks_titles >&2; tl_fail "Tools -> tracemap: tail mode did not resume tail mode"; }
	next_refresh
fi
# a lost-events mark in every CPU plot (marks at distinct rows: one plot
# each; the task's colour, which the band check needs, may be too pale)
marks_at_starts() {
	ks_shot "$win" "$1"
	[ "$(ks_val "$1" lost_marks | tr ',' '\n' | cut -s -d: -f2 | sort -u | grep -c .)" -ge "$ncpu" ]
}
tl_wait 20 marks_at_starts l0 || { cat l0.txt >&2; tl_fail "not every CPU plot shows a lost-events mark"; }
for n in 1 2; do
	next_refresh
	marks_at_starts l$n || { cat l$n.txt >&2; tl_fail "refresh $(ks_refreshes): a lost-events mark is gone"; }
done
# the model: the rows of the last refresh that loaded a copy (TRACEMAP_KS_STATS;
# the idle ones after it keep them), the title's count
last=$(grep "^tracemap: refresh [0-9]*: .* lost-event rows: " drop.log | tail -1)
rows=$(echo "$last" | sed -n 's/.*; \([0-9]*\) lost-event rows: .*/\1/p')
got=$(echo "$last" | sed -n 's/.* lost-event rows: \([0-9]*\) lost, .*/\1/p')
unknown=$(echo "$last" | sed -n 's/.* lost, \([0-9]*\) unknown$/\1/p')
[ "$rows" = "$ncpu" ] && [ "$got" = "$lost" ] && [ "$unknown" = 0 ] ||
	{ echo "$last" >&2; tl_fail "KernelShark's rows hold $rows lost-event rows ($got lost, $unknown unknown), not $ncpu with $lost lost (the overrun)"; }
ks_status "[0-9]* events ($lost lost)," || { ks_titles >&2; tl_fail "the title does not say $lost lost"; }
tl_log "lost events: $lost (overrun) = the title's = the rows' ($rows rows, none of unknown size); a mark at the start of each of $ncpu CPU plots over 3 refreshes"
ks_quit
exit 0
