// SPDX-License-Identifier: GPL-2.0-only
/*
 * tm-load: write sequence-numbered trace_marker_raw events at a fixed
 * offered rate into an instance, pinned to one CPU.
 *
 *   tm-load -B instance [-r events/s (0: max)] [-d ms] [-c cpu] [-t tag]
 *
 * Prints one line: written, failed writes, achieved rate.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

static void usage(void)
{
	fprintf(stderr, "usage: tm-load -B instance [-r events/s, 0 = max] [-d ms] [-c cpu] "
		"[-t tag]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	struct bn_load l = { .rate = 100000, .duration_ns = 1000000000ull };
	const char *inst = NULL;
	int cpu = 0, opt;

	l.tag = (uint32_t)getpid();
	while ((opt = getopt(argc, argv, "B:r:d:c:t:h")) != -1) {
		switch (opt) {
		case 'B': inst = optarg; break;
		case 'r': l.rate = strtoull(optarg, NULL, 0); break;
		case 'd': l.duration_ns = strtoull(optarg, NULL, 0) * 1000000ull; break;
		case 'c': cpu = atoi(optarg); break;
		case 't': l.tag = (uint32_t)strtoul(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (!inst || optind != argc)
		usage();
	if (bn_pin(cpu)) {
		fprintf(stderr, "cannot pin to CPU %d: %s\n", cpu, strerror(errno));
		return 1;
	}
	l.fd = bn_load_open(inst);
	if (l.fd < 0)
		return 1;
	bn_load_run(&l);
	printf("written=%llu failed=%llu rate=%.0f tag=%u%s%s\n",
	       (unsigned long long)l.written, (unsigned long long)l.failed,
	       l.written * 1e9 / (double)l.elapsed_ns, l.tag,
	       l.first_errno ? " first_error=" : "",
	       l.first_errno ? strerror(l.first_errno) : "");
	return l.failed && !l.written;
}
