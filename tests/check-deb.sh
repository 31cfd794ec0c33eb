#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 3600
# Build the Debian packages from a copy of the tree, install them on this
# machine, run the autopkgtests against the installed files only (the
# tests' PATH, LD_LIBRARY_PATH and PYTHONPATH hold nothing of the tree),
# then purge every package that was not installed before: the machine is
# left as it was. Prints lintian's report, the packages with their sizes and
# the autopkgtest summary. Needs root and the build's tools
# (scripts/install-deps.sh --deb).
#
# The packages and the logs stay in build/deb.
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/deb
[ "$(id -u)" -eq 0 ] || { echo "SKIP: installing packages needs root"; exit 77; }
for t in dpkg-buildpackage dh lintian autopkgtest; do
	command -v $t > /dev/null ||
		{ echo "FAIL: $t not found: run 'sh scripts/install-deps.sh --deb'"; exit 1; }
done
export DEBIAN_FRONTEND=noninteractive
APT="apt-get -y -q -o DPkg::Lock::Timeout=600"
pkglist() { dpkg-query -W -f='${Package}:${Architecture} ${db:Status-Status}\n' | awk '$2 == "installed" { print $1 }' | sort; }

before=$top/build/deb-packages-before
mkdir -p "$top/build" && pkglist > "$before" || exit 1
# the machine as it was: purge what this script added, even on failure
restore() {
	pkglist > "$before.after"
	added=$(comm -13 "$before" "$before.after")
	if [ -n "$added" ]; then
		echo "# purging what this run installed: $(echo $added)"
		# shellcheck disable=SC2086
		$APT purge $added > "$before.purge.log" 2>&1 ||
			{ cat "$before.purge.log"; echo "FAIL: purge failed"; return 1; }
	fi
	pkglist > "$before.end"
	cmp -s "$before" "$before.end" ||
		{ diff "$before" "$before.end"; echo "FAIL: the installed packages differ from before"; return 1; }
}
trap 'rc=$?; restore || rc=1; exit $rc' EXIT
trap 'exit 1' INT TERM

ver=$(make -s --no-print-directory -C "$top" version)
src=$out/tracemap-$ver
echo "# make deb: building the packages in $src"
make -C "$top" deb > "$top/build/deb.log" 2>&1 ||
	{ tail -40 "$top/build/deb.log"; echo "FAIL: make deb failed (log: build/deb.log)"; exit 1; }
changes=$(ls "$out"/tracemap_*.changes)

echo "# lintian"
lintian --info --display-info --pedantic "$changes" > "$out/lintian.txt" 2>&1
cat "$out/lintian.txt"
grep -E '^[EW]: ' "$out/lintian.txt" && { echo "FAIL: lintian reports errors or warnings"; exit 1; }

echo "# packages"
for d in "$out"/*.deb; do
	printf '%-60s %8s bytes, installed %s KiB\n' "$(basename "$d")" "$(stat -c %s "$d")" \
		"$(dpkg-deb -f "$d" Installed-Size)"
done

echo "# installing"
# shellcheck disable=SC2046
$APT install $(ls "$out"/*.deb) > "$out/install.log" 2>&1 ||
	{ cat "$out/install.log"; echo "FAIL: the packages do not install"; exit 1; }

echo "# autopkgtest against the installed packages"
unset LD_LIBRARY_PATH PYTHONPATH
PATH=/usr/sbin:/usr/bin:/sbin:/bin autopkgtest -B --ignore-restrictions=isolation-machine \
	--output-dir "$out/autopkgtest" "$src" -- null > "$out/autopkgtest.log" 2>&1
st=$?
sed -n '/@@@@@@@@@@@@@@@@@@@@ summary/,$p' "$out/autopkgtest.log"
[ $st -eq 0 ] || { tail -60 "$out/autopkgtest.log"; echo "FAIL: autopkgtest exit status $st"; exit 1; }
echo "PASS: the packages build, are lintian clean, install and pass their autopkgtests"
