/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * libtracemap internals shared between its source files. Everything here is
 * hidden (-fvisibility=hidden) and prefixed tm_.
 */
#ifndef _TRACEMAP_LOCAL_H
#define _TRACEMAP_LOCAL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "tracemap.h"
#include "uapi/trace_mmap.h"

/* ---------------------------------------------------------------- errors */

/* Set errno and return its negation: the library's one error exit. */
static inline int tm_err(int e)
{
	errno = e;
	return -e;
}

void tm_log(enum tracemap_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The one copy of a caller's options struct (first field size_t sz): at
 * least @min bytes are needed, min(sz, @size) are copied into @dst (which
 * holds the defaults), and bytes past what this version knows must be zero.
 * Returns 0, or -EINVAL / -E2BIG with a message naming @what.
 */
int tm_opts_copy(void *dst, size_t size, const void *src, size_t min, const char *what);

/* ------------------------------------------------------ sub-buffer format */

/*
 * A sub-buffer: u64 time_stamp, long commit (8 bytes on the 64-bit kernels
 * this library reads), then data. Only the low 32 bits of commit are
 * meaningful: the kernel adds the int flags below to a long, so a flagged
 * commit reads 0xffffffffc0000xxx.
 */
#define TM_SUBBUF_HDR		16
#define TM_MISSED_EVENTS	(1u << 31)
#define TM_MISSED_STORED	(1u << 30)
#define TM_COMMIT_SIZE(c)	((uint32_t)(c) & ((1u << 30) - 1))

#define TM_TYPE_PADDING		29
#define TM_TYPE_TIME_EXTEND	30
#define TM_TYPE_TIME_STAMP	31
#define TM_TS_SHIFT		27
#define TM_TS_MSB		(0x1fULL << 59)

/* One data record found by tm_walk_next(). */
struct tm_rec {
	uint64_t ts;
	const unsigned char *payload;
	unsigned int size;		/* payload bytes */
	unsigned int off;		/* record offset in the data area */
};

/*
 * The one sub-buffer parser: walks the records of data[off, end) keeping the
 * running time stamp. Every length read from the data is bounded by end.
 */
struct tm_walk {
	const unsigned char *data;
	unsigned int off;
	unsigned int end;
	uint64_t ts;
};

/* Returns 1 with the next data record, 0 at end, -EBADMSG on a corrupt record. */
int tm_walk_next(struct tm_walk *w, struct tm_rec *rec);

/* Walk to @to without delivering; returns 0 or -EBADMSG. */
int tm_walk_skip(struct tm_walk *w, unsigned int to);

/* Count of events lost before this sub-buffer, from its commit word and data. */
long long tm_subbuf_lost(const void *subbuf, unsigned int subbuf_size);

/*
 * The one place that writes pages: records data[start, end) as a
 * self-contained sub-buffer of subbuf_size bytes at dst.
 */
int tm_subbuf_write(void *dst, unsigned int subbuf_size, const unsigned char *data,
		    unsigned int start, unsigned int end, uint64_t base_ts, long long lost);

/* Copy a sub-buffer the writer may recycle; 0 when consistent, -EAGAIN when torn. */
int tm_subbuf_copy(void *dst, const void *src, unsigned int subbuf_size, uint64_t *ts,
		   unsigned int *size);

/* ---------------------------------------------------------------- tracefs */

/* Resolve the tracefs mount (@dir may be NULL); writes it to buf. */
int tm_tracefs_dir(const char *dir, char *buf, size_t size);
/* "<tracefs>[/instances/<name>]" with ENODEV and a message when unknown */
int tm_instance_dir(const char *tracefs, const char *instance, char *buf, size_t size);

int tm_read_file(const char *path, char *buf, size_t size);
int tm_write_file(const char *path, const char *val);

uint64_t tm_now_ns(void);

/* ------------------------------------------------------------ per-CPU */

/* Streams count their wakeups here so that one stats call reports everything. */
void tm_cpu_count_wakeup(struct tracemap_cpu *c);
void tm_cpu_count_late(struct tracemap_cpu *c);
/* Regions handed out so far: a stream sees from it whether a call fetched new data. */
uint64_t tm_cpu_regions(const struct tracemap_cpu *c);
/* The sub-buffer id of the region tracemap_cpu_next_event() walks (read backend: a counter). */
unsigned int tm_cpu_region_id(const struct tracemap_cpu *c);
/* tracemap_cpu_next_event() still has bytes of its current region to walk: no call into the kernel. */
bool tm_cpu_region_left(const struct tracemap_cpu *c);

#endif /* _TRACEMAP_LOCAL_H */
