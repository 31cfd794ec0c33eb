// SPDX-License-Identifier: GPL-2.0-only
/*
 * Truncated and corrupt sub-buffers: the walker never reads outside
 * data[off, end) (every buffer here is allocated to exactly its end, so the
 * -san build catches any read past it) and reports -EBADMSG.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "sbuf-encode.h"
#include "tracemap-local.h"

#define T0	777000000000ULL

/* @n bytes of @src in a heap buffer of exactly @n bytes */
static unsigned char *exact_copy(const void *src, unsigned int n)
{
	unsigned char *p = malloc(n ? n : 1);

	assert_non_null(p);
	memcpy(p, src, n);
	return p;
}

static int is_start(const struct sbe *e, unsigned int off)
{
	unsigned int i;

	for (i = 0; i < e->nr_starts; i++)
		if (e->starts[i] == off)
			return 1;
	return off == e->commit;
}

/*
 * Every truncation of a valid page: the records wholly before the cut come
 * out exactly, then 0 when the cut is a record boundary, -EBADMSG otherwise.
 */
static void truncate_all(const struct sbe *e)
{
	unsigned int end;

	for (end = 0; end <= e->commit; end++) {
		unsigned char *d = exact_copy(e->page + SBE_HDR, end);
		struct tm_walk w = { d, 0, end, e->page_ts };
		unsigned int n = 0;
		struct tm_rec rec;
		int ret;

		while ((ret = tm_walk_next(&w, &rec)) == 1) {
			const struct sbe_rec *x = &e->recs[n++];

			assert_true(n <= e->nr);
			assert_int_equal(rec.ts, x->ts);
			assert_int_equal(rec.off, x->off);
			assert_int_equal(rec.size, x->size);
			assert_ptr_equal(rec.payload, d + x->payload_off);
		}
		/* all and only the records that end before the cut */
		assert_true(n == e->nr || e->recs[n].payload_off + e->recs[n].size > end);
		assert_true(n == 0 || e->recs[n - 1].payload_off + e->recs[n - 1].size <= end);
		assert_int_equal(ret, is_start(e, end) ? 0 : -EBADMSG);
		if (ret)
			assert_int_equal(errno, EBADMSG);
		/* skipping to the cut agrees */
		w = (struct tm_walk){ d, 0, end, e->page_ts };
		assert_int_equal(tm_walk_skip(&w, end), ret);
		free(d);
	}
}

static void test_truncated_pages(void **state)
{
	static const unsigned int sizes[] = { 4096, 8192 };
	unsigned int s, i;
	uint64_t seed = 21;
	struct sbe e;

	for (s = 0; s < 2; s++) {
		unsigned char *page = malloc(sizes[s]);

		assert_non_null(page);
		for (i = 0; i < 3; i++) {
			assert_true(sbe_fill_random(&e, page, sizes[s], T0, &seed, i == 2, 0) > 0);
			truncate_all(&e);
			sbe_release(&e);
		}
		free(page);
	}
}

/* One record (or record start) at the very end of an exact buffer. */
struct bad_case {
	const char *what;
	uint32_t words[3];
	unsigned int len;		/* bytes of words[] in the buffer */
};

