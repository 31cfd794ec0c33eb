#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
# make run's job (scripts/run-demo.sh, the README's first command) on the
# tracemap under test: it finds the private instance the stream names,
# every marker arrives once and in order, and the instance is gone after.
. "$(dirname "$0")/../lib.sh"
tl_require_root
tl_require_tracemap
demo=$(cd "$(dirname "$0")/../../scripts" && pwd)/run-demo.sh
TRACEMAP=$TM sh "$demo" 2 > "$TL_TMP/demo.txt" 2>&1 ||
	{ cat "$TL_TMP/demo.txt"; tl_fail "scripts/run-demo.sh failed"; }
grep "^== ok: " "$TL_TMP/demo.txt" || { cat "$TL_TMP/demo.txt"; tl_fail "no ok line"; }
exit 0
