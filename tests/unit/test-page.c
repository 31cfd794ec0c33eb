// SPDX-License-Identifier: GPL-2.0-only
/*
 * Sub-buffer level helpers: the lost-events word (tm_subbuf_lost), the page
 * writer (tm_subbuf_write, tracemap_region_write_subbuf) and the validated
 * copy (tm_subbuf_copy), on pages encoded like the kernel's.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "sbuf-encode.h"
#include "tracemap-local.h"

#define T0	5000000000ULL

static const unsigned int sizes[] = { 4096, 8192, 65536 };

static uint64_t commit_of(const void *page)
{
	uint64_t c;

	memcpy(&c, (const unsigned char *)page + 8, sizeof(c));
	return c;
}

static uint64_t ts_of(const void *page)
{
	uint64_t t;

	memcpy(&t, page, sizeof(t));
	return t;
}

/*
 * A page of events at T0, T0+10, ... filling exactly @used data bytes: 12-byte
 * records, the last one 8 or 16 bytes when @used is not a multiple of 12.
 */
static void fill_events(struct sbe *e, void *page, unsigned int subbuf_size, unsigned int used)
{
	unsigned int i;

	sbe_init(e, page, subbuf_size, T0);
	for (i = 0; used - e->off >= 20 || used - e->off == 12; i++)
		assert_true(sbe_event(e, T0 + i * 10, NULL, 8, 0) >= 0);
	if (used > e->off)
		assert_true(sbe_event(e, T0 + i * 10, NULL, used - e->off - 4, 0) >= 0);
	assert_int_equal(e->off, used);
}

static void test_lost_none(void **state)
{
	unsigned char *page = malloc(4096);
	struct sbe e;

	assert_non_null(page);
	fill_events(&e, page, 4096, 120);
	sbe_finish(&e, 0);
	assert_int_equal(commit_of(page), 120);
	assert_int_equal(tm_subbuf_lost(page, 4096), 0);
	/* a STORED bit without MISSED means nothing */
	memcpy(page + 8, &(uint64_t){ 120 | SBE_MISSED_STORED }, 8);
	assert_int_equal(tm_subbuf_lost(page, 4096), 0);
	sbe_release(&e);
	free(page);
}

static void test_lost_stored(void **state)
{
	unsigned int s;

	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		/* exactly the size: ASan catches a read past the page */
		unsigned char *page = malloc(sizes[s]);
		unsigned int data = sizes[s] - 16;
		struct sbe e;

		assert_non_null(page);
		/* the kernel-mmap notes observed commit 0xffffffffc0000fd0 with 792 lost */
		fill_events(&e, page, sizes[s], data - 32);
		sbe_finish(&e, 792);
		assert_int_equal(e.missed_stored, 1);
		if (sizes[s] == 4096)
			assert_int_equal(commit_of(page), 0xffffffffc0000fd0ULL);
		assert_int_equal(commit_of(page), sbe_commit_word(data - 32, 1, 1));
		assert_int_equal(tm_subbuf_lost(page, sizes[s]), 792);
		sbe_release(&e);

		/* just room for the count: 8 bytes left */
		fill_events(&e, page, sizes[s], data - 8);
		sbe_finish(&e, 1LL << 40);
		assert_int_equal(e.missed_stored, 1);
		assert_int_equal(tm_subbuf_lost(page, sizes[s]), 1LL << 40);
		sbe_release(&e);
		free(page);
	}
}

