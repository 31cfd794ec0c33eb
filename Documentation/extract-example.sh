#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Print the C program of a man page's EXAMPLE section: the first block
# marked [source,c] after the "EXAMPLE" title, between its asciidoc
# delimiters (a line of two or more dashes, closed by the same line).
#
#   extract-example.sh PAGE.txt      the program on stdout; exit 1 if none
#   extract-example.sh -l PAGE.txt...  the pages that have one
list=
if [ "$1" = "-l" ]; then
	list=1
	shift
fi
for page in "$@"; do
	awk '
	state == 0 && $0 == "EXAMPLE"            { state = 1; next }
	state == 1 && $0 == "[source,c]"         { state = 2; next }
	state == 1 && /^[A-Z][A-Z ]*$/           { exit }
	state == 2 && /^--+$/                    { delim = $0; state = 3; next }
	state == 2                               { exit }
	state == 3 && $0 == delim                { state = 4; exit }
	state == 3 && !list                      { print }
	END                                      { exit state == 4 ? 0 : 1 }
	' list="$list" "$page"
	rc=$?
	if [ -n "$list" ]; then
		[ $rc -eq 0 ] && echo "$page"
	elif [ $rc -ne 0 ]; then
		echo "$page: no [source,c] block delimited by -- or ---- after the EXAMPLE title" >&2
		exit 1
	fi
done
exit 0
