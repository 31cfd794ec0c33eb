// SPDX-License-Identifier: GPL-2.0-only
/*
 * tracemap stat: the ring buffer of each CPU of an instance as the mapping
 * shows it. Mapping a buffer does not consume anything: the counters come
 * from the meta page the kernel fills in at mmap time. A CPU that cannot be
 * mapped is shown from per_cpu/cpuN/stats instead.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracemap.h"
#include "tracemap-tool.h"

struct cpu_row {
	char mmap[48];		/* "yes" or "no (reason)" */
	long long subbuf_size;	/* -1: unknown */
	long long nr_subbufs;	/* -1: unknown */
	struct tracemap_cpu_stats st;
};

/* The library's reason for a failed open goes in the table (tracemap_last_error()), not out. */
static void quiet_print(void *ctx, enum tracemap_log_level level, const char *msg)
{
}

static int read_text(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

/*
 * One CPU as the mapping shows it; one that cannot be mapped is opened for
 * read() instead, which reads nothing until asked: the library then takes
 * the counters from per_cpu/cpuN/stats and the size from the instance.
 */
static void stat_cpu(const char *iname, int cpu, struct cpu_row *row)
{
	struct tracemap_cpu_opts co = { .sz = sizeof(co), .mode = TRACEMAP_MODE_CONSUME,
					.flags = TRACEMAP_CPU_NO_FALLBACK };
	struct tracemap_cpu *c;
	char why[512];
	int e;

	tracemap_clear_error();
	row->subbuf_size = row->nr_subbufs = -1;
	c = tracemap_cpu_open(iname, cpu, &co);
	if (c) {
		snprintf(row->mmap, sizeof(row->mmap), "yes");
		row->nr_subbufs = tracemap_cpu_nr_subbufs(c);
	} else {
		e = errno;
		snprintf(row->mmap, sizeof(row->mmap), "no (%s)", strerror(e));
		snprintf(why, sizeof(why), "%s", tracemap_last_error());
		co.flags = TRACEMAP_CPU_FORCE_READ;
		c = tracemap_cpu_open(iname, cpu, &co);
		if (why[0])
			tool_err("cpu%d: %s", cpu, why);
	}
	if (!c)
		return;
	row->subbuf_size = tracemap_cpu_subbuf_size(c);
	tracemap_cpu_stats(c, &row->st, sizeof(row->st));
	tracemap_cpu_close(c);
}

static void print_count(long long v)
{
	if (v >= 0)
		printf("%11lld ", v);
	else
		printf("%11s ", "-");
}

int cmd_stat(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "top", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char idir[4096], path[4200], pct[32], clock[256], size[32], subkb[32];
	struct tool_buffer b = { 0 };
	const char *iname, *cl, *ce;
	struct cpu_row row;
	struct stat st;
	int c, cpu;

	opterr = 0;
	while ((c = tool_getopt(argc, argv, "+B:h", longopts, &b)) != -1) {
		switch (c) {
		case '!':
			return 1;
		case 'h':
			tool_usage(stdout);
			return 0;
		default:
			tool_opt_error(argv, "B", 0, -1);
			return 1;
		}
	}
	if (tool_end_args(argc, argv, b.instance, b.top))
		return 1;
	/* default: the top level, read only */
	iname = b.instance ? b.instance : TRACEMAP_TOP_LEVEL;
	if (tool_instance_dir(iname, idir, sizeof(idir)))
		return 1;
	/* only looks: says what a killed program left, 'tracemap reset' puts it back */
	tracemap_state_repair(TRACEMAP_STATE_CHECK);

	snprintf(path, sizeof(path), "%s/buffer_percent", idir);
	if (read_text(path, pct, sizeof(pct)))
		snprintf(pct, sizeof(pct), "?");
	snprintf(path, sizeof(path), "%s/trace_clock", idir);
	cl = "?";
	if (!read_text(path, clock, sizeof(clock)) && (cl = strchr(clock, '[')) &&
	    (ce = strchr(cl, ']'))) {
		clock[ce - clock] = '\0';
		cl++;
	} else {
		cl = "?";
	}
	snprintf(path, sizeof(path), "%s/buffer_size_kb", idir);
	if (read_text(path, size, sizeof(size)))
		snprintf(size, sizeof(size), "?");
	snprintf(path, sizeof(path), "%s/buffer_subbuf_size_kb", idir);
	if (read_text(path, subkb, sizeof(subkb)))
		snprintf(subkb, sizeof(subkb), "?");

	printf("instance: %s\n", b.instance ? b.instance : "(top level)");
	printf("watermark (buffer_percent): %s\n", pct);
	printf("trace_clock: %s\n", cl);
	printf("buffer_size_kb: %s\n", size);
	printf("buffer_subbuf_size_kb: %s\n", subkb);
	printf("%4s %-24s %11s %8s %12s %12s %12s %12s\n", "cpu", "mmap", "subbuf_size",
	       "subbufs", "entries", "overrun", "read", "unread");

	tracemap_set_print(quiet_print, NULL);
	for (cpu = 0;; cpu++) {
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d", idir, cpu);
		if (stat(path, &st))
			break;
		memset(&row, 0, sizeof(row));
		stat_cpu(iname, cpu, &row);
		printf("%4d %-24s ", cpu, row.mmap);
		print_count(row.subbuf_size);
		if (row.nr_subbufs >= 0)
			printf("%8lld ", row.nr_subbufs);
		else
			printf("%8s ", "-");
		printf("%12llu %12llu %12llu %12llu\n", (unsigned long long)row.st.kernel_entries,
		       (unsigned long long)row.st.kernel_overrun,
		       (unsigned long long)row.st.kernel_read,
		       (unsigned long long)tracemap_cpu_stats_unread(&row.st));
	}
	tool_set_lib_print(false);
	return 0;
}
