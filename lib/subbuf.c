// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Sub-buffer format: the record walker (its fast path for plain data
 * records is tm_walk_next() in tracemap-local.h), the lost-events word, the page
 * writer and the torn-copy check. Every other file goes through these;
 * the page builder that feeds the writer is beside it in subbuf-pages.c.
 */
#include <string.h>

#include "tracemap-local.h"

static inline uint32_t load32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* A data record of @len payload bytes after a @hdr-byte header, checked against @left. */
static inline int data_record(struct tm_walk *w, struct tm_rec *rec, const unsigned char *p,
			      unsigned int hdr, unsigned int len, unsigned int left,
			      uint64_t delta)
{
	if (len > left - hdr)
		return tm_err(EBADMSG);
	w->ts += delta;
	rec->ts = w->ts;
	rec->payload = p + hdr;
	rec->size = len;
	rec->off = w->off;
	w->off += hdr + len;
	return 1;
}

/*
 * A null padding (delta 0, @array0 bytes after its length word, @left
 * bytes from its start to the walk's end) ends the data. Bytes after it
 * within the walk's end are no kernel's: kbuffer would read records there
 * (it skips a padding by its length), this walk would not, and a page
 * written from the region would hold events nobody counted. Corrupt.
 */
static int null_padding(struct tm_walk *w, uint32_t array0, unsigned int left)
{
	if (4 + (uint64_t)array0 < left)
		return tm_err(EBADMSG);
	w->off = w->end;
	return 0;
}

int tm_walk_next_slow(struct tm_walk *w, struct tm_rec *rec)
{
	while (w->off < w->end) {
		unsigned int left = w->end - w->off;
		const unsigned char *p = w->data + w->off;
		unsigned int type_len, len, array0;
		uint32_t hdr;
		uint64_t delta;

		if (left < 4)
			return tm_err(EBADMSG);
		hdr = load32(p);
		type_len = hdr & 31;
		delta = hdr >> 5;

		if (type_len >= 1 && type_len <= 28)
			return data_record(w, rec, p, 4, type_len * 4, left, delta);

		if (left < 8)
			return tm_err(EBADMSG);
		array0 = load32(p + 4);

		switch (type_len) {
		case 0:
			/* array[0] = payload length + 4; the record is 4-byte aligned */
			if (array0 < 4)
				return tm_err(EBADMSG);
			len = ((array0 - 4) + 3) & ~3u;
			return data_record(w, rec, p, 8, len, left, delta);
		case TM_TYPE_PADDING:
			if (!delta)
				return null_padding(w, array0, left);
			/*
			 * Discarded event or end-of-page filler: kbuffer adds its
			 * delta. The kernel's are at least 8 bytes (array[0] >= 4);
			 * a shorter one would end before its own length word, which
			 * then belongs to the next record, so that a window ending
			 * right after it could not be walked again.
			 */
			if (array0 < 4 || array0 > left - 4)
				return tm_err(EBADMSG);
			w->ts += delta;
			w->off += 4 + array0;
			break;
		case TM_TYPE_TIME_EXTEND:
			w->ts += ((uint64_t)array0 << TM_TS_SHIFT) + delta;
			w->off += 8;
			break;
		default: /* TM_TYPE_TIME_STAMP: absolute, top bits from the running time */
			w->ts = (((uint64_t)array0 << TM_TS_SHIFT) | delta) | (w->ts & TM_TS_MSB);
			w->off += 8;
			break;
		}
	}
	return 0;
}

int tm_walk_skip(struct tm_walk *w, unsigned int to)
{
	return tm_walk_tally(w, to, NULL);
}

/* @id among the distinct ids of @t, as long as there are at most max_few */
static void note_few(struct tm_tally *t, uint16_t id)
{
	unsigned int i;

	for (i = 0; i < t->nr_few && i < t->max_few; i++)
		if (t->few[i] == id)
			return;
	if (t->nr_few < t->max_few)
		t->few[t->nr_few] = id;
	if (t->nr_few <= t->max_few)
		t->nr_few++;
}

int tm_walk_tally(struct tm_walk *w, unsigned int to, struct tm_tally *t)
{
	unsigned int end = w->end;
	struct tm_rec rec;
	uint16_t id;
	int ret;

	if (to < w->off || to > end)
		return tm_err(EBADMSG);
	w->end = to;
	while ((ret = tm_walk_next(w, &rec)) > 0) {
		if (!t)
			continue;
		if (rec.size >= sizeof(id)) {
			memcpy(&id, rec.payload, sizeof(id));
			t->ids[id / 8] |= 1 << (id % 8);
			if (t->few)
				note_few(t, id);
		}
		if (!t->events)
			t->first_ts = rec.ts;
		t->last_ts = rec.ts;
		t->events++;
		t->bytes += rec.size;
	}
	w->end = end;
	if (ret < 0)
		return ret;
	/* a record straddling @to means @to is not a record boundary */
	return w->off == to ? 0 : tm_err(EBADMSG);
}

