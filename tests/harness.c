// SPDX-License-Identifier: LGPL-2.1
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define MAX_INSTANCES	16

static char instances[MAX_INSTANCES][96];
static char tracefs_dir[256];
static int cleanup_installed;

const char *th_tracefs(void)
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
			return tracefs_dir;
		}
	}
	return NULL;
}

static void remove_dir(const char *name)
{
	char path[512];
	int i;

	snprintf(path, sizeof(path), "%s/instances/%s", tracefs_dir, name);
	/* rmdir is EBUSY while a reader still holds a file or mapping: retry */
	for (i = 0; i < 50 && rmdir(path) && errno == EBUSY; i++)
		usleep(20000);
}

static void cleanup_all(void)
{
	int i;

	for (i = 0; i < MAX_INSTANCES; i++) {
		if (instances[i][0]) {
			remove_dir(instances[i]);
			instances[i][0] = '\0';
		}
	}
}

static void on_signal(int sig)
{
	cleanup_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_cleanup(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGSEGV, SIGABRT, SIGBUS, SIGALRM };
	size_t i;

	if (cleanup_installed)
		return;
	cleanup_installed = 1;
	atexit(cleanup_all);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on_signal);
}

int th_instance_write(const char *name, const char *file, const char *val)
{
	char path[512];
	ssize_t n;
	int fd, e = 0;

	snprintf(path, sizeof(path), "%s/instances/%s/%s", tracefs_dir, name, file);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n < 0)
		e = -errno;
	close(fd);
	return e;
}

char *th_instance_read(const char *name, const char *file)
{
	size_t cap = 4096, len = 0;
	char path[512], *buf;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/instances/%s/%s", tracefs_dir, name, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(cap);
	while (buf) {
		if (len + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	if (buf)
		buf[len] = '\0';
	return buf;
}

const char *th_instance_create(const char *tag, int buffer_kb, int subbuf_kb)
{
	static unsigned int seq;
	char path[512], val[32];
	int i;

	if (!th_tracefs())
		return NULL;
	install_cleanup();
	for (i = 0; i < MAX_INSTANCES && instances[i][0]; i++)
		;
	if (i == MAX_INSTANCES)
		return NULL;
	snprintf(instances[i], sizeof(instances[i]), "tmtest-%s-%d-%u", tag, (int)getpid(), seq++);
	snprintf(path, sizeof(path), "%s/instances/%s", tracefs_dir, instances[i]);
	if (mkdir(path, 0755)) {
		instances[i][0] = '\0';
		return NULL;
	}
	if (subbuf_kb > 0) {
		snprintf(val, sizeof(val), "%d", subbuf_kb);
		if (th_instance_write(instances[i], "buffer_subbuf_size_kb", val))
			goto fail;
	}
	if (buffer_kb > 0) {
		snprintf(val, sizeof(val), "%d", buffer_kb);
		if (th_instance_write(instances[i], "buffer_size_kb", val))
			goto fail;
	}
	return instances[i];
fail:
	remove_dir(instances[i]);
	instances[i][0] = '\0';
	return NULL;
}

void th_instance_remove(const char *name)
{
	int i;

	for (i = 0; i < MAX_INSTANCES; i++) {
		if (instances[i][0] && !strcmp(instances[i], name)) {
			remove_dir(instances[i]);
			instances[i][0] = '\0';
		}
	}
}

void th_require_mmap(void)
{
	const char *inst;
	char path[512];
	void *p;
	int fd;

	if (!th_tracefs()) {
		printf("SKIP: tracefs is not mounted or not writable (run as root; "
		       "mount -t tracefs nodev /sys/kernel/tracing)\n");
		exit(TEST_SKIP);
	}
	inst = th_instance_create("probe", 0, 0);
	if (!inst) {
		printf("SKIP: cannot create a tracefs instance\n");
		exit(TEST_SKIP);
	}
	snprintf(path, sizeof(path), "%s/instances/%s/per_cpu/cpu0/trace_pipe_raw", tracefs_dir,
		 inst);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	p = fd < 0 ? MAP_FAILED : mmap(NULL, getpagesize(), PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		printf("SKIP: this kernel cannot map trace_pipe_raw (%s): Linux 6.10 or later "
		       "is needed\n", strerror(errno));
		if (fd >= 0)
			close(fd);
		th_instance_remove(inst);
		exit(TEST_SKIP);
	}
	munmap(p, getpagesize());
	close(fd);
	th_instance_remove(inst);
}

void th_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

int th_marker_open(const char *name, int raw)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/instances/%s/%s", tracefs_dir, name,
		 raw ? "trace_marker_raw" : "trace_marker");
	return open(path, O_WRONLY | O_CLOEXEC);
}

int th_write_markers(int fd, unsigned int first, unsigned int count)
{
	char buf[64];
	unsigned int i;
	int len;

	for (i = 0; i < count; i++) {
		len = snprintf(buf, sizeof(buf), "seq=%u cpu=%d", first + i, sched_getcpu());
		if (write(fd, buf, len) != len)
			return -errno;
	}
	return 0;
}

long th_marker_seq(const void *payload, unsigned int size)
{
	/* ftrace:print: 8 bytes common fields, 8 bytes ip, then the string */
	const char *s = (const char *)payload + 16;
	char buf[64];
	unsigned int n;
	long v;

	if (size <= 16)
		return -1;
	n = size - 16 < sizeof(buf) - 1 ? size - 16 : sizeof(buf) - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (sscanf(buf, "seq=%ld", &v) != 1)
		return -1;
	return v;
}
