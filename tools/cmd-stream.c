// SPDX-License-Identifier: LGPL-2.1
/*
 * tracemap stream: enable events in an instance, print them as they arrive
 * the way 'trace-cmd report' prints a trace.dat, restore everything on
 * Ctrl-C/SIGTERM and print per-CPU statistics. The pieces are in
 * stream-*.c (see cmd-stream.h); this file holds the options and the order.
 *
 * Nothing is changed before every argument was checked. Changes are made in
 * this order and undone in the reverse one: the private instance (if no -B),
 * the stream (buffer_percent), the events.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <tracefs.h>

#include "tracemap.h"
#include "tracemap-tool.h"
#include "cmd-stream.h"

#define STDOUT_BUF		(1 << 20)

struct opts {
	const char *instance;	/* -B */
	char **specs;		/* -e */
	int nr_specs;
	const char *cpumask;
	int latency_ms;
	int watermark;
	/* the switches, set by getopt_long() itself */
	int top;
	int follow;
	int unordered;
	int busy;
	int raw;
};

/* ---------------------------------------------------------- statistics */

static void print_stats(struct tracemap_stream *s, double secs)
{
	struct tracemap_cpu_stats st, tot = { 0 };
	struct tracemap_cpu *c;
	int i;

	fprintf(stderr, "tracemap: %.1f s\n", secs);
	/* gaps: certain; maybe: follow gaps that may hide no loss (libtracemap-cpu(3)) */
	fprintf(stderr, "%4s %-7s %12s %14s %10s %6s %10s %12s %10s %8s %6s\n", "cpu", "backend",
		"events", "bytes", "lost", "gaps", "wakeups", "get_reader", "reads", "late",
		"maybe");
	for (i = 0; i < tracemap_stream_nr_cpus(s); i++) {
		c = tracemap_stream_cpu(s, i);
		if (tracemap_cpu_stats(c, &st, sizeof(st)))
			continue;
		fprintf(stderr, "%4d %-7s %12llu %14llu %10llu %6llu %10llu %12llu %10llu %8llu "
			"%6llu\n",
			tracemap_cpu_id(c),
			tracemap_cpu_backend(c) == TRACEMAP_BACKEND_MMAP ? "mmap" : "read",
			(unsigned long long)st.events, (unsigned long long)st.bytes,
			(unsigned long long)st.lost, (unsigned long long)st.lost_unknown,
			(unsigned long long)st.wakeups, (unsigned long long)st.get_reader,
			(unsigned long long)st.reads, (unsigned long long)st.late,
			(unsigned long long)st.gaps_possible);
		tot.events += st.events;
		tot.bytes += st.bytes;
		tot.lost += st.lost;
		tot.lost_unknown += st.lost_unknown;
		tot.wakeups += st.wakeups;
		tot.get_reader += st.get_reader;
		tot.reads += st.reads;
		tot.late += st.late;
		tot.gaps_possible += st.gaps_possible;
	}
	fprintf(stderr, "%4s %-7s %12llu %14llu %10llu %6llu %10llu %12llu %10llu %8llu %6llu\n",
		"all",
		"", (unsigned long long)tot.events, (unsigned long long)tot.bytes,
		(unsigned long long)tot.lost, (unsigned long long)tot.lost_unknown,
		(unsigned long long)tot.wakeups, (unsigned long long)tot.get_reader,
		(unsigned long long)tot.reads, (unsigned long long)tot.late,
		(unsigned long long)tot.gaps_possible);
}

/*
 * Every signal whose default is to end the process, except those that
 * cannot be caught (SIGKILL, SIGSTOP: state.c's file is for those) and
 * those that report a fault of this process. A signal ignored when we
 * started stays ignored: SIGHUP under nohup does not stop the stream.
 */
