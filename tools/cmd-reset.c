// SPDX-License-Identifier: GPL-2.0-only
/*
 * tracemap reset: put back what tracemap streams left in tracefs when they
 * were killed without a chance to (SIGKILL, a crash): the private instances
 * they created, the events they enabled and the buffer_percent they set.
 * Streams that still run are left alone.
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
	int c, n, failed = 0;

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
	n = state_repair(true, &failed);
	if (!n)
		printf("tracemap: nothing to put back\n");
	return failed ? 1 : 0;
}
