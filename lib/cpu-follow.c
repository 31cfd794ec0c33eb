// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Follow: after the snapshot, every new event, read from validated copies of
 * the live pages without consuming. Owns struct tm_follow: a cursor on the
 * page it reads and a gap to report. The snapshot source hands over where
 * to start through tm_follow_from(); until its pages are all handed out,
 * follow delivers them (tm_snapshot_region()).
 */
#include "cpu-local.h"

void tm_follow_from(struct tracemap_cpu *c, bool valid, unsigned int id, unsigned int off,
		    uint64_t ts, uint64_t walk_ts)
{
	struct tm_follow *f = &c->follow;

	f->cur.valid = valid;
	f->cur.complete = false;
	f->cur.id = id;
	f->cur.off = off;
	f->cur.ts = ts;
	f->cur.walk_ts = walk_ts;
	f->cur.next_valid = false;
	f->pending_lost = 0;
}

/* What one look at the live headers found */
struct look {
	bool found;
	unsigned int id;	/* the oldest page newer than the time asked for */
	uint64_t ts;		/* ... its time stamp */
	unsigned int at;	/* ... and where in the look it was read */
	unsigned int newer;	/* pages newer than the time asked for */
	unsigned int before;	/* ... of them read before position at */
};

/* One look at @n headers from sub-buffer @from on, in id order round the ring */
static void look_newer(struct tracemap_cpu *c, uint64_t ts, unsigned int from, unsigned int n,
		       struct look *l)
{
	unsigned int i;

	*l = (struct look){ .found = false };
	for (i = 0; i < n; i++) {
		unsigned int id = (from + i) % c->nr_subbufs;
		const unsigned char *sb = tm_subbuf_at(c, id);
		/* pairs with the writer's time stamp store before it raises commit */
		uint64_t commit = tm_subbuf_load(sb, TM_SB_COMMIT, __ATOMIC_ACQUIRE);
		uint64_t t = tm_subbuf_load(sb, TM_SB_TS, __ATOMIC_RELAXED);

		if (!TM_COMMIT_SIZE(commit) || t <= ts)
			continue;
		if (!l->found || t < l->ts) {
			*l = (struct look){ .found = true, .id = id, .ts = t, .at = i,
					    .newer = l->newer, .before = l->newer };
		}
		l->newer++;
	}
}

/*
 * The oldest page newer than @ts, read from the live headers; @newer counts
 * them. One look is no snapshot of the headers: a page it passed before
 * the writer reached it, the writer may fill and leave for a page the look
 * reads later, which would be taken for the oldest newer one and the pages
 * between skipped without a trace (a follower descheduled in the middle of
 * the look, tests/unit/test-follow-look). Such a page was written before
 * the one found, so it was read before it: a second look at the positions
 * before that one sees it (recycling it would first recycle the page @ts is
 * of, which the caller checks afterwards), and what the writer fills during
 * the second look is newer than what the first one found. The looks start
 * after the page being left, where the next one usually is: then the
 * second look has nothing to read.
 */
static bool find_successor(struct tracemap_cpu *c, uint64_t ts, unsigned int *sid, uint64_t *sts,
			   unsigned int *newer)
{
	unsigned int from = c->follow.cur.id < c->nr_subbufs ? c->follow.cur.id + 1 : 0;
	struct look first, again;

	look_newer(c, ts, from, c->nr_subbufs, &first);
	*newer = first.newer;
	if (!first.found)
		return false;
	if (first.at) {
		look_newer(c, ts, from, first.at, &again);
		*newer = first.newer - first.before + again.newer;
		if (again.found && again.ts < first.ts) {
			first.id = again.id;
			first.ts = again.ts;
		}
	}
	*sid = first.id;
	*sts = first.ts;
	return true;
}

/*
 * Data the follower had not read yet was overwritten or cleared. After a
 * reset (echo > trace) nothing has been overwritten since, and what the
 * reset dropped is no loss, as in consuming mode. Otherwise a gap is
 * reported on the next event (count unknown), and counted by how sure it
 * is: certain (lost_unknown) when a page known to hold unread events was
 * rewritten; possible (gaps_possible) when all that is known is that the
 * writer came around (the page being read, or one left before its
 * successor was seen, was recycled): unread events may or may not have been
 * overwritten, and reporting nothing would hide a loss that did happen.
 */
static void follow_gap(struct tracemap_cpu *c, bool certain)
{
	struct tracemap_cpu_stats k;

	if (c->follow.pending_lost)
		return;
	if (!tm_cpu_stats_file(c->stats_path, &k) && !k.kernel_overrun)
		return;
	c->follow.pending_lost = TRACEMAP_LOST_UNKNOWN;
	if (certain)
		c->st.lost_unknown++;
	else
		c->st.gaps_possible++;
}

