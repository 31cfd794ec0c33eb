/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * libtracemap: live reader of the ftrace ring buffer through the memory
 * mapping of per_cpu/cpuN/trace_pipe_raw (Linux >= 6.10).
 *
 * Conventions (see Documentation/libtracemap.txt):
 *  - functions returning int return >= 0 on success and -errno on failure,
 *    with errno set to the same value;
 *  - functions returning a pointer return NULL with errno set on failure;
 *  - destructors accept NULL.
 */
#ifndef _TRACEMAP_H
#define _TRACEMAP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef TRACEMAP_API
#define TRACEMAP_API __attribute__((visibility("default")))
#endif

struct tep_record;

/*
 * Declare the options struct @NAME of type struct @TYPE, zeroed whole
 * (padding included), with .sz set and the fields given, as libbpf's
 * LIBBPF_OPTS: a newer libtracemap reads fields an older caller never set
 * as zero.
 *	TRACEMAP_OPTS(tracemap_dump_opts, opts, .cpumask = "3");
 *	dump = tracemap_dump_take("myinstance", &opts);
 */
#define TRACEMAP_OPTS(TYPE, NAME, ...)						\
	struct TYPE NAME = ({							\
		memset(&NAME, 0, sizeof(struct TYPE));				\
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ };	\
	})

/* ----------------------------------------------------------------------
 * Messages
 */
enum tracemap_log_level {
	TRACEMAP_LOG_ERROR = 0,
	TRACEMAP_LOG_WARN,
	TRACEMAP_LOG_INFO,
	TRACEMAP_LOG_DEBUG,
};

/* ctx first, like every callback of the library */
typedef void (*tracemap_print_fn)(void *ctx, enum tracemap_log_level level,
				  const char *msg);

/*
 * Replace the message sink. fn == NULL restores the default, which writes
 * errors and warnings to stderr and drops the rest.
 */
TRACEMAP_API void tracemap_set_print(tracemap_print_fn fn, void *ctx);

/*
 * The last error or warning message the library gave in this thread ("" when
 * none since tracemap_clear_error()), whatever the sink: for a front-end
 * that quotes it in its own output or exception.
 */
TRACEMAP_API const char *tracemap_last_error(void);
TRACEMAP_API void tracemap_clear_error(void);

/* CLOCK_MONOTONIC in nanoseconds: the clock of the library's timeouts */
TRACEMAP_API uint64_t tracemap_now_ns(void);

/* ----------------------------------------------------------------------
 * tracefs
 */

/*
 * Which buffer. The instance argument of tracemap_stream_open(),
 * tracemap_cpu_open(), tracemap_dump_take(), tracemap_events_enable() and
 * tracemap_instance_dir() is the name of a directory under instances/, or
 * TRACEMAP_TOP_LEVEL for the top-level buffer that every tracer shares.
 * NULL asks tracemap_stream_open() for a private instance, which it creates
 * and removes at close; the others refuse NULL (EINVAL), as a new instance
 * holds nothing to read. "", ".", ".." and names with a '/' are refused
 * (EINVAL). Binaries linked against TRACEMAP_0.1 keep NULL and "" as the
 * top level (Documentation/libtracemap.txt, ABI).
 */
#define TRACEMAP_TOP_LEVEL		"/"

/* Find the tracefs mount (or check @dir); 0 or -ENOENT after a message. */
TRACEMAP_API int tracemap_tracefs_dir(const char *dir, char *buf, size_t size);
/* Check @instance (a name, TRACEMAP_TOP_LEVEL) and find its directory; 0, -EINVAL, -ENODEV */
TRACEMAP_API int tracemap_instance_dir(const char *tracefs, const char *instance, char *buf,
				       size_t size);
/* The page size events/header_page gives trace-cmd and libtraceevent. */
TRACEMAP_API int tracemap_header_subbuf_size(const char *tracefs_dir);

/* ----------------------------------------------------------------------
 * Per-CPU reader
 */
enum tracemap_mode {
	/* trace_pipe semantics: each event once, removed from the buffer */
	TRACEMAP_MODE_CONSUME = 0,
	/* trace semantics: what is in the buffer now, nothing removed */
	TRACEMAP_MODE_SNAPSHOT,
	/* what is in the buffer now, then every new event; nothing removed */
	TRACEMAP_MODE_FOLLOW,
};

