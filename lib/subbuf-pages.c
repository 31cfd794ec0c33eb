// SPDX-License-Identifier: LGPL-2.1-only
/*
 * The page builder of tracemap_cpu_read_page(), beside the page writer
 * (subbuf.c): it joins the regions of one sub-buffer into a held page and
 * writes it out with tm_subbuf_write() once the kernel moved past it. It
 * owns struct tm_pages of the per-CPU reader and takes regions through
 * tracemap_cpu_read_region() like any other caller.
 */
#include <string.h>

#include "cpu-local.h"

static int stage_emit(struct tracemap_cpu *c, void *buf)
{
	struct tm_pages *pb = &c->pages;

	pb->staged = false;
	pb->complete = false;
	return tm_subbuf_write(buf, c->subbuf_size, pb->stage, 0, pb->end - pb->start, pb->base,
			       pb->lost);
}

static bool stage_continues(const struct tm_pages *pb, const struct tracemap_region *r)
{
	return r->data && !r->lost && r->id == pb->id && r->start == pb->end;
}

/* Hold @r: start a page with it or append it to the held one. */
static void stage_take(struct tm_pages *pb, const struct tracemap_region *r)
{
	if (!pb->staged) {
		pb->staged = true;
		pb->id = r->data ? r->id : TM_NO_ID;
		pb->start = pb->end = r->start;
		pb->base = r->base_ts;
		pb->lost = r->lost;
		pb->since = tm_now_ns();
	}
	if (!r->data)
		return;
	memcpy(pb->stage + (pb->end - pb->start), r->data + r->start, r->end - r->start);
	pb->end = r->end;
	pb->complete = r->flags & TRACEMAP_REGION_COMPLETE;
}

/*
 * Whether @r lies in the snapshot's own copies: private memory that nothing
 * reads again once the region is handed out, so its page may be rewritten
 * in place.
 */
static bool in_copies(const struct tracemap_cpu *c, const struct tracemap_region *r)
{
	const unsigned char *copies = c->snap.copies, *sb = r->subbuf;

	return copies && sb >= copies && sb < copies + (size_t)c->nr_subbufs * c->subbuf_size;
}

int tm_pages_read(struct tracemap_cpu *c, void *buf, const unsigned char **page,
		  unsigned int flags)
{
	struct tm_pages *pb = &c->pages;
	struct tracemap_region r;
	unsigned char *dst;
	int ret;

	if (page)
		*page = buf;

	for (;;) {
		if (pb->staged && pb->complete)
			return stage_emit(c, buf);
		ret = tracemap_cpu_read_region(c, &r);
		if (ret < 0 && ret != -EBADMSG)
			return ret;
		if (ret <= 0)
			break;
		if (pb->staged && !stage_continues(pb, &r)) {
			if (pb->id == TM_NO_ID) {
				/* only a gap is held: it goes on the page of this region */
				r.lost = tm_lost_add(r.lost, pb->lost);
				pb->staged = false;
			} else {
				/* the kernel moved past the held page: it is complete */
				ret = stage_emit(c, buf);
				stage_take(pb, &r);
				return ret;
			}
		}
		if (!pb->staged && r.data && (r.flags & TRACEMAP_REGION_COMPLETE)) {
			/*
			 * A whole page on its own: written from the region, not
			 * staged; over its own snapshot copy when the caller takes
			 * the page where it is (@page).
			 */
			dst = buf;
			if (page && in_copies(c, &r)) {
				dst = (unsigned char *)(uintptr_t)r.subbuf;
				*page = dst;
				/* records moved or another base: no longer the kernel's page */
				if (r.start || r.base_ts != r.page_ts)
					tm_snapshot_changed(c, dst);
			}
			return tm_subbuf_write(dst, c->subbuf_size, r.data, r.start, r.end,
					       r.base_ts, r.lost);
		}
		stage_take(pb, &r);
	}
	/*
	 * Only records are flushed: a gap with none after it yet stays held for
	 * the next page, since a page parser reports a loss with the event after
	 * it and an empty page would lose the report (the reader's statistics
	 * count it either way).
	 */
	if (pb->staged && pb->id != TM_NO_ID && (flags & TRACEMAP_PAGE_FLUSH))
		return stage_emit(c, buf);
	return 0;
}

uint64_t tm_pages_pending_since(const struct tracemap_cpu *c)
{
	return c->pages.staged && c->pages.id != TM_NO_ID ? c->pages.since : 0;
}

void tm_pages_drop(struct tracemap_cpu *c)
{
	c->pages.staged = false;
}
