// SPDX-License-Identifier: LGPL-2.1
/*
 * tracemap: read ftrace ring buffers through their memory mapping.
 * The subcommands live in cmd-*.c; this file holds main() and what they share.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <tracefs.h>

#include "tracemap.h"
#include "tracemap-tool.h"

/* Keep in step with Documentation/tracemap.1.txt (tests/tools/tool-help.sh checks). */
static const char usage_text[] =
"usage: tracemap stream [-B instance | --top] [-e system[:event]]... [-M cpumask]\n"
"                       [--non-consuming] [--unordered] [--latency-ms N]\n"
"                       [--watermark PCT] [--busy-poll] [--raw]\n"
"       tracemap stat [-B instance | --top]\n"
"       tracemap reset\n"
"       tracemap --help\n"
"\n"
"Read the ftrace ring buffers of an instance through their memory mapping\n"
"(Linux 6.10 or later).\n"
"\n"
"stream: enable the events, print each event as it arrives the way\n"
"'trace-cmd report' does, until Ctrl-C or SIGTERM; then restore the events\n"
"and buffer_percent and print per-CPU statistics to stderr.\n"
"  -B instance          stream this existing instance; default: a private\n"
"                       instance tracemap-<pid>, removed at exit\n"
"  --top                stream the top-level buffer\n"
"  -e system[:event]    enable these events while streaming (repeatable);\n"
"                       a system alone enables all its events, an event\n"
"                       name alone that event in every system\n"
"  -M cpumask           CPUs to read, hexadecimal as in tracing_cpumask\n"
"                       (default: the online CPUs)\n"
"  --non-consuming      follow the buffer without removing what is read\n"
"  --unordered          drain the fullest CPU first instead of merging by time\n"
"  --latency-ms N       deliver events the kernel does not wake up for within\n"
"                       N ms, and write output to a file or pipe at least\n"
"                       that often (default 100)\n"
"  --watermark PCT      buffer_percent while streaming (default 0: wake up\n"
"                       for every event)\n"
"  --busy-poll          never sleep: lowest latency, one CPU busy\n"
"  --raw                print CPU, time stamp and payload size only\n"
"\n"
"stat: for each CPU of the instance (default: the top-level buffer), whether\n"
"its ring buffer can be mapped, sub-buffer size and count, events written,\n"
"overwritten, read and unread, and the instance's watermark.\n"
"  -B instance          an existing instance\n"
"  --top                the top-level buffer\n"
"\n"
"reset: put back what a tracemap stream that was killed (SIGKILL, a crash)\n"
"left: its private instance, the events it enabled, buffer_percent. A\n"
"stream does this itself when it starts; stat only says so.\n"
"\n"
"  -h, --help           this text (also after stream or stat)\n"
"\n"
"Exit status: 0 on success, 1 on any error (nothing is changed when the\n"
"arguments name an unknown event, instance or CPU).\n";

void tool_usage(FILE *to)
{
	fputs(usage_text, to);
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

int tool_instance_dir(const char *name, char *idir, size_t size)
{
	const char *tfs = tool_tracefs();

	if (!tfs)
		return -1;
	if (name && !*name) {
		/* the library reads "" as the top level; on the command line it is a mistake */
		tool_err("invalid instance name '': give -B a name, or leave it out");
		return -1;
	}
	return tracemap_instance_dir(tfs, name, idir, size) ? -1 : 0;
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
	tool_set_lib_print(false);
	if (!strcmp(cmd, "stream"))
		return cmd_stream(argc - 1, argv + 1);
	if (!strcmp(cmd, "stat"))
		return cmd_stat(argc - 1, argv + 1);
	if (!strcmp(cmd, "reset"))
		return cmd_reset(argc - 1, argv + 1);
	tool_err("unknown command '%s': use stream, stat or reset (tracemap --help)", cmd);
	return 1;
}
