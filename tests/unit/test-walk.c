// SPDX-License-Identifier: GPL-2.0-only
/*
 * The record walker (tm_walk_next, tm_walk_skip) on sub-buffers encoded like
 * the kernel's: every time stamp, offset, payload pointer and size exact.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "sbuf-encode.h"
#include "tracemap-local.h"

#define T0	1000000000000ULL	/* a page time stamp of ~17 minutes of uptime */

static const unsigned int sizes[] = { 4096, 8192, 16384, 65536 };

static unsigned char *data_of(const struct sbe *e)
{
	return e->page + SBE_HDR;
}

static uint32_t word_at(const struct sbe *e, unsigned int off)
{
	uint32_t w;

	memcpy(&w, data_of(e) + off, sizeof(w));
	return w;
}

/* Walk data[0, commit) and require exactly the encoder's records. */
static void check_walk(const struct sbe *e)
{
	struct tm_walk w = { data_of(e), 0, e->commit, e->page_ts };
	struct tm_rec rec;
	unsigned int i;

	for (i = 0; i < e->nr; i++) {
		const struct sbe_rec *x = &e->recs[i];

		assert_int_equal(tm_walk_next(&w, &rec), 1);
		assert_int_equal(rec.ts, x->ts);
		assert_int_equal(rec.off, x->off);
		assert_int_equal(rec.size, x->size);
		assert_ptr_equal(rec.payload, data_of(e) + x->payload_off);
	}
	assert_int_equal(tm_walk_next(&w, &rec), 0);
	assert_int_equal(w.off, e->commit);
	/* at the end it stays at the end */
	assert_int_equal(tm_walk_next(&w, &rec), 0);
}

static void test_small_events(void **state)
{
	unsigned char page[4096];
	unsigned int len, n = 0;
	uint64_t ts = T0;
	struct sbe e;

	sbe_init(&e, page, sizeof(page), T0);
	/* every payload length of a small record, 0..112: type_len 1..28 */
	for (len = 0; len <= SBE_MAX_SMALL; len++) {
		int off = sbe_event(&e, ts, NULL, len, 0);

		if (off == -ENOSPC)
			break;
		assert_true(off >= 0);
		assert_int_equal(word_at(&e, off) & 31, len ? (len + 3) / 4 : 1);
		n++;
		ts += len * 3;
	}
	/* 4080 bytes hold the records of lengths 0..84 (4040 bytes; 85 needs 92 more) */
	assert_int_equal(n, 85);
	assert_int_equal(e.off, 4040);
	sbe_finish(&e, 0);
	check_walk(&e);
	sbe_release(&e);
}

static void test_long_events(void **state)
{
	static const unsigned int lens[] = { 113, 114, 115, 116, 200, 1000, 0, 4, 112 };
	unsigned char page[8192];
	struct tm_walk w;
	struct tm_rec rec;
	struct sbe e;
	unsigned int i;
	int off;

	sbe_init(&e, page, sizeof(page), T0);
	for (i = 0; i < 6; i++) {
		off = sbe_event(&e, T0 + i * 100, NULL, lens[i], 0);
		assert_true(off >= 0);
		/* type_len 0, array[0] = aligned length + 4 */
		assert_int_equal(word_at(&e, off) & 31, 0);
		assert_int_equal(word_at(&e, off + 4), ((lens[i] + 3) & ~3u) + 4);
	}
	/* small payloads in long records, as RB_FORCE_8BYTE_ALIGNMENT arches write */
	for (; i < 9; i++) {
		off = sbe_event(&e, T0 + i * 100, NULL, lens[i], SBE_LONG);
		assert_true(off >= 0);
		assert_int_equal(word_at(&e, off) & 31, 0);
	}
	/* the largest record that fits the rest of the page */
	off = sbe_event(&e, T0 + 5000, NULL, e.data_size - e.off - 8, 0);
	assert_true(off >= 0);
	assert_int_equal(e.off, e.data_size);
	sbe_finish(&e, 0);
	check_walk(&e);

	w = (struct tm_walk){ data_of(&e), 0, e.commit, T0 };
	assert_int_equal(tm_walk_next(&w, &rec), 1);
	assert_int_equal(rec.size, 116);
	assert_int_equal(rec.off, 0);
	assert_ptr_equal(rec.payload, data_of(&e) + 8);
	assert_int_equal(w.off, 8 + 116);
	sbe_release(&e);
}

