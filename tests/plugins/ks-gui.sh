#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 240
# The real KernelShark with the plugin in a real window under Xvfb, driven
# through its Tools menu: it opens a live instance through a .tracemap
# descriptor; the graph holds drawn bars for both CPUs, the table has rows,
# no dialog is shown. "tracemap: refresh now" reloads it (the title counts
# exactly the 800 markers); after 400 more markers "tracemap: follow"
# refreshes every second and shows 1200, the graph redrawn, and the
# refreshes keep one image in memory, not one each; "tracemap: stop
# following" stops the refreshes at the first try. An invalid
# TRACEMAP_FOLLOW_MS is said once and not followed. KS_SCREENSHOT=FILE.png
# keeps the last screenshot.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tc-common.shlib"
. "$(dirname "$0")/ks-xvfb.shlib"
tc_require
ks_require

inst=$(tl_instance ksg)
# both CPUs in turns of 40, so that both plots span the range however
# late a busy machine runs the second writer
i=0
while [ $i -lt 10 ]; do
	tc_markers "$inst" 0 $((i * 40)) 40
	tc_markers "$inst" 1 $((400 + i * 40)) 40
	i=$((i + 1))
done
ks_xvfb
cd "$TL_TMP" || exit 1
cat > live.tracemap <<EOF
# tracemap live view
instance = $inst
EOF

TRACEMAP_FOLLOW_MS=12x kernelshark -geometry 900x900+0+0 -p "$KS_PLUGIN" "$TL_TMP/live.tracemap" \
	> ks.log 2>&1 &
ks=$!
tl_bg $ks

# title_field 1|2: E or N of the main window's title
# "Kernel Shark (PATH) - tracemap: E events, refresh N at HH:MM:SS.mmm"
title_field() {
	ks_titles | sed -n "s/^Kernel Shark.* - tracemap: \([0-9]*\) events, refresh \([0-9]*\) at.*/\\$1/p" |
		head -1
}
refresh_count() { title_field 2; }
event_count() { title_field 1; }
refreshed_to() { _r=$(refresh_count); [ "${_r:-0}" -ge "$1" ]; }
# loaded: the main window shows a loaded path (not "Kernel Shark" alone, as while loading)
loaded() { ks_has_title "^Kernel Shark ("; }

tl_wait 90 loaded || { ks_titles >&2; cat ks.log >&2; tl_fail "KernelShark did not open the descriptor within 90 s"; }
ks_no_dialog
# the status is in the title from the open on
tl_wait 30 ks_has_title ' - tracemap: 800 events, opened at .*, not following' ||
	{ ks_titles >&2; tl_fail "the title has no status after the open"; }
[ "$(grep -c 'TRACEMAP_FOLLOW_MS=12x is not a period in ms' ks.log)" = 1 ] ||
	{ cat ks.log >&2; tl_fail "TRACEMAP_FOLLOW_MS=12x was not refused once"; }
win=$(ks_window '^Kernel Shark')
[ -n "$win" ] || tl_fail "no KernelShark window"

# the title changes before the graph is drawn: a loaded machine draws late
drawn() {
	ks_shot "$win" s1
	[ "$(ks_val s1 bands)" -ge 2 ] && [ "$(ks_val s1 rows_colored)" -ge 20 ]
}
tl_wait 30 drawn
bands=$(ks_val s1 bands); rows=$(ks_val s1 rows_colored); trows=$(ks_val s1 table_rows)
[ "$bands" -ge 2 ] && [ "$rows" -ge 20 ] ||
	{ cat s1.txt >&2; tl_fail "the graph does not show bars for both CPUs ($bands bands, $rows rows)"; }
[ "$trows" -ge 10 ] || { cat s1.txt >&2; tl_fail "the table shows $trows rows"; }
tl_log "opened: $bands plot bands, $rows coloured rows, $trows table rows"

# Tools -> tracemap: refresh now (the 4th entry from the end: refresh now,
# follow, tail mode, stop following)
ks_menu 4
tl_wait 30 refreshed_to 1 || { ks_titles >&2; tail -5 ks.log >&2; tl_fail "refresh now did not refresh within 30 s"; }
ks_no_dialog
[ "$(event_count)" = 800 ] || { ks_titles >&2; tl_fail "the view holds $(event_count) events, not the 800 markers"; }
tl_log "refresh now: 800 events"

# 400 more markers, then Tools -> tracemap: follow (every 1000 ms)
tc_markers "$inst" 1 800 400
ks_menu 3
tl_wait 30 refreshed_to 3 || { ks_titles >&2; tl_fail "following did not refresh twice within 30 s"; }
ks_titles | grep -q "following every 1000 ms" || { ks_titles >&2; tl_fail "the title does not say it follows"; }
ks_no_dialog
[ "$(event_count)" = 1200 ] ||
	{ ks_titles >&2; tl_fail "after the new markers the view holds $(event_count) events, not 1200"; }
ks_shot "$win" s2
[ "$(ks_val s2 bands)" -ge 2 ] && [ "$(ks_val s2 table_rows)" -ge 10 ] ||
	{ cat s2.txt >&2; tl_fail "the refreshed view lost its CPU plots or table"; }
[ "$(ks_val s1 colored_hash)" != "$(ks_val s2 colored_hash)" ] ||
	tl_fail "the graph was not redrawn with the new markers"
tl_log "follow: 1200 events after refresh $(refresh_count), graph redrawn"
# KernelShark leaves pages of closed images mapped: the refreshes reuse two
# memory files (the shown one and the next), so they do not keep an image
# alive each
images=$(grep 'memfd:tracemap-live.dat' "/proc/$ks/maps" | awk '{ print $5 }' | sort -u | wc -l)
[ "$images" -le 2 ] ||
	{ grep memfd "/proc/$ks/maps" >&2; tl_fail "$(refresh_count) refreshes keep $images trace.dat images in memory"; }
tl_log "images in memory after refresh $(refresh_count): $images"
[ -n "$KS_SCREENSHOT" ] && ks_png s2 "$KS_SCREENSHOT"

# Tools -> tracemap: stop following, at the first try
stopped() { ks_has_title "tracemap: 1200 events.*stopped following"; }
ks_menu 1
tl_wait 10 stopped || { ks_titles >&2; tl_fail "stop following did not stop"; }
ks_no_dialog
tl_log "stop following: $(ks_titles | sed -n 's/^Kernel Shark.* - tracemap: //p')"

kill -TERM $ks
tl_wait 20 tc_dead $ks || tl_fail "KernelShark did not exit within 20 s of SIGTERM"
exit 0
