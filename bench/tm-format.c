// SPDX-License-Identifier: GPL-2.0-only
/*
 * tm-format: CPU per formatted line, on fixed synthetic events of this
 * kernel's formats (no ring buffer, no output): tracemap_format_line()
 * compiled against the same call with TRACEMAP_FORMAT_NO_COMPILE, which is
 * what tracemap stream did before (three tep_print_event() calls).
 *
 *	tm-format [-n EVENTS] [-k KIND]... [-c]    KIND: raw (trace_marker_raw),
 *	                                       print (trace_marker), switch (sched_switch)
 *	-c: the compiled formatter only (e.g. under valgrind --tool=callgrind)
 *
 * Prints one line per kind and mode: "kind=raw mode=compiled ns_per_event=N".
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event-parse.h>
#include <tracefs.h>

#include "tracemap.h"

struct kind {
	const char *name;
	const char *system;
	const char *event;
};

static const struct kind kinds[] = {
	{ "raw", "ftrace", "raw_data" },
	{ "print", "ftrace", "print" },
	{ "switch", "sched", "sched_switch" },
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void set(struct tep_event *e, unsigned char *buf, const char *name, unsigned long long v)
{
	struct tep_format_field *f = tep_find_any_field(e, name);

	if (f)
		memcpy(buf + f->offset, &v, f->size < 8 ? f->size : 8);
}

static void set_str(struct tep_event *e, unsigned char *buf, const char *name, const char *s)
{
	struct tep_format_field *f = tep_find_any_field(e, name);

	if (f)
		strcpy((char *)buf + f->offset, s);
}

/* A payload like the ones the bench writes: 16 different ones cycled */
static unsigned int payload(struct tep_event *e, const struct kind *k, unsigned char *buf, int i)
{
	char text[64];

	memset(buf, 0, 256);
	set(e, buf, "common_type", e->id);
	set(e, buf, "common_pid", 1000 + i);
	if (!strcmp(k->name, "raw")) {
		set(e, buf, "id", 0x1000 + i);
		memset(buf + 12, i, 12);
		return 24;
	}
	if (!strcmp(k->name, "print")) {
		set(e, buf, "ip", 0);
		snprintf(text, sizeof(text), "seq=%08u cpu=0\n", 4242 + i);
		set_str(e, buf, "buf", text);
		return 16 + strlen(text) + 1;
	}
	set_str(e, buf, "prev_comm", "kworker/0:1");
	set(e, buf, "prev_pid", 1000 + i);
	set(e, buf, "prev_prio", 120);
	set(e, buf, "prev_state", i & 3);
	set_str(e, buf, "next_comm", "swapper/0");
	set(e, buf, "next_pid", 0);
	set(e, buf, "next_prio", 120);
	return 64;
}

int main(int argc, char **argv)
{
	static unsigned char bufs[16][256];
	const struct kind *sel[8];
	int nsel = 0, n = 1000000, modes = 2, c, i, mode;
	struct tep_handle *tep;
	size_t k;

	while ((c = getopt(argc, argv, "n:k:c")) != -1) {
		switch (c) {
		case 'c':
			modes = 1;
			break;
		case 'n':
			n = atoi(optarg);
			break;
		case 'k':
			for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
				if (!strcmp(optarg, kinds[k].name) && nsel < 8)
					sel[nsel++] = &kinds[k];
			break;
		default:
			fprintf(stderr, "usage: %s [-n EVENTS] [-k raw|print|switch]... [-c]\n", argv[0]);
			return 1;
		}
	}
	if (!nsel)
		for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
			sel[nsel++] = &kinds[k];
	tep = tracefs_local_events(NULL);
	if (!tep) {
		fprintf(stderr, "tm-format: cannot load the event formats: %s\n", strerror(errno));
		return 1;
	}
	tep_load_plugins(tep);
	for (i = 0; i < nsel; i++) {
		struct tep_event *e = tep_find_event_by_name(tep, sel[i]->system, sel[i]->event);
		unsigned int sizes[16];
		int j;

		if (!e) {
			fprintf(stderr, "tm-format: no event %s:%s\n", sel[i]->system, sel[i]->event);
			return 1;
		}
		for (j = 0; j < 16; j++)
			sizes[j] = payload(e, sel[i], bufs[j], j);
		for (mode = 0; mode < modes; mode++) {
			struct tracemap_format_opts fo = {
				.sz = sizeof(fo), .flags = mode ? TRACEMAP_FORMAT_NO_COMPILE : 0,
			};
			struct tracemap_format *f = tracemap_format_new(tep, &fo);
			struct tracemap_event ev = { .cpu = 0 };
			unsigned long long bytes = 0;
			const char *line;
			double t0, t1;
			int m = mode ? n / 4 : n;

			if (!f)
				return 1;
			t0 = now_s();
			for (j = 0; j < m; j++) {
				ev.data = bufs[j & 15];
				ev.size = sizes[j & 15];
				ev.ts = 1000000000ULL + j * 997ULL;
				bytes += tracemap_format_line(f, &ev, &line);
			}
			t1 = now_s();
			printf("kind=%s mode=%s events=%d bytes_per_line=%.1f ns_per_event=%.0f fallback=%s\n",
			       sel[i]->name, mode ? "tep_print_event" : "compiled", m,
			       (double)bytes / m, (t1 - t0) * 1e9 / m,
			       tracemap_format_fallback(f, e->id) ? : "none");
			tracemap_format_free(f);
		}
	}
	tep_free(tep);
	return 0;
}