static void test_time_extend(void **state)
{
	unsigned char page[4096];
	uint64_t ts = T0, d;
	struct sbe e;
	int off;

	sbe_init(&e, page, sizeof(page), T0);
	assert_true(sbe_event(&e, ts, NULL, 8, 0) >= 0);

	/* the largest delta that fits the 27-bit field: no extend */
	ts += (1ULL << 27) - 1;
	off = sbe_event(&e, ts, NULL, 8, 0);
	assert_int_equal(word_at(&e, off), 2 | (((1u << 27) - 1) << 5));

	/* one more: TIME_EXTEND, then the event with delta 0 */
	ts += 1ULL << 27;
	off = sbe_event(&e, ts, NULL, 8, 0);
	assert_int_equal(word_at(&e, off - 8), SBE_TIME_EXTEND);
	assert_int_equal(word_at(&e, off - 4), 1);
	assert_int_equal(word_at(&e, off), 2);

	/* the 200 ms gap of the kernel-mmap notes (t7): delta_lo 65917267, array[0] 1 */
	ts += 200134995;
	off = sbe_event(&e, ts, NULL, 8, 0);
	assert_int_equal(word_at(&e, off - 8), SBE_TIME_EXTEND | (65917267u << 5));
	assert_int_equal(word_at(&e, off - 4), 1);

	/* huge gaps: 2^40 and just below 2^59 */
	ts += 1ULL << 40;
	assert_true(sbe_event(&e, ts, NULL, 0, 0) >= 0);
	d = (1ULL << 58) + 12345;
	ts += d;
	assert_true(sbe_event(&e, ts, NULL, 200, 0) >= 0);

	/* forced extend with a small delta, and standalone extends in a row */
	ts += 5;
	assert_true(sbe_event(&e, ts, NULL, 4, SBE_EXTEND) >= 0);
	ts += 77;
	assert_true(sbe_time_extend(&e, ts) >= 0);
	ts += (1ULL << 33) + 3;
	assert_true(sbe_time_extend(&e, ts) >= 0);
	ts += 9;
	assert_true(sbe_event(&e, ts, NULL, 12, 0) >= 0);
	sbe_finish(&e, 0);
	check_walk(&e);
	assert_int_equal(e.recs[e.nr - 1].ts, ts);
	assert_int_equal(ts, T0 + (1ULL << 27) - 1 + (1ULL << 27) + 200134995 + (1ULL << 40) + d +
			     5 + 77 + (1ULL << 33) + 3 + 9);
	sbe_release(&e);
}

static void test_time_stamp(void **state)
{
	/* the 5 top bits come from the running time: use a time that has them */
	const uint64_t base = (0x15ULL << 59) + 4242;
	struct tm_walk w;
	unsigned char page[4096];
	struct tm_rec rec;
	struct sbe e;
	int off;

	sbe_init(&e, page, sizeof(page), base);
	assert_true(sbe_event(&e, base, NULL, 8, 0) >= 0);
	assert_true(sbe_event(&e, base + 100, NULL, 8, 0) >= 0);
	/* an interrupting writer: absolute stamp back in time */
	off = sbe_event(&e, base + 40, NULL, 8, SBE_ABS);
	assert_true(off >= 0);
	assert_int_equal(word_at(&e, off - 8) & 31, SBE_TIME_STAMP);
	assert_int_equal(word_at(&e, off), 2);
	assert_true(sbe_event(&e, base + 45, NULL, 8, 0) >= 0);
	/* forward by more than 27 bits with an absolute stamp */
	assert_true(sbe_event(&e, base + (1ULL << 50) + 7, NULL, 120, SBE_ABS) >= 0);
	assert_true(sbe_time_stamp(&e, base + 3) >= 0);
	assert_true(sbe_event(&e, base + 3, NULL, 4, 0) >= 0);
	/* an absolute stamp that would change the top bits is not encodable */
	assert_int_equal(sbe_time_stamp(&e, base + (1ULL << 59)), -ERANGE);
	sbe_finish(&e, 0);
	check_walk(&e);

	/* the top bits really come from the running time, not the record */
	w = (struct tm_walk){ data_of(&e), (unsigned int)off - 8, e.commit, 0 };
	assert_int_equal(tm_walk_next(&w, &rec), 1);
	assert_int_equal(rec.ts, 4242 + 40);
	w = (struct tm_walk){ data_of(&e), (unsigned int)off - 8, e.commit, 0x1fULL << 59 };
	assert_int_equal(tm_walk_next(&w, &rec), 1);
	assert_int_equal(rec.ts, (0x1fULL << 59) + 4242 + 40);
	sbe_release(&e);
}

