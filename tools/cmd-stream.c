// SPDX-License-Identifier: GPL-2.0-only
/*
 * tracemap stream: enable events in an instance, print them as they arrive
 * the way 'trace-cmd report' prints a trace.dat, restore everything on
 * Ctrl-C/SIGTERM and print per-CPU statistics. The pieces are in
 * stream-*.c (see cmd-stream.h); this file holds the options and the order.
 *
 * Nothing is changed before every argument was checked. Changes are made in
 * this order and undone in the reverse one: the command (held before its
 * exec), the stream, whose library makes the instance (private, or -B made
 * when missing), sets -b, -C and -p, buffer_percent, events, filters and
 * pids, writes each change down for tracemap reset, and puts them back.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tracefs.h>

#include "tracemap.h"
#include "tracemap-tool.h"
#include "cmd-stream.h"

#define STDOUT_BUF		(1 << 20)

struct opts {
	struct tool_buffer buf;	/* -B, --top, -e with -f, -M, -b, the tracer and the numbers */
	int *pids;		/* -P */
	int nr_pids;
	char **command;		/* the trailing command, or NULL */
	const char *clock;	/* -C */
	struct tool_tracer tracer;	/* -p, -l, -n, -g, --func-stack */
	int latency_ms;
	int watermark;		/* < 0: by the output (0 on a terminal, else paced) */
	/* the switches, set by getopt_long() itself */
	int follow;
	int unordered;
	int busy;
	int raw;
	int no_filter;
	int only_command;	/* -F */
};

/* ---------------------------------------------------------- statistics */

/* One line of print_stats(): @cpu (a number or "all"), @backend, the counters. */
static void print_stats_row(const char *cpu, const char *backend,
			    const struct tracemap_cpu_stats *st)
{
	fprintf(stderr, "%4s %-7s %12llu %14llu %10llu %12llu %10llu %12llu %8llu %10llu %8llu "
		"%10llu %10llu %10llu %6llu\n", cpu, backend, (unsigned long long)st->events,
		(unsigned long long)st->bytes, (unsigned long long)st->lost,
		(unsigned long long)st->lost_unknown, (unsigned long long)st->wakeups,
		(unsigned long long)st->get_reader, (unsigned long long)st->ring_scans,
		(unsigned long long)st->reads, (unsigned long long)st->late,
		(unsigned long long)st->own, (unsigned long long)st->helper,
		(unsigned long long)st->stolen,
		(unsigned long long)st->gaps_possible);
}

/* The columns and their names: libtracemap-cpu(3), tracemap_cpu_stats. */
static void print_stats(struct tracemap_stream *s, double secs)
{
	struct tracemap_cpu_stats st, tot = { 0 };
	struct tracemap_cpu *c;
	char cpu[16];
	int i;

	fprintf(stderr, "tracemap: %.1f s\n", secs);
	/* maybe: follow gaps that may hide no loss (libtracemap-cpu(3)) */
	fprintf(stderr, "%4s %-7s %12s %14s %10s %12s %10s %12s %8s %10s %8s %10s %10s %10s %6s\n",
		"cpu", "backend", "events", "bytes", "lost", "lost_unknown", "wakeups", "get_reader",
		"scans", "reads", "late", "own", "helper", "stolen", "maybe");
	for (i = 0; i < tracemap_stream_nr_cpus(s); i++) {
		c = tracemap_stream_cpu(s, i);
		if (tracemap_cpu_stats(c, &st, sizeof(st)))
			continue;
		snprintf(cpu, sizeof(cpu), "%d", tracemap_cpu_id(c));
		print_stats_row(cpu, tracemap_cpu_backend(c) == TRACEMAP_BACKEND_MMAP ? "mmap" : "read",
				&st);
		tot.events += st.events;
		tot.bytes += st.bytes;
		tot.lost += st.lost;
		tot.lost_unknown += st.lost_unknown;
		tot.wakeups += st.wakeups;
		tot.get_reader += st.get_reader;
		tot.ring_scans += st.ring_scans;
		tot.reads += st.reads;
		tot.late += st.late;
		tot.own += st.own;
		tot.helper += st.helper;
		tot.stolen += st.stolen;
		tot.gaps_possible += st.gaps_possible;
	}
	print_stats_row("all", "", &tot);
}