static void test_lost_no_room(void **state)
{
	unsigned int s;

	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		unsigned char *page = malloc(sizes[s]);
		unsigned int data = sizes[s] - 16;
		struct sbe e;

		assert_non_null(page);
		/* 4 bytes left: no room for the long count, MISSED alone */
		fill_events(&e, page, sizes[s], data - 4);
		sbe_finish(&e, 50);
		assert_int_equal(e.missed_stored, 0);
		assert_int_equal(commit_of(page), 0xffffffff80000000ULL + data - 4);
		assert_int_equal(tm_subbuf_lost(page, sizes[s]), TRACEMAP_LOST_UNKNOWN);
		sbe_release(&e);

		/* a page filled to the last byte */
		fill_events(&e, page, sizes[s], data);
		sbe_finish(&e, 3);
		assert_int_equal(tm_subbuf_lost(page, sizes[s]), TRACEMAP_LOST_UNKNOWN);

		/* STORED claimed without room: never read past the page */
		memcpy(page + 8, &(uint64_t){ sbe_commit_word(data, 1, 1) }, 8);
		assert_int_equal(tm_subbuf_lost(page, sizes[s]), TRACEMAP_LOST_UNKNOWN);
		memcpy(page + 8, &(uint64_t){ sbe_commit_word(data - 7, 1, 1) }, 8);
		assert_int_equal(tm_subbuf_lost(page, sizes[s]), TRACEMAP_LOST_UNKNOWN);
		/* commit beyond the page */
		memcpy(page + 8, &(uint64_t){ sbe_commit_word(0xfffff, 1, 1) }, 8);
		assert_int_equal(tm_subbuf_lost(page, sizes[s]), TRACEMAP_LOST_UNKNOWN);
		memcpy(page + 8, &(uint64_t){ 0xffffffffffffffffULL }, 8);
		assert_int_equal(tm_subbuf_lost(page, sizes[s]), TRACEMAP_LOST_UNKNOWN);
		sbe_release(&e);

		/* MISSED only: the kernel could not store a count */
		fill_events(&e, page, sizes[s], 240);
		sbe_finish(&e, -1);
		assert_int_equal(commit_of(page), 0xffffffff80000000ULL + 240);
		assert_int_equal(tm_subbuf_lost(page, sizes[s]), TRACEMAP_LOST_UNKNOWN);
		sbe_release(&e);
		free(page);
	}
}

/* ring_buffer_map_get_reader(): with a lost count, commit falls back to real_end */
static void test_lost_real_end(void **state)
{
	unsigned char page[4096];
	struct tm_walk w;
	struct tm_rec rec;
	struct sbe e;
	int n = 0;

	fill_events(&e, page, sizeof(page), 3000);
	sbe_end_page(&e);
	assert_int_equal(e.commit, 4080);
	sbe_finish(&e, 17);
	assert_int_equal(e.commit, 3000);
	assert_int_equal((uint32_t)commit_of(page), 3000 | SBE_MISSED_EVENTS | SBE_MISSED_STORED);
	assert_int_equal(tm_subbuf_lost(page, sizeof(page)), 17);
	w = (struct tm_walk){ page + 16, 0, TM_COMMIT_SIZE(commit_of(page)), ts_of(page) };
	while (tm_walk_next(&w, &rec) == 1)
		assert_int_equal(rec.ts, e.recs[n++].ts);
	assert_int_equal(n, 250);
	assert_int_equal(n, e.nr);
	sbe_release(&e);
}

/* Decode @page (header and commit as written) and compare to recs[a, b) of the source. */
static void check_rebased(const unsigned char *page, unsigned int subbuf_size,
			  const struct sbe *src, unsigned int a, unsigned int b, unsigned int start)
{
	unsigned int len = TM_COMMIT_SIZE(commit_of(page)), i;
	struct tm_walk w = { page + 16, 0, len, ts_of(page) };
	struct tm_rec rec;

	for (i = a; i < b; i++) {
		const struct sbe_rec *x = &src->recs[i];

		assert_int_equal(tm_walk_next(&w, &rec), 1);
		assert_int_equal(rec.ts, x->ts);
		assert_int_equal(rec.off, x->off - start);
		assert_int_equal(rec.size, x->size);
		assert_memory_equal(rec.payload, src->page + 16 + x->payload_off, x->size);
	}
	assert_int_equal(tm_walk_next(&w, &rec), 0);
	assert_int_equal(w.off, len);
}

static int all_zero(const unsigned char *p, unsigned int n)
{
	while (n--)
		if (*p++)
			return 0;
	return 1;
}

