// SPDX-License-Identifier: LGPL-2.1-only
/*
 * The per-CPU reader: open/close, the getters, the dispatch to the region
 * source of the reader's mode and backend, the event iterator and the
 * statistics. The sources live in cpu-consume.c, cpu-read.c,
 * cpu-snapshot.c and cpu-follow.c, the page builder beside the page writer
 * in subbuf-pages.c; cpu-local.h shows who owns which state (see lib/README).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event-parse.h>

#include "cpu-local.h"

/* ------------------------------------------------------------ open/close */

static int check_header_page(const char *tracefs)
{
	unsigned int off, size;

	if (tm_header_page(tracefs, &off, &size))
		return 0; /* old or restricted tracefs: assume the 64-bit layout */
	if (off != TM_SUBBUF_HDR) {
		tm_log(TRACEMAP_LOG_ERROR, "%s/events/header_page: sub-buffer data does not start "
		       "at offset 16 (a 32-bit kernel?): not supported", tracefs);
		return tm_err(EPROTO);
	}
	return 0;
}

static bool cpu_online(int cpu)
{
	char path[128], buf[16];

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	if (tm_read_file(path, buf, sizeof(buf)) <= 0)
		return true; /* cpu0 often has no online file */
	return buf[0] == '1';
}

/* The layout of a mapping from its meta page; @path names it in the error. */
static int use_meta(struct tracemap_cpu *c, const struct trace_buffer_meta *m, const char *path)
{
	long pagesz = getpagesize();
	unsigned int msz, len, sbs, nr;

	/* fixed at mapping time: the kernel only rewrites reader/counters */
	msz = m->meta_page_size;
	len = m->meta_struct_len;
	sbs = m->subbuf_size;
	nr = m->nr_subbufs;
	if (len < TRACE_BUFFER_META_MIN_LEN || len > msz || msz < (unsigned int)pagesz ||
	    msz % pagesz || sbs < 64 || sbs % 16 || sbs > 64u << 20 || nr < 2) {
		tm_log(TRACEMAP_LOG_ERROR, "%s: meta page not understood (meta_page_size %u, "
		       "meta_struct_len %u, subbuf_size %u, nr_subbufs %u): update libtracemap "
		       "for this kernel", path, msz, len, sbs, nr);
		return tm_err(EPROTO);
	}
	c->map_len = (size_t)msz + (size_t)nr * sbs;
	c->subbuf_size = sbs;
	c->nr_subbufs = nr;
	return 0;
}

static int map_buffer(struct tracemap_cpu *c, const char *path)
{
	const struct trace_buffer_meta *probe;
	long pagesz = getpagesize();
	void *map;
	int e;

	probe = mmap(NULL, pagesz, PROT_READ, MAP_SHARED, c->fd, 0);
	if (probe == MAP_FAILED)
		return tm_err(errno);
	e = use_meta(c, probe, path);
	if (e) {
		munmap((void *)probe, pagesz);
		return e;
	}
	map = mmap(NULL, c->map_len, PROT_READ, MAP_SHARED, c->fd, 0);
	e = errno;
	munmap((void *)probe, pagesz);
	if (map == MAP_FAILED)
		return tm_err(e);

	c->map = map;
	c->meta = map;
	/* the meta area comes first */
	c->subbufs = (const unsigned char *)map + c->map_len - (size_t)c->nr_subbufs * c->subbuf_size;
	return 0;
}

/* The buffers of the sources this reader uses, and their starting points. */
static int init_sources(struct tracemap_cpu *c)
{
	unsigned int i;

	c->pages.stage = malloc(c->subbuf_size);
	if (!c->pages.stage)
		return tm_err(ENOMEM);
	if (c->backend == TRACEMAP_BACKEND_READ) {
		tm_read_init(c);
		c->rd.buf = malloc(c->subbuf_size);
		return c->rd.buf ? 0 : tm_err(ENOMEM);
	}
	tm_consume_init(c);
	if (c->mode == TRACEMAP_MODE_CONSUME)
		return 0;
	c->snap.copies = tm_pages_alloc((size_t)c->nr_subbufs * c->subbuf_size);
	c->snap.order = calloc(c->nr_subbufs, sizeof(*c->snap.order));
	c->snap.byid = calloc(c->nr_subbufs, sizeof(*c->snap.byid));
	c->snap.slot = malloc(c->nr_subbufs * sizeof(*c->snap.slot));
	c->snap.slots = calloc(c->nr_subbufs, sizeof(*c->snap.slots));
	c->follow.buf = malloc(c->subbuf_size);
	if (!c->snap.copies || !c->snap.order || !c->snap.byid || !c->snap.slot ||
	    !c->snap.slots || !c->follow.buf)
		return tm_err(ENOMEM);
	for (i = 0; i < c->nr_subbufs; i++)
		c->snap.slot[i] = i;
	/* "what is in the buffer now" is at open: what follows is then accounted for */
	tm_snapshot_scan(c);
	return 0;
}

