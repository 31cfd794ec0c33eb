// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the page builder (lib/subbuf-pages.c) behind
 * tracemap_cpu_read_page(). The input describes sub-buffers of any record
 * kinds, sizes, time deltas and losses; the test encoder (an independent
 * oracle, tests/sbuf-encode.c) writes them as the kernel would, and a
 * synthetic mapping hands them out:
 *
 *  - consume mode: a fake kernel whose GET_READER moves the reader page
 *    through the sub-buffers (ids reused as the ring recycles them) and its
 *    read position through record boundaries the input picks, so that one
 *    sub-buffer comes in several regions; losses are flagged on the page as
 *    ring_buffer_map_get_reader() does (a stored count, or only the flag
 *    with the overrun counter grown by the count);
 *  - snapshot mode: every sub-buffer at once, ids shuffled, the reader
 *    page part-read;
 *  - follow mode: a writer that goes on between two reads, committing
 *    record by record and recycling the oldest sub-buffer when it needs
 *    one, so that what was not read yet may be overwritten.
 *
 * The pages that come out (with and without TRACEMAP_PAGE_FLUSH between
 * calls, as the input says) are walked with the one record walker and must
 * hold exactly the records that went in, in order, with their times and
 * payload bytes, and each loss on the page that starts where it happened.
 * In follow mode they must be the written records in order, none twice, any
 * skipped one (overwritten) only where a loss is reported, up to the last
 * one written.
 *
 * Input: [mode/flags] [sub-buffer size] [pages], then per page [lost kind]
 * [lost] [records] and per record [kind] [length] [delta]; what the input
 * lacks is 0. The rest, one byte per read_page() call: bit 0 asks for a
 * flush, bits 1-7 pick the next read position of the consume model or how
 * far the follow model's writer goes on.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf-encode.h"
#include "fuzz.h"
#include "tracemap-local.h"

#define MAX_PAGES	12
#define META_SIZE	((unsigned int)sizeof(struct trace_buffer_meta))
#define NONE		UINT_MAX

enum mode { CONSUME, SNAPSHOT, FOLLOW };

/* One sub-buffer as the kernel wrote it, and what a reader must find in it. */
struct model_page {
	unsigned char *bytes;
	struct sbe e;
	long long lost;			/* the loss the reader must report before it */
	unsigned int first;		/* index of its first record in the whole sequence */
};

struct model {
	unsigned int subbuf_size;
	unsigned int nr_subbufs;	/* in the mapping */
	unsigned int nr_ring;		/* consume, follow: the ids pages cycle through; the last is empty */
	unsigned int nr;		/* model pages */
	struct model_page pages[MAX_PAGES];
	unsigned int nr_recs;
	/* the mapping */
	unsigned char *map;
	struct trace_buffer_meta *meta;
	unsigned char *subbufs;
	/*
	 * consume: the reader page (model index, NONE before the first), its read
	 * position; follow: the page the writer fills and its commit position
	 */
	unsigned int cur;
	unsigned int pos;		/* a read position of nr_stops() */
	unsigned int swaps;
	struct fuzz_in *sched;
	uint64_t overrun;
	uint64_t nread;
};

static unsigned char *subbuf(struct model *m, unsigned int id)
{
	return m->subbufs + (size_t)id * m->subbuf_size;
}

static uint64_t load64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Read positions of a page: its record starts inside commit, then commit. */
static unsigned int nr_stops(const struct model_page *p)
{
	unsigned int commit = TM_COMMIT_SIZE(load64(p->bytes + 8)), n = 0;

	while (n < p->e.nr_starts && p->e.starts[n] < commit)
		n++;
	return n;
}

/* Byte offset of the read position @pos of @p. */
static unsigned int read_off(const struct model_page *p, unsigned int pos)
{
	return pos < nr_stops(p) ? p->e.starts[pos] : TM_COMMIT_SIZE(load64(p->bytes + 8));
}

static unsigned int recs_before(const struct model_page *p, unsigned int off)
{
	unsigned int n = 0;

	while (n < p->e.nr && p->e.recs[n].off < off)
		n++;
	return n;
}

