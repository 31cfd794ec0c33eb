#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 60
# The libtracefs contract of the tracefs_cpu_* calls (EINTR, 0 for
# nothing, stop, flush_write from a handler, one page per flush, flush,
# buffered_read and free_fd on plugin objects, pass-through of alloc_fd and
# of libtracefs' own calls), checked by tc-contract with the
# plugin preloaded.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tc-common.shlib"
tc_require
prog="$TC_TOP/build/tests/plugins/tc-contract"
[ -x "$prog" ] || tl_fail "$prog is missing: run 'make check-build'"

inst=$(tl_instance tc)
LD_PRELOAD="$TC_TOP/build/plugins/trace-cmd/libtracemap-tracecmd.so" "$prog" "$inst"
