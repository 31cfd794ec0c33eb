#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 60
# Messages name the real cause: a user who may not read tracefs is told
# so (not a table of "?" with exit 0, not "the instance does not exist");
# an instance name no instance can have gets no mkdir advice; no command
# mounts tracefs behind the user's back: each says it is not mounted.
. "$(dirname "$0")/../lib.sh"
tl_require_root
tl_require_tracemap
cd "$TL_TMP" || exit 1
command -v setpriv > /dev/null || tl_skip "setpriv (util-linux) is missing"
command -v unshare > /dev/null || tl_skip "unshare (util-linux) is missing"
inst=$(tl_instance msg)
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# expect CMD...: exit 1 and the message in err.txt; nothing on stdout
expect_error() {
	"$@" > out.txt 2> err.txt
	rc=$?
	[ $rc -eq 1 ] || { cat out.txt err.txt; tl_fail "'$*' exited $rc, expected 1"; }
	[ -s out.txt ] && { cat out.txt; tl_fail "'$*' printed a result anyway"; }
	[ "$(grep -c . err.txt)" -eq 1 ] || { cat err.txt; tl_fail "'$*': not one message"; }
	sed 's/^/# /' err.txt
}

# 1. not root
expect_error nobody "$TM" stat
grep -q "no permission to read $TL_TRACEFS.*root" err.txt || tl_fail "stat as nobody: no word on permission"
expect_error nobody "$TM" stat -B "$inst"
grep -q "no permission" err.txt || tl_fail "stat -B as nobody: no word on permission"
grep -q "does not exist\|mkdir" err.txt && tl_fail "stat -B as nobody blames a missing instance"

# 2. a name longer than any file name
long=$(printf '%0300d' 0)
expect_error "$TM" stat -B "$long"
grep -q "at most 255 bytes" err.txt || tl_fail "no word on the name's length"
grep -q mkdir err.txt && tl_fail "mkdir advice for a name mkdir refuses"

# 3. tracefs not mounted (a private mount namespace without it): stat and
# stream refuse and mount nothing
unshare -m --propagation private sh -c '
	for m in $(awk "\$3 == \"tracefs\" { print \$2 }" /proc/mounts | sort -r); do
		umount "$m" || exit 3
	done
	grep -q " tracefs " /proc/mounts && exit 3
	"$1" stat > stat.out 2> stat.err; echo $? > stat.rc
	grep -c " tracefs " /proc/mounts > stat.mounts
	"$1" stream -B "$2" > stream.out 2> stream.err; echo $? > stream.rc
	grep -c " tracefs " /proc/mounts > stream.mounts
	exit 0
' sh "$TM" "tmtest-msg-$$-none" || tl_fail "could not hide tracefs in a mount namespace"
sed 's/^/# /' stat.err stream.err
for c in stat stream; do
	[ "$(cat $c.rc)" = 1 ] || tl_fail "$c without tracefs exited $(cat $c.rc)"
	[ "$(cat $c.mounts)" = 0 ] || tl_fail "$c mounted tracefs"
	grep -q "tracefs is not mounted.*mount -t tracefs" $c.err || tl_fail "$c does not say tracefs is not mounted"
done
echo "messages: all checks passed"
