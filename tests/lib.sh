# Shared helpers of the black-box shell tests. Source it:  . tests/lib.sh
#
# Every instance made with tl_instance is removed at exit, on failure and on
# INT/TERM; tl_skip exits 77 with a reason, tl_fail exits 1.

TL_TRACEFS=${TL_TRACEFS:-/sys/kernel/tracing}
TL_INSTANCES=
TL_TMP=$(mktemp -d "${TMPDIR:-/tmp}/tracemap-test.XXXXXX")
TL_PIDS=

tl_cleanup() {
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
# returns 1 when TIMEOUT_S seconds passed first.
tl_wait() {
	_end=$(( $(date +%s) + $1 )); shift
	while ! "$@"; do
		[ "$(date +%s)" -lt "$_end" ] || return 1
		sleep 0.05
	done
}

# tl_file_is FILE VALUE: FILE holds VALUE (a condition for tl_wait)
tl_file_is() { [ "$(cat "$1" 2>/dev/null)" = "$2" ]; }

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
