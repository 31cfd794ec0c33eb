/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * libtracemap internals shared between its source files. Everything here is
 * hidden (-fvisibility=hidden) and prefixed tm_.
 */
#ifndef _TRACEMAP_LOCAL_H
#define _TRACEMAP_LOCAL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

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

/* ------------------------------------------------------------------ fork */

/*
 * The process this copy of the library runs in (tracefs.c): set at load
 * and again in every child fork() makes (pthread_atfork()), so that a
 * check costs a load, not a getpid() system call.
 */
extern int tm_cur_pid;

/* Whether an object opened by process @owner is used in a child of it */
static inline bool tm_in_child(int owner)
{
	return __builtin_expect(owner != tm_cur_pid, 0);
}

/*
 * The error of every call on @what (opened by @owner) in a forked child:
 * the mapping is not inherited (VM_DONTCOPY) and the instance's state is
 * the parent's. Says so once per object (*@told). Returns -EBADFD.
 */
int tm_child_refused(const char *what, int owner, bool *told);

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

/* tm_walk_next() past anything but a plain data record (subbuf.c) */
int tm_walk_next_slow(struct tm_walk *w, struct tm_rec *rec);

/*
 * Returns 1 with the next data record, 0 at end, -EBADMSG on a corrupt
 * record. Inline for the record that is most of every page (a data record
 * with its length in the header), everything else in tm_walk_next_slow().
 * The slow path fills a record of its own: the caller's never has its
 * address taken, so that the compiler keeps it in registers in a loop.
 */
static inline int tm_walk_next(struct tm_walk *w, struct tm_rec *rec)
{
	unsigned int left = w->end - w->off, type_len, len;
	struct tm_rec slow;
	uint32_t hdr;
	int ret;

	if (w->off < w->end && left >= 4) {
		memcpy(&hdr, w->data + w->off, sizeof(hdr));
		type_len = hdr & 31;
		len = type_len * 4;
		if (type_len >= 1 && type_len <= 28 && len <= left - 4) {
			w->ts += hdr >> 5;
			rec->ts = w->ts;
			rec->payload = w->data + w->off + 4;
			rec->size = len;
			rec->off = w->off;
			w->off += 4 + len;
			return 1;
		}
	}
	ret = tm_walk_next_slow(w, &slow);
	if (ret > 0)
		*rec = slow;
	return ret;
}

/* The record @rec of CPU @cpu as an event, @missed events lost before it. */
static inline void tm_event_from_rec(struct tracemap_event *ev, const struct tm_rec *rec, int cpu,
				     long long missed)
{
	ev->ts = rec->ts;
	ev->data = rec->payload;
	ev->size = rec->size;
	ev->offset = rec->off;
	ev->cpu = cpu;
	ev->missed = missed;
}

/* Walk to @to without delivering; returns 0 or -EBADMSG. */
int tm_walk_skip(struct tm_walk *w, unsigned int to);

/*
 * What a dump counts of the records it holds, gathered while the snapshot
 * walks each region anyway (tm_walk_tally()) rather than in a walk of its own.
 */
struct tm_tally {
	uint64_t events;
	uint64_t bytes;			/* payload bytes */
	uint64_t first_ts;		/* of the first record counted */
	uint64_t last_ts;
	unsigned char *ids;		/* bitmap of TM_EVENT_IDS: common_type, the payload's first u16 */
	/* or NULL; else the distinct ids, max_few of them (nr_few > max_few: more) */
	uint16_t *few;
	unsigned int nr_few;
	unsigned int max_few;
};

/* tm_walk_skip() that also counts the records it passes in @t (NULL: nothing counted). */
int tm_walk_tally(struct tm_walk *w, unsigned int to, struct tm_tally *t);

/* Count of events lost before this sub-buffer, from its commit word and data. */
long long tm_subbuf_lost(const void *subbuf, unsigned int subbuf_size);
/* Lost counts added up (cpu.c): an unknown count, or a sum past LLONG_MAX, is unknown */
long long tm_lost_add(long long a, long long b);

/*
 * The one place that writes pages: records data[start, end) as a
 * self-contained sub-buffer of subbuf_size bytes at dst.
 */
int tm_subbuf_write(void *dst, unsigned int subbuf_size, const unsigned char *data,
		    unsigned int start, unsigned int end, uint64_t base_ts, long long lost);

/* Copy a sub-buffer the writer may recycle; 0 when consistent, -EAGAIN when torn. */
int tm_subbuf_copy(void *dst, const void *src, unsigned int subbuf_size, uint64_t *ts,
		   unsigned int *size);

/* ---------------------------------------------------------- shared memory */

/*
 * The library reads memory the kernel rewrites concurrently through these
 * two accessors only, as libbpf reads its ring positions through
 * ring__producer_pos(). Each call site says what its load pairs with.
 */

