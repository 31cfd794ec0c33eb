// SPDX-License-Identifier: GPL-2.0-only
/*
 * tool_dump(): a copy of the buffer written as a trace.dat with its one-line
 * report, the file `tracemap snapshot` writes and each one of `tracemap
 * flight`.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
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
	struct tool_out f;
	uint64_t t0;
	int ret;

	/* a failure is explained by the library (libtracemap-print(3)) */
	d = tracemap_dump_take(instance, &o);
	if (!d)
		return -1;
	t0 = tracemap_now_ns();
	if (tool_out_open(&f, path, "-o")) {
		tracemap_dump_free(d);
		return -1;
	}
	ret = tracemap_dump_write(d, f.fd);
	if (ret) {
		tool_err("cannot write %s: %s", path, strerror(-ret));
		tool_out_abort(&f);
		tracemap_dump_free(d);
		return -1;
	}
	if (tool_out_commit(&f)) {
		tracemap_dump_free(d);
		return -1;
	}
	report(to, what, path, d, tracemap_now_ns() - t0, trigger_ns ? tracemap_now_ns() - trigger_ns : 0);
	tracemap_dump_free(d);
	return 0;
}
