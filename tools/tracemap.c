// SPDX-License-Identifier: GPL-2.0-only
/*
 * tracemap: read ftrace ring buffers through their memory mapping.
 * The subcommands live in cmd-*.c; this file holds main() and what they share.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs.h>

#include "tracemap.h"
#include "tracemap-tool.h"

/* Keep in step with Documentation/tracemap.1.txt (tests/tools/tool-help.sh checks). */
static const char usage_text[] =
"usage: tracemap stream [-B instance | --top] [-e system[:event] [-f filter]]...\n"
"                       [-P pid[,pid...]] [-M cpumask] [-b kb] [-C clock]\n"
"                       [--non-consuming] [--unordered] [--latency-ms N]\n"
"                       [--watermark PCT] [--busy-poll] [--raw] [--no-filter]\n"
"                       [-p tracer] [-l function]... [-n function]...\n"
"                       [-g function]... [--func-stack] [-F] [command [args...]]\n"
"       tracemap snapshot [-B instance | --top] [-M cpumask] [-o file]\n"
"       tracemap flight [-B instance] [-e system[:event]]... [-b kb] [-M cpumask]\n"
"                       [-o file | -o directory/] [--marker string]\n"
"                       [-T system:event [-F filter]] [--after-ms N]\n"
"                       [--hold-off-ms N] [--max-dumps N] [-p tracer] [-l function]...\n"
"                       [-n function]... [-g function]... [--func-stack]\n"
"                       [-- command [arg]...]\n"
"       tracemap flight --dump [pid | --all]\n"
"       tracemap stat [-B instance | --top]\n"
"       tracemap view [-B instance] [-e system[:event]]... [-b kb]\n"
"                     [--follow MS] [--kernelshark PATH]\n"
"       tracemap reset\n"
"       tracemap --help | --version\n"
"\n"
"Read the ftrace ring buffers of an instance through their memory mapping\n"
"(Linux 6.10 or later).\n"
"\n"
"stream: enable the events, print each event as it arrives the way\n"
"'trace-cmd report' does, until Ctrl-C or SIGTERM (or the end of the\n"
"command); then put back what it changed and print per-CPU statistics to\n"
"stderr. The events tracemap causes itself are left out.\n"
"  -B instance          stream this instance, made (and removed at exit) when\n"
"                       it does not exist; default: a private instance\n"
"                       tracemap-<pid>, removed at exit\n"
"  --top                stream the top-level buffer\n"
"  -e system[:event]    enable these events while streaming (repeatable);\n"
"                       a system alone enables all its events, an event\n"
"                       name alone that event in every system; all: every\n"
"                       event\n"
"  -f filter            a filter on the events of the -e before it\n"
"  -P pid[,pid...]      only the events of these tasks (set_event_pid)\n"
"  -M cpumask           CPUs to read, hexadecimal as in tracing_cpumask\n"
"                       (default: the online CPUs)\n"
"  -b kb                buffer size per CPU in KiB while streaming\n"
"  -C clock             trace_clock while streaming (local, global, mono...)\n"
"  --non-consuming      follow the buffer without removing what is read\n"
"  --unordered          drain the fullest CPU first instead of merging by time\n"
"  --latency-ms N       deliver events the kernel does not wake up for within\n"
"                       N ms, and write output to a file or pipe at least\n"
"                       that often (default 100)\n"
"  --watermark PCT      buffer_percent while streaming (default: 0, a wakeup\n"
"                       per event, on a terminal; 50 and a look every\n"
"                       --latency-ms for a file or pipe)\n"
"  --busy-poll          never sleep: lowest latency, one CPU busy\n"
"  --raw                print CPU, time stamp and payload size only\n"
"  -p tracer            the instance's tracer while streaming (function,\n"
"                       function_graph), as trace-cmd record -p\n"
"  -l function          trace only this function or glob (set_ftrace_filter)\n"
"  -n function          do not trace it (set_ftrace_notrace); wins over -l\n"
"  -g function          function_graph: graph only it (set_graph_function)\n"
"  --func-stack         a kernel stack after each traced function (with -l)\n"
"  --no-filter          keep the events tracemap causes itself\n"
"  -F                   only the events of the command (and its children)\n"
"  command [args...]    run it once the events are enabled; stop when it ends\n"
"\n"
"snapshot: write what the buffer holds now to a trace.dat file (version 6,\n"
"as trace-cmd report and KernelShark read it) without consuming anything,\n"
"and print one line: file, per-CPU events and time span, events lost, how\n"
"long the copy and the write took.\n"
"  -B instance          an existing instance (default: the top-level buffer)\n"
"  --top                the top-level buffer\n"
"  -M cpumask           CPUs to dump (default: the online CPUs)\n"
"  -o file              the file (default trace.dat; - for standard output)\n"
"\n"
"flight: a flight recorder. Keep the buffer running in overwrite mode and\n"
"on each trigger write a trace.dat of its latest contents, never pausing\n"
"tracing and never consuming; one line per dump. Ctrl-C or SIGTERM end it\n"
"and put back what it changed.\n"
"  -B instance          record in this existing instance; default: a\n"
"                       private instance tracemap-flight-<pid>, removed at exit\n"
"  -e system[:event]    enable these events while recording (repeatable)\n"
"  -b kb                buffer size per CPU in KiB while recording\n"
"  -M cpumask           CPUs to dump and to watch for triggers\n"
"  -o file              dump to file-1.dat, file-2.dat, ... (default\n"
"                       trace.dat: trace-1.dat, ...); %n is the number, %t\n"
"                       the UTC time; an existing file is never overwritten\n"
"  -o directory/        dump to directory/trace-<n>.dat\n"
"  --marker string      trigger: a trace_marker write containing string\n"
"  -T system:event      trigger: this event (enabled while recording) ...\n"
"  -F filter            ... when it matches this libtraceevent filter\n"
"                       (\"prev_state == 2 && prev_pid == 1234\")\n"
"  --after-ms N         dump N ms after the trigger, with what followed it\n"
"  --hold-off-ms N      ignore triggers for N ms after a dump (default 1000)\n"
"  --max-dumps N        end after N dumps\n"
"  -p, -l, -n, -g, --func-stack   the tracer and its filters while\n"
"                       recording, as for stream\n"
"  -- command [arg]...  run the command; its exit ends the recorder, a\n"
"                       non-zero exit status after a dump\n"
"  --dump [pid]         send the dump trigger (SIGUSR1) to the running\n"
"                       tracemap flight (or to pid)\n"
"  --dump --all         send it to every running tracemap flight\n"
"SIGUSR1 is always a trigger.\n"
"\n"
"stat: for each CPU of the instance (default: the top-level buffer), whether\n"
"its ring buffer can be mapped, sub-buffer size and count, events written,\n"
"overwritten, read and unread, and the instance's watermark.\n"
"  -B instance          an existing instance\n"
"  --top                the top-level buffer\n"
"\n"
"view: KernelShark on the live buffer of the instance, nothing consumed\n"
"(Tools -> tracemap: refresh now, follow, tail mode, stop following).\n"
"  -B instance          an existing instance; default: a private instance\n"
"                       tracemap-view-<pid>, removed when KernelShark exits\n"
"  -e system[:event]    enable these events while KernelShark runs\n"
"  -b kb                the instance's buffer size per CPU (KiB) meanwhile\n"
"  --follow MS          refresh every MS milliseconds from the start\n"
"  --kernelshark PATH   the KernelShark program (default: kernelshark)\n"
"\n"
"reset: put back what a tracemap stream that was killed (SIGKILL, a crash)\n"
"left: its private instance, the events it enabled, buffer_percent. A\n"
"stream does this itself when it starts; stat only says so.\n"
"\n"
"  -h, --help           this text (also after any command)\n"
"  --version            the version of tracemap\n"
"\n"
"Exit status: 0 on success, 1 on any error (nothing is changed when the\n"
"arguments name an unknown event, instance or CPU).\n";

