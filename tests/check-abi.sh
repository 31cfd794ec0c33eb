#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 300
# The ABI of libtracemap.so is the committed one: the symbols it exports and
# their version node are those of lib/libtracemap.sym, and its types (the
# public structs, their sizes and fields) those of the ABI dump
# lib/libtracemap.abi, compared by abidiff (abigail-tools). An accidental
# export, a removed function or a changed struct fails.
#
# A deliberate change: add the symbols under a new version node in
# lib/libtracemap.map, then
#	nm -D --defined-only --with-symbol-versions build/libtracemap.so	(into libtracemap.sym)
#	abidw --no-corpus-path --headers-dir include build/libtracemap.so > lib/libtracemap.abi
#
# A changed meaning of an exported function (not only a new one) keeps the
# soname: the function gets a new version node, and its old version stays
# as a compatibility symbol with the old behaviour for binaries linked
# before (0.2.0: TRACEMAP_0.3, lib/compat.c), listed here beside the new.
#
#   check-abi.sh [LIB.so]       default build/libtracemap.so
so=${1:-build/libtracemap.so}
[ -f "$so" ] || { echo "FAIL: $so not built: run make"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tracemap-abi.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
rc=0

grep -v '^#' lib/libtracemap.sym > "$tmp/want"
nm -D --defined-only --with-symbol-versions "$so" | awk '{ print $3 }' | sort > "$tmp/got"
if ! diff -u "$tmp/want" "$tmp/got" > "$tmp/sym.diff"; then
	echo "FAIL: $so exports other symbols than lib/libtracemap.sym (+: exported, not listed):"
	tail -n +3 "$tmp/sym.diff" | grep '^[-+]'
	rc=1
else
	echo "# $(wc -l < "$tmp/got") symbols as in lib/libtracemap.sym"
fi

if ! command -v abidiff > /dev/null; then
	echo "FAIL: abidiff not found: install the Debian package abigail-tools (make deps)"
	exit 1
fi
readelf -S "$so" | grep -q '\.debug_info' ||
	{ echo "FAIL: $so has no debug info for abidiff: build it with -g (the default CFLAGS)"; exit 1; }
abidiff --no-added-syms --headers-dir2 include lib/libtracemap.abi "$so" > "$tmp/abi.diff" 2>&1
st=$?
if [ $st -ne 0 ]; then
	echo "FAIL: the ABI of $so differs from lib/libtracemap.abi (abidiff status $st):"
	cat "$tmp/abi.diff"
	rc=1
else
	echo "# types as in lib/libtracemap.abi"
fi
exit $rc