/*
 * The cursor page was handed out in full and the page that came next then
 * is known: if it still has that time stamp, nothing after the cursor was
 * overwritten (the writer fills pages in ring order, so it reaches that page
 * again only after every other one, the cursor page included). Move on to
 * it and return true; if it was rewritten, what it held is gone for certain.
 */
static bool follow_next(struct tracemap_cpu *c)
{
	struct tm_follow *f = &c->follow;
	uint64_t ts;

	if (!f->cur.next_valid)
		return false;
	/* pairs with the writer's time stamp store, as in find_successor() */
	ts = tm_subbuf_load(tm_subbuf_at(c, f->cur.next_id), TM_SB_TS, __ATOMIC_ACQUIRE);
	if (ts != f->cur.next_ts) {
		follow_gap(c, true);
		return false;
	}
	f->cur.valid = true;
	f->cur.complete = false;
	f->cur.id = f->cur.next_id;
	f->cur.off = 0;
	f->cur.ts = ts;
	f->cur.walk_ts = UINT64_MAX;
	f->cur.next_valid = false;
	return true;
}

int tm_follow_region(struct tracemap_cpu *c, struct tracemap_region *r)
{
	unsigned int sid = 0, size, loops, newer;
	struct tm_follow *f = &c->follow;
	uint64_t sts = 0, ts, end_ts;
	bool succ, left_intact, left_known = false;
	int ret;

	if (!tm_snapshot_done(c))
		return tm_snapshot_region(c, r);

	for (loops = 0; loops <= c->nr_subbufs; loops++) {
		if (f->cur.valid && f->cur.complete) {
			/* fully handed out: move on without looking at it again */
			f->cur.valid = false;
			if (follow_next(c))
				continue;
			/* rewritten: from the oldest page that is newer, below */
			left_known = true;
		}
		/* look for a newer page first: then the cursor page's commit is final */
		succ = find_successor(c, f->cur.ts, &sid, &sts, &newer);
		left_intact = false;
		if (f->cur.valid) {
			/*
			 * Recycled before we copied the rest, or cleared: by a reset,
			 * or by the writer that is recycling it (commit goes to 0
			 * before the new time stamp is written).
			 */
			if (tm_subbuf_copy(f->buf, tm_subbuf_at(c, f->cur.id), c->subbuf_size, &ts,
					   &size) || ts != f->cur.ts || size < f->cur.off) {
				/* what it got after our offset, if anything, is gone */
				follow_gap(c, false);
				f->cur.valid = false;
				continue;
			}
			if (size > f->cur.off) {
				ret = tm_copy_region(c, r, f->buf, f->cur.id, f->cur.off, size,
						     f->cur.walk_ts, &end_ts);
				r->lost = tm_lost_add(r->lost, f->pending_lost);
				f->pending_lost = 0;
				f->cur.off = size;
				f->cur.walk_ts = end_ts;
				if (succ) {
					r->flags |= TRACEMAP_REGION_COMPLETE;
					f->cur.complete = true;
					f->cur.next_valid = true;
					f->cur.next_id = sid;
					f->cur.next_ts = sts;
				}
				return ret;
			}
			if (!succ)
				return 0;
			f->cur.valid = false;
			left_intact = true;
		}
		if (!succ) {
			if (!f->pending_lost)
				return 0;
			/* report the gap even when nothing follows it yet */
			tm_region_init(c, r, tm_subbuf_at(c, 0), TM_NO_ID);
			r->subbuf = r->data = NULL;
			r->lost = f->pending_lost;
			f->pending_lost = 0;
			return 1;
		}
		/*
		 * The writer fills pages in ring order, so while the page we leave
		 * still holds what we read, the oldest newer page is the one right
		 * after it. Once that page was recycled, the writer went through its
		 * successors too: what they held is gone. Checked after the search,
		 * which pairs with the writer's time stamp store before commit.
		 */
		if (!left_intact && !left_known && f->cur.id != TM_NO_ID &&
		    tm_subbuf_load(tm_subbuf_at(c, f->cur.id), TM_SB_TS, __ATOMIC_ACQUIRE) !=
		    f->cur.ts)
			follow_gap(c, false);
		left_known = false;
		/*
		 * Nothing was left to follow from (the buffer was empty at open):
		 * the first page written since is still there unless the writer
		 * has used every page of the ring since.
		 */
		if (f->cur.id == TM_NO_ID && newer + 1 >= c->nr_subbufs)
			follow_gap(c, false);
		f->cur.valid = true;
		f->cur.complete = false;
		f->cur.next_valid = false;
		f->cur.id = sid;
		f->cur.off = 0;
		f->cur.ts = sts;
		f->cur.walk_ts = UINT64_MAX;
	}
	return 0;
}
