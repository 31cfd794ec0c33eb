// SPDX-License-Identifier: LGPL-2.1-only
/*
 * The crash-state record: what the library changes in tracefs, written down
 * before it changes it, so that a process killed without a chance to put
 * things back (SIGKILL, a crash) leaves enough behind to repair. One file
 * per stream or event set, <dir>/<pid>-<n>.state (dir: $TRACEMAP_STATE_DIR,
 * else /run/tracemap), made at the first change and removed once all is
 * back:
 *
 *   pid=1234
 *   start=567890                 start time of the process (/proc/PID/stat)
 *   comm=myprog
 *   tracefs=/sys/kernel/tracing
 *   instance=NAME                "/": the top-level buffer
 *   created=1                    the library made the instance: remove it
 *   buffer_size_kb=1408          the value before the change (the first one counts)
 *   trace_clock=local
 *   buffer_percent=50
 *   event=sched:sched_switch     an event it turned on
 *   filter=sched:sched_switch 0  the filter before ("0": none)
 *   set_event_pid=12 13          the list before
 *   set_event_notrace_pid=
 *   event-fork=0
 *   set_ftrace_filter=a b        a filter file's functions before (tracer.c)
 *   func_stack_trace=0           options/func_stack_trace before
 *   func_stack_trace_global=0    the same flag is the top level's (one for all buffers)
 *   current_tracer=nop           the tracer before
 *   file=options/overwrite 0     a file of tracemap_instance_set() and its value before
 *
 * A record whose process is gone (or whose pid now belongs to another
 * process) is stale: tracemap_state_repair() puts back what it names.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracemap-local.h"

#define STATE_DIR	"/run/tracemap"
#define RMDIR_TRIES	50	/* a reader may hold a removed instance for a moment */

struct tm_state {
	char *tracefs;
	char *instance;
	char path[PATH_MAX];
	FILE *fp;			/* NULL until the first note */
	int owner;
};

static unsigned int state_seq;

static const char *state_dir(void)
{
	const char *d = secure_getenv("TRACEMAP_STATE_DIR");

	return d && *d ? d : STATE_DIR;
}

/*
 * Field 22 of /proc/PID/stat, the start time, which tells a reused pid
 * apart; 0 when there is no such process or it is a zombie (killed, not
 * reaped yet: nothing of it runs any more).
 */
static unsigned long long proc_start(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (tm_read_file(path, buf, sizeof(buf)) < 0)
		return 0;
	/* the name in parentheses may hold spaces: count from the last ')' */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return 0;
	for (i = 2; p && i < 22; i++)
		p = strchr(p + 1, ' ');
	if (p)
		v = strtoull(p + 1, NULL, 10);
	return v;
}

struct tm_state *tm_state_new(const char *tracefs, const char *instance)
{
	struct tm_state *st = calloc(1, sizeof(*st));

	if (st) {
		st->tracefs = strdup(tracefs);
		st->instance = strdup(instance);
		st->owner = tm_cur_pid;
	}
	if (!st || !st->tracefs || !st->instance) {
		tm_state_end(st, false);
		tm_log(TRACEMAP_LOG_ERROR, "out of memory");
		tm_err(ENOMEM);
		return NULL;
	}
	return st;
}

