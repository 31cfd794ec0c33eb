/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * Shared helpers of the C tests: private tracefs instances that are removed
 * even when a test fails or is killed, marker writers, CPU pinning.
 */
#ifndef _TRACEMAP_TEST_HARNESS_H
#define _TRACEMAP_TEST_HARNESS_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#define TEST_SKIP	77

/* tracefs mount point, or NULL (then kernel tests skip) */
const char *th_tracefs(void);

/*
 * Exit 77 with the reason unless this kernel can map trace_pipe_raw in a
 * fresh instance. Call first in every kernel test program.
 */
void th_require_mmap(void);

/*
 * Create instance "tmtest-<tag>-<pid>-<n>" with @buffer_kb per CPU (0: keep
 * the default) and @subbuf_kb sub-buffers (0: keep). Removed by
 * th_instance_remove() or, whatever happens, at exit or on a fatal signal.
 * Returns the name (static storage per instance slot).
 */
const char *th_instance_create(const char *tag, int buffer_kb, int subbuf_kb);
void th_instance_remove(const char *name);

/* Write @val to <instance>/<file>; returns 0 or -errno. */
int th_instance_write(const char *name, const char *file, const char *val);
/* Read <instance>/<file> into a malloc'ed string; NULL on error. */
char *th_instance_read(const char *name, const char *file);

/* Pin the calling thread to @cpu. */
void th_pin(int cpu);

/* Open <instance>/trace_marker (or trace_marker_raw when raw) for writing. */
int th_marker_open(const char *name, int raw);
/* Write "seq=<n> cpu=<cpu>" markers first..first+count-1; returns 0 or -errno. */
int th_write_markers(int fd, unsigned int first, unsigned int count);

/* Parse "seq=N" from a decoded ftrace:print payload; -1 if none. */
long th_marker_seq(const void *payload, unsigned int size);

#endif
