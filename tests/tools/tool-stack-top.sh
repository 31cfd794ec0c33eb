#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 240
# No test changes the top level's options/func_stack_trace (issues 21, 24).
# A kernel may keep one func_stack_trace for every buffer (6.18 does), and
# then a write to any instance's file is a write to the top level's. Each
# test that touches the flag runs here under strace: where a fresh
# instance's flag is not proven its own (tl_stack_own), no process of the
# test may open a func_stack_trace file for writing, the library included;
# either way the top level's flag reads at the end what it read before.
# (A watch of the file by polling could miss a write put back within
# milliseconds; strace sees every open.)
. "$(dirname "$0")/../lib.sh"
tl_require_root
command -v strace > /dev/null || tl_skip "strace is not installed (apt-get install strace)"
ROOT=$PWD
top=$TL_TRACEFS/options/func_stack_trace
[ -f "$top" ] || tl_skip "the top level has no options/func_stack_trace (no function tracer)"
cd "$TL_TMP" || exit 1

inst=$(tl_instance fs-top)
if tl_stack_own "$TL_TRACEFS/instances/$inst"; then
	own=1
	tl_log "a fresh instance's func_stack_trace differs from the top level's: its own, writes allowed"
else
	own=
fi
before=$(cat "$top")
strace -f -qq -o /dev/null true 2> strace.err ||
	{ cat strace.err; tl_skip "strace cannot trace here"; }

# watched NAME COMMAND...: run COMMAND from the tree under strace
watched() {
	name=$1; shift
	(cd "$ROOT" && strace -f -qq -e trace=open,openat -o "$TL_TMP/$name.strace" "$@") \
		> "$name.out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 77 ] || { cat "$name.out"; tl_fail "$name failed ($rc)"; }
	grep -E 'options/func_stack_trace", O_(WRONLY|RDWR)' "$name.strace" > "$name.writes"
	if [ -z "$own" ] && [ -s "$name.writes" ]; then
		cat "$name.writes"
		tl_fail "$name wrote func_stack_trace, which on this kernel may be the top level's"
	fi
	tl_file_is "$top" "$before" || tl_fail "$name left the top level's func_stack_trace at $(cat "$top")"
	tl_log "$name: exit $rc, $(grep -c . "$name.writes") writes of func_stack_trace"
}

[ -x "$ROOT/build/tests/kernel/test-instance-api" ] ||
	tl_fail "build/tests/kernel/test-instance-api is missing: run 'make check-build'"
watched tool-reset-tracer sh tests/tools/tool-reset-tracer.sh
watched test-instance-api build/tests/kernel/test-instance-api
echo "the top level's func_stack_trace: untouched by the tests"
