#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
# make install PREFIX=<tmp> after the build installs a libtracemap.pc that
# points to <tmp>, and the EXAMPLE programs of libtracemap-stream(3) and
# libtracemap-event(3) build against the installed library through
# pkg-config alone and run: the stream example prints the switches of a
# task on a private instance.
. "$(dirname "$0")/../lib.sh"
tl_require_tracemap
top=$PWD
p=$TL_TMP/prefix

make -s -C "$top" install PREFIX="$p" > "$TL_TMP/install.log" 2>&1 ||
	{ cat "$TL_TMP/install.log"; tl_fail "make install PREFIX=$p failed"; }
export PKG_CONFIG_PATH="$p/lib/pkgconfig"
[ "$(pkg-config --variable=prefix libtracemap)" = "$p" ] ||
	tl_fail "the installed libtracemap.pc says prefix=$(pkg-config --variable=prefix libtracemap)"
pkg-config --cflags libtracemap | grep -q -- "-I$p/include" ||
	tl_fail "pkg-config --cflags libtracemap: $(pkg-config --cflags libtracemap)"
[ -f "$p/include/tracemap.h" ] || tl_fail "no $p/include/tracemap.h"

cd "$TL_TMP" || exit 1
for page in libtracemap-stream libtracemap-event; do
	sh "$top/Documentation/extract-example.sh" "$top/Documentation/$page.txt" > "$page.c" ||
		tl_fail "no EXAMPLE in $page.txt"
	# shellcheck disable=SC2046
	cc -o "$page" "$page.c" $(pkg-config --cflags --libs libtracemap) 2> cc.log ||
		{ cat cc.log; tl_fail "$page's EXAMPLE does not build against the installed library"; }
	# and statically, with what pkg-config --static adds
	# shellcheck disable=SC2046
	cc -o "$page-static" "$page.c" "$p/lib/libtracemap.a" \
		$(pkg-config --cflags --static --libs libtracemap | sed 's/-ltracemap//') 2> cc.log ||
		{ cat cc.log; tl_fail "$page's EXAMPLE does not link the static library"; }
done
tl_log "both EXAMPLEs built with pkg-config against $p"

tl_require_root
inst=$(tl_instance in)
slp=$TL_TMP/tminslp
cp "$(command -v sleep)" "$slp" || tl_fail "cannot copy sleep"
LD_LIBRARY_PATH=$p/lib ./libtracemap-stream "$inst" > out.txt 2> err.txt &
pid=$!
tl_bg $pid
tl_wait 10 tl_file_is "$TL_TRACEFS/instances/$inst/events/sched/sched_switch/enable" 1 ||
	{ cat err.txt; tl_fail "the installed example did not enable sched_switch"; }
"$slp" 0.05
tl_wait 10 grep -q ' tminslp:[0-9]* -> ' out.txt || tl_fail "no switch of tminslp printed"
kill -INT $pid
wait $pid || { cat err.txt; tl_fail "the installed example exited $? after SIGINT"; }
LD_LIBRARY_PATH=$p/lib ldd ./libtracemap-stream | grep -q "$p/lib/libtracemap.so" || tl_fail "not linked to $p/lib"
tl_log "the installed example ran: $(wc -l < out.txt) switches"
exit 0
