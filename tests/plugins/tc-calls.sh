#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
# For a libtracefs program that is not trace-cmd, every tracefs_cpu_* call
# through the plugin returns what stock libtracefs 1.6.4 returns: tc-calls
# runs the same scenarios (partial pages with nonblock, stop, flush,
# flush_write, buffered_read, write, pipe, a buffer cleared behind a reused
# reader) once stock and once with the plugin preloaded, and the outputs
# (return values, errno, markers per call) must be equal, each scenario
# delivering every marker exactly once.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tc-common.shlib"
tc_require
prog="$TC_TOP/build/tests/plugins/tc-calls"
P="$TC_TOP/build/plugins/trace-cmd/libtracemap-tracecmd.so"
[ -x "$prog" ] || tl_fail "$prog is missing: run 'make check-build'"
cd "$TL_TMP" || exit 1

# 16 pages per CPU: the scenarios' 600 markers stay below the 50 % watermark
inst=$(tl_instance tc-calls 64)
"$prog" "$inst" > stock.txt 2> stock.err ||
	{ cat stock.txt stock.err; tl_fail "stock libtracefs did not deliver exactly (exit $?)"; }
LD_PRELOAD=$P "$prog" "$inst" > plugin.txt 2> plugin.err
rc=$?
sed 's/^/# /' plugin.err
grep -q "serving the tracefs_cpu_\* calls of tc-calls (pid [0-9]*) from the ring-buffer mapping (libtracefs 1.6.4's contract" plugin.err ||
	tl_fail "the plugin did not say that it serves tc-calls with libtracefs' contract"
if ! cmp -s stock.txt plugin.txt; then
	diff -u stock.txt plugin.txt
	tl_fail "the plugin's tracefs_cpu_* calls differ from stock libtracefs (- stock, + plugin)"
fi
[ $rc -eq 0 ] || { cat plugin.txt; tl_fail "tc-calls failed with the plugin (exit $rc)"; }
grep -c '^  ' plugin.txt | sed 's/^/# calls compared: /'
echo "tc-calls: stock and plugin agree on every call"
