/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Private tracefs instances for the tests and the benchmarks: unique names,
 * removed by ti_instance_remove() or, whatever happens, at exit and on the
 * signals that end the program. No cmocka: the benchmarks link it too.
 */
#ifndef _TRACEMAP_TRACEFS_INSTANCE_H
#define _TRACEMAP_TRACEFS_INSTANCE_H

#include <stddef.h>

/* Instances one program may hold at a time */
#define TI_MAX_INSTANCES	16

/* tracefs mount point with a writable instances/ directory, or NULL */
const char *ti_tracefs(void);

/* "<tracefs>/instances/<name>/<file>" */
void ti_path(char *buf, size_t size, const char *name, const char *file);

/*
 * Create instance "tmtest-<tag>-<pid>-<n>" with @buffer_kb per CPU (0: keep
 * the default) and @subbuf_kb sub-buffers (0: keep). Removed by
 * ti_instance_remove() or, whatever happens, at exit and on SIGINT, SIGTERM,
 * SIGHUP and every signal given to ti_remove_on_signal(). Returns the name
 * (static storage per instance slot), or NULL with errno set and the reason
 * printed to stderr (EPERM: the kernel refuses another sub-buffer size).
 */
const char *ti_instance_create(const char *tag, int buffer_kb, int subbuf_kb);
/*
 * Remove an instance made by ti_instance_create(); retries for up to 2 s
 * while rmdir is EBUSY (a reader still holds a file or mapping).
 */
void ti_instance_remove(const char *name);

/* Remove the instances on @sig too (e.g. SIGSEGV), then die of it */
void ti_remove_on_signal(int sig);
/*
 * Run @fn first when a signal removes the instances (e.g. kill the children
 * that hold them open). Called in the signal handler: async-signal-safe only.
 */
void ti_on_signal(void (*fn)(void));

/* Write @val to <instance>/<file>; 0, or -errno (-EIO for a short write) with errno set */
int ti_instance_write(const char *name, const char *file, const char *val);
/* Read <instance>/<file> into a malloc'ed string; NULL with errno set on error */
char *ti_instance_read(const char *name, const char *file);

#endif
