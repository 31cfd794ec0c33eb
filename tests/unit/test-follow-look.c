// SPDX-License-Identifier: GPL-2.0-only
/*
 * Follow mode finds the page after the one it reads by a look at every
 * sub-buffer header. The look is not atomic: a writer that moves on while
 * it is under way fills pages the look has passed and one it reads later.
 * Here the writer does exactly that, deterministically: the look faults on
 * a protected sub-buffer and the handler writes the pages before it, as a
 * writer on another CPU would while the follower was descheduled there.
 * Every event must come once and in order, with no gap (nothing was
 * overwritten), and no loss reported.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "sbuf-encode.h"
#include "cpu-local.h"

#define SBS		4096
#define NR		8	/* the reader page 0 and a ring of 7 */
#define PER_PAGE	40	/* events on a full page */
#define T0		5000000000ULL

static struct {
	unsigned char *map;
	struct sbe e[NR];	/* the pages as the writer left them */
	unsigned int seq;	/* the next event the writer writes */
	unsigned int trap;	/* the sub-buffer the look faults on */
	unsigned int upto;	/* the page the writer is on after the fault */
	unsigned int writer;	/* the page the writer is on */
	bool fired;
} w;

static unsigned char *subbuf(unsigned int id)
{
	return w.map + SBS + (size_t)id * SBS;
}

/* @n events on the writer's page, the time stamp first on a new page, then commit */
static void write_events(unsigned int n)
{
	struct sbe *e = &w.e[w.writer];
	uint32_t payload[2];

	while (n--) {
		uint64_t ts = T0 + (uint64_t)w.seq * 10000;

		if (!e->page)
			assert_int_equal(sbe_init(e, subbuf(w.writer), SBS, ts), 0);
		payload[0] = w.seq;
		payload[1] = 0;
		assert_true(sbe_event(e, ts, payload, sizeof(payload), 0) >= 0);
		sbe_finish(e, 0);
		w.seq++;
	}
}

/* The writer fills its page and the ones after it up to page @upto, which it starts. */
static void write_upto(unsigned int upto)
{
	write_events(PER_PAGE - w.e[w.writer].nr);
	while (++w.writer < upto)
		write_events(PER_PAGE);
	write_events(PER_PAGE / 4);
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	unsigned char *a = si->si_addr;

	(void)uc;
	if (w.fired || a < subbuf(w.trap) || a >= subbuf(w.trap) + SBS) {
		signal(sig, SIG_DFL);	/* a real fault: crash on return */
		return;
	}
	/* the look got this far when the writer went on */
	w.fired = true;
	mprotect(subbuf(w.trap), SBS, PROT_READ | PROT_WRITE);
	write_upto(w.upto);
}

static void check_run(const struct th_events *g, unsigned int from, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < g->n && i < n; i++) {
		if (g->ev[i].seq != (long)(from + i))
			fail_msg("event %u: seq %ld, not %u (missed %lld)", i, g->ev[i].seq,
				 from + i, g->ev[i].missed);
		assert_int_equal(g->ev[i].missed, 0);
	}
	assert_int_equal(g->n, n);
}

/* Events of @c until nothing is new, their seq from the payload */
static unsigned int drain(struct tracemap_cpu *c, struct th_events *g)
{
	struct tracemap_event ev;
	unsigned int n = 0;
	uint32_t seq;
	int ret;

	while ((ret = tracemap_cpu_next_event(c, &ev)) == 1) {
		assert_true(ev.size >= sizeof(seq));
		memcpy(&seq, ev.data, sizeof(seq));
		if (g->n == g->cap) {
			g->cap = g->cap ? 2 * g->cap : 256;
			g->ev = realloc(g->ev, g->cap * sizeof(*g->ev));
			assert_non_null(g->ev);
		}
		g->ev[g->n].seq = seq;
		g->ev[g->n].missed = ev.missed;
		g->n++;
		n++;
	}
	assert_int_equal(ret, 0);
	return n;
}

/*
 * The follower is on page 2 of the ring (@mid: in the middle of what it
 * holds; else at its end) when the writer, with the follower's look past
 * pages 3 and 4, fills them and page 5 and starts page 6.
 */
static void look_overtaken(bool mid)
{
	struct trace_buffer_meta *meta;
	struct sigaction sa = { 0 }, old;
	struct tracemap_cpu_stats st;
	struct th_events g = { 0 };
	struct tracemap_cpu *c;
	unsigned int i;

	memset(&w, 0, sizeof(w));
	w.map = mmap(NULL, SBS + NR * SBS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	assert_true(w.map != MAP_FAILED);
	meta = (struct trace_buffer_meta *)w.map;
	meta->meta_page_size = SBS;
	meta->meta_struct_len = sizeof(*meta);
	meta->subbuf_size = SBS;
	meta->nr_subbufs = NR;
	/* the writer starts on page 1; the reader page 0 stays empty */
	w.writer = 1;
	write_upto(2);

	c = tm_cpu_open_memory(1, TRACEMAP_MODE_FOLLOW, w.map, w.map + SBS, SBS, NR, NULL, NULL);
	assert_non_null(c);
	/* what is there: page 1 and what page 2 holds so far */
	drain(c, &g);
	check_run(&g, 0, w.seq);
	if (mid) {
		/* a little more on page 2, taken, then more again: the follower is behind */
		write_events(3);
		drain(c, &g);
		write_events(2);
	}

	w.trap = 5;
	w.upto = 6;
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	assert_int_equal(sigaction(SIGSEGV, &sa, &old), 0);
	assert_int_equal(mprotect(subbuf(w.trap), SBS, PROT_NONE), 0);
	drain(c, &g);
	mprotect(subbuf(w.trap), SBS, PROT_READ | PROT_WRITE);
	sigaction(SIGSEGV, &old, NULL);
	assert_true(w.fired);

	/* everything once, in order, nothing reported lost */
	check_run(&g, 0, w.seq);
	assert_int_equal(tracemap_cpu_stats(c, &st, sizeof(st)), 0);
	assert_int_equal(st.events, w.seq);
	assert_int_equal(st.lost + st.lost_unknown + st.gaps_possible + st.corrupt, 0);

	tracemap_cpu_close(c);
	for (i = 0; i < NR; i++)
		sbe_release(&w.e[i]);
	munmap(w.map, SBS + NR * SBS);
	free(g.ev);
}

static void test_look_overtaken_at_end(void **state)
{
	(void)state;
	look_overtaken(false);
}

static void test_look_overtaken_mid_page(void **state)
{
	(void)state;
	look_overtaken(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_look_overtaken_at_end),
		cmocka_unit_test(test_look_overtaken_mid_page),
	};

	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
