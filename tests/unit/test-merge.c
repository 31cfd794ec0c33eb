// SPDX-License-Identifier: GPL-2.0-only
/*
 * The stream's ordered merge over two (to four) synthetic CPU rings in memory
 * (sbe_ring, GET_READER emulated; no kernel): events with sequence numbers
 * in time order are placed on the CPUs in patterns from one CPU running
 * ahead for pages to every other event on the other CPU, and time stamps
 * shared by both CPUs. Whatever the pattern, every event is delivered
 * exactly once, in time order (sequence order), with nothing counted late,
 * the readers' delivered counts match the callback's after every round, a
 * callback that stops the stream mid-run loses and repeats nothing, and the
 * pull model gives the same order. The writer adds to the page the reader
 * is on between rounds, as a live writer does.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "sbuf-encode.h"
#include "tracemap-local.h"

#define SBS		4096
#define PAYLOAD		16
#define TICK		100
#define MAX_CPUS	4

static int place_fine(uint64_t seq, uint64_t *ts)
{
	*ts = 1000 + seq * TICK;
	return seq & 1;
}

/* pairs with the same time stamp: CPU 0's first, as the merge breaks ties */
static int place_equal(uint64_t seq, uint64_t *ts)
{
	*ts = 1000 + seq / 2 * TICK;
	return seq & 1;
}

/* all on CPU 1, CPU 0 idle */
static int place_idle(uint64_t seq, uint64_t *ts)
{
	*ts = 1000 + seq * TICK;
	return 1;
}

/* runs of one CPU from one event to several pages, cut by the other's */
static int place_runs(uint64_t seq, uint64_t *ts)
{
	static const unsigned int runs[] = { 1, 1, 1, 300, 1, 2, 97, 1, 1, 500, 3, 1, 64, 1, 1000,
					     1, 2, 2, 3 };
	uint64_t end = 0;
	unsigned int i = 0;

	*ts = 1000 + seq * TICK;
	/* the run @seq falls in: the pattern repeats every sum(runs) events */
	for (;;) {
		end += runs[i % (sizeof(runs) / sizeof(runs[0]))];
		if (seq < end)
			return i & 1;
		i++;
	}
}

/*
 * Runs of two events; where CPU 0 hands over to CPU 1 both events have the
 * same time stamp (CPU 0's first, as the merge breaks ties).
 */
static int place_pairs_tied(uint64_t seq, uint64_t *ts)
{
	*ts = 1000 + (seq - (seq + 2) / 4) * TICK;
	return (seq / 2) & 1;
}

/* three CPUs in turn */
static int place_three(uint64_t seq, uint64_t *ts)
{
	*ts = 1000 + seq * TICK;
	return seq % 3;
}

/* CPUs 0 and 1 in turn, CPU 2 for one event in 500 */
static int place_third_sparse(uint64_t seq, uint64_t *ts)
{
	*ts = 1000 + seq * TICK;
	return seq % 500 == 499 ? 2 : seq & 1;
}

/* CPUs 0 to 2 in runs of 1 to 3 (from the sequence number's bits), CPU 3 for one in 97 */
static int place_four_mixed(uint64_t seq, uint64_t *ts)
{
	uint64_t h = seq * 0x9e3779b97f4a7c15ULL;

	*ts = 1000 + seq * TICK;
	if (seq % 97 == 96)
		return 3;
	return (int)((seq / (1 + (h >> 62) % 3)) % 3);
}

struct merge {
	struct sbe_ring rings[MAX_CPUS];
	struct tracemap_cpu *c[MAX_CPUS];
	int nr;				/* CPUs in the stream */
	struct tracemap_stream *s;
	uint64_t next;			/* sequence number due */
	uint64_t per_cpu[MAX_CPUS];	/* delivered per CPU */
	uint64_t last_ts;
	unsigned int stop_every;	/* the callback stops the stream every N events */
	unsigned int calls;
	uint64_t returned;		/* what tracemap_stream_consume() said it delivered */
	/* live writer: each GET_READER first writes @live more events of @place */
	unsigned int live;
	sbe_place_fn place;
	uint64_t written, total;
};

static struct merge m;

static uint32_t seq_of(const struct tracemap_event *ev)
{
	uint32_t seq;

	assert_int_equal(ev->size, PAYLOAD);
	memcpy(&seq, ev->data, sizeof(seq));
	return seq;
}

