#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Bounded libFuzzer run of the per-CPU reader over synthetic, lying mappings
# (tests/fuzz/fuzz-reader.c). It starts from an empty input and the seeds of
# gen-seeds -r (full 8 KiB sub-buffers, one recycled under every copy);
# what it finds is kept in $O/tests/fuzz/reader-corpus, so that later runs
# go on from there.
# Exit 0 pass, 1 fail, 77 skip (only when clang cannot link libFuzzer).
#
#   FUZZ_SECONDS=30 (default in make check)   O=build
#   FUZZ_SECONDS=3600 sh tests/fuzz/run-fuzz-reader.sh     a long run
#
# Crashes go to $O/tests/fuzz/artifacts/ (replay: $O/tests/fuzz/fuzz-reader FILE).
# timeout: 120
cd "$(dirname "$0")/../.." || exit 1
. tests/fuzz/fuzz.shlib
SEEDS=$O/tests/fuzz/reader-seeds
fuzz_seeds "$SEEDS"
fuzz_run fuzz-reader "${FUZZ_SECONDS:-30}" 40960 "$O/tests/fuzz/reader-corpus" "$SEEDS"
