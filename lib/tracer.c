// SPDX-License-Identifier: LGPL-2.1-only
/*
 * The tracer of an instance and its function filters, as trace-cmd record
 * sets them (-p, -l, -n, -g, --func-stack), and their put-back: every file
 * is read before it is written, and tracemap_tracer_restore() writes the
 * old contents back in the reverse order (the tracer first, so that no
 * function is traced while the filters change).
 *
 * A kernel may refuse the function tracers outright (a locked-down kernel,
 * a hypervisor that forbids code patching): open() or write() give EPERM.
 * That is said as such, with the file, before anything else is changed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracemap-local.h"

TM_OPTS_NO_TAIL(tracemap_tracer_opts, tracefs_dir);

/* One filter file: what it held before, put back at the end. */
struct filter_file {
	const char *name;		/* "set_ftrace_filter", ... */
	const char *opt;		/* the trace-cmd option that sets it */
	const char *const *want;	/* the caller's patterns, NULL-terminated */
	char *old;			/* functions it listed before (one per line); NULL: untouched */
	bool changed;
};

enum { F_FILTER, F_NOTRACE, F_GRAPH, NR_FILTERS };

struct tracemap_tracer {
	char dir[PATH_MAX];		/* the instance's directory */
	char top[PATH_MAX];		/* the tracefs directory: the top level */
	char *old_tracer;		/* current_tracer before; NULL: untouched */
	int old_stack;			/* options/func_stack_trace before; -1: untouched */
	bool stack_global;		/* the kernel has one func_stack_trace for all buffers */
	struct filter_file f[NR_FILTERS];
	struct tm_state *state;		/* the crash record each change is noted in first */
	bool own_state;			/* made by tracemap_tracer_set(): ended at restore */
	int owner;
};

/* What EPERM on a function-tracer file means, once, for every message. */
static const char *eperm_cause(char *buf, size_t size)
{
	char *lock = NULL, *b, *e;
	size_t len;

	lock = tm_read_whole("/sys/kernel/security/lockdown", &len);
	b = lock ? strchr(lock, '[') : NULL;
	e = b ? strchr(b, ']') : NULL;
	if (b && e && strncmp(b, "[none]", 6))
		snprintf(buf, size, "this kernel is locked down (%.*s, see kernel_lockdown(7)), which "
			 "forbids the function tracers", (int)(e - b - 1), b + 1);
	else
		snprintf(buf, size, "this kernel forbids the function tracers (a locked-down kernel, "
			 "see kernel_lockdown(7), or a virtual machine that forbids code patching)");
	free(lock);
	return buf;
}

static void file_error(const struct tracemap_tracer *t, const char *file, const char *what,
		       const char *val, int err)
{
	char cause[256];

	if (err == EPERM || err == EACCES)
		tm_log(TRACEMAP_LOG_ERROR, "cannot %s %s%s%s%s/%s: %s: %s; trace events (-e) still "
		       "work", what, val ? "'" : "", val ? val : "", val ? "' to " : "", t->dir, file,
		       strerror(err), eperm_cause(cause, sizeof(cause)));
	else
		tm_log(TRACEMAP_LOG_ERROR, "cannot %s %s%s%s%s/%s: %s", what, val ? "'" : "",
		       val ? val : "", val ? "' to " : "", t->dir, file, strerror(err));
}

static int open_file(const struct tracemap_tracer *t, const char *file, int flags)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", t->dir, file);
	return open(path, flags | O_CLOEXEC);
}

/* The whole of @dir/@file (NULL + errno when it cannot be read), trailing newline cut. */
static char *read_at(const char *dir, const char *file)
{
	char path[PATH_MAX + 64], *v;
	size_t len;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	v = tm_read_whole(path, &len);
	if (v && len && v[len - 1] == '\n')
		v[len - 1] = '\0';
	return v;
}

static char *read_file(const struct tracemap_tracer *t, const char *file)
{
	return read_at(t->dir, file);
}

