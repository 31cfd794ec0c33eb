// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Consuming through the mapping: TRACE_MMAP_IOCTL_GET_READER hands out what
 * was committed, and the new bytes are [off, reader.read) of the reader
 * sub-buffer. Owns struct tm_consume; the event iterator tells it how far
 * it walked and how many records it found (tm_consume_walked()) so that
 * neither the next region's time base nor the second-consumer check needs
 * a second walk.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "cpu-local.h"

/*
 * The consume gate (worth_get_reader()): GET_READER only when the mapping
 * shows something to hand out. What it assumes about the kernel (found on
 * Linux 6.18; the experiments: Documentation/design/kernel-facts.md,
 * item 1), the code that relies on each assumption, and what guards it:
 *
 *  K1  A GET_READER with the reader page read to its end swaps in the
 *      head; when the head is the writer's new page with commit 0 (an
 *      event counted, not yet published) the kernel warns, WARN_ON(!reader).
 *        code: worth_get_reader() (no call without data on the mapping)
 *        test: test-stream test_busy_poll_no_kernel_warning (the runner
 *              fails on the WARN)
 *  K2  Consumed sub-buffers go back into the ring with commit 0, and the
 *      writer sets a sub-buffer's time stamp before its first commit: one
 *      with a commit and a time stamp at least as new as the reader page's
 *      holds unread data.
 *        code: data_on(), data_after(), reader_ts()
 *        test: test-stream test_tick_finds_lone_event,
 *              test_latency_idle_cpu; test-cpu-consume
 *  K3  The kernel numbers the sub-buffers along the ring from the head when
 *      it first maps the buffer (reader page 0); a swap puts the old reader
 *      page where the head was; a writer that laps moves the head on and
 *      counts overrun. So the writer leaves the reader page for the head.
 *        code: ring_learn(), ring_swap(), data_past_reader(); look_far()
 *              forgets the order when data shows up away from the head
 *        test: test-stream test_gate_follows_ring (ring_scans stay few)
 *  K4  GET_READER that only advances on the reader page (new bytes on it)
 *      never swaps.
 *        code: worth_get_reader(), the commit != off check
 *        test: test-cpu-consume (counts around sub-buffer boundaries)
 *  K5  A reset (echo > trace, trace_clock) zeroes the meta page's counters
 *      at once; another mapper's GET_READER shows in the shared meta page.
 *        code: was_reset(), follow_other_reader(); both forget the order
 *        test: test-clear; test-lying-meta test_stolen; test-events
 *              test_second_consumer
 *
 * Any assumption that fails costs latency, not events: after GATE_MAX_NS
 * of "nothing" the gate asks anyway.
 */

/* the longest the mapping alone may say "nothing to swap in" before we ask anyway */
#define GATE_MAX_NS	(100 * 1000 * 1000)
/*
 * Without the ring's order worth_get_reader() looks at the GATE_NEAR
 * sub-buffers after the reader page, the whole ring every GATE_SCAN_NS;
 * with it at the head, and the whole ring every GATE_CHECK_NS to catch an
 * order gone wrong.
 */
#define GATE_NEAR	8
#define GATE_SCAN_NS	(5 * 1000 * 1000)
#define GATE_CHECK_NS	(1000 * 1000 * 1000)

/*
 * The ring's order. The kernel numbers the sub-buffers when the buffer is
 * first mapped: the reader page 0, then 1, 2, ... from the head along the
 * ring (rb_setup_ids_meta_page()). A GET_READER that swaps takes the head
 * as the new reader page and puts the old reader page where the head was
 * (rb_get_reader_page()); the head moves on to the next one. A writer
 * that laps the reader moves the head on without changing the order (and
 * counts overrun). So, following our own swaps, we know where the writer
 * goes when it leaves the reader page: to the head (K3 above).
 * Known only while every swap is ours and predicted: a mapping somebody
 * else had swapped in, another reader, a reset or a swap the order did
 * not predict forget it, and the gate then looks at every sub-buffer.
 */
/* The sub-buffer before each one: the second half of ring_next's array. */
static unsigned int *ring_prev(struct tracemap_cpu *c)
{
	return c->consume.ring_next + c->nr_subbufs;
}

