// SPDX-License-Identifier: LGPL-2.1-only
/*
 * tracefs paths and files, messages, clocks, options structs: what every
 * other file asks, and what the front-ends ask through the exported
 * tracemap_tracefs_dir(), tracemap_instance_dir() and
 * tracemap_header_subbuf_size().
 */
#include <fcntl.h>
#include <limits.h>
#include <mntent.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tracemap-local.h"

static tracemap_print_fn print_fn;
static void *print_ctx;
/* per thread: a front-end may call the library from several */
static __thread char last_error[512];

int tm_cur_pid;

static void forked_child(void)
{
	tm_cur_pid = getpid();
}

__attribute__((constructor)) static void fork_watch(void)
{
	tm_cur_pid = getpid();
	pthread_atfork(NULL, NULL, forked_child);
}

int tm_child_refused(const char *what, int owner, bool *told)
{
	if (!*told)
		tm_log(TRACEMAP_LOG_ERROR, "%s opened in process %d cannot be used in its child "
		       "%d (fork() does not pass on the mapping): open a new one in the child",
		       what, owner, tm_cur_pid);
	*told = true;
	return tm_err(EBADFD);
}

/**
 * tracemap_set_print - replace the message sink
 * @fn: called with each message; NULL restores the default, which writes
 *	errors and warnings to stderr and drops the rest
 * @ctx: passed to @fn
 *
 * Every failure of a tracemap_*_open() call is explained by one message
 * of level TRACEMAP_LOG_ERROR before the call returns: a front-end that
 * wants the text for its own output keeps it here, and prints nothing of
 * its own for that failure.
 */
void tracemap_set_print(tracemap_print_fn fn, void *ctx)
{
	print_fn = fn;
	print_ctx = ctx;
}

void tm_log(enum tracemap_log_level level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!print_fn && level > TRACEMAP_LOG_WARN)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (level <= TRACEMAP_LOG_WARN)
		memcpy(last_error, msg, sizeof(last_error));
	if (print_fn)
		print_fn(print_ctx, level, msg);
	else
		fprintf(stderr, "libtracemap: %s: %s\n",
			level == TRACEMAP_LOG_ERROR ? "error" : "warning", msg);
}

/**
 * tracemap_last_error - the library's last error or warning in this thread
 *
 * Returns the text of the last message of level TRACEMAP_LOG_ERROR or
 * TRACEMAP_LOG_WARN given in the calling thread, whatever the print sink,
 * or "" when there was none since tracemap_clear_error(). Valid until the
 * thread's next call of the library.
 */
const char *tracemap_last_error(void)
{
	return last_error;
}

/**
 * tracemap_clear_error - forget the last error of this thread
 *
 * Called before a call whose failure the caller will explain with
 * tracemap_last_error(), so that an older message is not taken for its own.
 */
void tracemap_clear_error(void)
{
	last_error[0] = '\0';
}

/**
 * tracemap_now_ns - the clock of the library's timeouts and deadlines
 *
 * Returns CLOCK_MONOTONIC in nanoseconds, for a caller's deadlines around
 * library calls.
 */
uint64_t tracemap_now_ns(void)
{
	return tm_now_ns();
}

uint64_t tm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* 0 when @dir is a tracefs mount this process can read, else the errno */
static int tracefs_at(const char *dir)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/trace_pipe", dir);
	if (access(path, F_OK))
		return errno == EACCES || errno == EPERM ? errno : ENOENT;
	return 0;
}

static int no_permission(const char *dir)
{
	tm_log(TRACEMAP_LOG_ERROR, "no permission to read %s: run as root or grant access to "
	       "the tracefs mount", dir);
	return tm_err(EACCES);
}

/**
 * tracemap_tracefs_dir - find the tracefs mount
 * @dir: a directory to check instead of looking, or NULL
 * @buf: receives the directory
 * @size: bytes at @buf
 *
 * Looks in /proc/mounts, or when it cannot be read at /sys/kernel/tracing and
 * /sys/kernel/debug/tracing; it never mounts tracefs (not even through the
 * debugfs automount). A failure is explained through the print callback.
 *
 * Returns 0, -ENOENT when no tracefs is mounted (or @dir is none), or -EACCES
 * when one is mounted but this process may not read it.
 */
