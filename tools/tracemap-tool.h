/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * The tracemap command: shared between its subcommands.
 */
#ifndef _TRACEMAP_TOOL_H
#define _TRACEMAP_TOOL_H

#include <stdbool.h>

struct tracefs_instance;

/* Print "tracemap: <msg>" to stderr. */
void tool_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The usage text of tracemap(1), to @to. */
void tool_usage(FILE *to);

/*
 * Where tracefs is mounted, or NULL after a message (also when this user
 * cannot read it). Mounts tracefs when it is not, and says so.
 */
const char *tool_tracefs(void);
/* The same for commands that only look: refuses instead of mounting. */
const char *tool_tracefs_mounted(void);

/*
 * Check the instance named by -B (NULL: the top-level buffer) through the
 * library: a bad name, a missing instance or no permission is an error with
 * its message; @hint follows in a line of its own when the instance is missing.
 */
int tool_instance_check(const char *name, const char *hint);

/* Route libtracemap's messages through tool_err(); debug ones when @verbose. */
void tool_set_lib_print(bool verbose);

int cmd_stream(int argc, char **argv);
int cmd_stat(int argc, char **argv);

#endif /* _TRACEMAP_TOOL_H */