static void test_padding(void **state)
{
	unsigned char page[4096];
	struct tm_walk w;
	struct tm_rec rec;
	struct sbe e;
	int off;

	sbe_init(&e, page, sizeof(page), T0);
	assert_true(sbe_event(&e, T0, NULL, 8, 0) >= 0);
	/* discarded at the same time: the kernel makes its delta 1 */
	off = sbe_discard(&e, T0, 8);
	assert_int_equal(word_at(&e, off), SBE_PADDING | (1 << 5));
	assert_int_equal(word_at(&e, off + 4), 8);
	/* the next delta is relative to T0 + 1, as kbuffer adds padding deltas */
	off = sbe_event(&e, T0 + 5, NULL, 8, 0);
	assert_int_equal(word_at(&e, off), 2 | (4 << 5));
	/* discarded long event with a delta of its own */
	off = sbe_discard(&e, T0 + 50, 300);
	assert_int_equal(word_at(&e, off), SBE_PADDING | (45 << 5));
	assert_int_equal(word_at(&e, off + 4), 304);
	assert_true(sbe_event(&e, T0 + 51, NULL, 20, 0) >= 0);
	/* discarded event behind a time extend: the extend stays */
	assert_true(sbe_discard(&e, T0 + 51 + (1ULL << 30), 16) >= 0);
	assert_true(sbe_event(&e, T0 + 60 + (1ULL << 30), NULL, 20, 0) >= 0);
	sbe_finish(&e, 0);
	check_walk(&e);

	w = (struct tm_walk){ data_of(&e), 0, e.commit, T0 };
	assert_int_equal(tm_walk_next(&w, &rec), 1);
	assert_int_equal(tm_walk_next(&w, &rec), 1);
	assert_int_equal(rec.ts, T0 + 5);
	assert_int_equal(rec.off, 12 + 12);
	sbe_release(&e);
}

/* rb_reset_tail(): a filler of delta 1 to the end of the page, in commit */
static void test_end_filler(void **state)
{
	unsigned char page[4096];
	struct sbe e;
	int i;

	sbe_init(&e, page, sizeof(page), T0);
	for (i = 0; i < 40; i++)
		assert_true(sbe_event(&e, T0 + i * 10, NULL, 92, 0) >= 0);
	assert_int_equal(e.off, 40 * 96);
	sbe_end_page(&e);
	assert_int_equal(e.commit, 4080);
	assert_int_equal(e.real_end, 3840);
	assert_int_equal(word_at(&e, 3840), SBE_PADDING | (1 << 5));
	assert_int_equal(word_at(&e, 3844), 4080 - 3840 - 4);
	sbe_finish(&e, 0);
	check_walk(&e);
	sbe_release(&e);
}

/* 4 bytes left: a null padding beyond commit; 0 left: nothing */
static void test_end_exact(void **state)
{
	unsigned char page[4096];
	struct sbe e;
	int i;

	sbe_init(&e, page, sizeof(page), T0);
	/* 4080 = 50 * 80 + 76 + 4 */
	for (i = 0; i < 50; i++)
		assert_true(sbe_event(&e, T0 + i, NULL, 76, 0) >= 0);
	assert_true(sbe_event(&e, T0 + 50, NULL, 72, 0) >= 0);
	assert_int_equal(e.data_size - e.off, 4);
	assert_int_equal(sbe_event(&e, T0 + 99, NULL, 0, 0), -ENOSPC);
	sbe_end_page(&e);
	assert_int_equal(e.commit, 4076);
	assert_int_equal(word_at(&e, 4076), SBE_PADDING);
	sbe_finish(&e, 0);
	check_walk(&e);
	sbe_release(&e);

	sbe_init(&e, page, sizeof(page), T0);
	for (i = 0; i < 51; i++)
		assert_true(sbe_event(&e, T0 + i, NULL, 76, 0) >= 0);
	assert_int_equal(e.off, 4080);
	sbe_end_page(&e);
	assert_int_equal(e.real_end, 0);
	sbe_finish(&e, 0);
	check_walk(&e);
	sbe_release(&e);
}

/* a null padding inside commit ends the data; stale bytes after it are ignored */
static void test_null_padding(void **state)
{
	unsigned char page[8192];
	struct tm_walk w;
	struct tm_rec rec;
	struct sbe e;

	sbe_init(&e, page, sizeof(page), T0);
	assert_true(sbe_event(&e, T0, NULL, 8, 0) >= 0);
	assert_true(sbe_event(&e, T0 + 1, NULL, 8, 0) >= 0);
	assert_int_equal(sbe_null_pad(&e, 1), 24);
	assert_int_equal(e.commit, 8176);
	sbe_finish(&e, 0);
	check_walk(&e);

	/* also when its array[0] says nothing sensible */
	memset(data_of(&e) + 28, 0xff, 4);
	w = (struct tm_walk){ data_of(&e), 0, e.commit, T0 };
	assert_int_equal(tm_walk_next(&w, &rec), 1);
	assert_int_equal(tm_walk_next(&w, &rec), 1);
	assert_int_equal(tm_walk_next(&w, &rec), 0);
	assert_int_equal(w.off, e.commit);
	sbe_release(&e);
}

