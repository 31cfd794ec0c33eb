// SPDX-License-Identifier: LGPL-2.1
/*
 * tracemap stream: the loop. Wait on the stream's epoll fd and the signalfd
 * (or busy-poll), consume, and flush the output within the latency bound.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "tracemap.h"
#include "tracemap-tool.h"
#include "cmd-stream.h"

#define DRAIN_NS		(300 * 1000000ULL)	/* final drain after the stop */
#define BUSY_CHECK_EVERY	256			/* busy-poll: rounds per signal check */
#define ROUND_GAP_NS		200000			/* at most 5000 rounds a second */

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

bool stop_requested(int sfd)
{
	struct signalfd_siginfo si;

	return read(sfd, &si, sizeof(si)) == sizeof(si);
}

int stream_loop(struct tracemap_stream *s, struct printer *p, int sfd, bool busy,
		int latency_ms)
{
	uint64_t max_ns = (uint64_t)latency_ms * 1000000;
	struct epoll_event e, evs[2];
	struct output *o = p->out;
	uint64_t now, last_round = 0;
	unsigned int rounds = 0;
	int ep, ret, n, i;
	bool stop = false;

	if (busy) {
		while (!stop) {
			ret = tracemap_stream_consume(s);
			if (ret == -EPIPE || p->stop)
				return 0;
			if (ret < 0)
				goto fail;
			if (out_due(o, max_ns))
				return 0;
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
	while (!stop) {
		/*
		 * Wake-up moderation: at most one round every ROUND_GAP_NS. A
		 * trickle of events (watermark 0) would otherwise cost a
		 * wake-up and a GET_READER per CPU for every event or two.
		 */
		now = now_ns();
		if (now - last_round < ROUND_GAP_NS) {
			struct timespec ts = { .tv_nsec = ROUND_GAP_NS - (now - last_round) };

			nanosleep(&ts, NULL);
		}
		n = epoll_wait(ep, evs, 2, out_timeout(o, max_ns));
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && out_due(o, max_ns))
			stop = true;
		if (n < 0) {
			ret = -errno;
			close(ep);
			goto fail;
		}
		for (i = 0; i < n; i++) {
			if (evs[i].data.fd == sfd) {
				/* taken off the signalfd: only a second signal cuts the stop short */
				stop_requested(sfd);
				stop = true;
				continue;
			}
			last_round = now_ns();
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
	return 0;
fail:
	tool_err("reading the ring buffers failed: %s", strerror(-ret));
	return -1;
}

void stream_final_drain(struct tracemap_stream *s, struct output *o)
{
	uint64_t end = now_ns() + DRAIN_NS;
	int ret;

	/* after a failed write nothing more is taken from the buffers */
	while (!o->err) {
		ret = tracemap_stream_consume(s);
		if (ret <= 0 || now_ns() >= end)
			break;
	}
	out_flush(o);
}