/**
 * tracemap_cpu_open - open the reader of one CPU's ring buffer
 * @instance: the instance name, or TRACEMAP_TOP_LEVEL for the top-level buffer;
 *	NULL is refused (EINVAL): a new private instance would hold nothing
 * @cpu: the CPU number
 * @opts: mode, flags and tracefs directory; NULL for the defaults
 *
 * Maps per_cpu/cpuN/trace_pipe_raw (or, in consume mode and unless
 * TRACEMAP_CPU_NO_FALLBACK, reads it with read()). A failure is explained
 * through the print callback before it returns.
 *
 * Returns the reader, or NULL with errno set.
 */
struct tracemap_cpu *tracemap_cpu_open(const char *instance, int cpu,
				       const struct tracemap_cpu_opts *opts)
{
	return tm_cpu_open_seeded(instance, cpu, opts, NULL);
}

struct tracemap_cpu *tm_cpu_open_seeded(const char *instance, int cpu,
					const struct tracemap_cpu_opts *opts,
					struct tm_snap_keep *keep)
{
	char tfs[4096], idir[4096], path[4200];
	struct tracemap_cpu_opts o = { .mode = TRACEMAP_MODE_CONSUME };
	struct tracemap_cpu *c = NULL;
	struct stat st;
	int ret;

	ret = tm_opts_copy(&o, sizeof(o), opts, TM_CPU_OPTS_MIN_SZ, "tracemap_cpu_opts");
	if (ret)
		goto no_reader;
	if (cpu < 0 || o.mode > TRACEMAP_MODE_FOLLOW) {
		tm_log(TRACEMAP_LOG_ERROR, "invalid %s %d: pass a CPU number >= 0 and a "
		       "TRACEMAP_MODE_*", cpu < 0 ? "CPU" : "mode", cpu < 0 ? cpu : (int)o.mode);
		tm_err(EINVAL);
		goto no_reader;
	}
	if (o.flags & ~(TRACEMAP_CPU_FORCE_READ | TRACEMAP_CPU_NO_FALLBACK)) {
		tm_log(TRACEMAP_LOG_ERROR, "tracemap_cpu_opts.flags %#x has bits this libtracemap "
		       "does not know (%#x): pass only TRACEMAP_CPU_* flags", o.flags,
		       o.flags & ~(TRACEMAP_CPU_FORCE_READ | TRACEMAP_CPU_NO_FALLBACK));
		tm_err(EINVAL);
		goto no_reader;
	}
	if (o.mode != TRACEMAP_MODE_CONSUME && (o.flags & TRACEMAP_CPU_FORCE_READ)) {
		tm_log(TRACEMAP_LOG_ERROR, "the %s mode reads without consuming, which needs the "
		       "mapping: drop TRACEMAP_CPU_FORCE_READ or use TRACEMAP_MODE_CONSUME",
		       o.mode == TRACEMAP_MODE_SNAPSHOT ? "snapshot" : "follow");
		tm_err(EINVAL);
		goto no_reader;
	}
	ret = tm_instance_find(instance, o.tracefs_dir, "tracemap_cpu_open", "a reader of a new "
			       "private instance would find nothing in it", tfs, sizeof(tfs), idir,
			       sizeof(idir));
	if (!ret)
		ret = check_header_page(tfs);
	if (ret)
		goto no_reader;

	snprintf(path, sizeof(path), "%s/per_cpu/cpu%d", idir, cpu);
	if (stat(path, &st)) {
		tm_log(TRACEMAP_LOG_ERROR, "CPU %d has no ring buffer (%s missing): the CPU does "
		       "not exist; use one listed in /sys/devices/system/cpu/possible", cpu, path);
		tm_err(ENXIO);
		goto no_reader;
	}

	c = calloc(1, sizeof(*c));
	if (!c) {
		tm_log(TRACEMAP_LOG_ERROR, "cpu%d: out of memory", cpu);
		tm_err(ENOMEM);
		goto no_reader;
	}
	c->fd = -1;
	c->cpu = cpu;
	c->owner = tm_cur_pid;
	c->mode = o.mode;
	c->consume.id = TM_NO_ID;
	c->follow.cur.id = TM_NO_ID;
	tm_snapshot_seed(c, keep);

	snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace_pipe_raw", idir, cpu);
	/* O_CLOEXEC: any close() of an inherited copy would flush and wake our waits */
	c->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (c->fd < 0) {
		ret = errno;
		if (ret == EACCES || ret == EPERM)
			tm_log(TRACEMAP_LOG_ERROR, "no permission to open %s: run as root", path);
		else
			tm_log(TRACEMAP_LOG_ERROR, "cannot open %s: %s", path, strerror(ret));
		goto fail;
	}

	ret = 0;
	if (!(o.flags & TRACEMAP_CPU_FORCE_READ))
		ret = -map_buffer(c, path);
	if (ret == EPROTO)
		goto fail;
	if (ret == EINVAL && !cpu_online(cpu)) {
		tm_log(TRACEMAP_LOG_ERROR, "CPU %d is offline and has no ring buffer: bring it "
		       "online (echo 1 > /sys/devices/system/cpu/cpu%d/online) or leave it out of "
		       "the CPU mask", cpu, cpu);
		ret = ENXIO;
		goto fail;
	}
	if (ret) {
		if (o.mode != TRACEMAP_MODE_CONSUME || (o.flags & TRACEMAP_CPU_NO_FALLBACK)) {
			tm_log(TRACEMAP_LOG_ERROR, "cannot map %s: %s%s", path, strerror(ret),
			       ret == EBUSY ? " (a snapshot is armed or a latency tracer is "
			       "active: disarm it)" : ret == ENODEV || ret == ENOTTY ?
			       " (the kernel cannot map the ring buffer: Linux 6.10 or later "
			       "is needed)" : "");
			if (ret == ENODEV || ret == ENOTTY)
				ret = EOPNOTSUPP;
			goto fail;
		}
		tm_log(TRACEMAP_LOG_INFO, "cannot map %s (%s): reading it with read()", path,
		       strerror(ret));
	}
	if (!c->map) {
		c->backend = TRACEMAP_BACKEND_READ;
		c->subbuf_size = tm_subbuf_size(idir);
		c->nr_subbufs = 0;
	}
	snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/stats", idir, cpu);
	c->stats_path = strdup(path);
	ret = c->stats_path ? -init_sources(c) : ENOMEM;
	if (ret) {
		tm_log(TRACEMAP_LOG_ERROR, "cpu%d: out of memory", cpu);
		goto fail;
	}
	return c;
fail:
	tracemap_cpu_close(c);
	errno = ret;
	return NULL;
no_reader:
	ret = errno;
	tm_snap_keep_free(keep);
	errno = ret;
	return NULL;
}

/*
 * A stand-in reader the caller fills in; NULL with errno EINVAL unless
 * @args_ok and the common arguments are, ENOMEM when out of memory.
 */
static struct tracemap_cpu *reader_alloc(bool args_ok, int cpu, enum tracemap_mode mode,
					 enum tracemap_backend backend, int fd,
					 unsigned int subbuf_size)
{
	struct tracemap_cpu *c;

	if (!args_ok || cpu < 0 || subbuf_size < 64 || subbuf_size % 16) {
		tm_err(EINVAL);
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		tm_err(ENOMEM);
		return NULL;
	}
	c->fd = fd;
	c->cpu = cpu;
	c->owner = tm_cur_pid;
	c->mode = mode;
	c->backend = backend;
	c->subbuf_size = subbuf_size;
	c->consume.id = TM_NO_ID;
	c->follow.cur.id = TM_NO_ID;
	return c;
}

/* Finish a stand-in reader of reader_alloc(): no per_cpu/cpuN/stats behind it */
static struct tracemap_cpu *stand_in_ready(struct tracemap_cpu *c)
{
	int ret;

	c->stats_path = strdup("/nonexistent/tracemap-stand-in-reader/stats");
	ret = c->stats_path ? -init_sources(c) : ENOMEM;
	if (ret) {
		tracemap_cpu_close(c);
		errno = ret;
		return NULL;
	}
	return c;
}

/* A stand-in reader of reader_alloc() over the caller's memory, made ready */
static struct tracemap_cpu *memory_ready(struct tracemap_cpu *c, const void *meta,
					 const void *subbufs, unsigned int nr_subbufs,
					 int (*get_reader)(void *ctx), void *ctx)
{
	c->meta = meta;
	c->subbufs = subbufs;
	c->nr_subbufs = nr_subbufs;
	c->get_reader = get_reader;
	c->get_reader_ctx = ctx;
	/* the counters come from the meta page alone */
	return stand_in_ready(c);
}

