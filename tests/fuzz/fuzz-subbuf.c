// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: arbitrary bytes as one sub-buffer (u64 ts, long commit,
 * data; the input size is the sub-buffer size). Runs the record walker, the
 * lost-events reader, the validated copy and the page writer, and checks
 * what must hold for any input:
 *  - every record lies inside data[0, end), offsets grow, the walk ends with
 *    0 or -EBADMSG;
 *  - skipping to a record's offset and reading gives the same record;
 *  - writing the records from any record on as a page of their own
 *    (rebased on the time before it) and walking that page gives the same
 *    records, times and payload bytes, and the lost count it was given.
 * Any violation aborts, which libFuzzer reports as a crash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "tracemap-local.h"

#define MAX_SUBBUF	(1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *buf, size_t size);

static uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Walk data[0, end); fills recs (room for end / 8 + 1), returns the count. */
static unsigned int walk_all(const uint8_t *data, unsigned int end, uint64_t ts,
			     struct tm_rec *recs, unsigned int *stop, int *result)
{
	struct tm_walk w = { data, 0, end, ts };
	unsigned int n = 0;
	struct tm_rec rec;
	int ret;

	while ((ret = tm_walk_next(&w, &rec)) == 1) {
		check(rec.off < end);
		check(n == 0 || rec.off > recs[n - 1].off);
		check(rec.payload >= data + rec.off + 4);
		check(rec.payload <= data + end);
		check(rec.size <= (unsigned int)(data + end - rec.payload));
		check(w.off <= end);
		/* data records take at least 8 bytes */
		check(n < end / 8);
		recs[n++] = rec;
	}
	check(ret == 0 || (ret == -EBADMSG && errno == EBADMSG));
	check(w.off <= end);
	check(ret < 0 || w.off == end);
	*stop = w.off;
	*result = ret;
	return n;
}

static void check_lost(const uint8_t *page, unsigned int subbuf_size, long long lost)
{
	uint32_t c = (uint32_t)load64(page + 8);
	unsigned int size = TM_COMMIT_SIZE(c);
	long long stored;

	if (!(c & TM_MISSED_EVENTS)) {
		check(lost == 0);
		return;
	}
	if (!(c & TM_MISSED_STORED) || (uint64_t)size + 24 > subbuf_size) {
		check(lost == TRACEMAP_LOST_UNKNOWN);
		return;
	}
	memcpy(&stored, page + 16 + size, sizeof(stored));
	check(lost == (stored > 0 ? stored : TRACEMAP_LOST_UNKNOWN));
}

/* Rebase recs[k..n) (data[start, stop)) into a page of its own and walk it. */
static void check_rebase(const uint8_t *page, unsigned int subbuf_size, const struct tm_rec *recs,
			 unsigned int n, unsigned int k, unsigned int start, unsigned int stop,
			 uint64_t base_ts, long long lost, uint8_t *out, uint8_t *out2,
			 struct tm_rec *again)
{
	struct tracemap_region r = {
		.subbuf = page, .data = page + 16, .page_ts = load64(page), .base_ts = base_ts,
		.lost = lost, .subbuf_size = subbuf_size, .start = start, .end = stop,
	};
	unsigned int m, i, stop2, len = stop - start;
	int ret;

	check(tm_subbuf_write(out, subbuf_size, page + 16, start, stop, base_ts, lost) ==
	      (int)subbuf_size);
	check(tracemap_region_write_subbuf(&r, out2, subbuf_size) == (int)subbuf_size);
	check(!memcmp(out, out2, subbuf_size));
	check(load64(out) == base_ts);
	check(TM_COMMIT_SIZE(load64(out + 8)) == len);
	check(!memcmp(out + 16, page + 16 + start, len));
	check_lost(out, subbuf_size, tm_subbuf_lost(out, subbuf_size));
	if (!lost)
		check(tm_subbuf_lost(out, subbuf_size) == 0);
	else if (lost > 0 && len + 24 <= subbuf_size)
		check(tm_subbuf_lost(out, subbuf_size) == lost);
	else
		check(tm_subbuf_lost(out, subbuf_size) == TRACEMAP_LOST_UNKNOWN);

