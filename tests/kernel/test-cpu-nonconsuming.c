// SPDX-License-Identifier: LGPL-2.1
/*
 * Non-consuming per-CPU readers on the real tracefs. Snapshot: the events
 * equal what the kernel's own non-consuming iterator (per_cpu/cpuN/trace)
 * shows, without any GET_READER, repeatably, with pages a consuming reader
 * already took dropped. Follow: the buffer's content and then every new
 * event, exactly once and in order, with every gap reported, under a
 * concurrent writer on the other CPU, never consuming.
 *
 * timeout: 180
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <kbuffer.h>

#include "harness.h"
#include "tracemap.h"

#define TAG		"kc"
#define MAX_READERS	4
#define DRAIN_LIMIT	(1u << 22)

struct got {
	long *seq;
	long long *missed;
	unsigned int n;
	unsigned int cap;
};

struct writer {
	pthread_t thread;
	bool started;
	int fd;
	int cpu;
	unsigned int count;
	unsigned int rate;		/* events per second, 0: as fast as possible */
	unsigned int written;		/* atomic: events written so far */
	int error;			/* atomic: -errno of a failed write */
};

static struct {
	const char *inst;
	struct tracemap_cpu *rd[MAX_READERS];
	int marker;
	cpu_set_t saved;
	struct got g[3];
	struct writer w;
} fx = { .marker = -1 };

static unsigned int rec_size;

/* ------------------------------------------------------------- fixture */

static void got_free(struct got *g)
{
	free(g->seq);
	free(g->missed);
	memset(g, 0, sizeof(*g));
}

static void stop_writer(void)
{
	if (!fx.w.started)
		return;
	/* the writer's loop is bounded by its count: it ends by itself */
	pthread_join(fx.w.thread, NULL);
	fx.w.started = false;
	close(fx.w.fd);
}

static void drop_instance(void)
{
	int i;

	stop_writer();
	for (i = 0; i < MAX_READERS; i++) {
		tracemap_cpu_close(fx.rd[i]);
		fx.rd[i] = NULL;
	}
	if (fx.marker >= 0)
		close(fx.marker);
	fx.marker = -1;
	if (fx.inst)
		th_instance_remove(fx.inst);
	fx.inst = NULL;
	for (i = 0; i < 3; i++)
		got_free(&fx.g[i]);
}

static int teardown(void **state)
{
	drop_instance();
	sched_setaffinity(0, sizeof(fx.saved), &fx.saved);
	return 0;
}

static void new_instance(int buffer_kb, int subbuf_kb)
{
	drop_instance();
	fx.inst = th_instance_create(TAG, buffer_kb, subbuf_kb);
	assert_non_null(fx.inst);
	fx.marker = th_marker_open(fx.inst, 0);
	assert_true(fx.marker >= 0);
}

static struct tracemap_cpu *open_reader(int cpu, enum tracemap_mode mode)
{
	struct tracemap_cpu_opts o = { .sz = sizeof(o), .mode = mode };
	struct tracemap_cpu *c;
	int i;

	c = tracemap_cpu_open(fx.inst, cpu, &o);
	assert_non_null(c);
	assert_int_equal(tracemap_cpu_backend(c), TRACEMAP_BACKEND_MMAP);
	assert_int_equal(tracemap_cpu_mode(c), mode);
	for (i = 0; i < MAX_READERS && fx.rd[i]; i++)
		;
	assert_true(i < MAX_READERS);
	fx.rd[i] = c;
	return c;
}

static void close_reader(struct tracemap_cpu *c)
{
	int i;

	for (i = 0; i < MAX_READERS; i++)
		if (fx.rd[i] == c)
			fx.rd[i] = NULL;
	tracemap_cpu_close(c);
}

static int format_marker(char *buf, size_t size, unsigned int seq)
{
	return snprintf(buf, size, "seq=%08u cpu=%d", seq, sched_getcpu());
}