struct tracemap_cpu *tm_cpu_open_memory(int cpu, enum tracemap_mode mode, const void *meta,
					const void *subbufs, unsigned int subbuf_size,
					unsigned int nr_subbufs, int (*get_reader)(void *ctx),
					void *ctx)
{
	struct tracemap_cpu *c;

	c = reader_alloc(mode <= TRACEMAP_MODE_FOLLOW && nr_subbufs >= 2, cpu, mode,
			 TRACEMAP_BACKEND_MMAP, -1, subbuf_size);
	if (!c)
		return NULL;
	return memory_ready(c, meta, subbufs, nr_subbufs, get_reader, ctx);
}

struct tracemap_cpu *tm_cpu_open_memory_from(struct tm_snap_keep *keep, int cpu,
					     enum tracemap_mode mode, const void *meta,
					     const void *subbufs, unsigned int subbuf_size,
					     unsigned int nr_subbufs)
{
	struct tracemap_cpu *c;

	c = reader_alloc(mode <= TRACEMAP_MODE_FOLLOW && nr_subbufs >= 2, cpu, mode,
			 TRACEMAP_BACKEND_MMAP, -1, subbuf_size);
	if (!c) {
		tm_snap_keep_free(keep);
		return NULL;
	}
	tm_snapshot_seed(c, keep);
	return memory_ready(c, meta, subbufs, nr_subbufs, NULL, NULL);
}

struct tracemap_cpu *tm_cpu_open_read_fd(int cpu, int fd, unsigned int subbuf_size,
					 int (*stats)(void *ctx, struct tracemap_cpu_stats *k),
					 void *ctx)
{
	struct tracemap_cpu *c;

	c = reader_alloc(fd >= 0 && stats, cpu, TRACEMAP_MODE_CONSUME, TRACEMAP_BACKEND_READ, fd,
			 subbuf_size);
	if (!c)
		return NULL;
	c->stats = stats;
	c->stats_ctx = ctx;
	return stand_in_ready(c);
}

int tm_cpu_kernel_stats(const struct tracemap_cpu *c, struct tracemap_cpu_stats *k)
{
	return c->stats ? c->stats(c->stats_ctx, k) : tm_cpu_stats_file(c->stats_path, k);
}

/**
 * tracemap_cpu_close - unmap and free a reader
 * @c: the reader; NULL is allowed
 *
 * In a child of the process that opened it, only the child's copies (of
 * the descriptor, of the memory) go: the parent's reader goes on.
 */
void tracemap_cpu_close(struct tracemap_cpu *c)
{
	if (!c)
		return;
	/* a child has no mapping: the range may hold one of its own by now */
	if (c->map && !tm_in_child(c->owner))
		munmap(c->map, c->map_len);
	if (c->fd >= 0)
		close(c->fd);
	free(c->rd.buf);
	tm_pages_free(c->snap.copies, (size_t)c->nr_subbufs * c->subbuf_size);
	free(c->snap.order);
	free(c->snap.byid);
	free(c->snap.slot);
	free(c->snap.slots);
	tm_snap_keep_free(c->snap.seed);
	free(c->follow.buf);
	free(c->pages.stage);
	free(c->stats_path);
	tm_consume_free(c);
	free(c);
}

/* ---------------------------------------------------------------- getters */

/**
 * tracemap_cpu_fd - the reader's trace_pipe_raw descriptor
 * @c: the reader
 *
 * For poll()/epoll: readable when the kernel's watermark is met. It stays
 * the reader's: do not read from it or close it.
 *
 * Returns the descriptor, or -EINVAL for a NULL reader.
 */
int tracemap_cpu_fd(const struct tracemap_cpu *c)
{
	return c ? c->fd : tm_err(EINVAL);
}

/**
 * tracemap_cpu_id - the CPU a reader reads
 * @c: the reader
 *
 * Returns the CPU number, or -EINVAL for a NULL reader.
 */
int tracemap_cpu_id(const struct tracemap_cpu *c)
{
	return c ? c->cpu : tm_err(EINVAL);
}

/**
 * tracemap_cpu_backend - how a reader reads: the mapping or read()
 * @c: the reader
 *
 * Returns TRACEMAP_BACKEND_MMAP or TRACEMAP_BACKEND_READ, or -EINVAL for a
 * NULL reader.
 */
enum tracemap_backend tracemap_cpu_backend(const struct tracemap_cpu *c)
{
	return c ? c->backend : (enum tracemap_backend)tm_err(EINVAL);
}

