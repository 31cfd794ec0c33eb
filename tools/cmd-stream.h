/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * tracemap stream, by concern:
 *   stream-events.c  -e resolution, enabling the events and putting them back
 *   stream-print.c   the text printer (trace-cmd report's columns, or --raw)
 *   stream-loop.c    the wait/consume loop, output flushing, the final drain
 *   stream-out.c     the output: buffered write(2), write errors, events not written
 *   cmd-stream.c     options, setup and teardown in order, statistics
 */
#ifndef _TRACEMAP_CMD_STREAM_H
#define _TRACEMAP_CMD_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include <event-parse.h>

struct tracefs_instance;
struct tracemap_event;
struct tracemap_stream;

/* ------------------------------------------------ stream-events.c */

/* One event the stream enables, and what to put back. */
struct ev_item {
	char *system;
	char *event;
	bool was_enabled;
	bool enabled;		/* we enabled it (and restore it) */
};

struct sys_item {
	char *system;
	bool whole;		/* every event of the system was asked for */
};

/* The events of the -e options, resolved against tracefs. */
struct ev_set {
	struct ev_item *evs;
	struct sys_item *sys;
	int nr_evs;
	int nr_sys;
};

/*
 * Resolve the -e @specs against the event lists of @tfs into @set; 0, or -1
 * after a message naming the spec that matched nothing.
 */
int events_resolve(const char *tfs, char **specs, int nr_specs, struct ev_set *set);

/*
 * Enable every event of @set in @inst, noting what was already on; -1 after
 * a message. @note (may be NULL) is called with ("event", "SYS:EV") for each
 * event before it is turned on, and a failure of it stops the enabling.
 */
int events_enable(struct tracefs_instance *inst, struct ev_set *set,
		  int (*note)(const char *key, const char *value));

/* Put back every event events_enable() turned on; safe to call twice. */
void events_restore(struct tracefs_instance *inst, struct ev_set *set);

void events_free(struct ev_set *set);

/* --------------------------------------------------- stream-out.c */

struct output {
	int fd;
	int sfd;		/* signalfd: cuts a wait for room short; -1: none */
	char *buf;
	size_t len;
	size_t cap;
	size_t chunk;		/* bytes per write(): what poll() promises for a pipe */
	uint32_t *ends;		/* end offset in buf of each buffered event */
	size_t nev;
	size_t evcap;
	int err;		/* why the output ended: EPIPE (closed), ETIME, EINTR, or an error */
	uint64_t unwritten;	/* events consumed but not written */
	uint64_t deadline;	/* now_ns() after which a wait for room gives up; 0: none */
	uint64_t held_since;	/* when the oldest buffered byte came */
	bool interrupted;	/* a signal came while waiting for room */
	bool eager;		/* a terminal: written at once */
};

/* Buffer of @cap bytes for @fd; -1 after a message. */
int out_init(struct output *o, int fd, size_t cap);
void out_free(struct output *o);
/* Append @len bytes (one event's line when @event); -1 once the output has ended. */
int out_put(struct output *o, const void *data, size_t len, bool event);
/* Write everything buffered; -1 when the output ended (o->err says why). */
int out_flush(struct output *o);
/* Flush when the oldest byte is @max_ns old (a terminal: at once); -1 as out_flush(). */
int out_due(struct output *o, uint64_t max_ns);
/* Milliseconds until out_due() would flush, -1 when nothing is held. */
int out_timeout(const struct output *o, uint64_t max_ns);
/* The output ended with an error to report (not a closed pipe, deadline or signal). */
bool out_failed(const struct output *o);
/* Say why the output ended and how many events were not written, if any were. */
void out_report(const struct output *o);

/* ------------------------------------------------- stream-print.c */

#define NR_GONE		64

struct printer {
	struct tep_handle *tep;
	struct tep_event *exec_event;
	struct tep_plugin_list *plugins;
	struct trace_seq seq;
	const char *tfmt;	/* time column, as trace-cmd report picks it */
	const char *tracefs;
	uint64_t cmdline_reload;
	int gone[NR_GONE];	/* pids without a /proc entry, most recent */
	unsigned int next_gone;
	unsigned int since_check;	/* events since the last look at the signalfd */
	int sfd;
	bool stop;			/* a signal arrived during a round */
	bool raw;
	struct output *out;
	bool signalled;			/* ... and it was read from the signalfd */
	uint64_t until;			/* final drain: no event after this now_ns(); 0: none */
};

/* Load the event formats of @tfs (unless @raw), print to @out; -1 after a message. */
int printer_init(struct printer *p, const char *tfs, struct tracefs_instance *inst, bool raw,
		 struct output *out);
void printer_free(struct printer *p);

/* The time column for @inst's trace_clock, as trace-cmd report picks it. */
const char *printer_time_format(struct tracefs_instance *inst);

/* on_event/on_lost callbacks of the stream; the context is the struct printer. */
int printer_on_event(void *ctx, const struct tracemap_event *ev);
int printer_on_lost(void *ctx, int cpu, long long lost);

/* -------------------------------------------------- stream-loop.c */

uint64_t now_ns(void);

/* Whether a signal is waiting on the signalfd @sfd (and read it). */
bool stop_requested(int sfd);

/*
 * Consume @s until a signal on @sfd, a closed output or an error; 0 when
 * stopped, -1 after a message.
 */
int stream_loop(struct tracemap_stream *s, struct printer *p, int sfd, bool busy,
		int latency_ms);

/*
 * After the stop: deliver what is still in the buffers for at most
 * DRAIN_READ_MS and write it within DRAIN_WRITE_MS of @stop_ns; a second
 * signal on p->sfd ends both at once. Returns true when it was cut short
 * (deadline or signal) rather than finding the buffers empty.
 */
bool stream_final_drain(struct tracemap_stream *s, struct printer *p, uint64_t stop_ns);

#endif /* _TRACEMAP_CMD_STREAM_H */
