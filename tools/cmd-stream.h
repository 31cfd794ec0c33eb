/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tracemap stream, by concern:
 *   stream-instance.c the instance: -B checked, what the library made said
 *   stream-command.c  the traced command (a trailing command, -F)
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

#include "tracemap.h"

struct tracefs_instance;
struct tracemap_event;
struct tracemap_stream;

/* ---------------------------------------------- stream-instance.c */

/* The buffer a stream reads, as the library made or found it. */
struct stream_inst {
	struct tracefs_instance *inst;	/* NULL: the top-level buffer */
	char *name;			/* NULL: the top-level buffer */
	bool created;			/* the library made it (private, or -B of a missing one) */
	bool announce;			/* say so when it is made and removed (-B) */
};

/* -B's name (NULL: none), checked before anything is made; -1 after a message. */
int instance_check(struct stream_inst *si, const char *name);
/* The instance stream @s reads: said when -B made it; -1 after a message. */
int instance_opened(struct stream_inst *si, const char *tfs, struct tracemap_stream *s);
/* After the stream closed: said when a made -B is gone; frees. */
void instance_closed(struct stream_inst *si, const char *tfs);

/* ----------------------------------------------- stream-command.c */

/*
 * A command to trace: forked now, held before its exec until
 * command_start(), so that its pid can be given to the stream first.
 * Returns the pid, or -1 after a message.
 */
int command_fork(char **argv);
/* Let it exec; -1 after a message when it could not be run. */
int command_start(const char *name);
/* A command that was never started exits without running; one that runs is left alone. */
void command_abort(void);
/*
 * Whether the command has ended, without reaping it; other children that
 * ended (a stream exec'd by a shell inherits its children) are reaped.
 */
bool command_exited(void);
/* Whether the command has ended (reaping it); its exit status in *@status. */
bool command_ended(int *status);

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
	uint64_t deadline;	/* tracemap_now_ns() after which a wait for room gives up; 0: none */
	uint64_t held_since;	/* when the oldest buffered byte came */
	bool interrupted;	/* a stop request was read while waiting for room */
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

struct printer {
	struct tracemap_stream *stream;	/* owns the event formats */
	struct tep_handle *tep;
	struct tep_plugin_list *plugins;
	struct tracemap_format *fmt;	/* the lines of trace-cmd report */
	int comm_pid;			/* the task of the last event ... */
	bool comm_known;		/* ... whose name the library knows */
	unsigned int since_check;	/* events since the last look at the signalfd */
	uint64_t until;			/* final drain: stop delivering at this tracemap_now_ns() */
	int sfd;
	bool stop;			/* a signal arrived during a round */
	bool raw;
	uint64_t held_since;		/* tracemap_now_ns() of a funcgraph_entry held; 0: none */
	struct output *out;
};

/* Zero @p: what the callbacks need before printer_attach(); lines go to @out. */
void printer_init(struct printer *p, bool raw, struct output *out);
/* The stream's event formats and the time column of @inst (unless raw); -1 after a message. */
int printer_attach(struct printer *p, struct tracemap_stream *s, struct tracefs_instance *inst);
/* Before the stream is closed: the plugins were loaded into its formats. */
void printer_free(struct printer *p);

/* The formatter's counts, after the per-CPU statistics */
void printer_print_stats(const struct printer *p);

/* on_event/on_lost callbacks of the stream; the context is the struct printer. */
int printer_on_event(void *ctx, const struct tracemap_event *ev);
int printer_on_lost(void *ctx, int cpu, long long lost);

/*
 * A funcgraph_entry the formatter holds until the next event: its line now
 * (flush), once it waited @hold_ns (idle), and the milliseconds until then
 * (-1: none held). -1 once the output has ended, else 0.
 */
int printer_flush_held(struct printer *p);
int printer_idle(struct printer *p, uint64_t hold_ns);
int printer_hold_timeout(const struct printer *p, uint64_t hold_ns);

/* -------------------------------------------------- stream-loop.c */


/*
 * Whether a stop is waiting on the signalfd @sfd (and read it): a stop
 * signal, or SIGCHLD of the traced command while streaming. Another
 * child's SIGCHLD is read and ignored, and once the stop is under way
 * (stop_begun()) only a signal counts, not the command's end.
 */
bool stop_requested(int sfd);
/* The stop is under way: the traced command ending is no second signal. */
void stop_begun(void);
/* A stop request came after the one that began the stop (a second Ctrl-C). */
bool stop_cut_short(void);

/*
 * Consume @s until a signal on @sfd, a closed output or an error; 0 when
 * stopped, -1 after a message. Output to a file or pipe is written at
 * least every @latency_ms, and after every round with @round_flush (the
 * rounds are that far apart already: the buffers are read at that pace).
 */
int stream_loop(struct tracemap_stream *s, struct printer *p, int sfd, bool busy,
		int latency_ms, bool round_flush);

/*
 * After the stop: deliver what is still in the buffers for at most
 * DRAIN_READ_MS and write it within DRAIN_WRITE_MS of @stop_ns (tracemap_now_ns() when
 * the stop was noticed); a second signal on p->sfd ends both at once.
 * Returns true when it was cut short (deadline or signal) rather than finding
 * the buffers empty.
 */
bool stream_final_drain(struct tracemap_stream *s, struct printer *p, uint64_t stop_ns);

#endif /* _TRACEMAP_CMD_STREAM_H */