enum tracemap_backend {
	TRACEMAP_BACKEND_MMAP = 0,	/* mapping + TRACE_MMAP_IOCTL_GET_READER */
	TRACEMAP_BACKEND_READ,		/* read() of trace_pipe_raw (consume only) */
};

/* tracemap_cpu_opts.flags */
#define TRACEMAP_CPU_FORCE_READ		(1u << 0) /* use read() even if mapping works */
#define TRACEMAP_CPU_NO_FALLBACK	(1u << 1) /* fail instead of falling back to read() */

struct tracemap_cpu_opts {
	size_t sz;			/* sizeof(struct tracemap_cpu_opts) */
	enum tracemap_mode mode;
	unsigned int flags;		/* TRACEMAP_CPU_* */
	const char *tracefs_dir;	/* NULL: find the tracefs mount */
};

struct tracemap_cpu;

/*
 * Open the reader of @cpu in @instance (a name, or TRACEMAP_TOP_LEVEL).
 * Errors: EINVAL no instance (NULL) or an invalid name, ENOENT tracefs not
 * mounted, ENODEV unknown instance, ENXIO CPU absent or never online,
 * EACCES/EPERM no permission, EBUSY mapping refused
 * (snapshot armed) with TRACEMAP_CPU_NO_FALLBACK, EOPNOTSUPP the kernel cannot
 * map and the mode needs the mapping, EPROTO meta page layout not understood.
 */
TRACEMAP_API struct tracemap_cpu *
tracemap_cpu_open(const char *instance, int cpu, const struct tracemap_cpu_opts *opts);
TRACEMAP_API void tracemap_cpu_close(struct tracemap_cpu *c);

TRACEMAP_API int tracemap_cpu_fd(const struct tracemap_cpu *c);
TRACEMAP_API int tracemap_cpu_id(const struct tracemap_cpu *c);
TRACEMAP_API enum tracemap_backend tracemap_cpu_backend(const struct tracemap_cpu *c);
TRACEMAP_API enum tracemap_mode tracemap_cpu_mode(const struct tracemap_cpu *c);
TRACEMAP_API int tracemap_cpu_subbuf_size(const struct tracemap_cpu *c);
TRACEMAP_API int tracemap_cpu_nr_subbufs(const struct tracemap_cpu *c);

/* A value of tracemap_region.lost / tracemap_event.missed: events were lost, count unknown */
#define TRACEMAP_LOST_UNKNOWN		(-1LL)

/*
 * A new region of one sub-buffer, borrowed from the mapping (or from the
 * reader's private copy): valid until the next call on the same reader.
 * data + start .. data + end are complete event records whose timestamps
 * are deltas from base_ts.
 *
 * tracemap_region and tracemap_event are allocated by the caller and
 * filled by the library, so they never grow: a field appended would be
 * written past the end of an older caller's struct. What a later version
 * has to add comes with new functions (or a new struct that starts with a
 * size, like the options and tracemap_cpu_stats), and these two stay as
 * they are.
 */
struct tracemap_region {
	const void *subbuf;		/* the sub-buffer: u64 ts, long commit, data */
	const unsigned char *data;	/* first data byte of the sub-buffer */
	uint64_t page_ts;		/* time stamp in the sub-buffer header */
	uint64_t base_ts;		/* time the first record at start is relative to */
	long long lost;			/* events lost just before: 0, n or TRACEMAP_LOST_UNKNOWN */
	unsigned int subbuf_size;	/* full size including the header */
	unsigned int start;		/* offset of the first new record in data */
	unsigned int end;		/* offset just past the last new record */
	unsigned int id;		/* sub-buffer id in the mapping (read backend: a counter) */
	unsigned int flags;		/* TRACEMAP_REGION_* */
	int cpu;
};

/* tracemap_region.flags */
#define TRACEMAP_REGION_COMPLETE	(1u << 0) /* nothing more will be added to this sub-buffer */

/* Returns 1 and fills @r, 0 when nothing is new, or -errno. */
TRACEMAP_API int tracemap_cpu_read_region(struct tracemap_cpu *c, struct tracemap_region *r);

