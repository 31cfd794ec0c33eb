# SPDX-License-Identifier: GPL-2.0-only
# Shared helpers of the black-box shell tests. Source it:  . tests/lib.sh
#
# Every instance made with tl_instance is removed at exit, on failure and on
# INT/TERM; tl_skip exits 77 with a reason, tl_fail exits 1.

TL_TRACEFS=${TL_TRACEFS:-/sys/kernel/tracing}
TL_INSTANCES=
TL_TMP=$(mktemp -d "${TMPDIR:-/tmp}/tracemap-test.XXXXXX")
TL_PIDS=

tl_cleanup() {
	_rc=$?
	for p in $TL_PIDS; do kill "$p" 2>/dev/null; done
	for p in $TL_PIDS; do wait "$p" 2>/dev/null; done
	# tl_instance usually runs in $(...): its names come back through a file
	for i in $TL_INSTANCES $(cat "$TL_TMP/instances" 2>/dev/null); do
		d="$TL_TRACEFS/instances/$i"
		[ -d "$d" ] || continue
		echo 0 > "$d/tracing_on" 2>/dev/null
		n=0
		while ! rmdir "$d" 2>/dev/null && [ $n -lt 50 ]; do
			sleep 0.1; n=$((n + 1))
		done
	done
	# a failed test's files (its logs, screenshots, traces) are copied under
	# TL_KEEP_FAILED when it is set (the guests of tests/kernels do)
	if [ "$_rc" != 0 ] && [ "$_rc" != 77 ] && [ -n "${TL_KEEP_FAILED:-}" ]; then
		mkdir -p "$TL_KEEP_FAILED" &&
			cp -a "$TL_TMP" "$TL_KEEP_FAILED/$(basename "$0" .sh).$$" 2>/dev/null
	fi
	rm -rf "$TL_TMP"
}
trap tl_cleanup EXIT
trap 'exit 130' INT TERM HUP

tl_skip() { echo "SKIP: $*"; exit 77; }
tl_fail() { echo "FAIL: $*" >&2; exit 1; }
tl_log() { echo "# $*"; }

# Remember a background pid so cleanup kills it.
tl_bg() { TL_PIDS="$TL_PIDS $1"; }

tl_require_root() {
	[ "$(id -u)" -eq 0 ] || tl_skip "needs root for tracefs"
	[ -d "$TL_TRACEFS/instances" ] || tl_skip "tracefs is not mounted at $TL_TRACEFS"
}

# tl_require_tracemap: TM is the tracemap command under test (TRACEMAP
# overrides the build tree's), and it is built.
tl_require_tracemap() {
	TM=${TRACEMAP:-$PWD/build/tracemap}
	[ -x "$TM" ] || tl_fail "$TM is not built: run make"
}

# tl_wait TIMEOUT_S COMMAND...: run COMMAND every 50 ms until it succeeds;
# returns 1 when TIMEOUT_S seconds passed first (times TEST_TIMEOUT_SCALE,
# which tests/run-tests.sh passes on: a guest under TCG is that much slower).
tl_wait() {
	_end=$(( $(date +%s) + $1 * ${TEST_TIMEOUT_SCALE:-1} )); shift
	while ! "$@"; do
		[ "$(date +%s)" -lt "$_end" ] || return 1
		sleep 0.05
	done
}

# tl_file_is FILE VALUE: FILE holds VALUE (a condition for tl_wait)
tl_file_is() { [ "$(cat "$1" 2>/dev/null)" = "$2" ]; }

# tl_gone PID: PID has ended: gone, or a zombie not reaped yet (a condition
# for tl_wait)
tl_gone() { [ ! -e "/proc/$1" ] || grep -qs ') Z' "/proc/$1/stat"; }

# tl_ended PID WHAT: PID, a child of this shell, ends within 10 s (WHAT is
# what should end it); its exit status in tl_rc
tl_ended() {
	tl_wait 10 tl_gone "$1" || tl_fail "$2 did not end the stream within 10 s"
	wait "$1"
	tl_rc=$?
}

# tl_stream_started IDIR ERR: a `tracemap stream -e sched:sched_switch` of
# instance directory IDIR has started: sched_switch is on, then sched_waking
# (the stream's own, enabled last); otherwise ERR (its stderr) is shown
tl_stream_started() {
	{ tl_wait 10 tl_file_is "$1/events/sched/sched_switch/enable" 1 &&
		tl_wait 10 tl_file_is "$1/events/sched/sched_waking/enable" 1; } ||
		{ cat "$2"; tl_fail "the stream did not start"; }
}