/* The meta page fields the reader uses, as of one look. */
struct tm_meta {
	uint32_t id;		/* reader.id */
	uint32_t read;		/* reader.read: bytes handed out on that sub-buffer */
	uint64_t entries;
	uint64_t overrun;
	uint64_t nread;		/* events handed out */
};

/*
 * Load the meta page. The kernel rewrites it only in rb_update_meta_page()
 * (at mmap, in GET_READER, on a reset), under the reader lock: reader.id is
 * loaded with acquire, pairing with that update as seen by our ioctl's
 * return, and the fields written with it are loaded after it, relaxed.
 */
static inline void tm_meta_load(const struct trace_buffer_meta *m, struct tm_meta *v)
{
	v->id = __atomic_load_n(&m->reader.id, __ATOMIC_ACQUIRE);
	v->read = __atomic_load_n(&m->reader.read, __ATOMIC_RELAXED);
	v->entries = __atomic_load_n(&m->entries, __ATOMIC_RELAXED);
	v->overrun = __atomic_load_n(&m->overrun, __ATOMIC_RELAXED);
	v->nread = __atomic_load_n(&m->read, __ATOMIC_RELAXED);
}

#define TM_SB_TS	0	/* u64 time_stamp of a sub-buffer header */
#define TM_SB_COMMIT	8	/* long commit (low 32 bits meaningful) */

/*
 * Load one header word (TM_SB_TS or TM_SB_COMMIT) of a sub-buffer the
 * writer may be filling or recycling, with memory order @order
 * (__ATOMIC_ACQUIRE or __ATOMIC_RELAXED). The writer stores commit = 0,
 * the data, the time stamp, then raises commit, with smp_wmb() between
 * (the order the kernel's rb_iter_head_event() relies on): the caller
 * picks the order of its loads and says which of these stores it pairs with.
 */
