#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
# The plugin's images carry no kallsyms, which KernelShark would parse again
# on every refresh (issue 22, cost), and KernelShark still names kernel
# functions: headless (ks-live through the plugin), an instance's
# timer:timer_start events show "function=NAME" with NAME a function of
# /proc/kallsyms at that event's address, not a bare address; the image the
# stream reads (its memory file, copied while it is open) has no line of
# /proc/kallsyms in it.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tc-common.shlib"
. "$(dirname "$0")/ks-live.shlib"
tc_require
ks_live_require
[ "$(tc_can_map)" = yes ] || tl_skip "this kernel cannot map the ring buffer (Linux 6.10 or later is needed)"
stext=$(grep -m1 ' T _stext$' /proc/kallsyms)
case $stext in 0000000000000000*|'') tl_skip "/proc/kallsyms shows no addresses (kptr_restrict)";; esac

inst=$(tl_instance kc-fn)
idir="$TL_TRACEFS/instances/$inst"
[ -d "$idir/events/timer/timer_start" ] || tl_skip "this kernel has no timer:timer_start event"
cd "$TL_TMP" || exit 1
entries() { cat "$idir"/per_cpu/cpu*/stats | awk '/^entries:/ { n += $2 } END { print n + 0 }'; }
some_timers() { [ "$(entries)" -ge 20 ]; }
echo 1 > "$idir/events/timer/timer_start/enable"
tl_wait 60 some_timers || tl_fail "fewer than 20 timer_start events in 60 s"
echo 0 > "$idir/events/timer/timer_start/enable"

# the stream's image while it is open: ks-live's descriptor of the memory file
copy='fd=$(ls -l /proc/$PPID/fd | sed -n "s|.* \([0-9]*\) -> /memfd:tracemap-live.dat.*|\1|p" | head -1)
	[ -n "$fd" ] && cp "/proc/$PPID/fd/$fd" image.dat'
"$KSL" --append --then "$copy" "$KSP" "$idir" > live.txt 2> live.err ||
	{ cat live.err >&2; tl_fail "ks-live could not load $idir through the plugin"; }
[ -s image.dat ] || tl_fail "no image of the stream was found open"
n=$(grep -a -c -e "$stext" image.dat)
[ "$n" = 0 ] || tl_fail "the image holds kallsyms ('$stext' found)"

# every timer_start names a function: the one of /proc/kallsyms at its address
grep ': timer_start: ' live.txt > timers.txt
[ "$(wc -l < timers.txt)" -ge 20 ] || { head live.txt >&2; tl_fail "ks-live shows fewer than 20 timer_start events"; }
sed -n 's/.* function=\([^ ]*\) .*/\1/p' timers.txt | sort -u > names.txt
[ "$(wc -l < timers.txt)" = "$(grep -c ' function=' timers.txt)" ] || tl_fail "a timer_start has no function"
if grep -q '^0x' names.txt; then
	grep '^0x' names.txt | head -3 >&2
	tl_fail "timer_start events show addresses, not function names"
fi
while read -r f; do
	grep -q " [tTwW] $f\$" /proc/kallsyms || grep -q " [tTwW] $f\s" /proc/kallsyms ||
		tl_fail "timer_start names '$f', which is no function of /proc/kallsyms"
done < names.txt
tl_log "$(wc -l < timers.txt) timer_start events name $(wc -l < names.txt) functions ($(tr '\n' ' ' < names.txt)); the image has no kallsyms"
exit 0
