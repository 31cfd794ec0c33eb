#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 60
# tests/run-tests.sh itself: a test that fails once and then passes fails the
# run unless its source is marked timing-sensitive with a reason; the mark is
# refused on a test that checks exact counts; a run that adds a kernel warning
# to dmesg fails even when the test passed; a time limit grows with the
# machine's load; Ctrl-C stops the run at once with the running test
# cleaned up, the summary so far and exit 130.
. "$(dirname "$0")/../lib.sh"
RUNNER=$PWD/tests/run-tests.sh
[ -f "$RUNNER" ] || tl_fail "no $RUNNER"
cd "$TL_TMP" || exit 1
# spelled in two parts so that this script itself carries no mark
MARK="timing-""sensitive:"

# a test that fails on its first run and passes on the second
once() {
	cat > "$1" <<EOS
#!/bin/sh
# $2
[ -f "\$0.ran" ] && exit 0
touch "\$0.ran"
echo "first run fails"
exit 1
EOS
	chmod +x "$1"
}

runner() {
	TEST_LOGDIR=$TL_TMP/logs DMESG_CHECK=0 sh "$RUNNER" "$@" > out.txt 2>&1
}

once plain.sh "no mark"
runner ./plain.sh && { cat out.txt; tl_fail "a test that failed once passed the run"; }
grep -q "FAIL  ./plain.sh.*passed when run again: a failure all the same" out.txt ||
	{ cat out.txt; tl_fail "the once-failing test is not reported as failed"; }

once marked.sh "$MARK the writer is paced against the wall clock"
runner ./marked.sh || { cat out.txt; tl_fail "a marked test that passed again failed the run"; }
grep -q "FLAKY ./marked.sh.*the writer is paced against the wall clock" out.txt ||
	{ cat out.txt; tl_fail "the marked test is not listed as flaky with its reason"; }

once empty.sh "$MARK"
runner ./empty.sh && { cat out.txt; tl_fail "a mark without a reason was accepted"; }

once exact.sh "$MARK load; checks with tc_expect_seqs"
runner ./exact.sh && { cat out.txt; tl_fail "an exact-count test carried the mark and passed"; }
grep -q "checks exact counts" out.txt || { cat out.txt; tl_fail "no word on the refused mark"; }

tl_tests_to_interrupt
runner ./ok.sh || { cat out.txt; tl_fail "a passing test failed the run"; }

# a kernel log line during the run fails it; a private pattern keeps the
# line from looking like a warning to anyone else's runner
if [ "$(id -u)" -eq 0 ] && [ -w /dev/kmsg ] && dmesg > /dev/null 2>&1; then
	tag="tmrunner-$$-$(date +%s%N)"
	cat > kwarn.sh <<EOS
#!/bin/sh
echo "$tag kernel-warning stand-in" > /dev/kmsg
exit 0
EOS
	chmod +x kwarn.sh
	TEST_LOGDIR=$TL_TMP/logs TEST_DMESG_PATTERN="$tag" sh "$RUNNER" ./kwarn.sh > out.txt 2>&1 &&
		{ cat out.txt; tl_fail "a run that added a kernel log line of the pattern passed"; }
	grep -q "the kernel logged a warning" out.txt && grep -q "$tag" out.txt ||
		{ cat out.txt; tl_fail "the kernel line is not shown"; }
	# the same line, already in the log before the run, is not the run's
	TEST_LOGDIR=$TL_TMP/logs TEST_DMESG_PATTERN="$tag" sh "$RUNNER" ./ok.sh > out.txt 2>&1 ||
		{ cat out.txt; tl_fail "an older kernel line failed a later run"; }
else
	tl_log "not root or no /dev/kmsg: the dmesg check is not exercised"
fi
# a busy machine: the limit grows with the load average per CPU, and the
# test sees the factor; on an idle one a test over its limit is stopped
printf '#!/bin/sh\n# timeout: 2\necho "scale $TEST_TIMEOUT_SCALE"\nsleep 5\n' > slow.sh
chmod +x slow.sh
echo "0.10 0.05 0.01 1/100 1" > idle.load
TEST_TIMEOUT_SCALE=1 TEST_LOADAVG=$TL_TMP/idle.load TEST_RETRY=0 runner ./slow.sh &&
	{ cat out.txt; tl_fail "a test over its limit on an idle machine passed"; }
grep -q "timed out after 2s" out.txt || { cat out.txt; tl_fail "no word on the time limit"; }
echo "$(($(nproc) * 4)).50 3.00 1.00 1/100 1" > busy.load
TEST_TIMEOUT_SCALE=1 TEST_LOADAVG=$TL_TMP/busy.load TEST_RETRY=0 runner ./slow.sh ||
	{ cat out.txt; tl_fail "at a load above 4 per CPU the limit did not grow (2 s x 5)"; }
grep -q "scale 5" logs/._slow.sh.log || { cat logs/._slow.sh.log; tl_fail "the test did not see the factor 5"; }

# Ctrl-C while a test runs (SIGINT to the process group, as make gets it):
# the runner stops at once, the test's process group gets SIGTERM and cleans
# up, its children are gone, the tests after it do not run, the summary so
# far is printed and the exit status is 130
# a background job of this shell starts with SIGINT ignored: make's runner does not
TEST_LOGDIR=$TL_TMP/logs DMESG_CHECK=0 setsid env --default-signal=INT \
	sh "$RUNNER" ./ok.sh ./long.sh ./after.sh > int.txt 2>&1 &
rpid=$!
tl_bg $rpid
tl_wait 20 test -s long.pid || { cat int.txt; tl_fail "the long test did not start"; }
[ "$(ps -o pgid= -p $rpid | tr -d ' ')" = $rpid ] || tl_fail "the runner is not its own process group (the test is wrong)"
kill -INT -$rpid
tl_wait 30 sh -c "! kill -0 $rpid 2> /dev/null || grep -qs ') Z' /proc/$rpid/stat" ||
	{ cat int.txt; tl_fail "the runner did not stop within 30 s of Ctrl-C"; }
wait $rpid
rc=$?
[ $rc -eq 130 ] || { cat int.txt; tl_fail "the interrupted runner exited $rc, not 130"; }
grep -q "INTERRUPTED  ./long.sh" int.txt && grep -q "^1 passed, 0 failed, 0 skipped" int.txt ||
	{ cat int.txt; tl_fail "no word on the interrupted test or no summary so far"; }
tl_interrupted int.txt
tl_log "Ctrl-C: the runner stopped the test, printed the summary so far, exit 130"
echo "runner: all checks passed"