static void got(const struct tracemap_event *ev)
{
	uint32_t seq = seq_of(ev);

	if (seq != m.next || ev->ts < m.last_ts || ev->cpu < 0 || ev->cpu >= m.nr)
		fail_msg("event %u (cpu %d, ts %llu) where %llu was due (last ts %llu)", seq,
			 ev->cpu, (unsigned long long)ev->ts, (unsigned long long)m.next,
			 (unsigned long long)m.last_ts);
	m.next++;
	m.last_ts = ev->ts;
	m.per_cpu[ev->cpu]++;
}

static int on_event(void *ctx, const struct tracemap_event *ev)
{
	got(ev);
	return m.stop_every && ++m.calls % m.stop_every == 0 ? -1 : 0;
}

static void write_events(sbe_place_fn place, uint64_t from, uint64_t to);

/*
 * GET_READER while the writer runs: the events written before each call
 * are newer than every event handed out before it, which is what the merge
 * relies on when it finds a CPU empty.
 */
static int live_get_reader(void *ring)
{
	uint64_t to = m.written + m.live < m.total ? m.written + m.live : m.total;

	write_events(m.place, m.written, to);
	m.written = to;
	return sbe_ring_get_reader(ring);
}

static void open_merge(int nr, unsigned int nr_subbufs)
{
	struct tracemap_stream_opts o = { .sz = sizeof(o), .on_event = on_event };
	int i;

	memset(&m, 0, sizeof(m));
	m.nr = nr;
	for (i = 0; i < nr; i++) {
		assert_int_equal(sbe_ring_init(&m.rings[i], SBS, nr_subbufs), 0);
		m.c[i] = tm_cpu_open_memory(i, TRACEMAP_MODE_CONSUME, m.rings[i].meta,
					    m.rings[i].subbufs, SBS, nr_subbufs, live_get_reader,
					    &m.rings[i]);
		assert_non_null(m.c[i]);
	}
	m.s = tm_stream_open_readers(m.c, nr, &o);
	assert_non_null(m.s);
}

static void close_merge(void)
{
	int i;

	tracemap_stream_close(m.s);
	for (i = 0; i < m.nr; i++)
		sbe_ring_free(&m.rings[i]);
}

static void write_events(sbe_place_fn place, uint64_t from, uint64_t to)
{
	assert_int_equal(sbe_rings_write(m.rings, place, from, to, PAYLOAD, 0, NULL, NULL), 0);
}

/* The readers count as delivered exactly what the callback got, none late. */
static void assert_counts(void)
{
	struct tracemap_cpu_stats st;
	int i;

	for (i = 0; i < m.nr; i++) {
		assert_int_equal(tracemap_cpu_stats(m.c[i], &st, sizeof(st)), 0);
		assert_int_equal(st.events, m.per_cpu[i]);
		assert_int_equal(st.late, 0);
	}
}

/* Consume until a round delivers nothing (a stopped round counts as one that did). */
static void drain(void)
{
	unsigned int rounds = 0;
	int ret;

	do {
		ret = tracemap_stream_consume(m.s);
		assert_true(ret >= 0 || (m.stop_every && ret == -1));
		if (ret > 0)
			m.returned += ret;
		assert_counts();
		/* bounded: a round delivers at least a budget's worth or stops */
		assert_true(++rounds < 1000000);
	} while (ret != 0);
}

/*
 * @n events placed by @place on @nr CPUs, written in batches of @batch,
 * drained after each.
 */
static void run_on(int nr, sbe_place_fn place, uint64_t n, uint64_t batch,
		   unsigned int stop_every)
{
	uint64_t done;

	/* every event on one CPU, 4096 / 24 per page, and pages to spare */
	open_merge(nr, (unsigned int)(n / 150 + 4));
	m.stop_every = stop_every;
	for (done = 0; done < n; done += batch) {
		write_events(place, done, done + batch < n ? done + batch : n);
		drain();
	}
	assert_int_equal(m.next, n);
	/* a round the callback stopped returns its value, not a count */
	if (!stop_every)
		assert_int_equal(m.returned, n);
	assert_counts();
	close_merge();
}

static void run(sbe_place_fn place, uint64_t n, uint64_t batch, unsigned int stop_every)
{
	run_on(2, place, n, batch, stop_every);
}

