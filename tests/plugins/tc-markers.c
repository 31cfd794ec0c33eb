// SPDX-License-Identifier: GPL-2.0-only
/*
 * tc-markers: write "seq=NNNNNNNN" markers with consecutive sequence numbers
 * to an instance's trace_marker from one CPU, as fast as it can. The fixed
 * width keeps every marker event the same size, so each page of a flooded
 * buffer has room for the lost-events count.
 *
 *   tc-markers [-g] [-t] [-r RATE] INSTANCE CPU FIRST COUNT
 *     -g  call getppid() before each marker (sys_enter_getppid events)
 *     -t  wait until the instance's tracing_on is 1 first (at most 10 s)
 *     -r  RATE markers per second (paced every millisecond), not as fast as it can
 *
 * Exits 0 when all COUNT markers were written, 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *tracefs(void)
{
	return access("/sys/kernel/tracing/instances", F_OK) ? "/sys/kernel/debug/tracing" :
		"/sys/kernel/tracing";
}

static int wait_tracing_on(const char *inst)
{
	char path[512], c = '0';
	int i, fd;

	snprintf(path, sizeof(path), "%s/instances/%s/tracing_on", tracefs(), inst);
	for (i = 0; i < 1000; i++) {
		fd = open(path, O_RDONLY);
		if (fd < 0 || read(fd, &c, 1) != 1) {
			perror(path);
			return -1;
		}
		close(fd);
		if (c == '1')
			return 0;
		usleep(10000);
	}
	fprintf(stderr, "tc-markers: %s stayed 0 for 10 s\n", path);
	return -1;
}

int main(int argc, char **argv)
{
	unsigned long first, count, i;
	int opt, cpu, fd, syscalls = 0, wait_on = 0;
	unsigned long rate = 0;
	struct timespec start, now;
	char path[512], buf[32];
	cpu_set_t set;
	ssize_t n;

	while ((opt = getopt(argc, argv, "gtr:")) != -1) {
		if (opt == 'g')
			syscalls = 1;
		else if (opt == 't')
			wait_on = 1;
		else if (opt == 'r')
			rate = strtoul(optarg, NULL, 10);
		else
			return 2;
	}
	if (argc - optind != 4) {
		fprintf(stderr, "usage: tc-markers [-g] [-t] [-r RATE] INSTANCE CPU FIRST COUNT\n");
		return 2;
	}
	cpu = atoi(argv[optind + 1]);
	first = strtoul(argv[optind + 2], NULL, 10);
	count = strtoul(argv[optind + 3], NULL, 10);

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		return 1;
	}
	if (wait_on && wait_tracing_on(argv[optind]))
		return 1;
	snprintf(path, sizeof(path), "%s/instances/%s/trace_marker", tracefs(), argv[optind]);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (i = first; i < first + count; i++) {
		int len = snprintf(buf, sizeof(buf), "seq=%08lu", i);

		/* paced: ahead of RATE per second, sleep a millisecond */
		while (rate) {
			double el;

			clock_gettime(CLOCK_MONOTONIC, &now);
			el = (now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9;
			if ((double)(i - first) <= el * rate)
				break;
			usleep(1000);
		}

		if (syscalls)
			getppid();
		n = write(fd, buf, len);
		if (n != len) {
			fprintf(stderr, "tc-markers: write of seq %lu to %s: %s\n", i, path,
				n < 0 ? strerror(errno) : "short write");
			return 1;
		}
	}
	close(fd);
	return 0;
}
