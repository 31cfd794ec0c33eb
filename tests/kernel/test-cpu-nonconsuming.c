// SPDX-License-Identifier: GPL-2.0-only
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
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kbuffer.h>

#include "harness.h"
#include "tracemap.h"

#define TAG		"kc"

static struct th_fixture fx = TH_FIXTURE(TAG);

/* ------------------------------------------------------------- fixture */

static int teardown(void **state)
{
	th_fixture_drop(&fx);
	th_restore_affinity();
	return 0;
}

static struct tracemap_cpu *open_reader(int cpu, enum tracemap_mode mode)
{
	return th_fixture_open(&fx, cpu, mode, 0);
}

/* Bounded wait until the writer has written @n events (or stopped) */
static void wait_written(unsigned int n)
{
	assert_true(th_writer_wait(&fx.w, n, th_now_ns() + 10ull * 1000000000ull) >= n);
}

static void assert_same(const struct th_events *a, const struct th_events *b)
{
	unsigned int i;

	assert_int_equal(a->n, b->n);
	for (i = 0; i < a->n; i++)
		if (a->ev[i].seq != b->ev[i].seq)
			fail_msg("event %u: seq %ld vs %ld", i, a->ev[i].seq, b->ev[i].seq);
}

static int measure_record(void **state)
{
	th_save_affinity();
	return th_measure_marker_record(TAG) ? 0 : -1;
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

	th_fixture_clear_got(&fx);
	read_before = th_cpu_stat(fx.inst, 0, "read events:");
	th_trace_markers(fx.inst, "per_cpu/cpu0/trace", &fx.got[1]);

	c = open_reader(0, TRACEMAP_MODE_SNAPSHOT);
	th_drain_events(c, &fx.got[0]);
	assert_same(&fx.got[0], &fx.got[1]);
	assert_int_equal(tracemap_cpu_stats(c, &st, sizeof(st)), 0);
	assert_int_equal(st.get_reader, 0);
	assert_int_equal(st.events, fx.got[0].n);
	assert_int_equal(st.lost + st.lost_unknown + st.gaps_possible + st.corrupt, 0);
	/* what is there, once */
	assert_int_equal(th_drain_events(c, &fx.got[0]), 0);

	/* rewind gives the same again */
	assert_int_equal(tracemap_cpu_rewind(c), 0);
	th_drain_events(c, &fx.got[2]);
	assert_same(&fx.got[0], &fx.got[2]);

	/* so does a second reader, and nothing was consumed */
	th_events_free(&fx.got[2]);
	c2 = open_reader(0, TRACEMAP_MODE_SNAPSHOT);
	th_drain_events(c2, &fx.got[2]);
	assert_same(&fx.got[0], &fx.got[2]);
	th_fixture_close(&fx, c2);
	th_fixture_close(&fx, c);
	assert_int_equal(th_cpu_stat(fx.inst, 0, "read events:"), read_before);
	th_events_free(&fx.got[1]);
	th_trace_markers(fx.inst, "per_cpu/cpu0/trace", &fx.got[1]);
	assert_same(&fx.got[0], &fx.got[1]);
	th_events_free(&fx.got[1]);
	th_events_free(&fx.got[2]);
	return fx.got[0].n;
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
		th_fixture_close(&fx, c);
	return n;
}

static void test_snapshot_fresh(void **state)
{
	int kb = *(int *)*state;

	th_pin(0);
	th_fixture_new(&fx, 1024, kb);
	th_fixture_write_markers(&fx, 0, 1000);
	assert_int_equal(check_snapshot(), 1000);
	th_assert_seq_run(&fx.got[0], 0, 0, 1000);
}

