#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Screenshot of the real KernelShark under Xvfb, with tracemap's plugin:
#
#   sh scripts/ks-screenshot.sh OUT.png PATH [WIDTHxHEIGHT]
#
# PATH is what KernelShark opens: a trace.dat, a tracefs instance directory
# or a .tracemap descriptor. The window (default 1100x760) is shot once it
# has loaded PATH and shows no dialog. KS_ARGS adds KernelShark options
# (for example "--cpu 0,1 --pid 123" for a task plot); with KS_FOLLOW_MS=MS
# the view follows the live buffer and is shot after its fifth refresh.
# Used for Documentation/images/.
[ $# -ge 2 ] || { echo "usage: $0 OUT.png PATH [WIDTHxHEIGHT]" >&2; exit 2; }
out=$(realpath -m "$1")
path=$(realpath "$2")
geo=${3:-1100x760}
KS_TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$KS_TOP/tests/lib.sh"
. "$KS_TOP/tests/plugins/ks-xvfb.shlib"
ks_require
ks_xvfb
[ -n "$KS_FOLLOW_MS" ] && export TRACEMAP_FOLLOW_MS=$KS_FOLLOW_MS
# shellcheck disable=SC2086
kernelshark -geometry "$geo+0+0" -p "$KS_PLUGIN" $KS_ARGS "$path" > "$TL_TMP/ks.log" 2>&1 &
ks=$!
tl_bg $ks
tl_wait 120 ks_has_title "^Kernel Shark ($path)" ||
	{ cat "$TL_TMP/ks.log" >&2; tl_fail "KernelShark did not load $path within 120 s"; }
ks_no_dialog
if [ -n "$KS_FOLLOW_MS" ]; then
	tl_wait 120 ks_has_title " - tracemap: .*, refresh [5-9][0-9]* at " ||
		{ cat "$TL_TMP/ks.log" >&2; tl_fail "KernelShark did not refresh 5 times within 120 s"; }
fi
# shot again until the graph and the table are painted
painted() {
	ks_shot "$(ks_window '^Kernel Shark')" "$TL_TMP/shot"
	[ "$(ks_val "$TL_TMP/shot" bands)" -ge 1 ] && [ "$(ks_val "$TL_TMP/shot" table_rows)" -ge 3 ]
}
tl_wait 30 painted || tl_fail "KernelShark did not paint its graph and table within 30 s"
ks_png "$TL_TMP/shot" "$out"
echo "$out: $(grep -e bands -e table_rows "$TL_TMP/shot.txt" | tr '\n' ' ')"
