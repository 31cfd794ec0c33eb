#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# timeout: 600
# The function tracers through trace-cmd's options (-p, -l, -n, -g,
# --func-stack) of tracemap stream and flight.
#
# On a kernel that forbids them (this VM: EPERM on current_tracer and the
# set_ftrace_* files), checked first by writing current_tracer here: both
# commands refuse with the real cause, naming the file, and leave the
# instance as it was.
#
# On a kernel that runs them (make check-kernels' guests): a workload of
# exactly N getppid() calls, streamed with -p function -l (and -n taking
# precedence over -l), gives N function lines; the same
# workload under trace-cmd record gives the same lines in trace-cmd report
# (pid, CPU and time masked); --func-stack gives a stack per call;
# function_graph limited to the function (-g, or -l where the instance has
# no set_graph_function) N calls printed as trace-cmd report prints them
# (leaves folded, every "{" closed); everything the
# options changed in the -B instance is back afterwards. Under TCG each
# enable patches code slowly: the filters keep that bounded.
. "$(dirname "$0")/../lib.sh"
tl_require_root
tl_require_tracemap
cd "$TL_TMP" || exit 1
N=20

inst=$(tl_instance m-func)
idir=$TL_TRACEFS/instances/$inst
grep -qw function "$idir/available_tracers" 2>/dev/null ||
	tl_skip "this kernel has no function tracer (available_tracers: $(cat "$idir/available_tracers"))"

# options without a kernel: filters without a tracer, a regex, snapshot
"$TM" stream -B "$inst" -l schedule true 2> err.txt && tl_fail "-l without -p was taken"
grep -q 'give it with -p' err.txt || { cat err.txt; tl_fail "-l without -p: no hint to give -p"; }
"$TM" stream -B "$inst" -p function -l '^sched' true 2> err.txt && tl_fail "a regex -l was taken"
grep -q 'not a regular expression' err.txt || { cat err.txt; tl_fail "regex -l: unclear message"; }
"$TM" snapshot -B "$inst" -p function -o snap.dat 2> err.txt && tl_fail "snapshot took -p"
grep -q "give them to 'tracemap flight'" err.txt || { cat err.txt; tl_fail "snapshot -p: no hint"; }
[ ! -e snap.dat ] || tl_fail "snapshot -p left snap.dat"

# what the options may change, and must put back
state() {
	for f in current_tracer options/func_stack_trace set_ftrace_filter set_ftrace_notrace \
		 set_graph_function; do
		[ -e "$idir/$f" ] && echo "$f: $(cat "$idir/$f" 2>&1)"
	done
	tl_instance_state "$idir"
}

# coreutils echo says which error (dash says "I/O error" for any)
if ! /bin/echo function > "$idir/current_tracer" 2> probe.err; then
	# ------------------------------------------------ a kernel that refuses
	grep -q 'Operation not permitted' probe.err ||
		{ cat probe.err; tl_fail "current_tracer=function failed otherwise than EPERM"; }
	before=$(state)
	refuses() {
		what=$1 file=$2; shift 2
		timeout 60 "$@" > out.txt 2> err.txt < /dev/null && tl_fail "$what: exit 0"
		grep -q "$idir/$file: Operation not permitted: .*forbids the function tracers" err.txt ||
			{ cat err.txt; tl_fail "$what: the message does not say EPERM from $file and why"; }
		[ "$(grep -c . err.txt)" -eq 1 ] || { cat err.txt; tl_fail "$what: more than one line"; }
		[ "$(state)" = "$before" ] || tl_fail "$what: changed the state of $inst"
		tl_log "$what: $(cat err.txt)"
	}
	refuses "stream -p function" current_tracer "$TM" stream -B "$inst" -p function true
	refuses "stream -l" set_ftrace_filter "$TM" stream -B "$inst" -p function -l schedule true
	refuses "stream -n" set_ftrace_notrace "$TM" stream -B "$inst" -p function -n schedule true
	refuses "flight -p function" current_tracer "$TM" flight -B "$inst" -p function -o fl.dat \
		--marker X
	refuses "flight -l" set_ftrace_filter "$TM" flight -B "$inst" -p function -l schedule \
		-o fl.dat --marker X
	[ ! -e fl.dat ] || tl_fail "flight left fl.dat"
	# a private instance is made and removed around the refusal
	"$TM" stream -p function true 2> err.txt && tl_fail "private stream -p function: exit 0"
	grep -q 'forbids the function tracers' err.txt || { cat err.txt; tl_fail "private: no cause"; }
	ls "$TL_TRACEFS/instances" | grep -q "^tracemap-[0-9]" &&
		tl_log "note: a tracemap-<pid> instance exists (another run?)"
	exit 0
