/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * The tracemap command: shared between its subcommands.
 */
#ifndef _TRACEMAP_TOOL_H
#define _TRACEMAP_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct tracefs_instance;

/* Print "tracemap: <msg>" to stderr. */
void tool_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The usage text of tracemap(1), to @to. */
void tool_usage(FILE *to);

/* Where tracefs is mounted, or NULL after a message. */
const char *tool_tracefs(void);

/*
 * Check the instance named by -B (NULL: the top-level buffer): one that does
 * not exist is an error with a message; @hint is appended to it.
 */
int tool_instance_check(const char *name, const char *hint);

/* Route libtracemap's messages through tool_err(); debug ones when @verbose. */
void tool_set_lib_print(bool verbose);

/*
 * Copy the buffer of @instance (NULL: top level) on the CPUs of @cpumask,
 * write it as a trace.dat to @path ("-": standard output) and print the
 * one-line report to @to; @trigger_ns (CLOCK_MONOTONIC, 0: none) adds the
 * time from the trigger to the closed file. 0, or -1 after a message.
 */
int tool_dump(const char *instance, const char *cpumask, const char *path, uint64_t trigger_ns,
	      FILE *to);

int cmd_stream(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_flight(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_view(int argc, char **argv);

#endif /* _TRACEMAP_TOOL_H */