static int create(struct tm_state *st)
{
	const char *dir = state_dir();
	char comm[64] = "";
	int fd = -1, e, tries;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		e = errno;
		tm_log(TRACEMAP_LOG_ERROR, "cannot create %s, where the library writes down what "
		       "it changes in tracefs: %s (set TRACEMAP_STATE_DIR to a writable "
		       "directory)", dir, strerror(e));
		return tm_err(e);
	}
	/* never over a record of someone else */
	for (tries = 0; fd < 0 && tries < 1000; tries++) {
		snprintf(st->path, sizeof(st->path), "%s/%d-%u.state", dir, (int)getpid(),
			 __atomic_fetch_add(&state_seq, 1, __ATOMIC_RELAXED));
		fd = open(st->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	st->fp = fd < 0 ? NULL : fdopen(fd, "w");
	if (!st->fp) {
		e = errno;
		tm_log(TRACEMAP_LOG_ERROR, "cannot write %s: %s (set TRACEMAP_STATE_DIR to a "
		       "writable directory)", st->path, strerror(e));
		if (fd >= 0)
			close(fd);
		st->path[0] = '\0';
		return tm_err(e);
	}
	tm_read_file("/proc/self/comm", comm, sizeof(comm));
	comm[strcspn(comm, "\n")] = '\0';
	fprintf(st->fp, "pid=%d\nstart=%llu\ncomm=%s\ntracefs=%s\ninstance=%s\n", (int)getpid(),
		proc_start(getpid()), comm, st->tracefs, st->instance);
	return 0;
}

int tm_state_note(struct tm_state *st, const char *key, const char *fmt, ...)
{
	va_list ap;
	int ret, e;

	if (!st)
		return 0;
	if (!st->fp) {
		ret = create(st);
		if (ret)
			return ret;
	}
	fprintf(st->fp, "%s=", key);
	va_start(ap, fmt);
	vfprintf(st->fp, fmt, ap);
	va_end(ap);
	fputc('\n', st->fp);
	/* on disk before the change it describes */
	if (fflush(st->fp) || fdatasync(fileno(st->fp))) {
		e = errno;
		tm_log(TRACEMAP_LOG_ERROR, "cannot write %s: %s", st->path, strerror(e));
		return tm_err(e);
	}
	return 0;
}

void tm_state_end(struct tm_state *st, bool all_back)
{
	if (!st)
		return;
	if (st->fp) {
		fclose(st->fp);
		/* a forked child's copy: the record is its parent's */
		if (all_back && !tm_in_child(st->owner))
			unlink(st->path);
	}
	free(st->tracefs);
	free(st->instance);
	free(st);
}

/* ------------------------------------------------------------- repair */

struct stale {
	char *text;			/* the record, for its lists of changes */
	int pid;
	unsigned long long start;
	bool created;
	char comm[64];
	char tracefs[PATH_MAX];
	char instance[NAME_MAX + 1];
	char idir[PATH_MAX + NAME_MAX + 16];
};

/* The value of the first line "@key=..." at or after @from, NUL-terminated in place; NULL */
static char *next_value(char *from, const char *key, char **next)
{
	size_t n = strlen(key);
	char *p = from, *end;

	while (p && *p) {
		end = strchr(p, '\n');
		if (end)
			*end = '\0';
		if (!strncmp(p, key, n) && p[n] == '=') {
			if (next)
				*next = end ? end + 1 : NULL;
			if (end)
				*end = '\n';
			return p + n + 1;
		}
		if (end)
			*end = '\n';
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

/* A copy of the value of the first line "@key=" into @buf; false when there is none */
static bool value(const char *text, const char *key, char *buf, size_t size)
{
	char *v = next_value((char *)text, key, NULL);

	if (!v)
		return false;
	snprintf(buf, size, "%.*s", (int)strcspn(v, "\n"), v);
	return true;
}

static int load(const char *path, struct stale *st)
{
	char num[32];
	size_t len;

	memset(st, 0, sizeof(*st));
	st->text = tm_read_whole(path, &len);
	if (!st->text)
		return -1;
	if (value(st->text, "pid", num, sizeof(num)))
		st->pid = atoi(num);
	if (value(st->text, "start", num, sizeof(num)))
		st->start = strtoull(num, NULL, 10);
	/* "private=1" and an empty instance: a record of tracemap 0.1's tool */
	st->created = (value(st->text, "created", num, sizeof(num)) ||
		       value(st->text, "private", num, sizeof(num))) && num[0] == '1';
	/* without a name: a record of the tool (tools/state.c) */
	if (!value(st->text, "comm", st->comm, sizeof(st->comm)) || !st->comm[0])
		snprintf(st->comm, sizeof(st->comm), "tracemap");
	if (st->pid <= 0 || !value(st->text, "tracefs", st->tracefs, sizeof(st->tracefs)) ||
	    !value(st->text, "instance", st->instance, sizeof(st->instance)))
		return -1;
	if (!st->instance[0])
		snprintf(st->instance, sizeof(st->instance), "%s", TRACEMAP_TOP_LEVEL);
	if (tm_is_top(st->instance))
		snprintf(st->idir, sizeof(st->idir), "%s", st->tracefs);
	else
		snprintf(st->idir, sizeof(st->idir), "%s/instances/%s", st->tracefs, st->instance);
	return 0;
}

/* The process that wrote @st still runs (the same process, not a reused pid or a zombie). */
static bool alive(const struct stale *st)
{
	if (st->pid == getpid())
		return true;
	if (kill(st->pid, 0) && errno == ESRCH)
		return false;
	/* a record without its start time (still being written): its process runs */
	if (!st->start)
		return true;
	return proc_start(st->pid) == st->start;
}

/* Write @val to @path; O_TRUNC clears a pid list before it is written again. */
static int put(const char *path, const char *val, bool trunc)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | (trunc ? O_TRUNC : 0)), e = 0;
	ssize_t n = 0;

	if (fd < 0)
		return -errno;
	if (*val)
		n = write(fd, val, strlen(val));
	if (n < 0)
		e = errno;
	close(fd);
	if (e)
		return -e;
	return (size_t)n == strlen(val) ? 0 : -EIO;
}

struct put_ctx {
	const struct stale *st;
	char *what;			/* what was put back, for the message */
	size_t size;
	int failed;			/* -errno of the first failure */
};

static void said(struct put_ctx *pc, const char *fmt, ...)
{
	size_t len = strlen(pc->what);
	va_list ap;

	if (len + 3 >= pc->size)
		return;
	if (len)
		strcat(pc->what, ", ");
	len = strlen(pc->what);
	va_start(ap, fmt);
	vsnprintf(pc->what + len, pc->size - len, fmt, ap);
	va_end(ap);
}

static void put_one(struct put_ctx *pc, const char *file, const char *val, bool trunc,
		    const char *label)
{
	char path[PATH_MAX * 2];
	int ret;

	snprintf(path, sizeof(path), "%s/%s", pc->st->idir, file);
	ret = put(path, val, trunc);
	/* an event or option this kernel no longer has: nothing to put back */
	if (ret == -ENOENT)
		return;
	if (ret) {
		tm_log(TRACEMAP_LOG_ERROR, "cannot put back %s (writing '%s' to %s): %s", label,
		       val, path, strerror(-ret));
		if (!pc->failed)
			pc->failed = ret;
		return;
	}
	said(pc, "%s", label);
}

/* Every line "@key=" of the record, in order */
static void put_all(struct put_ctx *pc, const char *key,
		    void (*fn)(struct put_ctx *pc, char *val))
{
	char *p = pc->st->text, *v, *next, *end;

	while ((v = next_value(p, key, &next))) {
		end = strchr(v, '\n');
		if (end)
			*end = '\0';
		fn(pc, v);
		if (end)
			*end = '\n';
		p = next;
	}
}

static void put_event(struct put_ctx *pc, char *name)
{
	char file[PATH_MAX], label[512], *colon = strchr(name, ':');

	if (!colon)
		return;
	snprintf(file, sizeof(file), "events/%.*s/%s/enable", (int)(colon - name), name, colon + 1);
	snprintf(label, sizeof(label), "%s off", name);
	put_one(pc, file, "0", false, label);
}

static void put_filter(struct put_ctx *pc, char *line)
{
	char file[PATH_MAX], label[512], *sp = strchr(line, ' '), *colon = strchr(line, ':');

	if (!sp || !colon || colon > sp)
		return;
	snprintf(file, sizeof(file), "events/%.*s/%.*s/filter", (int)(colon - line), line,
		 (int)(sp - colon - 1), colon + 1);
	snprintf(label, sizeof(label), "the filter of %.*s", (int)(sp - line), line);
	put_one(pc, file, sp + 1, false, label);
}

/* "file=options/overwrite 0": a file of tracemap_instance_set() and its value before */
static void put_file(struct put_ctx *pc, char *line)
{
	char label[512], *sp = strchr(line, ' ');

	if (!sp)
		return;
	*sp = '\0';
	snprintf(label, sizeof(label), "%s %s", line, sp + 1);
	put_one(pc, line, sp + 1, false, label);
	*sp = ' ';
}

/* The first value of @key (the one before any change), written back */
static void put_first(struct put_ctx *pc, const char *key, const char *file, bool trunc)
{
	char val[4096], label[4200];

	if (!value(pc->st->text, key, val, sizeof(val)))
		return;
	if (trunc)
		snprintf(label, sizeof(label), "%s", key);
	else
		snprintf(label, sizeof(label), "%s %s", key, val);
	put_one(pc, file, val, trunc, label);
}

/*
 * A filter file's old list (space-separated, "" for none): emptied, then
 * each function in a write of its own, as the kernel takes one per write.
 */
static void put_list(struct put_ctx *pc, const char *file)
{
	char path[PATH_MAX * 2], line[512], *v, *end, *tok, *save;
	int fd, e = 0, n;

	v = next_value(pc->st->text, file, NULL);
	if (!v)
		return;
	end = strchr(v, '\n');
	v = strndup(v, end ? (size_t)(end - v) : strlen(v));
	if (!v)
		return;
	snprintf(path, sizeof(path), "%s/%s", pc->st->idir, file);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
	} else {
		/* ended by a newline: the kernel takes a name only at white space */
		for (tok = strtok_r(v, " ", &save); tok && !e; tok = strtok_r(NULL, " ", &save)) {
			n = snprintf(line, sizeof(line), "%s\n", tok);
			errno = 0;
			if (n >= (int)sizeof(line))
				e = ENAMETOOLONG;
			else if (write(fd, line, n) != n)
				e = errno ? errno : EIO;
		}
		close(fd);
	}
	free(v);
	if (e == ENOENT)
		return;
	if (e) {
		tm_log(TRACEMAP_LOG_ERROR, "cannot put back %s/%s: %s", pc->st->idir, file,
		       strerror(e));
		if (!pc->failed)
			pc->failed = -e;
		return;
	}
	said(pc, "%s", file);
}