static inline uint64_t tm_subbuf_load(const void *sb, unsigned int word, int order)
{
	const uint64_t *p = (const uint64_t *)((const unsigned char *)sb + word);

	return order == __ATOMIC_ACQUIRE ? __atomic_load_n(p, __ATOMIC_ACQUIRE) :
					   __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------- tracefs */

/* Discovery and instance checks are exported: tracemap_tracefs_dir(), tracemap_instance_dir(). */

/* @instance is TRACEMAP_TOP_LEVEL */
bool tm_is_top(const char *instance);
/* 0, or -EINVAL after a message naming @who and @why a NULL instance cannot do */
int tm_instance_required(const char *instance, const char *who, const char *why);
/* A name that can be a directory under instances/: 0, or -EINVAL/-ENAMETOOLONG said why */
int tm_instance_name_check(const char *tracefs, const char *instance);

/* events/header_page: offset and size of the data field; -errno when unreadable or odd. */
int tm_header_page(const char *tracefs, unsigned int *data_off, unsigned int *data_size);
/* The sub-buffer size of the instance at @idir (buffer_subbuf_size_kb, else the page size). */
unsigned int tm_subbuf_size(const char *idir);
/*
 * per_cpu/cpuN/stats at @path into the kernel_* fields of @st (entries as
 * the meta page counts them: written since the reset); 0, or -errno with
 * @st untouched.
 */
int tm_cpu_stats_file(const char *path, struct tracemap_cpu_stats *st);

/* CPU numbers a cpumask may name */
#define TM_MAX_CPUS		8192

/*
 * set[cpu] for each CPU of the hex @mask (tracing_cpumask syntax), or for
 * every online CPU when @mask is NULL. Returns how many (> 0), or -errno
 * after a message.
 */
int tm_select_cpus(const char *mask, const char *idir, bool *set, int max);

int tm_read_file(const char *path, char *buf, size_t size);
/* A whole file, malloc()ed and NUL-terminated, *@len bytes without the NUL; NULL + errno. */
char *tm_read_whole(const char *path, size_t *len);
int tm_write_file(const char *path, const char *val);

uint64_t tm_now_ns(void);

/*
 * Memory for copies of whole rings: anonymous pages, huge where the kernel
 * allows, so that the first write into a fresh copy takes a fault per 2 MiB
 * instead of per 4 KiB (the faults, not memcpy, dominate a fresh copy).
 * Free with the same size. The last few freed buffers are kept and handed
 * out again for the same size, contents not cleared: a live view copies
 * the same ring every refresh without faulting it in again.
 */
void *tm_pages_alloc(size_t size);
void tm_pages_free(void *p, size_t size);

/* ------------------------------------------------------------ trace.dat */

struct tm_tracedat_cpu {
	const unsigned char *const *pages;	/* nr_pages self-contained sub-buffers, in order */
	size_t nr_pages;
	int cpu;
	/* set by tm_tracedat.place: where the pages go; [keep_from, keep_to) are there already */
	uint64_t offset;
	size_t keep_from;
	size_t keep_to;
};

/* What a trace.dat holds besides what tracefs and /proc give at write time. */
#define TM_EVENT_IDS		65536
struct tm_tracedat {
	const char *tracefs;
	const char *instance;		/* NULL: the top-level buffer */
	const char *clock;		/* "local", ... */
	const char *cmdlines;		/* saved_cmdlines contents */
	size_t cmdlines_len;
	const char *events;		/* enabled events: set_event, "system:event" lines */
	const unsigned char *ids;	/* bitmap of the event ids in the pages, or NULL */
	const char *kallsyms;		/* NULL: /proc/kallsyms (the fuzzer gives a small one) */
	unsigned int page_size;		/* the sub-buffer size */
	const struct tm_tracedat_cpu *cpus;
	int nr;				/* entries of cpus, CPU numbers ascending */
	/*
	 * In: non-zero when @fd already holds, from its current offset on, the
	 * file head and kernel part (header formats, event formats, kallsyms,
	 * printk formats) of generation have_gen with this page_size: the
	 * writer then seeks past them when they are still current. Out: the
	 * generation written (what a later have_gen names).
	 */
	uint64_t have_gen;
	uint64_t gen;
	/*
	 * NULL: the pages follow the head, front to back (a pipe will do).
	 * Else @fd is a regular file, and once the head's size is known
	 * (@head_end bytes) place() sets the offset and kept pages of each of
	 * the caller's cpus (page-aligned, ascending, past the head and the
	 * CPU before); the pages are then written there with pwritev(), the
	 * head from 0, and @fd's offset is left at the end of the last CPU's.
	 * Returns 0, or -errno to fail the write.
	 */
	int (*place)(void *ctx, uint64_t head_end);
	void *place_ctx;
};

/*
 * The one trace.dat writer: version 6, uncompressed, to @fd (a file or a
 * pipe), with the ftrace formats and those of @events and @ids only.
 */
int tm_tracedat_write(int fd, struct tm_tracedat *t);

/*
 * cpu.c: count the records of every region snapshot reader @c hands out from
 * now on into @t (NULL: stop). The dump's statistics and format selection.
 */
void tm_cpu_tally(struct tracemap_cpu *c, struct tm_tally *t);

/*
 * cpu.c: tracemap_cpu_read_page() into @buf (subbuf size bytes), except that
 * a whole page of a snapshot's copies is rewritten where it is: *@page
 * points to the page written, which stays valid until @c is closed or
 * rewound. Returns as tracemap_cpu_read_page().
 */
int tm_cpu_read_page_at(struct tracemap_cpu *c, void *buf, const unsigned char **page,
			unsigned int flags);

/*
 * The copies of a snapshot reader that outlive it (cpu-snapshot.c owns
 * them): a dump keeps them after it closed its readers (the fd and the
 * mapping would keep the instance from being removed), and a dump taken
 * again seeds the new readers with them.
 */
struct tm_snap_keep;
/* The copies of snapshot reader @c, taken out of it (close it next); NULL + errno */
struct tm_snap_keep *tm_cpu_keep_copies(struct tracemap_cpu *c);
void tm_snap_keep_free(struct tm_snap_keep *k);
/* Page @page of @c's copies was rewritten unlike the kernel's page (dump.c's marks) */
void tm_cpu_copy_changed(struct tracemap_cpu *c, const unsigned char *page);
/* @page is a copy of @c's that holds its kernel page as it was (no mark written over it) */
bool tm_cpu_copy_clean(const struct tracemap_cpu *c, const unsigned char *page);
/* tracemap_cpu_open() whose first scan is seeded with @keep (NULL: none), owned from here on */
struct tracemap_cpu *tm_cpu_open_seeded(const char *instance, int cpu,
					const struct tracemap_cpu_opts *opts,
					struct tm_snap_keep *keep);

/*
 * What a dump holds besides the pages of its readers, as tracemap_dump_take()
 * reads it from tracefs. Every field may be NULL (0): no instance, clock
 * "local", no command lines, no enabled events, no overrun, /proc/kallsyms.
 */
struct tm_dump_src {
	const char *tracefs;
	const char *instance;		/* the BUFFER option's name; NULL: the top level */
	const char *clock;
	const char *cmdlines;		/* saved_cmdlines contents, cmdlines_len bytes */
	size_t cmdlines_len;
	const char *events;		/* set_event contents */
	const uint64_t *overrun;	/* the kernel's overrun of each reader's CPU, or NULL */
	const uint64_t *read;		/* ... and its read count (nothing consumed: 0), or NULL */
	const char *kallsyms;
};

/*
 * dump.c: a dump of snapshot readers (@readers[i] the i-th CPU, ascending),
 * as tracemap_dump_take() builds its own, and what the unit tests and the
 * fuzzer write over synthetic mappings. Takes the readers (each slot set to
 * NULL) and closes them: their copies, which hold the pages, stay with the
 * dump until it is freed (tm_cpu_keep_copies()).
 * Returns the dump, or NULL with errno set.
 */
struct tracemap_dump *tm_dump_from_readers(struct tracemap_cpu **readers, int n,
					   const struct tm_dump_src *src);
/*
 * dump.c: the copies @d holds of CPU @cpu, taken out of it (NULL: none),
 * to seed the reader of a retake; @d can only be freed then.
 */
struct tm_snap_keep *tm_dump_keep(struct tracemap_dump *d, int cpu);

/* ------------------------------------------------------------ wake-ups */

/* The one wake-up policy (wake.c): state of one waiter. */
struct tm_wake {
	uint64_t round_ns;	/* start of the last moderated round (CLOCK_MONOTONIC) */
	uint64_t interval_ns;	/* between round starts now; 0: TM_MIN_ROUND_NS */
	unsigned int empty;	/* wakeups in a row that brought nothing */
};

#define TM_MIN_ROUND_NS		300000		/* at most 3333 rounds a second */
#define TM_MAX_ROUND_NS		2000000		/* a busy stream: at least 500 a second */
#define TM_BUSY_ROUND		16		/* events in a round that make it busy */
#define TM_EMPTY_WAKES		3		/* empty wakeups before backing off */
#define TM_BACKOFF_NS		1000000		/* the back-off pause */

/*
 * Sleep until the interval after the last round started, at most until
 * @deadline. Returns true when a signal cut the sleep short.
 */
bool tm_wake_moderate(struct tm_wake *w, uint64_t deadline);
/* A moderated round delivered @events: the next interval, longer while rounds are busy. */
void tm_wake_round(struct tm_wake *w, unsigned int events);
/* Whether the next wait should pause TM_BACKOFF_NS instead of trusting the descriptor. */
bool tm_wake_backoff(struct tm_wake *w);
/* The back-off pause; true when a signal cut it short. */
bool tm_wake_pause(void);

/* A wakeup happened; data came. */
static inline void tm_wake_woken(struct tm_wake *w)
{
	w->empty++;
}

static inline void tm_wake_data(struct tm_wake *w)
{
	w->empty = 0;
}

/* ------------------------------------------------------------- pacing */

/*
 * How a stream's rounds follow each other (pace.c): one state per stream,
 * one per CPU, changed only by tm_pace_step() after the rules of pace.c's
 * table (lib/README, "Pacing").
 */
enum tm_pace_state {
	TM_PACE_RUN,		/* a round runs, no CPU held back */
	TM_PACE_RUN_CHASE,	/* ... a CPU held back by the chase limit, none by its budget */
	TM_PACE_RUN_BUDGET,	/* ... a CPU held back by its budget */
	TM_PACE_DRAINED,	/* the round ended: every CPU found empty */
	TM_PACE_STALLED_CHASE,	/* the round ended on CPUs held back by the chase limit only */
	TM_PACE_STALLED,	/* the round ended on a CPU held back by its budget */
	TM_PACE_NR_STATES
};

enum tm_pace_cpu {
	TM_PACE_FREE,		/* the CPU may take regions in this round */
	TM_PACE_CHASED,		/* its writer is on the reader page: the rest of its region */
	TM_PACE_NR_CPU_STATES
};

enum tm_pace_event {
	TM_PACE_ASK,		/* may this CPU take a region? */
	TM_PACE_REGION,		/* this CPU handed out a new region */
	TM_PACE_OPEN,		/* the stream is set up */
	TM_PACE_START,		/* a round begins */
	TM_PACE_NEW_ROUND,	/* ... for this CPU */
	TM_PACE_EMPTY,		/* the merge found every CPU empty */
	TM_PACE_STALL,		/* the merge stopped at a CPU held back */
	TM_PACE_DONE,		/* the round's events are counted: how the next one starts */
	TM_PACE_TICK,		/* the latency tick fired */
	TM_PACE_WOKEN,		/* the stream's wait ended with a wakeup */
	TM_PACE_NR_EVENTS
};

/*
 * Conditions a rule reads: the stream's own facts (kept in struct
 * tm_pace) and those the caller passes with the event.
 */
#define TM_PACE_HAS_TICK	(1u << 0)	/* fact: the stream has a latency tick */
#define TM_PACE_HAS_KICK	(1u << 1)	/* fact: ... a kick eventfd */
#define TM_PACE_CHASE_LIMIT	(1u << 2)	/* fact: the chase limit holds CPUs back */
#define TM_PACE_TICKED		(1u << 3)	/* fact: the tick fired since the round began */
#define TM_PACE_ROUND_TICKED	(1u << 4)	/* fact: ... before this round began */
#define TM_PACE_KICKED		(1u << 5)	/* fact: the kick eventfd is readable */
#define TM_PACE_WAITS		(1u << 6)	/* fact: the next round waits for a wakeup */
#define TM_PACE_FACTS		0x7fu
#define TM_PACE_DELIVERED	(1u << 7)	/* DONE: the round delivered events */
#define TM_PACE_SAME_PAGE	(1u << 8)	/* REGION: on the sub-buffer of the last one */
#define TM_PACE_WRITER_LEFT	(1u << 9)	/* REGION: the mapping shows data past it */
#define TM_PACE_REGION_DONE	(1u << 10)	/* ASK: the CPU's region is walked to its end */
#define TM_PACE_SPENT		(1u << 11)	/* ASK: the CPU used its regions for the round */

enum tm_pace_action {
	TM_PACE_NONE,
	TM_PACE_KICK,		/* make the kick eventfd readable */
	TM_PACE_UNKICK,		/* drain the kick eventfd */
	TM_PACE_TAKE,		/* ASK: yes */
	TM_PACE_HOLD,		/* ASK: no, the CPU waits for the next round */
};

struct tm_pace {
	enum tm_pace_state state;
	unsigned int facts;	/* TM_PACE_HAS_TICK ... TM_PACE_KICKED */
};

/* One row of pace.c's table; @from and @cpu_from are masks of states, 0 for any. */
struct tm_pace_rule {
	enum tm_pace_event event;
	unsigned int from;
	unsigned int cpu_from;
	unsigned int when;	/* conditions that must hold */
	unsigned int unless;	/* conditions that must not */
	int to;			/* the next state, -1: unchanged */
	int cpu_to;		/* the CPU's next state, -1: unchanged */
	unsigned int set;	/* facts set */
	unsigned int clear;	/* facts cleared */
	enum tm_pace_action action;
};

/* A stream's pacing before TM_PACE_OPEN: @facts are HAS_TICK, HAS_KICK, CHASE_LIMIT. */
void tm_pace_init(struct tm_pace *p, unsigned int facts);
/* The row that applies to @ev with @cond in @p's state (and @cpu's, for a CPU's event). */
const struct tm_pace_rule *tm_pace_rule(const struct tm_pace *p, const enum tm_pace_cpu *cpu,
					enum tm_pace_event ev, unsigned int cond);
/*
 * The transition: apply @ev's row to @p (and @cpu). Returns its action;
 * KICK and UNKICK only when the eventfd's level changes.
 */
enum tm_pace_action tm_pace_step(struct tm_pace *p, enum tm_pace_cpu *cpu,
				 enum tm_pace_event ev, unsigned int cond);
/*
 * ASK for a CPU: a free CPU within its budget takes (row 3; rows 1-2 need
 * a chased one) without the walk of the table, once per region of every
 * CPU. test-pace checks that this gives the table's answers.
 */
static inline enum tm_pace_action tm_pace_ask(struct tm_pace *p, enum tm_pace_cpu *cpu,
					      unsigned int cond)
{
	if (*cpu == TM_PACE_FREE && !(cond & TM_PACE_SPENT))
		return TM_PACE_TAKE;
	return tm_pace_step(p, cpu, TM_PACE_ASK, cond);
}

/* The rows, for the unit test: *@n of them. */
const struct tm_pace_rule *tm_pace_rules(unsigned int *n);

/* Whether only a wakeup brings news for the next round (poll). */
static inline bool tm_pace_waits(const struct tm_pace *p)
{
	return p->facts & TM_PACE_WAITS;
}

/* Whether a wakeup now would be the stream's own (the tick, the kick). */
static inline bool tm_pace_own_wakeup(const struct tm_pace *p)
{
	return p->facts & (TM_PACE_TICKED | TM_PACE_KICKED);
}

/* ---------------------------------------------------------------- options */

/*
 * The one copy of a caller's options struct (first member size_t sz), as
 * libbpf's OPTS_VALID: @src may be NULL (defaults stay in @dst); otherwise
 * min(sz, @dst_sz) bytes are copied, a sz below @min_sz is EINVAL and a
 * newer caller's non-zero bytes past @dst_sz are E2BIG, each with a message
 * naming @what. Returns 0 or -errno.
 */
int tm_opts_copy(void *dst, size_t dst_sz, const void *src, size_t min_sz, const char *what);

/*
 * An options struct ends with its last field, without tail padding: a field
 * appended later would otherwise be read from an older caller's padding.
 */
#define TM_OPTS_NO_TAIL(type, last)						\
	_Static_assert(sizeof(struct type) ==					\
		       offsetof(struct type, last) + sizeof(((struct type *)0)->last),	\
		       #type " has tail padding: reorder it or fill it with a field")
TM_OPTS_NO_TAIL(tracemap_cpu_opts, tracefs_dir);
TM_OPTS_NO_TAIL(tracemap_stream_opts, tracer);
TM_OPTS_NO_TAIL(tracemap_dump_opts, cpumask);
TM_OPTS_NO_TAIL(tracemap_format_opts, clock);

/* tracemap_cpu_opts as of version 0.1: every field up to tracefs_dir */
#define TM_CPU_OPTS_MIN_SZ \
	(offsetof(struct tracemap_cpu_opts, tracefs_dir) + sizeof(const char *))
/* tracemap_stream_opts: sz alone (every other field defaults to 0) */
#define TM_STREAM_OPTS_MIN_SZ	sizeof(size_t)
/* tracemap_format_opts: every field up to clock */
#define TM_FORMAT_OPTS_MIN_SZ \
	(offsetof(struct tracemap_format_opts, clock) + sizeof(const char *))

/* ------------------------------------------------------------ per-CPU */

/*
 * A reader of CPU @cpu over a mapping laid out in memory by the caller (the
 * unit tests' and the fuzzers' synthetic, often lying, mappings): @meta is
 * the meta page, @subbufs the @nr_subbufs sub-buffers of @subbuf_size bytes,
 * which stay the caller's. GET_READER is @get_reader (called with @ctx; < 0
 * fails it), which may change the memory; NULL: no GET_READER (consume mode
 * then fails with EBADF). Nothing is opened or mapped, the counters come
 * from the meta page alone; tracemap_cpu_close() frees it.
 */
struct tracemap_cpu *tm_cpu_open_memory(int cpu, enum tracemap_mode mode, const void *meta,
					const void *subbufs, unsigned int subbuf_size,
					unsigned int nr_subbufs, int (*get_reader)(void *ctx),
					void *ctx);
/*
 * A consuming reader of CPU @cpu with the read() backend over the caller's
 * @fd (the unit tests' files standing in for trace_pipe_raw, @subbuf_size
 * bytes a read()), its kernel counters from @stats (called with @ctx; sets
 * the kernel_* fields only, returns 0 or -errno) instead of
 * per_cpu/cpuN/stats. The reader owns @fd
 * from then on: tracemap_cpu_close() closes it.
 */
/*
 * tm_cpu_open_memory() whose first scan is seeded with @keep (NULL: none),
 * the copies of an earlier reader of the same memory; it owns @keep then.
 */
struct tracemap_cpu *tm_cpu_open_memory_from(struct tm_snap_keep *keep, int cpu,
					     enum tracemap_mode mode, const void *meta,
					     const void *subbufs, unsigned int subbuf_size,
					     unsigned int nr_subbufs);
struct tracemap_cpu *tm_cpu_open_read_fd(int cpu, int fd, unsigned int subbuf_size,
					 int (*stats)(void *ctx, struct tracemap_cpu_stats *k),
					 void *ctx);
/*
 * A stream over @n readers opened by the caller (tm_cpu_open_memory(): the
 * fuzzer's merge), which it owns from then on: mode, flags and callbacks
 * from @o; no tracefs, no watermark, no wake-ups: consume it, or give poll
 * and next_event a timeout (each wait is a new look at once).
 */
struct tracemap_stream *tm_stream_open_readers(struct tracemap_cpu **cpus, int n,
					       const struct tracemap_stream_opts *o);

/* Streams count their wakeups here so that one stats call reports everything. */
/* 0, or -EBADFD after a message when @c is used in a child of the process that opened it */
int tm_cpu_usable(struct tracemap_cpu *c);
void tm_cpu_count_wakeup(struct tracemap_cpu *c);
/* resets of the buffer the reader has seen (stats.cleared) */
uint64_t tm_cpu_cleared(const struct tracemap_cpu *c);
void tm_cpu_count_late(struct tracemap_cpu *c);
/* @helper: an event enabled only for the own-event check */
void tm_cpu_count_own(struct tracemap_cpu *c, bool helper);
/*
 * A stream holds back (true) or delivers (false) the event the reader just
 * returned: it counts as held, not delivered, meanwhile.
 */
void tm_cpu_hold(struct tracemap_cpu *c, bool held);
/* Regions handed out so far: a stream sees from it whether a call fetched new data. */
uint64_t tm_cpu_regions(const struct tracemap_cpu *c);
/* The sub-buffer id of the region tracemap_cpu_next_event() walks (read backend: a counter). */
unsigned int tm_cpu_region_id(const struct tracemap_cpu *c);
/* tracemap_cpu_next_event() still has bytes of its current region to walk: no call into the kernel. */
bool tm_cpu_region_left(const struct tracemap_cpu *c);
/*
 * Consuming through the mapping, the mapping shows the writer past the
 * reader page: the next call into the kernel swaps in a sub-buffer with
 * data. False when it does not show it or the reader cannot tell.
 */
bool tm_cpu_writer_left(struct tracemap_cpu *c);
/*
 * The walk of that region, lent (NULL: none): the caller walks it on with
 * tm_walk_next(), makes events of the records as tm_event_from_rec() does
 * (missed 0: a loss went out with the region's first event) and counts
 * them with tm_cpu_walked(), as tracemap_cpu_next_event() would have.
 */
struct tm_walk *tm_cpu_region_walk(struct tracemap_cpu *c);
void tm_cpu_walked(struct tracemap_cpu *c, unsigned int n);
/*
 * Events the kernel holds beyond what it handed out: the meta page's counters,
 * or for read() the stats file's as read after the last page.
 */
uint64_t tm_cpu_backlog(const struct tracemap_cpu *c);

/* ------------------------------------------------------------ streams */

struct tm_decode;
struct tm_events;
struct tm_self;

/* The stream's decoder (never NULL for an open stream); NULL + EINVAL for NULL. */
struct tm_decode *tm_stream_decode(struct tracemap_stream *s);

/* ----------------------------------------------- crash-state record (state.c) */

struct tm_state;

/*
 * The record of what one stream or event set changes in @instance
 * (TRACEMAP_TOP_LEVEL or a name); the file is made at the first note.
 * NULL + errno on ENOMEM.
 */
struct tm_state *tm_state_new(const char *tracefs, const char *instance);
/* Write "@key=value" down (on disk) before the change it names; 0 or -errno said why */
int tm_state_note(struct tm_state *st, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Free @st (NULL-safe); the record goes when @all_back, else it stays for a repair */
void tm_state_end(struct tm_state *st, bool all_back);

/* ------------------------------------------------ the instance (instance.c) */

/* The buffer a stream or an event set works in, and what it changed there. */
struct tm_inst {
	char *name;			/* TRACEMAP_TOP_LEVEL or a name under instances/ */
	char *dir;			/* its directory */
	struct tm_state *state;		/* what was changed, for a repair after a kill */
	char *old_clock;		/* trace_clock to put back, or NULL */
	long old_size_kb;		/* buffer_size_kb to put back, or -1 */
	bool created;			/* made here: removed at close */
	int owner;			/* the process that opened it (tm_in_child()) */
};

/*
 * Resolve @instance: NULL makes a private instance, a missing name is
 * made when @create, TRACEMAP_TOP_LEVEL is the top level. 0 or -errno
 * after a message; tm_inst_close() in any case.
 */
int tm_inst_open(struct tm_inst *in, const char *tracefs, const char *instance, bool create,
		 const char *prefix);
/* buffer_size_kb (0: leave it) and trace_clock (NULL: leave it); 0 or -errno said why */
int tm_inst_setup(struct tm_inst *in, unsigned long size_kb, const char *clock);
/* Put back size and clock, remove it when made here, end the record; 0 when all is back */
int tm_inst_close(struct tm_inst *in);
/*
 * An existing instance for a reader of it: @instance given (NULL is refused
 * for @who: a private one would be useless, @why), the tracefs mount
 * (@tracefs_dir, NULL: found) into @tfs and the instance's directory into
 * @idir. 0 or -errno after a message.
 */
int tm_instance_find(const char *instance, const char *tracefs_dir, const char *who,
		     const char *why, char *tfs, size_t tfs_size, char *idir, size_t idir_size);

/* A file set through tracemap_instance_set(), and its value before */
struct tm_inst_file {
	char *file;
	char *old;
};

/* What tracemap_instance_open() set up, to put back at close */
struct tracemap_instance {
	struct tm_inst in;
	struct tracemap_tracer *tracer;	/* opts.tracer */
	struct tm_inst_file *files;	/* tracemap_instance_set(), in order */
	int nr_files;
	int owner;			/* the process that opened it (tm_in_child()) */
};

/*
 * tracemap_instance_open() in @tracefs with @o copied and checked, without
 * the repair; 0 with *@out set, or -errno after a message, nothing left.
 */
int tm_instance_open(struct tracemap_instance **out, const char *tracefs, const char *instance,
		     const struct tracemap_instance_opts *o);

/* ------------------------------------------------- the tracer (tracer.c) */

/*
 * tracemap_tracer_set() in @instance of @tracefs with each change noted in
 * @state (the caller's record) first; @opts NULL: nothing, *@out NULL.
 * 0 or -errno after a message, nothing changed.
 */
int tm_tracer_set(struct tracemap_tracer **out, const char *tracefs, const char *instance,
		  const struct tracemap_tracer_opts *opts, struct tm_state *state);

/* ----------------------------------------------- instance state (events.c) */

/*
 * Enable the selected events with their filters, restrict to @pids, and for
 * @self add its threads to set_event_notrace_pid and its clauses to the
 * sched filters; @on_enable(@ctx, name) (NULL: none) before each event is
 * turned on. Each change is noted in @state (NULL: none) before it is made. *@out is NULL when there was nothing to do. On failure
 * everything is put back. Returns 0 or -errno after a message.
 */
int tm_events_setup(struct tm_events **out, const char *tracefs, const char *instance,
		    struct tm_state *state, const struct tracemap_event_spec *specs, int nr_specs,
		    const int *pids, int nr_pids, bool pid_forks, struct tm_self *self,
		    tracemap_enable_fn on_enable, void *ctx);
/* Put back everything tm_events_setup() changed and free @e (NULL-safe). */
void tm_events_restore(struct tm_events *e);
/* "system:event" of every selected event, NULL-terminated */
const char *const *tm_events_names(const struct tm_events *e);

/* ------------------------------------------------- own events (self.c) */

/* @causes: also leave out what the stream's output causes (self.c) */
struct tm_self *tm_self_new(const char *tracefs, bool causes);
void tm_self_free(struct tm_self *self);
/* The threads of this process, as last read. */
const int *tm_self_tids(const struct tm_self *self, int *nr);
/* Read the threads again if the last look is older than the refresh period. */
void tm_self_refresh(struct tm_self *self, uint64_t now);
/* The filter clause that keeps our threads out of @system:@event; 0 when none is needed. */
int tm_self_clause(const struct tm_self *self, const char *system, const char *event,
		   char *buf, size_t size);
/* Whether causes are followed: sched_waking must then be enabled for the check. */
bool tm_self_causes(const struct tm_self *self);
/* sched_waking was enabled for the check alone: leave all of its events out. */
void tm_self_hide_waking(struct tm_self *self);
/*
 * The event was written by one of our threads, is a sched event naming one,
 * or was caused by our output; follows the causes (events in stream order).
 */
enum tm_self_kind {
	TM_SELF_NONE = 0,	/* the caller's */
	TM_SELF_OWN,		/* written or caused by the stream's process */
	TM_SELF_HELPER,		/* an event enabled only for this check (sched_waking) */
};
enum tm_self_kind tm_self_match(struct tm_self *self, const struct tracemap_event *ev);

/* ------------------------------------------------ kernel symbols (ksyms.c) */

struct tm_ksyms;
struct tep_handle;

/* kallsyms text at @path (/proc/kallsyms) as libtraceevent would keep it; NULL + errno. */
struct tm_ksyms *tm_ksyms_load(const char *path);
/* The same from @text (malloc()ed, @len bytes and room for a NUL; taken over). */
struct tm_ksyms *tm_ksyms_parse(char *text, size_t len);
void tm_ksyms_free(struct tm_ksyms *k);
/* The symbol @addr lies in, as tep_find_function() finds it: name, start, module; NULL: none. */
const char *tm_ksyms_find(const struct tm_ksyms *k, uint64_t addr, uint64_t *start,
			  const char **mod);
/* How many symbols were kept. */
size_t tm_ksyms_count(const struct tm_ksyms *k);
/* @tep resolves functions through @k, which must outlive it (tep_free() first); -ENOMEM. */
int tm_ksyms_attach(struct tm_ksyms *k, struct tep_handle *tep);

/* ------------------------------------------------------ decoding (decode.c) */

struct tm_decode *tm_decode_new(const char *tracefs, const char *idir);
void tm_decode_free(struct tm_decode *d);
/* The formats, loaded on the first call; NULL + errno after a message. */
struct tep_handle *tm_decode_tep(struct tm_decode *d);
/*
 * Every delivered event: its format loaded, an exec renames its task.
 * Nothing before the handle is loaded.
 */
void tm_decode_observe(struct tm_decode *d, const struct tracemap_event *ev);
/* True while tm_decode_observe() has something to do (@d NULL: never): a flag to test per event. */
const bool *tm_decode_observing(const struct tm_decode *d);

/*
 * Task names. Every change the library makes to a tep's names (loading
 * saved_cmdlines, a name from /proc, an exec, the sched plugin's comms)
 * calls tm_comms_changed(); what was looked up before a change is looked up
 * again after it (the formatter's name cache, format.c).
 */
extern uint64_t tm_comm_gen;
void tm_comms_changed(void);

static inline uint64_t tm_comms_gen(void)
{
	return __atomic_load_n(&tm_comm_gen, __ATOMIC_RELAXED);
}
/* tm_decode_tep() and kallsyms: for a stream that decodes every event. */
struct tep_handle *tm_decode_preload(struct tm_decode *d);
/* The events the stream just enabled: their formats, if the handle is loaded. */
void tm_decode_enabled(struct tm_decode *d);

#endif /* _TRACEMAP_LOCAL_H */
