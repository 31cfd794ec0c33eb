#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
# tracemap stream on a terminal shows the system, not itself: each line it
# prints wakes the pty's flush worker and the terminal's reader (here
# script(1)), and their wake-ups and switches must not be printed (they
# would make more lines: a feedback loop). On an idle private instance for
# 4 s, the events of tracemap (every one naming it) or of the terminal's
# reader (naming it, but for a switch to it from a task that blocks) are
# under 5 % of what is printed (or, where little else runs, under a
# quarter of their share with --no-filter, where the loop is), and a
# workload of the system (a task that writes sequence-numbered markers and
# sleeps between them) is shown: every
# marker once, and between two markers one wake-up of it and at most one
# switch away from it in state S (none when it blocked into tracemap, which
# is left out as tracemap's own). With --no-filter the loop is there (the
# check fails).
. "$(dirname "$0")/../lib.sh"
tl_require_root
tl_require_tracemap
command -v script > /dev/null || tl_skip "script(1) (util-linux) is not installed"
cd "$TL_TMP" || exit 1
inst=$(tl_instance pty)
idir=$TL_TRACEFS/instances/$inst
N=40

# on_pty OUT SECONDS [OPTION]: tracemap stream for SECONDS on a pty read by
# script(1), with the workload; what the terminal showed in OUT, the
# workload's pid in wl
on_pty() {
	timeout 20 script -qfec "$TM stream -B $inst -e sched:sched_switch -e sched:sched_wakeup \
$3 sleep $2" /dev/null < /dev/null > "$1.raw" 2>&1 &
	sc=$!
	tl_bg $sc
	tl_wait 10 tl_file_is "$idir/events/sched/sched_switch/enable" 1 ||
		{ cat "$1.raw"; tl_fail "the stream did not start"; }
	# our script and tracemap, under timeout (other tracemaps may run on the machine)
	scr= tm= p=$sc
	for _ in 1 2 3 4; do
		p=$(pgrep -P "$p" | head -1)
		[ -n "$p" ] || break
		case $(cat /proc/$p/comm 2>/dev/null) in
		script) scr=$p ;;
		tracemap) tm=$p; break ;;
		esac
	done
	[ -n "$tm" ] && [ -n "$scr" ] || tl_fail "cannot find script and tracemap under timeout"
	# a terminal: a wakeup per event (a file or pipe is read at its pace, tool-stop.sh)
	[ "$(cat "$idir/buffer_percent")" = 0 ] ||
		tl_fail "buffer_percent $(cat "$idir/buffer_percent") while streaming to a terminal, not 0"
	/usr/bin/python3 -c '
import sys, time
with open(sys.argv[1], "w") as m:
    for i in range(1, int(sys.argv[2]) + 1):
        m.write("tmpty seq=%d\n" % i)
        m.flush()
        time.sleep(0.02)
' "$idir/trace_marker" $N &
	wl=$!
	wait $wl || tl_fail "the workload failed"
	wait $sc
	tr -d '\r' < "$1.raw" > "$1"
}

# events: the printed event lines; noise: those naming our tracemap (every
# one: its own, as trace-cmd filters it) or script (but for a switch to the
# terminal's reader from a task that blocks: that task's news)
events() { grep -E '\] +[0-9]+\.[0-9]+: [a-z_]+:' "$1"; }
noise() {
	events "$1" > "$1.ev"
	_a=$(grep -cE "[-:]$tm( |\\]|\$)" "$1.ev")
	_b=$(grep -vE "[-:]$tm( |\\]|\$)" "$1.ev" | grep -E "[-:]$scr( |\\]|\$)" |
		grep -cvE "\\] [^R ][^ ]* ==> [^ ]*:$scr \\[")
	echo $((_a + _b))
}

# the workload's lines between markers: its sleep (at most one "S" switch
# away from it: none when it switched to tracemap, which is left out as
# trace-cmd does; any other sleep on the way, e.g. "D" on a page fault) and
# a wake-up for each sleep shown, and one for the hidden one
check_workload() {
	awk -v w="$wl" -v n=$N '
		/tmpty seq=/ { match($0, /seq=[0-9]+/); s = substr($0, RSTART + 4, RLENGTH - 4) + 0
			seen[s]++
			if (cur && (sw > 1 || wk < 1 || (wk != sl && wk != sl + 1))) {
				bad = bad " " cur ":" sw "/" sl "/" wk; if (!shown++) printf "%s", lines }
			cur = s; sw = 0; sl = 0; wk = 0; lines = "# " $0 "\n"; next }
		{ lines = lines "# " $0 "\n" }
		$0 ~ ("sched_switch: .*:" w " \\[[0-9]+\\] S ==>") { sw++ }
		$0 ~ ("sched_switch: .*:" w " \\[[0-9]+\\] [^R ][^ ]* ==>") { sl++ }
		$0 ~ ("sched_wakeup: .*:" w " \\[") { wk++ }
		END {
			for (i = 1; i <= n; i++) if (seen[i] != 1) { print "marker " i " seen " seen[i] + 0 " times"; f = 1 }
			if (bad != "") { print "S switches/sleeps/wake-ups of the workload after markers:" bad; f = 1 }
			exit f
		}' "$1"
}

on_pty quiet.txt 4
total=$(events quiet.txt | wc -l)
own=$(noise quiet.txt)
tl_log "default: $total events printed, $own naming tracemap or the terminal's reader"
[ "$total" -gt 0 ] || { cat quiet.txt; tl_fail "nothing printed"; }
check_workload quiet.txt || tl_fail "the workload's events are not all shown"

# without the filter the loop is there: the measure of this machine
on_pty loop.txt 2 --no-filter
ltotal=$(events loop.txt | wc -l)
lown=$(noise loop.txt)
tl_log "--no-filter: $ltotal events printed, $lown naming tracemap or the terminal's reader"
[ $((lown * 100)) -ge $((ltotal * 5)) ] ||
	tl_fail "--no-filter: only $lown of $ltotal events are tracemap's: the check cannot fail"
# under 5 %, or (on a machine with little else to show: a quiet guest under
# QEMU) a quarter of the loop's share at most
[ $((own * 100)) -lt $((total * 5)) ] || [ $((own * ltotal * 4)) -lt $((lown * total)) ] ||
	tl_fail "$own of $total printed events are tracemap's or caused by its output" \
		"(>= 5 % and more than a quarter of --no-filter's $lown of $ltotal)"
exit 0
