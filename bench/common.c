// SPDX-License-Identifier: LGPL-2.1
/*
 * Shared pieces of the benchmark programs (see bench.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"

#define MAX_INSTANCES	4

static char instances[MAX_INSTANCES][80];
static char tracefs_dir[64];

const char *bn_tracefs(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[128];
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
	fprintf(stderr, "tracefs is not mounted or not writable: run as root and "
		"'mount -t tracefs nodev /sys/kernel/tracing'\n");
	exit(1);
}

void bn_instance_path(char *buf, size_t size, const char *name, const char *file)
{
	snprintf(buf, size, "%s/instances/%s/%s", bn_tracefs(), name, file);
}

static void remove_dir(const char *name)
{
	char path[256];
	int i;

	snprintf(path, sizeof(path), "%s/instances/%s", tracefs_dir, name);
	/* EBUSY while a reader still holds a file or mapping: give it 2 s */
	for (i = 0; i < 100 && rmdir(path) && errno == EBUSY; i++)
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

static void (*signal_hook)(void);

void bn_on_signal(void (*fn)(void))
{
	signal_hook = fn;
}

static void cleanup_signal(int sig)
{
	if (signal_hook)
		signal_hook();
	cleanup_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

const char *bn_instance_create(int buffer_kb)
{
	static unsigned int seq;
	static bool installed;
	char path[256], val[32];
	int i;

	bn_tracefs();
	if (!installed) {
		atexit(cleanup_all);
		signal(SIGINT, cleanup_signal);
		signal(SIGTERM, cleanup_signal);
		signal(SIGHUP, cleanup_signal);
		installed = true;
	}
	for (i = 0; i < MAX_INSTANCES && instances[i][0]; i++)
		;
	if (i == MAX_INSTANCES)
		return NULL;
	snprintf(instances[i], sizeof(instances[i]), "tmtest-bn-%d-%u", (int)getpid(), seq++);
	snprintf(path, sizeof(path), "%s/instances/%s", tracefs_dir, instances[i]);
	if (mkdir(path, 0755)) {
		fprintf(stderr, "cannot create instance %s: %s\n", path, strerror(errno));
		instances[i][0] = '\0';
		return NULL;
	}
	if (buffer_kb > 0) {
		snprintf(val, sizeof(val), "%d", buffer_kb);
		if (bn_instance_write(instances[i], "buffer_size_kb", val)) {
			fprintf(stderr, "cannot set buffer_size_kb of %s: %s\n", path,
				strerror(errno));
			remove_dir(instances[i]);
			instances[i][0] = '\0';
			return NULL;
		}
	}
	return instances[i];
}

void bn_instance_remove(const char *name)
{
	int i;

	for (i = 0; i < MAX_INSTANCES; i++) {
		if (instances[i][0] && !strcmp(instances[i], name)) {
			remove_dir(instances[i]);
			instances[i][0] = '\0';
		}
	}
}

int bn_instance_write(const char *name, const char *file, const char *val)
{
	char path[256];
	ssize_t n;
	int fd, e;

	bn_instance_path(path, sizeof(path), name, file);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	e = errno;
	close(fd);
	if (n != (ssize_t)strlen(val)) {
		errno = n < 0 ? e : EIO;
		return -errno;
	}
	return 0;
}

int bn_instance_read(const char *name, const char *file, char *buf, size_t size)
{
	char path[256];
	ssize_t n;
	int fd, e;

	bn_instance_path(path, sizeof(path), name, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	e = errno;
	close(fd);
	if (n < 0)
		return -e;
	buf[n] = '\0';
	return n;
}

long long bn_cpu_stat(const char *name, int cpu, const char *key)
{
	char file[64], buf[1024];
	const char *p;
	size_t kl = strlen(key);

	snprintf(file, sizeof(file), "per_cpu/cpu%d/stats", cpu);
	if (bn_instance_read(name, file, buf, sizeof(buf)) < 0)
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, key, kl) && p[kl] == ':')
			return strtoll(p + kl + 1, NULL, 10);
	}
	return -1;
}

int bn_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

int bn_nr_cpus(void)
{
	return (int)sysconf(_SC_NPROCESSORS_CONF);
}

int bn_load_open(const char *instance)
{
	char path[256];
	int fd;

	bn_instance_path(path, sizeof(path), instance, "trace_marker_raw");
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
	return fd;
}

/*
 * Paced by spinning on CLOCK_MONOTONIC: event i is due at t0 + i / rate.
 * A writer that fell behind (preempted) catches up without sleeping, so
 * the offered count over the run stays rate * duration when the CPU allows.
 */
void bn_load_run(struct bn_load *l)
{
	struct bn_marker m = { .tag = l->tag };
	uint64_t t0, end, now, i = 0;

	l->written = l->failed = 0;
	l->first_errno = 0;
	t0 = bn_now();
	end = t0 + l->duration_ns;
	for (;;) {
		now = bn_now();
		if (now >= end)
			break;
		if (l->rate && now < t0 + i * 1000000000ull / l->rate)
			continue;
		m.seq = (uint32_t)i;
		m.mono_ns = now;
		if (write(l->fd, &m, sizeof(m)) == (ssize_t)sizeof(m)) {
			i++;
		} else {
			if (!l->first_errno)
				l->first_errno = errno;
			l->failed++;
		}
	}
	l->written = i;
	l->elapsed_ns = bn_now() - t0;
}

void bn_seq_init(struct bn_seq *s)
{
	memset(s, 0, sizeof(*s));
}

void bn_seq_add(struct bn_seq *s, uint64_t seq)
{
	size_t w = seq / 64;

	if (w >= s->nbits) {
		size_t n = s->nbits ? s->nbits : 1024;
		uint64_t *b;

		while (n <= w)
			n *= 2;
		b = realloc(s->bits, n * sizeof(*b));
		if (!b) {
			fprintf(stderr, "out of memory\n");
			exit(1);
		}
		memset(b + s->nbits, 0, (n - s->nbits) * sizeof(*b));
		s->bits = b;
		s->nbits = n;
	}
	s->delivered++;
	if (s->bits[w] & (1ull << (seq % 64))) {
		s->dups++;
		return;
	}
	s->bits[w] |= 1ull << (seq % 64);
	if (seq + 1 < s->max_seen)
		s->late++;
	else
		s->max_seen = seq + 1;
}

uint64_t bn_seq_missing(const struct bn_seq *s, uint64_t written)
{
	uint64_t seen = 0, i;

	for (i = 0; i < written; i++) {
		if (i / 64 >= s->nbits)
			break;
		if (s->bits[i / 64] & (1ull << (i % 64)))
			seen++;
	}
	return written - seen;
}

void bn_seq_free(struct bn_seq *s)
{
	free(s->bits);
	memset(s, 0, sizeof(*s));
}

uint64_t bn_lat_pct(const struct bn_lat *l, double pct)
{
	uint64_t rank, seen = 0;
	int i;

	if (!l->n)
		return 0;
	if (pct >= 100)
		return l->max;
	rank = (uint64_t)(pct / 100.0 * (double)l->n);
	for (i = 0; i < BN_LAT_FINE; i++) {
		seen += l->fine[i];
		if (seen > rank)
			return (i + 1) * 100ull;
	}
	for (i = 0; i < BN_LAT_COARSE; i++) {
		seen += l->coarse[i];
		if (seen > rank)
			return (i + 1) * 10000ull;
	}
	return l->max;
}
