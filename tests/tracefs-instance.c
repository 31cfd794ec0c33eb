// SPDX-License-Identifier: GPL-2.0-only
/*
 * Private tracefs instances shared by the tests and the benchmarks (see
 * tracefs-instance.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tracefs-instance.h"

/*
 * Each slot holds the instance's full path, formatted when it is created,
 * so that the signal handler only calls rmdir() and nanosleep(); its name
 * starts at name_off. An empty path is a free slot.
 */
static char instances[TI_MAX_INSTANCES][384];
static size_t name_off;
static char tracefs_dir[256];
static void (*signal_hook)(void);

const char *ti_tracefs(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[300];
	size_t i;

	if (tracefs_dir[0])
		return tracefs_dir;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/instances", dirs[i]);
		if (!access(path, W_OK)) {
			snprintf(tracefs_dir, sizeof(tracefs_dir), "%s", dirs[i]);
			name_off = strlen(path) + 1;
			return tracefs_dir;
		}
	}
	return NULL;
}

void ti_path(char *buf, size_t size, const char *name, const char *file)
{
	snprintf(buf, size, "%s/instances/%s/%s", tracefs_dir, name, file);
}

/*
 * A test that dies (a signal, a failed assertion before its teardown) may
 * still hold the instance's trace_pipe_raw open and mapped, and rmdir is
 * EBUSY until the last mapping goes: drop this process's mappings and fds of
 * files inside @dir. Only read(), write(), open(), close(), munmap() and
 * readlink(): usable from the signal handler.
 */
static void release_files(const char *dir)
{
	char buf[8192], line[512], link[512], path[64];
	size_t dlen = strlen(dir), n = 0;
	unsigned long start, end;
	ssize_t r;
	int fd, i;

	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		r = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[r > 0 ? r : 0] = '\0';
		for (char *p = buf, *q; *p; p = q + 1) {
			q = strchr(p, '\n');
			if (!q)
				break;
			n = (size_t)(q - p) < sizeof(line) ? (size_t)(q - p) : sizeof(line) - 1;
			memcpy(line, p, n);
			line[n] = '\0';
			if (strstr(line, dir) && sscanf(line, "%lx-%lx", &start, &end) == 2)
				munmap((void *)start, end - start);
		}
	}
	for (i = 3; i < 1024; i++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", i);
		r = readlink(path, link, sizeof(link) - 1);
		if (r <= 0)
			continue;
		link[r] = '\0';
		if (!strncmp(link, dir, dlen) && link[dlen] == '/')
			close(i);
	}
}

static void remove_slot(int i)
{
	const struct timespec ts = { .tv_nsec = 20000000 };
	int n;

	/* rmdir is EBUSY while a reader still holds a file or mapping: ours go, others get 2 s */
	if (rmdir(instances[i]) && errno == EBUSY)
		release_files(instances[i]);
	for (n = 0; n < 100 && rmdir(instances[i]) && errno == EBUSY; n++)
		nanosleep(&ts, NULL);
	instances[i][0] = '\0';
}

static void cleanup_all(void)
{
	int i;

	for (i = 0; i < TI_MAX_INSTANCES; i++)
		if (instances[i][0])
			remove_slot(i);
}

static void cleanup_signal(int sig)
{
	int e = errno;

	if (signal_hook)
		signal_hook();
	cleanup_all();
	signal(sig, SIG_DFL);
	raise(sig);
	errno = e;
}

void ti_on_signal(void (*fn)(void))
{
	signal_hook = fn;
}

static void install_cleanup(void)
{
	static int installed;

	if (installed)
		return;
	installed = 1;
	atexit(cleanup_all);
	signal(SIGINT, cleanup_signal);
	signal(SIGTERM, cleanup_signal);
	signal(SIGHUP, cleanup_signal);
}

void ti_remove_on_signal(int sig)
{
	install_cleanup();
	signal(sig, cleanup_signal);
}

