// SPDX-License-Identifier: GPL-2.0-only
/*
 * Test encoder of ftrace sub-buffers: see sbuf-encode.h. Written from the
 * kernel's ring_buffer.c (rb_calculate_event_length, rb_update_event,
 * rb_add_time_stamp, rb_event_discard, rb_reset_tail,
 * ring_buffer_map_get_reader), independent of libtracemap.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf-encode.h"

#define ALIGN4(x)	(((x) + 3u) & ~3u)

static void put32(struct sbe *e, unsigned int off, uint32_t v)
{
	memcpy(e->page + SBE_HDR + off, &v, sizeof(v));
}

static uint32_t hdr_word(unsigned int type_len, uint64_t delta)
{
	return type_len | (uint32_t)(delta << 5);
}

static int grow(void **arr, unsigned int *cap, unsigned int nr, size_t elem)
{
	unsigned int ncap;
	void *n;

	if (nr < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 64;
	n = realloc(*arr, ncap * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

static int add_start(struct sbe *e, unsigned int off)
{
	if (grow((void **)&e->starts, &e->cap_starts, e->nr_starts, sizeof(*e->starts)))
		return -ENOMEM;
	e->starts[e->nr_starts++] = off;
	return 0;
}

static int add_rec(struct sbe *e, const struct sbe_rec *r)
{
	if (grow((void **)&e->recs, &e->cap, e->nr, sizeof(*e->recs)))
		return -ENOMEM;
	e->recs[e->nr++] = *r;
	return add_start(e, r->off);
}

int sbe_init(struct sbe *e, void *page, unsigned int subbuf_size, uint64_t page_ts)
{
	uint64_t zero = 0;

	if (subbuf_size < SBE_HDR + 8)
		return -EINVAL;
	memset(e, 0, sizeof(*e));
	e->page = page;
	e->subbuf_size = subbuf_size;
	e->data_size = subbuf_size - SBE_HDR;
	e->page_ts = page_ts;
	e->ts = page_ts;
	memcpy(e->page, &page_ts, sizeof(page_ts));
	memcpy(e->page + 8, &zero, sizeof(zero));
	memset(e->page + SBE_HDR, SBE_STALE_BYTE, e->data_size);
	return 0;
}

void sbe_release(struct sbe *e)
{
	free(e->recs);
	free(e->starts);
	e->recs = NULL;
	e->starts = NULL;
	e->nr = e->cap = 0;
	e->nr_starts = e->cap_starts = 0;
}

/* size of the payload area and of the whole record for @len payload bytes */
static void event_size(unsigned int len, unsigned int flags, unsigned int *size,
		       unsigned int *rec_len, unsigned int *type_len)
{
	/* rb_calculate_event_length(): zero length can cause confusions */
	*size = ALIGN4(len ? len : 1);
	if (*size > SBE_MAX_SMALL || (flags & SBE_LONG)) {
		*type_len = 0;
		*rec_len = 8 + *size;
	} else {
		*type_len = *size / 4;
		*rec_len = 4 + *size;
	}
}

static int write_stamp(struct sbe *e, unsigned int off, unsigned int type, uint64_t val)
{
	/* rb_add_time_stamp(): low 27 bits in time_delta, the next 32 in array[0] */
	if (type == SBE_TIME_EXTEND && (val >> (SBE_TS_SHIFT + 32)))
		return -ERANGE;
	put32(e, off, hdr_word(type, val & SBE_TS_MASK));
	put32(e, off + 4, (uint32_t)(val >> SBE_TS_SHIFT));
	return 0;
}

static int abs_ok(const struct sbe *e, uint64_t ts)
{
	/* readers take the 5 top bits from the running time */
	return (ts & SBE_TS_MSB) == (e->ts & SBE_TS_MSB);
}

