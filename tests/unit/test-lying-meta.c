// SPDX-License-Identifier: GPL-2.0-only
/*
 * The consuming reader over a synthetic mapping (tm_cpu_open_memory()) whose
 * meta page lies: lost counts that no meta page can produce stay "unknown"
 * instead of wrapping to negative numbers (found by fuzz-reader: a flagged
 * page with no stored count and an overrun of 2^63 + 5 gave lost = -32513,
 * a region the page writer then refused), a stored count above overrun is
 * not taken for a reset (the same page again, forever), a loss told early
 * through the meta page's overrun is not told again by the next stored
 * count, and reader ids and
 * positions out of range are refused with EPROTO. The meta page's read
 * count growing by more than the records handed to us is counted as taken
 * by another consumer, whether the caller walks the regions itself or the
 * event iterator does (which counts them as it goes). No kernel needed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "sbuf-encode.h"
#include "tracemap-local.h"

#define SBS	256
#define NR	3

static struct {
	struct trace_buffer_meta meta;
	unsigned char subbufs[NR][SBS];
} map;

/* What the next GET_READER puts in the meta page (the kernel updates it only there). */
static struct trace_buffer_meta next_meta;
static int have_next;

static int get_reader(void *ctx)
{
	if (have_next) {
		map.meta = next_meta;
		have_next = 0;
	}
	return 0;
}

static void quiet(void *ctx, enum tracemap_log_level level, const char *msg)
{
}

/* Page 1 the reader page, @n events on it, flagged MISSED without a stored count. */
static void lay_out(unsigned int n, uint64_t overrun)
{
	struct sbe e;
	unsigned int i;

	memset(&map, 0, sizeof(map));
	sbe_init(&e, map.subbufs[1], SBS, 1000);
	for (i = 0; i < n; i++)
		assert_true(sbe_event(&e, 1000 + i, NULL, 8, 0) >= 0);
	e.commit = e.off;
	sbe_finish(&e, -1);
	map.meta.meta_page_size = sizeof(map.meta);
	map.meta.meta_struct_len = sizeof(map.meta);
	map.meta.subbuf_size = SBS;
	map.meta.nr_subbufs = NR;
	map.meta.reader.id = 1;
	map.meta.reader.read = e.commit;
	map.meta.entries = n;
	map.meta.read = n;
	map.meta.overrun = overrun;
	sbe_release(&e);
}

/*
 * The next GET_READER hands out page 2 with 4 events (lost count @stored,
 * -1: none) and the meta page's overrun and entries = read = @read.
 */
static void next_page(long long stored, uint64_t overrun, uint64_t read)
{
	unsigned int i;
	struct sbe e;

	sbe_init(&e, map.subbufs[2], SBS, 2000);
	for (i = 0; i < 4; i++)
		assert_true(sbe_event(&e, 2000 + i, NULL, 8, 0) >= 0);
	e.commit = e.off;
	sbe_finish(&e, stored);
	assert_int_equal(e.missed_stored, stored >= 0);
	next_meta = map.meta;
	next_meta.reader.id = 2;
	next_meta.reader.read = e.commit;
	next_meta.overrun = overrun;
	next_meta.entries = read;
	next_meta.read = read;
	have_next = 1;
	sbe_release(&e);
}