int ti_instance_write(const char *name, const char *file, const char *val)
{
	size_t len = strlen(val);
	char path[512];
	ssize_t n;
	int fd, e;

	ti_path(path, sizeof(path), name, file);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	e = errno;
	close(fd);
	if (n != (ssize_t)len) {
		errno = n < 0 ? e : EIO;
		return -errno;
	}
	return 0;
}

char *ti_instance_read(const char *name, const char *file)
{
	size_t cap = 4096, len = 0;
	char path[512], *buf, *nb;
	ssize_t n;
	int fd, e = 0;

	ti_path(path, sizeof(path), name, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(cap);
	while (buf) {
		if (len + 1 >= cap) {
			nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0) {
			e = errno;
			free(buf);
			buf = NULL;
			break;
		}
		if (!n)
			break;
		len += n;
	}
	if (!buf && !e)
		e = ENOMEM;
	close(fd);
	if (!buf) {
		errno = e;
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

const char *ti_instance_create(const char *tag, int buffer_kb, int subbuf_kb)
{
	static unsigned int seq;
	const struct {
		const char *file;
		int kb;
	} set[] = { { "buffer_subbuf_size_kb", subbuf_kb }, { "buffer_size_kb", buffer_kb } };
	const char *name;
	char val[32], *cur;
	size_t k;
	int i, ret;
	bool same;

	if (!ti_tracefs()) {
		fprintf(stderr, "tracefs is not mounted or not writable: run as root and "
			"'mount -t tracefs nodev /sys/kernel/tracing'\n");
		errno = ENOENT;
		return NULL;
	}
	install_cleanup();
	for (i = 0; i < TI_MAX_INSTANCES && instances[i][0]; i++)
		;
	if (i == TI_MAX_INSTANCES) {
		fprintf(stderr, "cannot create instance: already %d of this program; remove "
			"one first\n", TI_MAX_INSTANCES);
		errno = EMFILE;
		return NULL;
	}
	snprintf(instances[i], sizeof(instances[i]), "%s/instances/tmtest-%s-%d-%u", tracefs_dir,
		 tag, (int)getpid(), seq++);
	name = instances[i] + name_off;
	if (mkdir(instances[i], 0755)) {
		ret = errno;
		fprintf(stderr, "cannot create instance %s: %s\n", instances[i], strerror(ret));
		instances[i][0] = '\0';
		errno = ret;
		return NULL;
	}
	/* the sub-buffer size first, then the buffer size in those sub-buffers */
	for (k = 0; k < sizeof(set) / sizeof(set[0]); k++) {
		if (set[k].kb <= 0)
			continue;
		snprintf(val, sizeof(val), "%d", set[k].kb);
		/* a value already there is not written: some kernels refuse the write */
		cur = ti_instance_read(name, set[k].file);
		same = cur && atoi(cur) == set[k].kb;
		free(cur);
		if (same)
			continue;
		ret = ti_instance_write(name, set[k].file, val);
		/* before Linux 6.8 every sub-buffer is one 4 KiB page, without the file */
		if (ret == -ENOENT && k == 0 && set[k].kb == 4)
			ret = 0;
		if (ret)
			goto fail;
	}
	return name;
fail:
	if (ret == -EPERM && k == 0)
		fprintf(stderr, "this kernel refuses to change buffer_subbuf_size_kb (EPERM): "
			"no %d KiB sub-buffers\n", set[k].kb);
	else
		fprintf(stderr, "cannot set %s of %s to %s: %s\n", set[k].file, instances[i],
			val, strerror(-ret));
	remove_slot(i);
	errno = -ret;
	return NULL;
}

void ti_instance_remove(const char *name)
{
	int i;

	for (i = 0; i < TI_MAX_INSTANCES; i++)
		if (instances[i][0] && !strcmp(instances[i] + name_off, name))
			remove_slot(i);
}
