#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Bounded libFuzzer run of the dump and the trace.dat writer
# (tests/fuzz/fuzz-tracedat.c): dumps of synthetic, lying mappings written
# as trace.dat and read back by libtracecmd, which must find exactly the
# records the dump holds. Seeds from gen-seeds -d; new inputs kept in
# $O/tests/fuzz/tracedat-corpus, which the bounded run of make check (no
# FUZZ_SECONDS given) empties first: at some 50 inputs a second, replaying a
# corpus grown over many runs would take longer than the run itself.
# Exit 0 pass, 1 fail, 77 skip (only when clang cannot link libFuzzer).
#
#   FUZZ_SECONDS=30 (default in make check)   O=build
#   FUZZ_SECONDS=3600 sh tests/fuzz/run-fuzz-tracedat.sh     a long run
#
# Leaks are checked once, when the run ends, not after each input: every
# open by libtracecmd 3.1.6 leaks a few bytes of its own (see the target),
# which would make libFuzzer scan for leaks after every input.
# Crashes go to $O/tests/fuzz/artifacts/ (replay: $O/tests/fuzz/fuzz-tracedat FILE;
# FUZZ_DEBUG=1 shows the library's messages).
# timeout: 120
cd "$(dirname "$0")/../.." || exit 1
. tests/fuzz/fuzz.shlib
SEEDS=$O/tests/fuzz/desc-seeds
fuzz_seeds "$SEEDS"
FUZZ_ARGS=-detect_leaks=0
CORPUS=$O/tests/fuzz/tracedat-corpus
[ -n "$FUZZ_SECONDS" ] || rm -rf "$CORPUS"
fuzz_run fuzz-tracedat "${FUZZ_SECONDS:-30}" 4096 "$CORPUS" "$SEEDS"