int sbe_event(struct sbe *e, uint64_t ts, const void *payload, unsigned int len,
	      unsigned int flags)
{
	unsigned int size, rec_len, type_len, ext = 0, off, i;
	struct sbe_rec r;
	uint64_t delta = 0;
	unsigned char *p;
	int ret;

	if (flags & SBE_ABS) {
		if (!abs_ok(e, ts))
			return -ERANGE;
		ext = 8;
	} else {
		if (ts < e->ts)
			return -EINVAL;
		delta = ts - e->ts;
		if (delta > SBE_TS_MASK || (flags & SBE_EXTEND))
			ext = 8;
	}
	event_size(len, flags, &size, &rec_len, &type_len);
	if (e->off + ext + rec_len > e->data_size)
		return -ENOSPC;

	off = e->off;
	if (ext) {
		ret = write_stamp(e, off, (flags & SBE_ABS) ? SBE_TIME_STAMP : SBE_TIME_EXTEND,
				  (flags & SBE_ABS) ? ts : delta);
		if (ret)
			return ret;
		if (add_start(e, off))
			return -ENOMEM;
		delta = 0;
		off += 8;
	}
	r.prev_ts = ts - delta;
	put32(e, off, hdr_word(type_len, delta));
	r.off = off;
	r.payload_off = off + 4;
	if (!type_len) {
		/* rb_update_event(): array[0] holds the aligned length + 4 */
		put32(e, off + 4, size + 4);
		r.payload_off += 4;
	}
	p = e->page + SBE_HDR + r.payload_off;
	if (payload)
		memcpy(p, payload, len);
	else
		for (i = 0; i < len; i++)
			p[i] = (unsigned char)(r.payload_off * 31 + i * 7 + 1);
	memset(p + len, 0, size - len);
	r.ts = ts;
	r.size = size;
	r.len = len;
	ret = add_rec(e, &r);
	if (ret)
		return ret;
	e->off = off + rec_len;
	e->commit = e->off;
	e->ts = ts;
	return r.off;
}

int sbe_time_extend(struct sbe *e, uint64_t ts)
{
	unsigned int off = e->off;
	int ret;

	if (ts < e->ts)
		return -EINVAL;
	if (off + 8 > e->data_size)
		return -ENOSPC;
	ret = write_stamp(e, off, SBE_TIME_EXTEND, ts - e->ts);
	if (ret)
		return ret;
	if (add_start(e, off))
		return -ENOMEM;
	e->off = e->commit = off + 8;
	e->ts = ts;
	return off;
}

int sbe_time_stamp(struct sbe *e, uint64_t ts)
{
	unsigned int off = e->off;

	if (!abs_ok(e, ts))
		return -ERANGE;
	if (off + 8 > e->data_size)
		return -ENOSPC;
	write_stamp(e, off, SBE_TIME_STAMP, ts);
	if (add_start(e, off))
		return -ENOMEM;
	e->off = e->commit = off + 8;
	e->ts = ts;
	return off;
}

int sbe_discard(struct sbe *e, uint64_t ts, unsigned int len)
{
	unsigned int size, rec_len, type_len, ext = 0, off;
	uint64_t delta;
	int ret;

	if (ts < e->ts)
		return -EINVAL;
	delta = ts - e->ts;
	if (delta > SBE_TS_MASK)
		ext = 8;
	event_size(len, 0, &size, &rec_len, &type_len);
	if (e->off + ext + rec_len > e->data_size)
		return -ENOSPC;
	off = e->off;
	if (ext) {
		/* rb_event_discard() keeps the time extend in front of the event */
		ret = write_stamp(e, off, SBE_TIME_EXTEND, delta);
		if (ret || add_start(e, off))
			return ret ? ret : -ENOMEM;
		e->ts = ts;
		delta = 0;
		off += 8;
	}
	/* time delta must be non zero; array[0] = data length - header */
	if (!delta)
		delta = 1;
	put32(e, off, hdr_word(SBE_PADDING, delta));
	put32(e, off + 4, rec_len - 4);
	if (add_start(e, off))
		return -ENOMEM;
	e->ts += delta;
	e->off = e->commit = off + rec_len;
	return off;
}

