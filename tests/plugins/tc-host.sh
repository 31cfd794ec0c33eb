#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 30
# The trace-cmd plugin checks its host when it is loaded: in a program that
# never opens ring buffers with tracefs_cpu_open() (tc-host), and behind a
# libtracefs with a tracefs_cpu_* function the plugin does not serve (a
# stand-in library), it says so once and steps aside; in trace-cmd 3.1.6
# with libtracefs 1.6 it says nothing and serves.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tc-common.shlib"
tc_require
P="$TC_TOP/build/plugins/trace-cmd/libtracemap-tracecmd.so"
HOST="$TC_TOP/build/tests/plugins/tc-host"
STANDIN="$TC_TOP/build/tests/plugins/libtc-standin-tracefs.so"
for f in "$P" "$HOST" "$STANDIN"; do
	[ -e "$f" ] || tl_fail "$f is missing: run 'make all check-build'"
done
cd "$TL_TMP" || exit 1

# 1. a host that opens no ring buffer
LD_PRELOAD=$P "$HOST" > out.txt 2> err.txt || { cat err.txt; tl_fail "tc-host failed"; }
sed 's/^/# /' err.txt
[ "$(grep -c 'trace-cmd-mmap: ' err.txt)" -eq 1 ] || tl_fail "not one message from the plugin"
grep -q "does not open ring buffers with tracefs_cpu_open().*nothing to do" err.txt ||
	tl_fail "no word that the host reads no ring buffer"
grep -q "^tracefs: /" out.txt || tl_fail "the host did not run normally"

# 2. a libtracefs with a tracefs_cpu_* function the plugin does not serve
LD_PRELOAD="$P $STANDIN" trace-cmd list -o > out.txt 2> err.txt ||
	{ cat err.txt; tl_fail "trace-cmd list failed with the stand-in library"; }
sed 's/^/# /' err.txt
[ "$(grep -c 'trace-cmd-mmap: ' err.txt)" -eq 1 ] || tl_fail "not one message from the plugin"
grep -q "libtc-standin-tracefs.so has tracefs_cpu_frobnicate.*stepping aside" err.txt ||
	tl_fail "the unserved function is not named"

# 3. the supported host: trace-cmd with its own libtracefs, not a word
LD_PRELOAD=$P trace-cmd list -o > out.txt 2> err.txt || { cat err.txt; tl_fail "trace-cmd list failed"; }
[ -s err.txt ] && { cat err.txt; tl_fail "the plugin complained about trace-cmd"; }
grep -q . out.txt || tl_fail "trace-cmd list printed nothing"
echo "host check: all passed"
