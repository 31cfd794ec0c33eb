// SPDX-License-Identifier: LGPL-2.1
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
	long long subbuf_size;
	long long nr_subbufs;	/* -1: unknown */
	unsigned long long entries;
	unsigned long long overrun;
	unsigned long long read;
};

static char last_msg[256];

/* Keep the library's reason for a failed open for the table instead of printing it. */
static void quiet_print(void *ctx, enum tracemap_log_level level, const char *msg)
{
	if (level == TRACEMAP_LOG_ERROR)
		snprintf(last_msg, sizeof(last_msg), "%s", msg);
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

static unsigned long long stats_field(const char *stats, const char *name)
{
	const char *p = strstr(stats, name);

	return p ? strtoull(p + strlen(name), NULL, 10) : 0;
}

static void stat_cpu(const char *iname, const char *idir, int cpu, long long subbuf_default,
		     struct cpu_row *row)
{
	struct tracemap_cpu_opts co = { .sz = sizeof(co), .mode = TRACEMAP_MODE_CONSUME,
					.flags = TRACEMAP_CPU_NO_FALLBACK };
	struct tracemap_cpu_stats st;
	struct tracemap_cpu *c;
	char path[4200], buf[1024];
	int e;

	last_msg[0] = '\0';
	c = tracemap_cpu_open(iname, cpu, &co);
	if (c) {
		snprintf(row->mmap, sizeof(row->mmap), "yes");
		row->subbuf_size = tracemap_cpu_subbuf_size(c);
		row->nr_subbufs = tracemap_cpu_nr_subbufs(c);
		tracemap_cpu_stats(c, &st, sizeof(st));
		row->entries = st.kernel_entries;
		row->overrun = st.kernel_overrun;
		row->read = st.kernel_read;
		tracemap_cpu_close(c);
		return;
	}
	e = errno;
	snprintf(row->mmap, sizeof(row->mmap), "no (%s)", strerror(e));
	row->subbuf_size = subbuf_default;
	row->nr_subbufs = -1;
	snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/stats", idir, cpu);
	if (read_text(path, buf, sizeof(buf)) == 0) {
		/* "entries:" there is what is still in the buffer */
		row->overrun = stats_field(buf, "overrun: ");
		row->read = stats_field(buf, "read events: ");
		row->entries = stats_field(buf, "entries: ") + row->overrun + row->read;
	}
	if (last_msg[0])
		tool_err("cpu%d: %s", cpu, last_msg);
}

int cmd_stat(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "top", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char idir[4096], path[4200], pct[32], clock[256], size[32], subkb[32];
	const char *iname = NULL, *tfs, *cl, *ce;
	struct cpu_row row;
	long long subbuf;
	struct stat st;
	bool top = false;
	int c, cpu;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+B:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'B':
			iname = optarg;
			break;
		case 't':
			top = true;
			break;
		case 'h':
			tool_usage(stdout);
			return 0;
		default:
			if (optopt == 'B')
				tool_err("option -B needs an argument (tracemap --help)");
			else
				tool_err("unknown option '%s' (tracemap --help)", argv[optind - 1]);
			return 1;
		}
	}
	if (optind < argc) {
		tool_err("unexpected argument '%s' (tracemap --help)", argv[optind]);
		return 1;
	}
	if (top && iname) {
		tool_err("-B and --top exclude each other");
		return 1;
	}
	tfs = tool_tracefs_mounted();
	if (!tfs || tool_instance_check(iname, NULL))
		return 1;
	/* only looks: says what a killed stream left, 'tracemap reset' puts it back */
	state_repair(false, NULL);
	if (iname)
		snprintf(idir, sizeof(idir), "%s/instances/%s", tfs, iname);
	else
		snprintf(idir, sizeof(idir), "%s", tfs);

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
		snprintf(subkb, sizeof(subkb), "%d", getpagesize() / 1024);
	subbuf = atoll(subkb) * 1024;

	printf("instance: %s\n", iname ? iname : "(top level)");
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
		stat_cpu(iname, idir, cpu, subbuf, &row);
		printf("%4d %-24s %11lld ", cpu, row.mmap, row.subbuf_size);
		if (row.nr_subbufs >= 0)
			printf("%8lld ", row.nr_subbufs);
		else
			printf("%8s ", "-");
		printf("%12llu %12llu %12llu %12llu\n", row.entries, row.overrun, row.read,
		       row.entries >= row.overrun + row.read ?
		       row.entries - row.overrun - row.read : 0);
	}
	tool_set_lib_print(false);
	return 0;
}
