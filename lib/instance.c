// SPDX-License-Identifier: LGPL-2.1-only
/*
 * The instance a stream or an event set works in: a private one made for
 * it (tracemap-<pid>-<n>), a named one (made when missing and asked to, as
 * trace-cmd's -B does), or the top level; its buffer_size_kb and
 * trace_clock while open. Every change is written down (state.c) before it
 * is made, and put back at close.
 *
 * struct tracemap_instance, the public owner of such an instance for a
 * program that sets one up without a stream (a flight recorder, a viewer),
 * adds the tracer (tracer.c) and single-value files set through
 * tracemap_instance_set(); the stream uses it too.
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

static int make_private(struct tm_inst *in, const char *tracefs, const char *prefix)
{
	char name[NAME_MAX + 1];
	int i, ret = -EEXIST;

	for (i = 0; i < PRIVATE_TRIES && ret == -EEXIST; i++) {
		snprintf(name, sizeof(name), "%s-%d-%u", prefix ? prefix : "tracemap", (int)getpid(),
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

int tm_inst_open(struct tm_inst *in, const char *tracefs, const char *instance, bool create,
		 const char *prefix)
{
	struct stat sb;
	int ret;

	memset(in, 0, sizeof(*in));
	in->old_size_kb = -1;
	in->owner = tm_cur_pid;
	if (!instance)
		return make_private(in, tracefs, prefix);
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

int tm_instance_find(const char *instance, const char *tracefs_dir, const char *who,
		     const char *why, char *tfs, size_t tfs_size, char *idir, size_t idir_size)
{
	int ret = tm_instance_required(instance, who, why);

	if (!ret)
		ret = tracemap_tracefs_dir(tracefs_dir, tfs, tfs_size);
	if (!ret)
		ret = tracemap_instance_dir(tfs, instance, idir, idir_size);
	return ret;
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

/* ------------------------------------------------- the public instance */

TM_OPTS_NO_TAIL(tracemap_instance_opts, tracefs_dir);

#define KNOWN_INSTANCE_FLAGS	TRACEMAP_INSTANCE_CREATE

/* A name part of ours: what a directory under instances/ may be called */
static int check_prefix(const char *prefix)
{
	if (!prefix)
		return 0;
	if (!*prefix || strlen(prefix) > 200 || strchr(prefix, '/') || prefix[0] == '.') {
		tm_log(TRACEMAP_LOG_ERROR, "tracemap_instance_opts: prefix '%s': give a plain name "
		       "of at most 200 characters (the instance is <prefix>-<pid>-<n>)", prefix);
		return tm_err(EINVAL);
	}
	return 0;
}

int tm_instance_open(struct tracemap_instance **out, const char *tracefs, const char *instance,
		     const struct tracemap_instance_opts *o)
{
	struct tracemap_instance *ti;
	int ret;

	*out = NULL;
	if (o->flags & ~KNOWN_INSTANCE_FLAGS) {
		tm_log(TRACEMAP_LOG_ERROR, "tracemap_instance_opts: unknown flags %#x",
		       o->flags & ~KNOWN_INSTANCE_FLAGS);
		return tm_err(EINVAL);
	}
	ret = check_prefix(o->prefix);
	if (ret)
		return ret;
	ti = calloc(1, sizeof(*ti));
	if (!ti) {
		tm_log(TRACEMAP_LOG_ERROR, "out of memory");
		return tm_err(ENOMEM);
	}
	ti->owner = tm_cur_pid;
	ret = tm_inst_open(&ti->in, tracefs, instance, o->flags & TRACEMAP_INSTANCE_CREATE,
			   o->prefix);
	/* the size first: a mapped buffer cannot be resized */
	if (!ret)
		ret = tm_inst_setup(&ti->in, o->buffer_size_kb, o->clock);
	/* the tracer before any reader: the kernel changes none under one (EBUSY) */
	if (!ret)
		ret = tm_tracer_set(&ti->tracer, tracefs, ti->in.name, o->tracer, ti->in.state);
	if (ret) {
		tracemap_instance_close(ti);
		return ret;
	}
	*out = ti;
	return 0;
}

/**
 * tracemap_instance_open - set up an instance for this process, and own it
 * @instance: NULL for a private instance (<prefix>-<pid>-<n>, made here and
 *	removed at close), an instance name (made when missing with
 *	TRACEMAP_INSTANCE_CREATE, then removed at close), or TRACEMAP_TOP_LEVEL
 * @opts: the flags, the private name's prefix, buffer_size_kb, trace_clock,
 *	the tracer; NULL for the defaults
 *
 * Puts back what ended processes left (tracemap_state_repair()) first.
 * Each change (the instance made, the size, the clock, the tracer and its
 * filters, each file of tracemap_instance_set()) is written in the crash
 * record before it is made, so that tracemap reset puts it back should the
 * process be killed; tracemap_instance_close() puts it back otherwise.
 *
 * Returns the handle, or NULL with errno set after a message (nothing left
 * changed).
 */