/**
 * tracemap_cpu_mode - the mode a reader was opened in
 * @c: the reader
 *
 * Returns a TRACEMAP_MODE_*, or -EINVAL for a NULL reader.
 */
enum tracemap_mode tracemap_cpu_mode(const struct tracemap_cpu *c)
{
	return c ? c->mode : (enum tracemap_mode)tm_err(EINVAL);
}

/**
 * tracemap_cpu_subbuf_size - the size of one sub-buffer, header included
 * @c: the reader
 *
 * Returns the size in bytes, or -EINVAL for a NULL reader.
 */
int tracemap_cpu_subbuf_size(const struct tracemap_cpu *c)
{
	return c ? (int)c->subbuf_size : tm_err(EINVAL);
}

/**
 * tracemap_cpu_nr_subbufs - the number of mapped sub-buffers
 * @c: the reader
 *
 * Returns the ring's sub-buffers plus the reader page, 0 for the read()
 * backend, or -EINVAL for a NULL reader.
 */
int tracemap_cpu_nr_subbufs(const struct tracemap_cpu *c)
{
	return c ? (int)c->nr_subbufs : tm_err(EINVAL);
}

/* -------------------------------------------------------- what sources share */

/* 0, or -EBADFD (once said why) for a reader used in a forked child */
static inline int usable(struct tracemap_cpu *c)
{
	return tm_in_child(c->owner) ? tm_child_refused("a tracemap_cpu reader", c->owner,
							&c->child_told) : 0;
}

int tm_cpu_usable(struct tracemap_cpu *c)
{
	return usable(c);
}

void tm_cpu_tally(struct tracemap_cpu *c, struct tm_tally *t)
{
	c->tally = t;
}

void tm_region_init(const struct tracemap_cpu *c, struct tracemap_region *r,
		    const unsigned char *sb, unsigned int id)
{
	memset(r, 0, sizeof(*r));
	r->subbuf = sb;
	r->data = sb + TM_SUBBUF_HDR;
	memcpy(&r->page_ts, sb, sizeof(r->page_ts));
	r->subbuf_size = c->subbuf_size;
	r->id = id;
	r->cpu = c->cpu;
}

/* Known counts add up; an unknown count stays unknown. */
long long tm_lost_add(long long a, long long b)
{
	if (a == TRACEMAP_LOST_UNKNOWN || b == TRACEMAP_LOST_UNKNOWN)
		return a || b ? TRACEMAP_LOST_UNKNOWN : 0;
	/* counts from a meta page that lies can be anything: no wrap to negative */
	if (a > LLONG_MAX - b)
		return TRACEMAP_LOST_UNKNOWN;
	return a + b;
}

long long tm_loss_flagged(struct tracemap_cpu *c, long long stored, uint64_t overrun)
{
	long long lost = stored;

	if (overrun == TM_OVERRUN_UNKNOWN) {
		if (lost > 0)
			c->loss.accounted += lost;
		return lost;
	}
	if (overrun < c->loss.accounted)
		c->loss.accounted = 0;	/* the counters were reset with the buffer */
	/* a difference no count can be (a lying meta page) stays unknown */
	if (lost == TRACEMAP_LOST_UNKNOWN && overrun > c->loss.accounted &&
	    overrun - c->loss.accounted <= (uint64_t)LLONG_MAX)
		lost = overrun - c->loss.accounted;
	/*
	 * The kernel stores what overrun grew by since its last swap, but the
	 * overrun of the meta page, which an unknown count falls back on, was
	 * read after the swap and may already hold losses that the next page's
	 * stored count reports again. So what is reported never passes
	 * overrun: a loss told early is not told twice. accounted never passes
	 * it either, or the next call would take it for a reset and hand the
	 * same page out again (a stored count that lies made that a loop).
	 */
	if (lost > 0 && (uint64_t)lost > overrun - c->loss.accounted)
		lost = (long long)(overrun - c->loss.accounted);
	if (lost > 0)
		c->loss.accounted += lost;
	return lost;
}

/*
 * A second consumer of this CPU buffer: another process that maps it and
 * calls GET_READER, or reads trace_pipe_raw. What it takes, we never see:
 * counted, and reported through the message sink at most once a second.
 */
