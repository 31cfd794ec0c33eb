#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 90
# The trace-cmd plugin checks its host when it is loaded: in a program that
# never opens ring buffers with tracefs_cpu_open() (tc-host), and behind a
# libtracefs with a tracefs_cpu_* function the plugin does not serve (a
# stand-in library), it says so once, naming the program, and steps aside;
# in trace-cmd 3.1.6 with libtracefs 1.6 it says once which program it
# serves. LD_PRELOAD set by hand through wrappers (timeout, env, sh -c): the
# wrappers keep it for their children, trace-cmd records through the mapping,
# and the command trace-cmd runs does not get the plugin.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tc-common.shlib"
tc_require
P="$TC_TOP/build/plugins/trace-cmd/libtracemap-tracecmd.so"
HOST="$TC_TOP/build/tests/plugins/tc-host"
STANDIN="$TC_TOP/build/tests/plugins/libtc-standin-tracefs.so"
for f in "$P" "$HOST" "$STANDIN"; do
	[ -e "$f" ] || tl_fail "$f is missing: run 'make all check-build'"
done
cd "$TL_TMP" || exit 1
unset TRACEMAP_TRACECMD

# one_line FILE PATTERN WHAT: the plugin said exactly one line, and it matches
one_line() {
	sed 's/^/# /' "$1"
	[ "$(grep -c 'trace-cmd-mmap: ' "$1")" -eq 1 ] || tl_fail "not one message from the plugin ($3)"
	grep -q -- "$2" "$1" || tl_fail "$3: no line matching '$2'"
}

# 1. a host that opens no ring buffer
LD_PRELOAD=$P "$HOST" > out.txt 2> err.txt || { cat err.txt; tl_fail "tc-host failed"; }
one_line err.txt "tc-host (pid [0-9]*) does not open ring buffers with tracefs_cpu_open().*nothing to do" \
	"a libtracefs program that reads no ring buffer"
grep -q "^tracefs: /" out.txt || tl_fail "the host did not run normally"

# 2. a libtracefs with a tracefs_cpu_* function the plugin does not serve
LD_PRELOAD="$P $STANDIN" trace-cmd list -o > out.txt 2> err.txt ||
	{ cat err.txt; tl_fail "trace-cmd list failed with the stand-in library"; }
one_line err.txt "trace-cmd (pid [0-9]*): .*libtc-standin-tracefs.so has tracefs_cpu_frobnicate.*stepping aside" \
	"an unserved function"

# 3. the supported host: one line naming it
LD_PRELOAD=$P trace-cmd list -o > out.txt 2> err.txt || { cat err.txt; tl_fail "trace-cmd list failed"; }
one_line err.txt "serving the tracefs_cpu_\* calls of trace-cmd (pid [0-9]*) from the ring-buffer mapping (trace-cmd's contract" \
	"trace-cmd"
grep -q . out.txt || tl_fail "trace-cmd list printed nothing"

# 4. wrappers without libtracefs step aside quietly, and keep LD_PRELOAD and
# the settings for their children; verbose names them
LD_PRELOAD=$P timeout 30 env sh -c 'echo "$LD_PRELOAD"' > out.txt 2> err.txt
[ -s err.txt ] && { cat err.txt; tl_fail "the plugin spoke in timeout, env or sh"; }
[ "$(cat out.txt)" = "$P" ] || tl_fail "LD_PRELOAD in sh under timeout and env: '$(cat out.txt)', expected $P"
TRACEMAP_TRACECMD=verbose LD_PRELOAD=$P timeout 30 env sh -c 'echo "$TRACEMAP_TRACECMD"' \
	> out.txt 2> err.txt
sed 's/^/# /' err.txt
for w in timeout env sh; do
	grep -q "no libtracefs in $w (pid [0-9]*): stepping aside, staying in LD_PRELOAD" err.txt ||
		tl_fail "verbose: no line naming $w"
done
[ "$(cat out.txt)" = verbose ] || tl_fail "the settings did not reach sh: '$(cat out.txt)'"

# 5. LD_PRELOAD by hand through timeout and sh -c: trace-cmd records through
# the mapping, and its command gets neither the plugin nor its settings
inst=$(tl_instance tc)
n=2000
wl="echo \"[\$LD_PRELOAD][\$TRACEMAP_TRACECMD]\" > $TL_TMP/workload-env.txt; $(tc_markers_workload "$inst" $n)"
TRACEMAP_TRACECMD=verbose,stats LD_PRELOAD=$P timeout 60 sh -c \
	"exec trace-cmd record -d --no-filter -B $inst -e syscalls:sys_enter_getppid -o by-hand.dat sh -c '$wl'" \
	> rec.log 2>&1
[ $? -ne 124 ] || { cat rec.log; tl_fail "record under timeout did not finish within 60 s"; }
grep 'trace-cmd-mmap: ' rec.log | grep -v ' pages (' | sed 's/^/# /'
grep -q "serving the tracefs_cpu_\* calls of trace-cmd (pid [0-9]*) from the ring-buffer mapping" rec.log ||
	{ cat rec.log; tl_fail "the plugin did not name trace-cmd as the program it serves"; }
tc_expect_mapped rec.log 2
[ "$(cat workload-env.txt)" = "[][]" ] ||
	tl_fail "trace-cmd's command inherited the plugin: $(cat workload-env.txt)"
tc_report by-hand.dat by-hand.txt
tc_expect_seqs by-hand.txt 0 $((2 * n))
echo "host check: all passed ($((2 * n)) markers recorded through timeout and sh -c)"
