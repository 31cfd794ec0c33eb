// SPDX-License-Identifier: GPL-2.0-only
/*
 * The read() backend when read() returns 0, the kernel's "events counted,
 * nothing to hand out" (tm_cpu_open_read_fd()): events the kernel skipped
 * and counts unread for good (Documentation/design/kernel-facts.md 2) are reported
 * lost once, with their count, and left out of tracemap_cpu_stats_unread();
 * a writer caught between counting and publishing (counters that move) is
 * not taken for a loss; a reset starts the count again; a thread that may
 * not run on the buffer's CPU reports nothing. Before the check, read()
 * returning 0 was "nothing now" and the skipped events went unreported.
 * Besides, the loss counts of flagged pages: each loss told once.
 *
 * A regular file stands in for trace_pipe_raw (read() at its end returns
 * 0; a page appended to it is what the next read() returns) and a callback
 * for per_cpu/cpuN/stats that hands out the counters the test planned for
 * each read of them, in order. No kernel needed.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "harness.h"
#include "sbuf-encode.h"
#include "tracemap-local.h"

#define SBS		256
#define MAX_TEXTS	16	/* counters planned for one call */

static char dir[64], file[96];

/*
 * sched_setaffinity() as the library sees it: the test's own definition
 * comes before libc's. Armed with @fail_call > 0, that call (counting from
 * the arming) fails with EINVAL, as when a cpuset no longer allows the
 * CPUs a thread had.
 */
static struct {
	int fail_call;
	int calls;
} aff;

int sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *set)
{
	if (aff.fail_call && ++aff.calls == aff.fail_call) {
		errno = EINVAL;
		return -1;
	}
	return syscall(SYS_sched_setaffinity, pid, size, set) ? -1 : 0;
}

/* The counters each read of them gets, in order; then -EIO */
static struct {
	struct tracemap_cpu_stats k[MAX_TEXTS];
	unsigned int nr;
	unsigned int served;
	unsigned int extra;
} srv;

static int stats(void *ctx, struct tracemap_cpu_stats *k)
{
	if (srv.served == srv.nr) {
		srv.extra++;
		return -EIO;
	}
	k->kernel_entries = srv.k[srv.served].kernel_entries;
	k->kernel_overrun = srv.k[srv.served].kernel_overrun;
	k->kernel_read = srv.k[srv.served++].kernel_read;
	return 0;
}

/* Counters as per_cpu/cpuN/stats counts them: entries there is @unread */
static void plan(unsigned long unread, unsigned long overrun, unsigned long nread)
{
	assert_true(srv.nr < MAX_TEXTS);
	srv.k[srv.nr++] = (struct tracemap_cpu_stats){ .kernel_entries = unread + overrun + nread,
						       .kernel_overrun = overrun,
						       .kernel_read = nread };
}

static void plan_times(unsigned int n, unsigned long unread, unsigned long nread)
{
	while (n--)
		plan(unread, 0, nread);
}

/* What was planned was read, no more */
static void start(void)
{
	srv.served = srv.extra = 0;
}

static void served_all(void)
{
	assert_int_equal(srv.served, srv.nr);
	assert_int_equal(srv.extra, 0);
	srv.nr = 0;
}

/* A reader of CPU @cpu over an empty file, the counters at (0 unread, @nread read) */
static struct tracemap_cpu *open_reader(int cpu, unsigned long nread)
{
	struct tracemap_cpu *c;
	int fd;

	srv.nr = 0;
	fd = open(file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	plan(0, 0, nread);		/* tm_read_init() */
	start();
	c = tm_cpu_open_read_fd(cpu, fd, SBS, stats, NULL);
	assert_non_null(c);
	served_all();
	return c;
}

/*
 * Append a page with one event at @ts to the file the reader reads, its loss
 * flagged as sbe_finish() takes it (0: none)
 */
static void append_lost_page(uint64_t ts, long long lost)
{
	unsigned char page[SBS];
	struct sbe e;
	int fd;

	assert_int_equal(sbe_init(&e, page, SBS, ts), 0);
	assert_true(sbe_event(&e, ts, "seq=1", 6, 0) >= 0);
	sbe_finish(&e, lost);
	sbe_release(&e);
	fd = open(file, O_WRONLY | O_APPEND | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, page, SBS), SBS);
	close(fd);
}

static void append_page(uint64_t ts)
{
	append_lost_page(ts, 0);
}

static struct tracemap_cpu_stats stats_of(struct tracemap_cpu *c, unsigned long unread,
					  unsigned long nread)
{
	struct tracemap_cpu_stats st;

	plan(unread, 0, nread);
	start();
	assert_int_equal(tracemap_cpu_stats(c, &st, sizeof(st)), 0);
	served_all();
	return st;
}

static int next_event(struct tracemap_cpu *c, struct tracemap_event *ev)
{
	int ret;

	start();
	ret = tracemap_cpu_next_event(c, ev);
	served_all();
	return ret;
}

/* A call that returns no event after @looks looks at (@unread unread, @nread read) */
static void no_event(struct tracemap_cpu *c, unsigned int looks, unsigned long unread,
		     unsigned long nread)
{
	struct tracemap_event ev;

	plan_times(looks, unread, nread);
	assert_int_equal(next_event(c, &ev), 0);
}

