// SPDX-License-Identifier: LGPL-2.1-only
/*
 * The one wake-up policy of the library, for streams (stream.c: poll,
 * consume, next_event; pace.c decides whether a round waits at all) and
 * for a single reader's tracemap_cpu_wait(). Its rules:
 *
 *  rule                        what                                    why
 *  round moderation            a stream round starts at most once per  at watermark 0 the kernel wakes a
 *  (tm_wake_moderate())        interval after the last one; a later    reader per event: a sleep, the
 *                              one does not wait                       dearest part of a round, is then
 *                                                                      shared by the events of an interval
 *  busy rounds                 after a round of TM_BUSY_ROUND events   as a network card coalesces its
 *  (tm_wake_round())           or more the interval doubles, up to     interrupts: under load a millisecond
 *                              TM_MAX_ROUND_NS; after one of fewer     or two of latency costs less than
 *                              than half that, TM_MIN_ROUND_NS again   the CPU of more sleeps
 *  empty-wakeup back-off       after TM_EMPTY_WAKES kernel wakeups in  no spinning on a level-triggered
 *  (tm_wake_backoff(),         a row that brought nothing, pause       descriptor for an event the kernel
 *  tm_wake_pause())            TM_BACKOFF_NS before looking again;     counts but has not published yet;
 *                              the stream's tick and kick never count  an idle stream's tick finds nothing
 *
 * The interval sets both the rounds per second and the latency while
 * events flow (up to the interval, plus the sleep's timer slack, plus the
 * round). The figures behind the constants are in bench/README.md ("Why
 * the library's heuristics are set as they are"). Documented in
 * libtracemap-stream(3) and libtracemap-read(3).
 */
#include <errno.h>
#include <poll.h>
#include <time.h>

#include "cpu-local.h"

bool tm_wake_moderate(struct tm_wake *w, uint64_t deadline)
{
	uint64_t now = tm_now_ns();
	uint64_t until = w->round_ns + (w->interval_ns ? w->interval_ns : TM_MIN_ROUND_NS);
	bool signalled = false;
	struct timespec ts;

	if (until > deadline)
		until = deadline;
	if (now < until) {
		ts.tv_sec = until / 1000000000ULL;
		ts.tv_nsec = until % 1000000000ULL;
		/* EINTR: a signal for the caller; the round goes ahead, pace() tells */
		signalled = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR;
		now = tm_now_ns();
	}
	w->round_ns = now;
	return signalled;
}

void tm_wake_round(struct tm_wake *w, unsigned int events)
{
	uint64_t next = w->interval_ns ? w->interval_ns : TM_MIN_ROUND_NS;

	if (events >= TM_BUSY_ROUND)
		next = next * 2 > TM_MAX_ROUND_NS ? TM_MAX_ROUND_NS : next * 2;
	else if (events < TM_BUSY_ROUND / 2)
		next = TM_MIN_ROUND_NS;
	w->interval_ns = next;
}

bool tm_wake_backoff(struct tm_wake *w)
{
	if (w->empty < TM_EMPTY_WAKES)
		return false;
	/* the next empty wakeup backs off again, one with data resets the count */
	w->empty = TM_EMPTY_WAKES - 1;
	return true;
}

bool tm_wake_pause(void)
{
	static const struct timespec backoff = { .tv_nsec = TM_BACKOFF_NS };

	return nanosleep(&backoff, NULL) < 0 && errno == EINTR;
}

/**
 * tracemap_cpu_wait - wait for a reader's data with the library's wake-up policy
 * @c: the reader (consume mode: its descriptor reports the kernel's watermark)
 * @extra_fd: another descriptor to wait for (a stop request), or -1
 * @timeout_ms: the longest wait, -1 for no limit
 *
 * Waits until the reader's descriptor or @extra_fd is readable or
 * @timeout_ms passes. After three wakeups in a row from which the reader
 * delivered no new region, it pauses 1 ms (still watching @extra_fd)
 * instead of trusting the descriptor, so that a level-triggered descriptor
 * with nothing to hand out costs no CPU.
 *
 * Returns TRACEMAP_WAIT_DATA when the reader may have data (or the pause
 * is over), TRACEMAP_WAIT_EXTRA when @extra_fd is readable, 0 on timeout,
 * or -errno (-EINTR when a signal arrived).
 */
int tracemap_cpu_wait(struct tracemap_cpu *c, int extra_fd, int timeout_ms)
{
	struct pollfd p[2];
	bool pause;
	int ret;

	if (!c)
		return tm_err(EINVAL);
	if (tm_cpu_usable(c))
		return -EBADFD;
	p[0] = (struct pollfd){ .fd = c->fd, .events = POLLIN };
	p[1] = (struct pollfd){ .fd = extra_fd, .events = POLLIN };
	pause = tm_wake_backoff(&c->wake);
	if (pause) {
		p[0].fd = -1;
		if (timeout_ms < 0 || timeout_ms > TM_BACKOFF_NS / 1000000)
			timeout_ms = TM_BACKOFF_NS / 1000000;
	}
	ret = poll(p, 2, timeout_ms);
	if (ret < 0)
		return tm_err(errno);
	if ((p[0].revents | p[1].revents) & POLLNVAL) {
		tm_log(TRACEMAP_LOG_ERROR, "tracemap_cpu_wait(): %s descriptor %d is not open: "
		       "do not close the reader's descriptor, pass -1 for no other one",
		       p[0].revents & POLLNVAL ? "the cpu reader's" : "the other",
		       p[0].revents & POLLNVAL ? p[0].fd : p[1].fd);
		return tm_err(EBADF);
	}
	if (p[1].revents)
		return TRACEMAP_WAIT_EXTRA;
	if (p[0].revents) {
		tm_wake_woken(&c->wake);
		return TRACEMAP_WAIT_DATA;
	}
	return pause ? TRACEMAP_WAIT_DATA : 0;
}
