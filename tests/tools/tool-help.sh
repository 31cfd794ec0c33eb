#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 30
# `tracemap --help` matches Documentation/tracemap.1.txt: the same synopsis
# lines, and the same set of options in the help and in OPTIONS.
. "$(dirname "$0")/../lib.sh"
tl_require_tracemap
PAGE=${TRACEMAP_PAGE:-$PWD/Documentation/tracemap.1.txt}
[ -f "$PAGE" ] || tl_fail "no $PAGE"
cd "$TL_TMP" || exit 1

"$TM" --help > help.txt || tl_fail "tracemap --help exited $?"

# the usage block of --help: first lines up to the blank one, continuation
# lines joined, "usage:" dropped, blanks collapsed
awk 'NF == 0 { exit }
	{ sub(/^usage:/, ""); sub(/^ +/, "") }
	/^\[/ { line = line " " $0; next }
	{ if (line != "") print line; line = $0 }
	END { if (line != "") print line }' help.txt | tr -s ' ' > help.syn

# the SYNOPSIS of the page, asciidoc markup dropped, joined the same way
awk '/^SYNOPSIS$/ { s = 1; next }
	s && /^[A-Z][A-Z ]*$/ { exit }
	s && (/^-+$/ || /^\[verse\]$/ || NF == 0) { next }
	s { gsub(/pass:\[|\]pass/, ""); gsub(/[*_]/, ""); sub(/^ +/, "")
	    if ($0 ~ /^\[/) { line = line " " $0; next }
	    if (line != "") print line; line = $0 }
	END { if (line != "") print line }' "$PAGE" | tr -s ' ' > page.syn

[ -s help.syn ] || tl_fail "no usage lines in --help"
diff -u page.syn help.syn || tl_fail "the synopsis of --help differs from $PAGE"

# options: every -x / --long-option named in --help, and those the page
# documents in OPTIONS ("*-x*" or "*--long*" terms)
grep -oE '(^|[ [|])--?[A-Za-z][a-z-]*' help.txt | sed 's/^[ [|]//' | sort -u > help.opt
awk '/^OPTIONS$/ { s = 1; next } s && /^[A-Z][A-Z ]*$/ { exit } s && /::$/ { print }' "$PAGE" |
	grep -oE '\*--?[A-Za-z][a-z-]*\*' | tr -d '*' | sort -u > page.opt
[ "$(wc -l < page.opt)" -ge 10 ] || tl_fail "only $(wc -l < page.opt) options found in $PAGE"
diff -u page.opt help.opt || tl_fail "the options of --help and of $PAGE's OPTIONS differ"
tl_log "$(wc -l < help.syn) synopsis lines and $(wc -l < help.opt) options match"
exit 0
