#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 120
# trace-cmd-mmap's launcher and settings: --help matches the manual, bad
# command lines are refused, the traced command inherits neither the plugin
# nor its settings (other LD_PRELOAD entries stay), record --poll records
# (stock 3.1.6 records nothing), --max-age-ms hands out a held page while the
# recording runs and without it the page is held, --no-mmap goes through
# libtracefs, a sub-buffer size trace-cmd cannot read falls back with one
# warning per CPU, and a recording says nothing through the mapping and, on a
# kernel without it, one line naming Linux 6.10. --poll and --max-age-ms
# need the mapping: without it their steps are left out, saying why.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/tc-common.shlib"
tc_require
cd "$TL_TMP" || exit 1
man="$TC_TOP/Documentation/trace-cmd-mmap.1.txt"

# 1. --help and the manual name the same options
"$TCM" --help > help.txt || tl_fail "--help failed"
sed -n 's/^  \(-h, \)\{0,1\}\(--[a-z-]*\).*/\2/p' help.txt | sort -u > help.opts
sed -n 's/^\*\(--[a-z-]*\)\*.*/\1/p; s/^\*-h\*, \*\(--[a-z-]*\)\*.*/\1/p' "$man" | sort -u > man.opts
[ "$(wc -l < help.opts)" -ge 7 ] || tl_fail "found only $(wc -l < help.opts) options in --help"
cmp -s help.opts man.opts || { diff help.opts man.opts; tl_fail "--help and the manual differ"; }
tl_log "--help and the manual: $(tr '\n' ' ' < help.opts)"

# 2. bad command lines: exit 2 with a message
expect_refused() {
	"$TCM" "$@" > bad.out 2>&1
	rc=$?
	[ $rc -eq 2 ] && grep -q 'trace-cmd-mmap: ' bad.out ||
		{ cat bad.out; tl_fail "'$*' gave exit $rc, expected 2 with a message"; }
}
expect_refused --bogus record
expect_refused --mode=snapshot record -e sched
expect_refused --mode=sideways extract
expect_refused --max-age-ms=soon record
# out of the plugin's range: refused by the launcher, not blamed on TRACEMAP_TRACECMD
for v in 2147483648 99999999999; do
	expect_refused --max-age-ms "$v" record
	grep -q "out of range" bad.out && ! grep -q TRACEMAP_TRACECMD bad.out ||
		{ cat bad.out; tl_fail "--max-age-ms $v: no range message from the launcher"; }
done
expect_refused --trace-cmd=/nonexistent/trace-cmd record
TRACEMAP_TRACECMD=mode=snapshot expect_refused stream
tl_log "bad command lines refused"