struct tracemap_event {
	uint64_t ts;			/* trace clock time */
	const void *data;		/* payload: struct trace_entry first */
	long long missed;		/* lost just before this event: 0, n or TRACEMAP_LOST_UNKNOWN */
	unsigned int size;		/* payload bytes */
	unsigned int offset;		/* record offset in the sub-buffer data */
	int cpu;
};

/*
 * Next event in this CPU's order. Returns 1, 0 when nothing is new, or
 * -errno (-EBADMSG: a corrupt record; the rest of its region is skipped and
 * counted, the next call continues). The payload is borrowed like a region.
 */
TRACEMAP_API int tracemap_cpu_next_event(struct tracemap_cpu *c, struct tracemap_event *ev);

/* Events/regions are valid until the next call that may advance the reader. */
TRACEMAP_API void tracemap_event_to_record(const struct tracemap_event *ev, struct tep_record *rec);

/* tracemap_cpu_read_page() flags */
#define TRACEMAP_PAGE_FLUSH		(1u << 0) /* also hand out a partial page */

/*
 * Whole, self-contained sub-buffers as trace-cmd writes them to trace.dat:
 * fills @buf (@size >= subbuf size) and returns the sub-buffer size, 0 when
 * no complete page is ready (or nothing at all with TRACEMAP_PAGE_FLUSH), or
 * -errno. Lost events are carried in the commit flags (and count when there is
 * room). A page is complete once the kernel moved past it.
 */
TRACEMAP_API int tracemap_cpu_read_page(struct tracemap_cpu *c, void *buf, size_t size,
					unsigned int flags);

/* tracemap_cpu_wait() results */
#define TRACEMAP_WAIT_DATA		1 /* the reader may have data: read it */
#define TRACEMAP_WAIT_EXTRA		2 /* the caller's other descriptor is readable */

/*
 * Wait for @c's descriptor or @extra_fd (-1: none) up to @timeout_ms (-1: no
 * limit), with the library's empty-wakeup back-off. Returns TRACEMAP_WAIT_*,
 * 0 on timeout or -errno.
 */
TRACEMAP_API int tracemap_cpu_wait(struct tracemap_cpu *c, int extra_fd, int timeout_ms);

/* CLOCK_MONOTONIC ns at which the oldest held-back partial page started, 0 if none */
TRACEMAP_API uint64_t tracemap_cpu_pending_since(const struct tracemap_cpu *c);

/* Drop any partially read region and held page; a snapshot reader rescans. */
TRACEMAP_API int tracemap_cpu_rewind(struct tracemap_cpu *c);

struct tracemap_cpu_stats {
	uint64_t events;		/* events delivered by tracemap_cpu_next_event() */
	uint64_t bytes;			/* record bytes of the regions delivered */
	uint64_t lost;			/* events reported lost, known counts */
	uint64_t lost_unknown;		/* gaps reported without a count */
	uint64_t corrupt;		/* regions or region tails skipped as corrupt */
	uint64_t pages;			/* regions delivered */
	uint64_t get_reader;		/* TRACE_MMAP_IOCTL_GET_READER calls */
	uint64_t reads;			/* read() calls (read backend) */
	uint64_t wakeups;		/* waits of a stream that returned with data */
	uint64_t kernel_entries;	/* meta page: events written since the last reset */
	uint64_t kernel_overrun;	/* meta page: events overwritten since the last reset */
	uint64_t kernel_read;		/* meta page: events consumed since the last reset */
	uint64_t late;			/* time-ordered streams: delivered after a newer event */
	uint64_t stolen;		/* events another consumer took from this CPU buffer */
	uint64_t own;			/* events a stream left out as its own or caused (NO_SELF) */
	uint64_t gaps_possible;		/* snapshot, follow: gaps reported that may hide no loss */
	uint64_t held;			/* taken from the kernel, not delivered yet */
	uint64_t skipped;		/* read backend: events the kernel stepped past and
					 * still counts unread (in lost too) */
	uint64_t ring_scans;		/* consuming mapping: looks at every sub-buffer for
					 * new data before a GET_READER */
	uint64_t helper;		/* events a stream enabled only for NO_SELF's check
					 * (sched_waking), left out; not in own */
	uint64_t cleared;		/* resets of the buffer seen while reading (echo >
					 * trace, trace_clock): each a gap in lost_unknown */
};

