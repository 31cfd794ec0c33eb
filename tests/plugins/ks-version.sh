#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 300
# The KernelShark plugin in a KernelShark whose GUI library is not the
# 2.2.1 its menu part was written for (a copy of libkshark-gui named
# libkshark-gui.so.2.9.9 first in LD_LIBRARY_PATH): the plugin says so once,
# the live instance still opens and is drawn, the title has its status, the
# Tools menu has no tracemap entries (it is shorter than with the real
# library), and File -> Quit exits 0. With the real library the entries are
# there.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tc-common.shlib"
. "$(dirname "$0")/ks-xvfb.shlib"
tc_require
ks_require
gui=$(ldd "$(command -v kernelshark)" | awk '/libkshark-gui/ { print $3 }')
[ -f "$gui" ] || tl_skip "kernelshark's libkshark-gui is not found"
case $(readlink -f "$gui") in
*libkshark-gui.so.2.2.1) ;;
*) tl_skip "this KernelShark is not 2.2.1 (the menu part is for 2.2.1)" ;;
esac

inst=$(tl_instance ks-ks-version)
tc_markers "$inst" 0 0 100
ks_xvfb
cd "$TL_TMP" || exit 1
printf 'instance = %s\n' "$inst" > live.tracemap
mkdir lib
cp "$(readlink -f "$gui")" lib/libkshark-gui.so.2.9.9
# kernelshark needs libkshark-gui.so.2.2.1 by that name: a link to the renamed copy
ln -s libkshark-gui.so.2.9.9 lib/libkshark-gui.so.2.2.1

# run_ks LOG [env...]: KernelShark with the plugin on the instance, drawn; $ks, $win
run_ks() {
	_log=$1; shift
	env "$@" kernelshark -geometry 900x900+0+0 -p "$KS_PLUGIN" "$TL_TMP/live.tracemap" > "$_log" 2>&1 &
	ks=$!
	tl_bg $ks
	tl_wait 90 ks_has_title ' - tracemap: 100 events, opened at .*, not following' ||
		{ ks_titles >&2; cat "$_log" >&2; tl_fail "no view of $inst within 90 s ($*)"; }
	win=$(ks_window '^Kernel Shark')
	_drawn() { ks_shot "$win" shot; [ "$(ks_val shot bands)" -ge 1 ] && [ "$(ks_val shot table_rows)" -ge 10 ]; }
	tl_wait 30 _drawn || { cat shot.txt >&2; tl_fail "the view of $inst is not drawn ($*)"; }
	ks_no_dialog
}
quit_ks() {
	xdotool key ctrl+q
	tl_wait 30 tc_dead $ks || tl_fail "KernelShark did not exit within 30 s of File -> Quit"
	wait $ks; _st=$?
	[ $_st -eq 0 ] || { tail -5 "$1" >&2; tl_fail "KernelShark exited $_st after File -> Quit ($1)"; }
}

run_ks other.log LD_LIBRARY_PATH="$TL_TMP/lib"
grep -q "$TL_TMP/lib/libkshark-gui.so.2.9.9" "/proc/$ks/maps" || tl_fail "KernelShark did not load the renamed copy"
h_other=$(ks_tools_height) || tl_fail "the Tools menu did not open"
quit_ks other.log
[ "$(grep -c 'tracemap: this KernelShark is not 2.2.1 (it runs with libkshark-gui.so.2.9.9, not libkshark-gui.so.2.2.1): live buffers open, but refresh and follow are left out' other.log)" = 1 ] ||
	{ cat other.log >&2; tl_fail "the plugin did not say once that it left its menu out"; }
tl_log "libkshark-gui.so.2.9.9: opened and drawn, said once, Tools menu $h_other px, quit 0"

run_ks real.log
h_real=$(ks_tools_height) || tl_fail "the Tools menu did not open"
quit_ks real.log
! grep -q 'is not 2.2.1' real.log || { cat real.log >&2; tl_fail "the real 2.2.1 was refused"; }
[ "$h_real" -gt "$h_other" ] ||
	tl_fail "the Tools menu is $h_real px with the entries and $h_other px without them"
tl_log "libkshark-gui.so.2.2.1: Tools menu $h_real px with the tracemap entries"
exit 0
