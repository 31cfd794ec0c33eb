#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 180
# tracemap flight and tracemap view killed with SIGKILL, then tracemap
# reset: the library owns the instance they set up (tracemap_instance_open)
# and wrote each change in its crash record first, so reset removes the
# private instance each made, and in a -B instance the test made puts back
# what they changed (flight: options/overwrite, buffer_size_kb, the event;
# view: buffer_size_kb, the event), saying so. tracemap view runs a stub
# viewer (--kernelshark) that only waits: no display is needed.
. "$(dirname "$0")/../lib.sh"
tl_require_root
tl_require_tracemap
cd "$TL_TMP" || exit 1
export TRACEMAP_STATE_DIR=$TL_TMP/state

inst=$(tl_instance ni)
idir=$TL_TRACEFS/instances/$inst
tl_require_mmap "$inst"
# values the tools change: overwrite off (flight turns it on), a size of our own
echo 0 > "$idir/options/overwrite" && echo 200 > "$idir/buffer_size_kb" ||
	tl_fail "cannot set up $inst"
# the kernel rounds it up to whole sub-buffers
kb=$(cut -d' ' -f1 "$idir/buffer_size_kb")
state() {
	tl_instance_state "$idir"
	grep -H . "$idir/options/overwrite" "$idir/buffer_size_kb"
}
state > before.txt
printf '#!/bin/sh\nexec sleep 600\n' > viewer
chmod +x viewer

# run NAME WHAT ARGS...: tracemap ARGS in the background until its stderr says WHAT; $pid
run() {
	_n=$1 _w=$2; shift 2
	"$TM" "$@" > "$_n.out" 2> "$_n.err" &
	pid=$!
	tl_bg $pid
	tl_wait 30 grep -q "$_w" "$_n.err" || { cat "$_n.err"; tl_fail "tracemap $* did not start"; }
}

# killed NAME: SIGKILL $pid, then tracemap reset; its stderr in NAME.reset
killed() {
	kill -KILL $pid
	wait $pid 2> /dev/null
	"$TM" reset > "$1.reset.out" 2> "$1.reset" || { cat "$1.reset"; tl_fail "$1: reset failed"; }
}

# private NAME PREFIX: the private instance NAME.err names, made by $pid
private() {
	_p=$(grep -o "private instance $2-$pid-[0-9]*" "$1.err" | head -1 | cut -d' ' -f3)
	[ -n "$_p" ] || { cat "$1.err"; tl_fail "$1: no private instance $2-$pid-N named"; }
	tl_track_instance "$_p"
	[ -d "$TL_TRACEFS/instances/$_p" ] || tl_fail "$1: $_p does not exist"
	echo "$_p"
}

# 1. flight on -B: overwrite, -b and the event put back
run fb "flight recorder on" flight -B "$inst" -b 300 -e sched:sched_switch -o fb/
tl_file_is "$idir/options/overwrite" 1 || tl_fail "flight did not turn overwrite on"
tl_file_is "$idir/events/sched/sched_switch/enable" 1 || tl_fail "flight did not enable the event"
killed fb
grep "put back what tracemap pid $pid (no longer running) left in instance $inst:" fb.reset |
	grep "options/overwrite 0" | grep -q "buffer_size_kb $kb" ||
	{ cat fb.reset; tl_fail "flight -B: reset did not say it put back overwrite and the size"; }
grep -q "put back what tracemap pid $pid .* left in instance $inst: sched:sched_switch off" fb.reset ||
	{ cat fb.reset; tl_fail "flight -B: reset did not turn the event off"; }
state > after.txt
diff -u before.txt after.txt || tl_fail "flight -B: $inst is not as it was after reset"
tl_log "flight -B killed: reset put back overwrite, buffer_size_kb and the event"

# 2. flight without -B: its private instance removed
run fp "flight recorder on" flight -e sched:sched_switch -o fp/
p=$(private fp tracemap-flight)
killed fp
grep -q "put back what tracemap pid $pid (no longer running) left in instance $p: removed the private instance it created" fp.reset ||
	{ cat fp.reset; tl_fail "flight: reset did not say it removed $p"; }
[ -d "$TL_TRACEFS/instances/$p" ] && tl_fail "flight: reset left $p"
tl_log "flight killed: reset removed $p"

# 3. view on -B with a stub viewer (a display is only checked for): -b and the event put back
export DISPLAY=${DISPLAY:-:4242}
run vb "KernelShark shows" view -B "$inst" -b 300 -e sched:sched_switch \
	--kernelshark "$PWD/viewer"
tl_file_is "$idir/events/sched/sched_switch/enable" 1 || tl_fail "view did not enable the event"
killed vb
grep "put back what tracemap pid $pid (no longer running) left in instance $inst:" vb.reset |
	grep -q "buffer_size_kb $kb" || { cat vb.reset; tl_fail "view -B: reset did not put the size back"; }
state > after.txt
diff -u before.txt after.txt || tl_fail "view -B: $inst is not as it was after reset"
tl_log "view -B killed: reset put back buffer_size_kb and the event"

# 4. view without -B: its private instance removed
run vp "KernelShark shows" view -e sched:sched_switch \
	--kernelshark "$PWD/viewer"
p=$(private vp tracemap-view)
killed vp
grep -q "put back what tracemap pid $pid (no longer running) left in instance $p: removed the private instance it created" vp.reset ||
	{ cat vp.reset; tl_fail "view: reset did not say it removed $p"; }
[ -d "$TL_TRACEFS/instances/$p" ] && tl_fail "view: reset left $p"
tl_log "view killed: reset removed $p"
[ -z "$(ls "$TRACEMAP_STATE_DIR")" ] || { ls -l "$TRACEMAP_STATE_DIR"; tl_fail "records are left"; }
echo "flight and view killed, then reset: all checks passed"