int tracemap_tracefs_dir(const char *dir, char *buf, size_t size)
{
	static const char *const known[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	const char *denied = NULL;
	char first[4096] = "";
	bool table;
	struct mntent *m;
	FILE *fp;
	size_t i;
	int e;

	if (dir) {
		e = tracefs_at(dir);
		if (e == EACCES || e == EPERM)
			return no_permission(dir);
		if (e) {
			tm_log(TRACEMAP_LOG_ERROR, "%s is not a tracefs mount: give the tracefs "
			       "directory or mount it with 'mount -t tracefs nodev %s'", dir, dir);
			return tm_err(ENOENT);
		}
		snprintf(buf, size, "%s", dir);
		return 0;
	}
	fp = setmntent("/proc/mounts", "r");
	while (fp && (m = getmntent(fp))) {
		if (strcmp(m->mnt_type, "tracefs"))
			continue;
		e = tracefs_at(m->mnt_dir);
		if (!e) {
			snprintf(buf, size, "%s", m->mnt_dir);
			endmntent(fp);
			return 0;
		}
		if (!first[0] && (e == EACCES || e == EPERM))
			snprintf(first, sizeof(first), "%s", m->mnt_dir);
	}
	table = fp != NULL;
	if (fp)
		endmntent(fp);
	/*
	 * Only without a mount table: looking into /sys/kernel/debug/tracing
	 * makes debugfs automount tracefs there, and a library that is asked
	 * where tracefs is must not mount it.
	 */
	for (i = 0; !table && i < sizeof(known) / sizeof(known[0]); i++) {
		e = tracefs_at(known[i]);
		if (!e) {
			snprintf(buf, size, "%s", known[i]);
			return 0;
		}
		if (!denied && (e == EACCES || e == EPERM))
			denied = known[i];
	}
	/* mounted but not ours to read: say so rather than "not mounted" */
	if (first[0])
		return no_permission(first);
	if (denied)
		return no_permission(denied);
	tm_log(TRACEMAP_LOG_ERROR, "tracefs is not mounted at /sys/kernel/tracing: run "
	       "'mount -t tracefs nodev /sys/kernel/tracing'");
	return tm_err(ENOENT);
}

/*
 * What to pass instead of NULL or "" where they are refused: the same words
 * from every entry point (tracemap.h, "Which buffer").
 */
#define NAME_HINT	"give an instance name, or TRACEMAP_TOP_LEVEL (\"/\") for the " \
			"top-level buffer every tracer shares"

int tm_instance_required(const char *instance, const char *who, const char *why)
{
	if (instance)
		return 0;
	tm_log(TRACEMAP_LOG_ERROR, "%s: no instance given (NULL): %s; %s", who, why, NAME_HINT);
	return tm_err(EINVAL);
}

/**
 * tracemap_instance_dir - check an instance name and find its directory
 * @tracefs: the tracefs mount (tracemap_tracefs_dir())
 * @instance: the instance name, or TRACEMAP_TOP_LEVEL for the top-level buffer
 * @buf: receives "@tracefs" or "@tracefs/instances/@instance"
 * @size: bytes at @buf
 *
 * A failure is explained through the print callback.
 *
 * Returns 0, -EINVAL for NULL or a name that cannot be an instance ("", ".",
 * "..", one with a '/'), -ENAMETOOLONG for one longer than NAME_MAX, -EACCES
 * or -EPERM when this process may not look, or -ENODEV when the instance
 * does not exist.
 */
int tracemap_instance_dir(const char *tracefs, const char *instance, char *buf, size_t size)
{
	struct stat st;
	int e;

	if (tm_instance_required(instance, "tracemap_instance_dir",
				 "it names no buffer"))
		return -EINVAL;
	if (tm_is_top(instance)) {
		snprintf(buf, size, "%s", tracefs);
		return 0;
	}
	e = tm_instance_name_check(tracefs, instance);
	if (e)
		return e;
	snprintf(buf, size, "%s/instances/%s", tracefs, instance);
	e = stat(buf, &st) ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
	if (e == EACCES || e == EPERM) {
		tm_log(TRACEMAP_LOG_ERROR, "no permission to look at %s: run as root", buf);
		return tm_err(e);
	}
	if (e) {
		tm_log(TRACEMAP_LOG_ERROR, "no instance '%s' (%s does not exist): create it with "
		       "'mkdir %s' or 'trace-cmd record -B %s'", instance, buf, buf, instance);
		return tm_err(ENODEV);
	}
	return 0;
}

bool tm_is_top(const char *instance)
{
	return instance && !strcmp(instance, TRACEMAP_TOP_LEVEL);
}

/* A name that can be a directory under instances/: 0, or -EINVAL/-ENAMETOOLONG said why. */
int tm_instance_name_check(const char *tracefs, const char *instance)
{
	if (!*instance) {
		tm_log(TRACEMAP_LOG_ERROR, "an empty instance name: %s (or NULL to "
		       "tracemap_stream_open() for a private instance)", NAME_HINT);
		return tm_err(EINVAL);
	}
	if (strchr(instance, '/') || !strcmp(instance, ".") || !strcmp(instance, "..")) {
		tm_log(TRACEMAP_LOG_ERROR, "invalid instance name '%s': give the name of a "
		       "directory in %s/instances, or TRACEMAP_TOP_LEVEL (\"/\") for the "
		       "top-level buffer", instance, tracefs);
		return tm_err(EINVAL);
	}
	if (strlen(instance) > NAME_MAX) {
		tm_log(TRACEMAP_LOG_ERROR, "an instance name of %zu bytes: tracefs instance names "
		       "have at most %d bytes; use a shorter one", strlen(instance), NAME_MAX);
		return tm_err(ENAMETOOLONG);
	}
	return 0;
}

int tm_header_page(const char *tracefs, unsigned int *data_off, unsigned int *data_size)
{
	char path[4096], buf[1024];
	const char *p;
	int ret;

	snprintf(path, sizeof(path), "%s/events/header_page", tracefs);
	ret = tm_read_file(path, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	p = strstr(buf, "field: char data;");
	if (!p || sscanf(p, "field: char data;\toffset:%u;\tsize:%u;", data_off, data_size) != 2)
		return tm_err(EPROTO);
	return 0;
}

/**
 * tracemap_header_subbuf_size - the page size trace-cmd assumes
 * @tracefs_dir: the tracefs mount, or NULL to find it
 *
 * The sub-buffer size events/header_page describes (offset plus size of
 * its data field): what libtraceevent and trace-cmd read the pages of a
 * trace.dat with, whatever buffer_subbuf_size_kb an instance has.
 *
 * Returns the size in bytes (the system page size when the file cannot be
 * read or parsed), or -ENOENT when tracefs is not mounted.
 */
int tracemap_header_subbuf_size(const char *tracefs_dir)
{
	unsigned int off, size;
	char tfs[4096];
	int ret;

	ret = tracemap_tracefs_dir(tracefs_dir, tfs, sizeof(tfs));
	if (ret)
		return ret;
	if (tm_header_page(tfs, &off, &size) || off + size > INT_MAX)
		return getpagesize();
	return (int)(off + size);
}

unsigned int tm_subbuf_size(const char *idir)
{
	char path[4096], buf[64];
	long kb;

	snprintf(path, sizeof(path), "%s/buffer_subbuf_size_kb", idir);
	if (tm_read_file(path, buf, sizeof(buf)) > 0) {
		kb = strtol(buf, NULL, 10);
		if (kb > 0 && kb <= 1024 * 1024)
			return (unsigned int)kb * 1024;
	}
	return getpagesize();
}

/* The value of the line "@name N" of a stats file, or NULL. */
static const char *stats_line(const char *buf, const char *name)
{
	size_t n = strlen(name);
	const char *p = buf;

	while (p && *p) {
		if (!strncmp(p, name, n))
			return p + n;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

int tm_cpu_stats_file(const char *path, struct tracemap_cpu_stats *st)
{
	const char *e, *o, *r;
	char buf[1024];
	int ret;

	ret = tm_read_file(path, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	/* "entries:" counts what is still in the buffer, the meta page what was written */
	e = stats_line(buf, "entries:");
	o = stats_line(buf, "overrun:");
	r = stats_line(buf, "read events:");
	if (!e || !o || !r)
		return tm_err(EPROTO);
	st->kernel_overrun = strtoull(o, NULL, 10);
	st->kernel_read = strtoull(r, NULL, 10);
	st->kernel_entries = strtoull(e, NULL, 10) + st->kernel_overrun + st->kernel_read;
	return 0;
}

int tm_opts_copy(void *dst, size_t dst_sz, const void *src, size_t min_sz, const char *what)
{
	const unsigned char *p = src;
	size_t sz, i;

	if (!src)
		return 0;
	sz = *(const size_t *)src;
	if (sz < min_sz) {
		tm_log(TRACEMAP_LOG_ERROR, "%s.sz is %zu: set it to sizeof(struct %s)", what, sz,
		       what);
		return tm_err(EINVAL);
	}
	/* fields this version does not know must be zero */
	for (i = dst_sz; i < sz; i++) {
		if (p[i]) {
			tm_log(TRACEMAP_LOG_ERROR, "%s sets a field this libtracemap does not "
			       "know (byte %zu of %zu): update libtracemap or leave it zero",
			       what, i, sz);
			return tm_err(E2BIG);
		}
	}
	memcpy(dst, src, sz < dst_sz ? sz : dst_sz);
	return 0;
}

/*
 * Whole file into a malloc'ed, NUL-terminated buffer; *len without the NUL.
 * Read once, front to back: a tracefs file such as saved_cmdlines is
 * formatted by the kernel on every read, so it is not read again to find
 * its size.
 */
char *tm_read_whole(const char *path, size_t *len)
{
	size_t size = 64 * 1024, n = 0;
	char *buf = NULL, *p;
	int fd, ret = 0;
	ssize_t r;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		tm_err(errno);
		return NULL;
	}
	for (;;) {
		if (n + 1 >= size || !buf) {
			size = buf ? size * 4 : size;
			p = realloc(buf, size);
			if (!p) {
				ret = ENOMEM;
				break;
			}
			buf = p;
		}
		r = read(fd, buf + n, size - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			ret = errno;
		if (r <= 0)
			break;
		n += r;
	}
	close(fd);
	if (ret) {
		free(buf);
		tm_err(ret);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

int tm_read_file(const char *path, char *buf, size_t size)
{
	ssize_t n, total = 0;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return tm_err(errno);
	while ((size_t)total < size - 1) {
		n = read(fd, buf + total, size - 1 - total);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			e = errno;
			close(fd);
			return tm_err(e);
		}
		if (!n)
			break;
		total += n;
	}
	buf[total] = '\0';
	close(fd);
	return total;
}

int tm_write_file(const char *path, const char *val)
{
	size_t len = strlen(val);
	ssize_t n;
	int fd, e;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return tm_err(errno);
	n = write(fd, val, len);
	e = n < 0 ? errno : 0;
	close(fd);
	if (e)
		return tm_err(e);
	return (size_t)n == len ? 0 : tm_err(EIO);
}

/*
 * Page-sized buffers (the snapshot's copies, a dump's pages) come back in
 * the same sizes on every refresh of a live view: the last few freed ones
 * are kept, still faulted in, so that the next copy does not fault and zero
 * the whole ring again. Bounded by slots; the memory stays with the process
 * as a freed malloc block would.
 */
#define PAGES_CACHE	8

static struct {
	pthread_mutex_t lock;
	void *p[PAGES_CACHE];
	size_t size[PAGES_CACHE];
} pages_cache = { .lock = PTHREAD_MUTEX_INITIALIZER };

void *tm_pages_alloc(size_t size)
{
	void *p = NULL;
	int i;

	if (!size)
		size = 1;
	pthread_mutex_lock(&pages_cache.lock);
	for (i = 0; i < PAGES_CACHE && !p; i++) {
		if (pages_cache.p[i] && pages_cache.size[i] == size) {
			p = pages_cache.p[i];
			pages_cache.p[i] = NULL;
		}
	}
	pthread_mutex_unlock(&pages_cache.lock);
	if (p)
		return p;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		errno = ENOMEM;
		return NULL;
	}
	/* a refusal only costs speed: 4 KiB pages then */
	madvise(p, size, MADV_HUGEPAGE);
	return p;
}

void tm_pages_free(void *p, size_t size)
{
	int i;

	if (!p)
		return;
	if (!size)
		size = 1;
	pthread_mutex_lock(&pages_cache.lock);
	for (i = 0; i < PAGES_CACHE && p; i++) {
		if (!pages_cache.p[i]) {
			pages_cache.p[i] = p;
			pages_cache.size[i] = size;
			p = NULL;
		}
	}
	pthread_mutex_unlock(&pages_cache.lock);
	/* every slot is taken: this one goes */
	if (p)
		munmap(p, size);
}
