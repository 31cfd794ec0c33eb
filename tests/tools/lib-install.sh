#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 900
# A packager's build and install: make with dpkg-buildflags' LDFLAGS in a
# build directory of its own, then make install PREFIX=<tmp>. Every file
# lands under <tmp> (the KernelShark plugin too), the library in the
# multiarch LIBDIR, every installed ELF file carries the LDFLAGS (BIND_NOW)
# and no rpath into the build tree; the installed libtracemap.pc points to
# <tmp>, and the EXAMPLE programs of libtracemap-stream(3) and
# libtracemap-event(3) build against the installed library through
# pkg-config alone and run: the stream example prints the switches of a task
# on a private instance. make uninstall then leaves no file behind.
. "$(dirname "$0")/../lib.sh"
tl_require_tracemap
top=$PWD
p=$TL_TMP/prefix
o=$TL_TMP/build

make -s -C "$top" O="$o" LDFLAGS="-Wl,-z,relro -Wl,-z,now" install PREFIX="$p" \
	> "$TL_TMP/install.log" 2>&1 ||
	{ cat "$TL_TMP/install.log"; tl_fail "make install PREFIX=$p failed"; }
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)
lib=$p/lib${ma:+/$ma}
[ -f "$lib/libtracemap.so.0" ] || tl_fail "libtracemap.so.0 is not in $lib: $(find "$p" -name 'libtracemap.so*')"
find "$p" -type f > "$TL_TMP/files"
for f in $(cat "$TL_TMP/files"); do
	head -c 4 "$f" | grep -q ELF || continue
	readelf -d "$f" | grep -q 'BIND_NOW' || tl_fail "$f was linked without LDFLAGS (no BIND_NOW)"
	! readelf -d "$f" | grep -E 'RPATH|RUNPATH' ||
		tl_fail "$f carries an rpath: $(readelf -d "$f" | grep -E 'RPATH|RUNPATH')"
done
if [ -f "$top/build/plugins/kernelshark/plugin-tracemap.so" ]; then
	[ -f "$lib/kernelshark/plugins/plugin-tracemap.so" ] ||
		tl_fail "the KernelShark plugin is not under $p: $(grep -i 'install.*plugin-tracemap' "$TL_TMP/install.log")"
fi
tl_log "$(wc -l < "$TL_TMP/files") files installed under $p, with LDFLAGS, without rpath"
export PKG_CONFIG_PATH="$lib/pkgconfig"
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
	cc -o "$page-static" "$page.c" "$lib/libtracemap.a" \
		$(pkg-config --cflags --static --libs libtracemap | sed 's/-ltracemap//') 2> cc.log ||
		{ cat cc.log; tl_fail "$page's EXAMPLE does not link the static library"; }
done
tl_log "both EXAMPLEs built with pkg-config against $p"

tl_require_root
inst=$(tl_instance in)
slp=$TL_TMP/tminslp
cp "$(command -v sleep)" "$slp" || tl_fail "cannot copy sleep"
LD_LIBRARY_PATH=$lib ./libtracemap-stream "$inst" > out.txt 2> err.txt &
pid=$!
tl_bg $pid
tl_wait 10 tl_file_is "$TL_TRACEFS/instances/$inst/events/sched/sched_switch/enable" 1 ||
	{ cat err.txt; tl_fail "the installed example did not enable sched_switch"; }
"$slp" 0.05
tl_wait 10 grep -q ' tminslp:[0-9]* -> ' out.txt || tl_fail "no switch of tminslp printed"
kill -INT $pid
wait $pid || { cat err.txt; tl_fail "the installed example exited $? after SIGINT"; }
LD_LIBRARY_PATH=$lib ldd ./libtracemap-stream | grep -q "$lib/libtracemap.so" || tl_fail "not linked to $lib"
tl_log "the installed example ran: $(wc -l < out.txt) switches"

make -s -C "$top" O="$o" uninstall PREFIX="$p" > "$TL_TMP/uninstall.log" 2>&1 ||
	{ cat "$TL_TMP/uninstall.log"; tl_fail "make uninstall PREFIX=$p failed"; }
left=$(find "$p" ! -type d)
[ -z "$left" ] || tl_fail "make uninstall left: $left"
tl_log "make uninstall removed every file"
exit 0
