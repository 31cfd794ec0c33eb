// SPDX-License-Identifier: LGPL-2.1-only
/*
 * The one wake-up policy of the library, for streams (stream.c: poll,
 * consume, next_event) and for a single reader's tracemap_cpu_wait():
 *
 *  - round moderation: at watermark 0 the kernel wakes a reader for every
 *    event, and a round started at once would deliver one to three of them
 *    for a GET_READER, a sleep and a wakeup each. At most one round starts
 *    every TM_MIN_ROUND_NS: letting events gather that long costs at most
 *    that much latency and a fraction of the CPU per event. A round that
 *    starts later than that after the previous one does not wait. While
 *    events flow, the stream does not wait for the kernel's wakeup between
 *    rounds at all (stream.c, round_waits()): it sleeps here until the next
 *    round may start and looks at the mapping. So every round costs one
 *    sleep, the dearest part of a round (far more than a syscall). The
 *    interval sets both the rounds per second and the latency while events
 *    flow (write to delivery: up to the interval, plus the sleep's timer
 *    slack, plus the round). A busy stream spaces its rounds out
 *    (tm_wake_round()): after a round of TM_BUSY_ROUND events or more the
 *    interval doubles, up to TM_MAX_ROUND_NS, and after one of fewer than
 *    half that it is TM_MIN_ROUND_NS again, as a network card coalesces
 *    its interrupts under load: the CPU a sleep costs is shared by more
 *    events where a millisecond or two of latency does not matter. The
 *    figures behind the intervals are in bench/README.md ("Why the
 *    library's heuristics are set as they are").
 *
 *  - empty-wakeup back-off: a wakeup of the kernel's is expected to bring
 *    data (the stream's tick and kick are not counted: an idle stream's
 *    tick finds nothing every time and would pause 1 ms per tick). After
 *    TM_EMPTY_WAKES in a row that did not (an event the kernel counts but
 *    has not published yet, which cpu-consume.c does not ask for),
 *    pause TM_BACKOFF_NS before looking again instead of spinning on a
 *    level-triggered descriptor.
 *
 * Documented in libtracemap-stream(3) and libtracemap-read(3).
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