static void stop_signals(sigset_t *set)
{
	static const int sigs[] = {
		SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM,
		SIGPROF, SIGXCPU, SIGIO, SIGPWR, SIGSTKFLT,
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
}

/* buffer_percent as it is, before the stream sets its own (follow mode leaves it) */
static int note_percent(struct tracefs_instance *inst, bool follow)
{
	char *v;
	int ret;

	if (follow)
		return 0;
	v = tracefs_instance_file_read(inst, "buffer_percent", NULL);
	if (!v)
		return 0;
	v[strcspn(v, "\n")] = '\0';
	ret = state_note("buffer_percent", v);
	free(v);
	return ret;
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

static void warn_tracing_off(struct tracefs_instance *inst, const char *tfs)
{
	char *on = tracefs_instance_file_read(inst, "tracing_on", NULL);
	char *dir;

	if (on && on[0] == '0') {
		dir = tracefs_instance_get_dir(inst);
		tool_err("warning: tracing is off in %s (tracing_on is 0): no new events will be "
			 "recorded; turn it on with 'echo 1 > %s/tracing_on'",
			 inst ? tracefs_instance_get_name(inst) : "the top-level buffer",
			 dir ? dir : tfs);
		tracefs_put_tracing_file(dir);
	}
	free(on);
}

static int parse_int(const char *opt, const char *arg, int min, int max, int *val)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max) {
		tool_err("%s %s: give a number from %d to %d", opt, arg, min, max);
		return -1;
	}
	*val = (int)v;
	return 0;
}

enum { OPT_LATENCY = 256, OPT_WATERMARK };