static void write_markers(unsigned int first, unsigned int count)
{
	char buf[64];
	unsigned int i;
	int len;

	for (i = 0; i < count; i++) {
		len = format_marker(buf, sizeof(buf), first + i);
		assert_int_equal(write(fx.marker, buf, len), len);
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Writer thread on its own CPU, paced by spinning on the clock. */
static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint64_t t0;
	unsigned int i;
	char buf[64];
	int len;

	th_pin(w->cpu);
	t0 = now_ns();
	/* count may be lowered to stop early */
	for (i = 0; i < __atomic_load_n(&w->count, __ATOMIC_RELAXED); i++) {
		if (w->rate)
			while (now_ns() - t0 < (uint64_t)i * 1000000000ull / w->rate)
				;
		len = format_marker(buf, sizeof(buf), i);
		if (write(w->fd, buf, len) != len) {
			__atomic_store_n(&w->error, -errno, __ATOMIC_RELEASE);
			break;
		}
		/* pairs with the acquire loads of the reader's waits */
		__atomic_store_n(&w->written, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void start_writer(int cpu, unsigned int count, unsigned int rate)
{
	fx.w = (struct writer){ .cpu = cpu, .count = count, .rate = rate };
	fx.w.fd = th_marker_open(fx.inst, 0);
	assert_true(fx.w.fd >= 0);
	assert_int_equal(pthread_create(&fx.w.thread, NULL, writer_main, &fx.w), 0);
	fx.w.started = true;
}

static unsigned int writer_written(void)
{
	return __atomic_load_n(&fx.w.written, __ATOMIC_ACQUIRE);
}

static bool writer_done(void)
{
	return writer_written() == fx.w.count || __atomic_load_n(&fx.w.error, __ATOMIC_ACQUIRE);
}

/* Bounded wait until the writer has written @n events (or stopped) */
static void wait_written(unsigned int n)
{
	uint64_t deadline = now_ns() + 10ull * 1000000000ull;

	while (!writer_done() && writer_written() < n && now_ns() < deadline)
		sched_yield();
	assert_true(writer_written() >= n);
}

static void got_add(struct got *g, long seq, long long missed)
{
	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 1024;
		g->seq = realloc(g->seq, g->cap * sizeof(*g->seq));
		g->missed = realloc(g->missed, g->cap * sizeof(*g->missed));
		assert_non_null(g->seq);
		assert_non_null(g->missed);
	}
	g->seq[g->n] = seq;
	g->missed[g->n] = missed;
	g->n++;
}

static int drain_events(struct tracemap_cpu *c, struct got *g)
{
	struct tracemap_event ev;
	unsigned int i;
	int ret;

	for (i = 0; i < DRAIN_LIMIT; i++) {
		ret = tracemap_cpu_next_event(c, &ev);
		if (ret <= 0) {
			assert_int_equal(ret, 0);
			return i;
		}
		assert_int_equal(ev.cpu, tracemap_cpu_id(c));
		got_add(g, th_marker_seq(ev.data, ev.size), ev.missed);
		/* only our markers are in the private instance */
		assert_true(g->seq[g->n - 1] >= 0);
	}
	fail_msg("reader did not run dry within %u calls", DRAIN_LIMIT);
	return -1;
}

/* The seq numbers the kernel's text iterator shows in @file, in its order */
static void trace_seqs(const char *file, struct got *g)
{
	char *txt, *p;

	txt = th_instance_read(fx.inst, file);
	assert_non_null(txt);
	/* by hand: a sanitizer's strstr() is quadratic on megabytes of text */
	for (p = txt; *p; p++)
		if (*p == 's' && !strncmp(p, "seq=", 4))
			got_add(g, strtol(p + 4, NULL, 10), 0);
	free(txt);
}

static void assert_same(const struct got *a, const struct got *b)
{
	unsigned int i;

	assert_int_equal(a->n, b->n);
	for (i = 0; i < a->n; i++)
		if (a->seq[i] != b->seq[i])
			fail_msg("event %u: seq %ld vs %ld", i, a->seq[i], b->seq[i]);
}

static void assert_range(const struct got *g, unsigned int from, long first, long count)
{
	unsigned int i;

	assert_int_equal(g->n - from, count);
	for (i = 0; i < count; i++) {
		if (g->seq[from + i] != first + (long)i)
			fail_msg("event %u: seq %ld, expected %ld", i, g->seq[from + i],
				 first + (long)i);
		assert_int_equal(g->missed[from + i], 0);
	}
}

static unsigned long kernel_stat(int cpu, const char *name)
{
	char file[64], *txt, *p;
	unsigned long v;

	snprintf(file, sizeof(file), "per_cpu/cpu%d/stats", cpu);
	txt = th_instance_read(fx.inst, file);
	assert_non_null(txt);
	p = strstr(txt, name);
	assert_non_null(p);
	v = strtoul(p + strlen(name), NULL, 10);
	free(txt);
	return v;
}

static unsigned int per_page(int subbuf_kb)
{
	return (subbuf_kb * 1024 - 16) / rec_size;
}

static int measure_record(void **state)
{
	struct tracemap_region r;
	struct tracemap_cpu *c;

	sched_getaffinity(0, sizeof(fx.saved), &fx.saved);
	th_pin(0);
	new_instance(0, 4);
	write_markers(0, 1);
	c = open_reader(0, TRACEMAP_MODE_SNAPSHOT);
	if (tracemap_cpu_read_region(c, &r) != 1 || r.end <= r.start)
		return -1;
	rec_size = r.end - r.start;
	drop_instance();
	return rec_size >= 16 && rec_size < 256 ? 0 : -1;
}

/* ------------------------------------------------------------ snapshot */

/*
 * A snapshot of cpu0 equals per_cpu/cpu0/trace, took no GET_READER, left
 * the buffer as it was, and a second snapshot and a rewind repeat it.
 * Returns the number of events.
 */
static unsigned int check_snapshot(void)
{
	struct tracemap_cpu_stats st;
	struct tracemap_cpu *c, *c2;
	unsigned long read_before;

	got_free(&fx.g[0]);
	got_free(&fx.g[1]);
	got_free(&fx.g[2]);
	read_before = kernel_stat(0, "read events:");
	trace_seqs("per_cpu/cpu0/trace", &fx.g[1]);

	c = open_reader(0, TRACEMAP_MODE_SNAPSHOT);
	drain_events(c, &fx.g[0]);
	assert_same(&fx.g[0], &fx.g[1]);
	assert_int_equal(tracemap_cpu_stats(c, &st, sizeof(st)), 0);
	assert_int_equal(st.get_reader, 0);
	assert_int_equal(st.events, fx.g[0].n);
	assert_int_equal(st.lost + st.lost_unknown + st.corrupt, 0);
	/* what is there, once */
	assert_int_equal(drain_events(c, &fx.g[0]), 0);

	/* rewind gives the same again */
	assert_int_equal(tracemap_cpu_rewind(c), 0);
	drain_events(c, &fx.g[2]);
	assert_same(&fx.g[0], &fx.g[2]);

	/* so does a second reader, and nothing was consumed */
	got_free(&fx.g[2]);
	c2 = open_reader(0, TRACEMAP_MODE_SNAPSHOT);
	drain_events(c2, &fx.g[2]);
	assert_same(&fx.g[0], &fx.g[2]);
	close_reader(c2);
	close_reader(c);
	assert_int_equal(kernel_stat(0, "read events:"), read_before);
	got_free(&fx.g[1]);
	trace_seqs("per_cpu/cpu0/trace", &fx.g[1]);
	assert_same(&fx.g[0], &fx.g[1]);
	got_free(&fx.g[1]);
	got_free(&fx.g[2]);
	return fx.g[0].n;
}

/* Events in a region, counted by libtraceevent's parser */
static unsigned int region_events(const struct tracemap_region *r)
{
	unsigned long long ts;
	unsigned int n = 0;
	struct kbuffer *kb;
	void *page, *p;

	page = malloc(r->subbuf_size);
	kb = kbuffer_alloc(KBUFFER_LSIZE_SAME_AS_HOST, KBUFFER_ENDIAN_SAME_AS_HOST);
	assert_non_null(page);
	assert_non_null(kb);
	assert_int_equal(tracemap_region_write_subbuf(r, page, r->subbuf_size), r->subbuf_size);
	assert_int_equal(kbuffer_load_subbuffer(kb, page), 0);
	for (p = kbuffer_read_event(kb, &ts); p; p = kbuffer_next_event(kb, &ts))
		n++;
	kbuffer_free(kb);
	free(page);
	return n;
}

/* Consume @regions regions through a consuming mapping; returns the events taken */
static unsigned int consume_regions(unsigned int regions, bool keep_open)
{
	struct tracemap_cpu_stats st;
	struct tracemap_region r;
	struct tracemap_cpu *c;
	unsigned int n = 0, i;

	c = open_reader(0, TRACEMAP_MODE_CONSUME);
	for (i = 0; i < regions; i++) {
		assert_int_equal(tracemap_cpu_read_region(c, &r), 1);
		n += region_events(&r);
	}
	assert_int_equal(tracemap_cpu_stats(c, &st, sizeof(st)), 0);
	assert_int_equal(st.get_reader, regions);
	if (!keep_open)
		close_reader(c);
	return n;
}

static void test_snapshot_fresh(void **state)
{
	int kb = *(int *)*state;

	th_pin(0);
	new_instance(1024, kb);
	write_markers(0, 1000);
	assert_int_equal(check_snapshot(), 1000);
	assert_range(&fx.g[0], 0, 0, 1000);
}

/* Pages a consumer took are stale in the ring: the snapshot drops them. */
static void test_snapshot_after_consume(void **state)
{
	int kb = *(int *)*state;
	unsigned int taken;

	th_pin(0);
	new_instance(1024, kb);
	write_markers(0, 1000);
	taken = consume_regions(2, false);
	assert_true(taken > per_page(kb) && taken <= 2 * per_page(kb));
	write_markers(1000, 50);
	assert_int_equal(check_snapshot(), 1050 - taken);
	assert_range(&fx.g[0], 0, taken, 1050 - taken);

	/* consumer still mapped (one shared meta page) */
	taken += consume_regions(1, true);
	write_markers(1050, 20);
	assert_int_equal(check_snapshot(), 1070 - taken);
	assert_range(&fx.g[0], 0, taken, 1070 - taken);
}

/* The writer lapped the ring: the snapshot has the newest pages only. */
static void test_snapshot_wrapped(void **state)
{
	int kb = *(int *)*state;
	unsigned int n;

	th_pin(0);
	new_instance(16, kb);
	write_markers(0, 5000);
	n = check_snapshot();
	assert_true(n < 5000);
	assert_range(&fx.g[0], 0, 5000 - n, n);

	/* and with a consumer having taken the oldest page of what is left */
	consume_regions(1, false);
	write_markers(5000, 3 * per_page(kb) + 7);
	n = check_snapshot();
	assert_range(&fx.g[0], 0, 5000 + 3 * per_page(kb) + 7 - n, n);
}

/* The consumer and the writer share the reader page: only its unread tail counts. */
static void test_snapshot_reader_page(void **state)
{
	int kb = *(int *)*state;
	struct tracemap_cpu *c;
	struct got g = { 0 };

	th_pin(0);
	new_instance(1024, kb);
	write_markers(0, 30);
	c = open_reader(0, TRACEMAP_MODE_CONSUME);
	assert_int_equal(drain_events(c, &g), 30);
	got_free(&g);
	write_markers(30, 20);
	assert_int_equal(check_snapshot(), 20);
	assert_range(&fx.g[0], 0, 30, 20);
	/* after the page filled up and the writer moved on */
	write_markers(50, per_page(kb));
	assert_int_equal(check_snapshot(), 20 + per_page(kb));
	assert_range(&fx.g[0], 0, 30, 20 + per_page(kb));
	close_reader(c);
}

/* Every gap in seq reported before the event after it; nothing twice. Returns gaps. */
static unsigned int check_gaps(const struct got *g, unsigned int *false_reports)
{
	unsigned int i, gaps = 0;

	*false_reports = 0;
	for (i = 0; i < g->n; i++) {
		long prev = i ? g->seq[i - 1] : g->seq[0] - 1;

		if (g->seq[i] <= prev)
			fail_msg("event %u: seq %ld after %ld (duplicate or out of order)", i,
				 g->seq[i], prev);
		if (g->seq[i] != prev + 1) {
			gaps++;
			if (!g->missed[i])
				fail_msg("event %u: seq %ld after %ld, no loss reported", i,
					 g->seq[i], prev);
		} else if (g->missed[i]) {
			(*false_reports)++;
		}
	}
	return gaps;
}

/*
 * Snapshots taken while a writer on the other CPU laps a small ring: each
 * is in order, and where the writer overtook the scan, the gap is reported.
 */
static void test_snapshot_live(void **state)
{
	unsigned int i, gaps = 0, false_reports, total = 0, fr = 0;
	struct tracemap_cpu *c;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		skip();
	th_pin(0);
	new_instance(64, 4);
	c = open_reader(1, TRACEMAP_MODE_SNAPSHOT);
	start_writer(1, 4000000, 0);
	/* the ring has wrapped once before the first look */
	wait_written(2 * 17 * per_page(4));
	for (i = 0; i < 2000 && !writer_done(); i++) {
		unsigned int before = writer_written();

		got_free(&fx.g[0]);
		assert_int_equal(tracemap_cpu_rewind(c), 0);
		drain_events(c, &fx.g[0]);
		gaps += check_gaps(&fx.g[0], &false_reports);
		/* it holds everything written before it started, and nothing not yet written */
		assert_true(fx.g[0].n > 0);
		assert_true(fx.g[0].seq[fx.g[0].n - 1] + 1 >= before);
		assert_true(fx.g[0].seq[fx.g[0].n - 1] <= writer_written());
		fr += false_reports;
		total += fx.g[0].n;
	}
	__atomic_store_n(&fx.w.count, 0, __ATOMIC_RELEASE);
	stop_writer();
	printf("%u snapshots under a lapping writer: %u events, %u gaps, %u loss reports "
	       "without a gap\n", i, total, gaps, fr);
	assert_true(total > 0);
}

/* echo > trace: a snapshot has only what was written after it */
static void test_snapshot_after_reset(void **state)
{
	int kb = *(int *)*state;

	th_pin(0);
	new_instance(64, kb);
	write_markers(0, 5 * per_page(kb) + 10);
	assert_int_equal(th_instance_write(fx.inst, "trace", ""), 0);
	write_markers(10000, 30);
	assert_int_equal(check_snapshot(), 30);
	assert_range(&fx.g[0], 0, 10000, 30);
	/* more than the pages the reset left with stale time stamps */
	write_markers(10030, 3 * per_page(kb));
	assert_int_equal(check_snapshot(), 30 + 3 * per_page(kb));
	assert_range(&fx.g[0], 0, 10000, 30 + 3 * per_page(kb));
}

/* ------------------------------------------------------------- follow */

/* Follow across echo > trace: what comes after the reset, once and in order */
static void test_follow_reset(void **state)
{
	int kb = *(int *)*state;
	unsigned int pp = per_page(kb), i, from, seq = 0;
	struct tracemap_cpu *c;

	th_pin(0);
	new_instance(64, kb);
	c = open_reader(0, TRACEMAP_MODE_FOLLOW);
	for (i = 0; i < 4; i++) {
		/* the follower is mid-page, then at a page end */
		write_markers(seq, i % 2 ? pp : 2 * pp + 17);
		seq += i % 2 ? pp : 2 * pp + 17;
		drain_events(c, &fx.g[0]);
		assert_int_equal(th_instance_write(fx.inst, "trace", ""), 0);
		seq += 1000;
		write_markers(seq, 25 + i * pp);
		from = fx.g[0].n;
		drain_events(c, &fx.g[0]);
		assert_range(&fx.g[0], from, seq, 25 + i * pp);
		seq += 25 + i * pp;
	}
}

static void test_follow_steps(void **state)
{
	int kb = *(int *)*state;
	unsigned int pp = per_page(kb);
	unsigned int counts[] = { 1, pp / 2, pp, pp + 1, 50 * pp, 3 };
	struct tracemap_cpu_stats st;
	struct tracemap_cpu *c;
	unsigned int i, seq = 100;

	th_pin(0);
	new_instance(1024, kb);
	write_markers(0, 100);
	c = open_reader(0, TRACEMAP_MODE_FOLLOW);
	/* what is there first, then each batch as it comes */
	drain_events(c, &fx.g[0]);
	assert_range(&fx.g[0], 0, 0, 100);
	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		unsigned int from = fx.g[0].n;

		write_markers(seq, counts[i]);
		drain_events(c, &fx.g[0]);
		assert_range(&fx.g[0], from, seq, counts[i]);
		seq += counts[i];
	}
	assert_int_equal(tracemap_cpu_stats(c, &st, sizeof(st)), 0);
	assert_int_equal(st.events, seq);
	assert_int_equal(st.get_reader, 0);
	assert_int_equal(st.lost + st.lost_unknown + st.corrupt, 0);
	/* nothing consumed: the kernel still has every event for trace */
	assert_int_equal(kernel_stat(0, "read events:"), 0);
	trace_seqs("per_cpu/cpu0/trace", &fx.g[1]);
	assert_range(&fx.g[1], 0, 0, seq);
}

/*
 * Follow cpu1 from cpu0 while a writer thread runs there. @every: after
 * that many events wait until the writer has written @lap more, so that
 * gaps must occur. Returns the number of gaps; checks that every gap was
 * reported before the event after it and that nothing came twice.
 */
static unsigned int follow_live(unsigned int count, unsigned int rate, unsigned int every,
				unsigned int lap, unsigned int *false_reports)
{
	uint64_t deadline = now_ns() + 30ull * 1000000000ull;
	struct tracemap_cpu_stats st;
	struct tracemap_cpu *c;
	struct got *g = &fx.g[0];
	unsigned int gaps, since = 0;
	struct tracemap_event ev;
	int ret;

	th_pin(0);
	c = open_reader(1, TRACEMAP_MODE_FOLLOW);
	start_writer(1, count, rate);
	while (now_ns() < deadline) {
		ret = tracemap_cpu_next_event(c, &ev);
		assert_true(ret >= 0);
		if (ret) {
			got_add(g, th_marker_seq(ev.data, ev.size), ev.missed);
			assert_true(g->seq[g->n - 1] >= 0);
			if (every && ++since == every) {
				unsigned int target = writer_written() + lap;

				since = 0;
				while (!writer_done() && writer_written() < target &&
				       now_ns() < deadline)
					sched_yield();
			}
			continue;
		}
		if (writer_done() && g->n && g->seq[g->n - 1] == (long)writer_written() - 1)
			break;
		/* nothing new yet: the mapping gives no wakeup for non-consumers */
		usleep(50);
	}
	stop_writer();
	assert_int_equal(fx.w.error, 0);
	assert_int_equal(writer_written(), count);
	assert_true(g->n > 0);
	/* the newest events are never lost */
	assert_int_equal(g->seq[g->n - 1], count - 1);

	gaps = check_gaps(g, false_reports);
	/* the reader was open before the first write: seq 0 comes first or is reported */
	if (g->seq[0] != 0) {
		assert_int_not_equal(g->missed[0], 0);
		gaps++;
	}
	assert_int_equal(tracemap_cpu_stats(c, &st, sizeof(st)), 0);
	assert_int_equal(st.events, g->n);
	assert_int_equal(st.get_reader, 0);
	assert_int_equal(st.corrupt, 0);
	/* follow never consumes */
	assert_int_equal(st.kernel_read, 0);
	assert_int_equal(kernel_stat(1, "read events:"), 0);
	return gaps;
}

/* Big enough buffer, moderate rate: every event, no gap, no loss report. */
static void test_follow_live_lossless(void **state)
{
	unsigned int false_reports;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		skip();
	/* 6 MB of markers through a 3 MB ring: about 400 ms of slack at this rate */
	new_instance(3072, 4);
	assert_int_equal(follow_live(150000, 200000, 0, 0, &false_reports), 0);
	assert_int_equal(fx.g[0].n, 150000);
	assert_int_equal(false_reports, 0);
	/* the ring wrapped, so the trace has only the newest */
	trace_seqs("per_cpu/cpu1/trace", &fx.g[1]);
	assert_true(fx.g[1].n > 0 && fx.g[1].n < 150000);
	assert_range(&fx.g[1], 0, 150000 - fx.g[1].n, fx.g[1].n);
}

/*
 * A follower that falls behind a lapping writer, stopping mid-page or on a
 * page end and with the writer more or less than one ring ahead: every gap
 * is reported.
 */
static void test_follow_live_gaps(void **state)
{
	static const unsigned int every[] = { 7, 51, 102, 250 };
	unsigned int gaps, false_reports, ring, i, total = 0, fr = 0;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		skip();
	for (i = 0; i < 2 * sizeof(every) / sizeof(every[0]); i++) {
		new_instance(16, 4);
		ring = (tracemap_cpu_nr_subbufs(open_reader(1, TRACEMAP_MODE_SNAPSHOT)) - 1) *
		       per_page(4);
		/* twice the ring, or two thirds of it */
		gaps = follow_live(20000, 500000, every[i / 2], i % 2 ? 2 * ring : 2 * ring / 3,
				   &false_reports);
		if (i % 2)
			assert_true(gaps > 0);
		total += gaps;
		fr += false_reports;
	}
	drop_instance();
	printf("follow behind a lapping writer: %u gaps reported, %u loss reports without a gap\n",
	       total, fr);
}

/* ---------------------------------------------------------------- main */

#define T(name, fn, prm)	{ name, fn, NULL, teardown, prm }

int main(void)
{
	static int kb4 = 4, kb8 = 8;
	const struct CMUnitTest tests[] = {
		T("snapshot fresh 4k", test_snapshot_fresh, &kb4),
		T("snapshot fresh 8k", test_snapshot_fresh, &kb8),
		T("snapshot after consume 4k", test_snapshot_after_consume, &kb4),
		T("snapshot after consume 8k", test_snapshot_after_consume, &kb8),
		T("snapshot wrapped 4k", test_snapshot_wrapped, &kb4),
		T("snapshot wrapped 8k", test_snapshot_wrapped, &kb8),
		T("snapshot reader page 4k", test_snapshot_reader_page, &kb4),
		T("snapshot reader page 8k", test_snapshot_reader_page, &kb8),
		T("snapshot live", test_snapshot_live, NULL),
		T("snapshot after reset 4k", test_snapshot_after_reset, &kb4),
		T("snapshot after reset 8k", test_snapshot_after_reset, &kb8),
		T("follow reset 4k", test_follow_reset, &kb4),
		T("follow reset 8k", test_follow_reset, &kb8),
		T("follow steps 4k", test_follow_steps, &kb4),
		T("follow steps 8k", test_follow_steps, &kb8),
		T("follow live lossless", test_follow_live_lossless, NULL),
		T("follow live gaps", test_follow_live_gaps, NULL),
	};

	th_require_mmap();
	return cmocka_run_group_tests_name("cpu snapshot and follow", tests, measure_record,
					   teardown);
}
