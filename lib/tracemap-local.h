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

/* CPU numbers a cpumask may name */
#define TM_MAX_CPUS		8192

/*
 * set[cpu] for each CPU of the hex @mask (tracing_cpumask syntax), or for
 * every online CPU when @mask is NULL. Returns how many (> 0), or -errno
 * after a message.
 */
int tm_select_cpus(const char *mask, const char *idir, bool *set, int max);

int tm_read_file(const char *path, char *buf, size_t size);
int tm_write_file(const char *path, const char *val);

uint64_t tm_now_ns(void);

/*
 * Memory for copies of whole rings: anonymous pages, huge where the kernel
 * allows, so that the first write into a fresh copy takes a fault per 2 MiB
 * instead of per 4 KiB (the faults, not memcpy, dominate a fresh copy).
 * Free with the same size.
 */
void *tm_pages_alloc(size_t size);
void tm_pages_free(void *p, size_t size);

/* ------------------------------------------------------------ trace.dat */

struct tm_tracedat_cpu {
	const unsigned char *pages;	/* nr_pages self-contained sub-buffers */
	size_t nr_pages;
	int cpu;
};

/* What a trace.dat holds besides what tracefs and /proc give at write time. */
struct tm_tracedat {
	const char *tracefs;
	const char *instance;		/* NULL: the top-level buffer */
	const char *clock;		/* "local", ... */
	const char *cmdlines;		/* saved_cmdlines contents */
	size_t cmdlines_len;
	unsigned int page_size;		/* the sub-buffer size */
	const struct tm_tracedat_cpu *cpus;
	int nr;				/* entries of cpus, CPU numbers ascending */
};

/* The one trace.dat writer: version 6, uncompressed, to @fd (a file or a pipe). */
int tm_tracedat_write(int fd, const struct tm_tracedat *t);

/* ------------------------------------------------------------ per-CPU */

/* Streams count their wakeups here so that one stats call reports everything. */
void tm_cpu_count_wakeup(struct tracemap_cpu *c);
void tm_cpu_count_late(struct tracemap_cpu *c);
/* Regions handed out so far: a stream sees from it whether a call fetched new data. */
uint64_t tm_cpu_regions(const struct tracemap_cpu *c);
/* The sub-buffer id of the region tracemap_cpu_next_event() walks (read backend: a counter). */
unsigned int tm_cpu_region_id(const struct tracemap_cpu *c);
/*
 * The kernel's overrun and read-events counters from per_cpu/cpuN/stats,
 * current even where the meta page is not (it changes only at GET_READER).
 */
int tm_cpu_kernel_counters(const struct tracemap_cpu *c, uint64_t *overrun, uint64_t *nread);
/* tracemap_cpu_next_event() still has bytes of its current region to walk: no call into the kernel. */
bool tm_cpu_region_left(const struct tracemap_cpu *c);

#endif /* _TRACEMAP_LOCAL_H */
