// SPDX-License-Identifier: GPL-2.0-only
/*
 * tracemap stream: the buffer it reads, as the user hears of it. The
 * library makes and removes it (a private instance tracemap-<pid>-<n>; -B
 * made when missing and removed at exit, as trace-cmd does; the top level
 * with --top), sets -b, -C and -p, and writes every change down for
 * tracemap reset; this file checks -B's name before anything is made and
 * says what was made and removed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <tracefs.h>

#include "tracemap.h"
#include "tracemap-tool.h"
#include "cmd-stream.h"

int instance_check(struct stream_inst *si, const char *name)
{
	memset(si, 0, sizeof(*si));
	if (!name)
		return 0;
	si->announce = true;
	if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
		tool_err("invalid instance name '%s': give -B a plain name", name);
		return -1;
	}
	return 0;
}

int instance_opened(struct stream_inst *si, const char *tfs, struct tracemap_stream *s)
{
	int created = 0;
	const char *name = tracemap_stream_instance(s, &created);

	if (!name)
		return -1;
	si->created = created;
	if (strcmp(name, TRACEMAP_TOP_LEVEL)) {
		si->name = strdup(name);
		si->inst = si->name ? tracefs_instance_alloc(tfs, si->name) : NULL;
		if (!si->inst) {
			tool_err("cannot open instance %s: out of memory", name);
			return -1;
		}
	}
	if (si->created && si->announce)
		fprintf(stderr, "tracemap: created instance %s (it did not exist); it is removed "
			"at exit\n", si->name);
	return 0;
}

void instance_closed(struct stream_inst *si, const char *tfs)
{
	char dir[4096];
	struct stat st;

	/* the library removed it with the stream, or said why it could not */
	if (si->created && si->announce) {
		snprintf(dir, sizeof(dir), "%s/instances/%s", tfs, si->name);
		if (stat(dir, &st))
			fprintf(stderr, "tracemap: removed instance %s\n", si->name);
	}
	tracefs_instance_free(si->inst);
	free(si->name);
	memset(si, 0, sizeof(*si));
}
