// SPDX-License-Identifier: GPL-2.0-only
/*
 * Consuming per-CPU reader on the real tracefs, through the mapping and
 * through the read() fallback (the same tests, parameterised by backend):
 * exact counts and order of trace_marker events around sub-buffer
 * boundaries, per-CPU placement, events really leaving the kernel buffer,
 * exact overwrite-mode loss accounting and buffer resets.
 *
 * timeout: 180
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kbuffer.h>

#include "harness.h"
#include "tracemap.h"

#define TAG		"kc"

enum api {
	API_EVENTS,			/* tracemap_cpu_next_event() */
	API_PAGES,			/* tracemap_cpu_read_page(), decoded with kbuffer */
};

struct params {
	unsigned int flags;		/* 0 or TRACEMAP_CPU_FORCE_READ */
	int subbuf_kb;
	enum api api;
};

static struct th_fixture fx = TH_FIXTURE(TAG);

/* ------------------------------------------------------------- fixture */

static int teardown(void **state)
{
	th_fixture_drop(&fx);
	th_restore_affinity();
	return 0;
}

static struct tracemap_cpu *open_reader(int cpu, unsigned int flags)
{
	return th_fixture_open(&fx, cpu, TRACEMAP_MODE_CONSUME, flags);
}

static void reset_buffer(void)
{
	assert_int_equal(th_instance_write(fx.inst, "trace", ""), 0);
}

/* Lines of @file of the instance that carry one of our markers */
static unsigned int count_trace_lines(const char *file)
{
	struct th_events t = { 0 };
	unsigned int n;

	th_trace_markers(fx.inst, file, &t);
	n = t.n;
	th_events_free(&t);
	return n;
}

