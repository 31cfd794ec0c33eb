// SPDX-License-Identifier: LGPL-2.1
/*
 * tracefs paths and files, messages, clocks.
 */
#include <fcntl.h>
#include <limits.h>
#include <mntent.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tracemap-local.h"

static tracemap_print_fn print_fn;
static void *print_ctx;

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
	if (print_fn)
		print_fn(print_ctx, level, msg);
	else
		fprintf(stderr, "libtracemap: %s: %s\n",
			level == TRACEMAP_LOG_ERROR ? "error" : "warning", msg);
}

int tm_opts_copy(void *dst, size_t size, const void *src, size_t min, const char *what)
{
	const unsigned char *p = src;
	size_t sz, i;

	memcpy(&sz, src, sizeof(sz));
	if (sz < min) {
		tm_log(TRACEMAP_LOG_ERROR, "%s.sz is %zu: set it to sizeof(struct %s)", what, sz,
		       what);
		return tm_err(EINVAL);
	}
	for (i = size; i < sz; i++) {
		if (p[i]) {
			tm_log(TRACEMAP_LOG_ERROR, "%s has a non-zero field at byte %zu that this "
			       "libtracemap does not know: update libtracemap or leave it zero",
			       what, i);
			return tm_err(E2BIG);
		}
	}
	memcpy(dst, src, sz < size ? sz : size);
	return 0;
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

int tm_tracefs_dir(const char *dir, char *buf, size_t size)
{
	static const char *const known[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	const char *denied = NULL;
	char first[4096] = "";
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
	if (fp)
		endmntent(fp);
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
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

int tm_instance_dir(const char *tracefs, const char *instance, char *buf, size_t size)
{
	struct stat st;
	int e;

	if (!instance || !*instance) {
		snprintf(buf, size, "%s", tracefs);
		return 0;
	}
	if (strchr(instance, '/') || !strcmp(instance, ".") || !strcmp(instance, "..")) {
		tm_log(TRACEMAP_LOG_ERROR, "invalid instance name '%s'", instance);
		return tm_err(EINVAL);
	}
	if (strlen(instance) > NAME_MAX) {
		tm_log(TRACEMAP_LOG_ERROR, "an instance name of %zu bytes: tracefs instance names "
		       "have at most %d bytes; use a shorter one", strlen(instance), NAME_MAX);
		return tm_err(ENAMETOOLONG);
	}
	snprintf(buf, size, "%s/instances/%s", tracefs, instance);
	e = stat(buf, &st) ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
	if (e == EACCES || e == EPERM) {
		tm_log(TRACEMAP_LOG_ERROR, "no permission to look at %s: run as root", buf);
		return tm_err(e);
	}
	if (e) {
		tm_log(TRACEMAP_LOG_ERROR, "no instance '%s' in %s/instances: create it with "
		       "'mkdir %s' or 'trace-cmd record -B %s'", instance, tracefs, buf, instance);
		return tm_err(ENODEV);
	}
	return 0;
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
