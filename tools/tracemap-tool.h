/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * The tracemap command: shared between its subcommands.
 */
#ifndef _TRACEMAP_TOOL_H
#define _TRACEMAP_TOOL_H

#include <stdbool.h>
#include <stddef.h>

struct tracefs_instance;

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

/* Route libtracemap's messages through tool_err(); debug ones when @verbose. */
void tool_set_lib_print(bool verbose);

int cmd_stream(int argc, char **argv);
int cmd_stat(int argc, char **argv);

#endif /* _TRACEMAP_TOOL_H */
