#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Render one asciidoc man page to roff, with asciidoc + xmlto (docbook-xsl)
# or else asciidoctor. Every name of the NAME section gets a file: the
# first holds the page, the others are ".so" links to it.
#
#   render-man.sh PAGE.txt OUTDIR VERSION
#   render-man.sh --check        exit 0 when a renderer is installed, else say what to install
#   MAN_TOOL=asciidoctor         prefer asciidoctor when both are installed

# asciidoc runs "python3 -m asciidoc": a python3 earlier in PATH (pyenv,
# a virtualenv) may lack the module that Debian installs for /usr/bin/python3.
find_asciidoc() {
	if asciidoc --version >/dev/null 2>&1; then
		echo asciidoc
	elif [ -x /usr/bin/python3 ] && /usr/bin/python3 -m asciidoc --version >/dev/null 2>&1; then
		echo "/usr/bin/python3 -m asciidoc"
	fi
}

ASCIIDOC=$(find_asciidoc)
XMLTO=$(command -v xmlto)
ASCIIDOCTOR=$(command -v asciidoctor)

if [ "$MAN_TOOL" = asciidoctor ] && [ -n "$ASCIIDOCTOR" ]; then
	tool=asciidoctor
elif [ -n "$ASCIIDOC" ] && [ -n "$XMLTO" ] && [ "$MAN_TOOL" != asciidoctor ]; then
	tool=asciidoc
elif [ -n "$ASCIIDOCTOR" ]; then
	tool=asciidoctor
else
	echo "cannot render the man pages: neither asciidoc with xmlto nor asciidoctor is" \
	     "installed; install them with 'apt-get install asciidoc-base xmlto docbook-xsl'" \
	     "(or 'apt-get install asciidoctor')" >&2
	exit 1
fi
[ "$1" = "--check" ] && exit 0

page=$1 out=$2 version=$3
if [ ! -f "$page" ] || [ -z "$out" ] || [ -z "$version" ]; then
	echo "usage: $0 PAGE.txt OUTDIR VERSION" >&2
	exit 2
fi
mkdir -p "$out" || exit 1

# the title "name(N)" is the first line that is not an asciidoc comment (the
# SPDX line); the section from it, the names from "NAME\n----\na, b - what"
titleline=$(grep -v -m1 '^//' "$page")
sec=$(echo "$titleline" | sed -n 's/.*(\([0-9]\))$/\1/p')
names=$(awk '
	prev == "NAME" && /^-+$/ { on = 1; next }
	on && /^$/               { exit }
	on                       { s = s " " $0 }
	                         { prev = $0 }
	END                      { sub(/ - .*/, "", s); gsub(/,/, " ", s); print s }
' "$page")
first=$(echo $names | cut -d' ' -f1)
if [ -z "$sec" ] || [ -z "$first" ]; then
	echo "$page: expected a title 'name(N)' and a NAME section 'name, ... - purpose'" >&2
	exit 1
fi

base=$(basename "$page" .txt)
# the commands' pages are tracemap's, the library's libtracemap's
if [ "$sec" = 1 ]; then
	source=tracemap manual="tracemap Manual"
else
	source=libtracemap manual="libtracemap Manual"
fi
case $tool in
asciidoc)
	# shellcheck disable=SC2086
	# asciidoc warns about more than nine names: they are linked below
	$ASCIIDOC -b docbook -d manpage -a "mansource=$source" -a "manversion=$version" \
		-a "manmanual=$manual" -a "author=tracemap developers" \
		-o "$out/$base.xml" "$page" 2> "$out/$base.log"
	rc=$?
	grep -v 'too many manpage names' "$out/$base.log" >&2
	[ $rc -eq 0 ] || exit 1
	"$XMLTO" --stringparam man.output.quietly=1 --stringparam refentry.meta.get.quietly=1 \
		--stringparam man.authors.section.enabled=0 \
		-o "$out" man "$out/$base.xml" || exit 1
	;;
asciidoctor)
	"$ASCIIDOCTOR" -b manpage -d manpage -a compat-mode -a "mansource=$source" \
		-a "manversion=$version" -a "manmanual=$manual" \
		-o "$out/$first.$sec" "$page" || exit 1
	;;
esac

# asciidoc passes at most nine names to docbook; link every missing one,
# and the page's own name (libtracemap-cpu) that SEE ALSO sections use
[ -f "$out/$first.$sec" ] || { echo "$page: $out/$first.$sec was not written" >&2; exit 1; }
# (a command's title is upper case, "TRACEMAP(1)": that is the page itself)
title=$(echo "$titleline" | sed -n 's/(.*//p' | tr '[:upper:]' '[:lower:]')
for n in $names $title; do
	[ -f "$out/$n.$sec" ] || echo ".so man$sec/$first.$sec" > "$out/$n.$sec"
done
exit 0