void tool_usage(FILE *to)
{
	fputs(usage_text, to);
}

void tool_version(void)
{
	printf("tracemap %s\n", TRACEMAP_VERSION);
}

void tool_err(const char *fmt, ...)
{
	va_list ap;

	fputs("tracemap: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static bool lib_verbose;

static void lib_print(void *ctx, enum tracemap_log_level level, const char *msg)
{
	if (level <= TRACEMAP_LOG_WARN || lib_verbose)
		tool_err("%s", msg);
}

void tool_set_lib_print(bool verbose)
{
	lib_verbose = verbose;
	tracemap_set_print(lib_print, NULL);
}

/* The library finds tracefs and explains when it cannot. */
const char *tool_tracefs(void)
{
	static char dir[4096];

	if (!dir[0] && tracemap_tracefs_dir(NULL, dir, sizeof(dir)))
		return NULL;
	return dir;
}

struct tracemap_instance *tool_instance_open(const char *tfs, const char *name,
					     const char *prefix, int kb,
					     const struct tracemap_tracer_opts *tracer,
					     const char **iname, bool *private)
{
	struct tracemap_instance_opts io = {
		.sz = sizeof(io),
		.prefix = prefix,
		.buffer_size_kb = kb > 0 ? (unsigned long)kb : 0,
		.tracer = tracer,
		.tracefs_dir = tfs,
	};
	struct tracemap_instance *ti;
	int created = 0;

	/* a failure is explained by the library (libtracemap-print(3)) */
	ti = tracemap_instance_open(name, &io);
	if (!ti)
		return NULL;
	*iname = tracemap_instance_name(ti, &created);
	*private = !name && created;
	return ti;
}

int tool_parse_int(const char *opt, const char *arg, int min, int max, int *val)
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

int tool_opt_error(char **argv, const char *with_arg, int long_min, int long_max)
{
	if (optopt > 0 && optopt < 256 && strchr(with_arg, optopt))
		tool_err("option -%c needs an argument (tracemap --help)", optopt);
	else if (optopt && optopt >= long_min && optopt <= long_max)
		tool_err("option %s needs an argument (tracemap --help)", argv[optind - 1]);
	else
		tool_err("unknown option '%s' (tracemap --help)", argv[optind - 1]);
	return -1;
}

int tool_buffer_opt(int c, const char *arg, struct tool_buffer *b)
{
	const struct tool_int_opt *i;
	char *end;
	long v;
	int n;

	switch (c) {
	case 'B':
		b->instance = arg;
		return 1;
	case 't':
		b->top = true;
		return 1;
	case 'M':
		b->cpumask = arg;
		return 1;
	case 'e':
		b->specs[b->nr_specs++] = (struct tracemap_event_spec){ .name = arg };
		return 1;
	case 'f':
		if (!b->nr_specs) {
			tool_err("-f %s: a filter applies to the -e before it; give -e first", arg);
			return -1;
		}
		b->specs[b->nr_specs - 1].filter = arg;
		return 1;
	case 'b':
		/* KiB per CPU, as trace-cmd record -b */
		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < 1 || v > 16 * 1024 * 1024) {
			tool_err("-b %s: give the buffer size per CPU in KiB, from 1 to 16777216", arg);
			return -1;
		}
		b->buffer_kb = (int)v;
		return 1;
	}
	if (b->tracer) {
		n = tool_tracer_opt(c, arg, b->tracer);
		if (n)
			return n;
	}
	for (i = b->ints; i && i->val; i++)
		if (c == i->val)
			return tool_parse_int(i->name, arg, i->min, i->max, i->dst) ? -1 : 1;
	return 0;
}

int tool_getopt(int argc, char **argv, const char *opts, const struct option *longopts,
		struct tool_buffer *b)
{
	int c, n;

	do {
		c = getopt_long(argc, argv, opts, longopts, NULL);
		if (c == -1)
			return -1;
		n = tool_buffer_opt(c, optarg, b);
	} while (n > 0);
	return n < 0 ? '!' : c;
}

void tool_hold_signals(sigset_t *sigs, bool usr1)
{
	sigemptyset(sigs);
	sigaddset(sigs, SIGINT);
	sigaddset(sigs, SIGTERM);
	sigaddset(sigs, SIGHUP);
	sigaddset(sigs, SIGCHLD);
	if (usr1)
		sigaddset(sigs, SIGUSR1);
	sigprocmask(SIG_BLOCK, sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int tool_end_args(int argc, char **argv, const char *iname, bool top)
{
	if (optind < argc) {
		tool_err("unexpected argument '%s' (tracemap --help)", argv[optind]);
		return -1;
	}
	if (top && iname) {
		tool_err("-B and --top exclude each other");
		return -1;
	}
	return 0;
}

int tool_check_mappable(const char *iname)
{
	struct tracemap_cpu_opts co = { .sz = sizeof(co), .mode = TRACEMAP_MODE_SNAPSHOT };
	struct tracemap_cpu *c;
	int cpu = sched_getcpu();

	c = tracemap_cpu_open(iname, cpu < 0 ? 0 : cpu, &co);
	if (!c && errno == EOPNOTSUPP)
		return -1;
	tracemap_cpu_close(c);
	return 0;
}

void tool_warn_tracing_off(const char *tfs, const char *iname)
{
	char dir[4096], path[4200], on[8] = "";
	FILE *f;

	if (tracemap_instance_dir(tfs, iname ? iname : TRACEMAP_TOP_LEVEL, dir, sizeof(dir)))
		return;
	snprintf(path, sizeof(path), "%s/tracing_on", dir);
	f = fopen(path, "re");
	if (!f)
		return;
	if (!fgets(on, sizeof(on), f))
		on[0] = '\0';
	fclose(f);
	if (on[0] == '0')
		tool_err("warning: tracing is off in %s (tracing_on is 0): no new events will be "
			 "recorded; turn it on with 'echo 1 > %s/tracing_on'",
			 iname && strcmp(iname, TRACEMAP_TOP_LEVEL) ? iname : "the top-level buffer",
			 dir);
}

int tool_instance_dir(const char *name, char *idir, size_t size)
{
	const char *tfs = tool_tracefs();

	if (!tfs)
		return -1;
	if (name && !*name) {
		tool_err("invalid instance name '': give -B a name, or leave it out");
		return -1;
	}
	/* without -B: the top level (stat, snapshot), or a private one made later */
	return tracemap_instance_dir(tfs, name ? name : TRACEMAP_TOP_LEVEL, idir, size) ? -1 : 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (!cmd) {
		tool_usage(stderr);
		return 1;
	}
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		tool_usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version")) {
		tool_version();
		return 0;
	}
	tool_set_lib_print(false);
	if (!strcmp(cmd, "stream"))
		return cmd_stream(argc - 1, argv + 1);
	if (!strcmp(cmd, "stat"))
		return cmd_stat(argc - 1, argv + 1);
	if (!strcmp(cmd, "snapshot"))
		return cmd_snapshot(argc - 1, argv + 1);
	if (!strcmp(cmd, "flight"))
		return cmd_flight(argc - 1, argv + 1);
	if (!strcmp(cmd, "view"))
		return cmd_view(argc - 1, argv + 1);
	if (!strcmp(cmd, "reset"))
		return cmd_reset(argc - 1, argv + 1);
	tool_err("unknown command '%s': use stream, snapshot, flight, stat, view or reset "
		 "(tracemap --help)", cmd);
	return 1;
}