void tm_loss_stolen(struct tracemap_cpu *c, uint64_t n)
{
	struct tm_loss *l = &c->loss;
	uint64_t now;

	c->st.stolen += n;
	now = tm_now_ns();
	if (l->stolen_told && now - l->stolen_warn_ns < 1000000000ULL)
		return;
	tm_log(TRACEMAP_LOG_WARN, "cpu%d: another reader consumes this CPU buffer: %llu events "
	       "so far went to it and not to us; stop the other reader (trace-cmd, cat "
	       "trace_pipe, another tracemap) or use an instance of your own",
	       c->cpu, (unsigned long long)c->st.stolen);
	l->stolen_told = c->st.stolen;
	l->stolen_warn_ns = now;
}

/* ---------------------------------------------------------------- regions */

static int read_region(struct tracemap_cpu *c, struct tracemap_region *r, bool walked)
{
	int ret;

	c->it.have_region = false;
	if (c->backend == TRACEMAP_BACKEND_READ)
		ret = tm_read_region(c, r);
	else if (c->mode == TRACEMAP_MODE_CONSUME)
		ret = tm_consume_region(c, r, walked);
	else if (c->mode == TRACEMAP_MODE_SNAPSHOT)
		ret = tm_snapshot_region(c, r);
	else
		ret = tm_follow_region(c, r);
	if (ret <= 0)
		return ret;

	tm_wake_data(&c->wake);
	c->st.pages++;
	c->st.bytes += r->end - r->start;
	if (r->lost > 0)
		c->st.lost += r->lost;
	else if (r->lost == TRACEMAP_LOST_UNKNOWN && c->mode == TRACEMAP_MODE_CONSUME)
		c->st.lost_unknown++;
	return 1;
}

/**
 * tracemap_cpu_read_region - the next new region of one sub-buffer
 * @c: the reader
 * @r: filled with the region, borrowed until the next call on @c
 *
 * Consume mode calls GET_READER (or read()); snapshot and follow mode hand
 * out validated copies. A region with data == NULL only reports a gap.
 *
 * Returns 1 with @r filled, 0 when nothing is new, or -errno.
 */
int tracemap_cpu_read_region(struct tracemap_cpu *c, struct tracemap_region *r)
{
	if (!c || !r)
		return tm_err(EINVAL);
	if (usable(c))
		return -EBADFD;
	return read_region(c, r, false);
}

/* -------------------------------------------------------------- events */

/* The record the walk found, as the next event of @c */
static inline void hand_out(struct tracemap_cpu *c, const struct tm_rec *rec,
			    struct tracemap_event *ev)
{
	tm_event_from_rec(ev, rec, c->cpu, c->it.missed);
	c->it.missed = 0;
	c->it.recs++;
	c->st.events++;
}

/*
 * The walk of the region tracemap_cpu_next_event() is on, lent to the
 * stream's merge, which runs a CPU ahead of the others through it in a loop
 * of its own (never a call into the kernel) and counts what it took with
 * tm_cpu_walked(). NULL when there is no region. A loss before the region
 * went out with its first event, so the records left carry none.
 */
struct tm_walk *tm_cpu_region_walk(struct tracemap_cpu *c)
{
	return c->it.have_region ? &c->it.walk : NULL;
}

void tm_cpu_walked(struct tracemap_cpu *c, unsigned int n)
{
	c->it.recs += n;
	c->st.events += n;
}

/**
 * tracemap_cpu_next_event - the next event of one CPU
 * @c: the reader
 * @ev: filled with the event; its payload is borrowed like a region
 *
 * Walks the current region and fetches the next one when it is done.
 *
 * Returns 1 with @ev filled, 0 when nothing is new, or -errno; -EBADMSG for
 * a corrupt record: the rest of its region is skipped and counted, and the
 * next call continues.
 */
int tracemap_cpu_next_event(struct tracemap_cpu *c, struct tracemap_event *ev)
{
	unsigned int regions = 0;
	struct tm_iter *it;
	struct tm_rec rec;
	int ret;

	if (!c || !ev)
		return tm_err(EINVAL);
	if (usable(c))
		return -EBADFD;
	it = &c->it;
	for (;;) {
		if (it->have_region) {
			ret = tm_walk_next(&it->walk, &rec);
			if (ret > 0) {
				hand_out(c, &rec, ev);
				return 1;
			}
			it->have_region = false;
			/* the consuming walk continues from here on the same page */
			if (c->mode == TRACEMAP_MODE_CONSUME && c->backend == TRACEMAP_BACKEND_MMAP)
				tm_consume_walked(c, it->region.id, &it->walk, ret < 0,
						  it->recs);
			if (ret < 0) {
				c->st.corrupt++;
				it->missed = TRACEMAP_LOST_UNKNOWN;
				tm_log(TRACEMAP_LOG_WARN, "cpu%d: corrupt record at offset %u of "
				       "sub-buffer %u: rest of the region skipped", c->cpu,
				       it->walk.off, it->region.id);
				return tm_err(EBADMSG);
			}
		}
		/*
		 * Regions without an event (gaps, corrupt tails) are bounded per
		 * call: a ring has nr_subbufs pages, and a mapping that lies must
		 * not keep this call from returning.
		 */
		if (++regions > 2 * (c->nr_subbufs > 8 ? c->nr_subbufs : 8) + 2)
			return 0;
		ret = read_region(c, &it->region, true);
		if (ret <= 0)
			return ret;
		it->recs = 0;
		it->walk = (struct tm_walk){ it->region.data, it->region.start, it->region.end,
					     it->region.base_ts };
		/* a gap with no event after it yet waits for the next event */
		it->missed = tm_lost_add(it->missed, it->region.lost);
		it->have_region = true;
	}
}

