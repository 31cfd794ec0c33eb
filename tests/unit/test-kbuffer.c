// SPDX-License-Identifier: GPL-2.0-only
/*
 * libtracemap's walker against libtraceevent's kbuffer on the same
 * sub-buffers: the same records, time stamps, offsets, sizes and lost
 * counts, also for pages tm_subbuf_write() produced from a mid-page region.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <kbuffer.h>

#include "harness.h"
#include "sbuf-encode.h"
#include "tracemap-local.h"

static const unsigned int sizes[] = { 4096, 8192, 16384, 65536 };
static const long long losts[] = { 0, 1234, -1 };

static struct kbuffer *kb_new(void)
{
	/* the 64-bit kernel layout: 8-byte commit, data at 16 */
	struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_SAME_AS_HOST);

	assert_non_null(kb);
	return kb;
}

/*
 * Walk @page with both parsers; every record must agree field by field.
 * Returns the number of records.
 */
static unsigned int compare_page(struct kbuffer *kb, unsigned char *page, unsigned int subbuf_size)
{
	uint64_t commit;
	struct tm_walk w;
	struct tm_rec rec;
	unsigned long long kts;
	unsigned int n = 0;
	void *kdata;
	int ret;

	memcpy(&commit, page + 8, sizeof(commit));
	w = (struct tm_walk){ page + 16, 0, TM_COMMIT_SIZE(commit), *(uint64_t *)page };
	assert_int_equal(kbuffer_load_subbuffer(kb, page), 0);
	assert_int_equal(kbuffer_subbuffer_size(kb), TM_COMMIT_SIZE(commit));

	kdata = kbuffer_read_event(kb, &kts);
	while ((ret = tm_walk_next(&w, &rec)) == 1) {
		assert_non_null(kdata);
		assert_ptr_equal(kdata, rec.payload);
		assert_int_equal(kts, rec.ts);
		assert_int_equal(kbuffer_curr_index(kb), rec.off);
		assert_int_equal(kbuffer_curr_offset(kb), 16 + rec.off);
		assert_int_equal(kbuffer_event_size(kb), rec.size);
		assert_int_equal(kbuffer_curr_size(kb),
				 rec.payload - (page + 16 + rec.off) + rec.size);
		if (rec.off == 0)
			assert_int_equal(kbuffer_missed_events(kb),
					 tm_subbuf_lost(page, subbuf_size));
		n++;
		kdata = kbuffer_next_event(kb, &kts);
	}
	assert_int_equal(ret, 0);
	assert_null(kdata);
	return n;
}

/* kbuffer_read_at_offset() on every record offset finds the walker's record */
static void compare_offsets(struct kbuffer *kb, unsigned char *page, const struct sbe *e)
{
	unsigned long long kts;
	unsigned int i;
	void *kdata;

	assert_int_equal(kbuffer_load_subbuffer(kb, page), 0);
	for (i = 0; i < e->nr; i++) {
		kdata = kbuffer_read_at_offset(kb, 16 + e->recs[i].off, &kts);
		assert_ptr_equal(kdata, page + 16 + e->recs[i].payload_off);
		assert_int_equal(kts, e->recs[i].ts);
	}
}

static void test_random_pages(void **state)
{
	struct kbuffer *kb = kb_new();
	unsigned int s, i, l;
	uint64_t seed = 42;
	struct sbe e;

	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		unsigned char *page = malloc(sizes[s]);

		assert_non_null(page);
		for (i = 0; i < 24; i++) {
			/* page times with and without the 5 top bits set */
			uint64_t t0 = (i & 4) ? (0x15ULL << 59) + i : 1000000ULL * i;

			l = i % 3;
			assert_true(sbe_fill_random(&e, page, sizes[s], t0, &seed, i & 1,
						    losts[l]) > 0);
			assert_int_equal(compare_page(kb, page, sizes[s]), e.nr);
			if (i < 4)
				compare_offsets(kb, page, &e);
			/* what the kernel stored is what both report */
			if (e.recs[0].off == 0) {
				assert_int_equal(kbuffer_load_subbuffer(kb, page), 0);
				assert_int_equal(kbuffer_missed_events(kb),
						 losts[l] > 0 && !e.missed_stored ? -1 :
						 losts[l]);
			}
			sbe_release(&e);
		}
		free(page);
	}
	kbuffer_free(kb);
}

