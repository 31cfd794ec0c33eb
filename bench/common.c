// SPDX-License-Identifier: GPL-2.0-only
/*
 * Shared pieces of the benchmark programs (see bench.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

const char *bn_tracefs(void)
{
	const char *dir = ti_tracefs();

	if (!dir) {
		fprintf(stderr, "tracefs is not mounted or not writable: run as root and "
			"'mount -t tracefs nodev /sys/kernel/tracing'\n");
		exit(1);
	}
	return dir;
}

const char *bn_instance_create(int buffer_kb)
{
	bn_tracefs();
	return ti_instance_create("bn", buffer_kb, 0);
}

int bn_instance_read(const char *name, const char *file, char *buf, size_t size)
{
	char *txt = ti_instance_read(name, file);
	int n;

	if (!txt)
		return -errno;
	n = snprintf(buf, size, "%s", txt);
	free(txt);
	return n < (int)size ? n : (int)size - 1;
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

	/* tm-load on its own has not looked for tracefs yet */
	bn_tracefs();
	ti_path(path, sizeof(path), instance, "trace_marker_raw");
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

void bn_seq_grow(struct bn_seq *s, uint64_t seq)
{
	size_t w = seq / 64, n = s->nbits ? s->nbits : 1024;
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