int sbe_end_page(struct sbe *e)
{
	unsigned int left = e->data_size - e->off;

	e->real_end = e->off;
	if (left >= 8) {
		/* a discarded event to the end of the page, committed */
		put32(e, e->off, hdr_word(SBE_PADDING, 1));
		put32(e, e->off + 4, left - 4);
		if (add_start(e, e->off))
			return -ENOMEM;
		e->ts += 1;
		e->off = e->commit = e->data_size;
	} else if (left >= 4) {
		/* no room for any event: null padding, write moved back */
		put32(e, e->off, hdr_word(SBE_PADDING, 0));
	} else {
		/* the page was filled exactly */
		e->real_end = 0;
	}
	return 0;
}

int sbe_null_pad(struct sbe *e, int in_commit)
{
	unsigned int left = e->data_size - e->off, off = e->off;

	if (left < 4)
		return -ENOSPC;
	put32(e, off, hdr_word(SBE_PADDING, 0));
	if (left >= 8)
		put32(e, off + 4, left - 4);
	if (in_commit) {
		if (add_start(e, off))
			return -ENOMEM;
		e->off = e->commit = e->data_size;
	}
	return off;
}

uint64_t sbe_commit_word(unsigned int size, int missed, int stored)
{
	int64_t c = size;

	/* local_add(int, local_t *): 1 << 31 is a negative int */
	if (stored)
		c += (int32_t)SBE_MISSED_STORED;
	if (missed)
		c += (int32_t)SBE_MISSED_EVENTS;
	return (uint64_t)c;
}

void sbe_finish(struct sbe *e, long long lost)
{
	unsigned int size = e->commit;
	uint64_t commit;
	long count = (long)lost;

	e->missed_stored = 0;
	if (lost) {
		if (e->real_end)
			size = e->real_end;
		if (lost > 0 && e->data_size - size >= sizeof(count)) {
			memcpy(e->page + SBE_HDR + size, &count, sizeof(count));
			e->missed_stored = 1;
		}
	}
	commit = sbe_commit_word(size, lost != 0, e->missed_stored);
	e->commit = size;
	memcpy(e->page, &e->page_ts, sizeof(e->page_ts));
	memcpy(e->page + 8, &commit, sizeof(commit));
}