/* Pages a consumer took are stale in the ring: the snapshot drops them. */
static void test_snapshot_after_consume(void **state)
{
	int kb = *(int *)*state;
	unsigned int pp = th_markers_per_subbuf(kb), taken;

	th_pin(0);
	th_fixture_new(&fx, 1024, kb);
	th_fixture_write_markers(&fx, 0, 1000);
	taken = consume_regions(2, false);
	assert_true(taken > pp && taken <= 2 * pp);
	th_fixture_write_markers(&fx, 1000, 50);
	assert_int_equal(check_snapshot(), 1050 - taken);
	th_assert_seq_run(&fx.got[0], 0, taken, 1050 - taken);

	/* consumer still mapped (one shared meta page) */
	taken += consume_regions(1, true);
	th_fixture_write_markers(&fx, 1050, 20);
	assert_int_equal(check_snapshot(), 1070 - taken);
	th_assert_seq_run(&fx.got[0], 0, taken, 1070 - taken);
}

/* The writer lapped the ring: the snapshot has the newest pages only. */
static void test_snapshot_wrapped(void **state)
{
	int kb = *(int *)*state;
	unsigned int pp = th_markers_per_subbuf(kb), n;

	th_pin(0);
	th_fixture_new(&fx, 16, kb);
	th_fixture_write_markers(&fx, 0, 5000);
	n = check_snapshot();
	assert_true(n < 5000);
	th_assert_seq_run(&fx.got[0], 0, 5000 - n, n);

	/* and with a consumer having taken the oldest page of what is left */
	consume_regions(1, false);
	th_fixture_write_markers(&fx, 5000, 3 * pp + 7);
	n = check_snapshot();
	th_assert_seq_run(&fx.got[0], 0, 5000 + 3 * pp + 7 - n, n);
}

/* The consumer and the writer share the reader page: only its unread tail counts. */
static void test_snapshot_reader_page(void **state)
{
	int kb = *(int *)*state;
	unsigned int pp = th_markers_per_subbuf(kb);
	struct th_events g = { 0 };
	struct tracemap_cpu *c;

	th_pin(0);
	th_fixture_new(&fx, 1024, kb);
	th_fixture_write_markers(&fx, 0, 30);
	c = open_reader(0, TRACEMAP_MODE_CONSUME);
	assert_int_equal(th_drain_events(c, &g), 30);
	th_events_free(&g);
	th_fixture_write_markers(&fx, 30, 20);
	assert_int_equal(check_snapshot(), 20);
	th_assert_seq_run(&fx.got[0], 0, 30, 20);
	/* after the page filled up and the writer moved on */
	th_fixture_write_markers(&fx, 50, pp);
	assert_int_equal(check_snapshot(), 20 + pp);
	th_assert_seq_run(&fx.got[0], 0, 30, 20 + pp);
	th_fixture_close(&fx, c);
}

