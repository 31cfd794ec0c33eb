#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Run test programs and scripts with a timeout each; exit 0 pass, 77 skip,
# anything else fails. Prints a summary and exits non-zero on any failure.
#
#   tests/run-tests.sh [prog...]     TEST_TIMEOUT=seconds (default 300)
#                                    TEST_TIMEOUT_SCALE=N: every timeout times N
#                                    (a slower machine: QEMU's TCG, check-kernels)
#
# A test may name its own timeout in a line "# timeout: N" (scripts) or
# "/* timeout: N */" (C sources next to the binary's name in tests/).
# On a busy machine a test gets its share of the CPUs, so every timeout is
# also multiplied by the load average per CPU (the larger of the 1 and 5
# minute ones, rounded up, at least 1), and the test sees the product in
# TEST_TIMEOUT_SCALE for its own bounded waits (tests/lib.sh tl_wait).
# TEST_LOADAVG names another file than /proc/loadavg (the runner's test).
#
# A failing test is run once more to tell the reader whether the failure
# repeats, but a test that failed once has failed: a pass on the second
# run only counts when the test's source carries a line
#     timing-sensitive: <why its outcome can depend on the machine's load>
# and then the test is listed as flaky with the first run's log. A test that
# checks exact counts (one of the helpers in EXACT_HELPERS) may not carry the
# mark: its failure is always a finding, and the mark on it fails the test.
#
# A test run that adds a kernel WARNING, BUG or Oops to dmesg fails, whatever
# its exit status: the kernel log lines are printed (DMESG_CHECK=0: no check;
# TEST_DMESG_PATTERN replaces the extended regular expression of bad lines).
#
# Ctrl-C (SIGINT to make's process group), SIGTERM or SIGHUP stop the run at
# once: the running test's process group (timeout(1) makes one, which the
# terminal's SIGINT does not reach) gets SIGTERM, so that the test cleans up
# (INTERRUPT_WAIT seconds, default 20, then SIGKILL), the summary so far is
# printed and the runner exits 130.
TIMEOUT=${TEST_TIMEOUT:-300}
EXACT_HELPERS='th_assert_seq_run|check_exact|drain_exact|tc_expect_seqs|tl_seqs'
KERNEL_BAD=${TEST_DMESG_PATTERN:-"WARNING: CPU|cut here|BUG:|Oops:"}
pass=0; fail=0; skip=0; failed=; flaky=
logdir=${TEST_LOGDIR:-build/test-logs}
mkdir -p "$logdir"

dmesg_ok=0
if [ "${DMESG_CHECK:-1}" = 1 ]; then
	if dmesg > /dev/null 2>&1; then
		dmesg_ok=1
	else
		echo "note: dmesg is not readable here: new kernel warnings are not checked (run as root)"
	fi
fi

# time stamp of the newest kernel log line, 0 when there is none
dmesg_last() {
	dmesg 2>/dev/null | sed -n '$s/^\[ *\([0-9]*\.[0-9]*\)\].*/\1/p' | grep . || echo 0
}

# kernel log lines newer than $1 that report a warning, a bug or an oops,
# with the lines that follow each (they name the process and the call)
dmesg_bad_since() {
	dmesg 2>/dev/null | awk -v since="$1" -v bad="$KERNEL_BAD" '
		{ t = $0; sub(/^\[ */, "", t); sub(/\].*/, "", t) }
		t + 0 <= since + 0 { next }
		$0 ~ bad { left = 6 }
		left > 0 { print; left-- }'
}

# the load average per CPU, rounded up, at least 1
load_scale() {
	awk -v n="$(nproc 2> /dev/null || echo 1)" '{ l = $1 > $2 ? $1 : $2; s = int(l / n)
		if (s < l / n) s++; print s < 1 ? 1 : s }' "${TEST_LOADAVG:-/proc/loadavg}" 2> /dev/null ||
		echo 1
}

summary() {
	echo
	[ -n "$failed" ] && echo "failed:$failed"
	[ -n "$flaky" ] && echo "flaky (failed once, passed again, marked timing-sensitive):$flaky"
	echo "$pass passed, $fail failed, $skip skipped"
}

# the test runs in the background so that a signal's trap runs at once, not
# after the test; fd 3 keeps the runner's standard input for it
exec 3<&0
tpid=
# the crash records (lib/state.c) of the consumers a test kills stay with
# the test, not in the machine's /run/tracemap; a test may set its own
statedir=$(mktemp -d "${TMPDIR:-/tmp}/tracemap-state.XXXXXX") || exit 1
run_one() {
	TRACEMAP_STATE_DIR=${TRACEMAP_STATE_DIR:-$statedir/$name} \
	TEST_TIMEOUT_SCALE=$scale timeout -k 10 "$to" "$t" > "$1" 2>&1 <&3 3<&- &
	tpid=$!
	wait $tpid
	rc=$?
	tpid=
}

