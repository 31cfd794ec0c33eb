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

/* Where tracefs is mounted (asked of the library once), or NULL after a message. */
const char *tool_tracefs(void);

/*
 * The directory of the instance named by -B (NULL: the top-level buffer)
 * into @idir; -1 after the library's message when it does not exist.
 */
int tool_instance_dir(const char *name, char *idir, size_t size);

/* Route libtracemap's messages through tool_err(); debug ones when @verbose. */
void tool_set_lib_print(bool verbose);

/*
 * state.c: what a stream changes, written down first (one file per stream
 * in $TRACEMAP_STATE_DIR, default /run/tracemap) so that a later run can put
 * back what a killed one left. -1 after a message.
 */
int state_begin(const char *tfs, const char *instance, bool private);
/* Add a line (buffer_percent=V, event=SYS:EV) and sync; NULL @key: sync only. */
int state_note(const char *key, const char *value);
/* The stream put everything back: remove its file. */
void state_end(void);
/*
 * Files of streams that ended without putting things back: with @act put
 * back what they name (and say so), else say to run 'tracemap reset'.
 * Returns how many were found; @failed (may be NULL) counts those that could
 * not be put back.
 */
int state_repair(bool act, int *failed);

int cmd_stream(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_reset(int argc, char **argv);

#endif /* _TRACEMAP_TOOL_H */
