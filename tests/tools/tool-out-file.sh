#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 180
# tracemap snapshot -o and tracemap flight -o never remove or replace what
# they did not make:
# - a device node (made here with mknod), a symbolic link (to a file, to
#   /dev/stdout), a directory and a socket are refused with a message and
#   left exactly as they were (a link's target too), and no file is made
#   beside them (flight -o DEVICE made DEVICE-1);
# - a FIFO is written directly (the reader gets the whole file) and stays a
#   FIFO; a reader that goes away fails the write and removes nothing;
# - a write that fails on a full file system leaves the old regular file as
#   it was and no temporary file behind;
# - a regular file is replaced only by a complete dump, keeping its mode;
#   "-" writes to standard output.
. "$(dirname "$0")/../lib.sh"
tl_require_root
tl_require_tracemap
cd "$TL_TMP" || exit 1
inst=$(tl_instance outf 64)
idir=$TL_TRACEFS/instances/$inst
# snapshot and flight need the mapping (their refusal: tool-nomap.sh)
tl_require_mmap "$inst"
echo "seq=1 out-file" > "$idir/trace_marker"

# what is in the directory: names, kinds, link targets, sizes and contents
listing() { ls -lA --time-style=+ w | sed 's/^\([^ ]*\) *[0-9]* /\1 /'; cat w/target w/old.dat; }
# refused KIND NAME CMD...: the command fails naming NAME, nothing changed
refused() {
	_kind=$1; _name=$2; shift 2
	listing > before.txt
	"$@" > out.txt 2> err.txt && tl_fail "$* wrote to a $_kind"
	grep -q -- "-o w/$_name is a $_kind" err.txt ||
		{ cat err.txt; tl_fail "$*: no message saying w/$_name is a $_kind"; }
	listing > after.txt
	cmp -s before.txt after.txt || { diff before.txt after.txt; tl_fail "$* changed w/"; }
}

mkdir w
mknod -m 666 w/full c 1 7
echo "keep me" > w/target
ln -s target w/link
ln -s /dev/stdout w/stdout
mkdir w/dir
echo "the old dump" > w/old.dat
chmod 640 w/old.dat
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' w/sock ||
	tl_fail "cannot make a socket"

for cmd in "snapshot" "flight --max-dumps 1"; do
	refused "device node" full "$TM" $cmd -B "$inst" -o w/full
	refused "symbolic link" link "$TM" $cmd -B "$inst" -o w/link
	refused "symbolic link" stdout "$TM" $cmd -B "$inst" -o w/stdout
	refused "socket" sock "$TM" $cmd -B "$inst" -o w/sock
done
refused "directory" dir "$TM" snapshot -B "$inst" -o w/dir
tl_log "device node, links, socket, directory: refused, nothing changed or made"

# a FIFO: written directly, the reader gets a trace.dat, the FIFO stays
mkfifo w/fifo
cat w/fifo > fifo.dat &
rd=$!
tl_bg $rd
"$TM" snapshot -B "$inst" -o w/fifo > out.txt 2> err.txt || { cat err.txt; tl_fail "snapshot -o FIFO failed"; }
wait $rd
head -c 10 fifo.dat | grep -q 'tracing' || tl_fail "the FIFO's reader got no trace.dat"
[ -p w/fifo ] || tl_fail "the FIFO is gone or replaced"
# its reader goes away at once: the write fails, the FIFO stays
head -c 1 w/fifo > /dev/null &
rd=$!
tl_bg $rd
"$TM" snapshot -B "$inst" -o w/fifo > out.txt 2> err.txt && tl_fail "a write into a closed FIFO succeeded"
grep -q "cannot write w/fifo" err.txt || { cat err.txt; tl_fail "no message for the failed write"; }
[ -p w/fifo ] || tl_fail "a failed write removed the FIFO"
# flight into the FIFO: the dump goes into it, no w/fifo-1 is made
cat w/fifo > fifo2.dat &
rd=$!
tl_bg $rd
"$TM" flight -B "$inst" -o w/fifo --max-dumps 1 > fl.out 2> fl.err &
fl=$!
tl_bg $fl
tl_wait 20 grep -q 'flight recorder on' fl.err || { cat fl.err; tl_fail "flight did not start"; }
kill -USR1 $fl
wait $fl || { cat fl.err; tl_fail "flight -o FIFO failed"; }
wait $rd
head -c 10 fifo2.dat | grep -q 'tracing' || tl_fail "flight wrote no trace.dat into the FIFO"
[ -p w/fifo ] && [ ! -e w/fifo-1 ] || tl_fail "flight -o FIFO made or replaced a file"
rm w/fifo
tl_log "FIFO: written directly, kept after a failed write"

# a regular file is replaced by a whole dump only, keeping its mode
"$TM" snapshot -B "$inst" -o w/old.dat > out.txt 2> err.txt || { cat err.txt; tl_fail "snapshot -o FILE failed"; }
head -c 10 w/old.dat | grep -q 'tracing' || tl_fail "the regular file was not replaced by the dump"
[ "$(stat -c %a w/old.dat)" = 640 ] || tl_fail "the replaced file's mode is $(stat -c %a w/old.dat), not 640"
"$TM" snapshot -B "$inst" -o - > stdout.dat 2> err.txt || { cat err.txt; tl_fail "snapshot -o - failed"; }
head -c 10 stdout.dat | grep -q 'tracing' || tl_fail "-o - wrote no trace.dat to standard output"
[ -z "$(ls -A w | grep tracemap)" ] || { ls -lA w; tl_fail "a temporary file was left in w/"; }

# a full file system: the old file stays as it was, no temporary file left
command -v unshare > /dev/null || tl_skip "unshare (util-linux) is needed for the full-disk case"
mkdir small
unshare -m sh -c '
	mount -t tmpfs -o size=256k none small || exit 99
	echo "the old dump" > small/old.dat
	"$1" snapshot -B "$2" -o small/old.dat > out.txt 2> err.txt && exit 1
	grep -q "No space left on device" err.txt || exit 2
	[ "$(cat small/old.dat)" = "the old dump" ] || exit 3
	[ "$(ls -A small)" = old.dat ] || { ls -lA small; exit 4; }
	"$1" flight -B "$2" -o small/ --max-dumps 1 > fl.out 2> fl.err &
	fl=$!
	n=0; until grep -q "flight recorder on" fl.err || [ $n -gt 200 ]; do sleep 0.1; n=$((n + 1)); done
	kill -USR1 $fl
	n=0; until grep -q "no dump written" fl.err || [ $n -gt 200 ]; do sleep 0.1; n=$((n + 1)); done
	kill -INT $fl
	wait $fl && exit 5
	[ "$(ls -A small)" = old.dat ] || { ls -lA small; exit 6; }
' sh "$TM" "$inst"
rc=$?
[ $rc = 99 ] && tl_skip "cannot mount a tmpfs in a private mount namespace"
case $rc in
0) ;;
1) tl_fail "a snapshot onto a full file system succeeded" ;;
2) cat err.txt; tl_fail "no 'No space left on device' message" ;;
3|4) tl_fail "a failed write changed the old file or left a temporary file (case $rc)" ;;
*) cat fl.err; tl_fail "flight on a full file system: failure not reported or a file left (case $rc)" ;;
esac
tl_log "full file system: the old file kept, nothing left behind"