/**
 * tracemap_event_to_record - an event as libtraceevent's record
 * @ev: the event
 * @rec: filled to point at @ev's payload, valid as long as the event
 *
 * For tep_print_event() and the tep_* field readers; nothing is copied. A
 * NULL @ev or @rec sets errno to EINVAL and changes nothing.
 */
void tracemap_event_to_record(const struct tracemap_event *ev, struct tep_record *rec)
{
	if (!ev || !rec) {
		tm_err(EINVAL);
		return;
	}
	memset(rec, 0, sizeof(*rec));
	rec->ts = ev->ts;
	rec->offset = ev->offset;
	rec->missed_events = ev->missed;
	rec->record_size = ev->size;
	rec->size = ev->size;
	rec->data = (void *)ev->data;
	rec->cpu = ev->cpu;
	rec->locked = 1;
}

/* --------------------------------------------------------------- pages */

/**
 * tracemap_cpu_read_page - whole sub-buffers as trace-cmd writes them
 * @c: the reader
 * @buf: receives one self-contained sub-buffer
 * @size: bytes at @buf, at least the sub-buffer size
 * @flags: TRACEMAP_PAGE_FLUSH to hand out a partial page too
 *
 * A page is complete once the kernel moved past it; lost events go into the
 * commit flags (and the count, where there is room).
 *
 * Returns the sub-buffer size, 0 when no page is ready, or -errno.
 */
int tracemap_cpu_read_page(struct tracemap_cpu *c, void *buf, size_t size, unsigned int flags)
{
	if (!c || !buf || size < c->subbuf_size)
		return tm_err(EINVAL);
	if (usable(c))
		return -EBADFD;
	return tm_pages_read(c, buf, NULL, flags);
}

int tm_cpu_read_page_at(struct tracemap_cpu *c, void *buf, const unsigned char **page,
			unsigned int flags)
{
	return tm_pages_read(c, buf, page, flags);
}

struct tm_snap_keep *tm_cpu_keep_copies(struct tracemap_cpu *c)
{
	return tm_snapshot_keep(c);
}

void tm_cpu_copy_changed(struct tracemap_cpu *c, const unsigned char *page)
{
	tm_snapshot_changed(c, page);
}

bool tm_cpu_copy_clean(const struct tracemap_cpu *c, const unsigned char *page)
{
	return tm_snapshot_clean(c, page);
}

/**
 * tracemap_cpu_pending_since - how long a partial page has been held
 * @c: the reader
 *
 * Returns the CLOCK_MONOTONIC time in ns at which the partial page that
 * tracemap_cpu_read_page() holds back was started, or 0 if none is held.
 */
uint64_t tracemap_cpu_pending_since(const struct tracemap_cpu *c)
{
	return c ? tm_pages_pending_since(c) : 0;
}

/**
 * tracemap_cpu_rewind - drop what is partly read
 * @c: the reader
 *
 * Drops the current region and any held page; a snapshot or follow reader
 * copies the buffer again on its next call.
 *
 * Returns 0, or -EINVAL for a NULL reader.
 */
int tracemap_cpu_rewind(struct tracemap_cpu *c)
{
	if (!c)
		return tm_err(EINVAL);
	if (usable(c))
		return -EBADFD;
	c->it.have_region = false;
	tm_pages_drop(c);
	tm_snapshot_rewind(c);
	return 0;
}

/* ---------------------------------------------------------- statistics */

