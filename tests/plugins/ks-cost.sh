#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 300
# A refresh that finds nothing new in the buffer does not reload it
# (issue 22, cost): the real KernelShark under Xvfb follows an instance
# every 300 ms (TRACEMAP_KS_STATS=1 says what each refresh did). While the
# instance is idle every refresh keeps the copy shown ("unchanged"); 100
# new markers make the next refresh load a copy, and the view then holds
# exactly what a fresh copy holds (ks-live's headless load through the
# plugin), and no refresh reads /proc/self/maps (strace, where installed:
# KernelShark adds to it on every refresh); a flood that overwrites most
# of the buffer is loaded with its losses, which add up to the kernel's
# overrun, and the idle refreshes after it keep both counts, equal to a
# fresh copy's.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tc-common.shlib"
. "$(dirname "$0")/ks-xvfb.shlib"
. "$(dirname "$0")/ks-live.shlib"
tc_require
ks_require
ks_live_require

# 8 sub-buffers a CPU: the flood below overwrites most of them
inst=$(tl_instance kc-cost 32)
idir="$TL_TRACEFS/instances/$inst"
tc_markers "$inst" 0 0 200
ks_xvfb
cd "$TL_TMP" || exit 1

TRACEMAP_KS_STATS=1 TRACEMAP_FOLLOW_MS=300 kernelshark -geometry 900x900+0+0 -p "$KS_PLUGIN" \
	"$idir" > ks.log 2>&1 &
ks=$!
tl_bg $ks

# "Kernel Shark (PATH) - tracemap: E events[ (L lost)], refresh N at ..."
title() { ks_titles | sed -n 's/^Kernel Shark.* - tracemap: //p' | head -1; }
events() { title | sed -n 's/^\([0-9]*\) events.*/\1/p'; }
lost() { title | sed -n 's/^[0-9]* events (\([0-9]*\) lost.*/\1/p'; }
refreshes() { title | sed -n 's/.*, refresh \([0-9]*\) at .*/\1/p'; }
refreshed_to() { _r=$(refreshes); [ "${_r:-0}" -ge "$1" ]; }
# stat N: the stats line of refresh N
stat() { grep "^tracemap: refresh $1: " ks.log; }
# fresh: "EVENTS LOST" of a fresh copy: ks-live's load through the plugin
# (its rows less the lost-event rows) and the kernel's overrun
fresh() {
	"$KSL" --count "$KS_PLUGIN" "$idir" > fresh.txt 2> fresh.err ||
		{ cat fresh.err >&2; tl_fail "ks-live could not load $idir"; }
	awk '/^# streams/ { print $5 - $9 }' fresh.txt | tr '\n' ' '
	cat "$idir"/per_cpu/cpu*/stats | awk '/^overrun:/ { n += $2 } END { print n }'
}
# shows_fresh: the view shows the counts of a fresh copy (for tl_wait)
shows_fresh() {
	set -- $(fresh)
	[ "$(events)" = "$1" ] && [ "$(lost)" = "$([ "$2" = 0 ] || echo "$2")" ]
}
# idle_check WHAT: once the view shows what a fresh copy holds, the next two
# refreshes keep it
idle_check() {
	tl_wait 60 shows_fresh ||
		{ title >&2; tl_fail "$1: the view does not show what a fresh copy holds: $(fresh)"; }
	_from=$(refreshes)
	tl_wait 60 refreshed_to $((_from + 2)) ||
		{ title >&2; tl_fail "$1: KernelShark did not refresh twice within 60 s"; }
	for _n in $((_from + 1)) $((_from + 2)); do
		stat $_n | grep -q "; unchanged: KernelShark keeps the copy shown" ||
			{ stat $_n >&2; tl_fail "$1: idle refresh $_n loaded the copy again"; }
	done
	shows_fresh || { title >&2; tl_fail "$1: after idle refreshes the view differs from a fresh copy: $(fresh)"; }
	tl_log "$1: refreshes $((_from + 1))-$((_from + 2)) unchanged; as a fresh copy: $(title)"
}

tl_wait 90 refreshed_to 1 || { title >&2; cat ks.log >&2; tl_fail "KernelShark did not follow $inst within 90 s"; }
ks_no_dialog
idle_check "idle, 200 markers"

# new markers: one refresh loads them
tc_markers "$inst" 0 200 100
shows_300() { [ "$(events)" = 300 ]; }
tl_wait 30 shows_300 || { title >&2; tl_fail "the 100 new markers were not shown within 30 s"; }
# the first refresh that had them loaded them (later ones may have run since)
first=$(grep -m1 '^tracemap: refresh [0-9]*: 300 events, ' ks.log)
echo "$first" | grep -q ": 300 events, copy .* ms, view " ||
	{ echo "$first" >&2; tl_fail "the refresh that found the 100 new markers did not load them"; }
idle_check "after 100 markers"

# a refresh that loads reads no /proc/self/maps: KernelShark 2.2.1 leaves
# three mappings a refresh there, so reading it costs more with every refresh
if command -v strace > /dev/null; then
	strace -f -qq -e trace=openat -o strace.txt -p $ks 2> strace.err &
	st=$!
	tl_bg $st
	# attached: the idle refreshes' copies open the instance's files
	tl_wait 30 grep -q trace_pipe_raw strace.txt || { cat strace.err >&2; tl_fail "strace saw no copy"; }
	tc_markers "$inst" 0 300 50
	shows_350() { [ "$(events)" = 350 ]; }
	tl_wait 30 shows_350 || { title >&2; tl_fail "the 50 new markers were not shown within 30 s"; }
	kill $st
	tl_wait 20 tl_gone $st || tl_fail "strace did not end"
	# the image file was looked for (/proc/self/fd: who reads it), not in the maps
	grep -q '"/proc/self/fd"' strace.txt || tl_fail "strace saw no refresh that wrote an image"
	if grep '"/proc/self/maps"' strace.txt; then
		tl_fail "a refresh read /proc/self/maps"
	fi
	tl_log "a loaded refresh under strace: /proc/self/fd looked at, /proc/self/maps not read"
fi

# a flood on both CPUs overwrites what was there: the losses are loaded once, then kept
tc_markers "$inst" 0 300 3000
tc_markers "$inst" 1 3300 3000
idle_check "after a flood"
[ "$(lost)" -gt 1000 ] || { title >&2; tl_fail "the flood lost only $(lost) events"; }
ks_no_dialog

kill -TERM $ks
tl_wait 20 tc_dead $ks || tl_fail "KernelShark did not exit within 20 s of SIGTERM"
exit 0
