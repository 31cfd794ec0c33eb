// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the text formatter's compiled programs
 * (tracemap_format_line() and tracemap_format_info()) over any payload of
 * the event formats stored in tests/unit/formats (captured from a 6.18
 * kernel, parsed with tep_parse_event(), libtraceevent's plugins loaded).
 * Lengths, offsets and __data_loc words come from the input: the program
 * must stay inside the record (ASan), end the line in one '\n' and return
 * its length. Types the compiler leaves to tep_print_event() are skipped:
 * libtraceevent itself reads outside some records (tests/kernel/test-format).
 *
 * Input: a 2-byte index into the compiled types, the CPU, then the payload
 * (its common_type is set to the chosen type).
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sanitizer/lsan_interface.h>
#include <traceevent/event-parse.h>

#include "fuzz.h"

#define FORMATS		"tests/unit/formats"

static struct tep_handle *tep;
static struct tep_plugin_list *plugins;
static struct tracemap_format *fmt;
static int *types;
static int nr_types;

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 16);

	check(f && buf);
	*len = fread(buf, 1, (1 << 16) - 1, f);
	fclose(f);
	return buf;
}

static void load_formats(void)
{
	struct dirent *sd, *ed;
	char path[1024];
	DIR *sys, *evs;
	size_t len;
	char *buf;

	tep = tep_alloc();
	check(tep);
	buf = slurp(FORMATS "/events/header_page", &len);
	check(!tep_parse_header_page(tep, buf, len, sizeof(long)));
	free(buf);
	tep_set_long_size(tep, sizeof(long));
	tep_set_page_size(tep, getpagesize());
	sys = opendir(FORMATS "/events");
	if (!sys) {
		fprintf(stderr, "fuzz-format: no %s/events: run it from the top of the tree\n",
			FORMATS);
		exit(1);
	}
	while ((sd = readdir(sys))) {
		if (sd->d_name[0] == '.' || sd->d_type != DT_DIR)
			continue;
		snprintf(path, sizeof(path), FORMATS "/events/%s", sd->d_name);
		evs = opendir(path);
		check(evs);
		while ((ed = readdir(evs))) {
			if (ed->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), FORMATS "/events/%s/%s/format", sd->d_name,
				 ed->d_name);
			buf = slurp(path, &len);
			tep_parse_event(tep, buf, len, sd->d_name);
			free(buf);
		}
		closedir(evs);
	}
	closedir(sys);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct tep_event **events;
	int i, n;

	tracemap_set_print(fuzz_print, NULL);
	/* libtraceevent 1.7.1 leaks a few bytes parsing some formats and loading plugins */
	__lsan_disable();
	load_formats();
	plugins = tep_load_plugins(tep);
	__lsan_enable();
	fmt = tracemap_format_new(tep, NULL);
	check(fmt);
	events = tep_list_events(tep, TEP_EVENT_SORT_ID);
	check(events);
	for (n = 0; events[n]; n++)
		;
	types = calloc(n, sizeof(*types));
	check(types);
	for (i = 0; i < n; i++)
		if (!tracemap_format_fallback(fmt, events[i]->id))
			types[nr_types++] = events[i]->id;
	check(nr_types > 100);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { .p = data, .left = size };
	struct tracemap_event ev = { 0 };
	unsigned short type;
	const char *out;
	uint8_t *payload;
	unsigned int i;
	int n;

	i = take(&in);
	i |= take(&in) << 8;
	type = types[i % nr_types];
	ev.cpu = take(&in);
	ev.ts = size * 1000003ULL;
	/* an exact-size copy: ASan sees a read one byte past the record */
	ev.size = in.left < 2 ? 2 : in.left;
	payload = malloc(ev.size);
	check(payload);
	memset(payload, 0, ev.size);
	memcpy(payload, in.p, in.left);
	memcpy(payload, &type, 2);
	ev.data = payload;

	n = tracemap_format_line(fmt, &ev, &out);
	/* a line may hold a NUL (libtraceevent's %c of 0): its length is what counts */
	check(n > 0);
	check(out[n - 1] == '\n' && out[n] == '\0');
	n = tracemap_format_info(fmt, &ev, &out);
	check(n >= 0 && out[n] == '\0');
	free(payload);
	return 0;
}
