// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Consuming through read() of trace_pipe_raw, for a buffer that cannot be
 * mapped: one page copy per call, the kernel's counters from
 * per_cpu/cpuN/stats. Owns struct tm_readsrc.
 *
 * The kernel can step past events it still counts as unread
 * (Documentation/design/kernel-facts.md, item 2): read() then never hands
 * them out, and returns 0 (6.18) or EAGAIN (Debian's 6.1 and 6.12, make
 * check-kernels) for as long as the buffer lives. skipped_check() tells
 * that state from a writer caught between counting and publishing an event
 * and reports the skipped events as lost, with their count: after every 0,
 * and after the EAGAIN that ends a drain (the behaviour seen, not the
 * kernel's version).
 */
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "cpu-local.h"

/* The loss accounting starts from the kernel's counters as of the open. */
void tm_read_init(struct tracemap_cpu *c)
{
	struct tracemap_cpu_stats k = { 0 };

	if (tm_cpu_kernel_stats(c, &k))
		k.kernel_overrun = k.kernel_read = 0;
	c->loss.accounted = k.kernel_read ? k.kernel_overrun : 0;
	c->loss.seen_read = k.kernel_read;
	/* what the kernel counts unread now may still come: nothing is skipped yet */
	c->rd.skipped = 0;
	c->rd.seen_entries = k.kernel_entries;
	c->rd.expect_read = k.kernel_read;
	c->rd.looked_ns = tm_now_ns();
}

static uint64_t unread_of(const struct tracemap_cpu_stats *k)
{
	return k->kernel_entries - k->kernel_overrun - k->kernel_read;
}

/* an idle reader looks at the counters for a reset at most this often */
#define RESET_LOOK_NS		(10 * 1000 * 1000)

/*
 * A reset (echo > trace, a trace_clock change) zeroes the kernel's counters:
 * its read count then falls behind what our own reads alone added to it.
 * What the buffer held unread is gone, count unknown: a gap before the page
 * just read (counted in cleared). A read count ahead of ours is another
 * consumer's (a second reader of trace_pipe_raw, a mapper's GET_READER):
 * what it took never comes to us, counted in stolen.
 * Looked for after every page, a read of the stats file per read() of a
 * page: the gap then goes before the first page after the reset (or, for a
 * reset between the read() and the look, one page early), never after
 * events it came before. While idle (EAGAIN), every RESET_LOOK_NS. Returns
 * 0 when it read the counters into @k.
 */
static int look_for_reset(struct tracemap_cpu *c, bool idle, struct tracemap_cpu_stats *k_out)
{
	struct tracemap_cpu_stats k;
	uint64_t now;

	now = tm_now_ns();
	if (idle && now - c->rd.looked_ns < RESET_LOOK_NS)
		return -1;
	c->rd.looked_ns = now;
	if (tm_cpu_kernel_stats(c, &k))
		return -1;
	if (k.kernel_read < c->rd.expect_read && !c->rd.cleared_pending) {
		c->rd.cleared_pending = true;
		c->st.cleared++;
		c->loss.accounted = 0;
		c->rd.skipped = 0;
		tm_log(TRACEMAP_LOG_WARN, "cpu%d: the buffer was cleared while it was read (echo > "
		       "trace, a trace_clock change): the events it held unread are lost, how many "
		       "is not known", c->cpu);
	} else if (k.kernel_read > c->rd.expect_read) {
		tm_loss_stolen(c, k.kernel_read - c->rd.expect_read);
	}
	c->rd.expect_read = k.kernel_read;
	c->loss.seen_read = k.kernel_read;
	/* what a stream's fill priority weighs (tm_cpu_backlog()); the skipped never come */
	c->rd.backlog = unread_of(&k) > c->rd.skipped ? unread_of(&k) - c->rd.skipped : 0;
	if (k_out)
		*k_out = k;
	return 0;
}

/* Data records of the page @r: what read() added to the kernel's read count */
static unsigned int page_records(const struct tracemap_region *r)
{
	struct tm_walk w = { r->data, r->start, r->end, 0 };
	struct tm_rec rec;
	unsigned int n = 0;

	while (tm_walk_next(&w, &rec) > 0)
		n++;
	return n;
}

/* A page read() returned, @n bytes, as the region @r. */
static int page_region(struct tracemap_cpu *c, struct tracemap_region *r, ssize_t n)
{
	struct tracemap_cpu_stats k;
	unsigned char *page = c->rd.buf;
	unsigned int size;
	uint64_t commit;

	if (n < TM_SUBBUF_HDR)
		return tm_err(EPROTO);
	memcpy(&commit, page + 8, sizeof(commit));
	size = TM_COMMIT_SIZE(commit);
	if (size > (unsigned int)n - TM_SUBBUF_HDR) {
		c->st.corrupt++;
		tm_log(TRACEMAP_LOG_WARN, "cpu%d: read() page commit %u beyond %zd bytes",
		       c->cpu, size, n);
		return tm_err(EBADMSG);
	}
	tm_region_init(c, r, page, c->rd.seq++);
	r->end = size;
	r->base_ts = r->page_ts;
	r->lost = tm_subbuf_lost(page, c->subbuf_size);
	r->flags = TRACEMAP_REGION_COMPLETE;
	c->rd.expect_read += page_records(r);
	if (look_for_reset(c, false, &k))
		k.kernel_overrun = TM_OVERRUN_UNKNOWN;
	/*
	 * A full page has no room for the count: overrun, read after read()
	 * took the page, stands in. It may hold losses of after the page's
	 * swap that the next page's stored count holds too: bounded by overrun
	 * as well, that count tells only what was not told before.
	 */
	if (r->lost)
		r->lost = tm_loss_flagged(c, r->lost, k.kernel_overrun);
	if (c->rd.cleared_pending) {
		r->lost = TRACEMAP_LOST_UNKNOWN;
		c->rd.cleared_pending = false;
	}
	return 1;
}

static bool same_counters(const struct tracemap_cpu_stats *a, const struct tracemap_cpu_stats *b)
{
	return a->kernel_entries == b->kernel_entries && a->kernel_overrun == b->kernel_overrun &&
	       a->kernel_read == b->kernel_read;
}

/*
 * read() once more between two reads of the counters; returns what read()
 * returned (errno set when negative), 0 for EAGAIN as for 0, and -1 with
 * errno 0 when it returned neither data nor an error but the counters
 * changed around it or could not be read.
 */
static ssize_t read_between(struct tracemap_cpu *c, struct tracemap_cpu_stats *k)
{
	struct tracemap_cpu_stats k1;
	ssize_t n;

	if (tm_cpu_kernel_stats(c, &k1))
		goto unsure;
	n = read(c->fd, c->rd.buf, c->subbuf_size);
	c->st.reads++;
	/* EAGAIN is "nothing to hand out" as 0 is: the counters tell the rest */
	if (n > 0 || (n < 0 && errno != EAGAIN))
		return n;
	if (tm_cpu_kernel_stats(c, k) || !same_counters(&k1, k))
		goto unsure;
	return 0;
unsure:
	errno = 0;
	return -1;
}

/*
 * The calling thread stays on the buffer's CPU: the CPUs it had may not be
 * allowed any more (its cpuset changed meanwhile). Told now, returned by the
 * next call as an error, and the skip check never moves it again.
 */
static void unpinned(struct tracemap_cpu *c)
{
	int e = errno;

	c->rd.no_move = true;
	c->rd.unpinned_err = e;
	tm_log(TRACEMAP_LOG_ERROR, "cpu%d: cannot move the calling thread back to its CPUs after "
	       "the read() skip check (%s): it stays on CPU %d; set its affinity again "
	       "(sched_setaffinity(), taskset -p)", c->cpu, strerror(e), c->cpu);
}

/*
 * read() returned 0: the kernel counts events it has nothing of to hand
 * out. Either a writer of this CPU counted an event and has not published
 * it yet (it does both with preemption off, so this passes at once), or
 * the kernel stepped past events that stay counted. When the state
 * outlasts another read() with the counters unchanged around it, ask once
 * more from that CPU itself: while this thread runs there, no writer of it
 * is between counting and publishing, so read() returning 0 with the
 * counters unchanged around it means that what they count unread is out of
 * read()'s reach. What that adds to the count reported before is reported
 * lost in @r (returns 1); a page read() returns meanwhile is handed out as
 * usual. Returns 0 when nothing new was found or it cannot be told (this
 * thread may not run on that CPU).
 */
static int skipped_check(struct tracemap_cpu *c, struct tracemap_region *r)
{
	struct tracemap_cpu_stats k;
	cpu_set_t saved, on;
	ssize_t n;
	int e;

	if (tm_cpu_kernel_stats(c, &k))
		return 0;
	/* the counters went back: the buffer was reset, and what was skipped with it */
	if (k.kernel_entries < c->rd.seen_entries || unread_of(&k) < c->rd.skipped)
		c->rd.skipped = 0;
	c->rd.seen_entries = k.kernel_entries;
	if (unread_of(&k) <= c->rd.skipped)
		return 0;

	n = read_between(c, &k);
	if (n == 0 && unread_of(&k) > c->rd.skipped && !c->rd.no_move &&
	    !sched_getaffinity(0, sizeof(saved), &saved)) {
		CPU_ZERO(&on);
		CPU_SET(c->cpu, &on);
		if (!sched_setaffinity(0, sizeof(on), &on)) {
			n = sched_getcpu() == c->cpu ? read_between(c, &k) : -1;
			e = errno;
			if (sched_setaffinity(0, sizeof(saved), &saved))
				unpinned(c);
			errno = e;
			if (n == 0 && unread_of(&k) > c->rd.skipped) {
				tm_region_init(c, r, c->rd.buf, c->rd.seq++);
				r->subbuf = r->data = NULL;
				r->lost = (long long)(unread_of(&k) - c->rd.skipped);
				c->rd.skipped = unread_of(&k);
				tm_log(TRACEMAP_LOG_WARN, "cpu%d: the kernel's read() path skipped %lld "
				       "events that it still counts as unread (a kernel race while "
				       "the reader keeps up with the writer): reported lost; the "
				       "mapping backend is far less exposed (libtracemap-cpu(3), "
				       "skipped)", c->cpu, r->lost);
				return 1;
			}
		}
	}
	if (n > 0)
		return page_region(c, r, n);
	if (n < 0 && errno && errno != EAGAIN)
		return tm_err(errno);
	return 0;
}

int tm_read_region(struct tracemap_cpu *c, struct tracemap_region *r)
{
	ssize_t n;

	if (c->rd.unpinned_err) {
		n = c->rd.unpinned_err;
		c->rd.unpinned_err = 0;
		return tm_err((int)n);
	}

	n = read(c->fd, c->rd.buf, c->subbuf_size);
	c->st.reads++;
	if (n < 0 && errno != EAGAIN)
		return tm_err(errno);
	if (n < 0) {
		look_for_reset(c, true, NULL);
		/* the EAGAIN that ends a drain is checked as a 0 is (the file's head) */
		if (!c->rd.after_page)
			return 0;
	}
	c->rd.after_page = n > 0;
	if (n <= 0) {
		/* nothing to hand out: whatever the counters said after the last page */
		c->rd.backlog = 0;
		return skipped_check(c, r);
	}
	return page_region(c, r, n);
}

uint64_t tm_read_skipped(const struct tracemap_cpu *c)
{
	return c->rd.skipped;
}

/* Events the kernel held for this reader after its last page (0 once read() found none) */
uint64_t tm_read_backlog(const struct tracemap_cpu *c)
{
	return c->rd.backlog;
}