/*
 * The kernel swaps model page @k in as the reader page: never the id it
 * had before, the ring recycling its sub-buffers in turn.
 */
static void swap_in(struct model *m, unsigned int k)
{
	struct model_page *p = &m->pages[k];
	unsigned int id = m->swaps++ % m->nr_ring;

	memcpy(subbuf(m, id), p->bytes, m->subbuf_size);
	m->cur = k;
	m->pos = 0;
	/* the overrun counter grew by what the page says was lost */
	if (p->lost > 0)
		m->overrun += p->lost;
	m->meta->reader.id = id;
	m->meta->overrun = m->overrun;
}

/* Nothing is left for GET_READER to hand out. */
static bool consumed_all(const struct model *m)
{
	unsigned int k = 0;

	if (m->cur != NONE) {
		if (m->pos < nr_stops(&m->pages[m->cur]))
			return false;
		k = m->cur + 1;
	}
	for (; k < m->nr; k++)
		if (nr_stops(&m->pages[k]) || m->pages[k].lost)
			return false;
	return true;
}

/*
 * GET_READER of the fake kernel: the read position moves on over the
 * reader page to a record boundary the schedule picks (its end when the
 * schedule is out), and once it is at the end, the next page with data or
 * a loss comes in, as the kernel swaps in only such a page.
 */
static int get_reader(void *ctx)
{
	struct model *m = ctx;
	struct model_page *p;
	unsigned int before, step;

	if (consumed_all(m))
		return 0;
	if (m->cur == NONE || m->pos >= nr_stops(&m->pages[m->cur])) {
		unsigned int k = m->cur == NONE ? 0 : m->cur + 1;

		while (!nr_stops(&m->pages[k]) && !m->pages[k].lost)
			k++;
		swap_in(m, k);
	}
	p = &m->pages[m->cur];
	before = recs_before(p, read_off(p, m->pos));
	step = m->sched->left ? m->sched->p[0] >> 1 : nr_stops(p);
	m->pos += step ? step : 1;
	if (m->pos > nr_stops(p))
		m->pos = nr_stops(p);
	/* the count of events handed out grows with the records of the new region */
	m->nread += recs_before(p, read_off(p, m->pos)) - before;
	m->meta->reader.read = read_off(p, m->pos);
	m->meta->read = m->nread;
	return 0;
}

/*
 * Follow: the writer fills model page @k up to read position @pos, in ring
 * slot k % nr_ring (recycling what was there), commit as far as it got.
 */
static void write_upto(struct model *m, unsigned int k, unsigned int pos)
{
	unsigned char *sb = subbuf(m, k % m->nr_ring);
	uint64_t commit = read_off(&m->pages[k], pos);

	if (getenv("FUZZ_DEBUG"))
		fprintf(stderr, "writer: page %u (ts %llu, records %u from %u) in slot %u, commit "
			"%llu (position %u of %u)\n", k, (unsigned long long)m->pages[k].e.page_ts,
			m->pages[k].e.nr, m->pages[k].first, k % m->nr_ring,
			(unsigned long long)commit, pos, nr_stops(&m->pages[k]));
	memcpy(sb, m->pages[k].bytes, m->subbuf_size);
	memcpy(sb + 8, &commit, sizeof(commit));
	m->cur = k;
	m->pos = pos;
}

/* The writer goes on by @step read positions, to the next pages when one is full. */
static void write_more(struct model *m, unsigned int step)
{
	unsigned int k = m->cur, pos = m->pos + step;

	while (pos > nr_stops(&m->pages[k]) && k + 1 < m->nr) {
		pos -= nr_stops(&m->pages[k]) + 1;
		k++;
	}
	if (pos > nr_stops(&m->pages[k]))
		pos = nr_stops(&m->pages[k]);
	/* every page it passed is complete, this one as far as it got */
	while (m->cur < k) {
		write_upto(m, m->cur, nr_stops(&m->pages[m->cur]));
		write_upto(m, m->cur + 1, 0);
	}
	write_upto(m, k, pos);
}

/* Records committed so far: the whole sequence up to the writer's position. */
static unsigned int committed(const struct model *m)
{
	const struct model_page *p = &m->pages[m->cur];

	return p->first + recs_before(p, read_off(p, m->pos));
}

