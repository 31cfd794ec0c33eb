// SPDX-License-Identifier: GPL-2.0-only
/*
 * A buffer cleared (echo > trace) or its trace_clock changed by someone
 * else while a reader reads it: the kernel resets it, the events it held
 * unread are gone, and the counters that would say how many are zeroed.
 * The reader reports a gap of unknown size (missed =
 * TRACEMAP_LOST_UNKNOWN, stats.cleared and lost_unknown 1) on the first
 * event after the reset, and delivers every marker written after it once,
 * in order. Before, the reset went unreported whenever the counters came
 * back above what the reader had seen before it.
 *
 * timeout: 120
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "tracemap.h"

static struct th_fixture fx = TH_FIXTURE("nlib-clear");

#define AFTER	3000	/* markers after the reset: more than the reader saw before it */

/*
 * Drain @c: the markers before the reset are a prefix of first..,
 * nothing of them after the gap, then every marker of @after_first ..
 * @after_first + AFTER - 1 once, the first carrying the gap.
 */
static void expect_after_gap(struct tracemap_cpu *c, long before_next, long after_first)
{
	struct tracemap_cpu_stats st;
	struct th_events got = { 0 };
	unsigned int i, n;
	long want = before_next;
	bool gap = false;

	n = th_drain_events(c, &got);
	for (i = 0; i < n; i++) {
		if (!gap && got.ev[i].seq == want && !got.ev[i].missed) {
			want++;
			continue;
		}
		if (!gap) {
			if (got.ev[i].seq != after_first)
				fail_msg("event %u: seq %ld after %ld, expected %ld or the first "
					 "after the reset, %ld", i, got.ev[i].seq, want - 1, want,
					 after_first);
			if (got.ev[i].missed != TRACEMAP_LOST_UNKNOWN)
				fail_msg("the first event after the reset (seq %ld) has missed "
					 "%lld, expected TRACEMAP_LOST_UNKNOWN", got.ev[i].seq,
					 got.ev[i].missed);
			gap = true;
			want = after_first + 1;
			continue;
		}
		if (got.ev[i].seq != want || got.ev[i].missed)
			fail_msg("event %u: seq %ld missed %lld, expected seq %ld missed 0", i,
				 got.ev[i].seq, got.ev[i].missed, want);
		want++;
	}
	assert_true(gap);
	assert_int_equal(want, after_first + AFTER);
	th_events_free(&got);
	assert_int_equal(tracemap_cpu_stats(c, &st, sizeof(st)), 0);
	assert_int_equal(st.cleared, 1);
	assert_int_equal(st.lost_unknown, 1);
	assert_int_equal(st.lost, 0);
}

static void reset_buffer(const char *how)
{
	if (!strcmp(how, "clock")) {
		char *v = th_instance_read(fx.inst, "trace_clock");

		assert_non_null(v);
		/* another clock than the current one; the kernel resets the buffer */
		assert_int_equal(th_instance_write(fx.inst, "trace_clock",
						   strstr(v, "[mono]") ? "global" : "mono"), 0);
		free(v);
	} else {
		assert_int_equal(th_instance_write(fx.inst, "trace", "\n"), 0);
	}
}

/* Cleared while the reader is in the middle of the data */
static void mid_stream(unsigned int flags, const char *how)
{
	struct tracemap_cpu *c = th_fixture_consume_markers(&fx, 1024, flags, 400, 20);

	reset_buffer(how);
	th_fixture_write_markers(&fx, 100000, AFTER);
	expect_after_gap(c, 20, 100000);
}

/* Drain @c: exactly markers 0..@n-1, nothing missed */
static void expect_after_gap_none(struct tracemap_cpu *c, unsigned int n)
{
	struct th_events got = { 0 };
	unsigned int i;

	assert_int_equal(th_drain_events(c, &got), n);
	for (i = 0; i < n; i++) {
		assert_int_equal(got.ev[i].seq, i);
		assert_int_equal(got.ev[i].missed, 0);
	}
	th_events_free(&got);
}

/* A reader that read everything, stood still, and is used again after a reset */
static void two_rounds(unsigned int flags, const char *how)
{
	struct tracemap_cpu *c = th_fixture_consume_markers(&fx, 1024, flags, 300, 0);

	expect_after_gap_none(c, 300);
	reset_buffer(how);
	th_fixture_write_markers(&fx, 100000, AFTER);
	expect_after_gap(c, 300, 100000);
}

static void test_clear_mid_stream_mmap(void **state)
{
	mid_stream(TRACEMAP_CPU_NO_FALLBACK, "clear");
}

