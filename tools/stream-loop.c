// SPDX-License-Identifier: GPL-2.0-only
/*
 * tracemap stream: the loop. Wait on the stream's epoll fd and the signalfd
 * (or busy-poll), consume, and flush the output within the latency bound.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "tracemap.h"
#include "tracemap-tool.h"
#include "cmd-stream.h"

#define DRAIN_READ_MS		300	/* final drain: taking events from the buffers */
#define DRAIN_WRITE_MS		700	/* ... and writing them, from the stop on */
#define BUSY_CHECK_EVERY	256			/* busy-poll: rounds per signal check */

static bool stopping;
/*
 * Stop requests read from the signalfd, and how many of them began the
 * stop: whichever read finds a request (the loop, a wait for room, the
 * printer) counts it, so a request is never taken for another.
 */
static unsigned int requests, requests_at_stop;

void stop_begun(void)
{
	if (stopping)
		return;
	stopping = true;
	requests_at_stop = requests ? 1 : 0;
}

bool stop_cut_short(void)
{
	return requests > requests_at_stop;
}

bool stop_requested(int sfd)
{
	struct signalfd_siginfo si;
	bool stop = false;

	/* read them all: standard signals do not queue, a pending one is one request */
	while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD && (stopping || !command_exited()))
			continue;
		requests++;
		stop = true;
	}
	return stop;
}

/* The stop is under way: what cut the round short was the stop itself. */
static void stop_taken(struct printer *p)
{
	p->out->interrupted = false;
	p->stop = false;
	stop_begun();
}

int stream_loop(struct tracemap_stream *s, struct printer *p, int sfd, bool busy,
		int latency_ms, bool round_flush)
{
	uint64_t max_ns = round_flush && !busy ? 0 : (uint64_t)latency_ms * 1000000;
	/* a funcgraph_entry waits this long for its exit, then prints as "func() {" */
	uint64_t hold_ns = (uint64_t)latency_ms * 1000000;
	struct epoll_event e, evs[2];
	struct output *o = p->out;
	unsigned int rounds = 0;
	int ep, ret, n, i, t, h;
	bool stop = false;

	if (busy) {
		while (!stop) {
			ret = tracemap_stream_consume(s);
			if (ret == -EPIPE || p->stop) {
				stop_taken(p);
				return 0;
			}
			if (ret < 0)
				goto fail;
			if (printer_idle(p, hold_ns) || out_due(o, max_ns)) {
				stop_taken(p);
				return 0;
			}
			if ((ret == 0 || ++rounds % BUSY_CHECK_EVERY == 0) && stop_requested(sfd))
				stop = true;
		}
		return 0;
	}

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0) {
		ret = -errno;
		goto fail;
	}
	e = (struct epoll_event){ .events = EPOLLIN, .data.fd = sfd };
	epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &e);
	e = (struct epoll_event){ .events = EPOLLIN, .data.fd = tracemap_stream_epoll_fd(s) };
	if (epoll_ctl(ep, EPOLL_CTL_ADD, e.data.fd, &e)) {
		ret = -errno;
		close(ep);
		goto fail;
	}
	/* the library paces the rounds (libtracemap-stream(3), wake-up policy) */
	while (!stop) {
		t = out_timeout(o, max_ns);
		h = printer_hold_timeout(p, hold_ns);
		n = epoll_wait(ep, evs, 2, h >= 0 && (t < 0 || h < t) ? h : t);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && (printer_idle(p, hold_ns) || out_due(o, max_ns)))
			stop = true;
		if (n < 0) {
			ret = -errno;
			close(ep);
			goto fail;
		}
		for (i = 0; i < n; i++) {
			if (evs[i].data.fd == sfd) {
				/* taken off the signalfd: only a second signal cuts the stop short */
				if (stop_requested(sfd))
					stop = true;
				continue;
			}
			ret = tracemap_stream_consume(s);
			if (ret == -EPIPE || p->stop || out_due(o, max_ns)) {
				stop = true;
				continue;
			}
			if (ret < 0) {
				close(ep);
				goto fail;
			}
		}
	}
	close(ep);
	stop_taken(p);
	return 0;
fail:
	tool_err("reading the ring buffers failed: %s", strerror(-ret));
	return -1;
}

bool stream_final_drain(struct tracemap_stream *s, struct printer *p, uint64_t stop_ns)
{
	struct output *o = p->out;
	bool cut = false;
	int ret;

	/*
	 * A slow reader of the output must not hold the stop up: one consume
	 * call would otherwise deliver the whole backlog, each write waiting
	 * for room. Events not taken by DRAIN_READ_MS stay in the buffers;
	 * those taken but not written by DRAIN_WRITE_MS are counted lost.
	 */
	p->until = stop_ns + DRAIN_READ_MS * 1000000ULL;
	o->deadline = stop_ns + DRAIN_WRITE_MS * 1000000ULL;
	o->interrupted = false;
	/* after a failed write nothing more is taken from the buffers */
	while (!o->err && !p->stop && !stop_cut_short()) {
		ret = tracemap_stream_consume(s);
		if (ret <= 0)
			break;
	}
	/* nothing follows a held funcgraph_entry now */
	if (!o->err && !stop_cut_short())
		printer_flush_held(p);
	cut = p->stop || (o->err && o->err != EPIPE);
	/* a second signal: write nothing more */
	stop_requested(p->sfd);
	if (stop_cut_short() && !o->err)
		o->err = EINTR;
	if (out_flush(o) && o->err != EPIPE)
		cut = true;
	p->until = 0;
	return cut;
}