/* Write @val to @dir/@file in one write(); 0 or -errno. */
static int write_at(const char *dir, const char *file, const char *val)
{
	char path[PATH_MAX + 64];
	int fd, err;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return tm_err(errno);
	n = write(fd, val, strlen(val));
	err = n < 0 ? errno : n == (ssize_t)strlen(val) ? 0 : EIO;
	close(fd);
	return err ? tm_err(err) : 0;
}

static int write_file(const struct tracemap_tracer *t, const char *file, const char *val)
{
	return write_at(t->dir, file, val);
}

/*
 * The functions a filter file lists, without the "#### all functions
 * enabled ####" comment of an empty one and without commands
 * (func:traceoff and such: truncating the file leaves those alone).
 */
static char *listed(char *v)
{
	char *line, *save, *out = v, *sp;
	size_t len;

	for (line = strtok_r(v, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#' || strchr(line, ':'))
			continue;
		/* "func [module]": the name alone, which the kernel takes back */
		sp = strchr(line, ' ');
		if (sp)
			*sp = '\0';
		len = strlen(line);
		memmove(out, line, len);
		out += len;
		*out++ = '\n';
	}
	*out = '\0';
	return v;
}

/*
 * One pattern, ended by a newline: the kernel takes a token only at white
 * space (or at close), so patterns written back to back would run into one
 * name, match nothing, and leave the filter empty: every function traced.
 */
static int write_pattern(int fd, const char *pat)
{
	size_t len = strlen(pat);
	char buf[512];

	if (len + 1 > sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, pat, len);
	buf[len] = '\n';
	return write(fd, buf, len + 1) == (ssize_t)(len + 1) ? 0 : -1;
}

/*
 * An empty filter file means every function: after patterns were taken it
 * must list some (the set_ftrace_notrace of a -n may only match nothing
 * when the kernel said so, which it does per write).
 */
static int check_listed(struct tracemap_tracer *t, const struct filter_file *ff)
{
	char *now = read_file(t, ff->name);
	bool empty;

	if (!now) {
		file_error(t, ff->name, "read", NULL, errno ? errno : EIO);
		return tm_err(errno ? errno : EIO);
	}
	empty = !*listed(now);
	free(now);
	if (!empty)
		return 0;
	tm_log(TRACEMAP_LOG_ERROR, "%s %s: %s/%s lists no function after it was written: no "
	       "function of this kernel matches", ff->opt, ff->want[0], t->dir, ff->name);
	return tm_err(EINVAL);
}

/* The old list of a filter file in the crash record, on one line ("" : empty) */
static int note_list(struct tracemap_tracer *t, const char *file, const char *list)
{
	char *line = strdup(list), *p;
	int ret;

	if (!line)
		return tm_err(ENOMEM);
	for (p = line; *p; p++)
		if (*p == '\n')
			*p = ' ';
	ret = tm_state_note(t->state, file, "%s", line);
	free(line);
	return ret;
}

/*
 * Replace what @ff lists by its patterns, each in its own write (as
 * trace-cmd does: a pattern that matches no function fails alone).
 */
static int set_filter(struct tracemap_tracer *t, struct filter_file *ff)
{
	const char *const *p;
	int fd, ret = 0, err;
	char *old;

	old = read_file(t, ff->name);
	if (!old) {
		err = errno ? errno : EIO;
		if (err == ENOENT)
			tm_log(TRACEMAP_LOG_ERROR, "%s: %s has no %s: this kernel lacks the "
			       "function_graph tracer, or does not give instances their own",
			       ff->opt, t->dir, ff->name);
		else
			file_error(t, ff->name, "read", NULL, err);
		return tm_err(err);
	}
	ff->old = listed(old);
	ret = note_list(t, ff->name, ff->old);
	if (ret) {
		free(ff->old);
		ff->old = NULL;
		return ret;
	}
	fd = open_file(t, ff->name, O_WRONLY | O_TRUNC);
	if (fd < 0) {
		err = errno;
		file_error(t, ff->name, "open", NULL, err);
		free(ff->old);
		ff->old = NULL;
		return tm_err(err);
	}
	ff->changed = true;
	for (p = ff->want; *p && !ret; p++) {
		if (!write_pattern(fd, *p))
			continue;
		err = errno;
		if (err == EINVAL || err == ENODEV)
			tm_log(TRACEMAP_LOG_ERROR, "%s %s: no function of this kernel matches it "
			       "(%s/available_filter_functions lists them)", ff->opt, *p, t->dir);
		else
			file_error(t, ff->name, "write", *p, err);
		ret = tm_err(err);
	}
	if (close(fd) && !ret) {
		err = errno;
		file_error(t, ff->name, "write", ff->want[0], err);
		ret = tm_err(err);
	}
	if (!ret)
		ret = check_listed(t, ff);
	return ret;
}

static void restore_filter(struct tracemap_tracer *t, struct filter_file *ff)
{
	char *name, *save;
	int fd;

	if (!ff->changed)
		return;
	fd = open_file(t, ff->name, O_WRONLY | O_TRUNC);
	if (fd < 0) {
		file_error(t, ff->name, "empty", NULL, errno);
	} else {
		for (name = strtok_r(ff->old, "\n", &save); name; name = strtok_r(NULL, "\n", &save))
			if (write_pattern(fd, name))
				file_error(t, ff->name, "put back", name, errno);
		close(fd);
	}
	free(ff->old);
	ff->old = NULL;
	ff->changed = false;
}

/* A pattern of trace-cmd's regular-expression form, which only globs replace here */
static int check_patterns(const char *opt, const char *const *p)
{
	for (; p && *p; p++) {
		if (!**p || strpbrk(*p, "^$\n")) {
			tm_log(TRACEMAP_LOG_ERROR, "%s '%s': give a function name or a glob "
			       "(sched*, *_lock), not a regular expression or an empty name", opt,
			       *p);
			return tm_err(EINVAL);
		}
	}
	return 0;
}

static int set_tracer(struct tracemap_tracer *t, const char *tracer)
{
	char *old, *avail;
	int ret;

	old = read_file(t, "current_tracer");
	if (!old) {
		ret = tm_err(errno ? errno : EIO);
		file_error(t, "current_tracer", "read", NULL, -ret);
		return ret;
	}
	if (!strcmp(old, tracer)) {
		free(old);
		return 0;
	}
	ret = tm_state_note(t->state, "current_tracer", "%s", old);
	if (ret) {
		free(old);
		return ret;
	}
	t->old_tracer = old;
	ret = write_file(t, "current_tracer", tracer);
	if (ret == -EINVAL) {
		avail = read_file(t, "available_tracers");
		tm_log(TRACEMAP_LOG_ERROR, "-p %s: no such tracer in %s; this kernel has: %s",
		       tracer, t->dir, avail ? avail : "(available_tracers cannot be read)");
		free(avail);
	} else if (ret == -EBUSY) {
		tm_log(TRACEMAP_LOG_ERROR, "-p %s: %s/current_tracer: %s: a reader has this "
		       "instance's trace_pipe or trace_pipe_raw open, and the kernel changes no "
		       "tracer under a reader; set the tracer before it starts", tracer, t->dir,
		       strerror(EBUSY));
	} else if (ret) {
		file_error(t, "current_tracer", "write", tracer, -ret);
	}
	if (ret) {
		/* nothing was changed */
		free(t->old_tracer);
		t->old_tracer = NULL;
	}
	return ret;
}

/* The top level's options/func_stack_trace: 0, 1, or -1 when it cannot be read */
static int top_stack(const struct tracemap_tracer *t)
{
	char *v = read_at(t->top, "options/func_stack_trace");
	int on;

	if (!v)
		return -1;
	on = v[0] == '1';
	free(v);
	return on;
}

/*
 * Some kernels keep func_stack_trace as one flag of the function
 * tracer for every buffer: the instance's file then writes the top level's
 * too. Told by the top level following the instance's write, whatever the
 * version; noted so that a repair puts the global flag back even after the
 * instance is gone.
 */
static int check_stack_shared(struct tracemap_tracer *t, int top_before)
{
	if (top_before != 0 || top_stack(t) != 1)
		return 0;
	t->stack_global = true;
	return tm_state_note(t->state, "func_stack_trace_global", "0");
}

/* Said once the tracer is set: a refused tracer puts the flag back at once */
static void warn_stack_shared(const struct tracemap_tracer *t)
{
	tm_log(TRACEMAP_LOG_WARN, "--func-stack: this kernel has one options/func_stack_trace for "
	       "all buffers: setting it in %s also set it in the top level (%s) and in every other "
	       "instance, whose function tracer records a stack trace after each function too; it "
	       "is put back to 0 everywhere when this stream ends, or by 'tracemap reset' after a "
	       "kill", t->dir, t->top);
}

static int set_stack(struct tracemap_tracer *t)
{
	char *old = read_file(t, "options/func_stack_trace");
	int ret, top_before;

	if (!old) {
		ret = tm_err(errno ? errno : EIO);
		if (ret == -ENOENT)
			tm_log(TRACEMAP_LOG_ERROR, "--func-stack: %s has no options/func_stack_trace: "
			       "this kernel lacks the function tracer", t->dir);
		else
			file_error(t, "options/func_stack_trace", "read", NULL, -ret);
		return ret;
	}
	t->old_stack = old[0] == '1';
	free(old);
	if (t->old_stack) {
		t->old_stack = -1;
		return 0;
	}
	ret = tm_state_note(t->state, "func_stack_trace", "0");
	if (ret) {
		t->old_stack = -1;
		return ret;
	}
	/* the top level itself: nothing else to tell apart */
	top_before = strcmp(t->dir, t->top) ? top_stack(t) : -1;
	ret = write_file(t, "options/func_stack_trace", "1");
	if (ret) {
		t->old_stack = -1;
		file_error(t, "options/func_stack_trace", "write", "1", -ret);
		return ret;
	}
	return check_stack_shared(t, top_before);
}

/* Back to 0: through the top level when the flag is global (the instance may be gone) */
static int restore_stack(struct tracemap_tracer *t)
{
	int err;

	if (t->old_stack != 0)
		return 0;
	t->old_stack = -1;
	if (!t->stack_global) {
		err = write_file(t, "options/func_stack_trace", "0");
		if (err)
			file_error(t, "options/func_stack_trace", "put back", "0", -err);
		return err;
	}
	err = write_at(t->top, "options/func_stack_trace", "0");
	if (err)
		tm_log(TRACEMAP_LOG_ERROR, "cannot put back '0' to %s/options/func_stack_trace (one "
		       "flag for the top level and every instance): %s", t->top, strerror(-err));
	return err;
}

/*
 * The work of tracemap_tracer_set() on @o (copied, checked), each change
 * noted in @state first; NULL + errno after a message, nothing changed.
 */
static struct tracemap_tracer *tracer_set(const char *tfs, const char *instance,
					  const struct tracemap_tracer_opts *o,
					  struct tm_state *state)
{
	struct tracemap_tracer *t;
	int ret, i;

	if (!o->tracer) {
		tm_log(TRACEMAP_LOG_ERROR, "tracemap_tracer_opts: give the tracer (trace-cmd's -p): "
		       "the filters and --func-stack act on a tracer");
		return tm_err(EINVAL), NULL;
	}
	if (check_patterns("-l", o->filter) || check_patterns("-n", o->notrace) ||
	    check_patterns("-g", o->graph))
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return tm_err(ENOMEM), NULL;
	t->old_stack = -1;
	t->owner = tm_cur_pid;
	t->state = state;
	snprintf(t->top, sizeof(t->top), "%s", tfs);
	ret = tracemap_instance_dir(tfs, instance, t->dir, sizeof(t->dir));
	if (ret < 0)
		goto fail;
	t->f[F_FILTER] = (struct filter_file){ .name = "set_ftrace_filter", .opt = "-l",
					       .want = o->filter };
	t->f[F_NOTRACE] = (struct filter_file){ .name = "set_ftrace_notrace", .opt = "-n",
						.want = o->notrace };
	t->f[F_GRAPH] = (struct filter_file){ .name = "set_graph_function", .opt = "-g",
					      .want = o->graph };
	for (i = 0; i < NR_FILTERS && !ret; i++)
		if (t->f[i].want && t->f[i].want[0])
			ret = set_filter(t, &t->f[i]);
	if (!ret && (o->flags & TRACEMAP_TRACER_FUNC_STACK))
		ret = set_stack(t);
	if (!ret)
		ret = set_tracer(t, o->tracer);
	if (!ret && t->stack_global)
		warn_stack_shared(t);
	if (!ret)
		return t;
fail:
	tracemap_tracer_restore(t);
	errno = -ret;
	return NULL;
}

int tm_tracer_set(struct tracemap_tracer **out, const char *tfs, const char *instance,
		  const struct tracemap_tracer_opts *opts, struct tm_state *state)
{
	struct tracemap_tracer_opts o = { .sz = sizeof(o) };
	int ret;

	*out = NULL;
	if (!opts)
		return 0;
	ret = tm_opts_copy(&o, sizeof(o), opts, sizeof(size_t), "tracemap_tracer_opts");
	if (ret)
		return ret;
	*out = tracer_set(tfs, instance, &o, state);
	return *out ? 0 : -errno;
}

/**
 * tracemap_tracer_set - set the tracer of an instance and its function filters
 * @instance: the instance, or TRACEMAP_TOP_LEVEL for the top-level buffer
 * @opts: what to set; see struct tracemap_tracer_opts
 *
 * The filters first, then options/func_stack_trace, the tracer last: the
 * tracer starts with its filters in place. Each old value is written in
 * the crash record first (tracemap_state_repair() puts it back after a
 * kill). Where the kernel has one func_stack_trace for all buffers (the
 * top level follows the instance's write), a warning says so, and the
 * put-back and the record name the top level's flag.
 *
 * Returns the handle tracemap_tracer_restore() puts everything back with,
 * or NULL with errno set after a message (nothing changed): EPERM when the
 * kernel forbids the function tracers, EINVAL for an unknown tracer or a
 * pattern no function matches, ENOENT when the instance lacks a file.
 */
struct tracemap_tracer *tracemap_tracer_set(const char *instance,
					    const struct tracemap_tracer_opts *opts)
{
	struct tracemap_tracer_opts o = { .sz = sizeof(o) };
	struct tracemap_tracer *t;
	struct tm_state *state;
	char tfs[PATH_MAX];
	int ret;

	ret = tm_opts_copy(&o, sizeof(o), opts, sizeof(size_t), "tracemap_tracer_opts");
	if (ret)
		return errno = -ret, NULL;
	ret = tracemap_tracefs_dir(o.tracefs_dir, tfs, sizeof(tfs));
	if (ret < 0)
		return errno = -ret, NULL;
	state = tm_state_new(tfs, instance ? instance : "");
	if (!state)
		return NULL;
	t = tracer_set(tfs, instance, &o, state);
	if (!t) {
		ret = errno;
		/* nothing is left changed: the record goes */
		tm_state_end(state, true);
		errno = ret;
		return NULL;
	}
	t->own_state = true;
	return t;
}

/**
 * tracemap_tracer_restore - put back what tracemap_tracer_set() changed, and free
 * @t: the handle (NULL: nothing)
 *
 * Returns 0, or -errno after a message when a file could not be put back
 * (the others are put back all the same).
 */
int tracemap_tracer_restore(struct tracemap_tracer *t)
{
	int ret = 0, r, i;

	if (!t)
		return 0;
	if (tm_in_child(t->owner)) {
		/* the parent puts back what it set */
		free(t->old_tracer);
		for (i = 0; i < NR_FILTERS; i++)
			free(t->f[i].old);
		if (t->own_state)
			tm_state_end(t->state, false);
		free(t);
		return 0;
	}
	if (t->old_tracer) {
		r = write_file(t, "current_tracer", t->old_tracer);
		if (r) {
			file_error(t, "current_tracer", "put back", t->old_tracer, -r);
			ret = r;
		}
		free(t->old_tracer);
	}
	r = restore_stack(t);
	if (r)
		ret = r;
	for (i = NR_FILTERS - 1; i >= 0; i--)
		restore_filter(t, &t->f[i]);
	if (t->own_state)
		tm_state_end(t->state, !ret);
	free(t);
	return ret ? tm_err(-ret) : 0;
}