/*
 * Every signal whose default is to end the process, except those that
 * cannot be caught (SIGKILL, SIGSTOP) and
 * those that report a fault of this process (the library's crash record is
 * for those). A signal ignored when we started stays ignored: SIGHUP under nohup does not stop the stream.
 * The real-time signals end a process by default too. SIGCHLD: the
 * traced command ended (stop_requested() tells it from other children).
 */
static void stop_signals(sigset_t *set)
{
	static const int sigs[] = {
		SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM,
		SIGPROF, SIGXCPU, SIGIO, SIGPWR, SIGSTKFLT, SIGCHLD,
	};
	struct sigaction old;
	size_t i;

	sigemptyset(set);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		if (sigs[i] == SIGHUP && !sigaction(SIGHUP, NULL, &old) &&
		    old.sa_handler == SIG_IGN)
			continue;
		sigaddset(set, sigs[i]);
	}
	for (i = SIGRTMIN; i <= (size_t)SIGRTMAX; i++)
		sigaddset(set, i);
}

/*
 * At the stop: events the kernel still holds (not read, left in the
 * buffers), and events taken from the kernel that never reached the printer
 * (the rest of a sub-buffer, the events a merge held back): lost.
 */
static void report_left(struct tracemap_stream *s, bool cut)
{
	uint64_t unread = 0, held = 0;
	struct tracemap_cpu_stats st;
	int i;

	for (i = 0; i < tracemap_stream_nr_cpus(s); i++) {
		if (tracemap_cpu_stats(tracemap_stream_cpu(s, i), &st, sizeof(st)))
			continue;
		unread += tracemap_cpu_stats_unread(&st);
		held += st.held;
	}
	if (unread && cut)
		tool_err("stopped before the buffers were empty: %llu events left in them (not "
			 "read)", (unsigned long long)unread);
	if (held)
		tool_err("%llu events read from the buffers at the stop were not printed (lost)",
			 (unsigned long long)held);
}

/* --------------------------------------------------------------- main */

/* -P 1234 or -P 1234,5678 */
static int parse_pids(const char *arg, struct opts *o)
{
	const char *p = arg;
	char *end;
	long v;
	int *n;

	while (*p) {
		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || end == p || v <= 0 || v > 0x3fffffff || (*end && *end != ',')) {
			tool_err("-P %s: give process ids, e.g. -P 1234 or -P 1234,5678", arg);
			return -1;
		}
		if (kill((pid_t)v, 0) && errno == ESRCH) {
			tool_err("-P %s: no process %ld", arg, v);
			return -1;
		}
		n = realloc(o->pids, (o->nr_pids + 1) * sizeof(*n));
		if (!n)
			return -1;
		o->pids = n;
		o->pids[o->nr_pids++] = (int)v;
		p = *end ? end + 1 : end;
	}
	return 0;
}

enum { OPT_LATENCY = 256, OPT_WATERMARK, OPT_VERSION };

