#!/bin/sh
# Bounded libFuzzer run of the per-CPU reader over synthetic, lying mappings
# (tests/fuzz/fuzz-reader.c). It starts from an empty input; what it finds
# is kept in $O/tests/fuzz/reader-corpus, so that later runs go on from there.
# Exit 0 pass, 1 fail, 77 skip (only when clang cannot link libFuzzer).
#
#   FUZZ_SECONDS=30 (default in make check)   O=build
#   FUZZ_SECONDS=3600 sh tests/fuzz/run-fuzz-reader.sh     a long run
#
# Crashes go to $O/tests/fuzz/artifacts/ (replay: $O/tests/fuzz/fuzz-reader FILE).
# timeout: 120
cd "$(dirname "$0")/../.." || exit 1
O=${O:-build}
CLANG=${CLANG:-clang}
BIN=$O/tests/fuzz/fuzz-reader
CORPUS=$O/tests/fuzz/reader-corpus
ART=$O/tests/fuzz/artifacts
SECS=${FUZZ_SECONDS:-30}

if ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
		"$CLANG" -fsanitize=fuzzer -x c - -o /dev/null 2>/dev/null; then
	echo "SKIP: $CLANG cannot link libFuzzer (-fsanitize=fuzzer): install clang and libclang-rt-dev"
	exit 77
fi
[ -x "$BIN" ] || { echo "FAIL: $BIN is missing: run 'make check-build'"; exit 1; }
mkdir -p "$CORPUS" "$ART"

# libFuzzer's own error exit code is 77, which the runner reads as a skip
"$BIN" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
	-error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 \
	-artifact_prefix="$ART/" "$CORPUS"
rc=$?
if [ $rc -ne 0 ]; then
	echo "FAIL: fuzz-reader exited $rc; reproducer(s) in $ART/:"
	ls -t "$ART" | head -5
	exit 1
fi
echo "PASS: fuzz-reader ran ${SECS}s without a failure ($(ls "$CORPUS" | wc -l) inputs in the corpus)"
exit 0