static void test_overrun_too_big(void **state)
{
	static const uint64_t lies[] = { (1ULL << 63) + 5, UINT64_MAX, (1ULL << 63) };
	struct tracemap_region r;
	struct tracemap_cpu *c;
	unsigned char page[SBS];
	unsigned int i;

	tracemap_set_print(quiet, NULL);
	for (i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		lay_out(4, 0);
		c = tm_cpu_open_memory(0, TRACEMAP_MODE_CONSUME, &map.meta, map.subbufs, SBS, NR,
				       get_reader, NULL);
		assert_non_null(c);
		/* reader opened at read == 4: the page is handed out again after a "reset" */
		map.meta.reader.id = 2;
		map.meta.overrun = lies[i];
		memcpy(map.subbufs[2], map.subbufs[1], SBS);
		assert_int_equal(tracemap_cpu_read_region(c, &r), 1);
		if (r.lost != TRACEMAP_LOST_UNKNOWN)
			fail_msg("overrun %llu: lost %lld, expected unknown",
				 (unsigned long long)lies[i], r.lost);
		assert_int_equal(tracemap_region_write_subbuf(&r, page, sizeof(page)), SBS);
		tracemap_cpu_close(c);
	}
	/* a count that fits is taken as it is */
	lay_out(4, 0);
	c = tm_cpu_open_memory(0, TRACEMAP_MODE_CONSUME, &map.meta, map.subbufs, SBS, NR, get_reader,
			       NULL);
	assert_non_null(c);
	map.meta.reader.id = 2;
	map.meta.overrun = 77;
	memcpy(map.subbufs[2], map.subbufs[1], SBS);
	assert_int_equal(tracemap_cpu_read_region(c, &r), 1);
	assert_int_equal(r.lost, 77);
	tracemap_cpu_close(c);
	tracemap_set_print(NULL, NULL);
}

/*
 * A stored lost count larger than the kernel's overrun counter (which it
 * never is: the kernel stores what overrun grew by) must not look like a
 * buffer reset on the next call, which handed the same page out again and
 * again (fuzz-reader: a call that never returned).
 */
static void test_stored_count_lies(void **state)
{
	struct tracemap_event ev;
	struct tracemap_cpu *c;
	unsigned int calls, events = 0;
	int ret;

	tracemap_set_print(quiet, NULL);
	lay_out(4, 0);
	c = tm_cpu_open_memory(0, TRACEMAP_MODE_CONSUME, &map.meta, map.subbufs, SBS, NR, get_reader,
			       NULL);
	assert_non_null(c);
	/* page 2: 4 events, MISSED|STORED with 1000, while overrun says 5 */
	next_page(1000, 5, 8);
	for (calls = 0; calls < 100; calls++) {
		ret = tracemap_cpu_next_event(c, &ev);
		assert_true(ret >= 0);
		if (!ret)
			break;
		events++;
	}
	/* each event once, then nothing new */
	assert_int_equal(events, 4);
	assert_int_equal(tracemap_cpu_next_event(c, &ev), 0);
	tracemap_cpu_close(c);
	tracemap_set_print(NULL, NULL);
}

/*
 * Page 2 is flagged without a stored count: its loss is what the meta page's
 * overrun grew by (10). That overrun was read after the swap and already
 * holds 4 losses that came after it, which the kernel then stores again in
 * the count of the next page (7, overrun 13). Told once, the losses add up
 * to the kernel's 13, not 17 (test-stream's busy-poll run: 77,230 reported
 * lost for an overrun of 77,228).
 */
static void test_loss_told_once(void **state)
{
	struct tracemap_region r;
	struct tracemap_cpu *c;
	long long lost = 0;
	unsigned int i;
	struct sbe e;

	(void)state;
	lay_out(4, 0);
	c = tm_cpu_open_memory(0, TRACEMAP_MODE_CONSUME, &map.meta, map.subbufs, SBS, NR, get_reader,
			       NULL);
	assert_non_null(c);
	next_page(-1, 10, 8);
	assert_int_equal(tracemap_cpu_read_region(c, &r), 1);
	assert_int_equal(r.lost, 10);
	lost += r.lost;

	/* the next GET_READER: page 1 again, 4 events, 7 stored, overrun 13 */
	sbe_init(&e, map.subbufs[1], SBS, 3000);
	for (i = 0; i < 4; i++)
		assert_true(sbe_event(&e, 3000 + i, NULL, 8, 0) >= 0);
	e.commit = e.off;
	sbe_finish(&e, 7);
	next_meta = map.meta;
	next_meta.reader.id = 1;
	next_meta.reader.read = e.commit;
	next_meta.overrun = 13;
	next_meta.entries = 12;
	next_meta.read = 12;
	have_next = 1;
	sbe_release(&e);
	assert_int_equal(tracemap_cpu_read_region(c, &r), 1);
	assert_int_equal(r.lost, 3);
	lost += r.lost;
	assert_int_equal(lost, 13);
	tracemap_cpu_close(c);
}