/* random pages of every sub-buffer size, with and without the end filler */
static void test_random_pages(void **state)
{
	unsigned int i, s;
	uint64_t seed = 1;
	struct sbe e;

	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		unsigned char *page = malloc(sizes[s]);

		assert_non_null(page);
		for (i = 0; i < 40; i++) {
			int n = sbe_fill_random(&e, page, sizes[s], T0 + i * 1000000, &seed,
						i & 1, 0);

			assert_true(n > 0);
			assert_int_equal(n, e.nr);
			check_walk(&e);
			sbe_release(&e);
		}
		free(page);
	}
}

/* tm_walk_skip() to every record boundary, then the record found there */
static void test_skip(void **state)
{
	unsigned char page[8192];
	uint64_t seed = 7, ts;
	struct tm_walk w;
	struct tm_rec rec;
	unsigned int i, j;
	struct sbe e;

	assert_true(sbe_fill_random(&e, page, sizeof(page), T0, &seed, 1, 0) > 0);
	for (i = 0; i < e.nr; i++) {
		const struct sbe_rec *x = &e.recs[i];

		w = (struct tm_walk){ data_of(&e), 0, e.commit, T0 };
		assert_int_equal(tm_walk_skip(&w, x->off), 0);
		assert_int_equal(w.off, x->off);
		assert_int_equal(w.end, e.commit);
		assert_int_equal(w.ts, x->prev_ts);
		assert_int_equal(tm_walk_next(&w, &rec), 1);
		assert_int_equal(rec.ts, x->ts);
		assert_int_equal(rec.off, x->off);

		/* from the previous record on, as a reader resuming at its offset */
		if (i) {
			w = (struct tm_walk){ data_of(&e), e.recs[i - 1].off, e.commit,
					      e.recs[i - 1].prev_ts };
			assert_int_equal(tm_walk_skip(&w, x->off), 0);
			assert_int_equal(w.ts, x->prev_ts);
		}

		/* inside the record: not a boundary */
		w = (struct tm_walk){ data_of(&e), 0, e.commit, T0 };
		assert_int_equal(tm_walk_skip(&w, x->off + 4), -EBADMSG);
		assert_int_equal(errno, EBADMSG);
		assert_int_equal(w.end, e.commit);
	}
	/* every committed record start, data or not, is a boundary */
	for (j = 0; j < e.nr_starts; j++) {
		w = (struct tm_walk){ data_of(&e), 0, e.commit, T0 };
		assert_int_equal(tm_walk_skip(&w, e.starts[j]), 0);
	}
	/* to the end: the time after the last record (the filler adds 1) */
	w = (struct tm_walk){ data_of(&e), 0, e.commit, T0 };
	assert_int_equal(tm_walk_skip(&w, e.commit), 0);
	ts = e.ts;
	assert_int_equal(w.ts, ts);
	/* backwards and past the end are refused */
	assert_int_equal(tm_walk_skip(&w, e.recs[0].off), -EBADMSG);
	w = (struct tm_walk){ data_of(&e), 0, e.commit, T0 };
	assert_int_equal(tm_walk_skip(&w, e.commit + 4), -EBADMSG);
	assert_int_equal(w.off, 0);
	sbe_release(&e);
}

/* a window [start, end) of a page, as a region of the consuming reader */
static void test_window(void **state)
{
	unsigned char page[4096];
	uint64_t seed = 99;
	struct tm_walk w;
	struct tm_rec rec;
	unsigned int a, b, i;
	struct sbe e;

	assert_true(sbe_fill_random(&e, page, sizeof(page), T0, &seed, 0, 0) > 10);
	for (a = 0; a < e.nr; a += 3) {
		for (b = a; b <= e.nr; b += 4) {
			unsigned int end = b < e.nr ? e.recs[b].off : e.commit;

			w = (struct tm_walk){ data_of(&e), e.recs[a].off, end, e.recs[a].prev_ts };
			for (i = a; i < b; i++) {
				assert_int_equal(tm_walk_next(&w, &rec), 1);
				assert_int_equal(rec.ts, e.recs[i].ts);
				assert_int_equal(rec.off, e.recs[i].off);
			}
			/* a time record just before the next event may be in the window */
			assert_int_equal(tm_walk_next(&w, &rec), 0);
			assert_int_equal(w.off, end);
		}
	}
	sbe_release(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_events),
		cmocka_unit_test(test_long_events),
		cmocka_unit_test(test_time_extend),
		cmocka_unit_test(test_time_stamp),
		cmocka_unit_test(test_padding),
		cmocka_unit_test(test_end_filler),
		cmocka_unit_test(test_end_exact),
		cmocka_unit_test(test_null_padding),
		cmocka_unit_test(test_random_pages),
		cmocka_unit_test(test_skip),
		cmocka_unit_test(test_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
