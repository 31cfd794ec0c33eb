#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Bounded libFuzzer run of the sub-buffer parser (tests/fuzz/fuzz-subbuf.c)
# from the seed corpus the encoder generates. Exit 0 pass, 1 fail, 77 skip
# (only when clang cannot link libFuzzer).
#
#   FUZZ_SECONDS=60 (default)   O=build
#
# New inputs are kept in $O/tests/fuzz/corpus, crashes in
# $O/tests/fuzz/artifacts/ (replay: $O/tests/fuzz/fuzz-subbuf FILE).
# timeout: 180
cd "$(dirname "$0")/../.." || exit 1
. tests/fuzz/fuzz.shlib
SEEDS=$O/tests/fuzz/seeds
fuzz_seeds "$SEEDS"
fuzz_run fuzz-subbuf "${FUZZ_SECONDS:-60}" 65536 "$O/tests/fuzz/corpus" "$SEEDS"
