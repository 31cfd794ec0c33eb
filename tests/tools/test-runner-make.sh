#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 90
# Ctrl-C stops `make check` (issue 21, point 4): SIGINT to make's process
# group, as a terminal sends it, while the runner is inside a test ends
# make at once; the test gets to clean up, its children are gone and the
# tests after it do not run. make runs its test target here with the build
# taken as done (-o all -o check-build) and three tests of this script.
. "$(dirname "$0")/../lib.sh"
TOP=$PWD
[ -f "$TOP/tests/run-tests.sh" ] || tl_fail "run from the top of the tree (no tests/run-tests.sh)"
command -v make > /dev/null || tl_skip "make is not installed"
cd "$TL_TMP" || exit 1

tl_tests_to_interrupt

# a make of its own: not a sub-make of the make that may run this test;
# a background job starts with SIGINT ignored, a terminal's make does not
(
	unset MAKEFLAGS MFLAGS MAKELEVEL
	exec setsid env --default-signal=INT TEST_LOGDIR="$TL_TMP/logs" DMESG_CHECK=0 \
		make -C "$TOP" --no-print-directory -o all -o check-build test \
		TESTS="$TL_TMP/ok.sh $TL_TMP/long.sh $TL_TMP/after.sh"
) > make.txt 2>&1 &
mpid=$!
tl_bg $mpid
tl_wait 30 test -s long.pid || { cat make.txt; tl_fail "make did not get to the long test"; }
tl_wait 10 test -s long.child || tl_fail "the long test did not start its child"
tl_bg "$(cat long.pid)"
tl_bg "$(cat long.child)"
[ "$(ps -o pgid= -p $mpid | tr -d ' ')" = $mpid ] ||
	tl_fail "make is not its own process group (the test is wrong)"
kill -INT -$mpid
tl_wait 30 tl_gone $mpid || { cat make.txt; tl_fail "make did not stop within 30 s of Ctrl-C"; }
wait $mpid
rc=$?
[ $rc -ne 0 ] || { cat make.txt; tl_fail "the interrupted make exited 0"; }
grep -q "INTERRUPTED  $TL_TMP/long.sh" make.txt ||
	{ cat make.txt; tl_fail "the runner said nothing of the interrupted test"; }
tl_interrupted make.txt
tl_log "Ctrl-C to make's process group: make exited $rc, the test cleaned up, nothing after it ran"
echo "make check and Ctrl-C: all checks passed"