/* Every gap in seq reported before the event after it; nothing twice. Returns gaps. */
static unsigned int check_gaps(const struct th_events *g, unsigned int *false_reports)
{
	unsigned int i, gaps = 0;

	*false_reports = 0;
	for (i = 0; i < g->n; i++) {
		long prev = i ? g->ev[i - 1].seq : g->ev[0].seq - 1;

		if (g->ev[i].seq <= prev)
			fail_msg("event %u: seq %ld after %ld (duplicate or out of order)", i,
				 g->ev[i].seq, prev);
		if (g->ev[i].seq != prev + 1) {
			gaps++;
			if (!g->ev[i].missed)
				fail_msg("event %u: seq %ld after %ld, no loss reported", i,
					 g->ev[i].seq, prev);
		} else if (g->ev[i].missed) {
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
	th_fixture_new(&fx, 64, 4);
	c = open_reader(1, TRACEMAP_MODE_SNAPSHOT);
	th_writer_start(&fx.w, fx.inst, 1, 4000000, 0);
	/* the ring has wrapped once before the first look */
	wait_written(2 * 17 * th_markers_per_subbuf(4));
	for (i = 0; i < 2000 && !th_writer_done(&fx.w); i++) {
		unsigned int before = th_writer_written(&fx.w);

		th_events_free(&fx.got[0]);
		assert_int_equal(tracemap_cpu_rewind(c), 0);
		th_drain_events(c, &fx.got[0]);
		gaps += check_gaps(&fx.got[0], &false_reports);
		/* it holds everything written before it started, and nothing not yet written */
		assert_true(fx.got[0].n > 0);
		assert_true(fx.got[0].ev[fx.got[0].n - 1].seq + 1 >= before);
		assert_true(fx.got[0].ev[fx.got[0].n - 1].seq <= th_writer_written(&fx.w));
		fr += false_reports;
		total += fx.got[0].n;
	}
	th_writer_cancel(&fx.w);
	th_writer_join(&fx.w);
	printf("%u snapshots under a lapping writer: %u events, %u gaps, %u loss reports "
	       "without a gap\n", i, total, gaps, fr);
	assert_true(total > 0);
}

/* echo > trace: a snapshot has only what was written after it */
static void test_snapshot_after_reset(void **state)
{
	int kb = *(int *)*state;
	unsigned int pp = th_markers_per_subbuf(kb);

	th_pin(0);
	th_fixture_new(&fx, 64, kb);
	th_fixture_write_markers(&fx, 0, 5 * pp + 10);
	assert_int_equal(th_instance_write(fx.inst, "trace", ""), 0);
	th_fixture_write_markers(&fx, 10000, 30);
	assert_int_equal(check_snapshot(), 30);
	th_assert_seq_run(&fx.got[0], 0, 10000, 30);
	/* more than the pages the reset left with stale time stamps */
	th_fixture_write_markers(&fx, 10030, 3 * pp);
	assert_int_equal(check_snapshot(), 30 + 3 * pp);
	th_assert_seq_run(&fx.got[0], 0, 10000, 30 + 3 * pp);
}

/* ------------------------------------------------------------- follow */

/* Follow across echo > trace: what comes after the reset, once and in order */
static void test_follow_reset(void **state)
{
	int kb = *(int *)*state;
	unsigned int pp = th_markers_per_subbuf(kb), i, from, seq = 0;
	struct tracemap_cpu *c;

	th_pin(0);
	th_fixture_new(&fx, 64, kb);
	c = open_reader(0, TRACEMAP_MODE_FOLLOW);
	for (i = 0; i < 4; i++) {
		/* the follower is mid-page, then at a page end */
		th_fixture_write_markers(&fx, seq, i % 2 ? pp : 2 * pp + 17);
		seq += i % 2 ? pp : 2 * pp + 17;
		th_drain_events(c, &fx.got[0]);
		assert_int_equal(th_instance_write(fx.inst, "trace", ""), 0);
		seq += 1000;
		th_fixture_write_markers(&fx, seq, 25 + i * pp);
		from = fx.got[0].n;
		th_drain_events(c, &fx.got[0]);
		th_assert_seq_run(&fx.got[0], from, seq, 25 + i * pp);
		seq += 25 + i * pp;
	}
}

static void test_follow_steps(void **state)
{
	int kb = *(int *)*state;
	unsigned int pp = th_markers_per_subbuf(kb);
	unsigned int counts[] = { 1, pp / 2, pp, pp + 1, 50 * pp, 3 };
	struct tracemap_cpu_stats st;
	struct tracemap_cpu *c;
	unsigned int i, seq = 100;

	th_pin(0);
	th_fixture_new(&fx, 1024, kb);
	th_fixture_write_markers(&fx, 0, 100);
	c = open_reader(0, TRACEMAP_MODE_FOLLOW);
	/* what is there first, then each batch as it comes */
	th_drain_events(c, &fx.got[0]);
	th_assert_seq_run(&fx.got[0], 0, 0, 100);
	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		unsigned int from = fx.got[0].n;

		th_fixture_write_markers(&fx, seq, counts[i]);
		th_drain_events(c, &fx.got[0]);
		th_assert_seq_run(&fx.got[0], from, seq, counts[i]);
		seq += counts[i];
	}
	assert_int_equal(tracemap_cpu_stats(c, &st, sizeof(st)), 0);
	assert_int_equal(st.events, seq);
	assert_int_equal(st.get_reader, 0);
	assert_int_equal(st.lost + st.lost_unknown + st.gaps_possible + st.corrupt, 0);
	/* nothing consumed: the kernel still has every event for trace */
	assert_int_equal(th_cpu_stat(fx.inst, 0, "read events:"), 0);
	th_trace_markers(fx.inst, "per_cpu/cpu0/trace", &fx.got[1]);
	th_assert_seq_run(&fx.got[1], 0, 0, seq);
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
	uint64_t deadline = th_now_ns() + 30ull * 1000000000ull;
	struct tracemap_cpu_stats st;
	struct tracemap_cpu *c;
	struct th_events *g = &fx.got[0];
	unsigned int gaps, since = 0;
	struct tracemap_event ev;
	int ret;

	th_pin(0);
	c = open_reader(1, TRACEMAP_MODE_FOLLOW);
	th_writer_start(&fx.w, fx.inst, 1, count, rate);
	while (th_now_ns() < deadline) {
		ret = tracemap_cpu_next_event(c, &ev);
		assert_true(ret >= 0);
		if (ret) {
			th_events_add(g, &ev);
			if (every && ++since == every) {
				since = 0;
				th_writer_wait(&fx.w, th_writer_written(&fx.w) + lap, deadline);
			}
			continue;
		}
		if (th_writer_done(&fx.w) && g->n &&
		    g->ev[g->n - 1].seq == (long)th_writer_written(&fx.w) - 1)
			break;
		/* nothing new yet: the mapping gives no wakeup for non-consumers */
		usleep(50);
	}
	th_writer_join(&fx.w);
	assert_int_equal(fx.w.error, 0);
	assert_int_equal(th_writer_written(&fx.w), count);
	assert_true(g->n > 0);
	/* the newest events are never lost */
	assert_int_equal(g->ev[g->n - 1].seq, count - 1);

	gaps = check_gaps(g, false_reports);
	/* the reader was open before the first write: seq 0 comes first or is reported */
	if (g->ev[0].seq != 0) {
		assert_int_not_equal(g->ev[0].missed, 0);
		gaps++;
	}
	assert_int_equal(tracemap_cpu_stats(c, &st, sizeof(st)), 0);
	/* a report where nothing was lost is one the reader counted as only possible */
	if (*false_reports > st.gaps_possible)
		fail_msg("%u loss reports without a gap, but only %llu counted as possible "
			 "(%llu certain)", *false_reports, (unsigned long long)st.gaps_possible,
			 (unsigned long long)st.lost_unknown);
	assert_int_equal(st.events, g->n);
	assert_int_equal(st.get_reader, 0);
	assert_int_equal(st.corrupt, 0);
	/* follow never consumes */
	assert_int_equal(st.kernel_read, 0);
	assert_int_equal(th_cpu_stat(fx.inst, 1, "read events:"), 0);
	return gaps;
}

/* Big enough buffer, moderate rate: every event, no gap, no loss report. */
static void test_follow_live_lossless(void **state)
{
	unsigned int false_reports;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		skip();
	/* 6 MB of markers through a 3 MB ring: about 400 ms of slack at this rate */
	th_fixture_new(&fx, 3072, 4);
	assert_int_equal(follow_live(150000, 200000, 0, 0, &false_reports), 0);
	assert_int_equal(fx.got[0].n, 150000);
	assert_int_equal(false_reports, 0);
	/* the ring wrapped, so the trace has only the newest */
	th_trace_markers(fx.inst, "per_cpu/cpu1/trace", &fx.got[1]);
	assert_true(fx.got[1].n > 0 && fx.got[1].n < 150000);
	th_assert_seq_run(&fx.got[1], 0, 150000 - fx.got[1].n, fx.got[1].n);
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
		th_fixture_new(&fx, 16, 4);
		ring = (tracemap_cpu_nr_subbufs(open_reader(1, TRACEMAP_MODE_SNAPSHOT)) - 1) *
		       th_markers_per_subbuf(4);
		/* twice the ring, or two thirds of it */
		gaps = follow_live(20000, 500000, every[i / 2], i % 2 ? 2 * ring : 2 * ring / 3,
				   &false_reports);
		if (i % 2)
			assert_true(gaps > 0);
		total += gaps;
		fr += false_reports;
	}
	th_fixture_drop(&fx);
	printf("follow behind a lapping writer: %u gaps reported, %u loss reports without a gap\n",
	       total, fr);
}