static void ring_forget(struct tracemap_cpu *c, const char *why)
{
	struct tm_consume *s = &c->consume;

	if (!s->ring_next)
		return;
	free(s->ring_next);
	s->ring_next = NULL;
	tm_log(TRACEMAP_LOG_DEBUG, "cpu%d: %s: the ring's order is no longer known, GET_READER's "
	       "gate looks at every sub-buffer", c->cpu, why);
}

/* A mapping nobody has swapped in yet: the kernel's numbering is the order. */
static void ring_learn(struct tracemap_cpu *c, const struct tm_meta *m)
{
	struct tm_consume *s = &c->consume;
	unsigned int i, n = c->nr_subbufs, *prev;

	if (c->get_reader || c->mode != TRACEMAP_MODE_CONSUME || m->id != 0 || n < 3)
		return;
	/* without memory for it the gate looks at every sub-buffer */
	s->ring_next = malloc(2 * (size_t)n * sizeof(*s->ring_next));
	if (!s->ring_next)
		return;
	prev = ring_prev(c);
	for (i = 1; i < n; i++) {
		s->ring_next[i] = i + 1 < n ? i + 1 : 1;
		prev[i] = i > 1 ? i - 1 : n - 1;
	}
	s->head = 1;
	/* the first look at the whole ring that checks the order: in GATE_CHECK_NS */
	s->scanned_ns = tm_now_ns();
}

/*
 * Our GET_READER swapped sub-buffer @id in for @old: @id was the head, or
 * one further along if the writer overwrote since the last swap (the
 * meta page's @overrun grew). @old now sits where @id was; the head is the
 * one after it.
 */
static void ring_swap(struct tracemap_cpu *c, unsigned int old, unsigned int id, uint64_t overrun)
{
	struct tm_consume *s = &c->consume;
	unsigned int *back, prev, next;

	if (old >= c->nr_subbufs || old == id || (id != s->head && overrun == s->head_overrun)) {
		ring_forget(c, "a swap the order did not predict");
		return;
	}
	s->head_overrun = overrun;
	back = ring_prev(c);
	prev = back[id];
	next = s->ring_next[id];
	s->ring_next[prev] = old;
	back[old] = prev;
	s->ring_next[old] = next;
	back[next] = old;
	s->head = next;
}

/*
 * The kernel reports a loss once, on the first page it hands out after it:
 * as a count stored after the data when there is room, else only as a flag.
 * loss.accounted follows the kernel's overrun counter as of that report, so
 * a flag without a count is worth what overrun grew by since the last one.
 * A reader that opens before anything was read starts from 0: the loss
 * the kernel has not reported yet is in overrun but on no page seen so far.
 */
void tm_consume_init(struct tracemap_cpu *c)
{
	struct tm_consume *s = &c->consume;
	struct tm_meta m;

	/* pairs with rb_update_meta_page() at mmap time: start after what was consumed */
	tm_meta_load(c->meta, &m);
	s->id = m.id;
	s->off = m.read;
	s->walk_off = 0;
	s->walk_ts = s->id < c->nr_subbufs ?
		tm_subbuf_load(tm_subbuf_at(c, s->id), TM_SB_TS, __ATOMIC_RELAXED) : 0;
	s->walk_bad = false;
	s->seen_entries = m.entries;
	s->head_overrun = m.overrun;
	s->gated_since = 0;
	c->loss.seen_read = m.nread;
	c->loss.accounted = m.nread ? m.overrun : 0;
	ring_learn(c, &m);
}

void tm_consume_free(struct tracemap_cpu *c)
{
	free(c->consume.ring_next);
	c->consume.ring_next = NULL;
}

/* Data records in [start, end) of a region; -1 when one is corrupt. */
static long long count_records(const struct tracemap_region *r)
{
	struct tm_walk w = { r->data, r->start, r->end, 0 };
	struct tm_rec rec;
	long long n = 0;
	int ret;

	while ((ret = tm_walk_next(&w, &rec)) > 0)
		n++;
	return ret < 0 ? -1 : n;
}

/*
 * Each GET_READER adds the data records it hands out to the meta page's
 * read count. When the count grew by more than the records of the region
 * this call handed to us, someone else consumed the difference since our
 * previous call (a read() of trace_pipe_raw).
 */
static void check_stolen(struct tracemap_cpu *c, uint64_t prev_read, uint64_t nread,
			 long long handed)
{
	if (handed < 0 || nread < prev_read || nread - prev_read <= (uint64_t)handed)
		return;
	tm_loss_stolen(c, nread - prev_read - handed);
}