/* every record kind by hand, including the 1 ns padding deltas kbuffer adds */
static void test_all_kinds(void **state)
{
	struct kbuffer *kb = kb_new();
	const uint64_t t0 = 123456789;
	unsigned char page[4096];
	struct sbe e;

	sbe_init(&e, page, sizeof(page), t0);
	assert_true(sbe_event(&e, t0, NULL, 0, 0) >= 0);
	assert_true(sbe_event(&e, t0, NULL, 112, 0) >= 0);
	assert_true(sbe_event(&e, t0 + 1, NULL, 113, 0) >= 0);
	assert_true(sbe_event(&e, t0 + 2, NULL, 5, SBE_LONG) >= 0);
	assert_true(sbe_discard(&e, t0 + 2, 40) >= 0);
	assert_true(sbe_discard(&e, t0 + 9, 400) >= 0);
	assert_true(sbe_event(&e, t0 + 10, NULL, 8, 0) >= 0);
	assert_true(sbe_event(&e, t0 + (1ULL << 27), NULL, 8, 0) >= 0);
	assert_true(sbe_time_extend(&e, t0 + (1ULL << 45)) >= 0);
	assert_true(sbe_event(&e, t0 + (1ULL << 45) + 1, NULL, 8, SBE_EXTEND) >= 0);
	assert_true(sbe_event(&e, t0 + 5, NULL, 60, SBE_ABS) >= 0);
	assert_true(sbe_time_stamp(&e, t0 + 3) >= 0);
	assert_true(sbe_discard(&e, t0 + (1ULL << 31), 8) >= 0);
	assert_true(sbe_event(&e, t0 + (1ULL << 31) + 6, NULL, 2000, 0) >= 0);
	sbe_end_page(&e);
	sbe_finish(&e, 0);
	assert_int_equal(compare_page(kb, page, sizeof(page)), 9);
	compare_offsets(kb, page, &e);

	/* the same page with a lost count: commit falls back before the filler */
	sbe_finish(&e, 5);
	assert_int_equal(e.missed_stored, 1);
	assert_int_equal(compare_page(kb, page, sizeof(page)), 9);
	assert_int_equal(kbuffer_load_subbuffer(kb, page), 0);
	assert_int_equal(kbuffer_missed_events(kb), 5);
	sbe_release(&e);

	/* a null padding in commit ends the records for both */
	sbe_init(&e, page, sizeof(page), t0);
	assert_true(sbe_event(&e, t0, NULL, 8, 0) >= 0);
	assert_true(sbe_event(&e, t0 + 4, NULL, 8, 0) >= 0);
	assert_true(sbe_null_pad(&e, 1) >= 0);
	sbe_finish(&e, 0);
	assert_int_equal(compare_page(kb, page, sizeof(page)), 2);
	sbe_release(&e);
	kbuffer_free(kb);
}

/* pages written from mid-page regions read the same through kbuffer */
static void test_rebased_pages(void **state)
{
	struct kbuffer *kb = kb_new();
	uint64_t seed = 4242;
	unsigned int s, i;
	struct sbe e;

	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		unsigned char *src = malloc(sizes[s]), *dst = malloc(sizes[s]);

		assert_non_null(src);
		assert_non_null(dst);
		for (i = 0; i < 12; i++) {
			unsigned int a, b, k = 0;
			struct tracemap_region r;
			unsigned long long kts;
			void *kdata;

			assert_true(sbe_fill_random(&e, src, sizes[s], 1ULL << 40, &seed, 0, 0) > 8);
			a = sbe_rand(&seed) % e.nr;
			b = a + sbe_rand(&seed) % (e.nr - a + 1);
			r = (struct tracemap_region){
				.subbuf = src, .data = src + 16, .page_ts = 1ULL << 40,
				.base_ts = e.recs[a].prev_ts, .subbuf_size = sizes[s],
				.start = e.recs[a].off, .end = b < e.nr ? e.recs[b].off : e.commit,
				.lost = losts[i % 3] ? 100 + i : 0,
			};
			assert_int_equal(tracemap_region_write_subbuf(&r, dst, sizes[s]),
					 (int)sizes[s]);
			assert_int_equal(compare_page(kb, dst, sizes[s]), b - a);

			assert_int_equal(kbuffer_load_subbuffer(kb, dst), 0);
			for (kdata = kbuffer_read_event(kb, &kts); kdata;
			     kdata = kbuffer_next_event(kb, &kts), k++) {
				const struct sbe_rec *x = &e.recs[a + k];

				assert_int_equal(kts, x->ts);
				assert_int_equal(kbuffer_curr_index(kb), x->off - r.start);
				assert_int_equal(kbuffer_event_size(kb), x->size);
				assert_memory_equal(kdata, src + 16 + x->payload_off, x->size);
				/* the count is stored when 8 bytes fit after the data */
				if (!k && kbuffer_curr_index(kb) == 0)
					assert_int_equal(kbuffer_missed_events(kb),
							 !r.lost || r.end - r.start + 24 <= sizes[s] ?
							 r.lost : -1);
			}
			assert_int_equal(k, b - a);
			sbe_release(&e);
		}
		free(src);
		free(dst);
	}
	kbuffer_free(kb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_pages),
		cmocka_unit_test(test_all_kinds),
		cmocka_unit_test(test_rebased_pages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