static int online_cpus(void)
{
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

/* ------------------------------------------------------------- draining */

/* Decode one page as trace-cmd would, with libtraceevent's own parser. */
static void add_page(struct th_events *g, void *page, unsigned int subbuf_size, int cpu)
{
	unsigned long long ts, commit;
	struct tracemap_event ev;
	struct kbuffer *kb;
	long long missed = 0;
	unsigned int size;
	void *p;

	memcpy(&commit, (char *)page + 8, sizeof(commit));
	size = (uint32_t)commit & ((1u << 27) - 1);
	assert_true(size <= subbuf_size - 16);
	if ((uint32_t)commit & (1u << 31)) {
		missed = -1;
		if ((uint32_t)commit & (1u << 30))
			memcpy(&missed, (char *)page + 16 + size, sizeof(missed));
	}
	kb = kbuffer_alloc(KBUFFER_LSIZE_SAME_AS_HOST, KBUFFER_ENDIAN_SAME_AS_HOST);
	assert_non_null(kb);
	assert_int_equal(kbuffer_load_subbuffer(kb, page), 0);
	for (p = kbuffer_read_event(kb, &ts); p; p = kbuffer_next_event(kb, &ts)) {
		ev = (struct tracemap_event){ .ts = ts, .data = p, .size = kbuffer_event_size(kb),
					      .missed = missed, .cpu = cpu };
		th_events_add(g, &ev);
		missed = 0;
	}
	kbuffer_free(kb);
	/* a page carrying a loss but no event would lose the report */
	assert_int_equal(missed, 0);
}

/* Complete pages, then with @flush the held-back partial one too; returns the pages */
static unsigned int drain_pages(struct tracemap_cpu *c, struct th_events *g, bool flush)
{
	unsigned int sbs = tracemap_cpu_subbuf_size(c), i, flags = 0, pages = 0;
	void *page = malloc(sbs);
	int ret;

	assert_non_null(page);
	for (i = 0; i < TH_DRAIN_LIMIT; i++) {
		ret = tracemap_cpu_read_page(c, page, sbs, flags);
		if (ret < 0)
			free(page);
		assert_true(ret >= 0);
		if (!ret) {
			if (flags || !flush)
				break;
			/* complete pages first, then the held-back tail */
			flags = TRACEMAP_PAGE_FLUSH;
			continue;
		}
		assert_int_equal(ret, sbs);
		add_page(g, page, sbs, tracemap_cpu_id(c));
		pages++;
	}
	free(page);
	assert_true(i < TH_DRAIN_LIMIT);
	return pages;
}

/* Read @c dry through @api; returns the pages or the events read */
static unsigned int drain(struct tracemap_cpu *c, enum api api, struct th_events *g)
{
	if (api == API_PAGES)
		return drain_pages(c, g, true);
	return th_drain_events(c, g);
}

/* Exactly seq first..first+count-1, in order, nothing lost, all from @cpu */
static void check_exact(const struct th_events *g, unsigned int from, long first,
			unsigned int count, int cpu)
{
	unsigned int i;

	th_assert_seq_run(g, from, first, count);
	for (i = 0; i < count; i++) {
		assert_int_equal(g->ev[from + i].cpu, cpu);
		assert_int_equal(g->ev[from + i].wcpu, cpu);
	}
}

/*
 * After a reset: the first event carries the gap, of unknown size
 * (test-clear), then exactly what drain_exact() expects
 */
static void drain_after_clear(struct tracemap_cpu *c, enum api api, long first,
			      unsigned int count)
{
	unsigned int from = fx.got[0].n;

	drain(c, api, &fx.got[0]);
	assert_true(fx.got[0].n > from);
	assert_int_equal(fx.got[0].ev[from].missed, TRACEMAP_LOST_UNKNOWN);
	fx.got[0].ev[from].missed = 0;
	check_exact(&fx.got[0], from, first, count, 0);
}

/* Read @c dry into got[0]: exactly what check_exact() says came, from CPU 0 */
static void drain_exact(struct tracemap_cpu *c, enum api api, long first, unsigned int count)
{
	unsigned int from = fx.got[0].n;

	drain(c, api, &fx.got[0]);
	check_exact(&fx.got[0], from, first, count, 0);
}

static void check_stats(struct tracemap_cpu *c, const struct params *p, uint64_t delivered,
			uint64_t lost, uint64_t entries)
{
	struct tracemap_cpu_stats st;

	assert_int_equal(tracemap_cpu_stats(c, &st, sizeof(st)), 0);
	if (p->api == API_EVENTS)
		assert_int_equal(st.events, delivered);
	assert_int_equal(st.lost, lost);
	assert_int_equal(st.lost_unknown, 0);
	assert_int_equal(st.corrupt, 0);
	/* our own reads are not taken for another consumer's */
	assert_int_equal(st.stolen, 0);
	if (p->flags & TRACEMAP_CPU_FORCE_READ) {
		assert_int_equal(st.get_reader, 0);
		assert_true(st.reads > 0);
	} else {
		assert_int_equal(st.reads, 0);
	}
	/* the kernel's own counters agree (meta page, or per_cpu/cpuN/stats for read()) */
	assert_int_equal(st.kernel_entries, entries);
	assert_int_equal(st.kernel_read, entries - lost);
	assert_int_equal(st.kernel_overrun, lost);
	assert_int_equal(tracemap_cpu_stats_unread(&st), 0);
}

/*
 * The kernel skipped events of a read() reader (Documentation/design/kernel-facts.md
 * 2) and the reader reported them: every other event came once and in
 * order, the skipped ones are exactly those the kernel still counts unread,
 * and each loss reported came with a later event or is still pending.
 */
static bool skipped_reported(const struct tracemap_cpu_stats *st, unsigned int written,
			     const struct th_events *g, unsigned long unread, unsigned long overrun,
			     unsigned long consumed)
{
	long long missed = 0;
	uint64_t holes = 0;
	unsigned int i;
	long prev = -1;

	if (!st->skipped || st->skipped != unread || overrun || consumed != g->n ||
	    g->n + st->skipped != written || st->lost != st->skipped || st->lost_unknown)
		return false;
	for (i = 0; i < g->n; i++) {
		if (g->ev[i].seq <= prev || g->ev[i].missed < 0)
			return false;
		holes += g->ev[i].seq - prev - 1;
		missed += g->ev[i].missed;
		prev = g->ev[i].seq;
	}
	holes += written - 1 - prev;
	return holes == st->skipped && missed <= (long long)st->skipped;
}

/*
 * After a live run on @cpu: the kernel's own counters say where any event
 * that was written and not delivered went (still unread in the buffer,
 * consumed by the kernel but never delivered, overwritten), so that a
 * count that is off once is explained by its log rather than re-run away.
 * Returns the events the kernel skipped and the reader reported lost.
 */
static uint64_t check_kernel_account(struct tracemap_cpu *c, int cpu, unsigned int written,
				     const struct th_events *g)
{
	unsigned long unread = th_cpu_stat(fx.inst, cpu, "entries:");
	unsigned long overrun = th_cpu_stat(fx.inst, cpu, "overrun:");
	unsigned long consumed = th_cpu_stat(fx.inst, cpu, "read events:");
	struct tracemap_cpu_stats st;
	unsigned int i;
	long next = 0;

	if (g->n == written && !unread && !overrun && consumed == written)
		return 0;
	assert_int_equal(tracemap_cpu_stats(c, &st, sizeof(st)), 0);
	if (skipped_reported(&st, written, g, unread, overrun, consumed)) {
		printf("the kernel skipped %llu of %u events and still counts them unread; the "
		       "reader reported them lost (Documentation/design/kernel-facts.md, 2)\n",
		       (unsigned long long)st.skipped, written);
		return st.skipped;
	}
	printf("written %u, delivered %u; kernel: unread %lu, overrun %lu, consumed %lu; "
	       "reader: %llu regions, %llu read() calls, %llu lost, %llu gaps, %llu corrupt\n",
	       written, g->n, unread, overrun, consumed, (unsigned long long)st.pages,
	       (unsigned long long)st.reads, (unsigned long long)st.lost,
	       (unsigned long long)st.lost_unknown, (unsigned long long)st.corrupt);
	for (i = 0; i < g->n; i++) {
		if (g->ev[i].seq != next)
			printf("  at event %u: seq %ld after %ld (missed %lld)\n", i, g->ev[i].seq,
			       next - 1, g->ev[i].missed);
		next = g->ev[i].seq + 1;
	}
	if (next != (long)written)
		printf("  the last event delivered is seq %ld\n", next - 1);
	fail_msg("%u written, %u delivered: %lu still unread in the kernel, %lu overwritten, "
		 "%lu consumed by the kernel", written, g->n, unread, overrun, consumed);
	return 0;
}

/* ---------------------------------------------------------------- tests */

/*
 * One marker into a fresh buffer, read as one region: its length is the
 * record size the page-boundary counts are computed from.
 */
static int measure_record(void **state)
{
	unsigned int size;

	th_save_affinity();
	size = th_measure_marker_record(TAG);
	if (!size)
		return -1;
	printf("one marker record: %u bytes, %u per 4 KiB, %u per 8 KiB sub-buffer\n", size,
	       th_markers_per_subbuf(4), th_markers_per_subbuf(8));
	return 0;
}

static void counts_of(int subbuf_kb, unsigned int counts[5])
{
	unsigned int pp = th_markers_per_subbuf(subbuf_kb);

	counts[0] = 1;
	counts[1] = pp / 2;
	counts[2] = pp;
	counts[3] = pp + 1;
	counts[4] = 50 * pp;
}

/* Each count into a fresh buffer, the reader open before the writes. */
static void test_counts(void **state)
{
	const struct params *p = *state;
	unsigned int pp = th_markers_per_subbuf(p->subbuf_kb), counts[5], i, n;
	struct tracemap_cpu *c;

	counts_of(p->subbuf_kb, counts);
	th_pin(0);
	for (i = 0; i < 5; i++) {
		th_fixture_new(&fx, 1024, p->subbuf_kb);
		c = open_reader(0, p->flags);
		assert_int_equal(tracemap_cpu_subbuf_size(c), p->subbuf_kb * 1024);
		th_fixture_write_markers(&fx, 0, counts[i]);
		n = drain(c, p->api, &fx.got[0]);
		check_exact(&fx.got[0], 0, 0, counts[i], 0);
		check_stats(c, p, counts[i], 0, counts[i]);
		if (p->api == API_PAGES)
			assert_true(n >= (counts[i] + pp - 1) / pp);
		/* nothing is delivered twice */
		drain(c, p->api, &fx.got[0]);
		assert_int_equal(fx.got[0].n, counts[i]);
		th_fixture_drop(&fx);
	}
}

/*
 * The same counts one after the other on one reader: every batch starts
 * where the last one left the writer, inside a partly read sub-buffer.
 */
static void test_counts_incremental(void **state)
{
	const struct params *p = *state;
	unsigned int counts[5], i, seq = 0;
	struct tracemap_cpu *c;

	counts_of(p->subbuf_kb, counts);
	th_pin(0);
	th_fixture_new(&fx, 1024, p->subbuf_kb);
	c = open_reader(0, p->flags);
	for (i = 0; i < 5; i++) {
		th_fixture_write_markers(&fx, seq, counts[i]);
		drain_exact(c, p->api, seq, counts[i]);
		seq += counts[i];
	}
	check_exact(&fx.got[0], 0, 0, seq, 0);
	check_stats(c, p, seq, 0, seq);
}

/* Writes hopping between CPUs land in the reader of the CPU they ran on. */
static void test_both_cpus(void **state)
{
	const struct params *p = *state;
	unsigned int chunk, i, k[2] = { 0, 0 }, seq = 0, from = 0;
	struct tracemap_cpu *c[2];

	if (online_cpus() < 2)
		skip();
	th_fixture_new(&fx, 1024, p->subbuf_kb);
	for (i = 0; i < 2; i++)
		c[i] = open_reader(i, p->flags);
	for (chunk = 0; chunk < 40; chunk++) {
		th_pin(chunk % 2);
		/* chunks of varying length so that pages end at different places */
		th_fixture_write_markers(&fx, seq, 5 + chunk * 7);
		seq += 5 + chunk * 7;
	}
	for (i = 0; i < 2; i++) {
		drain(c[i], p->api, &fx.got[i]);
		assert_int_equal(tracemap_cpu_id(c[i]), i);
	}
	/* replay the chunk layout: per-CPU order is write order */
	seq = 0;
	for (chunk = 0; chunk < 40; chunk++) {
		int cpu = chunk % 2;

		from = k[cpu];
		for (i = 0; i < 5 + chunk * 7; i++) {
			const struct th_event *e;

			assert_true(from + i < fx.got[cpu].n);
			e = &fx.got[cpu].ev[from + i];
			assert_int_equal(e->seq, seq + i);
			assert_int_equal(e->cpu, cpu);
			assert_int_equal(e->wcpu, cpu);
			assert_int_equal(e->missed, 0);
		}
		k[cpu] += 5 + chunk * 7;
		seq += 5 + chunk * 7;
	}
	assert_int_equal(fx.got[0].n, k[0]);
	assert_int_equal(fx.got[1].n, k[1]);
}

/* What one reader consumed is gone for trace, trace_pipe_raw and a second reader. */
static void test_really_consumes(void **state)
{
	const struct params *p = *state;
	unsigned int n = th_markers_per_subbuf(p->subbuf_kb) * 5 / 2, first;
	struct tracemap_cpu *c, *c2;
	struct tracemap_region r;
	char path[512], *page;
	int fd, ret;

	th_pin(0);
	th_fixture_new(&fx, 1024, p->subbuf_kb);
	th_fixture_write_markers(&fx, 0, n);
	/* the checks below can see the events: they are there before reading */
	assert_int_equal(count_trace_lines("trace"), n);
	assert_int_equal(count_trace_lines("per_cpu/cpu0/trace"), n);

	c = open_reader(0, p->flags);
	/* one region: exactly its events leave the buffer */
	assert_int_equal(tracemap_cpu_read_region(c, &r), 1);
	page = malloc(r.subbuf_size);
	assert_non_null(page);
	ret = tracemap_region_write_subbuf(&r, page, r.subbuf_size);
	if (ret == (int)r.subbuf_size)
		add_page(&fx.got[0], page, r.subbuf_size, 0);
	free(page);
	assert_int_equal(ret, r.subbuf_size);
	first = fx.got[0].n;
	assert_true(first > 0 && first < n);
	check_exact(&fx.got[0], 0, 0, first, 0);
	assert_int_equal(count_trace_lines("per_cpu/cpu0/trace"), n - first);

	drain(c, p->api, &fx.got[0]);
	check_exact(&fx.got[0], 0, 0, n, 0);
	assert_int_equal(count_trace_lines("trace"), 0);
	assert_int_equal(count_trace_lines("per_cpu/cpu0/trace"), 0);

	/* a second reader, while the first is open, and after it closed */
	c2 = open_reader(0, p->flags);
	drain(c2, p->api, &fx.got[1]);
	assert_int_equal(fx.got[1].n, 0);
	th_fixture_close(&fx, c2);
	th_fixture_close(&fx, c);
	c2 = open_reader(0, p->flags);
	drain(c2, p->api, &fx.got[1]);
	assert_int_equal(fx.got[1].n, 0);
	th_fixture_close(&fx, c2);

	/* the kernel's own consuming read has nothing either */
	snprintf(path, sizeof(path), "%s/instances/%s/per_cpu/cpu0/trace_pipe_raw", th_tracefs(),
		 fx.inst);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(fd >= 0);
	page = malloc(65536);
	assert_non_null(page);
	ret = read(fd, page, 65536);
	if (ret < 0)
		ret = -errno;
	free(page);
	close(fd);
	assert_int_equal(ret, -EAGAIN);
}

/*
 * Overwrite mode, no reader while far more than fits is written: every
 * event is either delivered or counted lost, and each loss comes with the
 * event it precedes. Then once more with the reader open.
 */
static void check_lossy(const struct th_events *g, long last, bool allow_unknown, uint64_t *lost)
{
	long prev = -1;
	unsigned int i;

	*lost = 0;
	assert_true(g->n > 0);
	for (i = 0; i < g->n; i++) {
		const struct th_event *e = &g->ev[i];

		if (e->seq <= prev)
			fail_msg("event %u: seq %ld after %ld", i, e->seq, prev);
		/* a full page has no room for the count (trace-cmd's format) */
		if (allow_unknown && e->missed == TRACEMAP_LOST_UNKNOWN && e->seq - prev > 1)
			*lost += e->seq - prev - 1;
		else if (e->missed != e->seq - prev - 1)
			fail_msg("event %u: seq %ld after %ld reported %lld missed", i, e->seq,
				 prev, e->missed);
		else
			*lost += e->missed;
		prev = e->seq;
	}
	/* the newest events are never overwritten */
	assert_int_equal(prev, last);
}

static void test_overwrite_accounting(void **state)
{
	const struct params *p = *state;
	unsigned int pp = th_markers_per_subbuf(p->subbuf_kb), w1 = 40 * pp, w2 = 25 * pp;
	struct tracemap_cpu *c;
	uint64_t lost;

	th_pin(0);
	/* 16 KiB: a handful of sub-buffers */
	th_fixture_new(&fx, 16, p->subbuf_kb);
	th_fixture_write_markers(&fx, 0, w1);
	c = open_reader(0, p->flags);
	drain(c, p->api, &fx.got[0]);
	check_lossy(&fx.got[0], w1 - 1, p->api == API_PAGES, &lost);
	assert_true(lost > 0);
	assert_int_equal(fx.got[0].n + lost, w1);
	assert_int_equal(th_cpu_stat(fx.inst, 0, "overrun:"), lost);
	check_stats(c, p, fx.got[0].n, lost, w1);

	/* a second overflow while the reader is open, after a partial page */
	th_fixture_write_markers(&fx, w1, 3);
	drain(c, p->api, &fx.got[0]);
	th_fixture_write_markers(&fx, w1 + 3, w2);
	drain(c, p->api, &fx.got[0]);
	check_lossy(&fx.got[0], w1 + 3 + w2 - 1, p->api == API_PAGES, &lost);
	assert_int_equal(fx.got[0].n + lost, w1 + 3 + w2);
	assert_int_equal(th_cpu_stat(fx.inst, 0, "overrun:"), lost);
	check_stats(c, p, fx.got[0].n, lost, w1 + 3 + w2);

	/*
	 * echo > trace, then more is written and lost than before it: the
	 * kernel's counters restart and overtake the reader's old view.
	 */
	th_fixture_clear_got(&fx);
	reset_buffer();
	th_fixture_write_markers(&fx, 0, 2 * (w1 + w2));
	drain(c, p->api, &fx.got[0]);
	/* the reset is a gap of unknown size (test-clear), before the overwritten ones */
	assert_int_equal(fx.got[0].ev[0].missed, TRACEMAP_LOST_UNKNOWN);
	check_lossy(&fx.got[0], 2 * (w1 + w2) - 1, true, &lost);
	assert_int_equal(fx.got[0].n + lost, 2 * (w1 + w2));
	assert_int_equal(th_cpu_stat(fx.inst, 0, "overrun:"), lost);
}

/*
 * echo > trace while a consuming reader is open: what was written after
 * the reset arrives exactly once, the first event with the reset's gap
 * (unknown size); what the reset discarded never does.
 */
static void test_reset(void **state)
{
	const struct params *p = *state;
	unsigned int pp = th_markers_per_subbuf(p->subbuf_kb);
	struct tracemap_cpu *c;

	th_pin(0);
	th_fixture_new(&fx, 1024, p->subbuf_kb);
	c = open_reader(0, p->flags);

	/* reader inside a partly written page; unread events discarded */
	th_fixture_write_markers(&fx, 0, 30);
	drain_exact(c, p->api, 0, 30);
	th_fixture_write_markers(&fx, 30, 20);
	reset_buffer();
	th_fixture_write_markers(&fx, 1000, 10);
	drain_after_clear(c, p->api, 1000, 10);

	/* after the reset, more than before it: the kernel counters grow past ours */
	th_fixture_write_markers(&fx, 2000, 3 * pp);
	reset_buffer();
	th_fixture_write_markers(&fx, 3000, 4 * pp + 3);
	drain_after_clear(c, p->api, 3000, 4 * pp + 3);

	/* a reset with nothing unread, then fewer events than the reader has seen */
	reset_buffer();
	th_fixture_write_markers(&fx, 5000, 5);
	drain_after_clear(c, p->api, 5000, 5);

	/* a reset of an empty buffer, twice: one gap, then the reader page fills exactly */
	reset_buffer();
	reset_buffer();
	th_fixture_write_markers(&fx, 6000, pp);
	drain_after_clear(c, p->api, 6000, pp);
	th_fixture_write_markers(&fx, 7000, 1);
	drain_exact(c, p->api, 7000, 1);
}

/*
 * Consuming while a writer thread runs on the other CPU, waking up with
 * poll(): the reader chases the writer on its page. Every event once, in
 * order; with this buffer and rate nothing is lost, but for what the
 * kernel's read() path skips (check_kernel_account()).
 */
static void test_live(void **state)
{
	const struct params *p = *state;
	const unsigned int count = 100000;
	uint64_t deadline;
	struct tracemap_cpu *c;
	struct pollfd pfd;
	bool done = false;

	if (online_cpus() < 2)
		skip();
	th_pin(0);
	th_fixture_new(&fx, 4096, p->subbuf_kb);
	/* wake up for every event, not at half the buffer */
	assert_int_equal(th_instance_write(fx.inst, "buffer_percent", "0"), 0);
	c = open_reader(1, p->flags);
	pfd = (struct pollfd){ .fd = tracemap_cpu_fd(c), .events = POLLIN };
	th_writer_start(&fx.w, fx.inst, 1, count, 200000);
	deadline = th_now_ns() + 60ull * 1000000000ull;
	while (!done && th_now_ns() < deadline) {
		/* read what is there after the writer finished: then nothing is missing */
		done = th_writer_done(&fx.w);
		if (p->api == API_PAGES)
			drain_pages(c, &fx.got[0], done);
		else
			th_drain_events(c, &fx.got[0]);
		if (!done)
			assert_true(poll(&pfd, 1, 10) >= 0);
	}
	th_writer_join(&fx.w);
	assert_true(done);
	assert_int_equal(fx.w.error, 0);
	/* with read(), the kernel may skip events: then they must be reported, exactly */
	if (check_kernel_account(c, 1, count, &fx.got[0]))
		return;
	check_exact(&fx.got[0], 0, 0, count, 1);
	check_stats(c, p, count, 0, count);
}

/* ---------------------------------------------------------------- main */

#define P(flags, kb, api)	(&(struct params){ flags, kb, api })
#define MMAP			0
#define READ			TRACEMAP_CPU_FORCE_READ
#define T(name, fn, prm)	{ name, fn, NULL, teardown, prm }

int main(void)
{
	const struct CMUnitTest tests[] = {
		T("counts mmap 4k events", test_counts, P(MMAP, 4, API_EVENTS)),
		T("counts mmap 8k events", test_counts, P(MMAP, 8, API_EVENTS)),
		T("counts mmap 4k pages", test_counts, P(MMAP, 4, API_PAGES)),
		T("counts mmap 8k pages", test_counts, P(MMAP, 8, API_PAGES)),
		T("counts read 4k events", test_counts, P(READ, 4, API_EVENTS)),
		T("counts read 8k events", test_counts, P(READ, 8, API_EVENTS)),
		T("counts read 4k pages", test_counts, P(READ, 4, API_PAGES)),
		T("counts read 8k pages", test_counts, P(READ, 8, API_PAGES)),
		T("incremental mmap 4k events", test_counts_incremental, P(MMAP, 4, API_EVENTS)),
		T("incremental mmap 8k pages", test_counts_incremental, P(MMAP, 8, API_PAGES)),
		T("incremental read 4k events", test_counts_incremental, P(READ, 4, API_EVENTS)),
		T("incremental read 8k pages", test_counts_incremental, P(READ, 8, API_PAGES)),
		T("both cpus mmap", test_both_cpus, P(MMAP, 4, API_EVENTS)),
		T("both cpus read", test_both_cpus, P(READ, 4, API_EVENTS)),
		T("really consumes mmap", test_really_consumes, P(MMAP, 4, API_EVENTS)),
		T("really consumes read", test_really_consumes, P(READ, 4, API_EVENTS)),
		T("overwrite accounting mmap 4k events", test_overwrite_accounting,
		  P(MMAP, 4, API_EVENTS)),
		T("overwrite accounting mmap 8k pages", test_overwrite_accounting,
		  P(MMAP, 8, API_PAGES)),
		T("overwrite accounting read 4k events", test_overwrite_accounting,
		  P(READ, 4, API_EVENTS)),
		T("overwrite accounting read 8k pages", test_overwrite_accounting,
		  P(READ, 8, API_PAGES)),
		T("live mmap 4k events", test_live, P(MMAP, 4, API_EVENTS)),
		T("live mmap 8k pages", test_live, P(MMAP, 8, API_PAGES)),
		T("live read 4k pages", test_live, P(READ, 4, API_PAGES)),
		T("live read 8k events", test_live, P(READ, 8, API_EVENTS)),
		T("reset mmap 4k", test_reset, P(MMAP, 4, API_EVENTS)),
		T("reset mmap 8k pages", test_reset, P(MMAP, 8, API_PAGES)),
		T("reset read 4k", test_reset, P(READ, 4, API_EVENTS)),
		T("reset read 8k pages", test_reset, P(READ, 8, API_PAGES)),
	};

	th_require_tracefs();
	return cmocka_run_group_tests_name("cpu consume", tests, measure_record, teardown);
}