# tl_stream_killed INST SIG: `tracemap stream -B INST -e sched:sched_switch`
# (its output in out.txt and err.txt) started, then SIG sent: it ends; its
# pid in tm, its exit status in tl_rc
tl_stream_killed() {
	"$TM" stream -B "$1" -e sched:sched_switch > out.txt 2> err.txt &
	tm=$!
	tl_bg $tm
	tl_stream_started "$TL_TRACEFS/instances/$1" err.txt
	kill -"$2" $tm
	tl_ended $tm "SIG$2"
}

# tl_put_back IDIR BEFORE WHAT: after WHAT, IDIR is as BEFORE (tl_instance_state's
# output) says, and no state file is left in $TRACEMAP_STATE_DIR
tl_put_back() {
	tl_instance_state "$1" > "$TL_TMP/put-back.txt"
	diff -u "$2" "$TL_TMP/put-back.txt" || tl_fail "$3: the instance was not put back"
	[ -z "$(ls "${TRACEMAP_STATE_DIR:?}" 2> /dev/null)" ] || tl_fail "$3: a state file was left"
}

# tl_tests_to_interrupt: three tests in the current directory for a run that
# Ctrl-C stops: ok.sh passes; long.sh runs until a signal (its pid and its
# child's in long.pid and long.child; long.cleaned once it cleaned up);
# after.sh touches after.ran
tl_tests_to_interrupt() {
	printf '#!/bin/sh\nexit 0\n' > ok.sh
	cat > long.sh <<EOS
#!/bin/sh
trap 'echo cleaned > "$PWD/long.cleaned"; exit 130' TERM INT
sleep 600 &
echo \$! > "$PWD/long.child"
echo \$\$ > "$PWD/long.pid"
wait
EOS
	printf '#!/bin/sh\ntouch "%s/after.ran"\n' "$PWD" > after.sh
	chmod +x ok.sh long.sh after.sh
}

# tl_interrupted OUT: after the stop, long.sh cleaned up, it and its child are
# gone and after.sh did not run (OUT, the run's output, is shown otherwise)
tl_interrupted() {
	[ -f long.cleaned ] || { cat "$1"; tl_fail "the interrupted test did not get to clean up"; }
	tl_wait 10 sh -c "! kill -0 $(cat long.pid) 2> /dev/null && ! kill -0 $(cat long.child) 2> /dev/null" ||
		tl_fail "the interrupted test or its child still runs"
	[ ! -e after.ran ] || { cat "$1"; tl_fail "a test after the interrupted one ran"; }
}

# tl_instance TAG [buffer_kb]: create a uniquely named instance, print its name.
tl_instance() {
	name="tmtest-$1-$$-$(date +%s%N | tail -c 7)"
	mkdir "$TL_TRACEFS/instances/$name" || tl_fail "cannot create instance $name"
	TL_INSTANCES="$TL_INSTANCES $name"
	echo "$name" >> "$TL_TMP/instances"
	[ -n "$2" ] && echo "$2" > "$TL_TRACEFS/instances/$name/buffer_size_kb"
	echo "$name"
}

# Register an instance created by someone else (e.g. trace-cmd -B) for cleanup.
tl_track_instance() { TL_INSTANCES="$TL_INSTANCES $1"; }

# tl_stack_own IDIR: true when IDIR's options/func_stack_trace is proven its
# own. A kernel may keep one func_stack_trace for every buffer (6.18 does):
# writing it in an instance then changes the top level, which no test may do.
# Without a write, only a value that differs from the top level's proves it
# per-instance; otherwise a test skips the steps that write it, saying
# $TL_STACK_SKIP.
# In a guest of make check-kernels (TL_WHOLE_KERNEL=1) the kernel runs the
# tests alone: its top level is theirs, and the steps run.
tl_stack_own() {
	[ -f "$1/options/func_stack_trace" ] && [ "${TL_WHOLE_KERNEL:-}" = 1 ] && return 0
	[ -f "$1/options/func_stack_trace" ] && [ -f "$TL_TRACEFS/options/func_stack_trace" ] &&
		[ "$(cat "$1/options/func_stack_trace")" != "$(cat "$TL_TRACEFS/options/func_stack_trace")" ]
}
TL_STACK_SKIP="func_stack_trace steps skipped: the instance's options/func_stack_trace equals the top level's, and only a write could tell whether the kernel keeps one flag for every buffer (6.18 does), a write that would change the top level"