/*
 * A page with one event at @ts appended and read, the counters at (@unread
 * unread, @nread read) for the look after it: the event comes with @missed.
 */
static void page_event(struct tracemap_cpu *c, uint64_t ts, unsigned long unread,
		       unsigned long nread, long long missed)
{
	struct tracemap_event ev;

	append_page(ts);
	plan(unread, 0, nread);
	assert_int_equal(next_event(c, &ev), 1);
	assert_int_equal(ev.missed, missed);
	assert_int_equal(ev.ts, ts);
}

/*
 * A call that finds @unread events out of reach (@nread read): the first
 * look, read() again between two looks, the same from the reader's CPU,
 * reported; the iterator reads on for an event and the next look finds
 * them told. Then the statistics say @lost and @skipped in all.
 */
static void skip_reported(struct tracemap_cpu *c, unsigned long unread, unsigned long nread,
			  uint64_t lost, uint64_t skipped)
{
	struct tracemap_cpu_stats st;

	no_event(c, 6, unread, nread);
	st = stats_of(c, unread, nread);
	assert_int_equal(st.lost, lost);
	assert_int_equal(st.skipped, skipped);
	assert_int_equal(st.kernel_entries, unread + nread);
	assert_int_equal(tracemap_cpu_stats_unread(&st), 0);
}

/* Skipped events: reported once, with the next event, and not unread any more */
static void test_skipped(void **state)
{
	struct tracemap_cpu *c = open_reader(0, 10);

	skip_reported(c, 4, 10, 4, 4);

	/* still 4: told already, one look */
	no_event(c, 1, 4, 10);

	/* the next event carries the loss (the look for a reset after its page reads it) */
	page_event(c, 1000, 4, 11, 4);
	no_event(c, 1, 4, 11);

	/* 2 more skipped later: only they are reported */
	skip_reported(c, 6, 11, 6, 6);
	tracemap_cpu_close(c);
}

/* Counters that move around read(): a writer between counting and publishing */
static void test_writer_in_flight(void **state)
{
	struct tracemap_cpu *c = open_reader(0, 10);
	struct tracemap_cpu_stats st;
	struct tracemap_event ev;

	/* off this CPU: the event is published between the looks */
	plan(1, 0, 10);
	plan(1, 0, 10);
	plan(2, 0, 10);
	assert_int_equal(next_event(c, &ev), 0);
	/* from the CPU: a new event counted during the last look */
	plan_times(3, 1, 10);
	plan(1, 0, 10);
	plan(2, 0, 10);
	assert_int_equal(next_event(c, &ev), 0);
	st = stats_of(c, 0, 12);
	assert_int_equal(st.lost, 0);
	assert_int_equal(st.skipped, 0);
	/* the same when read events move: another consumer */
	plan(1, 0, 12);
	plan(1, 0, 12);
	plan(0, 0, 13);
	assert_int_equal(next_event(c, &ev), 0);
	st = stats_of(c, 0, 13);
	assert_int_equal(st.lost, 0);
	tracemap_cpu_close(c);
}

/* A reset takes the skipped events with it; what is skipped after it is new */
static void test_reset(void **state)
{
	struct tracemap_cpu *c = open_reader(0, 10);

	skip_reported(c, 4, 10, 4, 4);
	/* echo > trace: every counter back to 0, then 3 written and skipped */
	no_event(c, 1, 0, 0);
	skip_reported(c, 3, 0, 7, 3);
	tracemap_cpu_close(c);
}

/*
 * A reset (echo > trace) between two pages: the kernel's read count falls
 * behind what our reads made it, and the page after it carries a gap of
 * unknown size, counted in cleared, once.
 */
static void test_cleared(void **state)
{
	struct tracemap_cpu *c = open_reader(0, 10);
	struct tracemap_cpu_stats st;

	page_event(c, 1000, 0, 11, 0);
	/* cleared: 1 event read since, not 12 */
	page_event(c, 2000, 0, 1, TRACEMAP_LOST_UNKNOWN);
	page_event(c, 3000, 0, 2, 0);
	st = stats_of(c, 0, 2);
	assert_int_equal(st.cleared, 1);
	assert_int_equal(st.lost_unknown, 1);
	tracemap_cpu_close(c);
}

/*
 * A loss is told once. A page flagged without its count (a full page) is
 * told what overrun grew by, read after read() took the page: that may
 * hold losses of after its swap, which the next page's stored count holds
 * too. Here overrun is 10 after page A (6 before it, 4 since), and page B
 * stores 6 (those 4, and 2 more): B tells 2, 12 in all, as the kernel's
 * overrun. Before, the stored count was told whole: 16 lost of 12, the
 * stream's exact count off (test-stream's busy-poll case through read()).
 */
