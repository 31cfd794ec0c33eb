#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 90
# Stopping tracemap stream while its output is slow: it exits within about a
# second of SIGINT (the final drain reads for at most 0.3 s and writes until
# 0.7 s after the signal), a second SIGINT ends the drain at once, the instance
# is put back either way, and every marker is accounted for exactly: written
# to the output + reported not written + reported not printed + reported left
# in the buffers == markers written.
. "$(dirname "$0")/../lib.sh"
tl_require_root
tl_require_tracemap
MARKERS=$PWD/build/tests/plugins/tc-markers
[ -x "$MARKERS" ] || tl_fail "$MARKERS is missing: run 'make check-build'"
cd "$TL_TMP" || exit 1
now_ms() { echo $(($(date +%s%N) / 1000000)); }
N=150000

inst=$(tl_instance slow 8192)
idir=$TL_TRACEFS/instances/$inst
echo 37 > "$idir/buffer_percent"
tl_instance_state "$idir" > before.txt

# the number in a message of err.txt, 0 when there is none
count() { n=$(sed -n "s/.* \([0-9][0-9]*\) events $1.*/\1/p" err.txt); echo "${n:-0}"; }

# run SIGNALS...: stream into a pipe nobody reads, N markers, then the signals
# (a number between them is a pause in ms); checks the accounting, sets ms
run() {
	rm -f pipe go got.txt
	mkfifo pipe
	# reads nothing until told to, then everything that is left in the pipe
	sh -c 'while [ ! -e go ]; do sleep 0.05; done; cat > got.txt' < pipe &
	holder=$!
	tl_bg $holder
	"$TM" stream -B "$inst" > pipe 2> err.txt &
	tm=$!
	tl_bg $tm
	tl_wait 10 tl_file_is "$idir/buffer_percent" 50 || { cat err.txt; tl_fail "no stream"; }
	"$MARKERS" "$inst" 0 0 $N || tl_fail "writing the markers failed"
	# the stream is behind: it has read some, the pipe is full
	tl_wait 10 sh -c "\"$TM\" stat -B $inst | awk '\$1 == 0 { exit \$(NF-1) < 1000 }'" ||
		tl_fail "the stream read nothing"
	t0=$(now_ms)
	for s in "$@"; do
		case $s in
		[0-9]*) sleep "$(echo "$s" | awk '{ print $1 / 1000 }')" ;;
		*) kill "-$s" $tm; t0=$(now_ms) ;;
		esac
	done
	wait $tm
	rc=$?
	ms=$(($(now_ms) - t0))
	touch go
	wait $holder
	sed 's/^/# /' err.txt | grep -v '^#  *[0-9a]'
	[ $rc -eq 0 ] || tl_fail "exit $rc after $*"
	tl_instance_state "$idir" > after.txt
	diff -u before.txt after.txt || tl_fail "$*: the instance was not put back"
	w=$(grep -c 'seq=' got.txt)
	u=$(count "read from the buffers were not written")
	h=$(count "read from the buffers at the stop were not printed")
	l=$(sed -n 's/.*: \([0-9][0-9]*\) events left in them.*/\1/p' err.txt)
	l=${l:-0}
	tl_log "$*: $ms ms after the last signal; $w written, $u not written, $h not printed, $l left"
	[ $((w + u + h + l)) -eq $N ] || tl_fail "$w + $u + $h + $l is not $N"
	[ "$l" -gt 0 ] || tl_fail "nothing was left in the buffers: the stop was not bounded"
	: > "$idir/trace"
}

# the bounds leave room for a loaded machine: unbounded, the stop took 9-22 s;
# after a second signal 100 ms in, the write deadline alone would take 600 ms
run INT
[ $ms -lt 3000 ] || tl_fail "the stop took $ms ms with a slow output"
grep -q "before the stop deadline" err.txt || tl_fail "no word on the events not written"

run INT 100 INT
[ $ms -lt 500 ] || tl_fail "the second SIGINT took $ms ms to end it"
grep -q "before the second signal" err.txt || tl_fail "no word on the second signal"
echo "slow output: all checks passed"