static int build(struct model *m, struct fuzz_in *in, enum mode mode)
{
	bool consume = mode == CONSUME;
	static const unsigned int sizes[] = { 64, 128, 256, 4096 };
	uint64_t ts = 1000000000ULL, total = 0;
	unsigned int k, i, n;

	m->subbuf_size = sizes[take(in) % 4];
	m->nr = 1 + take(in) % MAX_PAGES;
	m->nr_subbufs = mode != SNAPSHOT ? 3 + m->nr % 3 : m->nr + 1;
	m->nr_ring = m->nr_subbufs - 1;
	m->map = calloc(1, META_SIZE + (size_t)m->nr_subbufs * m->subbuf_size);
	if (!m->map)
		return -1;
	m->meta = (struct trace_buffer_meta *)m->map;
	m->subbufs = m->map + META_SIZE;
	for (k = 0; k < m->nr; k++) {
		struct model_page *p = &m->pages[k];
		unsigned int lk = take(in), lv = take(in);

		p->bytes = malloc(m->subbuf_size);
		if (!p->bytes || sbe_init(&p->e, p->bytes, m->subbuf_size, ts))
			return -1;
		n = take(in) % 40;
		for (i = 0; i < n; i++) {
			unsigned int kind = take(in), len = take(in), d = take(in);
			uint64_t t = ts + ((uint64_t)d << (kind >> 5 & 7) * 4);
			int ret;

			switch (kind % 8) {
			case 0:
				ret = sbe_time_extend(&p->e, t + (1ULL << 27));
				break;
			case 1:
				ret = sbe_discard(&p->e, t, len % 64);
				break;
			case 2:
				ret = sbe_event(&p->e, t, NULL, len, SBE_LONG);
				break;
			case 3:
				ret = sbe_event(&p->e, t, NULL, len % 32, SBE_ABS);
				break;
			case 4:
				ret = sbe_event(&p->e, t, NULL, len % 32, SBE_EXTEND);
				break;
			default:
				ret = sbe_event(&p->e, t, NULL, len % 120, 0);
				break;
			}
			if (ret < 0)
				break;
			ts = p->e.ts;
		}
		if (i < n || (take(in) & 1))
			sbe_end_page(&p->e);
		/* the kernel flags a loss only on a page of its own; consume mode alone reports it */
		p->lost = !consume || !(lk & 3) ? 0 : 1 + lv + (lk >> 2 << 8);
		sbe_finish(&p->e, lk & 4 ? -p->lost : p->lost);
		p->first = m->nr_recs;
		m->nr_recs += p->e.nr;
		/* written since the reset: what was lost was written, then overwritten */
		total += p->e.nr + p->lost;
		/* the next page starts at or after the last record */
		ts = p->e.ts + 1;
	}
	m->meta->meta_page_size = META_SIZE;
	m->meta->meta_struct_len = META_SIZE;
	m->meta->subbuf_size = m->subbuf_size;
	m->meta->nr_subbufs = m->nr_subbufs;
	m->meta->entries = total;
	return 0;
}

/* The record @j of the whole sequence: its page and its entry. */
static const struct sbe_rec *model_rec(const struct model *m, unsigned int j,
				       const struct model_page **page)
{
	unsigned int k = 0;

	while (k + 1 < m->nr && m->pages[k + 1].first <= j)
		k++;
	*page = &m->pages[k];
	return &m->pages[k].e.recs[j - m->pages[k].first];
}

struct seen {
	unsigned int recs;		/* records found in the pages so far */
	unsigned int losses;		/* losses found so far */
	/* follow: the last record found (its index + 1, 0: none), a loss told since */
	bool follow;
	unsigned int next;
	bool told;
};

/*
 * Follow: the record that comes next in the sequence at or after @from
 * with this time, size and payload; NONE when there is none. The earliest
 * one: the delivered records must be a subsequence of the written ones.
 */
