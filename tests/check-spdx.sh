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
# which file holds the id of each (FILE or FILE.license), and the id wanted:
# "FILE WANT SOURCE" lines; then one grep reads every id (a grep per file
# took over 60 s on a loaded machine)
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
	echo "$f $want $src"
done > "${TMPDIR:-/tmp}/spdx-want.$$"
trap 'rm -f "${TMPDIR:-/tmp}/spdx-want.$$"' EXIT
awk '{ print $1 }' "${TMPDIR:-/tmp}/spdx-want.$$" | sort -u |
	xargs -r grep -a -m1 -o -H 'SPDX-License-Identifier: *[^ *>]*' |
	awk -v want="${TMPDIR:-/tmp}/spdx-want.$$" '
	{ f = $0; sub(/:SPDX-License-Identifier:.*/, "", f)
	  id = $0; sub(/.*:SPDX-License-Identifier: */, "", id)
	  if (!(f in got)) got[f] = id }
	END {
		while ((getline line < want) > 0) {
			split(line, w, " "); f = w[1]; need = w[2]; src = w[3]
			id = got[f]
			if (id == "") {
				printf "%s: no SPDX-License-Identifier: add \047%s\047 in a comment (or a %s.license file)\n", src, need, src
				bad = 1
			} else if (id != need) {
				if (id ~ /^(GPL-2\.0|LGPL-2\.[01]|GPL-3\.0|LGPL-3\.0)\+?$/)
					why = "deprecated SPDX id"
				else
					why = "not the license of this part of the tree"
				printf "%s: \047%s\047 is a %s: use \047%s\047 (see COPYING)\n", src, id, why, need
				bad = 1
			}
		}
		exit bad
	}' || exit 1
echo "every file carries its SPDX id"