# 3. the traced command inherits neither the plugin nor the settings
inst=$(tl_instance tc)
other=$(ls /usr/libexec/coreutils/libstdbuf.so /usr/lib/*/coreutils/libstdbuf.so 2>/dev/null | head -1)
LD_PRELOAD=$other TRACEMAP_TRACECMD=verbose "$TCM" record -d --no-filter -B "$inst" -p nop \
	-o env.dat sh -c '{ echo "LD_PRELOAD=[$LD_PRELOAD] SETTINGS=[${TRACEMAP_TRACECMD-unset}]"
		grep -c libtracemap-tracecmd /proc/$$/maps; } > env.out' > /dev/null 2> env.err
grep -q 'serving the tracefs_cpu_\* calls of trace-cmd (pid [0-9]*) .*mode=consume' env.err || { cat env.err; tl_fail "TRACEMAP_TRACECMD=verbose was not read"; }
grep -q "^LD_PRELOAD=\[$other\] SETTINGS=\[unset\]$" env.out ||
	{ cat env.out; tl_fail "the traced command inherited the plugin or its settings"; }
[ "$(tail -1 env.out)" = 0 ] || tl_fail "the plugin is mapped into the traced command"
tl_log "traced command: LD_PRELOAD=[$other], no settings, plugin not loaded"

can_map=$(tc_can_map)
if [ "$can_map" = yes ]; then
	# 4. record --poll
	inst=$(tl_instance tc)
	tl_cmdlines "$TCM" --verbose --stats record --poll -d --no-filter -B "$inst" -p nop -o poll.dat \
		sh -c "$(tc_markers_workload "$inst" 3000)" > poll.log 2>&1
	tc_count_ge poll.log ': mapped .*non-blocking' 2 || { cat poll.log; tl_fail "--poll did not map both CPUs"; }
	tc_report poll.dat poll.txt
	tc_expect_seqs poll.txt 0 6000
	# pages wait until they are full: at most the last one per CPU goes out early
	early=$(sed -n 's/.* pages (\([0-9]*\) flushed early).*/\1/p' poll.log | awk '{ s += $1 } END { print s + 0 }')
	[ "$early" -le 2 ] || { grep ' pages (' poll.log; tl_fail "--poll handed out $early partial pages"; }
	tl_log "record --poll: 6000 markers exactly once, $early partial pages"

	# 5. --max-age-ms: a held page reaches the recorder's file during the run
	held_page() {
		inst=$(tl_instance tc)
		tl_cmdlines_bg "$TCM" --verbose $1 record -d --no-filter -B "$inst" -p nop -o age.dat \
			> age.log 2>&1
		pid=$!
		tc_recording $pid age.log
		tc_markers "$inst" 0 0 10
	}
	file_size_ge() { [ -f "$1" ] && [ "$(stat -c %s "$1")" -ge "$2" ]; }

	held_page --max-age-ms=100
	tl_wait 5 file_size_ge "age.dat.$inst.cpu0" 4096 ||
		tl_fail "with --max-age-ms=100 no page was written within 5 s"
	tl_cmdlines_refresh
	tc_stop $pid INT
	tc_report age.dat age.txt
	tc_expect_seqs age.txt 0 10
	tl_log "--max-age-ms=100: the partial page was written while recording"

	held_page ""
	! tl_wait 1 file_size_ge "age.dat.$inst.cpu0" 1 ||
		tl_fail "without --max-age-ms a partial page was written while recording"
	tl_cmdlines_refresh
	tc_stop $pid INT
	tc_report age.dat age.txt
	tc_expect_seqs age.txt 0 10
	tl_log "no --max-age-ms: the partial page was held until the end"

else
	tl_log "no mapping on this kernel: --poll (stock trace-cmd 3.1.6 records nothing with it) and --max-age-ms (a held page) left out"
fi

# 6. --no-mmap: libtracefs serves everything
inst=$(tl_instance tc)
tl_cmdlines "$TCM" --verbose --no-mmap record -d --no-filter -B "$inst" -p nop -o nommap.dat \
	sh -c "$(tc_markers_workload "$inst" 1000)" > nommap.log 2>&1
! grep -q ': mapped ' nommap.log || tl_fail "--no-mmap mapped a buffer"
tc_report nommap.dat nommap.txt
tc_expect_seqs nommap.txt 0 2000
tl_log "--no-mmap: 2000 markers through libtracefs"

# 7. installed (make install with DESTDIR), the launcher finds its plugin
if make -s -C "$TC_TOP" install-trace-cmd-plugin DESTDIR="$TL_TMP/inst" PREFIX=/usr/local \
	> install.log 2>&1; then
	inst=$(tl_instance tc)
	tl_cmdlines "$TL_TMP/inst/usr/local/bin/trace-cmd-mmap" --verbose record -d --no-filter \
		-B "$inst" -p nop -o installed.dat \
		sh -c "$(tc_markers_workload "$inst" 100)" \
		> installed.log 2>&1
	tc_expect_mapped installed.log 2
	tc_report installed.dat installed.txt
	tc_expect_seqs installed.txt 0 200
	tl_log "installed under DESTDIR: the launcher finds the plugin, 200 markers"
else
	cat install.log
	tl_fail "make install-trace-cmd-plugin failed"
fi

# 8. 8 KiB sub-buffers: one warning per CPU saying why, then libtracefs
inst=$(tl_instance tc)
if echo 8 > "$TL_TRACEFS/instances/$inst/buffer_subbuf_size_kb" 2>/dev/null; then
	# the command waits for both recorders: a CPU whose recorder starts after
	# a short command ended never opens its buffer (trace-cmd 3.1.6)
	"$TCM" record -d --no-filter -B "$inst" -p nop -o sb.dat sh -c "$(tc_workload 2 true)" \
		> sb.log 2>&1
	w=$(grep -c 'sub-buffers of 8192 bytes, but trace-cmd reads 4096-byte pages' sb.log)
	[ "$w" -eq 2 ] && [ "$(grep -c '^trace-cmd-mmap: ' sb.log)" -eq 2 ] ||
		{ cat sb.log; tl_fail "expected exactly one fallback warning per CPU"; }
	tl_log "8 KiB sub-buffers: one warning per CPU, libtracefs reads them"
else
	tl_log "this kernel cannot set buffer_subbuf_size_kb: fallback check left out"
fi

# 9. what a user sees without --verbose: nothing through the mapping; without
# it, one line for the whole run (not one per CPU) naming Linux 6.10
inst=$(tl_instance tc)
tl_cmdlines "$TCM" record -d --no-filter -B "$inst" -p nop -o quiet.dat \
	sh -c "$(tc_markers_workload "$inst" 500)" > quiet.log 2>&1
tc_report quiet.dat quiet.txt
tc_expect_seqs quiet.txt 0 1000
said=$(grep -c '^trace-cmd-mmap: ' quiet.log)
if [ "$can_map" = yes ]; then
	[ "$said" -eq 0 ] || { cat quiet.log; tl_fail "the plugin spoke without --verbose"; }
	tl_log "without --verbose: 1000 markers, no line from the plugin"
else
	[ "$said" -eq 1 ] && [ "$(tc_nomap_lines quiet.log)" -eq 1 ] ||
		{ cat quiet.log; tl_fail "without the mapping: $said lines, expected one naming Linux 6.10"; }
	grep '^trace-cmd-mmap: ' quiet.log | sed 's/^/# /'
	tl_log "without --verbose and the mapping: 1000 markers, one line from the plugin"
fi
exit 0