static unsigned int find_rec(const struct model *m, unsigned int from, const struct tm_rec *rec)
{
	const struct model_page *mp;
	const struct sbe_rec *want;
	unsigned int j;

	for (j = from; j < m->nr_recs; j++) {
		want = model_rec(m, j, &mp);
		if (rec->ts == want->ts && rec->size == want->size &&
		    !memcmp(rec->payload, mp->bytes + SBE_HDR + want->payload_off, rec->size))
			return j;
	}
	return NONE;
}

/*
 * Follow: the writer may overwrite what was not read yet, and the reader
 * may report a gap it cannot rule out, but every record it delivers was
 * written, in order, once, and a skipped one is never skipped silently.
 */
static void check_follow_page(const struct model *m, const unsigned char *page, struct seen *s)
{
	uint64_t commit = load64(page + 8);
	unsigned int size = TM_COMMIT_SIZE(commit), j;
	struct tm_walk w = { page + TM_SUBBUF_HDR, 0, size, load64(page) };
	struct tm_rec rec;
	bool first = true;
	int ret;

	check(size <= m->subbuf_size - TM_SUBBUF_HDR);
	if (tm_subbuf_lost(page, m->subbuf_size))
		s->told = true;
	while ((ret = tm_walk_next(&w, &rec)) > 0) {
		j = find_rec(m, s->next, &rec);
		if (getenv("FUZZ_DEBUG"))
			fprintf(stderr, "  record ts %llu size %u: sequence %u%s\n",
				(unsigned long long)rec.ts, rec.size, j, s->told ? " after a gap" : "");
		check(j != NONE);
		/* a gap before the first record of a page at most: within one, none */
		if (s->next && j != s->next)
			check(first && s->told);
		s->next = j + 1;
		s->told = false;
		first = false;
		s->recs++;
	}
	check(ret == 0);
}

/*
 * One page the builder wrote: its records must be the next ones of the
 * sequence (time, size, payload bytes), its loss the next one and exactly
 * where the model has it.
 */
static void check_page(const struct model *m, const unsigned char *page, struct seen *s,
		       const long long *losses, const unsigned int *loss_at, unsigned int nr_losses)
{
	uint64_t commit = load64(page + 8);
	unsigned int size = TM_COMMIT_SIZE(commit);
	struct tm_walk w = { page + TM_SUBBUF_HDR, 0, size, load64(page) };
	long long lost = tm_subbuf_lost(page, m->subbuf_size);
	const struct model_page *mp;
	const struct sbe_rec *want;
	struct tm_rec rec;
	int ret;

	check(size <= m->subbuf_size - TM_SUBBUF_HDR);
	if (lost) {
		check(s->losses < nr_losses);
		check(loss_at[s->losses] == s->recs);
		/* a full page has no room for the count: the flag alone says "unknown" */
		check(lost == losses[s->losses] || lost == TRACEMAP_LOST_UNKNOWN);
		if (lost == TRACEMAP_LOST_UNKNOWN)
			check(size + 24 > m->subbuf_size);
		s->losses++;
	}
	while ((ret = tm_walk_next(&w, &rec)) > 0) {
		check(s->recs < m->nr_recs);
		want = model_rec(m, s->recs, &mp);
		check(rec.ts == want->ts);
		check(rec.size == want->size);
		check(!memcmp(rec.payload, mp->bytes + SBE_HDR + want->payload_off, rec.size));
		s->recs++;
	}
	check(ret == 0);
}

