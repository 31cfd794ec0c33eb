/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * tracemap stream, by concern:
 *   stream-events.c  -e resolution, enabling the events and putting them back
 *   stream-print.c   the text printer (trace-cmd report's columns, or --raw)
 *   stream-loop.c    the wait/consume loop, output flushing, the final drain
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

/* Enable every event of @set in @inst, noting what was already on; -1 after a message. */
int events_enable(struct tracefs_instance *inst, struct ev_set *set);

/* Put back every event events_enable() turned on; safe to call twice. */
void events_restore(struct tracefs_instance *inst, struct ev_set *set);

void events_free(struct ev_set *set);

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
};

/* Load the event formats of @tfs (unless @raw); -1 after a message. */
int printer_init(struct printer *p, const char *tfs, struct tracefs_instance *inst, bool raw);
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

/* Deliver what is still in the buffers after the stop, for a bounded time. */
void stream_final_drain(struct tracemap_stream *s);

#endif /* _TRACEMAP_CMD_STREAM_H */