static void test_out_of_range(void **state)
{
	struct tracemap_region r;
	struct tracemap_cpu *c;

	tracemap_set_print(quiet, NULL);
	lay_out(2, 0);
	c = tm_cpu_open_memory(0, TRACEMAP_MODE_CONSUME, &map.meta, map.subbufs, SBS, NR, get_reader,
			       NULL);
	assert_non_null(c);
	map.meta.reader.id = NR;
	assert_int_equal(tracemap_cpu_read_region(c, &r), -EPROTO);
	map.meta.reader.id = 1;
	map.meta.reader.read = SBS;
	assert_int_equal(tracemap_cpu_read_region(c, &r), -EPROTO);
	tracemap_cpu_close(c);
	tracemap_set_print(NULL, NULL);
}

/*
 * After opening at read == 4, one GET_READER hands out page 2 with 4 events
 * while the read count says 4 + @taken + 4: @taken went to someone else.
 * @iterate: through tracemap_cpu_next_event(), else tracemap_cpu_read_region().
 */
static void stolen_run(unsigned int taken, bool iterate)
{
	struct tracemap_cpu_stats st;
	struct tracemap_region r;
	struct tracemap_event ev;
	struct tracemap_cpu *c;
	unsigned int events = 0;

	lay_out(4, 0);
	c = tm_cpu_open_memory(0, TRACEMAP_MODE_CONSUME, &map.meta, map.subbufs, SBS, NR, get_reader,
			       NULL);
	assert_non_null(c);
	next_page(-1, 0, 8 + taken);
	if (iterate) {
		while (tracemap_cpu_next_event(c, &ev) > 0 && events < 100)
			events++;
	} else {
		assert_int_equal(tracemap_cpu_read_region(c, &r), 1);
		events = 4;
	}
	assert_int_equal(events, 4);
	assert_int_equal(tracemap_cpu_stats(c, &st, sizeof(st)), 0);
	if (st.stolen != taken)
		fail_msg("%s: %u taken by another reader, %llu counted", iterate ? "iterator" :
			 "regions", taken, (unsigned long long)st.stolen);
	tracemap_cpu_close(c);
}

/* Counters whose sum wraps: nothing is unread, not the wrapped difference */
static void test_unread_no_wrap(void **state)
{
	struct tracemap_cpu_stats st = { .kernel_entries = 10, .kernel_overrun = UINT64_MAX,
					 .kernel_read = 2 };

	assert_int_equal(tracemap_cpu_stats_unread(&st), 0);
	st = (struct tracemap_cpu_stats){ .kernel_entries = 10, .kernel_read = 4,
					  .skipped = UINT64_MAX - 1 };
	assert_int_equal(tracemap_cpu_stats_unread(&st), 0);
	st = (struct tracemap_cpu_stats){ .kernel_entries = 10, .kernel_overrun = 1,
					  .kernel_read = 2, .skipped = 3 };
	assert_int_equal(tracemap_cpu_stats_unread(&st), 4);
}

static void test_stolen(void **state)
{
	tracemap_set_print(quiet, NULL);
	stolen_run(0, true);
	stolen_run(3, true);
	stolen_run(0, false);
	stolen_run(3, false);
	tracemap_set_print(NULL, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stolen),
		cmocka_unit_test(test_unread_no_wrap),
		cmocka_unit_test(test_overrun_too_big),
		cmocka_unit_test(test_stored_count_lies),
		cmocka_unit_test(test_loss_told_once),
		cmocka_unit_test(test_out_of_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