/*
 * Another mapper's GET_READER updates the meta page we share at once: the
 * events it took are gone for us, and our position on the reader page is
 * now where it stopped (starting a new page at 0 would hand us its events a
 * second time).
 */
static void follow_other_reader(struct tracemap_cpu *c)
{
	struct tm_consume *s = &c->consume;
	struct tm_meta m;

	/* pairs with rb_update_meta_page() in the other reader's ioctl */
	tm_meta_load(c->meta, &m);
	if (m.nread <= c->loss.seen_read || s->id == TM_NO_ID)
		return;		/* nobody else, or a reset that our ioctl will see */
	if (m.id >= c->nr_subbufs || m.read > c->subbuf_size - TM_SUBBUF_HDR)
		return;
	ring_forget(c, "another reader swaps sub-buffers");
	if (m.id != s->id) {
		s->id = m.id;
		s->off = m.read;
		s->walk_off = 0;
		s->walk_ts = tm_subbuf_load(tm_subbuf_at(c, m.id), TM_SB_TS, __ATOMIC_RELAXED);
		s->walk_bad = false;
	} else if (m.read > s->off) {
		s->off = m.read;
	}
	tm_loss_stolen(c, m.nread - c->loss.seen_read);
	c->loss.seen_read = m.nread;
}

/* Whether sub-buffer @id has committed data at least as new as @ts. */
static bool data_on(struct tracemap_cpu *c, unsigned int id, uint64_t ts)
{
	const unsigned char *sb = tm_subbuf_at(c, id);

	/* the writer sets the time stamp before the first commit */
	return TM_COMMIT_SIZE(tm_subbuf_load(sb, TM_SB_COMMIT, __ATOMIC_ACQUIRE)) &&
	       tm_subbuf_load(sb, TM_SB_TS, __ATOMIC_RELAXED) >= ts;
}

/*
 * Whether a sub-buffer @from to @to - 1 places after the reader page has
 * committed data at least as new as @ts (worth_get_reader()).
 */
static bool data_after(struct tracemap_cpu *c, unsigned int from, unsigned int to, uint64_t ts)
{
	unsigned int i;

	for (i = from; i < to; i++)
		if (data_on(c, c->consume.id + i < c->nr_subbufs ? c->consume.id + i :
			    c->consume.id + i - c->nr_subbufs, ts))
			return true;
	return false;
}

/*
 * The look at the sub-buffers @from places after the reader page to the
 * end of the ring, at most every @every ns (now @now): whether it found
 * data at least as new as @ts. Counted in ring_scans.
 */
static bool look_far(struct tracemap_cpu *c, unsigned int from, uint64_t ts, uint64_t every,
		     uint64_t now)
{
	struct tm_consume *s = &c->consume;

	if (from >= c->nr_subbufs || now - s->scanned_ns < every)
		return false;
	s->scanned_ns = now;
	c->st.ring_scans++;
	return data_after(c, from, c->nr_subbufs, ts);
}

/*
 * A mapping with a writer to race with and a reader page of ours: not a
 * synthetic one (fuzzing), and GET_READER has handed out a page. The gate
 * and the quick look past the reader page apply only then.
 */
static bool writer_mapping(const struct tracemap_cpu *c)
{
	return !c->get_reader && c->consume.id < c->nr_subbufs;
}

/* The time stamp of the reader page @sb: 0 for one that never held data (a stale one). */
static uint64_t reader_ts(struct tracemap_cpu *c, const unsigned char *sb)
{
	return c->consume.off ? tm_subbuf_load(sb, TM_SB_TS, __ATOMIC_RELAXED) : 0;
}

/* The sub-buffers after the reader page looked at while the ring's order is not known, plus one. */
static unsigned int near_subbufs(const struct tracemap_cpu *c)
{
	return c->nr_subbufs < GATE_NEAR + 1 ? c->nr_subbufs : GATE_NEAR + 1;
}

/*
 * The quick look past the reader page: whether the head, else one of the
 * GATE_NEAR sub-buffers after the reader page, has committed data at least
 * as new as @ts. With the ring's order known, the writer leaves the reader
 * page for the head. Without it, from the id after ours: the kernel numbers
 * the sub-buffers in ring order from the head when it maps them, and a
 * reader that keeps up swaps them in that order, so the next one is often
 * the first one looked at.
 */
