// SPDX-License-Identifier: GPL-2.0-only
/*
 * tm-merge: the ordered merge of the library stream over two synthetic
 * per-CPU rings in memory (tests/sbuf-encode.h), no kernel, no clock: a
 * deterministic run whose instruction count (valgrind --tool=callgrind,
 * bench/merge-callgrind.sh) says what the merge costs per event.
 *
 *   tm-merge [-s scenario] [-n events] [-b batch] [-m stream|walk]
 *
 * Scenarios (how the events, sequence numbers 0..n-1 in time order, fall
 * on the two CPUs):
 *   idle    all on CPU 0, CPU 1 idle (what make bench's marker writer does)
 *   lead    runs of 145 (a 4 KiB page of them) on one CPU, then the other
 *   fine    every other event on the other CPU
 *   equal   pairs with the same time stamp, CPU 0's first
 *   bursts  runs of 1, 2, 3, 5, 8, 1, 1, 13 events (as tests/kernel/test-stream.c)
 *
 * The writer writes @batch events (default 37,000: half of a 1 MiB buffer of
 * them, where a watermark-50 stream is woken), then the reader drains them;
 * only the draining is measured (run_stream(), run_walk()).
 *
 * -m stream  tracemap_stream_consume() until it delivers nothing: the merge
 * -m walk    no library reader, no merge: GET_READER until nothing is new
 *            (as make bench's floor), each CPU in turn, and the new bytes
 *            walked with tm_walk_next(): what any consumer of the mapping
 *            that delivers events does at least
 *
 * The callback checks each event's sequence number (in time order for the
 * stream, per CPU for the walk) and the run fails on a mismatch or a count
 * other than n. The result line ends with the draining's wall-clock time
 * per event (drain_ns_per_event): a quick look at the merge's speed on
 * this machine beside callgrind's exact count.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sbuf-encode.h"
#include "tracemap-local.h"

#define SBS		4096
/* a trace_marker_raw event of make bench: struct trace_entry, then seq, tag, time */
#define PAYLOAD		24
#define SEQ_OFF		8
#define TICK		100	/* ns between events */

struct check {
	uint64_t next[2];	/* the sequence number due (walk: per CPU; stream: next[0]) */
	uint64_t delivered;
	bool per_cpu;
	bool bad;
};

static const char *scenario = "idle";

/* The CPU of event @seq and its time stamp. */
static int place(uint64_t seq, uint64_t *ts)
{
	static const unsigned int bursts[] = { 1, 2, 3, 5, 8, 1, 1, 13 };
	static uint64_t burst_end, burst_cpu, burst_i;

	*ts = 1000000 + seq * TICK;
	if (!strcmp(scenario, "idle"))
		return 0;
	if (!strcmp(scenario, "lead"))
		return (seq / 145) & 1;
	if (!strcmp(scenario, "fine"))
		return seq & 1;
	if (!strcmp(scenario, "equal")) {
		*ts = 1000000 + seq / 2 * TICK;
		return seq & 1;
	}
	/* bursts: called with seq 0, 1, 2, ... in order */
	if (seq >= burst_end) {
		burst_cpu = seq ? !burst_cpu : 0;
		burst_end = seq + bursts[burst_i++ % 8];
	}
	return (int)burst_cpu;
}

static int write_events(struct sbe_ring *rings, uint64_t from, uint64_t to, uint64_t *ncpu)
{
	uint64_t full;

	if (sbe_rings_write(rings, place, from, to, PAYLOAD, SEQ_OFF, ncpu, &full)) {
		fprintf(stderr, "tm-merge: a ring is full at event %llu\n", (unsigned long long)full);
		return -1;
	}
	return 0;
}

static inline void check(struct check *k, int cpu, const unsigned char *data, unsigned int size)
{
	uint64_t *next = &k->next[k->per_cpu ? cpu : 0];
	uint32_t seq;

	memcpy(&seq, data + SEQ_OFF, sizeof(seq));
	/* time order is sequence order: exactly the next one, or per CPU a later one */
	if (size < PAYLOAD || (k->per_cpu ? seq < *next : seq != *next)) {
		if (!k->bad)
			fprintf(stderr, "tm-merge: cpu%d: event %u where %llu was due\n", cpu, seq,
				(unsigned long long)*next);
		k->bad = true;
	}
	*next = seq + 1;
	k->delivered++;
}

static int on_event(void *ctx, const struct tracemap_event *ev)
{
	check(ctx, ev->cpu, ev->data, ev->size);
	return 0;
}

/* Measured: the stream drains what was written. */
static __attribute__((noinline)) int run_stream(struct tracemap_stream *s)
{
	int ret, n = 0;

	while ((ret = tracemap_stream_consume(s)) > 0)
		n += ret;
	return ret < 0 ? ret : n;
}

/* walk: where each CPU's reader stands, as the floor of make bench keeps it */
struct floor {
	unsigned int id;
	unsigned int read;
	struct tm_walk w;
};

/*
 * Measured: GET_READER until nothing is new, as make bench's floor does,
 * and each new byte range walked with the library's record walker: what any
 * consumer of the mapping that delivers events does at least.
 */
