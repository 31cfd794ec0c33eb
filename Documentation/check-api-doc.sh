#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Every public function of include/tracemap.h (each TRACEMAP_API
# declaration) must be named in the NAME section of exactly one
# Documentation/libtracemap-*.txt page, with a SYNOPSIS prototype equal to
# the header's, and listed in the overview libtracemap.txt. Every name a
# NAME section gives must exist, and every structure or enum a page shows
# must have the header's fields. Every page has the sections of the
# libtracefs layout plus ERRORS, in order, and a C EXAMPLE.
#
#   Documentation/check-api-doc.sh [HEADER [PAGE...]]    exit 0 ok, 1 on any finding
# timeout: 300
cd "$(dirname "$0")/.." || exit 1
header=${1:-include/tracemap.h}
[ $# -gt 0 ] && shift
if [ $# -gt 0 ]; then
	pages=$*
else
	pages=$(ls Documentation/libtracemap*.txt 2>/dev/null)
fi
overview=Documentation/libtracemap.txt
[ -f "$header" ] || { echo "FAIL: no $header"; exit 1; }
[ -n "$pages" ] || { echo "FAIL: no Documentation/libtracemap*.txt pages"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-api-doc.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# Prototypes are compared without white space and underscores, with
# asciidoc's pass:[*] read as a pointer star and other stars (bold) dropped.

# header: "name<TAB>prototype" of every TRACEMAP_API declaration
awk '
	/^[ \t]*#/ { next }
	{ s = s " " $0 }
	END {
		while ((i = index(s, "/*")) > 0) {
			e = index(substr(s, i + 2), "*/")
			s = substr(s, 1, i - 1) " " (e ? substr(s, i + 2 + e + 1) : "")
		}
		n = split(s, decl, ";")
		for (k = 1; k <= n; k++) {
			d = decl[k]
			i = index(d, "TRACEMAP_API")
			if (!i)
				continue
			d = substr(d, i + length("TRACEMAP_API"))
			if (!match(d, /[A-Za-z0-9_]+[ \t]*\(/))
				continue
			name = substr(d, RSTART, RLENGTH)
			sub(/[ \t]*\($/, "", name)
			gsub(/[ \t_]/, "", d)
			gsub(/\*/, "@", d)
			print name "\t" d
		}
	}
' "$header" > "$tmp/header" || exit 1

# pages: "page<TAB>name" for NAME sections, "page<TAB>name<TAB>prototype" for SYNOPSIS,
# "page<TAB>:sections<TAB>list" for the section titles
for p in $pages; do
	awk -v page="$p" '
		/^-+$/ && prev ~ /^[A-Z][A-Z ]*$/ {
			sec = prev; titles = titles " " sec; prev = ""; next
		}
		{ prev = $0 }
		sec == "NAME" { names = names " " $0 }
		sec == "SYNOPSIS" && !/^\[verse\]$/ && !/^--$/ && !/#include/ { syn = syn " " $0 }
		END {
			sub(/ - .*/, "", names)
			n = split(names, nm, ",")
			for (k = 1; k <= n; k++) {
				gsub(/[ \t]/, "", nm[k])
				if (nm[k] != "" && nm[k] ~ /^tracemap_/)
					print page "\t" nm[k]
			}
			n = split(syn, decl, ";")
			for (k = 1; k <= n; k++) {
				d = decl[k]
				gsub(/pass:\[\*\]/, "@", d)
				gsub(/\*/, "", d)
				if (!match(d, /[A-Za-z0-9_]+[ \t]*\(/))
					continue
				name = substr(d, RSTART, RLENGTH)
				sub(/[ \t]*\($/, "", name)
				gsub(/[ \t_]/, "", d)
				print page "\t" name "\t" d
			}
			print page "\t:sections\t" titles
		}
	' "$p" >> "$tmp/pages" || exit 1
done

fail=0
nfunc=0
finding() { echo "FAIL: $*"; fail=1; }

while IFS='	' read -r name proto; do
	nfunc=$((nfunc + 1))
	in=$(awk -F'\t' -v n="$name" 'NF == 2 && $2 == n { print $1 }' "$tmp/pages")
	count=$(echo "$in" | grep -c .)
	if [ "$count" -ne 1 ]; then
		finding "$name is named in the NAME section of $count pages (${in:-none}):" \
			"document it in exactly one Documentation/libtracemap-*.txt"
		continue
	fi
	doc=$(awk -F'\t' -v p="$in" -v n="$name" 'NF == 3 && $1 == p && $2 == n { print $3 }' \
		"$tmp/pages")
	if [ -z "$doc" ]; then
		finding "$in: $name has no prototype in SYNOPSIS"
	elif [ "$doc" != "$proto" ]; then
		finding "$in: SYNOPSIS of $name differs from $header" \
			"(page: $doc, header: $proto; compared without blanks and underscores)"
	fi
	if [ "$(basename "$in")" = libtracemap.txt ]; then
		finding "$name belongs on a function-group page, not the overview"
	elif [ -f "$overview" ] && ! grep -q "\\*$name\\*" "$overview"; then
		finding "$overview does not list $name in its index (*$name*(3))"
	fi
done < "$tmp/header"

# names a page gives that the header does not declare
awk -F'\t' 'NF == 2 { print $1 "\t" $2 }' "$tmp/pages" | while IFS='	' read -r p name; do
	cut -f1 "$tmp/header" | grep -qx "$name" ||
		echo "FAIL: $p names $name, which include/tracemap.h does not declare"
done > "$tmp/stale"
[ -s "$tmp/stale" ] && { cat "$tmp/stale"; fail=1; }

# the structures and enums a page shows must be the header's, field by field
bodies() {
	awk '
		/^(struct|enum) tracemap_[a-z_]+ \{$/ { name = $1 " " $2; body = ""; next }
		name != "" && /^\};/ { print name "\t" body; name = ""; next }
		name != "" {
			sub(/\/\*.*\*\//, "")
			gsub(/[ \t]/, "")
			body = body $0
		}
	' "$@"
}
bodies "$header" > "$tmp/bodies"
for p in $pages; do
	bodies "$p" | while IFS='	' read -r name body; do
		want=$(awk -F'\t' -v n="$name" '$1 == n { print $2 }' "$tmp/bodies")
		if [ -z "$want" ]; then
			echo "FAIL: $p shows $name, which $header does not define"
		elif [ "$body" != "$want" ]; then
			echo "FAIL: $p shows $name as '$body', $header defines '$want'" \
				"(compared without blanks and comments)"
		fi
	done
done > "$tmp/structs"
[ -s "$tmp/structs" ] && { cat "$tmp/structs"; fail=1; }

want=" NAME SYNOPSIS DESCRIPTION RETURN VALUE ERRORS EXAMPLE FILES SEE ALSO"
for p in $pages; do
	got=$(awk -F'\t' -v p="$p" '$1 == p && $2 == ":sections" { print $3 }' "$tmp/pages")
	# the sections in order; LICENSE and others may follow
	case "$got" in
	"$want"|"$want "*) ;;
	*) finding "$p: sections are '$got', expected '$want' in this order" ;;
	esac
	sh Documentation/extract-example.sh "$p" > /dev/null || fail=1
done

[ "$nfunc" -gt 0 ] || finding "no TRACEMAP_API declarations found in $header"
if [ $fail -eq 0 ]; then
	echo "ok: $nfunc functions of $header documented in $(echo "$pages" | wc -w) pages"
fi
exit $fail