fi
echo nop > "$idir/current_tracer" || tl_fail "cannot put current_tracer back to nop"

# ------------------------------------------------------ a kernel that runs them
# the functions getppid() and getpid() enter, by the names this kernel gives them
pick() {
	for f in "$@"; do
		grep -qx "$f" "$TL_TRACEFS/available_filter_functions" && { echo "$f"; return; }
	done
}
F=$(pick __x64_sys_getppid __do_sys_getppid sys_getppid)
G=$(pick __x64_sys_getpid __do_sys_getpid sys_getpid)
[ -n "$F" ] && [ -n "$G" ] || tl_fail "no getppid/getpid function in available_filter_functions"
OTHER=$(pick __x64_sys_getuid __do_sys_getuid sys_getuid)

# the workload: a start marker with its pid, N getppid() and N getpid() calls, an end marker
W="import os
m = open('$idir/trace_marker', 'w', buffering=1)
m.write('tm-func start pid=%d\n' % os.getpid())
for i in range($N):
    os.getppid()
    os.getpid()
m.write('tm-func end\n')"
export W
workload() { python3 -c "$W"; }

# a filter that was there before is put back; the others were empty
[ -n "$OTHER" ] && echo "$OTHER" > "$idir/set_ftrace_filter"
before=$(state)

# streamed OUT FILE VALUE ARGS...: tracemap stream -B inst ARGS into OUT; the
# workload runs once the instance's FILE says VALUE (the tracer is set last);
# then the stream is stopped and the instance must be as it was. Sets $pid.
streamed() {
	out=$1 file=$2 val=$3
	shift 3
	t0=$(date +%s)
	"$TM" stream -B "$inst" "$@" > "$out" 2> "$out.err" &
	tm=$!
	tl_bg $tm
	tl_wait 150 tl_file_is "$idir/$file" "$val" ||
		{ cat "$out.err"; tl_fail "$*: $file is not $val after $((150 * ${TEST_TIMEOUT_SCALE:-1})) s"; }
	tl_log "stream $*: set in $(( $(date +%s) - t0 )) s"
	workload || tl_fail "the workload failed"
	tl_wait 60 grep -q 'tm-func end' "$out" ||
		{ tail -5 "$out"; cat "$out.err"; tl_fail "$*: no end marker in $(wc -l < "$out") lines"; }
	kill -INT $tm
	wait $tm || { cat "$out.err"; tl_fail "$*: tracemap stream exited $?"; }
	if [ "$(state)" != "$before" ]; then
		echo "$before" > before.txt
		state > after.txt
		diff before.txt after.txt
		tl_fail "$*: the instance was not put back"
	fi
	pid=$(sed -n 's/.*tm-func start pid=\([0-9]*\).*/\1/p' "$out" | head -1)
	[ -n "$pid" ] || tl_fail "$*: no start marker"
}