static __attribute__((noinline)) int run_walk(struct sbe_ring *rings, struct floor *f,
					      struct check *k)
{
	const struct trace_buffer_meta *m;
	struct tm_rec rec;
	unsigned int id;
	int cpu;

	for (cpu = 0; cpu < 2; cpu++) {
		m = rings[cpu].meta;
		for (;;) {
			sbe_ring_get_reader(&rings[cpu]);
			id = m->reader.id;
			if (id == f[cpu].id && m->reader.read == f[cpu].read)
				break;
			if (id != f[cpu].id) {
				f[cpu].w.data = rings[cpu].subbufs + (size_t)id * SBS + TM_SUBBUF_HDR;
				f[cpu].w.off = 0;
				memcpy(&f[cpu].w.ts, f[cpu].w.data - TM_SUBBUF_HDR, 8);
			}
			f[cpu].id = id;
			f[cpu].read = m->reader.read;
			f[cpu].w.end = m->reader.read;
			while (tm_walk_next(&f[cpu].w, &rec) > 0)
				check(k, cpu, rec.payload, rec.size);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct tracemap_stream_opts o = { .sz = sizeof(o), .on_event = on_event };
	uint64_t n = 400000, batch = 37000, ncpu[2] = { 0, 0 }, done, drain_ns = 0;
	struct timespec t0, t1;
	struct tracemap_stream *s = NULL;
	struct floor f[2] = { { 0 }, { 0 } };
	struct tracemap_cpu *c[2];
	struct sbe_ring rings[2];
	const char *mode = "stream";
	struct check k = { 0 };
	unsigned int nr;
	int opt, i, ret = 0;

	while ((opt = getopt(argc, argv, "s:n:b:m:")) != -1) {
		switch (opt) {
		case 's': scenario = optarg; break;
		case 'n': n = strtoull(optarg, NULL, 0); break;
		case 'b': batch = strtoull(optarg, NULL, 0); break;
		case 'm': mode = optarg; break;
		default:
			fprintf(stderr, "usage: tm-merge [-s idle|lead|fine|equal|bursts] [-n events] "
				"[-b batch] [-m stream|walk]\n");
			return 1;
		}
	}
	if (strcmp(scenario, "idle") && strcmp(scenario, "lead") && strcmp(scenario, "fine") &&
	    strcmp(scenario, "equal") && strcmp(scenario, "bursts")) {
		fprintf(stderr, "tm-merge: unknown scenario '%s': idle, lead, fine, equal or bursts\n",
			scenario);
		return 1;
	}
	if (strcmp(mode, "stream") && strcmp(mode, "walk")) {
		fprintf(stderr, "tm-merge: unknown mode '%s': stream or walk\n", mode);
		return 1;
	}
	if (!batch || !n) {
		fprintf(stderr, "tm-merge: -n and -b must be above 0\n");
		return 1;
	}
	/* every event could go to one CPU: 145 of them per page, and a page to spare */
	nr = (unsigned int)(n / 145 + 2);
	for (i = 0; i < 2; i++) {
		if (sbe_ring_init(&rings[i], SBS, nr)) {
			fprintf(stderr, "tm-merge: out of memory for %u sub-buffers\n", nr);
			return 1;
		}
		c[i] = tm_cpu_open_memory(i, TRACEMAP_MODE_CONSUME, rings[i].meta,
					  rings[i].subbufs, SBS, nr, sbe_ring_get_reader, &rings[i]);
		if (!c[i]) {
			fprintf(stderr, "tm-merge: tm_cpu_open_memory: %s\n", strerror(errno));
			return 1;
		}
	}
	k.per_cpu = !strcmp(mode, "walk");
	o.ctx = &k;
	if (!k.per_cpu) {
		s = tm_stream_open_readers(c, 2, &o);
		if (!s) {
			fprintf(stderr, "tm-merge: tm_stream_open_readers: %s\n", strerror(errno));
			return 1;
		}
	}
	for (done = 0; done < n && ret >= 0; done += batch) {
		if (write_events(rings, done, done + batch < n ? done + batch : n, ncpu))
			return 1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		ret = s ? run_stream(s) : run_walk(rings, f, &k);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		drain_ns += (t1.tv_sec - t0.tv_sec) * 1000000000ull + t1.tv_nsec - t0.tv_nsec;
		if (ret < 0)
			fprintf(stderr, "tm-merge: %s\n", strerror(-ret));
	}
	printf("scenario=%s mode=%s events=%llu cpu0=%llu cpu1=%llu delivered=%llu drain_ns_per_event=%.2f\n",
	       scenario, mode, (unsigned long long)n, (unsigned long long)ncpu[0],
	       (unsigned long long)ncpu[1], (unsigned long long)k.delivered, (double)drain_ns / n);
	if (s)
		tracemap_stream_close(s);
	else
		for (i = 0; i < 2; i++)
			tracemap_cpu_close(c[i]);
	for (i = 0; i < 2; i++)
		sbe_ring_free(&rings[i]);
	return ret < 0 || k.bad || k.delivered != n;
}