static void test_fine(void **state)
{
	(void)state;
	run(place_fine, 20000, 20000, 0);
	/* the writer adds to the page the reader is on between rounds */
	run(place_fine, 20000, 997, 0);
}

static void test_equal(void **state)
{
	(void)state;
	run(place_equal, 20000, 20000, 0);
	run(place_equal, 20000, 1001, 0);
}

static void test_idle_cpu(void **state)
{
	(void)state;
	run(place_idle, 20000, 20000, 0);
	run(place_idle, 20000, 333, 0);
}

static void test_runs(void **state)
{
	(void)state;
	run(place_runs, 30000, 30000, 0);
	run(place_runs, 30000, 1777, 0);
	run(place_pairs_tied, 20000, 20000, 0);
}

/*
 * The writer goes on between the merge's calls into the readers (@live
 * events before each GET_READER), so that CPUs found empty get events
 * later, on two, three and four CPUs.
 */
static void live(int nr, sbe_place_fn place, uint64_t n, unsigned int every)
{
	unsigned int rounds = 0;
	int ret;

	open_merge(nr, (unsigned int)(n / 150 + 4));
	m.place = place;
	m.total = n;
	m.live = every;
	do {
		ret = tracemap_stream_consume(m.s);
		assert_true(ret >= 0);
		assert_counts();
		assert_true(++rounds < 10000000);
	} while (ret > 0 || m.written < n);
	assert_int_equal(m.next, n);
	close_merge();
}

static void test_live_writer(void **state)
{
	static const unsigned int every[] = { 1, 2, 3, 50, 400 };
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(every) / sizeof(every[0]); i++) {
		live(2, place_fine, 20000, every[i]);
		live(2, place_runs, 20000, every[i]);
		live(2, place_equal, 20000, every[i]);
		live(3, place_three, 20000, every[i]);
		live(3, place_third_sparse, 20000, every[i]);
		live(4, place_four_mixed, 20000, every[i]);
	}
}

/*
 * A third CPU: in turn with the others, idle, or now and then. A run hands
 * over to the next CPU only when the CPU without an event was found empty
 * after that CPU's event was fetched; else the merge looks at it first.
 */
static void test_three_cpus(void **state)
{
	(void)state;
	run_on(3, place_three, 30000, 30000, 0);
	run_on(3, place_three, 30000, 1234, 0);
	run_on(3, place_fine, 20000, 20000, 0);
	run_on(3, place_fine, 20000, 999, 0);
	run_on(3, place_third_sparse, 30000, 30000, 0);
	run_on(3, place_third_sparse, 30000, 777, 0);
	run_on(3, place_third_sparse, 30000, 777, 13);
}

/* A callback that stops the stream: the next round goes on where it stopped. */
static void test_stop(void **state)
{
	static const unsigned int every[] = { 1, 2, 7, 145, 1000 };
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(every) / sizeof(every[0]); i++) {
		run(place_runs, 12000, 12000, every[i]);
		run(place_fine, 6000, 500, every[i]);
		run(place_idle, 6000, 6000, every[i]);
	}
}

/* The pull model: the same order from tracemap_stream_next_event(). */
static void test_pull(void **state)
{
	static const sbe_place_fn places[] = { place_fine, place_equal, place_runs, place_idle };
	struct tracemap_event ev;
	unsigned int i;
	uint64_t n = 8000;
	int ret;

	(void)state;
	for (i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
		open_merge(2, (unsigned int)(n / 150 + 4));
		write_events(places[i], 0, n / 2);
		while ((ret = tracemap_stream_next_event(m.s, &ev, 0)) > 0)
			got(&ev);
		assert_int_equal(ret, 0);
		write_events(places[i], n / 2, n);
		while ((ret = tracemap_stream_next_event(m.s, &ev, 0)) > 0)
			got(&ev);
		assert_int_equal(ret, 0);
		assert_int_equal(m.next, n);
		assert_counts();
		close_merge();
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fine),
		cmocka_unit_test(test_equal),
		cmocka_unit_test(test_idle_cpu),
		cmocka_unit_test(test_runs),
		cmocka_unit_test(test_three_cpus),
		cmocka_unit_test(test_live_writer),
		cmocka_unit_test(test_stop),
		cmocka_unit_test(test_pull),
	};

	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
