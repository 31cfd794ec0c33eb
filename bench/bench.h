/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared pieces of the benchmark programs: the marker payload, the paced
 * load generator, private instances (tests/tracefs-instance.h), CPU pinning, sequence accounting.
 * Not part of the library; see bench/README.md.
 */
#ifndef _TRACEMAP_BENCH_H
#define _TRACEMAP_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "tracefs-instance.h"

/*
 * What the load generator writes to trace_marker_raw. The kernel stores the
 * first u32 as the event's "id" field, which trace-cmd and tracemap print as
 * "id:%04x", so the sequence number is visible in decoded text too. The tag
 * tells this run's markers from anything else; mono_ns is CLOCK_MONOTONIC
 * just before the write() (the instance keeps its default "local" trace
 * clock, so latency is measured against this value, not the event time).
 */
struct bn_marker {
	uint32_t seq;
	uint32_t tag;
	uint64_t mono_ns;
} __attribute__((packed));

/* ftrace:raw_data payload: struct trace_entry (8 bytes), then the bytes above */
#define BN_RAW_OFF	8
#define BN_RAW_SIZE	(BN_RAW_OFF + sizeof(struct bn_marker))

static inline uint64_t bn_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* tracefs mount point; exits with a message when it is not mounted */
const char *bn_tracefs(void);

/*
 * Create the private instance "tmtest-bn-<pid>-<n>" with @buffer_kb per CPU
 * (exits when tracefs is not mounted); see ti_instance_create(). Remove it
 * with ti_instance_remove(); ti_on_signal() runs a function before a signal
 * removes it. Returns the name or NULL with a message.
 */
const char *bn_instance_create(int buffer_kb);
/* Read a file of the instance into @buf (truncated to fit); bytes read or -errno */
int bn_instance_read(const char *name, const char *file, char *buf, size_t size);
/* A "name: value" line of per_cpu/cpuN/stats, or -1 */
long long bn_cpu_stat(const char *name, int cpu, const char *key);

int bn_pin(int cpu);
int bn_nr_cpus(void);

/* The paced writer: one trace_marker_raw write per event. */
struct bn_load {
	int fd;				/* trace_marker_raw of the instance */
	uint32_t tag;
	uint64_t rate;			/* events/s; 0: as fast as possible */
	uint64_t duration_ns;
	/* results */
	uint64_t written;		/* successful writes = seqs 0..written-1 */
	uint64_t failed;		/* failed writes (tracing off, buffer full) */
	int first_errno;
	uint64_t elapsed_ns;
};

int bn_load_open(const char *instance);
void bn_load_run(struct bn_load *l);

/* Sequence accounting for consumers that see every marker. */
struct bn_seq {
	uint64_t delivered;		/* markers of this run seen */
	uint64_t dups;			/* seen again */
	uint64_t late;			/* seq below the highest seen (out of order) */
	uint64_t other;			/* events that are not this run's markers */
	uint64_t max_seen;		/* highest seq + 1 */
	uint64_t *bits;
	size_t nbits;
};

void bn_seq_init(struct bn_seq *s);
/* the bitmap grown to hold @seq */
void bn_seq_grow(struct bn_seq *s, uint64_t seq);

/* Marker @seq seen: inline, its cost falls on every consumer measured. */
static inline void bn_seq_add(struct bn_seq *s, uint64_t seq)
{
	uint64_t bit = 1ull << (seq % 64), *w;

	if (__builtin_expect(seq / 64 >= s->nbits, 0))
		bn_seq_grow(s, seq);
	s->delivered++;
	w = &s->bits[seq / 64];
	if (__builtin_expect(*w & bit, 0)) {
		s->dups++;
		return;
	}
	*w |= bit;
	if (__builtin_expect(seq + 1 < s->max_seen, 0))
		s->late++;
	else
		s->max_seen = seq + 1;
}
/* markers of 0..@written-1 never seen */
uint64_t bn_seq_missing(const struct bn_seq *s, uint64_t written);
void bn_seq_free(struct bn_seq *s);

/*
 * Latency samples (ns) in a histogram, so that adding one costs a few
 * instructions and nothing is sorted inside the measured time: 100 ns
 * buckets up to 100 us, 10 us buckets up to 100 ms, then one overflow bucket.
 */
#define BN_LAT_FINE	1000
#define BN_LAT_COARSE	10000

struct bn_lat {
	uint64_t n;
	uint64_t max;
	uint32_t fine[BN_LAT_FINE];
	uint32_t coarse[BN_LAT_COARSE];
	uint32_t over;
};

static inline void bn_lat_add(struct bn_lat *l, uint64_t ns)
{
	if (ns < BN_LAT_FINE * 100ull)
		l->fine[ns / 100]++;
	else if (ns < BN_LAT_COARSE * 10000ull)
		l->coarse[ns / 10000]++;
	else
		l->over++;
	if (ns > l->max)
		l->max = ns;
	l->n++;
}

/* The upper edge of the bucket holding the @pct percentile (0..100); 0 when empty. */
uint64_t bn_lat_pct(const struct bn_lat *l, double pct);

#endif
