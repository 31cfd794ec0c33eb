/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The tracemap command: shared between its subcommands.
 */
#ifndef _TRACEMAP_TOOL_H
#define _TRACEMAP_TOOL_H

#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct tracefs_instance;
struct tracemap_instance;
struct tracemap_tracer_opts;
struct tracemap_event_spec;
struct tool_tracer;

/* Print "tracemap: <msg>" to stderr. */
void tool_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The usage text of tracemap(1), to @to. */
void tool_usage(FILE *to);
/* "tracemap VERSION" to stdout */
void tool_version(void);

/* Where tracefs is mounted (asked of the library once), or NULL after a message. */
const char *tool_tracefs(void);

/*
 * The directory of the instance named by -B (NULL: the top-level buffer)
 * into @idir; -1 after the library's message when it does not exist.
 */
int tool_instance_dir(const char *name, char *idir, size_t size);

/*
 * The instance -B named (@name, checked with tool_instance_dir()), or
 * without -B a private one the library makes, "<prefix>-<pid>-<n>" (then
 * *@private is true), with buffer_size_kb @kb (0: left) and @tracer (NULL:
 * none) while open, each change in the library's crash record;
 * *@iname is its name. NULL after the library's message.
 */
struct tracemap_instance *tool_instance_open(const char *tfs, const char *name,
					     const char *prefix, int kb,
					     const struct tracemap_tracer_opts *tracer,
					     const char **iname, bool *private);

/* @arg as an int in [@min, @max] into *@val; -1 after a message naming @opt. */
int tool_parse_int(const char *opt, const char *arg, int min, int max, int *val);

/*
 * The message for getopt's '?': an unknown option, or one without its
 * argument (the short ones of @with_arg, the long ones with values
 * @long_min..@long_max). Always -1.
 */
int tool_opt_error(char **argv, const char *with_arg, int long_min, int long_max);

/*
 * After the options of a command that reads one buffer: no operands left,
 * and not both -B @iname and --top. -1 after a message.
 */
int tool_end_args(int argc, char **argv, const char *iname, bool top);

/*
 * For the commands that need the mapping (Linux 6.10): -1 when this kernel
 * cannot map instance @iname, the library's message (it names the kernel
 * needed) printed; 0 otherwise, other errors left to the command.
 */
int tool_check_mappable(const char *iname);

/* Warn when instance @iname (NULL: the top level) has tracing_on 0: nothing new is recorded. */
void tool_warn_tracing_off(const char *tfs, const char *iname);

/* A number option of a command, taken by tool_getopt(): getopt value, name, range, where */
struct tool_int_opt {
	int val;
	const char *name;	/* "--latency-ms" */
	int min;
	int max;
	int *dst;
};

/*
 * The options of one buffer that several commands share, spelled as
 * trace-cmd spells them: -B instance, --top, -M cpumask, -e event (into
 * @specs, which the caller gives room for every argument) with -f filter
 * for the -e before it, -b KiB per CPU; and when @tracer is set, -p, -l,
 * -n, -g and --func-stack into it, and the numbers of @ints (ended by a
 * zero val).
 */
struct tool_buffer {
	const char *instance;	/* -B */
	const char *cpumask;	/* -M */
	struct tracemap_event_spec *specs;	/* -e, each with the -f after it */
	int nr_specs;
	int buffer_kb;		/* -b; 0: leave as it is */
	bool top;		/* --top */
	struct tool_tracer *tracer;	/* NULL: -p and the rest are the command's */
	const struct tool_int_opt *ints;	/* NULL: none */
};

/*
 * Take getopt_long()'s option @c with @arg when it is one of those ('t' is
 * --top; a command lists only those it takes): 1 when taken, 0 when it is
 * not one of them, -1 after a message.
 */
int tool_buffer_opt(int c, const char *arg, struct tool_buffer *b);

/*
 * getopt_long() that takes the buffer options in @opts itself (into @b): the
 * next other option, -1 at the end, or '!' after a message about a bad value.
 */
int tool_getopt(int argc, char **argv, const char *opts, const struct option *longopts,
		struct tool_buffer *b);

/*
 * trace-cmd record's tracer options (tracer.c): -p tracer, -l, -n, -g
 * function (repeatable, globs) and --func-stack (getopt value
 * TOOL_OPT_FUNC_STACK).
 */
#define TOOL_OPT_FUNC_STACK	0x7f00

struct tool_tracer {
	const char *tracer;	/* -p; NULL: none */
	const char **filter;	/* -l, NULL-ended */
	const char **notrace;	/* -n */
	const char **graph;	/* -g */
	int nr_filter;
	int nr_notrace;
	int nr_graph;
	bool func_stack;	/* --func-stack */
};

/* Take option @c with @arg when it is one of those: 1 taken, 0 not one, -1 after a message. */
int tool_tracer_opt(int c, const char *arg, struct tool_tracer *t);
/* After the options: filters only with a tracer; -1 after a message. */
int tool_tracer_check(const struct tool_tracer *t);
/* As the library takes them (@o filled), or NULL without -p */
const struct tracemap_tracer_opts *tool_tracer_opts(const struct tool_tracer *t, const char *tfs,
						    struct tracemap_tracer_opts *o);
void tool_tracer_free(struct tool_tracer *t);

/*
 * Block SIGINT, SIGTERM, SIGHUP, SIGCHLD (and SIGUSR1 with @usr1) into @sigs,
 * to be read through a signalfd, so that setup and restore are never cut
 * short; a closed output is an error, not SIGPIPE.
 */
void tool_hold_signals(sigset_t *sigs, bool usr1);

/* Route libtracemap's messages through tool_err(); debug ones when @verbose. */
void tool_set_lib_print(bool verbose);

/*
 * out-file.c: the one place that decides where a dump may be written.
 * TOOL_OUT_NEW and _REGULAR are written to a new file beside the name and
 * renamed onto it on success; _DIRECT ("-", a FIFO, a terminal) is written
 * as it is; _DIR only where the caller allows a directory.
 */
enum { TOOL_OUT_NEW, TOOL_OUT_REGULAR, TOOL_OUT_DIRECT, TOOL_OUT_DIR };

struct tool_out {
	const char *path;
	char *tmp;		/* the file this run made, renamed onto @path; NULL: direct */
	int fd;
	int kind;
};

/*
 * What @path (given with option @opt) is as an output: one of TOOL_OUT_*, or
 * -1 after a message when it is refused (a symbolic link, a device node
 * that is not a terminal, a socket, a directory unless @dir_ok).
 */
int tool_out_kind(const char *path, const char *opt, bool dir_ok);
/* Open @path for writing through @f->fd; -1 after a message (nothing made). */
int tool_out_open(struct tool_out *f, const char *path, const char *opt);
/* Close and put the file in place; -1 after a message (a finished file is kept). */
int tool_out_commit(struct tool_out *f);
/* After a failed write: close, and remove only the file this run made. */
void tool_out_abort(struct tool_out *f);

/*
 * Copy the buffer of @instance (NULL: top level) on the CPUs of @cpumask,
 * write it as a trace.dat to @path ("-": standard output; see
 * tool_out_open() for what else may be written and how) and print the
 * one-line report to @to, after "@what: " when @what is not NULL;
 * @trigger_ns (CLOCK_MONOTONIC, 0: none) adds the time from the trigger to
 * the closed file. 0, or -1 after a message.
 */
int tool_dump(const char *instance, const char *cpumask, const char *path, uint64_t trigger_ns,
	      const char *what, FILE *to);

int cmd_stream(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_flight(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_reset(int argc, char **argv);

#endif /* _TRACEMAP_TOOL_H */