static bool data_past_reader(struct tracemap_cpu *c, uint64_t ts)
{
	if (c->consume.ring_next)
		return data_on(c, c->consume.head, ts);
	return data_after(c, 1, near_subbufs(c), ts);
}

/*
 * Whether to call GET_READER now (the gate, K1 at the top): the kernel
 * decides "not empty" from its event counters, which count an event before
 * the writer publishes it, and a swap in that window warns. So ask only
 * when the mapping shows something to hand out: new bytes on the reader
 * page (K4), or another sub-buffer with committed data at least as new as
 * the reader page (K2): the head, when the ring's order is known (K3),
 * else any of them. A reader page that changed under us (a reset, another
 * reader: K5) is always worth a call, and after GATE_MAX_NS of "nothing"
 * we ask anyway.
 */
static bool worth_get_reader(struct tracemap_cpu *c)
{
	struct tm_consume *s = &c->consume;
	const unsigned char *sb;
	uint64_t ts, now;

	if (!writer_mapping(c))
		return true;
	sb = tm_subbuf_at(c, s->id);
	/* pairs with the smp_wmb() before the writer raises commit (rb_set_commit_to_write()) */
	if (TM_COMMIT_SIZE(tm_subbuf_load(sb, TM_SB_COMMIT, __ATOMIC_ACQUIRE)) != s->off)
		goto yes;
	ts = reader_ts(c, sb);
	if (data_past_reader(c, ts))
		goto yes;
	now = tm_now_ns();
	if (s->ring_next) {
		if (look_far(c, 1, ts, GATE_CHECK_NS, now)) {
			/* the writer passes the head first: unless it did now, the order is wrong */
			if (!data_on(c, s->head, ts))
				ring_forget(c, "new data away from the head");
			goto yes;
		}
	} else if (look_far(c, near_subbufs(c), ts, GATE_SCAN_NS, now)) {
		/*
		 * The whole ring (a TLB miss per sub-buffer) only every
		 * GATE_SCAN_NS: scanning an idle CPU's ring on every round
		 * costs more than the round. Data the near ones do not show
		 * is then seen at most that much later.
		 */
		goto yes;
	}
	if (!s->gated_since)
		s->gated_since = now;
	if (now - s->gated_since < GATE_MAX_NS)
		return false;
yes:
	s->gated_since = 0;
	return true;
}

/*
 * Whether the writer has left the reader page, as far as the mapping shows
 * at a glance (data_past_reader()): the next GET_READER then swaps in a
 * sub-buffer with data. False when it cannot tell (a synthetic mapping).
 */
bool tm_consume_writer_left(struct tracemap_cpu *c)
{
	return writer_mapping(c) &&
	       data_past_reader(c, reader_ts(c, tm_subbuf_at(c, c->consume.id)));
}

/*
 * Whether the meta page @m shows the buffer reset since we last saw it (echo
 * > trace, a trace_clock change): the kernel rewrites the meta page at once
 * with its counters at 0 (rb_reset_cpu() -> rb_update_meta_page()), so they
 * go back, or the reader page's read offset does.
 */
static bool was_reset(const struct tracemap_cpu *c, const struct tm_meta *m)
{
	const struct tm_consume *s = &c->consume;

	return m->entries < s->seen_entries || m->nread < c->loss.seen_read ||
	       m->overrun < c->loss.accounted || (m->id == s->id && m->read < s->off);
}

/*
 * The buffer was reset: what it held unread is gone, and neither the meta
 * page nor the stats file, both zeroed with it, says how much. Reported as
 * a gap of unknown size (counted in cleared) before the next event, and the
 * position starts over.
 */
static void start_over(struct tracemap_cpu *c)
{
	struct tm_consume *s = &c->consume;

	c->loss.accounted = 0;
	c->loss.seen_read = 0;
	s->seen_entries = 0;
	s->id = TM_NO_ID;
	s->off = 0;
	ring_forget(c, "the buffer was reset");
	if (!s->cleared_pending) {
		s->cleared_pending = true;
		c->st.cleared++;
		tm_log(TRACEMAP_LOG_WARN, "cpu%d: the buffer was cleared while it was read (echo > "
		       "trace, a trace_clock change): the events it held unread are lost, how many "
		       "is not known", c->cpu);
	}
}

