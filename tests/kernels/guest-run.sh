#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Runs in a guest of tests/kernels/check-kernels.sh, chrooted into the
# overlay of the host's root: the kernel-facing tests of the tree, through
# tests/run-tests.sh, whose PASS/FAIL/SKIP lines the host reads back.
. "$1"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
cd "$KM_DIR" || exit 1
echo "KM-KERNEL $(uname -r)"
echo "KM-BOOTED $(cut -d' ' -f1 /proc/uptime)"
# one run per test under TCG's slowness: the table shows the first outcome;
# the guest runs nothing else, so its top level is the tests' (tl_stack_own)
TL_WHOLE_KERNEL=1 TEST_RETRY=0 TEST_LOGDIR=/tmp/km-logs TL_KEEP_FAILED=/km-kept TEST_TIMEOUT_SCALE=$KM_TIMEOUT_SCALE sh tests/run-tests.sh $KM_TESTS
rc=$?
# the last lines of every log, failed or not: what each test measured
for f in /tmp/km-logs/*.log; do
	tail -3 "$f" | sed "s|^|KM-LOG $(basename "$f" .log): |"
done
mkdir -p /km-kept/logs && cp /tmp/km-logs/*.log /km-kept/logs/ 2>/dev/null
exit $rc