/* Records left in the region the event iterator walks: taken, not delivered. */
static uint64_t held_in_region(const struct tracemap_cpu *c)
{
	struct tm_walk w = c->it.walk;
	struct tm_rec rec;
	uint64_t n = 0;

	if (!c->it.have_region || c->mode != TRACEMAP_MODE_CONSUME)
		return 0;
	while (tm_walk_next(&w, &rec) > 0)
		n++;
	return n;
}

/**
 * tracemap_cpu_stats - a reader's counters and the kernel's
 * @c: the reader
 * @st: receives the statistics
 * @sz: sizeof(*@st) as the caller knows it; min(@sz, sizeof) bytes are copied
 *
 * The kernel_* fields come from the meta page, or for the read() backend
 * from per_cpu/cpuN/stats (a file read).
 *
 * Returns 0, or -EINVAL.
 */
int tracemap_cpu_stats(const struct tracemap_cpu *c, struct tracemap_cpu_stats *st, size_t sz)
{
	struct tracemap_cpu_stats s;
	struct tm_meta m;

	if (!c || !st)
		return tm_err(EINVAL);
	if (usable((struct tracemap_cpu *)c))
		return -EBADFD;
	s = c->st;
	s.held = held_in_region(c) + c->held_by_stream;
	if (c->meta) {
		/* pairs with rb_update_meta_page(): the counters as of the last update */
		tm_meta_load(c->meta, &m);
		s.kernel_entries = m.entries;
		s.kernel_overrun = m.overrun;
		s.kernel_read = m.nread;
	} else {
		tm_cpu_kernel_stats(c, &s);
	}
	if (c->backend == TRACEMAP_BACKEND_READ)
		s.skipped = tm_read_skipped(c);
	memcpy(st, &s, sz < sizeof(s) ? sz : sizeof(s));
	return 0;
}

/**
 * tracemap_cpu_stats_unread - events the kernel holds that were not handed out
 * @st: statistics from tracemap_cpu_stats()
 *
 * Events the kernel skipped (@st->skipped) are not held any more: it counts
 * them unread, but they were reported lost and nothing hands them out.
 *
 * Returns kernel_entries - kernel_overrun - kernel_read - skipped, or 0 when
 * the counters were taken across a reset and do not add up.
 */
uint64_t tracemap_cpu_stats_unread(const struct tracemap_cpu_stats *st)
{
	uint64_t left;

	if (!st)
		return 0;
	/* one subtraction at a time: a sum of counters that lie could wrap */
	left = st->kernel_entries;
	if (left < st->kernel_overrun)
		return 0;
	left -= st->kernel_overrun;
	if (left < st->kernel_read)
		return 0;
	left -= st->kernel_read;
	return left < st->skipped ? 0 : left - st->skipped;
}

void tm_cpu_count_wakeup(struct tracemap_cpu *c)
{
	c->st.wakeups++;
}

void tm_cpu_count_own(struct tracemap_cpu *c, bool helper)
{
	if (helper)
		c->st.helper++;
	else
		c->st.own++;
}

void tm_cpu_hold(struct tracemap_cpu *c, bool held)
{
	if (held == c->held_by_stream)
		return;
	c->held_by_stream = held;
	if (held)
		c->st.events--;
	else
		c->st.events++;
}

uint64_t tm_cpu_cleared(const struct tracemap_cpu *c)
{
	return c->st.cleared;
}

void tm_cpu_count_late(struct tracemap_cpu *c)
{
	c->st.late++;
}

uint64_t tm_cpu_regions(const struct tracemap_cpu *c)
{
	return c->st.pages;
}

unsigned int tm_cpu_region_id(const struct tracemap_cpu *c)
{
	return c->it.region.id;
}

bool tm_cpu_region_left(const struct tracemap_cpu *c)
{
	return c->it.have_region && c->it.walk.off < c->it.walk.end;
}

bool tm_cpu_writer_left(struct tracemap_cpu *c)
{
	return c->backend == TRACEMAP_BACKEND_MMAP && c->mode == TRACEMAP_MODE_CONSUME &&
	       tm_consume_writer_left(c);
}

uint64_t tm_cpu_backlog(const struct tracemap_cpu *c)
{
	struct tracemap_cpu_stats s = { 0 };
	struct tm_meta m;

	/* read(): the stats file as read after the last page, no file read per choice */
	if (c->backend == TRACEMAP_BACKEND_READ)
		return tm_read_backlog(c);
	if (!c->meta)
		return 0;
	tm_meta_load(c->meta, &m);
	s.kernel_entries = m.entries;
	s.kernel_overrun = m.overrun;
	s.kernel_read = m.nread;
	return tracemap_cpu_stats_unread(&s);
}
