#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
# The KernelShark plugin's .tracemap descriptor, headless (libkshark): an
# instance that is not one name under instances/ ("..", ".", "a/b", "", or
# none at all: the top level is opened only as "instance = /") and a
# follow-ms that is not a whole number of ms from 1 to 3600000 ("500x",
# "0", "-5", "99999999999", "") are refused with a message naming the line
# and what to write, and nothing is opened (".." used to open the top-level
# buffer, "500x" to follow every 500 ms); a valid descriptor opens.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tc-common.shlib"
tc_require
KSL="$TC_TOP/build/tests/plugins/ks-live"
KSP="$TC_TOP/build/plugins/kernelshark/plugin-tracemap.so"
[ -f /usr/include/kernelshark/libkshark.h ] || tl_skip "KernelShark's headers are not installed (libkshark-dev)"
[ -x "$KSL" ] && [ -f "$KSP" ] || tl_fail "$KSL or $KSP is missing: run 'make all check-build'"

inst=$(tl_instance ks-ks-desc)
echo "one marker" > "$TL_TRACEFS/instances/$inst/trace_marker"
cd "$TL_TMP" || exit 1

# refused KEY VALUE MESSAGE: a descriptor with "KEY = VALUE" is not opened, and says MESSAGE
refused() {
	printf '# test\n%s = %s\n' "$1" "$2" > bad.tracemap
	[ "$1" = follow-ms ] && printf 'instance = %s\n' "$inst" >> bad.tracemap
	if "$KSL" --count "$KSP" "$TL_TMP/bad.tracemap" > out 2> err; then
		cat out >&2
		tl_fail "a descriptor with '$1 = $2' was opened"
	fi
	grep -q -- "bad.tracemap:2: $3" err ||
		{ cat err >&2; tl_fail "no message \"$3\" for '$1 = $2'"; }
}

for v in .. . a/b ../$inst ""; do
	refused instance "$v" "instance '$v' is not an instance name"
done
grep -q "'instance = /' for the top-level buffer" err || { cat err >&2; tl_fail "the message does not say what to write"; }
# the top level only when named: a descriptor without an instance opens nothing
printf 'follow-ms = 500\n' > none.tracemap
"$KSL" --count "$KSP" "$TL_TMP/none.tracemap" > out 2> err && tl_fail "a descriptor naming no buffer was opened"
grep -q "names no buffer: add 'instance = NAME', or 'instance = /'" err ||
	{ cat err >&2; tl_fail "no message for a descriptor naming no buffer"; }
for v in 500x 0 -5 99999999999 "" " 1 2"; do
	refused follow-ms "$v" "follow-ms '.*' is not a period in ms: give a whole number from 1 to 3600000"
done
tl_log "instance and follow-ms refused: $(head -1 err)"

printf 'instance = %s\nfollow-ms = 500\n' "$inst" > good.tracemap
if [ "$(tc_can_map)" = no ]; then
	# before Linux 6.10 the valid descriptor is refused, saying why
	"$KSL" --count "$KSP" "$TL_TMP/good.tracemap" > out 2> err &&
		tl_fail "a live view was opened on a kernel that cannot map the ring buffer"
	grep -q "Linux 6.10 or later is needed" err ||
		{ cat err >&2; tl_fail "the refusal does not name the kernel needed"; }
	tl_log "valid descriptor refused without the mapping: $(grep -m1 '6.10' err)"
	exit 0
fi
"$KSL" --count "$KSP" "$TL_TMP/good.tracemap" > out 2> err ||
	{ cat err >&2; tl_fail "a valid descriptor was not opened"; }
grep -q '^# streams 1 entries 1 ' out || { cat out >&2; tl_fail "the valid descriptor does not show the one marker"; }
tl_log "valid descriptor: $(grep '^# streams' out)"
exit 0