	m = walk_all(out + 16, len, base_ts, again, &stop2, &ret);
	check(ret == 0);
	check(stop2 == len);
	check(m == n - k);
	for (i = 0; i < m; i++) {
		check(again[i].ts == recs[k + i].ts);
		check(again[i].off == recs[k + i].off - start);
		check(again[i].size == recs[k + i].size);
		check(!memcmp(again[i].payload, recs[k + i].payload, again[i].size));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *page, size_t size)
{
	unsigned int subbuf_size = size, data_size, end, n, stop, i, picks;
	struct tm_rec *recs = NULL, *again = NULL, rec;
	uint8_t *out = NULL, *out2 = NULL;
	uint64_t page_ts, ts;
	struct tm_walk w;
	long long lost;
	int ret;

	if (size < TM_SUBBUF_HDR || size > MAX_SUBBUF)
		return 0;
	data_size = subbuf_size - TM_SUBBUF_HDR;
	page_ts = load64(page);

	lost = tm_subbuf_lost(page, subbuf_size);
	check_lost(page, subbuf_size, lost);

	recs = malloc((data_size / 8 + 1) * sizeof(*recs));
	again = malloc((data_size / 8 + 1) * sizeof(*again));
	out = malloc(subbuf_size);
	out2 = malloc(subbuf_size);
	if (!recs || !again || !out || !out2)
		goto out;

	/* the validated copy: consistent (nothing changes here) unless commit is too big */
	end = TM_COMMIT_SIZE(load64(page + 8));
	{
		unsigned int csize = 0;
		uint64_t cts = 0;

		ret = tm_subbuf_copy(out, page, subbuf_size, &cts, &csize);
		if (end > data_size) {
			check(ret == -EAGAIN);
		} else {
			check(ret == 0);
			check(cts == page_ts && csize == end);
			check(!memcmp(out, page, TM_SUBBUF_HDR + end));
		}
	}

	/* a reader ignoring commit: the whole data area, bounds only */
	walk_all(page + 16, data_size, page_ts, recs, &stop, &ret);

	/* as readers do: commit, bounded by the page */
	if (end > data_size)
		end = data_size;
	n = walk_all(page + 16, end, page_ts, recs, &stop, &ret);

	/* the good part is a window of complete records */
	w = (struct tm_walk){ page + 16, 0, end, page_ts };
	check(tm_walk_skip(&w, stop) == 0);
	check(w.off == stop);

	/* skip to a few records, read them again, and rebase from there */
	picks = n < 6 ? n : 6;
	for (i = 0; i <= picks; i++) {
		unsigned int k = i == picks ? 0 : (unsigned int)((uint64_t)i * n / picks);
		unsigned int start = 0;

		ts = page_ts;
		if (n && i < picks) {
			w = (struct tm_walk){ page + 16, 0, end, page_ts };
			check(tm_walk_skip(&w, recs[k].off) == 0);
			check(w.off == recs[k].off);
			ts = w.ts;
			check(tm_walk_next(&w, &rec) == 1);
			check(rec.ts == recs[k].ts && rec.off == recs[k].off &&
			      rec.size == recs[k].size && rec.payload == recs[k].payload);
			start = recs[k].off;
		} else {
			k = 0;
		}
		check_rebase(page, subbuf_size, recs, n, k, start, stop, ts,
			     i & 1 ? lost : (long long)i, out, out2, again);
		/* inside a record is never a boundary */
		if (n && i < picks) {
			w = (struct tm_walk){ page + 16, 0, end, page_ts };
			check(tm_walk_skip(&w, recs[k].off + 1) == -EBADMSG);
		}
	}
out:
	free(recs);
	free(again);
	free(out);
	free(out2);
	return 0;
}
