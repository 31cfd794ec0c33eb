#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Bounded libFuzzer run of the text formatter's compiled programs over the
# event formats stored in tests/unit/formats (tests/fuzz/fuzz-format.c),
# from an empty input; its corpus is kept in $O/tests/fuzz/format-corpus.
# Exit 0 pass, 1 fail, 77 skip (only when clang cannot link libFuzzer).
#
#   FUZZ_SECONDS=20 (default in make check)   O=build
#   FUZZ_SECONDS=3600 sh tests/fuzz/run-fuzz-format.sh     a long run
#
# Crashes go to $O/tests/fuzz/artifacts/ (replay: $O/tests/fuzz/fuzz-format FILE).
# timeout: 120
cd "$(dirname "$0")/../.." || exit 1
. tests/fuzz/fuzz.shlib
fuzz_run fuzz-format "${FUZZ_SECONDS:-20}" 4096 "$O/tests/fuzz/format-corpus"