int tm_consume_region(struct tracemap_cpu *c, struct tracemap_region *r, bool walked)
{
	struct tm_consume *s = &c->consume;
	const unsigned char *sb;
	long long lost = 0;
	struct tm_walk w;
	struct tm_meta m;
	uint64_t commit, prev_read;
	bool reset = false;

	/*
	 * pairs with rb_update_meta_page() in rb_reset_cpu(): a reset shows at
	 * once, before new events and our GET_READER bring the counters back up
	 */
	tm_meta_load(c->meta, &m);
	if (s->id != TM_NO_ID && was_reset(c, &m))
		start_over(c);
	follow_other_reader(c);
	if (!worth_get_reader(c))
		return 0;
	prev_read = c->loss.seen_read;
	if (c->get_reader ? c->get_reader(c->get_reader_ctx) < 0 :
	    ioctl(c->fd, TRACE_MMAP_IOCTL_GET_READER) < 0)
		return tm_err(errno);
	c->st.get_reader++;

	/* pairs with rb_update_meta_page() under the reader lock in the ioctl */
	tm_meta_load(c->meta, &m);
	if (m.id >= c->nr_subbufs || m.read > c->subbuf_size - TM_SUBBUF_HDR) {
		tm_log(TRACEMAP_LOG_ERROR, "cpu%d: meta page reader id %u read %u out of range",
		       c->cpu, m.id, m.read);
		return tm_err(EPROTO);
	}

	/* a reset between our look above and the ioctl */
	if (s->id != TM_NO_ID && was_reset(c, &m))
		start_over(c);
	reset = s->id == TM_NO_ID;
	if (!reset && m.id != s->id && s->ring_next)
		ring_swap(c, s->id, m.id, m.overrun);
	s->seen_entries = m.entries;
	c->loss.seen_read = m.nread;

	sb = tm_subbuf_at(c, m.id);
	if (m.id != s->id || m.read < s->off) {
		s->id = m.id;
		s->off = 0;
		s->walk_off = 0;
		/* the reader page is ours until the next GET_READER: no writer moves it */
		s->walk_ts = tm_subbuf_load(sb, TM_SB_TS, __ATOMIC_RELAXED);
		s->walk_bad = false;
		/* flags are set once, when the page became the reader page in this ioctl */
		commit = tm_subbuf_load(sb, TM_SB_COMMIT, __ATOMIC_RELAXED);
		if ((uint32_t)commit & TM_MISSED_EVENTS)
			lost = tm_loss_flagged(c, tm_subbuf_lost(sb, c->subbuf_size), m.overrun);
	}
	/* the gap of a reset goes out with the first region after it */
	if (s->cleared_pending && (m.read > s->off || lost)) {
		lost = TRACEMAP_LOST_UNKNOWN;
		s->cleared_pending = false;
	}
	if (m.read <= s->off && !lost) {
		if (!reset)
			check_stolen(c, prev_read, m.nread, 0);
		return 0;
	}

	tm_region_init(c, r, sb, m.id);
	r->start = s->off;
	r->end = m.read > s->off ? m.read : s->off;
	r->lost = lost;
	s->off = r->end;
	if (!reset && !walked)
		check_stolen(c, prev_read, m.nread, count_records(r));

	if (s->walk_off != r->start && !s->walk_bad) {
		w = (struct tm_walk){ r->data, s->walk_off, r->start, s->walk_ts };
		if (tm_walk_skip(&w, r->start) < 0)
			s->walk_bad = true;
		s->walk_off = w.off;
		s->walk_ts = w.ts;
	}
	if (s->walk_bad) {
		/* the time base is lost with the corrupt record: report, skip */
		c->st.corrupt++;
		r->start = r->end;
		r->lost = TRACEMAP_LOST_UNKNOWN;
	}
	/* the iterator counts the records as it hands them out: no walk of its own */
	s->check_pending = !reset && walked && !s->walk_bad;
	s->check_prev_read = prev_read;
	s->check_nread = m.nread;
	r->base_ts = s->walk_ts;
	return 1;
}

void tm_consume_walked(struct tracemap_cpu *c, unsigned int id, const struct tm_walk *w,
		       bool bad, unsigned int recs)
{
	struct tm_consume *s = &c->consume;

	if (id != s->id)
		return;
	if (s->check_pending && w->off == s->off)
		check_stolen(c, s->check_prev_read, s->check_nread, bad ? -1 : (long long)recs);
	s->check_pending = false;
	s->walk_off = w->off;
	s->walk_ts = w->ts;
	s->walk_bad = bad;
}
