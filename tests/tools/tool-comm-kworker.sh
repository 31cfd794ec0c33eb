#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
# The task column of tracemap stream names workqueue workers as trace-cmd
# report does, by the kernel's comm (saved_cmdlines, sched_switch), not by
# /proc's comm, which adds the worker's last or current work after '-' or
# '+' ("kworker/u8:0-writeback"): every kworker line's name is the name the
# sched_switch events of the same stream give its pid, has no work suffix,
# and is at most 15 characters.
. "$(dirname "$0")/../lib.sh"
tl_require_root
tl_require_tracemap
cd "$TL_TMP" || exit 1
inst=$(tl_instance kw 1024)

# kworker_lines N: the stream printed N lines of kworkers with a switch to or from one
kworker_lines() {
	[ "$(grep -c '^ *kworker/[^ ]*-[0-9]* *\[' out.txt)" -ge "$1" ] &&
		grep -q '==> kworker/' out.txt
}

"$TM" stream -B "$inst" -e sched:sched_switch -e workqueue:workqueue_execute_start \
	> out.txt 2> err.txt &
tm=$!
tl_bg $tm
tl_wait 10 tl_file_is "$TL_TRACEFS/instances/$inst/events/sched/sched_switch/enable" 1 ||
	{ cat err.txt; tl_fail "the stream did not start"; }
# work for the workers: writeback of a dirty file and the sync that waits for it
i=0
while ! kworker_lines 20 && [ $i -lt 100 ]; do
	dd if=/dev/zero of=dirty bs=64k count=4 2> /dev/null
	sync
	sleep 0.1
	i=$((i + 1))
done
kill -INT $tm
wait $tm || { cat err.txt; tl_fail "the stream failed"; }
kworker_lines 20 || tl_fail "fewer than 20 kworker lines in 10 s of writeback (the test is wrong)"

awk '
	# the kernel comm of each pid: "sched_switch: prev:pid [prio] S ==> next:pid [prio]"
	function learn(tok, a, n) {
		n = split(tok, a, ":")
		if (n > 1 && a[n] ~ /^[0-9]+$/)
			comm[a[n]] = substr(tok, 1, length(tok) - length(a[n]) - 1)
	}
	/ sched_switch: / {
		for (i = 1; i < NF; i++) {
			if ($i == "sched_switch:")
				learn($(i + 1))
			if ($i == "==>")
				learn($(i + 1))
		}
	}
	{ task[NR] = $1 }
	END {
		for (l = 1; l <= NR; l++) {
			t = task[l]
			if (t !~ /^kworker\//)
				continue
			pid = t; sub(/.*-/, "", pid)
			name = substr(t, 1, length(t) - length(pid) - 1)
			checked++
			if (length(name) > 15 || (name !~ /^kworker\/R-/ && substr(name, 9) ~ /[-+]/)) {
				print "line " l ": " name " is not a kernel comm"; bad = 1
			} else if ((pid in comm) && comm[pid] != name) {
				print "line " l ": " name "-" pid ", sched_switch names it " comm[pid]; bad = 1
			}
			if (pid in comm)
				matched++
		}
		printf "%d kworker lines, %d of a pid a switch named\n", checked, matched
		exit bad
	}' out.txt > check.txt || { head -20 check.txt; tl_fail "kworkers are named by /proc, not by the kernel's comm"; }
tl_log "$(tail -1 check.txt)"