uint64_t sbe_rand(uint64_t *state)
{
	uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ULL;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

int sbe_fill_random(struct sbe *e, void *page, unsigned int subbuf_size, uint64_t page_ts,
		    uint64_t *seed, int end_page, long long lost)
{
	int ret = 0;

	if (sbe_init(e, page, subbuf_size, page_ts))
		return -EINVAL;
	while (ret != -ENOSPC) {
		uint64_t r = sbe_rand(seed), ts = e->ts;
		unsigned int len = (r >> 8) % (SBE_MAX_SMALL + 1);

		/* the first event of a page has delta 0: it set the page time */
		if (e->nr)
			ts += (r >> 20) % 5000;
		switch (r % 16) {
		case 0:
			ts += (1ULL << SBE_TS_SHIFT) + ((r >> 24) % (1ULL << 34));
			ret = sbe_event(e, ts, NULL, len, 0);
			break;
		case 1:
			/* absolute stamps may go back (an interrupted writer) */
			if ((r >> 40) % 2000 <= ts - page_ts)
				ts -= (r >> 40) % 2000;
			ret = sbe_event(e, ts, NULL, len, SBE_ABS);
			break;
		case 2:
			ret = sbe_discard(e, ts, len);
			break;
		case 3:
			ret = sbe_time_extend(e, ts + (r >> 30));
			break;
		case 4:
			ret = sbe_event(e, ts, NULL, SBE_MAX_SMALL + 1 + len * 3, 0);
			break;
		case 5:
			ret = sbe_event(e, ts, NULL, len, SBE_LONG);
			break;
		default:
			ret = sbe_event(e, ts, NULL, len, 0);
			break;
		}
		if (ret < 0 && ret != -ENOSPC && ret != -ERANGE)
			return ret;
	}
	if (end_page)
		sbe_end_page(e);
	sbe_finish(e, lost);
	return e->nr;
}

/* -------------------------------------------------------------- rings */

#define RING_META_SIZE	4096

int sbe_ring_init(struct sbe_ring *r, unsigned int subbuf_size, unsigned int nr_subbufs)
{
	memset(r, 0, sizeof(*r));
	if (subbuf_size < SBE_HDR + 8 || subbuf_size % 16 || nr_subbufs < 2)
		return -EINVAL;
	r->meta = calloc(1, RING_META_SIZE);
	r->subbufs = calloc(nr_subbufs, subbuf_size);
	r->recs = calloc(nr_subbufs, sizeof(*r->recs));
	if (!r->meta || !r->subbufs || !r->recs) {
		sbe_ring_free(r);
		return -ENOMEM;
	}
	r->subbuf_size = subbuf_size;
	r->nr_subbufs = nr_subbufs;
	r->meta->meta_page_size = RING_META_SIZE;
	r->meta->meta_struct_len = sizeof(*r->meta);
	r->meta->subbuf_size = subbuf_size;
	r->meta->nr_subbufs = nr_subbufs;
	/* the reader page of a fresh mapping: id 0, nothing read */
	return 0;
}

void sbe_ring_free(struct sbe_ring *r)
{
	sbe_release(&r->w);
	free(r->meta);
	free(r->subbufs);
	free(r->recs);
	memset(r, 0, sizeof(*r));
}

int sbe_ring_event(struct sbe_ring *r, uint64_t ts, const void *payload, unsigned int len)
{
	int ret = -ENOSPC;

	if (r->wid)
		ret = sbe_event(&r->w, ts, payload, len, 0);
	if (ret == -ENOSPC) {
		if (r->wid) {
			sbe_end_page(&r->w);
			sbe_finish(&r->w, 0);
			sbe_release(&r->w);
		}
		if (r->wid + 1 >= r->nr_subbufs)
			return -ENOSPC;
		r->wid++;
		sbe_init(&r->w, r->subbufs + (size_t)r->wid * r->subbuf_size, r->subbuf_size, ts);
		ret = sbe_event(&r->w, ts, payload, len, 0);
	}
	if (ret < 0)
		return ret;
	sbe_finish(&r->w, 0);
	r->recs[r->wid] = r->w.nr;
	r->entries++;
	r->meta->entries = r->entries;
	return 0;
}

static unsigned int ring_commit(const struct sbe_ring *r, unsigned int id)
{
	uint64_t commit;

	memcpy(&commit, r->subbufs + (size_t)id * r->subbuf_size + 8, sizeof(commit));
	return (uint32_t)commit & ((1u << 30) - 1);
}

int sbe_ring_get_reader(void *ring)
{
	struct sbe_ring *r = ring;
	struct trace_buffer_meta *m = r->meta;
	unsigned int id = m->reader.id;

	if (ring_commit(r, id) == m->reader.read) {
		if (id + 1 > r->wid)
			return 0;
		/* swap in the next sub-buffer */
		m->reader.id = ++id;
		r->handed = 0;
	}
	m->reader.read = ring_commit(r, id);
	m->read += r->recs[id] - r->handed;
	r->handed = r->recs[id];
	return 0;
}

int sbe_rings_write(struct sbe_ring *rings, sbe_place_fn place, uint64_t from, uint64_t to,
		    unsigned int len, unsigned int seq_off, uint64_t *counts, uint64_t *full)
{
	unsigned char payload[SBE_MAX_SMALL] = { 0 };
	uint64_t seq, ts;
	uint32_t s32;
	int ring;

	if (len > sizeof(payload) || seq_off + sizeof(s32) > len)
		return -EINVAL;
	for (seq = from; seq < to; seq++) {
		ring = place(seq, &ts);
		s32 = (uint32_t)seq;
		memcpy(payload + seq_off, &s32, sizeof(s32));
		if (sbe_ring_event(&rings[ring], ts, payload, len)) {
			if (full)
				*full = seq;
			return -ENOSPC;
		}
		if (counts)
			counts[ring]++;
	}
	return 0;
}