struct tracemap_instance *tracemap_instance_open(const char *instance,
						 const struct tracemap_instance_opts *opts)
{
	struct tracemap_instance_opts o = { .sz = sizeof(o) };
	struct tracemap_instance *ti;
	char tfs[PATH_MAX];
	int ret;

	ret = tm_opts_copy(&o, sizeof(o), opts, sizeof(size_t), "tracemap_instance_opts");
	if (!ret)
		ret = tracemap_tracefs_dir(o.tracefs_dir, tfs, sizeof(tfs));
	if (ret)
		return errno = -ret, NULL;
	tracemap_state_repair(0);
	ret = tm_instance_open(&ti, tfs, instance, &o);
	if (ret)
		return errno = -ret, NULL;
	return ti;
}

/**
 * tracemap_instance_name - the name of an instance set up by tracemap_instance_open()
 * @ti: the handle
 * @created: NULL, or set to 1 when it was made here (and goes at close), else 0
 *
 * Returns the name (TRACEMAP_TOP_LEVEL for the top level), owned by @ti, or
 * NULL with errno EINVAL for NULL.
 */
const char *tracemap_instance_name(const struct tracemap_instance *ti, int *created)
{
	if (!ti || !ti->in.name) {
		tm_err(EINVAL);
		return NULL;
	}
	if (created)
		*created = ti->in.created;
	return ti->in.name;
}

/* A file of the instance a value can be written to: relative, no way out of it */
static int check_file(const char *file)
{
	if (!file || !*file || file[0] == '/' || strstr(file, "..") || strpbrk(file, " \n")) {
		tm_log(TRACEMAP_LOG_ERROR, "tracemap_instance_set: '%s': give a file of the "
		       "instance, such as options/overwrite", file ? file : "(null)");
		return tm_err(EINVAL);
	}
	return 0;
}

/**
 * tracemap_instance_set - write a value to a file of the instance, to be put back
 * @ti: the handle
 * @file: a file of the instance that holds one value ("options/overwrite",
 *	"tracing_on", "buffer_percent"), relative to its directory
 * @value: what to write
 *
 * The first time a file is set, its value before is written in the crash
 * record and kept; tracemap_instance_close() writes it back (tracemap
 * reset after a kill). In an instance made here nothing is put back: it
 * goes.
 *
 * Returns 0, or -errno after a message (EINVAL for a file out of the
 * instance, what the kernel answered otherwise).
 */
int tracemap_instance_set(struct tracemap_instance *ti, const char *file, const char *value)
{
	struct tm_inst_file *more;
	char *old;
	int i, ret;
	bool known = false;

	if (!ti || !value) {
		tm_log(TRACEMAP_LOG_ERROR, "tracemap_instance_set: no %s", ti ? "value" : "instance");
		return tm_err(EINVAL);
	}
	ret = check_file(file);
	if (ret)
		return ret;
	for (i = 0; i < ti->nr_files; i++)
		known |= !strcmp(ti->files[i].file, file);
	if (!known && !ti->in.created) {
		old = read_value(ti->in.dir, file);
		if (!old) {
			ret = tm_err(errno ? errno : EIO);
			tm_log(TRACEMAP_LOG_ERROR, "cannot read %s/%s: %s", ti->in.dir, file,
			       strerror(-ret));
			return ret;
		}
		more = realloc(ti->files, (ti->nr_files + 1) * sizeof(*more));
		if (!more) {
			free(old);
			return tm_err(ENOMEM);
		}
		ti->files = more;
		ret = tm_state_note(ti->in.state, "file", "%s %s", file, old);
		if (ret) {
			free(old);
			return ret;
		}
		ti->files[ti->nr_files].file = strdup(file);
		ti->files[ti->nr_files].old = old;
		if (!ti->files[ti->nr_files].file) {
			free(old);
			return tm_err(ENOMEM);
		}
		ti->nr_files++;
	}
	return write_value(&ti->in, file, value);
}

/**
 * tracemap_instance_close - put back what the instance was given, and free
 * @ti: the handle; NULL is allowed
 *
 * The tracer first, then the files of tracemap_instance_set() in the
 * reverse order, the clock and the size; an instance made here is removed.
 * The crash record goes once all is back. In a child of the process that
 * opened it, it only frees.
 *
 * Returns 0, or -errno after a message when something could not be put
 * back (the record then stays for tracemap reset).
 */
int tracemap_instance_close(struct tracemap_instance *ti)
{
	int ret = 0, i;

	if (!ti)
		return 0;
	if (tracemap_tracer_restore(ti->tracer))
		ret = -EIO;
	for (i = ti->nr_files - 1; i >= 0; i--) {
		if (!tm_in_child(ti->owner) && !ti->in.created &&
		    write_value(&ti->in, ti->files[i].file, ti->files[i].old))
			ret = -EIO;
		free(ti->files[i].file);
		free(ti->files[i].old);
	}
	free(ti->files);
	if (ret) {
		/* the record stays: tracemap reset puts back the rest */
		tm_state_end(ti->in.state, false);
		ti->in.state = NULL;
	}
	if (tm_inst_close(&ti->in) && !ret)
		ret = -EIO;
	free(ti);
	return ret ? tm_err(-ret) : 0;
}
