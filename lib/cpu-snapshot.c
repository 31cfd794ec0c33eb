// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Snapshot: validated copies of every sub-buffer, ordered by time, without
 * consuming anything. Owns struct tm_snapshot. When the last copied page is
 * handed out, the follow source is told where to continue (tm_follow_from()).
 */
#include <stdlib.h>
#include <string.h>

#include "cpu-local.h"

static int cmp_snap(const void *a, const void *b)
{
	const struct tm_snap_page *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

#define MAX_RUNS	16

/* @a (@na pages) and @b (@nb) merged into @out, @a's first among equals */
static void merge(const struct tm_snap_page *a, unsigned int na, const struct tm_snap_page *b,
		  unsigned int nb, struct tm_snap_page *out,
		  int (*cmp)(const void *, const void *))
{
	while (na && nb) {
		if (cmp(a, b) <= 0) {
			*out++ = *a++;
			na--;
		} else {
			*out++ = *b++;
			nb--;
		}
	}
	memcpy(out, na ? a : b, (na ? na : nb) * sizeof(*out));
}

/*
 * Sort @n pages by @cmp. Read in id order, a ring is a few ascending runs
 * (the kernel numbers the sub-buffers from the head at the first mmap: the
 * pages the writer reached since, then the older ones; the reader page),
 * which are merged in O(n) a level; anything else goes to qsort().
 */
static void sort_pages(struct tm_snap_page *p, unsigned int n,
		       int (*cmp)(const void *, const void *))
{
	unsigned int start[MAX_RUNS + 1], runs = 0, out, r, i;
	struct tm_snap_page *tmp;

	for (i = 0; i < n; i++) {
		if (i && cmp(&p[i - 1], &p[i]) <= 0)
			continue;
		if (runs == MAX_RUNS)
			goto any;
		start[runs++] = i;
	}
	if (runs <= 1)
		return;
	start[runs] = n;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		goto any;
	while (runs > 1) {
		for (r = 0, out = 0; r < runs; r += 2, out++) {
			if (r + 1 < runs)
				merge(p + start[r], start[r + 1] - start[r], p + start[r + 1],
				      start[r + 2] - start[r + 1], tmp + start[r], cmp);
			else
				memcpy(tmp + start[r], p + start[r],
				       (start[r + 1] - start[r]) * sizeof(*p));
			start[out] = start[r];
		}
		start[out] = n;
		runs = out;
		memcpy(p, tmp, n * sizeof(*p));
	}
	free(tmp);
	return;
any:
	qsort(p, n, sizeof(*p), cmp);
}

static unsigned char *copy_of(const struct tracemap_cpu *c, unsigned int id)
{
	return c->snap.copies + (size_t)c->snap.slot[id] * c->subbuf_size;
}

/* Validated copy of one sub-buffer into its slot, retried while it tears. */
static int copy_page(struct tracemap_cpu *c, unsigned int id, uint64_t *ts, unsigned int *size)
{
	struct tm_snap_slot *sl = &c->snap.slots[c->snap.slot[id]];
	unsigned char *dst = copy_of(c, id);
	int tries;

	*sl = (struct tm_snap_slot){ 0 };
	for (tries = 0; tries < 4; tries++)
		if (!tm_subbuf_copy(dst, tm_subbuf_at(c, id), c->subbuf_size, ts, size))
			return 0;
	return tm_err(EAGAIN);
}

static int cmp_kept(const void *a, const void *b)
{
	const struct tm_snap_page *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->size < y->size ? -1 : x->size > y->size;
}

/*
 * Take the seed's copies for the first scan: each sub-buffer whose header
 * (time stamp, size) is that of a kept copy gets that copy's slot, as if
 * this reader had copied it; the first pass then checks it like any copy
 * of its own. The sub-buffer ids of a new mapping need not be the old ones
 * (the kernel numbers them from the head page at the first mmap), so the
 * match is by time stamp: a page recycled since has a new one. Copies the
 * dump rewrote unlike the kernel's page are left out. Returns true when
 * seeded; the seed is freed either way.
 */
static bool seed_copies(struct tracemap_cpu *c)
{
	struct tm_snap_keep *k = c->snap.seed;
	struct tm_snapshot *s = &c->snap;
	unsigned int i, n = 0, lo, hi, mid, free_slot = 0, size;
	struct tm_snap_page *kept = NULL, key;
	unsigned char *used = NULL, *p;
	struct tm_snap_slot *sl;
	uint64_t commit;
	bool seeded = false;

	s->seed = NULL;
	if (k->subbuf_size != c->subbuf_size || k->nr_subbufs != c->nr_subbufs)
		goto out;
	kept = malloc(c->nr_subbufs * sizeof(*kept));
	used = calloc(c->nr_subbufs, 1);
	if (!kept || !used)
		goto out;
	for (i = 0; i < k->nr_subbufs; i++) {
		if (k->byid[i].id == TM_NO_ID || !k->byid[i].size || k->slots[k->slot[i]].changed)
			continue;
		kept[n] = k->byid[i];
		kept[n++].id = k->slot[i];	/* the slot, for the search below */
	}
	sort_pages(kept, n, cmp_kept);

	/* the buffers change hands: the reader's fresh ones go with the seed */
	p = s->copies, s->copies = k->copies, k->copies = p;
	sl = s->slots, s->slots = k->slots, k->slots = sl;
	for (i = 0; i < c->nr_subbufs; i++) {
		const unsigned char *sb = tm_subbuf_at(c, i);

		/* time stamp before commit, as snapshot_pass() reads them */
		key.ts = tm_subbuf_load(sb, TM_SB_TS, __ATOMIC_ACQUIRE);
		commit = tm_subbuf_load(sb, TM_SB_COMMIT, __ATOMIC_ACQUIRE);
		key.size = size = TM_COMMIT_SIZE(commit);
		s->slot[i] = TM_NO_ID;
		s->byid[i] = (struct tm_snap_page){ .id = TM_NO_ID };
		for (lo = 0, hi = n; lo < hi;) {
			mid = lo + (hi - lo) / 2;
			if (cmp_kept(&kept[mid], &key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < n && !cmp_kept(&kept[lo], &key); lo++) {
			if (used[kept[lo].id])
				continue;
			used[kept[lo].id] = 1;
			s->slot[i] = kept[lo].id;
			s->byid[i] = (struct tm_snap_page){ .ts = key.ts, .id = i, .size = size };
			break;
		}
	}
	/* the others are copied into the slots no match took */
	for (i = 0; i < c->nr_subbufs; i++) {
		if (s->slot[i] != TM_NO_ID)
			continue;
		while (used[free_slot])
			free_slot++;
		used[free_slot] = 1;
		s->slot[i] = free_slot;
	}
	seeded = true;
out:
	/* what the seed holds now is unused: the reader's fresh buffers, or its own */
	free(kept);
	free(used);
	tm_snap_keep_free(k);
	return seeded;
}

/*
 * Bring the copies of every sub-buffer up to date: copy each page whose
 * header changed since its last copy (all of them on the first pass).
 * Returns true when the only change was growth of the newest page.
 *
 * Copies taken one after the other while the writer goes on need not fit
 * together: a page copied before the writer recycled it lacks its new
 * content, and a page copied later may already hold what followed, a gap
 * in the middle. A pass that finds every other page as copied proves the
 * set gap-free: the writer changes only the newest page and, moving on,
 * the oldest one, so a page recycled after its check holds data newer than
 * all we have, and the one after it would have been seen changed.
 */
static bool snapshot_pass(struct tracemap_cpu *c, bool first)
{
	unsigned int i, size, grown = TM_NO_ID, newest = TM_NO_ID;
	struct tm_snap_page *byid = c->snap.byid;
	uint64_t ts, commit;
	bool other = false;

	for (i = 0; i < c->nr_subbufs; i++) {
		struct tm_snap_page *p = &byid[i];
		const unsigned char *sb = tm_subbuf_at(c, i);

		if (!first) {
			/* time stamp before commit: the writer's order reversed (tm_subbuf_copy) */
			ts = tm_subbuf_load(sb, TM_SB_TS, __ATOMIC_ACQUIRE);
			commit = tm_subbuf_load(sb, TM_SB_COMMIT, __ATOMIC_ACQUIRE);
			if (p->id != TM_NO_ID && ts == p->ts && TM_COMMIT_SIZE(commit) == p->size)
				continue;
			if (p->id != TM_NO_ID && ts == p->ts && TM_COMMIT_SIZE(commit) > p->size &&
			    grown == TM_NO_ID)
				grown = i;
			else
				other = true;
		}
		if (copy_page(c, i, &ts, &size)) {
			*p = (struct tm_snap_page){ .id = TM_NO_ID };
			other = true;
			continue;
		}
		/* recycled between the look and the copy */
		if (grown == i && ts != p->ts)
			other = true;
		*p = (struct tm_snap_page){ .ts = ts, .id = i, .size = size };
	}
	for (i = 0; i < c->nr_subbufs; i++)
		if (byid[i].id != TM_NO_ID && byid[i].size &&
		    (newest == TM_NO_ID || byid[i].ts > byid[newest].ts))
			newest = i;
	return !first && !other && (grown == TM_NO_ID || grown == newest);
}

/*
 * Copy every sub-buffer, order by time, and keep what the reader page has not
 * handed out: pages older than the reader page were consumed and only wait in
 * the ring to be overwritten.
 */
void tm_snapshot_scan(struct tracemap_cpu *c)
{
	unsigned int i, n = 0, keep = 0, pass;
	struct tm_snapshot *s = &c->snap;
	struct tm_snap_page *rp = NULL;
	bool settled = false, seeded;
	struct tm_meta m;

	seeded = s->seed && seed_copies(c);

	/* pairs with rb_update_meta_page(): the reader page as of the last GET_READER */
	tm_meta_load(c->meta, &m);
	for (pass = 0; pass < 16 && !settled; pass++)
		settled = snapshot_pass(c, !pass && !seeded);
	for (i = 0; i < c->nr_subbufs; i++)
		if (s->byid[i].id != TM_NO_ID && s->byid[i].size)
			s->order[n++] = s->byid[i];
	sort_pages(s->order, n, cmp_snap);
	/* the writer outran us every time: any page boundary may hide a gap */
	s->unsure = !settled;
	if (!settled)
		c->st.gaps_possible++;
	for (i = 0; i < n; i++)
		if (s->order[i].id == m.id)
			rp = &s->order[i];
	for (i = 0; i < n; i++) {
		struct tm_snap_page p = s->order[i];

		if (p.id == m.id) {
			p.start = m.read;
			if (p.start >= p.size)
				continue;
		} else if (rp && p.ts <= rp->ts) {
			continue;
		}
		s->order[keep++] = p;
	}
	s->nr_order = keep;
	s->next_order = 0;
	s->scanned = true;

	/*
	 * Where follow mode starts when the snapshot holds nothing new: on the
	 * reader page after what it handed out (the time there is found by
	 * walking from 0 when the page grows), or on the first page newer.
	 */
	if (rp && m.read >= rp->size)
		tm_follow_from(c, true, m.id, m.read, rp->ts, UINT64_MAX);
	else
		tm_follow_from(c, false, rp ? rp->id : TM_NO_ID, 0, rp ? rp->ts : 0, 0);
}

int tm_copy_region(struct tracemap_cpu *c, struct tracemap_region *r, const unsigned char *sb,
		   unsigned int id, unsigned int start, unsigned int end, uint64_t base_ts,
		   uint64_t *end_ts)
{
	struct tm_tally tally, *t = NULL;
	struct tm_walk w;

	tm_region_init(c, r, sb, id);
	w = (struct tm_walk){ r->data, 0, end, r->page_ts };
	if (base_ts != UINT64_MAX && start) {
		w.off = start;
		w.ts = base_ts;
	}
	if (tm_walk_skip(&w, start) < 0)
		goto corrupt;
	r->base_ts = w.ts;
	r->start = start;
	r->end = end;
	/*
	 * A corrupt region is handed out empty: its records count only when all
	 * of it walked (the event ids seen before the bad record stay noted,
	 * which costs the dump no more than a format it does not need).
	 */
	if (c->tally) {
		tally = *c->tally;
		t = &tally;
	}
	if (tm_walk_tally(&w, end, t) < 0)
		goto corrupt;
	if (t)
		*c->tally = tally;
	*end_ts = w.ts;
	return 1;
corrupt:
	c->st.corrupt++;
	tm_log(TRACEMAP_LOG_WARN, "cpu%d: corrupt record in sub-buffer %u: skipped", c->cpu, id);
	r->start = r->end = end;
	r->base_ts = r->page_ts;
	r->lost = TRACEMAP_LOST_UNKNOWN;
	*end_ts = r->page_ts;
	return 1;
}

/* What the slot's counts add to @t, as tm_walk_tally() would have counted them */
static void tally_add(struct tm_tally *t, const struct tm_snap_slot *sl)
{
	unsigned int i;

	if (sl->events) {
		if (!t->events)
			t->first_ts = sl->first_ts;
		t->last_ts = sl->last_ts;
	}
	t->events += sl->events;
	t->bytes += sl->bytes;
	for (i = 0; i < sl->nr_ids; i++)
		t->ids[sl->ids[i] / 8] |= 1 << (sl->ids[i] % 8);
}

/*
 * The region of a whole page @p counted for a dump: from the slot's counts
 * when the copy was counted before (a dump taken again walks only the pages
 * it copied), else walked and its counts kept in the slot.
 */
static void whole_page(struct tracemap_cpu *c, struct tracemap_region *r,
		       const struct tm_snap_page *p, uint64_t *end_ts)
{
	struct tm_snap_slot *sl = &c->snap.slots[c->snap.slot[p->id]];
	struct tm_tally *outer = c->tally, page = { .ids = outer->ids, .few = sl->ids,
						    .max_few = TM_SLOT_IDS };
	uint64_t corrupt = c->st.corrupt;

	if (sl->counted) {
		tm_region_init(c, r, copy_of(c, p->id), p->id);
		r->base_ts = r->page_ts;
		r->end = p->size;
		*end_ts = sl->end_ts;
		tally_add(outer, sl);
		return;
	}
	c->tally = &page;
	tm_copy_region(c, r, copy_of(c, p->id), p->id, 0, p->size, UINT64_MAX, end_ts);
	c->tally = outer;
	if (c->st.corrupt != corrupt)
		return;
	sl->events = page.events;
	sl->bytes = page.bytes;
	sl->first_ts = page.first_ts;
	sl->last_ts = page.last_ts;
	sl->end_ts = *end_ts;
	/* more ids than a slot holds: the bitmap has them, the page is walked next time */
	sl->counted = page.nr_few <= TM_SLOT_IDS;
	sl->nr_ids = sl->counted ? page.nr_few : 0;
	tally_add(outer, sl);
}

int tm_snapshot_region(struct tracemap_cpu *c, struct tracemap_region *r)
{
	struct tm_snapshot *s = &c->snap;
	struct tm_snap_page *p;
	uint64_t end_ts;

	if (!s->scanned)
		tm_snapshot_scan(c);
	if (s->next_order >= s->nr_order)
		return 0;
	p = &s->order[s->next_order++];
	if (c->tally && !p->start)
		whole_page(c, r, p, &end_ts);
	else
		tm_copy_region(c, r, copy_of(c, p->id), p->id, p->start, p->size, UINT64_MAX,
			       &end_ts);
	if (s->unsure && s->next_order > 1)
		r->lost = TRACEMAP_LOST_UNKNOWN;
	if (s->next_order < s->nr_order)
		r->flags |= TRACEMAP_REGION_COMPLETE;

	/* follow mode continues from the last page handed out */
	tm_follow_from(c, true, p->id, p->size, p->ts, end_ts);
	return 1;
}

bool tm_snapshot_done(const struct tracemap_cpu *c)
{
	return c->snap.scanned && c->snap.next_order >= c->snap.nr_order;
}

void tm_snapshot_rewind(struct tracemap_cpu *c)
{
	c->snap.scanned = false;
	c->snap.nr_order = c->snap.next_order = 0;
}

void tm_snapshot_seed(struct tracemap_cpu *c, struct tm_snap_keep *k)
{
	tm_snap_keep_free(c->snap.seed);
	c->snap.seed = k;
}

void tm_snapshot_changed(struct tracemap_cpu *c, const unsigned char *page)
{
	const unsigned char *copies = c->snap.copies;
	struct tm_snap_slot *sl;

	if (!copies || page < copies || page >= copies + (size_t)c->nr_subbufs * c->subbuf_size)
		return;
	sl = &c->snap.slots[(page - copies) / c->subbuf_size];
	sl->changed = true;
	sl->counted = false;
}

bool tm_snapshot_clean(const struct tracemap_cpu *c, const unsigned char *page)
{
	const unsigned char *copies = c->snap.copies;

	if (!copies || page < copies || page >= copies + (size_t)c->nr_subbufs * c->subbuf_size)
		return false;
	return !c->snap.slots[(page - copies) / c->subbuf_size].changed;
}

struct tm_snap_keep *tm_snapshot_keep(struct tracemap_cpu *c)
{
	struct tm_snapshot *s = &c->snap;
	struct tm_snap_keep *k;

	if (!s->copies || !s->byid || !s->slot || !s->slots) {
		tm_err(EINVAL);
		return NULL;
	}
	k = malloc(sizeof(*k));
	if (!k) {
		tm_err(ENOMEM);
		return NULL;
	}
	*k = (struct tm_snap_keep){ .copies = s->copies, .byid = s->byid, .slot = s->slot,
				    .slots = s->slots, .subbuf_size = c->subbuf_size,
				    .nr_subbufs = c->nr_subbufs };
	s->copies = NULL;
	s->byid = NULL;
	s->slot = NULL;
	s->slots = NULL;
	/* nothing is handed out of them any more */
	tm_snapshot_rewind(c);
	return k;
}

void tm_snap_keep_free(struct tm_snap_keep *k)
{
	if (!k)
		return;
	tm_pages_free(k->copies, (size_t)k->nr_subbufs * k->subbuf_size);
	free(k->byid);
	free(k->slot);
	free(k->slots);
	free(k);
}
