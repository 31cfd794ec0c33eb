// SPDX-License-Identifier: LGPL-2.1
/*
 * tracemap snapshot: write what the buffer holds now to a trace.dat
 * without consuming it. tool_dump() is also the flight recorder's dump.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tracemap.h"
#include "tracemap-tool.h"
#include "cmd-stream.h"

/* "cpu0 1200 events 4756.109581-4758.901234" per CPU, then drops and times */
static void report(FILE *to, const char *what, const char *path, struct tracemap_dump *d,
		   uint64_t write_ns, uint64_t since_ns)
{
	struct tracemap_dump_cpu_stats st;
	int i, n = tracemap_dump_nr_cpus(d);

	if (what)
		fprintf(to, "%s: ", what);
	fprintf(to, "%s:", path);
	for (i = 0; i < n; i++) {
		if (tracemap_dump_stats(d, tracemap_dump_cpu(d, i), &st, sizeof(st)))
			continue;
		fprintf(to, "%s cpu%d %llu events", i ? "," : "", st.cpu,
			(unsigned long long)st.events);
		if (st.events)
			fprintf(to, " %llu.%06llu-%llu.%06llu",
				(unsigned long long)(st.first_ts / 1000000000ULL),
				(unsigned long long)(st.first_ts % 1000000000ULL / 1000),
				(unsigned long long)(st.last_ts / 1000000000ULL),
				(unsigned long long)(st.last_ts % 1000000000ULL / 1000));
	}
	tracemap_dump_stats(d, -1, &st, sizeof(st));
	fprintf(to, "; lost %llu events, %llu gaps of unknown size; copy %.1f ms, write %.1f ms",
		(unsigned long long)st.lost, (unsigned long long)st.lost_gaps, st.copy_ns / 1e6,
		write_ns / 1e6);
	if (since_ns)
		fprintf(to, ", trigger to file %.1f ms", since_ns / 1e6);
	fputc('\n', to);
	fflush(to);
}

int tool_dump(const char *instance, const char *cpumask, const char *path, uint64_t trigger_ns,
	      const char *what, FILE *to)
{
	struct tracemap_dump_opts o = { .sz = sizeof(o), .cpumask = cpumask };
	struct tracemap_dump *d;
	uint64_t t0;
	int fd, ret;

	/* a failure is explained by the library (libtracemap-print(3)) */
	d = tracemap_dump_take(instance, &o);
	if (!d)
		return -1;
	t0 = now_ns();
	if (!strcmp(path, "-"))
		fd = STDOUT_FILENO;
	else
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		tool_err("cannot create %s: %s: give a writable -o path", path, strerror(errno));
		tracemap_dump_free(d);
		return -1;
	}
	ret = tracemap_dump_write(d, fd);
	if (fd != STDOUT_FILENO && close(fd) && !ret)
		ret = -errno;
	if (ret) {
		tool_err("cannot write %s: %s", path, strerror(-ret));
		if (fd != STDOUT_FILENO)
			unlink(path);
		tracemap_dump_free(d);
		return -1;
	}
	report(to, what, path, d, now_ns() - t0, trigger_ns ? now_ns() - trigger_ns : 0);
	tracemap_dump_free(d);
	return 0;
}

int cmd_snapshot(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "top", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tool_buffer b = { 0 };
	const char *out = "trace.dat";
	char idir[4096];
	int c;

	opterr = 0;
	while ((c = tool_getopt(argc, argv, "+B:M:o:h", longopts, &b)) != -1) {
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
			tool_opt_error(argv, "BMo", 0, -1);
			return 1;
		}
	}
	if (tool_end_args(argc, argv, b.instance, b.top))
		return 1;
	if (!*out) {
		tool_err("-o needs a file name ('-' for standard output)");
		return 1;
	}
	if (tool_instance_dir(b.instance, idir, sizeof(idir)))
		return 1;
	/* the report goes to stderr when the file is standard output */
	return tool_dump(b.instance, b.cpumask, out, 0, NULL, strcmp(out, "-") ? stdout : stderr) ? 1 : 0;
}
