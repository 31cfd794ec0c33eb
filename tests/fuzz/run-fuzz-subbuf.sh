#!/bin/sh
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
O=${O:-build}
CLANG=${CLANG:-clang}
BIN=$O/tests/fuzz/fuzz-subbuf
SEEDS=$O/tests/fuzz/seeds
CORPUS=$O/tests/fuzz/corpus
ART=$O/tests/fuzz/artifacts
SECS=${FUZZ_SECONDS:-60}

if ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
		"$CLANG" -fsanitize=fuzzer -x c - -o /dev/null 2>/dev/null; then
	echo "SKIP: $CLANG cannot link libFuzzer (-fsanitize=fuzzer): install clang and libclang-rt-dev"
	exit 77
fi
if [ ! -x "$BIN" ] || [ ! -f "$SEEDS/.stamp" ]; then
	echo "FAIL: $BIN or its seeds in $SEEDS are missing: run 'make check-build'"
	exit 1
fi
nseeds=$(ls "$SEEDS" | wc -l)
[ "$nseeds" -gt 0 ] || { echo "FAIL: no seeds in $SEEDS"; exit 1; }
mkdir -p "$CORPUS" "$ART"

# libFuzzer's own error exit code is 77, which the runner reads as a skip
"$BIN" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
	-error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 \
	-artifact_prefix="$ART/" "$CORPUS" "$SEEDS"
rc=$?
if [ $rc -ne 0 ]; then
	echo "FAIL: fuzz-subbuf exited $rc; reproducer(s) in $ART/:"
	ls -t "$ART" | head -5
	exit 1
fi
echo "PASS: fuzz-subbuf ran ${SECS}s from $nseeds seeds without a failure"
exit 0
