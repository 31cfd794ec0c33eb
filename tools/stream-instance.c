// SPDX-License-Identifier: GPL-2.0-only
/*
 * tracemap stream: the buffer it reads. A private instance tracemap-<pid>
 * by default; with -B an existing instance, or a new one of that name that
 * is removed at exit, as trace-cmd does; the top level with --top. -C and
 * -b change the instance's trace_clock and buffer_size_kb; an instance
 * that outlives tracemap gets its old values back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs.h>

#include "tracemap.h"
#include "tracemap-tool.h"
#include "cmd-stream.h"

int instance_setup(struct stream_inst *si, const char *tfs, const char *name, bool top)
{
	char pname[64];

	memset(si, 0, sizeof(*si));
	si->old_size_kb = -1;
	if (top)
		return 0;
	if (!name) {
		snprintf(pname, sizeof(pname), "tracemap-%d", (int)getpid());
		name = pname;
	} else {
		si->announce = true;
		if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
			tool_err("invalid instance name '%s': give -B a plain name", name);
			return -1;
		}
	}
	/* written down first: a stream killed from here on leaves it to repair (state.c) */
	if (state_begin(tfs, name, !si->announce))
		return -1;
	si->inst = tracefs_instance_create(name);
	if (!si->inst) {
		tool_err("cannot create instance %s: %s", name, strerror(errno));
		return -1;
	}
	si->name = tracefs_instance_get_name(si->inst);
	si->created = tracefs_instance_is_new(si->inst);
	if (!si->created && !si->announce) {
		tool_err("instance %s already exists: remove it (rmdir %s/instances/%s) if no one "
			 "uses it", name, tfs, name);
		tracefs_instance_free(si->inst);
		si->inst = NULL;
		return -1;
	}
	if (si->created && si->announce && state_note("private", "1"))
		return -1;
	if (si->created && si->announce)
		fprintf(stderr, "tracemap: created instance %s (it did not exist); it is removed "
			"at exit\n", si->name);
	return 0;
}

/* trace_clock lists the clocks, the current one in brackets: "[local] global ..." */
static bool clock_available(struct stream_inst *si, const char *clock, char **list)
{
	char *all = tracefs_instance_file_read(si->inst, "trace_clock", NULL), *tok, *save;
	bool found = false;

	*list = NULL;
	if (!all)
		return false;
	*list = strdup(all);
	for (tok = strtok_r(all, " []\n", &save); tok; tok = strtok_r(NULL, " []\n", &save))
		if (!strcmp(tok, clock))
			found = true;
	free(all);
	return found;
}

int instance_set_clock(struct stream_inst *si, const char *clock)
{
	char *list, *old;

	if (!clock)
		return 0;
	if (!clock_available(si, clock, &list)) {
		if (list)
			list[strcspn(list, "\n")] = '\0';
		tool_err("-C %s: no such trace clock; this kernel has: %s", clock,
			 list ? list : "(trace_clock cannot be read)");
		free(list);
		return -1;
	}
	free(list);
	old = tracefs_get_clock(si->inst);
	if (old && !strcmp(old, clock)) {
		free(old);
		return 0;
	}
	si->old_clock = old;
	if (tracefs_instance_file_write(si->inst, "trace_clock", clock) < 0) {
		tool_err("cannot set trace_clock to %s: %s", clock, strerror(errno));
		return -1;
	}
	return 0;
}

int instance_set_buffer_kb(struct stream_inst *si, long kb)
{
	ssize_t old;

	if (kb <= 0)
		return 0;
	old = tracefs_instance_get_buffer_size(si->inst, 0);
	if (old == kb)
		return 0;
	si->old_size_kb = old;
	if (tracefs_instance_set_buffer_size(si->inst, kb, -1) < 0) {
		tool_err("-b %ld: cannot set buffer_size_kb: %s%s", kb, strerror(errno),
			 errno == EBUSY ? " (another reader maps this buffer)" : "");
		return -1;
	}
	return 0;
}

int instance_restore(struct stream_inst *si)
{
	int ret = 0;

	if (si->created) {
		if (tracefs_instance_destroy(si->inst)) {
			tool_err("cannot remove instance %s: %s (remove it with rmdir)", si->name,
				 strerror(errno));
			ret = -1;
		} else if (si->announce) {
			fprintf(stderr, "tracemap: removed instance %s\n", si->name);
		}
		si->created = false;
	} else {
		if (si->old_clock &&
		    tracefs_instance_file_write(si->inst, "trace_clock", si->old_clock) < 0)
			tool_err("cannot put trace_clock back to %s: %s", si->old_clock,
				 strerror(errno));
		if (si->old_size_kb > 0 &&
		    tracefs_instance_set_buffer_size(si->inst, si->old_size_kb, -1) < 0)
			tool_err("cannot put buffer_size_kb back to %ld: %s", si->old_size_kb,
				 strerror(errno));
	}
	free(si->old_clock);
	si->old_clock = NULL;
	si->old_size_kb = -1;
	tracefs_instance_free(si->inst);
	si->inst = NULL;
	return ret;
}
