// SPDX-License-Identifier: GPL-2.0-only
/*
 * ks-refresh: the parts of one refresh of tracemap's KernelShark view, timed
 * (CLOCK_MONOTONIC, median of -r repetitions), for bench/run-kernelshark.sh.
 *
 *   ks-refresh [-r reps] [-n] [-i ms] -B instance -p plugin.so -o image.dat
 *       first=MS     the plugin's part the first time in the process
 *                    (the writer reads kallsyms and the formats then)
 *       plugin=MS    the plugin's part on later refreshes:
 *                    tracemap_dump_retake() of the last copy of the
 *                    instance and tracemap_dump_rewrite() of the image over
 *                    the last one (image.dat, on a tmpfs, kept open as the
 *                    plugin keeps its memory file)
 *       take=MS      of it, the copy (retake)
 *       written=MB   of it, the bytes written into the image (wchar of
 *                    /proc/self/io): what the rewrite did not find there
 *       -n           the plugin's part alone, no KernelShark (for callgrind:
 *                    --toggle-collect=dump_to)
 *       -i MS        a pause of MS before each repetition, as a follow period
 *                    leaves the writer (0: none)
 *       load=MS      KernelShark's load of that image: kshark_open(),
 *                    the buffers, kshark_load_all_entries()
 *       refresh=MS   the whole refresh through the plugin:
 *                    kshark_open(instance directory) and the load
 *       entries=N    entries KernelShark loaded
 *   ks-refresh [-r reps] -f file.dat
 *       load=MS entries=N for a trace.dat (the anchor workflow's file)
 *
 * KernelShark's GUI adds its table model and graph on top of "load".
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libkshark.h>
#include <libkshark-plugin.h>
#include <libkshark-tepdata.h>

#include "tracemap.h"

#define MAX_REPS	32

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The bytes this process passed to write() and its kin so far (/proc/self/io wchar) */
static double wchar_mb(void)
{
	unsigned long long v = 0;
	char line[128];
	FILE *f;

	f = fopen("/proc/self/io", "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "wchar: %llu", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v / 1048576.0;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[(n - 1) / 2];
}

/* open @path as KernelShark does and load every entry; -1 on failure */
static ssize_t ks_load(struct kshark_context *ctx, const char *path)
{
	struct kshark_entry **data = NULL;
	ssize_t n, i;
	int sd;

	sd = kshark_open(ctx, path);
	if (sd < 0) {
		fprintf(stderr, "ks-refresh: kshark_open(%s): %d\n", path, sd);
		return -1;
	}
	if (kshark_is_tep(ctx->stream[sd]))
		kshark_tep_init_all_buffers(ctx, sd);
	n = kshark_load_all_entries(ctx, &data);
	for (i = 0; i < n; i++)
		free(data[i]);
	free(data);
	kshark_close_all(ctx);
	return n;
}

/*
 * What the plugin does: the copy taken again from the last one, written
 * over the image that nobody reads any more; the time of the copy in *@take_ms.
 */
static int dump_to(const char *instance, int fd, double *take_ms)
{
	struct tracemap_dump_opts opts = { .sz = sizeof(opts),
					   .flags = TRACEMAP_DUMP_AS_TOP | TRACEMAP_DUMP_NO_KALLSYMS };
	static struct tracemap_dump *kept;
	double t0 = now_ms();

	kept = kept ? tracemap_dump_retake(kept) : tracemap_dump_take(instance, &opts);
	*take_ms = now_ms() - t0;
	if (!kept)
		return -errno;
	return tracemap_dump_rewrite(kept, fd);
}

int main(int argc, char **argv)
{
	double plugin[MAX_REPS], take[MAX_REPS], load[MAX_REPS], refresh[MAX_REPS], t0, first;
	double written[MAX_REPS], w0;
	const char *inst = NULL, *so = NULL, *img = NULL, *file = NULL;
	struct kshark_context *ctx = NULL;
	char dir[512];
	ssize_t n = 0;
	int reps = 3, opt, r, ret, fd, interval = 0;
	bool plugin_only = false;

	while ((opt = getopt(argc, argv, "r:ni:B:p:o:f:")) != -1) {
		switch (opt) {
		case 'r': reps = atoi(optarg); break;
		case 'n': plugin_only = true; break;
		case 'i': interval = atoi(optarg); break;
		case 'B': inst = optarg; break;
		case 'p': so = optarg; break;
		case 'o': img = optarg; break;
		case 'f': file = optarg; break;
		default: goto usage;
		}
	}
	if (reps < 1 || reps > MAX_REPS || (!file && (!inst || !so || !img)))
		goto usage;
	if (!kshark_instance(&ctx)) {
		fprintf(stderr, "ks-refresh: kshark_instance failed\n");
		return 1;
	}
	if (file) {
		for (r = 0; r < reps; r++) {
			t0 = now_ms();
			n = ks_load(ctx, file);
			load[r] = now_ms() - t0;
			if (n < 0)
				return 1;
		}
		printf("load=%.1f entries=%zd\n", median(load, reps), n);
		kshark_free(ctx);
		return 0;
	}

	if (!kshark_register_plugin(ctx, "tracemap", so))
		return 1;
	snprintf(dir, sizeof(dir), "/sys/kernel/tracing/instances/%s", inst);
	fd = open(img, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "ks-refresh: %s: %s\n", img, strerror(errno));
		return 1;
	}
	t0 = now_ms();
	ret = dump_to(inst, fd, &take[0]);
	first = now_ms() - t0;
	if (ret < 0) {
		fprintf(stderr, "ks-refresh: dump of %s: %s\n", inst, strerror(-ret));
		return 1;
	}
	for (r = 0; r < reps; r++) {
		if (interval > 0)
			usleep(interval * 1000);
		w0 = wchar_mb();
		t0 = now_ms();
		ret = dump_to(inst, fd, &take[r]);
		plugin[r] = now_ms() - t0;
		written[r] = wchar_mb() - w0;
		if (ret < 0) {
			fprintf(stderr, "ks-refresh: dump of %s: %s\n", inst, strerror(-ret));
			return 1;
		}
		if (plugin_only)
			continue;
		t0 = now_ms();
		n = ks_load(ctx, img);
		load[r] = now_ms() - t0;
		t0 = now_ms();
		if (n < 0 || ks_load(ctx, dir) != n) {
			fprintf(stderr, "ks-refresh: the plugin's view of %s differs from its image\n",
				inst);
			return 1;
		}
		refresh[r] = now_ms() - t0;
	}
	if (plugin_only)
		printf("first=%.1f plugin=%.1f take=%.1f written=%.1f\n", first,
		       median(plugin, reps), median(take, reps), median(written, reps));
	else
		printf("first=%.1f plugin=%.1f take=%.1f written=%.1f load=%.1f refresh=%.1f "
		       "entries=%zd\n", first, median(plugin, reps), median(take, reps),
		       median(written, reps), median(load, reps), median(refresh, reps), n);
	close(fd);
	kshark_free(ctx);
	return 0;
usage:
	fprintf(stderr, "usage: ks-refresh [-r reps] [-n] [-i ms] -B instance -p plugin.so "
		"-o image.dat\n"
		"       ks-refresh [-r reps] -f file.dat\n");
	return 2;
}