static void test_loss_told_once(void **state)
{
	struct tracemap_cpu *c = open_reader(0, 0);
	struct tracemap_cpu_stats st;
	struct tracemap_event ev;
	int i;

	append_lost_page(1000, -1);
	/* the counters after each page as often as they are read: not what is tested */
	for (i = 0; i < 3; i++)
		plan(0, 10, 1);
	start();
	assert_int_equal(tracemap_cpu_next_event(c, &ev), 1);
	assert_int_equal(ev.missed, 10);
	append_lost_page(2000, 6);
	srv.nr = 0;
	for (i = 0; i < 3; i++)
		plan(0, 12, 2);
	start();
	assert_int_equal(tracemap_cpu_next_event(c, &ev), 1);
	assert_int_equal(ev.ts, 2000);
	if (ev.missed != 2)
		fail_msg("page B told %lld lost, 2 of its 6 were not told before", ev.missed);
	srv.nr = 0;
	plan(0, 12, 2);
	start();
	assert_int_equal(tracemap_cpu_stats(c, &st, sizeof(st)), 0);
	served_all();
	assert_int_equal(st.lost, 12);
	assert_int_equal(st.kernel_overrun, 12);
	tracemap_cpu_close(c);
}

/*
 * The pages API: skipped events found at the tail are no empty page, even
 * flushed (a page parser reports a loss with the event after it), and go
 * on the next page with its records.
 */
static void test_skipped_pages(void **state)
{
	struct tracemap_cpu *c = open_reader(0, 10);
	unsigned char page[SBS];
	long long missed;
	uint64_t commit;
	unsigned int size;

	plan_times(6, 4, 10);
	start();
	assert_int_equal(tracemap_cpu_read_page(c, page, SBS, TRACEMAP_PAGE_FLUSH), 0);
	served_all();
	assert_int_equal(tracemap_cpu_pending_since(c), 0);

	append_page(1000);
	plan(4, 0, 11);
	start();
	assert_true(tracemap_cpu_read_page(c, page, SBS, TRACEMAP_PAGE_FLUSH) > 0);
	served_all();
	memcpy(&commit, page + 8, sizeof(commit));
	size = (uint32_t)commit & ((1u << 27) - 1);
	assert_true(size > 0 && size <= SBS - 16 - 8);
	assert_true(commit & (1u << 31));
	assert_true(commit & (1u << 30));
	memcpy(&missed, page + 16 + size, sizeof(missed));
	assert_int_equal(missed, 4);
	tracemap_cpu_close(c);
}

/* A CPU this thread may not run on: nothing can be told, nothing is reported */
static void test_other_cpu(void **state)
{
	struct tracemap_cpu *c = open_reader(CPU_SETSIZE - 1, 10);
	struct tracemap_cpu_stats st;

	no_event(c, 3, 4, 10);
	st = stats_of(c, 4, 10);
	assert_int_equal(st.lost, 0);
	assert_int_equal(st.skipped, 0);
	assert_int_equal(tracemap_cpu_stats_unread(&st), 4);
	tracemap_cpu_close(c);
}

/*
 * The skip check cannot move the thread back: the loss is still reported,
 * the next call returns the error, and the thread is never moved again.
 */
static void test_move_back_fails(void **state)
{
	struct tracemap_cpu *c = open_reader(0, 10);
	struct tracemap_cpu_stats st;
	struct tracemap_event ev;
	cpu_set_t now;

	/* the second call is the move back */
	aff = (typeof(aff)){ .fail_call = 2 };
	/* the gap is taken, and the iterator's next region is the error */
	plan_times(5, 4, 10);
	start();
	assert_int_equal(tracemap_cpu_next_event(c, &ev), -EINVAL);
	served_all();
	assert_int_equal(aff.calls, 2);
	assert_int_equal(sched_getaffinity(0, sizeof(now), &now), 0);
	assert_int_equal(CPU_COUNT(&now), 1);
	assert_true(CPU_ISSET(0, &now));
	st = stats_of(c, 4, 10);
	assert_int_equal(st.lost, 4);

	/* told once; 2 more skipped are not told without a move, and no move any more */
	no_event(c, 3, 6, 10);
	assert_int_equal(aff.calls, 2);
	/* the loss still goes out with the next event */
	page_event(c, 1000, 6, 11, 4);
	st = stats_of(c, 6, 11);
	assert_int_equal(st.lost, 4);
	aff.fail_call = 0;
	th_restore_affinity();
	tracemap_cpu_close(c);
}

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/tm-read-zero-%d", (int)getpid());
	snprintf(file, sizeof(file), "%s/trace_pipe_raw", dir);
	if (mkdir(dir, 0700))
		return -1;
	th_save_affinity();
	return 0;
}

static int teardown(void **state)
{
	th_restore_affinity();
	unlink(file);
	rmdir(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_skipped),
		cmocka_unit_test(test_writer_in_flight),
		cmocka_unit_test(test_reset),
		cmocka_unit_test(test_other_cpu),
		cmocka_unit_test(test_skipped_pages),
		cmocka_unit_test(test_move_back_fails),
		cmocka_unit_test(test_cleared),
		cmocka_unit_test(test_loss_told_once),
	};

	tracemap_set_print(NULL, NULL);
	return cmocka_run_group_tests_name("read() returning 0", tests, setup, teardown);
}
