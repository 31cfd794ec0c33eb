// SPDX-License-Identifier: GPL-2.0-only
/*
 * tracemap reset: put back what programs using libtracemap (tracemap
 * itself, the plugins, the Python module, any other) left in tracefs when
 * they were killed without a chance to (SIGKILL, a crash): the instances
 * they created, the events, filters and pid lists, buffer_percent,
 * buffer_size_kb and trace_clock they changed. The library keeps the
 * record and puts it back (tracemap_state_repair()); running programs are
 * left alone.
 */
#include <getopt.h>
#include <stdio.h>

#include "tracemap.h"
#include "tracemap-tool.h"

int cmd_reset(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, n;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		if (c == 'h') {
			tool_usage(stdout);
			return 0;
		}
		tool_err("unknown option '%s' (tracemap --help)", argv[optind - 1]);
		return 1;
	}
	if (optind < argc) {
		tool_err("unexpected argument '%s' (tracemap --help)", argv[optind]);
		return 1;
	}
	if (!tool_tracefs())
		return 1;
	/* each repair, and each failure, is said by the library */
	n = tracemap_state_repair(0);
	if (!n)
		printf("tracemap: nothing to put back\n");
	return n < 0 ? 1 : 0;
}