/*
 * Copies min(@sz, sizeof) bytes of the statistics. The kernel_* fields come
 * from the meta page, for the read() backend from per_cpu/cpuN/stats.
 * Returns 0 or -errno.
 */
TRACEMAP_API int tracemap_cpu_stats(const struct tracemap_cpu *c, struct tracemap_cpu_stats *st,
				    size_t sz);
/*
 * kernel_entries - kernel_overrun - kernel_read - skipped: events not handed
 * out yet (0 if negative)
 */
TRACEMAP_API uint64_t tracemap_cpu_stats_unread(const struct tracemap_cpu_stats *st);

/* ----------------------------------------------------------------------
 * Sub-buffer helpers (work on any buffer, mapped or copied)
 */

/*
 * Write the records [start, end) of @r as a self-contained sub-buffer into
 * @dst (@size >= r->subbuf_size): header time = r->base_ts, lost events as
 * commit flags, zero padding. Returns the sub-buffer size or -errno.
 */
TRACEMAP_API int tracemap_region_write_subbuf(const struct tracemap_region *r, void *dst,
					      size_t size);

/* ----------------------------------------------------------------------
 * Multi-CPU stream of one instance
 */

/* Returning < 0 stops the delivery; the value is returned by poll/consume unchanged. */
typedef int (*tracemap_event_fn)(void *ctx, const struct tracemap_event *ev);
/* @lost: a count or TRACEMAP_LOST_UNKNOWN; called before the event it precedes */
typedef int (*tracemap_lost_fn)(void *ctx, int cpu, long long lost);
/*
 * Called just before the stream turns on an event that was off (@name:
 * "system:event"), also one it adds itself (sched_waking, to follow what its
 * output causes), so that a program can write down what to put back should
 * it be killed before it can. Nonzero: the open fails, nothing left changed.
 */
typedef int (*tracemap_enable_fn)(void *ctx, const char *name);

/* tracemap_stream_opts.flags */
#define TRACEMAP_STREAM_UNORDERED	(1u << 0) /* fill-priority draining, no time merge */
#define TRACEMAP_STREAM_BUSY_POLL	(1u << 1) /* no call sleeps: the caller spins on consume */
/* leave out the events of this process's threads and sched events naming them */
#define TRACEMAP_STREAM_NO_SELF		(1u << 2)
/* wake for every event (buffer_percent 0): sub-millisecond latency, more CPU */
#define TRACEMAP_STREAM_LOW_LATENCY	(1u << 3)
/* with pids: their children too (options/event-fork) */
#define TRACEMAP_STREAM_PID_FORKS	(1u << 4)
/* load the event formats in open, before the events are enabled (not on first use) */
#define TRACEMAP_STREAM_DECODE		(1u << 5)
/* a named instance that does not exist is created, and removed at close */
#define TRACEMAP_STREAM_CREATE		(1u << 6)

/* An event selection, as trace-cmd's -e and -f take it. */
struct tracemap_event_spec {
	const char *name;		/* "system:event", "system", "event" or "all"; shell globs */
	const char *filter;		/* NULL, or a filter as events/<system>/<event>/filter takes */
};

struct tracemap_tracer_opts;

struct tracemap_stream_opts {
	size_t sz;			/* sizeof(struct tracemap_stream_opts) */
	enum tracemap_mode mode;	/* CONSUME or FOLLOW (SNAPSHOT: what is there, once) */
	unsigned int flags;		/* TRACEMAP_STREAM_* */
	unsigned int cpu_flags;		/* TRACEMAP_CPU_*, for every CPU */
	const char *cpumask;		/* hex mask as in tracing_cpumask; NULL: online CPUs */
	int watermark;			/* buffer_percent while open; 0: default; < 0: leave it */
	int latency_ms;			/* deliver below the watermark within this; <= 0: 100 */
	tracemap_event_fn on_event;
	tracemap_lost_fn on_lost;
	void *ctx;
	const char *tracefs_dir;	/* NULL: find the tracefs mount */
	const struct tracemap_event_spec *events; /* enabled on open, restored on close */
	int nr_events;
	const int *pids;		/* only these tasks (set_event_pid); restored on close */
	int nr_pids;
	tracemap_enable_fn on_enable;	/* NULL: not told; called with ctx */
	unsigned long buffer_size_kb;	/* per-CPU buffer_size_kb while open; 0: leave it */
	const char *clock;		/* trace_clock while open; NULL: leave it */
	/* current_tracer and its filters while open (before any reader); NULL: leave it */
	const struct tracemap_tracer_opts *tracer;
};

