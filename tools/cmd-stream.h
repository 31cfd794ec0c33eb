/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * tracemap stream, by concern:
 *   stream-instance.c the instance: private, -B (made when missing), -b, -C
 *   stream-command.c  the traced command (a trailing command, -F)
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

/* ---------------------------------------------- stream-instance.c */

/* The buffer a stream reads, and what tracemap changed in it to put back. */
struct stream_inst {
	struct tracefs_instance *inst;	/* NULL: the top-level buffer */
	const char *name;		/* NULL: the top-level buffer */
	bool created;			/* we made it (private, or -B of a missing one) */
	bool announce;			/* say so when it is made and removed (-B) */
	char *old_clock;		/* trace_clock to put back, or NULL */
	long old_size_kb;		/* buffer_size_kb to put back, or -1 */
};

/*
 * Open the instance of -B (creating it when missing), a private one when
 * @name is NULL and @top is false, or the top level; -1 after a message.
 */
int instance_setup(struct stream_inst *si, const char *tfs, const char *name, bool top);
/* -C and -b: set them, noting what to put back; -1 after a message. */
int instance_set_clock(struct stream_inst *si, const char *clock);
int instance_set_buffer_kb(struct stream_inst *si, long kb);
/* Put back the clock and buffer size, remove the instance if we made it. */
void instance_restore(struct stream_inst *si);

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
/* Whether the command has ended (reaping it); its exit status in *@status. */
bool command_ended(int *status);

/* ------------------------------------------------- stream-print.c */

struct printer {
	struct tracemap_stream *stream;	/* owns the event formats */
	struct tep_handle *tep;
	struct tep_plugin_list *plugins;
	struct trace_seq seq;
	const char *tfmt;	/* time column, as trace-cmd report picks it */
	unsigned int since_check;	/* events since the last look at the signalfd */
	uint64_t until;			/* final drain: stop delivering at this now_ns() */
	int sfd;
	bool stop;			/* a signal arrived during a round */
	bool raw;
};

/* Zero @p: what the callbacks need before printer_attach(). */
void printer_init(struct printer *p, bool raw);
/* The stream's event formats and the time column of @inst (unless raw); -1 after a message. */
int printer_attach(struct printer *p, struct tracemap_stream *s, struct tracefs_instance *inst);
/* Before the stream is closed: the plugins were loaded into its formats. */
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
 * Deliver what is still in the buffers after the stop, until DRAIN_NS after
 * @stopped (now_ns() when the stop was noticed: putting the events back
 * under load takes part of that time, not more).
 */
void stream_final_drain(struct tracemap_stream *s, struct printer *p, uint64_t stopped);

#endif /* _TRACEMAP_CMD_STREAM_H */
