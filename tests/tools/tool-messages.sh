#!/bin/sh
# timeout: 60
# Messages name the real cause: a user who may not read tracefs is told
# so (not a table of "?" with exit 0, not "the instance does not exist");
# an instance name no instance can have gets no mkdir advice; a command
# that only looks (stat) does not mount tracefs behind the user's back and
# one that needs it (stream) says that it mounted it.
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

# 3. tracefs not mounted (a private mount namespace without it): stat refuses
# and mounts nothing; stream mounts it and says so
unshare -m --propagation private sh -c '
	for m in $(awk "\$3 == \"tracefs\" { print \$2 }" /proc/mounts | sort -r); do
		umount "$m" || exit 3
	done
	grep -q " tracefs " /proc/mounts && exit 3
	"$1" stat > stat.out 2> stat.err; echo $? > stat.rc
	grep -c " tracefs " /proc/mounts > stat.mounts
	"$1" stream -B "$2" > stream.out 2> stream.err; echo $? > stream.rc
' sh "$TM" "tmtest-msg-$$-none" || tl_fail "could not hide tracefs in a mount namespace"
sed 's/^/# /' stat.err stream.err
[ "$(cat stat.rc)" = 1 ] || tl_fail "stat without tracefs exited $(cat stat.rc)"
[ "$(cat stat.mounts)" = 0 ] || tl_fail "stat mounted tracefs"
grep -q "not mounted.*does not mount" stat.err || tl_fail "stat does not say tracefs is not mounted"
grep -q "tracefs was not mounted: mounted it at" stream.err || tl_fail "stream mounted tracefs silently"
echo "messages: all checks passed"
