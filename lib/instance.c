// SPDX-License-Identifier: LGPL-2.1-only
/*
 * The instance a stream or an event set works in: a private one made for
 * it (tracemap-<pid>-<n>), a named one (made when missing and asked to, as
 * trace-cmd's -B does), or the top level; its buffer_size_kb and
 * trace_clock while open. Every change is written down (state.c) before it
 * is made, and put back at close.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracemap-local.h"

#define PRIVATE_TRIES	100	/* names taken by others before we give up */
#define RMDIR_TRIES	50	/* a reader may hold the instance for a moment after close */

static unsigned int private_seq;

static int set_name(struct tm_inst *in, const char *tracefs, const char *name)
{
	free(in->name);
	free(in->dir);
	in->name = strdup(name);
	if (tm_is_top(name))
		in->dir = strdup(tracefs);
	else if (asprintf(&in->dir, "%s/instances/%s", tracefs, name) < 0)
		in->dir = NULL;
	if (!in->name || !in->dir) {
		tm_log(TRACEMAP_LOG_ERROR, "out of memory");
		return tm_err(ENOMEM);
	}
	return 0;
}

/* mkdir of the instance, written down first; 0, -EEXIST quietly, or -errno said why */
static int make(struct tm_inst *in, const char *tracefs)
{
	int ret, e;

	tm_state_end(in->state, true);
	in->state = tm_state_new(tracefs, in->name);
	if (!in->state)
		return -ENOMEM;
	ret = tm_state_note(in->state, "created", "1");
	if (ret)
		return ret;
	if (!mkdir(in->dir, 0755)) {
		in->created = true;
		return 0;
	}
	e = errno;
	if (e != EEXIST)
		tm_log(TRACEMAP_LOG_ERROR, "cannot create instance %s (mkdir %s): %s", in->name,
		       in->dir, strerror(e));
	return tm_err(e);
}

static int make_private(struct tm_inst *in, const char *tracefs)
{
	char name[64];
	int i, ret = -EEXIST;

	for (i = 0; i < PRIVATE_TRIES && ret == -EEXIST; i++) {
		snprintf(name, sizeof(name), "tracemap-%d-%u", (int)getpid(),
			 __atomic_fetch_add(&private_seq, 1, __ATOMIC_RELAXED));
		ret = set_name(in, tracefs, name);
		if (!ret)
			ret = make(in, tracefs);
	}
	if (ret == -EEXIST)
		tm_log(TRACEMAP_LOG_ERROR, "cannot create a private instance: %d names like %s "
		       "are taken in %s/instances: remove the ones no one uses", PRIVATE_TRIES,
		       name, tracefs);
	return ret;
}

int tm_inst_open(struct tm_inst *in, const char *tracefs, const char *instance, bool create)
{
	struct stat sb;
	int ret;

	memset(in, 0, sizeof(*in));
	in->old_size_kb = -1;
	in->owner = tm_cur_pid;
	if (!instance)
		return make_private(in, tracefs);
	if (!tm_is_top(instance)) {
		ret = tm_instance_name_check(tracefs, instance);
		if (ret)
			return ret;
	}
	ret = set_name(in, tracefs, instance);
	if (ret)
		return ret;
	if (create && !tm_is_top(instance) && stat(in->dir, &sb)) {
		ret = make(in, tracefs);
		/* made by someone else in between: theirs, used as it is */
		if (ret != -EEXIST)
			return ret;
	}
	if (!in->created) {
		ret = tracemap_instance_dir(tracefs, instance, in->dir, strlen(in->dir) + 1);
		if (ret)
			return ret;
		tm_state_end(in->state, true);
		in->state = tm_state_new(tracefs, instance);
		if (!in->state)
			return -ENOMEM;
	}
	return 0;
}