/*
 * <prefix>-<pid>-<n>: the name instance.c gives a private instance of that
 * process (tracemap-<pid>-<n>, tracemap-flight-<pid>-<n>), or tracemap-<pid>,
 * the private instance of tracemap stream before 0.2.0
 */
static bool private_name(const struct stale *st)
{
	char mid[32];
	const char *p;
	size_t n;

	snprintf(mid, sizeof(mid), "tracemap-%d", st->pid);
	if (!strcmp(st->instance, mid))
		return true;
	snprintf(mid, sizeof(mid), "-%d-", st->pid);
	n = strlen(mid);
	for (p = strstr(st->instance, mid); p; p = strstr(p + 1, mid))
		if (p[n] && strspn(p + n, "0123456789") == strlen(p + n))
			return true;
	return false;
}

static int remove_instance(struct put_ctx *pc)
{
	char path[PATH_MAX + 32];
	struct stat sb;
	int tries, e;

	snprintf(path, sizeof(path), "%s/tracing_on", pc->st->idir);
	put(path, "0", false);
	for (tries = 0; rmdir(pc->st->idir) && errno == EBUSY && tries < RMDIR_TRIES; tries++)
		usleep(20000);
	if (!stat(pc->st->idir, &sb)) {
		e = errno ? errno : EBUSY;
		tm_log(TRACEMAP_LOG_ERROR, "cannot remove %s: %s (remove it with rmdir when no one "
		       "uses it)", pc->st->idir, strerror(e));
		return -e;
	}
	said(pc, "removed the %s it created", private_name(pc->st) ? "private instance" :
	     "instance");
	return 0;
}