long long tm_subbuf_lost(const void *subbuf, unsigned int subbuf_size)
{
	const unsigned char *sb = subbuf;
	uint64_t commit;
	unsigned int size;
	long long stored;

	memcpy(&commit, sb + 8, sizeof(commit));
	if (!((uint32_t)commit & TM_MISSED_EVENTS))
		return 0;
	size = TM_COMMIT_SIZE(commit);
	if (!((uint32_t)commit & TM_MISSED_STORED) ||
	    (uint64_t)TM_SUBBUF_HDR + size + sizeof(stored) > subbuf_size)
		return TRACEMAP_LOST_UNKNOWN;
	memcpy(&stored, sb + TM_SUBBUF_HDR + size, sizeof(stored));
	return stored > 0 ? stored : TRACEMAP_LOST_UNKNOWN;
}

int tm_subbuf_write(void *dst, unsigned int subbuf_size, const unsigned char *data,
		    unsigned int start, unsigned int end, uint64_t base_ts, long long lost)
{
	unsigned char *out = dst;
	unsigned int len = end - start;
	uint64_t commit = len;

	/* the records lie inside the data area: start and end are offsets into it */
	if (end < start || subbuf_size < TM_SUBBUF_HDR || end > subbuf_size - TM_SUBBUF_HDR ||
	    (len && !data) || lost < TRACEMAP_LOST_UNKNOWN)
		return tm_err(EINVAL);

	/* may overlap: a page rewritten over its own copy (tm_pages_read()) */
	if (len && out + TM_SUBBUF_HDR != data + start)
		memmove(out + TM_SUBBUF_HDR, data + start, len);
	memset(out + TM_SUBBUF_HDR + len, 0, subbuf_size - TM_SUBBUF_HDR - len);
	if (lost) {
		commit |= TM_MISSED_EVENTS;
		if (lost > 0 && TM_SUBBUF_HDR + len + sizeof(lost) <= subbuf_size) {
			memcpy(out + TM_SUBBUF_HDR + len, &lost, sizeof(lost));
			commit |= TM_MISSED_STORED;
		}
	}
	memcpy(out, &base_ts, sizeof(base_ts));
	memcpy(out + 8, &commit, sizeof(commit));
	return subbuf_size;
}

int tm_subbuf_copy(void *dst, const void *src, unsigned int subbuf_size, uint64_t *ts,
		   unsigned int *size)
{
	const unsigned char *sb = src;
	uint64_t ts1, ts2, c1, c2;
	unsigned int len;

	/*
	 * The writer recycling a page sets commit = 0, writes data, then the
	 * time stamp, then raises commit with smp_wmb() in between (the
	 * kernel's rb_iter_head_event() relies on the same order). A copy
	 * that saw a new byte therefore sees a new time stamp or a smaller
	 * commit on the re-check.
	 */
	ts1 = tm_subbuf_load(sb, TM_SB_TS, __ATOMIC_ACQUIRE);
	c1 = tm_subbuf_load(sb, TM_SB_COMMIT, __ATOMIC_ACQUIRE);
	len = TM_COMMIT_SIZE(c1);
	if (len > subbuf_size - TM_SUBBUF_HDR)
		return tm_err(EAGAIN);
	memcpy((unsigned char *)dst + TM_SUBBUF_HDR, sb + TM_SUBBUF_HDR, len);
	/* pairs with the writer's smp_wmb() before it moves commit */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	ts2 = tm_subbuf_load(sb, TM_SB_TS, __ATOMIC_RELAXED);
	c2 = tm_subbuf_load(sb, TM_SB_COMMIT, __ATOMIC_RELAXED);
	if (ts2 != ts1 || TM_COMMIT_SIZE(c2) < len)
		return tm_err(EAGAIN);
	memcpy(dst, &ts1, sizeof(ts1));
	memcpy((unsigned char *)dst + 8, &c1, sizeof(c1));
	*ts = ts1;
	*size = len;
	return 0;
}

/**
 * tracemap_region_write_subbuf - a region as a self-contained sub-buffer
 * @r: the region
 * @dst: receives r->subbuf_size bytes
 * @size: bytes at @dst
 *
 * Header time r->base_ts, the lost events as commit flags (and count where
 * there is room), the records, zero padding.
 *
 * Returns the sub-buffer size, or -EINVAL.
 */
int tracemap_region_write_subbuf(const struct tracemap_region *r, void *dst, size_t size)
{
	if (!r || !dst || size < r->subbuf_size)
		return tm_err(EINVAL);
	return tm_subbuf_write(dst, r->subbuf_size, r->data, r->start, r->end, r->base_ts,
			       r->lost);
}