struct tracemap_stream;

/*
 * @instance: NULL for a private instance (tracemap-<pid>-<n>, created here
 * and removed at close), a name, or TRACEMAP_TOP_LEVEL.
 */
TRACEMAP_API struct tracemap_stream *
tracemap_stream_open(const char *instance, const struct tracemap_stream_opts *opts);
/* 0, or -errno when something it set up could not be put back (said why) */
TRACEMAP_API int tracemap_stream_close(struct tracemap_stream *s);
/*
 * The instance the stream reads (TRACEMAP_TOP_LEVEL for the top level), owned
 * by @s; *@created (when not NULL) is 1 when the stream made it and removes it
 * at close. NULL + errno EINVAL for a NULL stream.
 */
TRACEMAP_API const char *tracemap_stream_instance(const struct tracemap_stream *s, int *created);

/* Wait up to @timeout_ms (-1: forever) for data, deliver it. Returns events delivered or < 0. */
TRACEMAP_API int tracemap_stream_poll(struct tracemap_stream *s, int timeout_ms);
/* Deliver what is there without sleeping. Returns events delivered or < 0. */
TRACEMAP_API int tracemap_stream_consume(struct tracemap_stream *s);
/* Readable when tracemap_stream_consume() has something to do. */
TRACEMAP_API int tracemap_stream_epoll_fd(const struct tracemap_stream *s);
/* Pull model: the next event in order, waiting up to @timeout_ms. Returns 1, 0 or -errno. */
TRACEMAP_API int tracemap_stream_next_event(struct tracemap_stream *s, struct tracemap_event *ev,
					    int timeout_ms);

TRACEMAP_API int tracemap_stream_nr_cpus(const struct tracemap_stream *s);
/* Put back the events, filters and pids the stream set up, before a final drain. 0 or -errno. */
TRACEMAP_API int tracemap_stream_restore_events(struct tracemap_stream *s);
/* Events the stream enabled (opts.events), as "system:event"; NULL-terminated, owned by @s */
TRACEMAP_API const char *const *tracemap_stream_events(const struct tracemap_stream *s);

/*
 * Events on in an instance without a stream (a recorder that waits for a
 * signal, a viewer): the selection, filters and put-back of opts.events.
 * NULL + errno after a message; tracemap_events_restore() puts back and frees.
 */
struct tracemap_events;
TRACEMAP_API struct tracemap_events *
tracemap_events_enable(const char *instance, const struct tracemap_event_spec *specs, int nr_specs,
		       const char *tracefs_dir);
TRACEMAP_API void tracemap_events_restore(struct tracemap_events *ev);
/*
 * The tracer of an instance and its function filters, as trace-cmd record
 * sets them, until tracemap_tracer_restore() puts back what was there.
 */

/* tracemap_tracer_opts.flags */
#define TRACEMAP_TRACER_FUNC_STACK	(1u << 0) /* options/func_stack_trace (--func-stack) */

struct tracemap_tracer_opts {
	size_t sz;			/* sizeof(struct tracemap_tracer_opts) */
	unsigned int flags;		/* TRACEMAP_TRACER_* */
	const char *tracer;		/* current_tracer: "function", "function_graph" (-p) */
	const char *const *filter;	/* set_ftrace_filter: names or globs, NULL-ended (-l) */
	const char *const *notrace;	/* set_ftrace_notrace (-n) */
	const char *const *graph;	/* set_graph_function (-g) */
	const char *tracefs_dir;	/* NULL: find the tracefs mount */
};