static void test_write_whole_page(void **state)
{
	uint64_t seed = 3;
	unsigned int s;

	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		unsigned char *src = malloc(sizes[s]), *dst = malloc(sizes[s]);
		struct sbe e;

		assert_non_null(src);
		assert_non_null(dst);
		assert_true(sbe_fill_random(&e, src, sizes[s], T0, &seed, 1, 0) > 0);
		memset(dst, 0x5a, sizes[s]);
		assert_int_equal(tm_subbuf_write(dst, sizes[s], src + 16, 0, e.commit, T0, 0),
				 (int)sizes[s]);
		/* no loss: the same bytes up to commit, zeros after */
		assert_memory_equal(dst, src, 16 + e.commit);
		assert_true(all_zero(dst + 16 + e.commit, sizes[s] - 16 - e.commit));
		check_rebased(dst, sizes[s], &e, 0, e.nr, 0);
		sbe_release(&e);
		free(src);
		free(dst);
	}
}

/* regions starting and ending at every few records, with base_ts */
static void test_write_regions(void **state)
{
	uint64_t seed = 11;
	unsigned int s;

	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		unsigned char *src = malloc(sizes[s]), *dst = malloc(sizes[s]);
		unsigned int a, b, step;
		struct sbe e;

		assert_non_null(src);
		assert_non_null(dst);
		assert_true(sbe_fill_random(&e, src, sizes[s], T0, &seed, 0, 0) > 20);
		step = e.nr / 12 + 1;
		for (a = 0; a < e.nr; a += step) {
			for (b = a; b <= e.nr; b += step) {
				struct tracemap_region r = {
					.subbuf = src,
					.data = src + 16,
					.page_ts = T0,
					.base_ts = e.recs[a].prev_ts,
					.subbuf_size = sizes[s],
					.start = e.recs[a].off,
					.end = b < e.nr ? e.recs[b].off : e.commit,
				};
				unsigned int len = r.end - r.start;

				memset(dst, 0x5a, sizes[s]);
				assert_int_equal(tracemap_region_write_subbuf(&r, dst, sizes[s]),
						 (int)sizes[s]);
				assert_int_equal(ts_of(dst), e.recs[a].prev_ts);
				assert_int_equal(commit_of(dst), len);
				assert_memory_equal(dst + 16, src + 16 + r.start, len);
				assert_true(all_zero(dst + 16 + len, sizes[s] - 16 - len));
				check_rebased(dst, sizes[s], &e, a, b, r.start);
			}
		}
		sbe_release(&e);
		free(src);
		free(dst);
	}
}

/* a region that begins with the TIME_EXTEND / absolute stamp of its first event */
static void test_write_region_time_records(void **state)
{
	unsigned char src[4096], dst[4096];
	struct tracemap_region r;
	uint64_t before;
	struct sbe e;
	int ext, abs_off;

	sbe_init(&e, src, sizeof(src), T0);
	assert_true(sbe_event(&e, T0, NULL, 8, 0) >= 0);
	before = e.ts;
	ext = sbe_time_extend(&e, T0 + (1ULL << 35));
	assert_true(ext >= 0);
	assert_true(sbe_event(&e, T0 + (1ULL << 35) + 3, NULL, 40, 0) >= 0);
	abs_off = sbe_event(&e, T0 + 77, NULL, 8, SBE_ABS);
	assert_true(abs_off >= 0);
	assert_true(sbe_event(&e, T0 + 80, NULL, 200, 0) >= 0);
	sbe_finish(&e, 0);

	r = (struct tracemap_region){
		.subbuf = src, .data = src + 16, .page_ts = T0, .base_ts = before,
		.subbuf_size = sizeof(src), .start = ext, .end = e.commit,
	};
	assert_int_equal(tracemap_region_write_subbuf(&r, dst, sizeof(dst)), 4096);
	check_rebased(dst, sizeof(dst), &e, 1, e.nr, ext);

	/* starting at the absolute stamp: any base time gives the same times */
	r.start = abs_off - 8;
	r.base_ts = 12345;
	assert_int_equal(tracemap_region_write_subbuf(&r, dst, sizeof(dst)), 4096);
	check_rebased(dst, sizeof(dst), &e, 2, e.nr, abs_off - 8);
	sbe_release(&e);
}

