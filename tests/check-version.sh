#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 60
# The release version lives in the Makefile alone; tracemap --version, the
# soname, libtracemap.pc and debian/changelog must all say the same.
cd "$(dirname "$0")/.." || exit 1
v=$(make -s --no-print-directory version) || exit 1
major=${v%%.*}
bad=0
check() { [ "$2" = "$3" ] || { echo "FAIL: $1 says '$2', the Makefile '$3'"; bad=1; }; }
check "build/tracemap --version" "$(build/tracemap --version | sed 's/^tracemap //')" "$v"
check "the soname of build/libtracemap.so" \
	"$(readelf -d build/libtracemap.so | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')" "libtracemap.so.$major"
check "build/libtracemap.pc" "$(sed -n 's/^Version: //p' build/libtracemap.pc)" "$v"
check "debian/changelog" "$(sed -n '1s/^tracemap (\([^)]*\)).*/\1/p' debian/changelog)" "$v"
[ $bad -eq 0 ] && echo "version $v everywhere"
exit $bad