struct tracemap_tracer;

/*
 * Set them in @instance (a name, TRACEMAP_TOP_LEVEL); NULL + errno after a message,
 * nothing changed (EPERM: the kernel forbids the function tracers).
 */
TRACEMAP_API struct tracemap_tracer *
tracemap_tracer_set(const char *instance, const struct tracemap_tracer_opts *opts);
/* Put back the tracer, options and filters, and free; 0 or -errno. */
TRACEMAP_API int tracemap_tracer_restore(struct tracemap_tracer *t);


/*
 * An instance this process sets up without a stream (a flight recorder, a
 * viewer), with the crash record of tracemap_stream_open(): NULL for a
 * private one (<prefix>-<pid>-<n>), a name (made when missing with
 * TRACEMAP_INSTANCE_CREATE), or TRACEMAP_TOP_LEVEL. Its buffer size, clock,
 * tracer and the files of tracemap_instance_set() are put back (a made one
 * removed) by tracemap_instance_close(), or by tracemap reset after a kill.
 */

/* tracemap_instance_opts.flags */
#define TRACEMAP_INSTANCE_CREATE	(1u << 0) /* a missing named instance is made, removed at close */

struct tracemap_instance_opts {
	size_t sz;			/* sizeof(struct tracemap_instance_opts) */
	unsigned int flags;		/* TRACEMAP_INSTANCE_* */
	const char *prefix;		/* of a private instance's name; NULL: "tracemap" */
	unsigned long buffer_size_kb;	/* per-CPU buffer_size_kb while open; 0: leave it */
	const char *clock;		/* trace_clock while open; NULL: leave it */
	const struct tracemap_tracer_opts *tracer; /* the tracer while open; NULL: leave it */
	const char *tracefs_dir;	/* NULL: find the tracefs mount */
};

struct tracemap_instance;

/* NULL + errno after a message, nothing left changed */
TRACEMAP_API struct tracemap_instance *
tracemap_instance_open(const char *instance, const struct tracemap_instance_opts *opts);
/* Its name (TRACEMAP_TOP_LEVEL for the top level), owned by @ti; *@created: made here */
TRACEMAP_API const char *tracemap_instance_name(const struct tracemap_instance *ti, int *created);
/* Write @value to @file of the instance (its old value recorded first); 0 or -errno */
TRACEMAP_API int tracemap_instance_set(struct tracemap_instance *ti, const char *file,
				       const char *value);
/* Put everything back (remove a made instance) and free; 0 or -errno */
TRACEMAP_API int tracemap_instance_close(struct tracemap_instance *ti);

/*
 * What a process changed in tracefs through the library (an instance it
 * created, events, filters, pid lists, buffer_percent, buffer_size_kb,
 * trace_clock) is written down before the change, in
 * $TRACEMAP_STATE_DIR (default /run/tracemap), and the record removed once
 * all is back. tracemap_state_repair() puts back what the records of
 * processes that ended without closing (SIGKILL, a crash) name, and says
 * what it did through the print callback (TRACEMAP_LOG_WARN);
 * tracemap_stream_open() and tracemap_events_enable() call it first.
 * With TRACEMAP_STATE_CHECK it only says what is left and how to put it back.
 * Returns the number of such records, or -errno when one could not be put
 * back (said why; its record stays for another try).
 */
#define TRACEMAP_STATE_CHECK		(1u << 0)
TRACEMAP_API int tracemap_state_repair(unsigned int flags);
/* The reader of the @idx-th CPU of the stream (0 <= idx < nr_cpus) */
TRACEMAP_API struct tracemap_cpu *tracemap_stream_cpu(const struct tracemap_stream *s, int idx);

/* ----------------------------------------------------------------------
 * Dumps: a non-consuming copy of the whole buffer, written as trace.dat
 */

/*
 * tracemap_dump_opts.flags: write an instance's buffer as the file's
 * top-level buffer, without a buffer name (trace-cmd report then prints no
 * instance prefix, KernelShark opens one stream instead of an empty top-level
 * one plus the instance)
 */
