// SPDX-License-Identifier: GPL-2.0-only
/*
 * tc-host: a stand-in host for the trace-cmd plugin's start-up check. It
 * links libtracefs but reads no ring buffer (it never calls
 * tracefs_cpu_open()), like a program the plugin was preloaded into by
 * mistake or a trace-cmd that reads buffers some other way. Prints the
 * tracefs directory and exits 0.
 */
#include <stdio.h>

#include <tracefs.h>

int main(void)
{
	const char *dir = tracefs_tracing_dir();

	printf("tracefs: %s\n", dir ? dir : "(none)");
	return 0;
}
