#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Bounded libFuzzer run of the page builder (tests/fuzz/fuzz-pages.c): the
# pages tracemap_cpu_read_page() builds from encoded sub-buffers must hold
# exactly the records and losses that went in. Seeds from gen-seeds -d; new
# inputs kept in $O/tests/fuzz/pages-corpus. Exit 0 pass, 1 fail, 77 skip
# (only when clang cannot link libFuzzer).
#
#   FUZZ_SECONDS=20 (default in make check)   O=build
#   FUZZ_SECONDS=3600 sh tests/fuzz/run-fuzz-pages.sh     a long run
#
# Crashes go to $O/tests/fuzz/artifacts/ (replay: $O/tests/fuzz/fuzz-pages FILE;
# FUZZ_DEBUG=1 prints each read_page() call).
# timeout: 90
cd "$(dirname "$0")/../.." || exit 1
. tests/fuzz/fuzz.shlib
SEEDS=$O/tests/fuzz/desc-seeds
fuzz_seeds "$SEEDS"
fuzz_run fuzz-pages "${FUZZ_SECONDS:-20}" 4096 "$O/tests/fuzz/pages-corpus" "$SEEDS"