# 1. -p function -l F -l G -n G: N lines of F with the parent, none of G
streamed tm.txt current_tracer function -p function -l "$F" -l "$G" -n "$G"
# (kallsyms may name the traced address otherwise than the filter: 6.1
# lists __do_sys_getppid and reports __x64_sys_getppid, so lines are counted
# by the workload's pid; G leaking through -n would make them 2N)
nf=$(grep -c -- "-$pid *\[.*function: " tm.txt)
[ "$nf" -eq $N ] || { grep -- "-$pid " tm.txt | head; tl_fail "$nf function lines, not $N (-l $F, -n $G)"; }
tl_log "stream: $N of $N $F lines, $G left out by -n: $(grep -m1 -- "-$pid *\[.*function:" tm.txt)"

# a pattern no function matches: refused, nothing traced, nothing changed
"$TM" stream -B "$inst" -p function -l "$F" -l tm_func_no_such_function true > out.txt 2> err.txt &&
	tl_fail "an unmatched -l was taken"
grep -q 'tm_func_no_such_function: no function of this kernel matches' err.txt ||
	{ cat err.txt; tl_fail "an unmatched -l: unclear message"; }
[ "$(state)" = "$before" ] || tl_fail "an unmatched -l changed the instance"

# 2. --func-stack: a stack trace after each call
if tl_stack_own "$idir"; then
streamed st.txt current_tracer function -p function -l "$F" --func-stack
ns=$(grep -c -- "-$pid *\[.*kernel_stack:" st.txt)
[ "$ns" -eq $N ] || { grep -- "-$pid " st.txt | head; tl_fail "$ns stack traces, not $N"; }
tl_log "--func-stack: $N stack traces"
else tl_log "--func-stack: $TL_STACK_SKIP"; fi

# 3. function_graph, limited to F: -g where the instance has set_graph_function,
# else -l (which limits function_graph too) after -g is refused with the reason.
# An entry and an exit per call, in bounded time.
if grep -qw function_graph "$idir/available_tracers"; then
	if [ -e "$idir/set_graph_function" ]; then
		FG="-g $F"
		streamed fg.txt current_tracer function_graph -p function_graph -g "$F"
	else
		FG="-l $F"
		"$TM" stream -B "$inst" -p function_graph -g "$F" true 2> err.txt &&
			tl_fail "-g was taken without set_graph_function"
		grep -q "has no set_graph_function" err.txt || { cat err.txt; tl_fail "-g: unclear refusal"; }
		[ "$(state)" = "$before" ] || tl_fail "-g refused: the instance changed"
		streamed fg.txt current_tracer function_graph -p function_graph -l "$F"
	fi
	# as trace-cmd report prints it: each call of F at depth 0, a leaf "F();"
	# (its exit folded in) or "F() {" closed by a "}" exit; no raw "-->" lines
	grep -- "-$pid *\[.*funcgraph_e" fg.txt > fgp.txt
	nc=$(grep -c 'funcgraph_entry: .*|  [^ ].*()\( {\|;\)$' fgp.txt)
	no=$(grep -c 'funcgraph_entry: .*() {$' fgp.txt)
	nx=$(grep -c 'funcgraph_exit: .*|  *}$' fgp.txt)
	[ "$nc" -eq $N ] && [ "$no" -eq "$nx" ] && ! grep -q -- '-->\|<--' fgp.txt ||
		{ head fgp.txt; tl_fail "function_graph: $nc calls at depth 0 for $N, $no opened, $nx closed"; }
	tl_log "function_graph: $N calls, $(grep -c '();$' fgp.txt) leaves, $no opened and closed; first: $(head -1 fgp.txt)"
	# an entry whose exit is seconds away is not held until then: the idle
	# stream prints it as "S() {" within --latency-ms, then the exit "}"
	S=$(pick hrtimer_nanosleep do_nanosleep)
	if [ -n "$S" ]; then
		"$TM" stream -B "$inst" -p function_graph -l "$S" > sl.txt 2> sl.err &
		tm=$!
		tl_bg $tm
		tl_wait 150 tl_file_is "$idir/current_tracer" function_graph ||
			{ cat sl.err; tl_fail "-l $S: no function_graph tracer"; }
		sleep 8 &
		sp=$!
		tl_wait 60 grep -q -- "-$sp *\[.*funcgraph_entry: .*|  $S() {\$" sl.txt ||
			{ cat sl.err; grep -- "-$sp " sl.txt; tl_fail "-l $S: no '$S() {' while it sleeps"; }
		kill -0 $sp 2> /dev/null || tl_log "note: sleep ended before the check (a slow machine)"
		wait $sp
		tl_wait 60 grep -q -- "-$sp *\[.*funcgraph_exit: .*|  }\$" sl.txt ||
			{ grep -- "-$sp " sl.txt; tl_fail "-l $S: no exit after the sleep"; }
		kill -INT $tm
		wait $tm || { cat sl.err; tl_fail "-l $S: tracemap stream exited $?"; }
		[ "$(state)" = "$before" ] || tl_fail "-l $S: the instance was not put back"
		tl_log "function_graph: an entry printed while its call sleeps: $(grep -m1 -- "-$sp " sl.txt)"
	fi
else
	tl_log "no function_graph tracer in instances on this kernel: not run"
fi

# 4. flight -p function -l: the dump holds the calls, the instance is put back;
# without the mapping (before 6.10) flight refuses first, naming the kernel
if ! tl_can_map "$inst"; then
	"$TM" flight -B "$inst" -p function -l "$F" -o fl.dat --marker X > fl.out 2> fl.err &&
		tl_fail "flight ran without the mapping"
	grep -q 'Linux 6.10 or later' fl.err || { cat fl.err; tl_fail "flight: no kernel version named"; }
	[ "$(state)" = "$before" ] || tl_fail "flight without the mapping changed the instance"
	tl_log "flight without the mapping: $(cat fl.err)"
else
	"$TM" flight -B "$inst" -p function -l "$F" -o fl.dat --marker 'tm-func end' --max-dumps 1 \
		> fl.out 2> fl.err &
	tm=$!
	tl_bg $tm
	tl_wait 120 tl_file_is "$idir/current_tracer" function || { cat fl.err; tl_fail "flight set no tracer"; }
	workload
	tl_wait 120 sh -c "! kill -0 $tm 2>/dev/null" || { cat fl.err; tl_fail "flight did not dump and end"; }
	wait $tm || { cat fl.err; tl_fail "flight exited $?"; }
	[ "$(state)" = "$before" ] || tl_fail "flight: the instance was not put back"
	if command -v trace-cmd > /dev/null; then
		trace-cmd report -i fl-1.dat > fl.txt 2> /dev/null || tl_fail "trace-cmd report of the flight dump failed"
		n=$(grep -c "function: " fl.txt)
		[ "$n" -ge $N ] || { cat fl.out fl.err; grep -m3 'function:' fl.txt; head -3 fl.txt
			tl_fail "the flight dump holds $n calls of $F, not $N or more"; }
		tl_log "flight: the dump holds $n calls of $F"
	fi
fi

# 5. the first workload under trace-cmd record: the same lines in its report
lines_of() {
	p=$(sed -n 's/.*tm-func start pid=\([0-9]*\).*/\1/p' "$1" | head -1)
	grep -- "-$p *\[" "$1" | grep -v 'print:' | sed -E \
		-e 's/^( *[^ ].*)-'"$p"' +\[[0-9]{3}\] +[0-9]+\.[0-9]{6}: /\1-PID [CPU] TIME: /'
}
# (last: trace-cmd puts back no filter it found, and resets the tracer)
if command -v trace-cmd > /dev/null; then
	tl_cmdlines trace-cmd record -B "$inst" -p function -l "$F" -l "$G" -n "$G" -o tc.dat \
		sh -c "trap 'sh $TL_TMP/cmdlines-refresh.sh' EXIT; python3 -c \"\$W\"" > tc.log 2>&1 ||
		tl_log "trace-cmd record exited $? (the report is what counts)"
	trace-cmd report -i tc.dat > tc.raw 2> tc.err || { cat tc.log tc.err; tl_fail "trace-cmd report failed"; }
	sed -n "s/^$inst: //p" tc.raw > tc.txt
	lines_of tm.txt > tm.cmp
	lines_of tc.txt > tc.cmp
	[ "$(grep -c "function:" tc.cmp)" -eq $N ] ||
		{ head tc.raw; tl_fail "trace-cmd report shows $(grep -c function: tc.cmp) function lines, not $N"; }
	diff -u tc.cmp tm.cmp > cmp.diff || { cat cmp.diff; tl_fail "tracemap stream and trace-cmd report differ on function lines"; }
	tl_log "$N function lines equal to trace-cmd report's"
	# function_graph with the options of 3: the same lines, durations masked
	if [ -n "${FG:-}" ]; then
		tl_cmdlines trace-cmd record -B "$inst" -p function_graph $FG -o tg.dat \
			sh -c "trap 'sh $TL_TMP/cmdlines-refresh.sh' EXIT; python3 -c \"\$W\"" \
			> tg.log 2>&1 || tl_log "trace-cmd record -p function_graph exited $?"
		trace-cmd report -i tg.dat > tg.raw 2> tg.err ||
			{ cat tg.log tg.err; tl_fail "trace-cmd report of function_graph failed"; }
		sed -n "s/^$inst: //p" tg.raw > tg.txt
		dur='s/funcgraph_(entry|exit): +[$#!+ ] [0-9.]+ us +\|/funcgraph_\1: DURATION |/'
		lines_of fg.txt | sed -E "$dur" > fm.cmp
		lines_of tg.txt | sed -E "$dur" > fc.cmp
		[ "$(grep -c funcgraph_ fc.cmp)" -ge $N ] ||
			{ head tg.raw; tl_fail "trace-cmd report shows $(grep -c funcgraph_ fc.cmp) function_graph lines"; }
		diff -u fc.cmp fm.cmp > fg.diff ||
			{ cat fg.diff; tl_fail "tracemap stream and trace-cmd report differ on function_graph lines"; }
		tl_log "$(wc -l < fm.cmp) function_graph lines ($FG) equal to trace-cmd report's, durations masked"
	fi
fi

exit 0