static char *read_value(const char *dir, const char *file)
{
	char path[PATH_MAX + 64], buf[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (tm_read_file(path, buf, sizeof(buf)) < 0)
		return NULL;
	buf[strcspn(buf, "\n")] = '\0';
	return strdup(buf);
}

static int write_value(struct tm_inst *in, const char *file, const char *val)
{
	char path[PATH_MAX + 64];
	int ret;

	snprintf(path, sizeof(path), "%s/%s", in->dir, file);
	ret = tm_write_file(path, val);
	if (ret)
		tm_log(TRACEMAP_LOG_ERROR, "cannot write %s to %s: %s%s", val, path,
		       strerror(-ret), ret == -EBUSY ? " (a reader maps this buffer: set it "
		       "before the buffer is opened)" : "");
	return ret;
}

static int set_size(struct tm_inst *in, unsigned long kb)
{
	char *old = read_value(in->dir, "buffer_size_kb"), val[32];
	long cur;
	int ret;

	if (!old) {
		ret = tm_err(errno ? errno : EIO);
		tm_log(TRACEMAP_LOG_ERROR, "cannot read %s/buffer_size_kb: %s", in->dir,
		       strerror(-ret));
		return ret;
	}
	/* "7 (expanded: 1408)" before the first use of the buffer */
	cur = strtol(old, NULL, 10);
	free(old);
	if (cur == (long)kb)
		return 0;
	if (!in->created) {
		ret = tm_state_note(in->state, "buffer_size_kb", "%ld", cur);
		if (ret)
			return ret;
		in->old_size_kb = cur;
	}
	snprintf(val, sizeof(val), "%lu", kb);
	return write_value(in, "buffer_size_kb", val);
}

/* trace_clock lists the clocks, the current one in brackets: "[local] global ..." */
static int set_clock(struct tm_inst *in, const char *clock)
{
	char *all = read_value(in->dir, "trace_clock"), *list, *tok, *save, *cur = NULL;
	bool found = false;
	int ret = 0;

	list = all ? strdup(all) : NULL;
	if (!list) {
		ret = tm_err(errno ? errno : EIO);
		tm_log(TRACEMAP_LOG_ERROR, "cannot read %s/trace_clock: %s", in->dir,
		       strerror(-ret));
		free(all);
		return ret;
	}
	for (tok = strtok_r(all, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (tok[0] == '[') {
			tok++;
			tok[strcspn(tok, "]")] = '\0';
			cur = tok;
		}
		found |= !strcmp(tok, clock);
	}
	if (!found) {
		tm_log(TRACEMAP_LOG_ERROR, "clock '%s': no such trace clock; this kernel has: %s",
		       clock, list);
		ret = tm_err(EINVAL);
	} else if (cur && strcmp(cur, clock)) {
		if (!in->created) {
			ret = tm_state_note(in->state, "trace_clock", "%s", cur);
			in->old_clock = ret ? NULL : strdup(cur);
			if (!ret && !in->old_clock)
				ret = tm_err(ENOMEM);
		}
		if (!ret)
			ret = write_value(in, "trace_clock", clock);
	}
	free(list);
	free(all);
	return ret;
}

int tm_inst_setup(struct tm_inst *in, unsigned long size_kb, const char *clock)
{
	int ret = 0;

	if (size_kb)
		ret = set_size(in, size_kb);
	if (!ret && clock)
		ret = set_clock(in, clock);
	return ret;
}

static int remove_dir(struct tm_inst *in)
{
	int tries, e = 0;

	for (tries = 0; tries < RMDIR_TRIES; tries++) {
		if (!rmdir(in->dir) || errno == ENOENT)
			return 0;
		e = errno;
		if (e != EBUSY)
			break;
		usleep(20000);
	}
	tm_log(TRACEMAP_LOG_WARN, "cannot remove instance %s: %s (remove it with 'rmdir %s' "
	       "when no one uses it)", in->name, strerror(e), in->dir);
	return -e;
}

int tm_inst_close(struct tm_inst *in)
{
	char val[32];
	int ret = 0;

	if (tm_in_child(in->owner)) {
		/* the parent's to put back */
		tm_state_end(in->state, false);
	} else {
		if (in->created) {
			ret = remove_dir(in);
		} else {
			if (in->old_clock && write_value(in, "trace_clock", in->old_clock))
				ret = -EIO;
			snprintf(val, sizeof(val), "%ld", in->old_size_kb);
			if (in->old_size_kb >= 0 && write_value(in, "buffer_size_kb", val))
				ret = -EIO;
		}
		tm_state_end(in->state, !ret);
	}
	free(in->old_clock);
	free(in->name);
	free(in->dir);
	memset(in, 0, sizeof(*in));
	in->old_size_kb = -1;
	return ret;
}