/*
 * A kernel with one func_stack_trace for every buffer: put back through the
 * top level, even when the instance is gone or is to be removed.
 */
static void put_global_stack(struct put_ctx *pc)
{
	char val[16], path[PATH_MAX + 64];
	int ret;

	if (!value(pc->st->text, "func_stack_trace_global", val, sizeof(val)))
		return;
	snprintf(path, sizeof(path), "%s/options/func_stack_trace", pc->st->tracefs);
	ret = put(path, val, false);
	if (ret) {
		tm_log(TRACEMAP_LOG_ERROR, "cannot put back the top level's func_stack_trace "
		       "(writing '%s' to %s): %s", val, path, strerror(-ret));
		if (!pc->failed)
			pc->failed = ret;
		return;
	}
	said(pc, "func_stack_trace %s in the top level and every instance (one flag for all)",
	     val);
}

/* Put back what @st names; 0, or -errno when something could not be (said why). */
static int put_back(const struct stale *st, char *what, size_t size)
{
	struct put_ctx pc = { .st = st, .what = what, .size = size };
	struct stat sb;

	what[0] = '\0';
	put_global_stack(&pc);
	if (stat(st->idir, &sb)) {
		if (!what[0])
			snprintf(what, size, "nothing: %s is gone", st->idir);
		return pc.failed;
	}
	if (st->created)
		return remove_instance(&pc);
	/* the tracer first, so that no function is traced while its filters change */
	put_first(&pc, "current_tracer", "current_tracer", false);
	put_first(&pc, "func_stack_trace", "options/func_stack_trace", false);
	put_list(&pc, "set_ftrace_filter");
	put_list(&pc, "set_ftrace_notrace");
	put_list(&pc, "set_graph_function");
	put_all(&pc, "file", put_file);
	put_all(&pc, "event", put_event);
	put_all(&pc, "filter", put_filter);
	put_first(&pc, "set_event_notrace_pid", "set_event_notrace_pid", true);
	put_first(&pc, "set_event_pid", "set_event_pid", true);
	put_first(&pc, "event-fork", "options/event-fork", false);
	put_first(&pc, "buffer_percent", "buffer_percent", false);
	put_first(&pc, "buffer_size_kb", "buffer_size_kb", false);
	put_first(&pc, "trace_clock", "trace_clock", false);
	if (!what[0])
		snprintf(what, size, "nothing: it had changed nothing yet");
	return pc.failed;
}

