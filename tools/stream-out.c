// SPDX-License-Identifier: GPL-2.0-only
/*
 * tracemap stream: the output. Lines are collected in a buffer and written
 * with write(2), remembering which events each unwritten byte belongs to,
 * so that a write that fails says which events it lost. A closed pipe
 * (EPIPE) ends the stream quietly; any other error (a full disk, EIO,
 * EFBIG) ends it with the cause, and every event consumed but not written
 * is counted. Waiting for room in a pipe or terminal can be cut short by a
 * signal (the signalfd) or a deadline (the final drain).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracemap-tool.h"
#include "cmd-stream.h"

int out_init(struct output *o, int fd, size_t cap)
{
	struct stat st;

	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->sfd = -1;
	o->cap = cap;
	o->buf = malloc(cap);
	o->evcap = 1024;
	o->ends = malloc(o->evcap * sizeof(*o->ends));
	if (!o->buf || !o->ends) {
		tool_err("out of memory for the output buffer");
		out_free(o);
		return -1;
	}
	/* a pipe, socket or terminal: write what poll() promised room for */
	o->chunk = cap;
	if (!fstat(fd, &st) && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		o->chunk = 4096;
	o->eager = isatty(fd);
	return 0;
}

void out_free(struct output *o)
{
	free(o->buf);
	free(o->ends);
	o->buf = NULL;
	o->ends = NULL;
}

/* The first @done bytes went out: drop them and the events they complete. */
static void consumed(struct output *o, size_t done)
{
	size_t i = 0;

	while (i < o->nev && o->ends[i] <= done)
		i++;
	memmove(o->ends, o->ends + i, (o->nev - i) * sizeof(*o->ends));
	o->nev -= i;
	for (i = 0; i < o->nev; i++)
		o->ends[i] -= done;
	memmove(o->buf, o->buf + done, o->len - done);
	o->len -= done;
}

/* The output failed or was given up: what is buffered is lost. */
static int give_up(struct output *o, int err)
{
	if (!o->err)
		o->err = err;
	o->unwritten += o->nev;
	o->nev = 0;
	o->len = 0;
	return -1;
}

/* Wait for room: 1 ready, 0 deadline passed, -1 a signal or poll failed. */
static int wait_room(struct output *o)
{
	struct pollfd p[2] = {
		{ .fd = o->fd, .events = POLLOUT },
		{ .fd = o->sfd, .events = POLLIN },
	};
	int timeout = -1, ret;
	uint64_t now;

	for (;;) {
		if (o->deadline) {
			now = tracemap_now_ns();
			timeout = now >= o->deadline ? 0 :
				  (int)((o->deadline - now + 999999) / 1000000);
		}
		ret = poll(p, o->sfd >= 0 ? 2 : 1, timeout);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			return -1;
		/* a signal that came before the deadline wins over it; a SIGCHLD of
		 * another child is read and ignored */
		if (ret > 0 && p[1].revents && stop_requested(o->sfd)) {
			o->interrupted = true;
			return -1;
		}
		if (o->deadline && tracemap_now_ns() >= o->deadline)
			return 0;
		if (ret > 0 && p[0].revents)
			return 1;
	}
}

int out_flush(struct output *o)
{
	size_t done = 0, n;
	ssize_t w;
	int ret;

	if (o->err)
		return give_up(o, o->err);
	while (done < o->len) {
		ret = wait_room(o);
		if (ret <= 0)
			break;
		n = o->len - done < o->chunk ? o->len - done : o->chunk;
		w = write(o->fd, o->buf + done, n);
		if (w < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (w < 0) {
			consumed(o, done);
			return give_up(o, errno);
		}
		done += w;
	}
	consumed(o, done);
	if (o->len) {
		/* a signal while streaming: keep it all for the final drain */
		if (o->interrupted && !o->deadline)
			return -1;
		/* a signal during the final drain, or its deadline: the rest is lost */
		return give_up(o, o->interrupted ? EINTR : ETIME);
	}
	o->held_since = 0;
	return 0;
}

/* Add @len bytes, growing the buffer past cap when it must; -1 out of memory. */
static int append(struct output *o, const void *data, size_t len, bool event)
{
	if (len > o->cap - o->len) {
		char *b = realloc(o->buf, o->len + len);

		if (!b)
			return -1;
		o->buf = b;
		o->cap = o->len + len;
	}
	if (event && o->nev == o->evcap) {
		uint32_t *e = realloc(o->ends, 2 * o->evcap * sizeof(*e));

		if (!e)
			return -1;
		o->ends = e;
		o->evcap *= 2;
	}
	memcpy(o->buf + o->len, data, len);
	o->len += len;
	if (event)
		o->ends[o->nev++] = o->len;
	if (!o->held_since)
		o->held_since = tracemap_now_ns();
	return 0;
}

int out_put(struct output *o, const void *data, size_t len, bool event)
{
	if (o->err) {
		o->unwritten += event;
		return -1;
	}
	if (len > o->cap - o->len && out_flush(o)) {
		if (o->err) {
			o->unwritten += event;
			return -1;
		}
		/* interrupted by the stop: hold this one too, the final drain writes it */
		if (append(o, data, len, event))
			return give_up(o, ENOMEM);
		return -1;
	}
	if (len > o->cap - o->len) {
		o->unwritten += event;
		return give_up(o, EMSGSIZE);
	}
	if (append(o, data, len, event)) {
		o->unwritten += event;
		return give_up(o, ENOMEM);
	}
	return 0;
}

int out_due(struct output *o, uint64_t max_ns)
{
	if (!o->len)
		return 0;
	if (!o->eager && tracemap_now_ns() - o->held_since < max_ns)
		return 0;
	return out_flush(o);
}

int out_timeout(const struct output *o, uint64_t max_ns)
{
	uint64_t due, now;

	if (!o->len || o->eager)
		return o->len ? 0 : -1;
	due = o->held_since + max_ns;
	now = tracemap_now_ns();
	return now >= due ? 0 : (int)((due - now + 999999) / 1000000);
}

bool out_failed(const struct output *o)
{
	return o->err && o->err != EPIPE && o->err != ETIME && o->err != EINTR;
}

void out_report(const struct output *o)
{
	if (out_failed(o))
		tool_err("writing the output failed: %s; %llu events read from the buffers were "
			 "not written (lost)", strerror(o->err), (unsigned long long)o->unwritten);
	else if (o->unwritten && o->err != EPIPE)
		tool_err("%llu events read from the buffers were not written before the %s "
			 "(lost)", (unsigned long long)o->unwritten,
			 o->err == EINTR ? "second signal" : "stop deadline");
}