#define TRACEMAP_DUMP_AS_TOP		(1u << 0)
/*
 * tracemap_dump_opts.flags: leave the file's kallsyms empty, for a reader
 * that names kernel functions itself (a view that reopens a file on every
 * refresh would parse megabytes of them each time)
 */
#define TRACEMAP_DUMP_NO_KALLSYMS	(1u << 1)

/* no tail padding: a field appended later must not read an older caller's padding */
struct tracemap_dump_opts {
	size_t sz;			/* sizeof(struct tracemap_dump_opts) */
	unsigned int flags;		/* TRACEMAP_DUMP_* */
	const char *tracefs_dir;	/* NULL: find the tracefs mount */
	const char *cpumask;		/* hex mask as in tracing_cpumask; NULL: online CPUs */
};

struct tracemap_dump_cpu_stats {
	uint64_t events;		/* events in the dump */
	uint64_t bytes;			/* event record bytes in the dump */
	uint64_t pages;			/* sub-buffers in the dump */
	uint64_t first_ts;		/* oldest event (trace clock); 0 without events */
	uint64_t last_ts;		/* newest event */
	uint64_t lost;			/* events marked lost in the dump (known counts); with
					   nothing consumed, the overrun before the first page */
	uint64_t lost_gaps;		/* places marked lost without a count: pages the
					   writer recycled during the copy */
	uint64_t overrun;		/* kernel: events overwritten since the last reset */
	uint64_t copy_ns;		/* CLOCK_MONOTONIC time the copy took */
	int cpu;			/* the CPU, or -1 for the sums over all CPUs */
};

struct tracemap_dump;

/*
 * Copy the buffer of every CPU of @instance (a name, or TRACEMAP_TOP_LEVEL)
 * without consuming anything: pages the writer recycles while they are
 * copied are dropped and marked lost. The saved command lines and the
 * trace clock are read with it.
 */
TRACEMAP_API struct tracemap_dump *
tracemap_dump_take(const char *instance, const struct tracemap_dump_opts *opts);

/*
 * The buffer @prev was taken of, copied again: the sub-buffers @prev holds
 * unchanged are not copied or counted again. @prev is freed in every case.
 */
TRACEMAP_API struct tracemap_dump *tracemap_dump_retake(struct tracemap_dump *prev);

/*
 * Write the dump to @fd as a trace.dat file (version 6, uncompressed): the
 * formats of the ftrace events, of the events in the pages and of the
 * enabled ones, kallsyms, printk formats and command lines, then the pages.
 * The formats, kallsyms and printk formats are read again only when
 * /proc/modules or dynamic_events changed since the previous call.
 * Returns 0 or -errno.
 */
TRACEMAP_API int tracemap_dump_write(struct tracemap_dump *d, int fd);

/*
 * The same trace written over what the regular file @fd holds, from offset
 * 0, the file never shortened (sparse past the image): a view that replaces
 * one image on every refresh keeps the file's storage, and pages the file
 * holds from its last rewrite of the same buffer are not written again
 * (each CPU's pages lie where the CPU table says). Nobody may read the old
 * image any more.
 * Returns 0 or -errno.
 */
TRACEMAP_API int tracemap_dump_rewrite(struct tracemap_dump *d, int fd);

TRACEMAP_API void tracemap_dump_free(struct tracemap_dump *d);

/* CPUs in the dump; the @idx-th CPU's number (0 <= idx < nr_cpus) */
TRACEMAP_API int tracemap_dump_nr_cpus(const struct tracemap_dump *d);
TRACEMAP_API int tracemap_dump_cpu(const struct tracemap_dump *d, int idx);

/*
 * Statistics of CPU @cpu (a CPU number in the dump), or of the whole dump
 * when @cpu is -1. Copies min(@sz, sizeof) bytes. Returns 0, -ENOENT when
 * @cpu is not in the dump, or -EINVAL.
 */
TRACEMAP_API int tracemap_dump_stats(const struct tracemap_dump *d, int cpu,
				     struct tracemap_dump_cpu_stats *st, size_t sz);

/* ----------------------------------------------------------------------
 * Text formatter: the lines of 'trace-cmd report', byte-identical to
 * libtraceevent's tep_print_event(), compiled per event type
 */
struct tep_handle;

