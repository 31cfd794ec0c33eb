// SPDX-License-Identifier: GPL-2.0-only
/*
 * ks-live: open PATH with KernelShark's library (headless) the way the GUI
 * does, with tracemap's KernelShark plugin registered, and print what was
 * loaded, one line per entry in trace-cmd report's layout:
 *
 *   COMM-PID [CPU] SECONDS.USECS: EVENT: INFO
 *
 * then "# streams S entries N markers M overflow O format F". With --then
 * CMD it runs CMD (sh -c) and reopens PATH, as the plugin's refresh does
 * (KernelShark closes every stream and opens the path again), and prints
 * the second load the same way; with --append also, the first stream stays
 * open while the path is opened again (KernelShark's Append), and the
 * second load has both streams, whose markers are counted per stream on
 * "# stream SD markers M" lines. --count prints the summary lines only.
 * PLUGIN "-" registers nothing (for a trace.dat).
 * Exit 0 when every load worked, 1 otherwise.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libkshark.h>
#include <libkshark-plugin.h>
#include <libkshark-tepdata.h>

static bool count_only;

#define MAX_STREAMS	8

static void print_entry(struct kshark_entry *e)
{
	char *name, *info, *task;
	unsigned long long us = (e->ts + 500) / 1000;	/* rounded, as trace-cmd report does */
	const char *ev;

	/* the task first: formatting the info can teach libtraceevent new names */
	task = kshark_get_task(e);
	name = kshark_get_event_name(e);
	info = kshark_get_info(e);
	ev = name ? strchr(name, '/') : NULL;
	ev = ev ? ev + 1 : (name ? name : "?");
	printf("%s-%d [%03d] %llu.%06llu: %s: %s\n", task ? task : "<...>", e->pid, e->cpu,
	       us / 1000000, us % 1000000, ev, info ? info : "");
	free(name);
	free(info);
	free(task);
}

static int load(struct kshark_context *ctx, const char *path, bool keep_open)
{
	long markers = 0, overflow = 0, per_stream[MAX_STREAMS] = { 0 };
	struct kshark_entry **data = NULL;
	int sd, extra;
	ssize_t n, i;

	sd = kshark_open(ctx, path);
	if (sd < 0) {
		fprintf(stderr, "ks-live: kshark_open(%s) failed: %d\n", path, sd);
		return -1;
	}
	if (!kshark_is_tep(ctx->stream[sd])) {
		fprintf(stderr, "ks-live: %s was not opened as trace data (format '%s')\n", path,
			ctx->stream[sd]->data_format);
		return -1;
	}
	extra = kshark_tep_init_all_buffers(ctx, sd);
	if (extra < 0 || kshark_tep_handle_plugins(ctx, sd) < 0) {
		fprintf(stderr, "ks-live: cannot set up the buffers of %s\n", path);
		return -1;
	}
	n = kshark_load_all_entries(ctx, &data);
	if (n < 0) {
		fprintf(stderr, "ks-live: loading %s failed\n", path);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (data[i]->event_id == KS_EVENT_OVERFLOW) {
			overflow++;
		} else {
			char *info = kshark_get_info(data[i]);

			if (info && strstr(info, "seq=")) {
				markers++;
				if (data[i]->stream_id >= 0 && data[i]->stream_id < MAX_STREAMS)
					per_stream[data[i]->stream_id]++;
			}
			free(info);
			if (!count_only)
				print_entry(data[i]);
		}
		free(data[i]);
	}
	free(data);
	printf("# streams %d entries %zd markers %ld overflow %ld format %s name %s\n", extra + 1,
	       n, markers, overflow, ctx->stream[sd]->data_format,
	       ctx->stream[sd]->name ? ctx->stream[sd]->name : "-");
	for (i = 0; ctx->n_streams > 1 && i < MAX_STREAMS; i++)
		if (per_stream[i])
			printf("# stream %zd markers %ld\n", i, per_stream[i]);
	fflush(stdout);
	if (!keep_open)
		kshark_close_all(ctx);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "then", required_argument, NULL, 't' },
		{ "count", no_argument, NULL, 'c' },
		{ "append", no_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	struct kshark_context *ctx = NULL;
	const char *then = NULL;
	bool append = false;
	int c, ret = 1;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 't')
			then = optarg;
		else if (c == 'c')
			count_only = true;
		else if (c == 'a')
			append = true;
		else
			return 2;
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: ks-live [--count] [--then CMD [--append]] PLUGIN.so PATH\n");
		return 2;
	}
	if (!kshark_instance(&ctx)) {
		fprintf(stderr, "ks-live: kshark_instance failed\n");
		return 1;
	}
	if (strcmp(argv[optind], "-") &&
	    !kshark_register_plugin(ctx, "tracemap", argv[optind])) {
		fprintf(stderr, "ks-live: cannot register %s\n", argv[optind]);
		goto out;
	}
	if (load(ctx, argv[optind + 1], then && append))
		goto out;
	if (then) {
		if (system(then)) {
			fprintf(stderr, "ks-live: '%s' failed\n", then);
			goto out;
		}
		if (load(ctx, argv[optind + 1], false))
			goto out;
	}
	ret = 0;
out:
	kshark_free(ctx);
	return ret;
}