static int parse_args(int argc, char **argv, struct opts *o)
{
	const struct option longopts[] = {
		{ "top", no_argument, &o->top, 1 },
		{ "non-consuming", no_argument, &o->follow, 1 },
		{ "unordered", no_argument, &o->unordered, 1 },
		{ "latency-ms", required_argument, NULL, OPT_LATENCY },
		{ "watermark", required_argument, NULL, OPT_WATERMARK },
		{ "busy-poll", no_argument, &o->busy, 1 },
		{ "raw", no_argument, &o->raw, 1 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->latency_ms = 100;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+B:e:M:h", longopts, NULL)) != -1) {
		switch (c) {
		case 0:		/* a switch, set through longopts */
			break;
		case 'B':
			o->instance = optarg;
			break;
		case 'e':
			o->specs[o->nr_specs++] = optarg;
			break;
		case 'M':
			o->cpumask = optarg;
			break;
		case OPT_LATENCY:
			if (parse_int("--latency-ms", optarg, 1, 3600000, &o->latency_ms))
				return -1;
			break;
		case OPT_WATERMARK:
			if (parse_int("--watermark", optarg, 0, 100, &o->watermark))
				return -1;
			break;
		case 'h':
			tool_usage(stdout);
			exit(0);
		default:
			if (optopt && optopt < 256 && strchr("BeM", optopt))
				tool_err("option -%c needs an argument (tracemap --help)", optopt);
			else if (optopt >= OPT_LATENCY && optopt <= OPT_WATERMARK)
				tool_err("option %s needs an argument (tracemap --help)",
					 argv[optind - 1]);
			else
				tool_err("unknown option '%s' (tracemap --help)", argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		tool_err("unexpected argument '%s' (tracemap --help)", argv[optind]);
		return -1;
	}
	if (o->top && o->instance) {
		tool_err("-B and --top exclude each other: give one buffer to stream");
		return -1;
	}
	return 0;
}

int cmd_stream(int argc, char **argv)
{
	struct tracemap_stream_opts so = { .sz = sizeof(so) };
	struct tracefs_instance *inst = NULL;
	struct ev_set events = { 0 };
	struct tracemap_stream *s = NULL;
	struct opts o = { 0 };
	struct output out = { .fd = -1 };
	struct printer p;
	int sfd = -1, ret = 1;
	bool private = false, printer_ok = false;
	char pname[64], idir[4096];
	const char *tfs, *iname;
	uint64_t start, stopped;
	bool cut;
	sigset_t sigs;

	/* held from here on, read through a signalfd: setup and restore are never cut short */
	stop_signals(&sigs);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* past a file size limit: EFBIG from write(), reported, not a silent kill */
	signal(SIGXFSZ, SIG_IGN);

	o.specs = calloc(argc, sizeof(*o.specs));
	if (!o.specs || parse_args(argc, argv, &o))
		goto out;
	tfs = tool_tracefs();
	if (!tfs)
		goto out;
	if (tool_instance_dir(o.instance, idir, sizeof(idir))) {
		if (o.instance && *o.instance)
			tool_err("(without -B, tracemap streams a private instance)");
		goto out;
	}
	if (events_resolve(tfs, o.specs, o.nr_specs, &events))
		goto out;
	/* what a killed stream left, before we look at what is enabled */
	state_repair(true, NULL);

	/* the buffer: an existing instance, the top level, or our own */
	if (o.instance) {
		inst = tracefs_instance_alloc(tfs, o.instance);
		if (!inst) {
			tool_err("cannot open instance %s: %s", o.instance, strerror(errno));
			goto out;
		}
	}
	if (out_init(&out, STDOUT_FILENO, STDOUT_BUF) || printer_init(&p, tfs, inst, o.raw, &out))
		goto out;
	printer_ok = true;
	if (!o.instance && !o.top) {
		snprintf(pname, sizeof(pname), "tracemap-%d", (int)getpid());
		if (state_begin(tfs, pname, true))
			goto out;
		inst = tracefs_instance_create(pname);
		if (!inst) {
			tool_err("cannot create instance %s: %s", pname, strerror(errno));
			goto out;
		}
		if (!tracefs_instance_is_new(inst)) {
			tool_err("instance %s already exists: remove it (rmdir %s/instances/%s) "
				 "if no one uses it", pname, tfs, pname);
			tracefs_instance_free(inst);
			inst = NULL;
			goto out;
		}
		private = true;
		/* same clock as a fresh instance has; keep the time column in step */
		if (!o.raw)
			p.tfmt = printer_time_format(inst);
	}
	iname = inst ? tracefs_instance_get_name(inst) : NULL;
	warn_tracing_off(inst, tfs);
	if (!private && (state_begin(tfs, iname, false) || note_percent(inst, o.follow)))
		goto out;

	so.mode = o.follow ? TRACEMAP_MODE_FOLLOW : TRACEMAP_MODE_CONSUME;
	so.flags = (o.unordered ? TRACEMAP_STREAM_UNORDERED : 0) |
		   (o.busy ? TRACEMAP_STREAM_BUSY_POLL : 0);
	so.cpumask = o.cpumask;
	so.watermark = o.watermark;
	so.latency_ms = o.latency_ms;
	so.on_event = printer_on_event;
	so.on_lost = printer_on_lost;
	so.ctx = &p;
	so.tracefs_dir = tfs;
	/* a failure is explained by the library (libtracemap-print(3)) */
	s = tracemap_stream_open(iname, &so);
	if (!s)
		goto out;
	if (events_enable(inst, &events, private ? NULL : state_note))
		goto out;

	sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0) {
		tool_err("signalfd: %s", strerror(errno));
		goto out;
	}
	if (private)
		fprintf(stderr, "tracemap: streaming the private instance %s (markers: %s/instances/"
			"%s/trace_marker); Ctrl-C stops\n", iname, tfs, iname);
	start = now_ns();
	p.sfd = sfd;
	out.sfd = sfd;
	ret = stream_loop(s, &p, sfd, o.busy, o.latency_ms) ? 1 : 0;

	/* stop: the events first, then what is left in the buffers, bounded */
	stopped = now_ns();
	events_restore(inst, &events);
	cut = stream_final_drain(s, &p, stopped);
	p.sfd = -1;
	print_stats(s, (stopped - start) / 1e9);
	out_report(&out);
	if (!o.follow)
		report_left(s, cut);
	if (out_failed(&out))
		ret = 1;
out:
	events_restore(inst, &events);
	tracemap_stream_close(s);
	if (private && tracefs_instance_destroy(inst))
		tool_err("cannot remove instance %s: %s (remove it with rmdir)",
			 tracefs_instance_get_name(inst), strerror(errno));
	else
		state_end();
	tracefs_instance_free(inst);
	if (printer_ok)
		printer_free(&p);
	events_free(&events);
	free(o.specs);
	if (sfd >= 0)
		close(sfd);
	out_free(&out);
	return ret;
}