/* tracemap_format_opts.flags */
#define TRACEMAP_FORMAT_NO_COMPILE	(1u << 0) /* format every event with tep_print_event() */
/* funcgraph_entry/exit as trace-cmd report's function_graph; lines in order, see _flush() */
#define TRACEMAP_FORMAT_FGRAPH		(1u << 1)

struct tracemap_format_opts {
	size_t sz;			/* sizeof(struct tracemap_format_opts) */
	unsigned int flags;		/* TRACEMAP_FORMAT_* */
	const char *clock;		/* trace_clock of the events; NULL: "local" */
};

struct tracemap_format_stats {
	uint64_t events;		/* events formatted */
	uint64_t fallback_events;	/* of those, through tep_print_event() */
	uint64_t clamped;		/* lengths or indexes the program kept inside the record */
	unsigned int types_compiled;	/* event types compiled */
	unsigned int types_fallback;	/* event types left to tep_print_event() */
};

struct tracemap_format;

TRACEMAP_API struct tracemap_format *
tracemap_format_new(struct tep_handle *tep, const struct tracemap_format_opts *opts);
TRACEMAP_API void tracemap_format_free(struct tracemap_format *f);
/* "comm-pid [cpu] time: name: info\n"; *out is owned by @f until its next call */
TRACEMAP_API int tracemap_format_line(struct tracemap_format *f, const struct tracemap_event *ev,
				      const char **out);
/* TRACEMAP_FORMAT_FGRAPH: the line of a funcgraph_entry still held ("" when none) */
TRACEMAP_API int tracemap_format_flush(struct tracemap_format *f, const char **out);
/* the info part only, as tep_print_event(..., "%s", TEP_PRINT_INFO) */
TRACEMAP_API int tracemap_format_info(struct tracemap_format *f, const struct tracemap_event *ev,
				      const char **out);
TRACEMAP_API int tracemap_format_stats(const struct tracemap_format *f,
				       struct tracemap_format_stats *st, size_t sz);
/* NULL when @type is compiled, else why it is left to libtraceevent */
TRACEMAP_API const char *tracemap_format_fallback(struct tracemap_format *f, int type);
/* after the caller changed the tep's task or function names itself (tep_register_comm(), ...) */
TRACEMAP_API int tracemap_format_forget_names(struct tracemap_format *f);

/* ----------------------------------------------------------------------
 * Decoding the events of a stream (the formats are loaded once, when first needed)
 */

/* The stream's event formats and saved cmdlines (libtraceevent), owned by @s; NULL + errno */
TRACEMAP_API struct tep_handle *tracemap_stream_tep(struct tracemap_stream *s);

/* The event's system ("sched") and name ("sched_switch"); NULL + errno when unknown */
TRACEMAP_API const char *tracemap_event_system(struct tracemap_stream *s,
					       const struct tracemap_event *ev);
TRACEMAP_API const char *tracemap_event_name(struct tracemap_stream *s,
					     const struct tracemap_event *ev);
/* common_pid: the task that wrote the event (0: idle or interrupt), or -errno */
TRACEMAP_API int tracemap_event_pid(struct tracemap_stream *s, const struct tracemap_event *ev);
/* The name of that task: saved_cmdlines, else /proc; "<...>" when unknown; NULL + errno */
TRACEMAP_API const char *tracemap_event_comm(struct tracemap_stream *s,
					     const struct tracemap_event *ev);
/* A number field, sign-extended when signed. Returns 0 or -errno (ENOENT: no such field). */
TRACEMAP_API int tracemap_event_field_num(struct tracemap_stream *s,
					  const struct tracemap_event *ev, const char *field,
					  long long *val);
/* A string field (char array or __string), borrowed from the event; NULL + errno */
TRACEMAP_API const char *tracemap_event_field_str(struct tracemap_stream *s,
						  const struct tracemap_event *ev,
						  const char *field);
/* An array field (fixed or dynamic): its bytes, borrowed, and their count; NULL + errno */
TRACEMAP_API const void *tracemap_event_field_array(struct tracemap_stream *s,
						    const struct tracemap_event *ev,
						    const char *field, unsigned int *size);

#ifdef __cplusplus
}
#endif

#endif /* _TRACEMAP_H */