static void run(struct model *m, enum mode mode, struct fuzz_in *sched)
{
	bool consume = mode == CONSUME;
	long long losses[MAX_PAGES];
	unsigned int loss_at[MAX_PAGES], nr_losses = 0, skip = 0, k, calls, bound;
	struct tracemap_cpu *c;
	struct seen s = { 0 };
	unsigned char *page;
	int ret;

	page = malloc(m->subbuf_size);
	check(page);
	m->sched = sched;
	if (consume) {
		/* at mmap time the reader page is an empty one of its own */
		m->cur = NONE;
		m->meta->reader.id = m->nr_ring;
	} else if (mode == FOLLOW) {
		/* the writer is somewhere when the reader opens; the reader page is empty */
		unsigned int last = take(sched) % m->nr;

		/* what came before the ring's pages was overwritten before the open */
		for (k = last < m->nr_ring ? 0 : last - m->nr_ring + 1; k < last; k++)
			write_upto(m, k, nr_stops(&m->pages[k]));
		write_upto(m, last, take(sched) % (nr_stops(&m->pages[last]) + 1));
		m->meta->reader.id = m->nr_ring;
		s.follow = true;
	} else {
		/* every page in the ring at once, the oldest as the reader page read up to a point */
		unsigned int first = take(sched) % (m->nr + 1);

		for (k = 0; k < m->nr; k++)
			memcpy(subbuf(m, (k + first) % m->nr_subbufs), m->pages[k].bytes,
			       m->subbuf_size);
		m->meta->reader.id = first % m->nr_subbufs;
		m->meta->reader.read = read_off(&m->pages[0],
						take(sched) % (nr_stops(&m->pages[0]) + 1));
		/* the model pages are the ring; what the reader page handed out is not there */
		skip = recs_before(&m->pages[0], m->meta->reader.read);
	}
	for (k = 0; k < m->nr; k++) {
		if (!m->pages[k].lost)
			continue;
		losses[nr_losses] = m->pages[k].lost;
		loss_at[nr_losses++] = m->pages[k].first;
	}

	c = tm_cpu_open_memory(0, consume ? TRACEMAP_MODE_CONSUME : mode == FOLLOW ?
			       TRACEMAP_MODE_FOLLOW : TRACEMAP_MODE_SNAPSHOT, m->meta, m->subbufs,
			       m->subbuf_size, m->nr_subbufs, get_reader, m);
	check(c);
	s.recs = skip;
	/*
	 * A call per schedule byte, then flushing calls until nothing is left:
	 * each GET_READER moves on by a record boundary or a page at least.
	 */
	for (k = 0, bound = 16; k < m->nr; k++)
		bound += nr_stops(&m->pages[k]) + 1;
	for (calls = 0; calls < 2 * bound; calls++) {
		unsigned int b = take(sched);
		unsigned int flags = calls >= bound || !sched->left || (b & 1) ?
				     TRACEMAP_PAGE_FLUSH : 0;

		/* the writer goes on between two reads (in the first half), overwriting */
		if (mode == FOLLOW && sched->left && calls < bound)
			write_more(m, b >> 1 & 7);
		ret = tracemap_cpu_read_page(c, page, m->subbuf_size, flags);
		if (getenv("FUZZ_DEBUG"))
			fprintf(stderr, "read_page(%s) = %d: model page %u pos %u, %u records %u losses "
				"seen\n", flags ? "flush" : "0", ret, m->cur, m->pos, s.recs, s.losses);
		check(ret >= 0);
		if (ret > 0) {
			check(ret == (int)m->subbuf_size);
			if (mode == FOLLOW)
				check_follow_page(m, page, &s);
			else
				check_page(m, page, &s, losses, loss_at, nr_losses);
		} else if (flags && (mode == SNAPSHOT || (consume && consumed_all(m)) ||
				     (mode == FOLLOW && (!sched->left || calls >= bound)))) {
			break;
		}
	}
	if (mode == FOLLOW) {
		unsigned int oldest = m->cur < m->nr_ring ? 0 : m->cur - m->nr_ring + 1;

		/* the newest records are in the ring: delivered up to the last one */
		if (getenv("FUZZ_DEBUG"))
			fprintf(stderr, "follow: delivered up to %u of %u, ring from page %u (record "
				"%u)\n", s.next, committed(m), oldest, m->pages[oldest].first);
		if (committed(m) > m->pages[oldest].first)
			check(s.next == committed(m));
	} else {
		check(s.recs == m->nr_recs);
		check(s.losses == nr_losses);
	}
	tracemap_cpu_close(c);
	free(page);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct model m = { 0 };
	struct fuzz_in in = { data, size };
	enum mode mode;
	unsigned int k;

	tracemap_set_print(fuzz_print, NULL);
	mode = (enum mode)(take(&in) % 3);
	if (!build(&m, &in, mode))
		run(&m, mode, &in);
	for (k = 0; k < m.nr; k++) {
		sbe_release(&m.pages[k].e);
		free(m.pages[k].bytes);
	}
	free(m.map);
	return 0;
}