static int parse_args(int argc, char **argv, struct opts *o)
{
	const struct option longopts[] = {
		{ "top", no_argument, NULL, 't' },
		{ "non-consuming", no_argument, &o->follow, 1 },
		{ "unordered", no_argument, &o->unordered, 1 },
		{ "latency-ms", required_argument, NULL, OPT_LATENCY },
		{ "watermark", required_argument, NULL, OPT_WATERMARK },
		{ "busy-poll", no_argument, &o->busy, 1 },
		{ "raw", no_argument, &o->raw, 1 },
		{ "no-filter", no_argument, &o->no_filter, 1 },
		{ "func-stack", no_argument, NULL, TOOL_OPT_FUNC_STACK },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct tool_int_opt ints[] = {
		{ OPT_LATENCY, "--latency-ms", 1, 3600000, &o->latency_ms },
		{ OPT_WATERMARK, "--watermark", 0, 100, &o->watermark },
		{ 0 },
	};
	int c;

	o->latency_ms = 100;
	o->watermark = -1;	/* by the output: see "paced" in cmd_stream() */
	o->buf.tracer = &o->tracer;
	o->buf.ints = ints;
	opterr = 0;
	while ((c = tool_getopt(argc, argv, "+B:e:f:P:FM:C:b:p:l:n:g:h", longopts, &o->buf)) != -1) {
		switch (c) {
		case '!':
			return -1;
		case 0:		/* a switch, set through longopts */
			break;
		case 'P':
			if (parse_pids(optarg, o))
				return -1;
			break;
		case 'F':
			o->only_command = 1;
			break;
		case 'C':
			o->clock = optarg;
			break;
		case OPT_VERSION:
			tool_version();
			exit(0);
		case 'h':
			tool_usage(stdout);
			exit(0);
		default:
			return tool_opt_error(argv, "BefPMCbplng", OPT_LATENCY, OPT_WATERMARK);
		}
	}
	/* on this function's stack */
	o->buf.ints = NULL;
	if (optind < argc)
		o->command = argv + optind;
	if (tool_tracer_check(&o->tracer))
		return -1;
	if (o->buf.top && o->buf.instance) {
		tool_err("-B and --top exclude each other: give one buffer to stream");
		return -1;
	}
	if (o->only_command && !o->command) {
		tool_err("-F traces only the command given after the options: give one "
			 "(tracemap stream -F -e sched ls)");
		return -1;
	}
	if (o->only_command && o->nr_pids) {
		tool_err("-F and -P exclude each other: -F traces the command, -P running tasks");
		return -1;
	}
	return 0;
}

int cmd_stream(int argc, char **argv)
{
	struct tracemap_stream_opts so = { .sz = sizeof(so) };
	struct tracemap_stream *s = NULL;
	struct tracemap_tracer_opts to;
	struct stream_inst si = { 0 };
	struct output out = { .fd = -1 };
	struct opts o = { 0 };
	struct printer p;
	int sfd = -1, ret = 1, cmd_pid = -1, status = 0;
	bool paced, cut;
	uint64_t start, stopped;
	const char *tfs = NULL;
	sigset_t sigs;

	/* held from here on, read through a signalfd: setup and restore are never cut short */
	stop_signals(&sigs);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* past a file size limit: EFBIG from write(), reported, not a silent kill */
	signal(SIGXFSZ, SIG_IGN);
	printer_init(&p, false, &out);

	o.buf.specs = calloc(argc, sizeof(*o.buf.specs));
	if (!o.buf.specs || parse_args(argc, argv, &o))
		goto out;
	/*
	 * Without a command SIGCHLD means nothing: a child inherited through
	 * an exec ends quietly (ignored by default) instead of waking the
	 * signalfd, where a wait for room in the output would take it for a
	 * stop before stop_requested() could tell.
	 */
	if (!o.command) {
		sigset_t chld;

		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		sigdelset(&sigs, SIGCHLD);
		sigprocmask(SIG_UNBLOCK, &chld, NULL);
	}
	printer_init(&p, o.raw, &out);
	tfs = tool_tracefs();
	if (!tfs)
		goto out;
	if (out_init(&out, STDOUT_FILENO, STDOUT_BUF))
		goto out;
	if (instance_check(&si, o.buf.instance))
		goto out;

	if (o.command) {
		cmd_pid = command_fork(o.command);
		if (cmd_pid < 0)
			goto out;
		if (o.only_command) {
			o.pids = malloc(sizeof(*o.pids));
			if (!o.pids)
				goto out;
			o.pids[0] = cmd_pid;
			o.nr_pids = 1;
		}
	}

	/*
	 * Output to a file or pipe goes out every --latency-ms anyway: read the
	 * buffers at that pace too (the library's default, buffer_percent 50
	 * and a look every --latency-ms), not for every event.
	 */
	paced = o.watermark > 0 || (o.watermark < 0 && !out.eager);
	so.mode = o.follow ? TRACEMAP_MODE_FOLLOW : TRACEMAP_MODE_CONSUME;
	so.flags = (o.unordered ? TRACEMAP_STREAM_UNORDERED : 0) |
		   (o.busy ? TRACEMAP_STREAM_BUSY_POLL : 0) |
		   (o.no_filter ? 0 : TRACEMAP_STREAM_NO_SELF) |
		   (o.only_command ? TRACEMAP_STREAM_PID_FORKS : 0) |
		   (o.raw ? 0 : TRACEMAP_STREAM_DECODE) |
		   /* on a terminal: a wakeup per event, its own events filtered out */
		   (paced ? 0 : TRACEMAP_STREAM_LOW_LATENCY) |
		   /* -B of a missing instance: made, and removed at exit, as trace-cmd does */
		   (o.buf.instance ? TRACEMAP_STREAM_CREATE : 0);
	so.cpumask = o.buf.cpumask;
	so.watermark = o.watermark > 0 ? o.watermark : 0;
	so.latency_ms = o.latency_ms;
	so.on_event = printer_on_event;
	so.on_lost = printer_on_lost;
	so.ctx = &p;
	so.tracefs_dir = tfs;
	/* -b first (a mapped buffer cannot be resized), -C, and -p before any reader */
	so.buffer_size_kb = o.buf.buffer_kb;
	so.clock = o.clock;
	so.tracer = tool_tracer_opts(&o.tracer, tfs, &to);
	so.events = o.buf.specs;
	so.nr_events = o.buf.nr_specs;
	so.pids = o.pids;
	so.nr_pids = o.nr_pids;
	/* a failure is explained by the library (libtracemap-print(3)) */
	s = tracemap_stream_open(o.buf.top ? TRACEMAP_TOP_LEVEL : o.buf.instance, &so);
	if (!s || instance_opened(&si, tfs, s))
		goto out;
	tool_warn_tracing_off(tfs, si.name);
	if (printer_attach(&p, s, si.inst))
		goto out;

	sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0) {
		tool_err("signalfd: %s", strerror(errno));
		goto out;
	}
	if (si.created && !si.announce)
		fprintf(stderr, "tracemap: streaming the private instance %s (markers: %s/instances/"
			"%s/trace_marker); Ctrl-C stops\n", si.name, tfs, si.name);
	if (o.command && command_start(o.command[0]))
		goto out;
	start = tracemap_now_ns();
	p.sfd = sfd;
	out.sfd = sfd;
	/* until a stop signal or the end of the command (SIGCHLD) */
	ret = stream_loop(s, &p, sfd, o.busy, o.latency_ms, paced || o.follow) ? 1 : 0;
	stopped = tracemap_now_ns();
	stop_begun();

	/* stop: the events first, then what is left in the buffers (bounded), then the statistics */
	tracemap_stream_restore_events(s);
	cut = stream_final_drain(s, &p, stopped);
	p.sfd = -1;
	print_stats(s, (stopped - start) / 1e9);
	printer_print_stats(&p);
	out_report(&out);
	if (!o.follow)
		report_left(s, cut);
	if (out_failed(&out))
		ret = 1;
	if (o.command)
		command_ended(&status);
out:
	command_abort();
	printer_free(&p);
	/* the events, the tracer, then the instance: the library puts all back
	 * (a failure is said there, and is the run's failure) */
	if (tracemap_stream_close(s))
		ret = 1;
	if (tfs)
		instance_closed(&si, tfs);
	free(o.buf.specs);
	free(o.pids);
	tool_tracer_free(&o.tracer);
	if (sfd >= 0)
		close(sfd);
	out_free(&out);
	return ret;
}