static const char *where(const struct stale *st, char *buf, size_t size)
{
	if (tm_is_top(st->instance))
		snprintf(buf, size, "the top-level buffer");
	else
		snprintf(buf, size, "instance %s", st->instance);
	return buf;
}

/* Lines "@key=" of the record's changes (NULL: all of them) */
static int count(const struct stale *st, const char *key)
{
	static const char *const header[] = { "pid=", "start=", "comm=", "tracefs=", "instance=",
					      "created=", "private=" };
	const char *p = st->text;
	size_t i;
	int n = 0;

	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		for (i = 0; i < sizeof(header) / sizeof(header[0]); i++)
			if (!strncmp(p, header[i], strlen(header[i])))
				break;
		if (i < sizeof(header) / sizeof(header[0]))
			continue;
		if (!key || (!strncmp(p, key, strlen(key)) && p[strlen(key)] == '='))
			n++;
	}
	return n;
}

/* One stale record at @path: said, and put back unless @check */
static int repair_one(const char *path, struct stale *st, bool check)
{
	char claimed[PATH_MAX + 300], what[2048], in[NAME_MAX + 32];
	int ret;

	if (check) {
		if (st->created)
			snprintf(what, sizeof(what), "the instance %s it created", st->instance);
		else
			snprintf(what, sizeof(what), "%s with %d event(s) enabled and %d other "
				 "setting(s) changed", tm_is_top(st->instance) ?
				 "the top-level buffer" : st->instance,
				 count(st, "event"), count(st, NULL) - count(st, "event"));
		tm_log(TRACEMAP_LOG_WARN, "%s pid %d ended without putting back %s: run 'tracemap "
		       "reset' (or open a stream, which puts it back first)", st->comm, st->pid,
		       what);
		return 0;
	}
	/* claimed by a rename: of two repairs at once, one puts back */
	snprintf(claimed, sizeof(claimed), "%s.repair", path);
	if (rename(path, claimed))
		return 0;
	ret = put_back(st, what, sizeof(what));
	if (ret) {
		rename(claimed, path);
		return ret;
	}
	unlink(claimed);
	tm_log(TRACEMAP_LOG_WARN, "put back what %s pid %d (no longer running) left in %s: %s",
	       st->comm, st->pid, where(st, in, sizeof(in)), what);
	return 0;
}

/**
 * tracemap_state_repair - put back what processes that ended left in tracefs
 * @flags: 0, or TRACEMAP_STATE_CHECK to say what is left without changing it
 *
 * Reads the records of $TRACEMAP_STATE_DIR (default /run/tracemap) that
 * belong to processes no longer running (SIGKILL, a crash) and puts back
 * what each names: removes the instance it created, or puts back the
 * tracer, options/func_stack_trace and function filters it set, and the
 * files set through tracemap_instance_set() (options/overwrite), turns off
 * the events it enabled and writes back the filters, set_event_pid,
 * set_event_notrace_pid, options/event-fork, buffer_percent,
 * buffer_size_kb and trace_clock it changed. Each record is said through
 * the print callback (TRACEMAP_LOG_WARN). Records of running processes
 * are left alone.
 *
 * Returns the number of records of ended processes, or -errno when one
 * could not be put back (said why; it stays for another try).
 */
int tracemap_state_repair(unsigned int flags)
{
	const char *dir = state_dir();
	char path[PATH_MAX + 256];
	struct stale *st;
	struct dirent *d;
	int found = 0, failed = 0, ret;
	size_t len;
	DIR *dp;

	if (flags & ~TRACEMAP_STATE_CHECK) {
		tm_log(TRACEMAP_LOG_ERROR, "tracemap_state_repair: unknown flags %#x: pass 0 or "
		       "TRACEMAP_STATE_CHECK", flags);
		return tm_err(EINVAL);
	}
	dp = opendir(dir);
	if (!dp)
		return 0;
	st = malloc(sizeof(*st));
	if (!st) {
		closedir(dp);
		return tm_err(ENOMEM);
	}
	while ((d = readdir(dp))) {
		len = strlen(d->d_name);
		if (len < 6 || strcmp(d->d_name + len - 6, ".state"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		ret = load(path, st);
		if (!ret && !alive(st)) {
			found++;
			ret = repair_one(path, st, flags & TRACEMAP_STATE_CHECK);
			if (ret && !failed)
				failed = ret;
		}
		free(st->text);
	}
	closedir(dp);
	free(st);
	return failed ? tm_err(-failed) : found;
}
