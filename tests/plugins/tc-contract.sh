#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 60
# The libtracefs contract of the tracefs_cpu_* calls (EINTR, 0 for
# nothing, stop, flush_write from a handler, one page per flush, flush,
# buffered_read and free_fd on plugin objects, pass-through of alloc_fd and
# of libtracefs' own calls), checked by tc-contract with the
# plugin preloaded. tc-contract is not trace-cmd: host=trace-cmd asks for
# the contract the plugin keeps with trace-cmd's recorder (tc-calls.sh checks
# the one other programs get).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tc-common.shlib"
tc_require
[ "$(tc_can_map)" = yes ] ||
	tl_skip "this kernel cannot map the ring buffer (Linux 6.10 or later is needed): the contract is that of the plugin's mapped objects, and without the mapping every call goes to libtracefs (tc-calls.sh compares them)"
prog="$TC_TOP/build/tests/plugins/tc-contract"
[ -x "$prog" ] || tl_fail "$prog is missing: run 'make check-build'"

inst=$(tl_instance tc)
TRACEMAP_TRACECMD=host=trace-cmd LD_PRELOAD="$TC_TOP/build/plugins/trace-cmd/libtracemap-tracecmd.so" "$prog" "$inst"