static void test_clear_mid_stream_read(void **state)
{
	mid_stream(TRACEMAP_CPU_FORCE_READ, "clear");
}

static void test_clear_two_rounds_mmap(void **state)
{
	two_rounds(TRACEMAP_CPU_NO_FALLBACK, "clear");
}

static void test_clear_two_rounds_read(void **state)
{
	two_rounds(TRACEMAP_CPU_FORCE_READ, "clear");
}

static void test_clock_mid_stream_mmap(void **state)
{
	mid_stream(TRACEMAP_CPU_NO_FALLBACK, "clock");
}

static void test_clock_two_rounds_read(void **state)
{
	two_rounds(TRACEMAP_CPU_FORCE_READ, "clock");
}

/*
 * A time-ordered stream of two CPUs when trace_clock changes from mono to
 * counter (small numbers, far below the ns of mono): every event of the old
 * clock comes before every event of the new one, the order by time holds
 * within each (late 0), each CPU's first event after the change carries
 * the gap, and every marker after it comes once.
 */
static void test_clock_stream(void **state)
{
	struct tracemap_stream_opts o = { .sz = sizeof(o), .cpumask = "3",
					  .flags = TRACEMAP_STREAM_LOW_LATENCY };
	struct tracemap_cpu_stats st;
	struct tracemap_stream *s;
	struct tracemap_event ev;
	unsigned int i, n = 0, newer = 0, gaps = 0;
	bool after = false;
	char *seen;
	long seq;
	int ret;

	th_backend_case(state);
	o.cpu_flags = th_cpu_flags();
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		skip();
	th_fixture_new(&fx, 1024, 0);
	assert_int_equal(th_instance_write(fx.inst, "trace_clock", "mono"), 0);
	s = tracemap_stream_open(fx.inst, &o);
	assert_non_null(s);
	th_assert_stream_backend(s);
	seen = calloc(2 * AFTER, 1);
	assert_non_null(seen);
	for (i = 0; i < 2; i++) {
		th_pin(i);
		th_fixture_write_markers(&fx, i * 1000, 300);
	}
	/* the stream holds the rest of a region of each CPU when the clock changes */
	for (i = 0; i < 100; i++)
		assert_int_equal(tracemap_stream_next_event(s, &ev, 5000), 1);
	assert_int_equal(th_instance_write(fx.inst, "trace_clock", "counter"), 0);
	for (i = 0; i < 2; i++) {
		th_pin(i);
		th_fixture_write_markers(&fx, 100000 + i * AFTER, AFTER);
	}
	while ((ret = tracemap_stream_next_event(s, &ev, 500)) > 0) {
		seq = th_marker_seq(ev.data, ev.size);
		assert_true(seq >= 0);
		n++;
		if (seq < 100000) {
			if (after)
				fail_msg("seq %ld of the old clock after one of the new", seq);
			assert_int_equal(ev.missed, 0);
			continue;
		}
		after = true;
		seq -= 100000;
		assert_true(seq < 2 * AFTER);
		assert_int_equal(seen[seq], 0);
		seen[seq] = 1;
		newer++;
		if (ev.missed) {
			assert_int_equal(ev.missed, TRACEMAP_LOST_UNKNOWN);
			/* the first of its CPU's markers after the change */
			assert_true(seq == 0 || seq == AFTER);
			gaps++;
		}
	}
	assert_int_equal(ret, 0);
	free(seen);
	assert_int_equal(newer, 2 * AFTER);
	assert_int_equal(gaps, 2);
	for (i = 0; i < 2; i++) {
		assert_int_equal(tracemap_cpu_stats(tracemap_stream_cpu(s, i), &st, sizeof(st)), 0);
		assert_int_equal(st.cleared, 1);
		assert_int_equal(st.late, 0);
	}
	printf("# %u events, %u after the clock change\n", n + 100, newer);
	tracemap_stream_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_clear_mid_stream_mmap, th_fixture_teardown),
		cmocka_unit_test_teardown(test_clear_mid_stream_read, th_fixture_teardown),
		cmocka_unit_test_teardown(test_clear_two_rounds_mmap, th_fixture_teardown),
		cmocka_unit_test_teardown(test_clear_two_rounds_read, th_fixture_teardown),
		cmocka_unit_test_teardown(test_clock_mid_stream_mmap, th_fixture_teardown),
		cmocka_unit_test_teardown(test_clock_two_rounds_read, th_fixture_teardown),
		TH_BOTH(test_clock_stream, NULL, th_fixture_teardown),
	};

	return th_fixture_run_tests(tests, &fx);
}
