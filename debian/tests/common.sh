# SPDX-License-Identifier: GPL-2.0-only
# Shared by the autopkgtests: the installed files only (nothing of the
# source tree on PATH, LD_LIBRARY_PATH or PYTHONPATH), a private instance
# removed at exit, a skip (77) only when the kernel cannot map.
unset LD_LIBRARY_PATH PYTHONPATH
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
TMP=${AUTOPKGTEST_TMP:-$(mktemp -d)}
T=/sys/kernel/tracing
[ -d $T/instances ] || mount -t tracefs nodev $T 2>/dev/null
[ -d $T/instances ] || { echo "tracefs is not mounted at $T and cannot be"; exit 1; }
INST=
cleanup() { [ -n "$INST" ] && [ -d "$T/instances/$INST" ] && rmdir "$T/instances/$INST"; }
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }
# new_instance NAME: a private instance of this test
new_instance() {
	INST=$1-$$
	mkdir "$T/instances/$INST" || fail "cannot make the instance $INST"
}
# markers FIRST COUNT: seq=FIRST.. into the instance's trace_marker
markers() {
	i=$1; end=$(($1 + $2))
	while [ $i -lt $end ]; do echo "seq=$i"; i=$((i + 1)); done > "$T/instances/$INST/trace_marker"
}
# expect_seqs FILE FIRST LAST: exactly those markers, in order
expect_seqs() {
	grep -a -o 'seq=[0-9]*' "$1" | cut -d= -f2 > "$TMP/got"
	seq "$2" "$3" > "$TMP/want"
	cmp -s "$TMP/got" "$TMP/want" || fail "$1: expected seq=$2..$3, got $(wc -l < "$TMP/got") markers"
}
