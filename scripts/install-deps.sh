#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Install the Debian packages tracemap builds and tests with, when missing.
# Non-interactive; needs root (or sudo) only when something is missing.
#   install-deps.sh           what make, make check and make run need
#   install-deps.sh --bench   and what make bench needs besides (gnuplot for its figures)
#   install-deps.sh --deb     and what make deb and make check-deb need (debhelper, lintian...)
set -e

PKGS="make gcc clang pkg-config libclang-rt-14-dev
libtraceevent-dev libtracefs-dev libtracecmd-dev trace-cmd
libkshark-dev kernelshark libjson-c-dev libcmocka-dev procps
qtbase5-dev python3-dev python3-pytest xvfb x11-apps x11-utils xdotool python3-pil
abigail-tools"
[ "$1" = "--bench" ] && PKGS="$PKGS gnuplot-nox"
[ "$1" = "--deb" ] && PKGS="$PKGS build-essential debhelper dh-python devscripts fakeroot pkgconf
lintian autopkgtest blhc asciidoc-base xmlto docbook-xsl"

missing=
for p in $PKGS; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$st" in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

echo "installing missing packages:$missing"
SUDO=
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 || {
		echo "error: packages missing ($missing) and not root: run 'make deps' as root" >&2
		exit 1
	}
	SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