static void test_bad_records(void **state)
{
	static const struct bad_case cases[] = {
		{ "1 byte", { 0x2 }, 1 },
		{ "2 bytes", { 0x2 }, 2 },
		{ "3 bytes", { 0x2 }, 3 },
		{ "type_len 2 with 4 payload bytes", { 0x2, 0 }, 8 },
		{ "type_len 28 with 8 payload bytes", { 28, 0, 0 }, 12 },
		{ "type_len 0 without array[0]", { 0 }, 4 },
		{ "type_len 0 with array[0] 0", { 0, 0 }, 8 },
		{ "type_len 0 with array[0] 3", { 0, 3 }, 8 },
		{ "type_len 0 with array[0] 5 beyond", { 0, 5 }, 8 },
		{ "type_len 0 with array[0] past the end", { 0, 12 }, 12 },
		{ "type_len 0 with array[0] 0xffffffff", { 0, 0xffffffff, 0 }, 12 },
		{ "type_len 0 with array[0] 0xfffffffc", { 0, 0xfffffffc, 0 }, 12 },
		{ "padding without array[0]", { SBE_PADDING | (1 << 5) }, 4 },
		{ "padding with array[0] past the end", { SBE_PADDING | (1 << 5), 5 }, 8 },
		{ "padding with array[0] 0xffffffff", { SBE_PADDING | (9 << 5), 0xffffffff }, 8 },
		{ "null padding without array[0]", { SBE_PADDING }, 4 },
		{ "null padding with a record after it", { SBE_PADDING, 4, 1 }, 12 },
		{ "time extend cut", { SBE_TIME_EXTEND | (5 << 5) }, 4 },
		{ "time stamp cut", { SBE_TIME_STAMP | (5 << 5) }, 4 },
		{ "time extend then nothing of the event", { SBE_TIME_EXTEND, 1, 3 }, 10 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned char *d = exact_copy(cases[i].words, cases[i].len);
		struct tm_walk w = { d, 0, cases[i].len, T0 };
		struct tm_rec rec;
		unsigned int off;

		print_message("%s\n", cases[i].what);
		assert_int_equal(tm_walk_next(&w, &rec), -EBADMSG);
		assert_int_equal(errno, EBADMSG);
		/* no progress past the bad record; asking again gives the same */
		off = w.off;
		assert_true(off < cases[i].len);
		assert_int_equal(tm_walk_next(&w, &rec), -EBADMSG);
		assert_int_equal(w.off, off);
		w = (struct tm_walk){ d, 0, cases[i].len, T0 };
		assert_int_equal(tm_walk_skip(&w, cases[i].len), -EBADMSG);
		free(d);
	}
}

/* good records, then a bad one: the good ones exactly, then -EBADMSG where it is */
static void test_bad_after_good(void **state)
{
	unsigned char page[4096], *d;
	struct tm_walk w;
	struct tm_rec rec;
	uint32_t bad[2] = { 0, 0xffff };
	struct sbe e;
	int off;

	sbe_init(&e, page, sizeof(page), T0);
	assert_true(sbe_event(&e, T0, NULL, 16, 0) >= 0);
	assert_true(sbe_event(&e, T0 + 9, NULL, 300, 0) >= 0);
	off = e.off;
	memcpy(page + SBE_HDR + off, bad, sizeof(bad));
	d = exact_copy(page + SBE_HDR, off + 40);
	w = (struct tm_walk){ d, 0, off + 40, T0 };
	assert_int_equal(tm_walk_next(&w, &rec), 1);
	assert_int_equal(rec.ts, T0);
	assert_int_equal(tm_walk_next(&w, &rec), 1);
	assert_int_equal(rec.ts, T0 + 9);
	assert_int_equal(rec.size, 300);
	assert_int_equal(tm_walk_next(&w, &rec), -EBADMSG);
	assert_int_equal(w.off, off);
	/* the good part up to the bad record is a valid window */
	w = (struct tm_walk){ d, 0, off + 40, T0 };
	assert_int_equal(tm_walk_skip(&w, off), 0);
	assert_int_equal(w.ts, T0 + 9);
	free(d);
	sbe_release(&e);
}

/*
 * A null padding (delta 0) ends the data when it reaches the walk's end,
 * as the kernel's filler to the end of the page does; it may reach past it.
 */
static void test_null_padding_ends_data(void **state)
{
	uint32_t words[4] = { 1 | (6 << 5), 0xabcd, SBE_PADDING, 4 };
	struct tm_walk w;
	struct tm_rec rec;
	unsigned char *d;

	d = exact_copy(words, sizeof(words));
	w = (struct tm_walk){ d, 0, sizeof(words), 100 };
	assert_int_equal(tm_walk_next(&w, &rec), 1);
	assert_int_equal(rec.ts, 106);
	assert_int_equal(tm_walk_next(&w, &rec), 0);
	assert_int_equal(w.off, sizeof(words));
	free(d);
	/* its length past the walk's end */
	words[3] = 400;
	d = exact_copy(words, sizeof(words));
	w = (struct tm_walk){ d, 0, sizeof(words), 100 };
	assert_int_equal(tm_walk_skip(&w, sizeof(words)), 0);
	free(d);
}

/*
 * A padding whose array[0] is below 4 would end before its own length word
 * (kbuffer would take that word as the next record): corrupt. The shortest
 * padding the kernel writes, array[0] = 4, is an 8-byte record.
 */
static void test_short_padding(void **state)
{
	uint32_t words[4] = { SBE_PADDING | (3 << 5), 0, 8, 0xabcd };
	struct tm_walk w;
	struct tm_rec rec;
	unsigned char *d;
	uint32_t a0;

	for (a0 = 0; a0 < 4; a0++) {
		words[1] = a0;
		d = exact_copy(words, sizeof(words));
		w = (struct tm_walk){ d, 0, sizeof(words), 100 };
		assert_int_equal(tm_walk_next(&w, &rec), -EBADMSG);
		assert_int_equal(w.off, 0);
		w = (struct tm_walk){ d, 0, sizeof(words), 100 };
		assert_int_equal(tm_walk_skip(&w, 4), -EBADMSG);
		free(d);
	}
	/* array[0] 4: the record after it starts at 8 */
	words[1] = 4;
	words[2] = 1 | (6 << 5);
	d = exact_copy(words, sizeof(words));
	w = (struct tm_walk){ d, 0, sizeof(words), 100 };
	assert_int_equal(tm_walk_next(&w, &rec), 1);
	assert_int_equal(rec.off, 8);
	assert_int_equal(rec.ts, 109);
	assert_int_equal(rec.size, 4);
	assert_ptr_equal(rec.payload, d + 12);
	assert_int_equal(tm_walk_next(&w, &rec), 0);
	assert_int_equal(w.off, 16);
	free(d);
}

/*
 * Random damage to valid pages: flipped bits in record words, commit
 * claiming more than the page. Whatever the walker returns stays inside
 * the data, offsets only grow, and the walk ends with 0 or -EBADMSG.
 */
static void test_mutations(void **state)
{
	static const unsigned int sizes[] = { 4096, 8192, 65536 };
	unsigned int s, iter, good = 0, bad = 0;
	uint64_t seed = 0x5eed;
	struct sbe e;

	for (s = 0; s < 3; s++) {
		unsigned char *page = malloc(sizes[s]), *out = malloc(sizes[s]);
		unsigned int data = sizes[s] - 16;

		assert_non_null(page);
		assert_non_null(out);
		for (iter = 0; iter < (s == 2 ? 60 : 600); iter++) {
			unsigned int end, flips, k, n = 0, last = 0;
			struct tm_rec *recs;
			unsigned char *d;
			struct tm_walk w;
			struct tm_rec rec;
			int ret;

			assert_true(sbe_fill_random(&e, page, sizes[s], T0, &seed, iter & 1,
						    0) > 0);
			flips = 1 + sbe_rand(&seed) % 8;
			for (k = 0; k < flips; k++) {
				uint64_t r = sbe_rand(&seed);
				/* mostly record words, where the damage matters */
				unsigned int at = (r & 1) ? e.starts[(r >> 8) % e.nr_starts] +
							    ((r >> 40) & 4) :
							    (r >> 8) % data;

				page[16 + at] ^= 1u << ((r >> 32) & 7);
			}
			/* the walk bound as a reader computes it: commit, at most the page */
			end = (sbe_rand(&seed) & 3) ? e.commit : data;
			d = exact_copy(page + 16, end);
			recs = calloc(end / 8 + 1, sizeof(*recs));
			assert_non_null(recs);
			w = (struct tm_walk){ d, 0, end, T0 };
			while ((ret = tm_walk_next(&w, &rec)) == 1) {
				assert_true(n == 0 || rec.off > last);
				assert_true(rec.payload >= d + rec.off + 4);
				assert_true(rec.payload + rec.size <= d + end);
				assert_true(w.off <= end);
				last = rec.off;
				assert_true(n < end / 8);
				recs[n++] = rec;
			}
			assert_true(ret == 0 || ret == -EBADMSG);
			if (ret)
				bad++;
			else
				good++;

			/* the good part, written as a page of its own, reads the same */
			assert_int_equal(tm_subbuf_write(out, sizes[s], d, 0, w.off, T0, 0),
					 (int)sizes[s]);
			w = (struct tm_walk){ out + 16, 0, TM_COMMIT_SIZE(*(uint64_t *)(out + 8)),
					      *(uint64_t *)out };
			for (k = 0; k < n; k++) {
				assert_int_equal(tm_walk_next(&w, &rec), 1);
				assert_int_equal(rec.ts, recs[k].ts);
				assert_int_equal(rec.off, recs[k].off);
				assert_int_equal(rec.size, recs[k].size);
			}
			assert_int_equal(tm_walk_next(&w, &rec), 0);
			free(recs);
			free(d);
			sbe_release(&e);
		}
		free(page);
		free(out);
	}
	/* both outcomes happen: the damage is not all harmless */
	assert_true(good > 0);
	assert_true(bad > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_truncated_pages),
		cmocka_unit_test(test_bad_records),
		cmocka_unit_test(test_bad_after_good),
		cmocka_unit_test(test_null_padding_ends_data),
		cmocka_unit_test(test_short_padding),
		cmocka_unit_test(test_mutations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
