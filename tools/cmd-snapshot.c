// SPDX-License-Identifier: GPL-2.0-only
/*
 * tracemap snapshot: write what the buffer holds now to a trace.dat
 * without consuming it, through tool_dump() (dump.c).
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "tracemap.h"
#include "tracemap-tool.h"

int cmd_snapshot(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "top", no_argument, NULL, 't' },
		{ "func-stack", no_argument, NULL, TOOL_OPT_FUNC_STACK },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tool_tracer tracer = { 0 };
	struct tool_buffer b = { 0 };
	const char *out = "trace.dat";
	char idir[4096];
	int c, n;

	opterr = 0;
	while ((c = tool_getopt(argc, argv, "+B:M:o:p:l:n:g:h", longopts, &b)) != -1) {
		/*
		 * trace-cmd's tracer options are known here only to say where
		 * they belong: a snapshot copies what was recorded already
		 */
		n = tool_tracer_opt(c, optarg, &tracer);
		tool_tracer_free(&tracer);
		if (n) {
			tool_err("-p, -l, -n, -g and --func-stack set up recording, and a snapshot "
				 "copies what the buffer recorded already: give them to 'tracemap "
				 "flight', or to 'tracemap stream -B name' and snapshot -B name "
				 "meanwhile");
			return 1;
		}
		switch (c) {
		case '!':
			return 1;
		case 'o':
			out = optarg;
			break;
		case 'h':
			tool_usage(stdout);
			return 0;
		default:
			tool_opt_error(argv, "BMoplng", 0, -1);
			return 1;
		}
	}
	if (tool_end_args(argc, argv, b.instance, b.top))
		return 1;
	if (!*out) {
		tool_err("-o needs a file name ('-' for standard output)");
		return 1;
	}
	/* a refused -o is said before anything is copied */
	if (tool_out_kind(out, "-o", false) < 0)
		return 1;
	if (tool_instance_dir(b.instance, idir, sizeof(idir)))
		return 1;
	/* a reader of a pipe or FIFO that goes away is a failed write, said as one */
	signal(SIGPIPE, SIG_IGN);
	/* the report goes to stderr when the file is standard output */
	return tool_dump(b.instance ? b.instance : TRACEMAP_TOP_LEVEL, b.cpumask, out, 0, NULL,
			 strcmp(out, "-") ? stdout : stderr) ? 1 : 0;
}