static void test_write_lost(void **state)
{
	unsigned int s;

	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		unsigned char *src = malloc(sizes[s]), *dst = malloc(sizes[s]);
		unsigned int data = sizes[s] - 16, used;
		struct tracemap_region r;
		long stored;
		struct sbe e;

		assert_non_null(src);
		assert_non_null(dst);
		fill_events(&e, src, sizes[s], 600);
		sbe_finish(&e, 0);
		r = (struct tracemap_region){
			.subbuf = src, .data = src + 16, .page_ts = T0,
			.base_ts = e.recs[10].prev_ts, .subbuf_size = sizes[s],
			.start = e.recs[10].off, .end = e.recs[30].off, .lost = (1LL << 33) + 4321,
		};
		/* a count that fits: MISSED|STORED, the long after the data, zeros after it */
		memset(dst, 0x5a, sizes[s]);
		assert_int_equal(tracemap_region_write_subbuf(&r, dst, sizes[s]), (int)sizes[s]);
		assert_int_equal((uint32_t)commit_of(dst),
				 240 | SBE_MISSED_EVENTS | SBE_MISSED_STORED);
		memcpy(&stored, dst + 16 + 240, sizeof(stored));
		assert_int_equal(stored, (1LL << 33) + 4321);
		assert_true(all_zero(dst + 16 + 248, data - 248));
		assert_int_equal(tm_subbuf_lost(dst, sizes[s]), (1LL << 33) + 4321);
		check_rebased(dst, sizes[s], &e, 10, 30, r.start);

		/* an unknown count: MISSED alone, nothing stored */
		r.lost = TRACEMAP_LOST_UNKNOWN;
		memset(dst, 0x5a, sizes[s]);
		assert_int_equal(tracemap_region_write_subbuf(&r, dst, sizes[s]), (int)sizes[s]);
		assert_int_equal((uint32_t)commit_of(dst), 240 | SBE_MISSED_EVENTS);
		assert_true(all_zero(dst + 16 + 240, data - 240));
		assert_int_equal(tm_subbuf_lost(dst, sizes[s]), TRACEMAP_LOST_UNKNOWN);
		sbe_release(&e);

		/* data up to the last byte, or 4 bytes short of it: no room for the count */
		for (used = data; used >= data - 4; used -= 4) {
			fill_events(&e, src, sizes[s], used);
			sbe_finish(&e, 0);
			r.start = 0;
			r.end = used;
			r.base_ts = T0;
			r.lost = 9;
			assert_int_equal(tracemap_region_write_subbuf(&r, dst, sizes[s]),
					 (int)sizes[s]);
			assert_int_equal((uint32_t)commit_of(dst), used | SBE_MISSED_EVENTS);
			assert_int_equal(tm_subbuf_lost(dst, sizes[s]), TRACEMAP_LOST_UNKNOWN);
			check_rebased(dst, sizes[s], &e, 0, e.nr, 0);
			sbe_release(&e);
		}

		/* exactly 8 bytes left: the count fits */
		fill_events(&e, src, sizes[s], data - 8);
		sbe_finish(&e, 0);
		r.end = data - 8;
		assert_int_equal(tracemap_region_write_subbuf(&r, dst, sizes[s]), (int)sizes[s]);
		assert_int_equal((uint32_t)commit_of(dst), (data - 8) | SBE_MISSED_EVENTS |
							  SBE_MISSED_STORED);
		assert_int_equal(tm_subbuf_lost(dst, sizes[s]), 9);
		check_rebased(dst, sizes[s], &e, 0, e.nr, 0);
		sbe_release(&e);
		free(src);
		free(dst);
	}
}