/*
 * A follower one ring behind: it handed out page B in full (C came after it
 * then) and the writer went around the ring until it recycled B, without
 * reaching C again. Nothing unread was overwritten: the events go on at C
 * with no gap reported, certain or possible. Then the same with the writer
 * one page further, C rewritten: one certain gap, reported on the first
 * event after it, and the rest in order.
 */
static void follow_lap(int kb, bool past_next)
{
	unsigned int pp = th_markers_per_subbuf(kb), ring, seq, from, i;
	struct tracemap_cpu_stats st;
	struct tracemap_region r;
	struct tracemap_cpu *c;
	unsigned long overrun;

	th_pin(0);
	th_fixture_new(&fx, 16 * kb / 4, kb);
	c = open_reader(0, TRACEMAP_MODE_FOLLOW);
	ring = tracemap_cpu_nr_subbufs(c) - 1;
	assert_true(ring >= 4);
	/* A and B full, one event on C: B is handed out complete, with C after it */
	th_fixture_write_markers(&fx, 0, 2 * pp + 1);
	for (i = 0; i < 2; i++) {
		assert_int_equal(tracemap_cpu_read_region(c, &r), 1);
		assert_true(r.flags & TRACEMAP_REGION_COMPLETE);
		assert_int_equal(region_events(&r), pp);
	}
	/*
	 * Around the ring one event at a time until the writer recycled A and
	 * B (overrun: their 2 pp events), or A, B and C: the kernel's counter
	 * says when, whatever each page holds.
	 */
	seq = 2 * pp + 1;
	do {
		th_fixture_write_markers(&fx, seq++, 1);
		overrun = th_cpu_stat(fx.inst, 0, "overrun:");
	} while (overrun < (past_next ? 3 : 2) * pp && seq < (ring + 4) * pp);
	assert_true(overrun >= (past_next ? 3 : 2) * pp);
	th_drain_events(c, &fx.got[0]);
	assert_true(fx.got[0].n > 0);
	assert_int_equal(tracemap_cpu_stats(c, &st, sizeof(st)), 0);
	if (!past_next) {
		/* C's first event (seq 2 pp) on, every event, no report */
		th_assert_seq_run(&fx.got[0], 0, 2 * pp, seq - 2 * pp);
		assert_int_equal(st.lost_unknown, 0);
		assert_int_equal(st.gaps_possible, 0);
		return;
	}
	/* C was rewritten: a certain gap before the oldest page left, then in order */
	assert_int_equal(fx.got[0].ev[0].missed, TRACEMAP_LOST_UNKNOWN);
	assert_true(fx.got[0].ev[0].seq > (long)(2 * pp));
	from = fx.got[0].ev[0].seq;
	fx.got[0].ev[0].missed = 0;
	th_assert_seq_run(&fx.got[0], 0, from, seq - from);
	assert_int_equal(st.lost_unknown, 1);
	assert_int_equal(st.gaps_possible, 0);
}

static void test_follow_lap_intact(void **state)
{
	follow_lap(*(int *)*state, false);
}

static void test_follow_lap_rewritten(void **state)
{
	follow_lap(*(int *)*state, true);
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
		T("follow lap, next page intact 4k", test_follow_lap_intact, &kb4),
		T("follow lap, next page intact 8k", test_follow_lap_intact, &kb8),
		T("follow lap, next page rewritten 4k", test_follow_lap_rewritten, &kb4),
		T("follow lap, next page rewritten 8k", test_follow_lap_rewritten, &kb8),
		T("follow live lossless", test_follow_live_lossless, NULL),
		T("follow live gaps", test_follow_live_gaps, NULL),
	};

	th_require_mmap();
	return cmocka_run_group_tests_name("cpu snapshot and follow", tests, measure_record,
					   teardown);
}