# tl_instance_state IDIR: what a tool must leave as it found it in the
# instance directory IDIR: every event's enable file, buffer_percent, tracing_on.
tl_instance_state() {
	grep -H . "$1"/events/*/*/enable "$1"/events/*/enable "$1/buffer_percent" \
		"$1/tracing_on" 2>/dev/null
}

# tl_markers INSTANCE CPU FIRST COUNT: write "seq=N" markers pinned to CPU.
tl_markers() {
	taskset -c "$2" sh -c '
		i=$2; end=$(($2 + $3))
		while [ $i -lt $end ]; do echo "seq=$i" ; i=$((i + 1)); done > "$1"
	' sh "$TL_TRACEFS/instances/$1/trace_marker" "$3" "$4"
}

# tl_seqs FILE: the sorted seq numbers in trace-cmd report output.
tl_seqs() { grep -o 'seq=[0-9]*' "$1" | cut -d= -f2 | sort -n; }

# trace-cmd 3.1.6 copies the top-level saved_cmdlines into its file by reading
# it twice, once for the size and once for the bytes. When the kernel's list
# changes in between (a task traced anywhere on the machine can change it),
# trace-cmd warns "error in size of file" and the file declares one size and
# holds another; when the list shrank, libtracecmd cannot open the file. With
# other tracing going on, about one recording in eight hit it here, stock
# trace-cmd and trace-cmd-mmap alike. So the tests run trace-cmd where
# saved_cmdlines is a regular file that changes only when the test says so.

# The mount namespace of tl_cmdlines: the kernel's list stays readable at
# $1.real, the copy $1 is bound over $2/saved_cmdlines; then COMMAND runs.
TL_CMDLINES_NS='mount --bind "$2/saved_cmdlines" "$1.real" &&
	mount --bind "$1" "$2/saved_cmdlines" || exit 99
shift 2
exec "$@"'

# tl_cmdlines_setup: the copy and the script that refreshes it (in and outside
# the namespace: inside, "$real" is the copy).
tl_cmdlines_setup() {
	[ -f "$TL_TMP/cmdlines-refresh.sh" ] && return
	command -v unshare > /dev/null ||
		tl_skip "unshare (util-linux) is needed for a private mount namespace"
	cat > "$TL_TMP/cmdlines-refresh.sh" <<REFRESH
real=$TL_TRACEFS/saved_cmdlines copy=$TL_TMP/saved_cmdlines
[ -e "\$real" ] || exit 0
[ "\$real" -ef "\$copy" ] && real=\$copy.real
cat "\$real" > "\$copy.new" && cat "\$copy.new" > "\$copy"
REFRESH
	tl_cmdlines_refresh
	tl_cmdlines_as "$TL_TMP/saved_cmdlines" true ||
		tl_skip "cannot bind over $TL_TRACEFS/saved_cmdlines in a private mount namespace"
}

# tl_cmdlines_refresh: the kernel's list into the copy, in place (the bind
# mount holds the inode). Before a recording is stopped, so that the file
# names the tasks that wrote the events. A command trace-cmd runs ends with
# "sh $TL_TMP/cmdlines-refresh.sh" instead (tc_workload's do).
tl_cmdlines_refresh() {
	sh "$TL_TMP/cmdlines-refresh.sh" ||
		tl_fail "cannot copy $TL_TRACEFS/saved_cmdlines to $TL_TMP"
}

# tl_cmdlines_as FILE COMMAND...: COMMAND where saved_cmdlines is FILE.
tl_cmdlines_as() {
	_f=$1; shift
	[ -e "$_f.real" ] || : > "$_f.real"
	unshare -m --propagation private sh -c "$TL_CMDLINES_NS" sh "$_f" "$TL_TRACEFS" "$@"
}

# tl_cmdlines COMMAND...: COMMAND (trace-cmd) with a stable saved_cmdlines.
tl_cmdlines() {
	tl_cmdlines_setup
	tl_cmdlines_as "$TL_TMP/saved_cmdlines" "$@"
}

# tl_cmdlines_bg COMMAND...: the same in the background; $! is COMMAND's pid
# (unshare and sh exec it), so signals reach it.
tl_cmdlines_bg() {
	tl_cmdlines_setup
	(exec unshare -m --propagation private sh -c "$TL_CMDLINES_NS" sh \
		"$TL_TMP/saved_cmdlines" "$TL_TRACEFS" "$@") &
}

# tl_can_map INSTANCE: this kernel maps the ring buffer (Linux 6.10 or
# later), as tracemap stat sees CPU 0 of INSTANCE
tl_can_map() {
	[ -n "${TM:-}" ] || tl_fail "tl_can_map: TM (the tracemap binary) is not set"
	"$TM" stat -B "$1" 2> /dev/null | awk '$1 == "0" { ok = $2 == "yes" } END { exit !ok }'
}

# tl_require_mmap INSTANCE: skip unless this kernel maps the ring buffer
tl_require_mmap() {
	tl_can_map "$1" || tl_skip "this kernel cannot map the ring buffer (Linux 6.10 or later is needed)"
}

# tl_require_mmap_kernel: the same, probed on an instance of its own, for
# tests whose every step needs the mapping (tool-nomap.sh checks what the
# tools and the live view say without it)
tl_require_mmap_kernel() {
	tl_require_mmap "$(tl_instance map)"
}