interrupted() {
	trap '' INT TERM HUP
	echo
	echo "INTERRUPTED  $t: stopped${tpid:+ (its process group $tpid gets SIGTERM to clean up)}"
	if [ -n "$tpid" ]; then
		kill -TERM "-$tpid" 2> /dev/null || kill -TERM "$tpid" 2> /dev/null
		n=0
		while kill -0 "$tpid" 2> /dev/null && [ $n -lt $((${INTERRUPT_WAIT:-20} * 10)) ]; do
			sleep 0.1
			n=$((n + 1))
		done
		kill -KILL "-$tpid" 2> /dev/null
		wait "$tpid" 2> /dev/null
	fi
	summary
	rm -rf "$statedir"
	echo "interrupted: the tests after $t did not run"
	exit 130
}
trap interrupted INT TERM HUP

for t in "$@"; do
	name=$(echo "$t" | sed 's|^build/||; s|/|_|g')
	log="$logdir/$name.log"
	to=$TIMEOUT
	src=$t
	mark=
	exact=
	case "$t" in build/*) src=$(ls "${t#build/}.c" "$(echo "${t#build/}" | sed 's/-[a-z]*san$//').c" 2>/dev/null | head -1) ;; esac
	if [ -n "$src" ] && [ -f "$src" ]; then
		n=$(sed -n 's/.*timeout: \([0-9][0-9]*\).*/\1/p' "$src" | head -1)
		[ -n "$n" ] && to=$n
		mark=$(sed -n 's/.*timing-sensitive:[[:space:]]*\(.*[^[:space:]*/]\).*/\1/p' "$src" | head -1)
		grep -qE "$EXACT_HELPERS" "$src" && exact=1
	fi
	base=$to
	scale=$((${TEST_TIMEOUT_SCALE:-1} * $(load_scale)))
	to=$((to * scale))
	[ $dmesg_ok = 1 ] && since=$(dmesg_last)
	start=$(date +%s)
	run_one "$log"
	why=
	if [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ "${TEST_RETRY:-1}" = 1 ]; then
		# tests share two CPUs with a live kernel writer: say whether the
		# failure repeats; only a marked test may pass on the second run
		mv "$log" "$log.first"
		rc1=$rc
		run_one "$log"
		rc2=$rc
		rc=$rc1
		if [ $rc2 -eq 0 ] && [ -n "$mark" ] && [ -z "$exact" ]; then
			flaky="$flaky $t"
			echo "FLAKY $t: failed (exit $rc), passed when run again; marked timing-sensitive: $mark; first run's log: $log.first"
			tail -5 "$log.first" | sed 's/^/      | /'
			rc=0
		elif [ $rc2 -eq 0 ]; then
			why="failed (exit $rc), then passed when run again: a failure all the same"
			cp "$log.first" "$log"
		else
			rc=$rc2
		fi
	fi
	if [ -n "$mark" ] && [ -n "$exact" ]; then
		why="marked timing-sensitive but checks exact counts ($EXACT_HELPERS): remove the mark"
		rc=1
	fi
	if [ $dmesg_ok = 1 ]; then
		bad=$(dmesg_bad_since "$since")
		if [ -n "$bad" ]; then
			why="the kernel logged a warning while it ran:"
			echo "$bad" >> "$log"
			[ $rc -eq 0 ] || [ $rc -eq 77 ] && rc=1
		fi
	fi
	secs=$(( $(date +%s) - start ))
	case $rc in
	0)	pass=$((pass + 1)); echo "PASS  $t (${secs}s)" ;;
	77)	skip=$((skip + 1)); echo "SKIP  $t: $(grep -i skip "$log" | tail -1)" ;;
	124|137) fail=$((fail + 1)); failed="$failed $t"; echo "FAIL  $t: timed out after ${to}s (${base}s x$scale: the load, TEST_TIMEOUT_SCALE)"
		tail -20 "$log" | sed 's/^/      | /' ;;
	*)	fail=$((fail + 1)); failed="$failed $t"; echo "FAIL  $t (exit $rc)${why:+: $why}"
		tail -30 "$log" | sed 's/^/      | /' ;;
	esac
done

summary
rm -rf "$statedir"
[ "$fail" -eq 0 ]
