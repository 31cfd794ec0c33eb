#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Mount tracefs at /sys/kernel/tracing when nothing is mounted there.
T=/sys/kernel/tracing
[ -e "$T/trace_pipe" ] && exit 0
[ -e /sys/kernel/debug/tracing/trace_pipe ] && exit 0
if mount -t tracefs nodev "$T" 2>/dev/null; then
	exit 0
fi
echo "warning: tracefs is not mounted at $T and mounting failed (not root?):" \
     "run 'mount -t tracefs nodev $T' as root; kernel tests will skip" >&2
exit 0
