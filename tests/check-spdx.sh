#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 60
# Every file of the tree carries a current SPDX license id, and the one of
# its area: LGPL-2.1-only for the library (lib/, include/), GPL-2.0-only for
# everything else. A file that cannot hold a comment (an image, a copied
# report) has a FILE.license beside it, a directory of such data a
# DIR.license. Fails on a missing id, on a
# deprecated one (LGPL-2.1, GPL-2.0, GPL-2.0+...) and on the wrong one.
#
#   check-spdx.sh [DIR]      DIR: the top of the tree (default: .)
cd "${1:-.}" || exit 1
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
	files=$(git ls-files)
else
	files=$(find . -path ./build -prune -o -path ./debian/.debhelper -prune -o \
		-path './debian/tmp' -prune -o -type f -print | sed 's,^\./,,' |
		grep -v -e '^debian/[a-z0-9-]*/' -e '^\.git/')
fi
# a directory of data that cannot hold comments (captured kernel formats)
# is covered by the DIR.license beside it
for l in $(echo "$files" | grep '\.license$'); do
	d=${l%.license}
	[ -d "$d" ] && files=$(echo "$files" | grep -v "^$d/")
done
bad=0
for f in $files; do
	[ -f "$f" ] || continue
	case $f in
	LICENSES/*|COPYING|debian/copyright) continue ;;	# the license texts and statement
	debian/changelog|debian/source/format)	# no comment syntax: debian/copyright covers them
		continue ;;
	lib/*|include/*) want=LGPL-2.1-only ;;
	*) want=GPL-2.0-only ;;
	esac
	src=$f
	case $f in *.license) src=${f%.license} ;; esac
	[ -f "$f.license" ] && src=$f && f=$f.license
	id=$(grep -a -m1 -o 'SPDX-License-Identifier: *[^ *>]*' "$f" | sed 's/.*: *//')
	if [ -z "$id" ]; then
		echo "$src: no SPDX-License-Identifier: add '$want' in a comment (or a $src.license file)"
		bad=1
	elif [ "$id" != "$want" ]; then
		case $id in
		GPL-2.0|GPL-2.0+|LGPL-2.1|LGPL-2.1+|LGPL-2.0|LGPL-2.0+|GPL-3.0|GPL-3.0+|LGPL-3.0|LGPL-3.0+)
			why="deprecated SPDX id" ;;
		*)	why="not the license of this part of the tree" ;;
		esac
		echo "$src: '$id' is a $why: use '$want' (see COPYING)"
		bad=1
	fi
done
[ $bad -eq 0 ] || exit 1
echo "every file carries its SPDX id"