static void test_write_errors(void **state)
{
	unsigned char src[4096], dst[4096];
	struct tracemap_region r = {
		.subbuf = src, .data = src + 16, .subbuf_size = sizeof(src), .start = 8, .end = 4,
	};

	memset(src, 0, sizeof(src));
	/* end before start */
	assert_int_equal(tracemap_region_write_subbuf(&r, dst, sizeof(dst)), -EINVAL);
	assert_int_equal(errno, EINVAL);
	/* more data than a page holds (a commit larger than the page) */
	r.start = 0;
	r.end = 4081;
	assert_int_equal(tracemap_region_write_subbuf(&r, dst, sizeof(dst)), -EINVAL);
	assert_int_equal(tm_subbuf_write(dst, 4096, src + 16, 0, 0xfffff, 0, 0), -EINVAL);
	assert_int_equal(tm_subbuf_write(dst, 8, src + 16, 0, 0, 0, 0), -EINVAL);
	/* a destination smaller than the sub-buffer */
	r.end = 8;
	assert_int_equal(tracemap_region_write_subbuf(&r, dst, 4095), -EINVAL);
	assert_int_equal(tracemap_region_write_subbuf(NULL, dst, 4096), -EINVAL);
	assert_int_equal(tracemap_region_write_subbuf(&r, NULL, 4096), -EINVAL);
	/* records past the end of the sub-buffer, though no longer than a page */
	r.start = UINT_MAX - 10;
	r.end = UINT_MAX - 5;
	assert_int_equal(tracemap_region_write_subbuf(&r, dst, sizeof(dst)), -EINVAL);
	r.start = 4000;
	r.end = 4100;
	assert_int_equal(tracemap_region_write_subbuf(&r, dst, sizeof(dst)), -EINVAL);
	assert_int_equal(tm_subbuf_write(dst, 4096, src + 16, 4080, 4081, 0, 0), -EINVAL);
	/* records but no data, a sub-buffer without room for its header, a lost count below -1 */
	r.start = 0;
	r.end = 8;
	r.data = NULL;
	assert_int_equal(tracemap_region_write_subbuf(&r, dst, sizeof(dst)), -EINVAL);
	r.data = src + 16;
	r.subbuf_size = 8;
	assert_int_equal(tracemap_region_write_subbuf(&r, dst, sizeof(dst)), -EINVAL);
	r.subbuf_size = sizeof(src);
	r.lost = -2;
	assert_int_equal(tracemap_region_write_subbuf(&r, dst, sizeof(dst)), -EINVAL);
	r.lost = 0;
	/* a gap with nothing after it: no data, no records, an empty page with the flag */
	r.data = NULL;
	r.start = r.end = 0;
	r.lost = TRACEMAP_LOST_UNKNOWN;
	assert_int_equal(tracemap_region_write_subbuf(&r, dst, sizeof(dst)), 4096);
	assert_int_equal(commit_of(dst) & (1u << 31), 1u << 31);
	r.data = src + 16;
	r.lost = 0;
	/* an empty region is a valid empty page */
	r.end = 8;
	r.start = 8;
	r.base_ts = 99;
	memset(dst, 0x5a, sizeof(dst));
	assert_int_equal(tracemap_region_write_subbuf(&r, dst, sizeof(dst)), 4096);
	assert_int_equal(ts_of(dst), 99);
	assert_int_equal(commit_of(dst), 0);
	assert_true(all_zero(dst + 16, 4080));
}

static void test_copy(void **state)
{
	unsigned char *src = malloc(8192), *dst = malloc(8192);
	unsigned int size = 0;
	uint64_t seed = 5, ts = 0;
	struct sbe e;

	assert_non_null(src);
	assert_non_null(dst);
	assert_true(sbe_fill_random(&e, src, 8192, T0, &seed, 0, 77) > 0);
	assert_int_equal(tm_subbuf_copy(dst, src, 8192, &ts, &size), 0);
	assert_int_equal(ts, T0);
	assert_int_equal(size, e.commit);
	/* header with its flags and the data up to commit */
	assert_memory_equal(dst, src, 16 + e.commit);
	/* a commit larger than the page is refused, not copied */
	memcpy(src + 8, &(uint64_t){ 8177 }, 8);
	assert_int_equal(tm_subbuf_copy(dst, src, 8192, &ts, &size), -EAGAIN);
	memcpy(src + 8, &(uint64_t){ 8176 }, 8);
	assert_int_equal(tm_subbuf_copy(dst, src, 8192, &ts, &size), 0);
	assert_int_equal(size, 8176);
	sbe_release(&e);
	free(src);
	free(dst);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lost_none),
		cmocka_unit_test(test_lost_stored),
		cmocka_unit_test(test_lost_no_room),
		cmocka_unit_test(test_lost_real_end),
		cmocka_unit_test(test_write_whole_page),
		cmocka_unit_test(test_write_regions),
		cmocka_unit_test(test_write_region_time_records),
		cmocka_unit_test(test_write_lost),
		cmocka_unit_test(test_write_errors),
		cmocka_unit_test(test_copy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
