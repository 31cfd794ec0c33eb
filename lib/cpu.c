// SPDX-License-Identifier: LGPL-2.1
/*
 * The per-CPU reader: one state machine over three sources of regions
 * (consuming through GET_READER or read(), snapshot and follow through
 * validated copies), one event iterator and one page builder on top.
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

#include "tracemap-local.h"

#define NO_ID	UINT_MAX
/* after a GET_READER that handed out nothing the kernel counts as unread */
#define TM_HOLD_BACK_NS	(1000 * 1000)

struct snap_page {
	uint64_t ts;
	unsigned int id;
	unsigned int start;
	unsigned int size;
};

struct tracemap_cpu {
	int fd;
	int cpu;
	enum tracemap_mode mode;
	enum tracemap_backend backend;
	unsigned int subbuf_size;
	unsigned int nr_subbufs;

	/* the mapping (BACKEND_MMAP) */
	void *map;
	size_t map_len;
	const struct trace_buffer_meta *meta;
	const unsigned char *subbufs;

	/* consuming: position on the reader page and the time known at walk_off */
	unsigned int id;
	unsigned int off;
	unsigned int walk_off;
	uint64_t walk_ts;
	bool walk_bad;
	uint64_t seen_entries;
	uint64_t seen_read;
	uint64_t lost_accounted;
	uint64_t held_until;		/* no GET_READER before this (tm_now_ns()) */
	uint64_t seen_overrun;

	/* read() backend: one page copy */
	unsigned char *rbuf;
	unsigned int read_seq;
	/* per_cpu/cpuN/stats: the counters when the meta page does not have them */
	char *stats_path;

	/* snapshot and follow: validated copies of every sub-buffer */
	unsigned char *copies;
	struct snap_page *byid;		/* the copy of each sub-buffer */
	struct snap_page *order;	/* what the snapshot hands out, oldest first */
	unsigned int nr_order;
	unsigned int next_order;
	bool scanned;
	bool snap_unsure;
	long long pending_lost;
	struct {
		bool valid;
		bool complete;
		unsigned int id;
		unsigned int off;
		uint64_t ts;
		uint64_t walk_ts;
	} cur;
	unsigned char *fbuf;

	/* event iterator over the current region */
	struct tracemap_region region;
	struct tm_walk ev_walk;
	long long ev_missed;
	bool have_region;

	/* page builder */
	unsigned char *stage;
	bool staged;
	unsigned int stage_id;
	unsigned int stage_start;
	unsigned int stage_end;
	uint64_t stage_base;
	long long stage_lost;
	uint64_t stage_since;
	bool stage_complete;

	struct tracemap_cpu_stats st;
};

static inline const unsigned char *subbuf_at(const struct tracemap_cpu *c, unsigned int id)
{
	return c->subbufs + (size_t)id * c->subbuf_size;
}

static inline unsigned int data_cap(const struct tracemap_cpu *c)
{
	return c->subbuf_size - TM_SUBBUF_HDR;
}

static void snapshot_scan(struct tracemap_cpu *c);

/* ------------------------------------------------------------ open/close */

static int check_header_page(const char *tracefs)
{
	char path[4096], buf[1024];
	const char *p;

	snprintf(path, sizeof(path), "%s/events/header_page", tracefs);
	if (tm_read_file(path, buf, sizeof(buf)) < 0)
		return 0; /* old or restricted tracefs: assume the 64-bit layout */
	p = strstr(buf, "field: char data;");
	if (p && !strstr(p, "offset:16;")) {
		tm_log(TRACEMAP_LOG_ERROR, "%s: sub-buffer data does not start at offset 16 (a "
		       "32-bit kernel?): not supported", path);
		return tm_err(EPROTO);
	}
	return 0;
}

static int read_subbuf_size(const char *idir)
{
	char path[4096], buf[64];
	long kb;

	snprintf(path, sizeof(path), "%s/buffer_subbuf_size_kb", idir);
	if (tm_read_file(path, buf, sizeof(buf)) > 0) {
		kb = strtol(buf, NULL, 10);
		if (kb > 0 && kb <= 1024 * 1024)
			return (int)kb * 1024;
	}
	return getpagesize();
}

static bool cpu_online(int cpu)
{
	char path[128], buf[16];

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	if (tm_read_file(path, buf, sizeof(buf)) <= 0)
		return true; /* cpu0 often has no online file */
	return buf[0] == '1';
}

static int map_buffer(struct tracemap_cpu *c, const char *path)
{
	const struct trace_buffer_meta *probe;
	long pagesz = getpagesize();
	unsigned int msz, len, sbs, nr;
	void *map;
	int e;

	probe = mmap(NULL, pagesz, PROT_READ, MAP_SHARED, c->fd, 0);
	if (probe == MAP_FAILED)
		return tm_err(errno);

	/* fixed at mapping time: the kernel only rewrites reader/counters */
	msz = probe->meta_page_size;
	len = probe->meta_struct_len;
	sbs = probe->subbuf_size;
	nr = probe->nr_subbufs;
	if (len < TRACE_BUFFER_META_MIN_LEN || len > msz || msz < (unsigned int)pagesz ||
	    msz % pagesz || sbs < 64 || sbs % 16 || sbs > 64u << 20 || nr < 2) {
		tm_log(TRACEMAP_LOG_ERROR, "%s: meta page not understood (meta_page_size %u, "
		       "meta_struct_len %u, subbuf_size %u, nr_subbufs %u): update libtracemap "
		       "for this kernel", path, msz, len, sbs, nr);
		munmap((void *)probe, pagesz);
		return tm_err(EPROTO);
	}
	c->map_len = (size_t)msz + (size_t)nr * sbs;
	map = mmap(NULL, c->map_len, PROT_READ, MAP_SHARED, c->fd, 0);
	e = errno;
	munmap((void *)probe, pagesz);
	if (map == MAP_FAILED)
		return tm_err(e);

	c->map = map;
	c->meta = map;
	c->subbufs = (const unsigned char *)map + msz;
	c->subbuf_size = sbs;
	c->nr_subbufs = nr;
	return 0;
}

static int alloc_buffers(struct tracemap_cpu *c)
{
	c->stage = malloc(c->subbuf_size);
	if (!c->stage)
		return tm_err(ENOMEM);
	if (c->backend == TRACEMAP_BACKEND_READ) {
		c->rbuf = malloc(c->subbuf_size);
		return c->rbuf ? 0 : tm_err(ENOMEM);
	}
	if (c->mode == TRACEMAP_MODE_CONSUME)
		return 0;
	c->copies = malloc((size_t)c->nr_subbufs * c->subbuf_size);
	c->order = calloc(c->nr_subbufs, sizeof(*c->order));
	c->byid = calloc(c->nr_subbufs, sizeof(*c->byid));
	c->fbuf = malloc(c->subbuf_size);
	return c->copies && c->order && c->byid && c->fbuf ? 0 : tm_err(ENOMEM);
}

/*
 * The kernel reports a loss once, on the first page it hands out after it:
 * as a count stored after the data when there is room, else only as a flag.
 * lost_accounted follows the kernel's overrun counter as of that report, so
 * a flag without a count is worth what overrun grew by since the last one.
 * A reader that opens before anything was read starts from 0: the loss
 * the kernel has not reported yet is in overrun but on no page seen so far.
 */
static uint64_t lost_base(uint64_t overrun, uint64_t nread)
{
	return nread ? overrun : 0;
}

static long long flagged_lost(struct tracemap_cpu *c, long long stored, uint64_t overrun)
{
	long long lost = stored;

	if (overrun < c->lost_accounted)
		c->lost_accounted = 0;	/* the counters were reset with the buffer */
	if (lost == TRACEMAP_LOST_UNKNOWN && overrun > c->lost_accounted)
		lost = overrun - c->lost_accounted;
	if (lost > 0)
		c->lost_accounted += lost;
	return lost;
}

/* "overrun:" and "read events:" of per_cpu/cpuN/stats (read backend, follow gaps) */
static int read_cpu_stats(const struct tracemap_cpu *c, uint64_t *overrun, uint64_t *nread)
{
	char buf[1024], *p, *q;
	int ret;

	ret = tm_read_file(c->stats_path, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	p = strstr(buf, "\noverrun:");
	q = strstr(buf, "\nread events:");
	if (!p || !q)
		return tm_err(EPROTO);
	*overrun = strtoull(p + 9, NULL, 10);
	*nread = strtoull(q + 13, NULL, 10);
	return 0;
}

static void init_consume(struct tracemap_cpu *c)
{
	const struct trace_buffer_meta *m = c->meta;
	uint64_t overrun, nread;

	if (!m) {
		if (read_cpu_stats(c, &overrun, &nread))
			overrun = nread = 0;
		c->lost_accounted = lost_base(overrun, nread);
		c->seen_read = nread;
		return;
	}

	/* pairs with rb_update_meta_page() at mmap time: start after what was consumed */
	c->id = __atomic_load_n(&m->reader.id, __ATOMIC_ACQUIRE);
	c->off = __atomic_load_n(&m->reader.read, __ATOMIC_RELAXED);
	c->walk_off = 0;
	c->walk_ts = c->id < c->nr_subbufs ?
		__atomic_load_n((const uint64_t *)subbuf_at(c, c->id), __ATOMIC_RELAXED) : 0;
	c->walk_bad = false;
	c->seen_entries = __atomic_load_n(&m->entries, __ATOMIC_RELAXED);
	c->seen_read = __atomic_load_n(&m->read, __ATOMIC_RELAXED);
	c->seen_overrun = __atomic_load_n(&m->overrun, __ATOMIC_RELAXED);
	c->lost_accounted = lost_base(c->seen_overrun, c->seen_read);
}

struct tracemap_cpu *tracemap_cpu_open(const char *instance, int cpu,
				       const struct tracemap_cpu_opts *opts)
{
	char tfs[4096], idir[4096], path[4200];
	struct tracemap_cpu_opts o = { .mode = TRACEMAP_MODE_CONSUME };
	struct tracemap_cpu *c = NULL;
	struct stat st;
	int ret;

	if (opts && tm_opts_copy(&o, sizeof(o), opts, offsetof(struct tracemap_cpu_opts,
							       tracefs_dir) + sizeof(o.tracefs_dir),
				 "tracemap_cpu_opts"))
		return NULL;
	if (o.flags & ~(TRACEMAP_CPU_FORCE_READ | TRACEMAP_CPU_NO_FALLBACK)) {
		tm_log(TRACEMAP_LOG_ERROR, "tracemap_cpu_opts.flags %#x has bits this libtracemap "
		       "does not know (%#x): pass only TRACEMAP_CPU_* flags", o.flags,
		       o.flags & ~(TRACEMAP_CPU_FORCE_READ | TRACEMAP_CPU_NO_FALLBACK));
		tm_err(EINVAL);
		return NULL;
	}
	if (cpu < 0 || o.mode > TRACEMAP_MODE_FOLLOW) {
		tm_log(TRACEMAP_LOG_ERROR, "invalid %s %d: pass a CPU number >= 0 and a "
		       "TRACEMAP_MODE_*", cpu < 0 ? "CPU" : "mode", cpu < 0 ? cpu : (int)o.mode);
		tm_err(EINVAL);
		return NULL;
	}
	if (o.mode != TRACEMAP_MODE_CONSUME && (o.flags & TRACEMAP_CPU_FORCE_READ)) {
		tm_log(TRACEMAP_LOG_ERROR, "the %s mode reads without consuming, which needs the "
		       "mapping: drop TRACEMAP_CPU_FORCE_READ or use TRACEMAP_MODE_CONSUME",
		       o.mode == TRACEMAP_MODE_SNAPSHOT ? "snapshot" : "follow");
		tm_err(EINVAL);
		return NULL;
	}
	ret = tm_tracefs_dir(o.tracefs_dir, tfs, sizeof(tfs));
	if (!ret)
		ret = tm_instance_dir(tfs, instance, idir, sizeof(idir));
	if (!ret)
		ret = check_header_page(tfs);
	if (ret)
		return NULL;

	snprintf(path, sizeof(path), "%s/per_cpu/cpu%d", idir, cpu);
	if (stat(path, &st)) {
		tm_log(TRACEMAP_LOG_ERROR, "CPU %d has no ring buffer (%s missing): the CPU does "
		       "not exist; use one listed in /sys/devices/system/cpu/possible", cpu, path);
		tm_err(ENXIO);
		return NULL;
	}

	c = calloc(1, sizeof(*c));
	if (!c) {
		tm_err(ENOMEM);
		return NULL;
	}
	c->fd = -1;
	c->cpu = cpu;
	c->mode = o.mode;
	c->id = NO_ID;
	c->cur.id = NO_ID;

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
		c->subbuf_size = read_subbuf_size(idir);
		c->nr_subbufs = 0;
	}
	snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/stats", idir, cpu);
	c->stats_path = strdup(path);
	if (!c->stats_path) {
		ret = ENOMEM;
		goto fail;
	}
	init_consume(c);
	ret = -alloc_buffers(c);
	if (ret)
		goto fail;
	/* "what is in the buffer now" is at open: what follows is then accounted for */
	if (c->mode != TRACEMAP_MODE_CONSUME)
		snapshot_scan(c);
	return c;
fail:
	tracemap_cpu_close(c);
	errno = ret;
	return NULL;
}

void tracemap_cpu_close(struct tracemap_cpu *c)
{
	if (!c)
		return;
	if (c->map)
		munmap(c->map, c->map_len);
	if (c->fd >= 0)
		close(c->fd);
	free(c->rbuf);
	free(c->stats_path);
	free(c->copies);
	free(c->order);
	free(c->byid);
	free(c->fbuf);
	free(c->stage);
	free(c);
}

int tracemap_cpu_fd(const struct tracemap_cpu *c)
{
	return c ? c->fd : tm_err(EINVAL);
}

int tracemap_cpu_id(const struct tracemap_cpu *c)
{
	return c ? c->cpu : tm_err(EINVAL);
}

enum tracemap_backend tracemap_cpu_backend(const struct tracemap_cpu *c)
{
	return c ? c->backend : (enum tracemap_backend)tm_err(EINVAL);
}

enum tracemap_mode tracemap_cpu_mode(const struct tracemap_cpu *c)
{
	return c ? c->mode : (enum tracemap_mode)tm_err(EINVAL);
}

int tracemap_cpu_subbuf_size(const struct tracemap_cpu *c)
{
	return c ? (int)c->subbuf_size : tm_err(EINVAL);
}

int tracemap_cpu_nr_subbufs(const struct tracemap_cpu *c)
{
	return c ? (int)c->nr_subbufs : tm_err(EINVAL);
}

/* ------------------------------------------------------ region sources */

static void region_init(const struct tracemap_cpu *c, struct tracemap_region *r,
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
static long long lost_add(long long a, long long b)
{
	if (a == TRACEMAP_LOST_UNKNOWN || b == TRACEMAP_LOST_UNKNOWN)
		return a || b ? TRACEMAP_LOST_UNKNOWN : 0;
	return a + b;
}

static int consume_mmap_region(struct tracemap_cpu *c, struct tracemap_region *r)
{
	const struct trace_buffer_meta *m = c->meta;
	uint64_t entries, nread, overrun, commit;
	const unsigned char *sb;
	unsigned int id, rd;
	long long lost = 0;
	struct tm_walk w;

	/* see "kernel holds back" below: not again at once */
	if (c->held_until && tm_now_ns() < c->held_until)
		return 0;
	c->held_until = 0;
	if (ioctl(c->fd, TRACE_MMAP_IOCTL_GET_READER) < 0)
		return tm_err(errno);
	c->st.get_reader++;

	/* pairs with rb_update_meta_page() under the reader lock in the ioctl */
	id = __atomic_load_n(&m->reader.id, __ATOMIC_ACQUIRE);
	rd = __atomic_load_n(&m->reader.read, __ATOMIC_RELAXED);
	entries = __atomic_load_n(&m->entries, __ATOMIC_RELAXED);
	nread = __atomic_load_n(&m->read, __ATOMIC_RELAXED);
	if (id >= c->nr_subbufs || rd > data_cap(c)) {
		tm_log(TRACEMAP_LOG_ERROR, "cpu%d: meta page reader id %u read %u out of range",
		       c->cpu, id, rd);
		return tm_err(EPROTO);
	}

	overrun = __atomic_load_n(&m->overrun, __ATOMIC_RELAXED);
	if (entries < c->seen_entries || nread < c->seen_read || overrun < c->lost_accounted) {
		/* the buffer was reset (echo > trace, clock change): start over */
		c->lost_accounted = 0;
		c->id = NO_ID;
	}
	c->seen_entries = entries;
	c->seen_read = nread;

	sb = subbuf_at(c, id);
	if (id != c->id || rd < c->off) {
		c->id = id;
		c->off = 0;
		c->walk_off = 0;
		c->walk_ts = __atomic_load_n((const uint64_t *)sb, __ATOMIC_RELAXED);
		c->walk_bad = false;
		/* flags are set once, when the page became the reader page in this ioctl */
		commit = __atomic_load_n((const uint64_t *)(sb + 8), __ATOMIC_RELAXED);
		if ((uint32_t)commit & TM_MISSED_EVENTS)
			lost = flagged_lost(c, tm_subbuf_lost(sb, c->subbuf_size), overrun);
	}
	if (rd <= c->off && !lost) {
		/*
		 * Kernel holds back: it counts unread events but handed out
		 * nothing. That is what ring_buffer_map_get_reader() leaves
		 * behind when the swap it tried found no reader page (the
		 * WARN_ON(!reader) 6.18 still has, seen only in overwrite mode
		 * while the writer laps the reader, i.e. while overrun grows).
		 * Each further call tries the same swap and warns again, so a
		 * caller that calls again at once (a busy loop, a stream round,
		 * poll() saying readable) would flood the kernel log: no
		 * GET_READER on this CPU for TM_HOLD_BACK_NS, by when the
		 * writer has moved on. Without overwrite losses (an event being
		 * committed also looks like this, for a moment) nothing waits.
		 */
		if (entries > overrun + nread && overrun != c->seen_overrun)
			c->held_until = tm_now_ns() + TM_HOLD_BACK_NS;
		c->seen_overrun = overrun;
		return 0;
	}
	c->seen_overrun = overrun;

	region_init(c, r, sb, id);
	r->start = c->off;
	r->end = rd > c->off ? rd : c->off;
	r->lost = lost;
	c->off = r->end;

	if (c->walk_off != r->start && !c->walk_bad) {
		w = (struct tm_walk){ r->data, c->walk_off, r->start, c->walk_ts };
		if (tm_walk_skip(&w, r->start) < 0)
			c->walk_bad = true;
		c->walk_off = w.off;
		c->walk_ts = w.ts;
	}
	if (c->walk_bad) {
		/* the time base is lost with the corrupt record: report, skip */
		c->st.corrupt++;
		r->start = r->end;
		r->lost = TRACEMAP_LOST_UNKNOWN;
	}
	r->base_ts = c->walk_ts;
	return 1;
}

static int consume_read_region(struct tracemap_cpu *c, struct tracemap_region *r)
{
	unsigned int size;
	uint64_t commit;
	ssize_t n;

	n = read(c->fd, c->rbuf, c->subbuf_size);
	c->st.reads++;
	if (n < 0)
		return errno == EAGAIN ? 0 : tm_err(errno);
	if (n == 0)
		return 0;
	if (n < TM_SUBBUF_HDR)
		return tm_err(EPROTO);
	memcpy(&commit, c->rbuf + 8, sizeof(commit));
	size = TM_COMMIT_SIZE(commit);
	if (size > (unsigned int)n - TM_SUBBUF_HDR) {
		c->st.corrupt++;
		tm_log(TRACEMAP_LOG_WARN, "cpu%d: read() page commit %u beyond %zd bytes",
		       c->cpu, size, n);
		return tm_err(EBADMSG);
	}
	region_init(c, r, c->rbuf, c->read_seq++);
	r->end = size;
	r->base_ts = r->page_ts;
	r->lost = tm_subbuf_lost(c->rbuf, c->subbuf_size);
	if (r->lost) {
		uint64_t overrun = 0, nread;

		/* a full page has no room for the count: the stats file has the counter */
		if (r->lost == TRACEMAP_LOST_UNKNOWN && !read_cpu_stats(c, &overrun, &nread)) {
			/* events read since the reset, this page's included: fewer means a reset */
			if (nread < c->seen_read)
				c->lost_accounted = 0;
			c->seen_read = nread;
		}
		r->lost = flagged_lost(c, r->lost, overrun);
	}
	r->flags = TRACEMAP_REGION_COMPLETE;
	return 1;
}

static int cmp_snap(const void *a, const void *b)
{
	const struct snap_page *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Validated copy of one sub-buffer into copies[id], retried while it tears. */
static int copy_page(struct tracemap_cpu *c, unsigned int id, uint64_t *ts, unsigned int *size)
{
	unsigned char *dst = c->copies + (size_t)id * c->subbuf_size;
	int tries;

	for (tries = 0; tries < 4; tries++)
		if (!tm_subbuf_copy(dst, subbuf_at(c, id), c->subbuf_size, ts, size))
			return 0;
	return tm_err(EAGAIN);
}

/*
 * Bring the copies of every sub-buffer up to date: copy each page whose
 * header changed since its last copy (all of them on the first pass).
 * Returns true when the only change was growth of the newest page.
 *
 * Copies taken one after the other while the writer goes on need not fit
 * together: a page copied before the writer recycled it lacks its new
 * content, and a page copied later may already hold what followed, a gap
 * in the middle. A pass that finds every other page as copied proves the
 * set gap-free: the writer changes only the newest page and, moving on,
 * the oldest one, so a page recycled after its check holds data newer than
 * all we have, and the one after it would have been seen changed.
 */
static bool snapshot_pass(struct tracemap_cpu *c, bool first)
{
	unsigned int i, size, grown = NO_ID, newest = NO_ID;
	uint64_t ts, commit;
	bool other = false;

	for (i = 0; i < c->nr_subbufs; i++) {
		struct snap_page *p = &c->byid[i];
		const unsigned char *sb = subbuf_at(c, i);

		if (!first) {
			/* time stamp before commit: the writer's order reversed (tm_subbuf_copy) */
			ts = __atomic_load_n((const uint64_t *)sb, __ATOMIC_ACQUIRE);
			commit = __atomic_load_n((const uint64_t *)(sb + 8), __ATOMIC_ACQUIRE);
			if (p->id != NO_ID && ts == p->ts && TM_COMMIT_SIZE(commit) == p->size)
				continue;
			if (p->id != NO_ID && ts == p->ts && TM_COMMIT_SIZE(commit) > p->size &&
			    grown == NO_ID)
				grown = i;
			else
				other = true;
		}
		if (copy_page(c, i, &ts, &size)) {
			*p = (struct snap_page){ .id = NO_ID };
			other = true;
			continue;
		}
		/* recycled between the look and the copy */
		if (grown == i && ts != p->ts)
			other = true;
		*p = (struct snap_page){ .ts = ts, .id = i, .size = size };
	}
	for (i = 0; i < c->nr_subbufs; i++)
		if (c->byid[i].id != NO_ID && c->byid[i].size &&
		    (newest == NO_ID || c->byid[i].ts > c->byid[newest].ts))
			newest = i;
	return !first && !other && (grown == NO_ID || grown == newest);
}

/*
 * Copy every sub-buffer, order by time, and keep what the reader page has not
 * handed out: pages older than the reader page were consumed and only wait in
 * the ring to be overwritten.
 */
static void snapshot_scan(struct tracemap_cpu *c)
{
	const struct trace_buffer_meta *m = c->meta;
	unsigned int rid, rread, i, n = 0, keep = 0, pass;
	struct snap_page *rp = NULL;
	bool settled = false;

	rid = __atomic_load_n(&m->reader.id, __ATOMIC_ACQUIRE);
	rread = __atomic_load_n(&m->reader.read, __ATOMIC_RELAXED);
	for (pass = 0; pass < 16 && !settled; pass++)
		settled = snapshot_pass(c, !pass);
	for (i = 0; i < c->nr_subbufs; i++)
		if (c->byid[i].id != NO_ID && c->byid[i].size)
			c->order[n++] = c->byid[i];
	qsort(c->order, n, sizeof(*c->order), cmp_snap);
	/* the writer outran us every time: any page boundary may hide a gap */
	c->snap_unsure = !settled;
	c->pending_lost = 0;
	if (!settled)
		c->st.lost_unknown++;
	for (i = 0; i < n; i++)
		if (c->order[i].id == rid)
			rp = &c->order[i];
	for (i = 0; i < n; i++) {
		struct snap_page p = c->order[i];

		if (p.id == rid) {
			p.start = rread;
			if (p.start >= p.size)
				continue;
		} else if (rp && p.ts <= rp->ts) {
			continue;
		}
		c->order[keep++] = p;
	}
	c->nr_order = keep;
	c->next_order = 0;
	c->scanned = true;

	/* where follow mode starts when the snapshot holds nothing new */
	c->cur.valid = false;
	c->cur.complete = false;
	c->cur.id = rp ? rp->id : NO_ID;
	c->cur.ts = rp ? rp->ts : 0;
	if (rp && rread >= rp->size) {
		c->cur.valid = true;
		c->cur.id = rid;
		c->cur.off = rread;
		/* the time at rread is found by walking from 0 when the page grows */
		c->cur.walk_ts = UINT64_MAX;
	}
}

/* Fill @r from a validated copy, computing the time at start and at end. */
static int copy_region(struct tracemap_cpu *c, struct tracemap_region *r, const unsigned char *sb,
		       unsigned int id, unsigned int start, unsigned int end, uint64_t base_ts,
		       uint64_t *end_ts)
{
	struct tm_walk w;

	region_init(c, r, sb, id);
	w = (struct tm_walk){ r->data, 0, end, r->page_ts };
	if (base_ts != UINT64_MAX && start) {
		w.off = start;
		w.ts = base_ts;
	}
	if (tm_walk_skip(&w, start) < 0)
		goto corrupt;
	r->base_ts = w.ts;
	r->start = start;
	r->end = end;
	if (tm_walk_skip(&w, end) < 0)
		goto corrupt;
	*end_ts = w.ts;
	return 1;
corrupt:
	c->st.corrupt++;
	tm_log(TRACEMAP_LOG_WARN, "cpu%d: corrupt record in sub-buffer %u: skipped", c->cpu, id);
	r->start = r->end = end;
	r->base_ts = r->page_ts;
	r->lost = TRACEMAP_LOST_UNKNOWN;
	*end_ts = r->page_ts;
	return 1;
}

static int snapshot_region(struct tracemap_cpu *c, struct tracemap_region *r)
{
	struct snap_page *p;
	uint64_t end_ts;

	if (!c->scanned)
		snapshot_scan(c);
	if (c->next_order >= c->nr_order)
		return 0;
	p = &c->order[c->next_order++];
	copy_region(c, r, c->copies + (size_t)p->id * c->subbuf_size, p->id, p->start, p->size,
		    UINT64_MAX, &end_ts);
	r->lost = lost_add(r->lost, c->pending_lost);
	c->pending_lost = 0;
	if (c->snap_unsure && c->next_order > 1)
		r->lost = TRACEMAP_LOST_UNKNOWN;
	if (c->next_order < c->nr_order)
		r->flags |= TRACEMAP_REGION_COMPLETE;

	/* follow mode continues from the last page handed out */
	c->cur = (typeof(c->cur)){ .valid = true, .id = p->id, .off = p->size, .ts = p->ts,
				   .walk_ts = end_ts };
	return 1;
}

/* The oldest page newer than @ts, read from the live headers; @newer counts them. */
static bool find_successor(struct tracemap_cpu *c, uint64_t ts, unsigned int *sid, uint64_t *sts,
			   unsigned int *newer)
{
	bool found = false;
	unsigned int i;

	*newer = 0;
	for (i = 0; i < c->nr_subbufs; i++) {
		const unsigned char *sb = subbuf_at(c, i);
		/* pairs with the writer's time stamp store before it raises commit */
		uint64_t commit = __atomic_load_n((const uint64_t *)(sb + 8), __ATOMIC_ACQUIRE);
		uint64_t t = __atomic_load_n((const uint64_t *)sb, __ATOMIC_RELAXED);

		if (!TM_COMMIT_SIZE(commit) || t <= ts)
			continue;
		(*newer)++;
		if (!found || t < *sts) {
			*sts = t;
			*sid = i;
			found = true;
		}
	}
	return found;
}

/*
 * Data the follower had not read yet was overwritten or cleared. After a
 * reset (echo > trace) nothing has been overwritten since, and what the
 * reset dropped is no loss, as in consuming mode; otherwise the writer
 * lapped us and a gap is reported (count unknown).
 */
static void follow_gap(struct tracemap_cpu *c)
{
	uint64_t overrun, nread;

	if (c->pending_lost)
		return;
	if (!read_cpu_stats(c, &overrun, &nread) && !overrun)
		return;
	c->pending_lost = TRACEMAP_LOST_UNKNOWN;
	c->st.lost_unknown++;
}

static int follow_region(struct tracemap_cpu *c, struct tracemap_region *r)
{
	unsigned int sid = 0, size, loops, newer;
	uint64_t sts = 0, ts, end_ts;
	bool succ, left_intact;
	int ret;

	if (!c->scanned || c->next_order < c->nr_order)
		return snapshot_region(c, r);

	for (loops = 0; loops <= c->nr_subbufs; loops++) {
		if (c->cur.valid && c->cur.complete) {
			/* fully handed out: move on without looking at it again */
			c->cur.valid = false;
			continue;
		}
		/* look for a newer page first: then the cursor page's commit is final */
		succ = find_successor(c, c->cur.ts, &sid, &sts, &newer);
		left_intact = false;
		if (c->cur.valid) {
			/*
			 * Recycled before we copied the rest, or cleared: by a reset,
			 * or by the writer that is recycling it (commit goes to 0
			 * before the new time stamp is written).
			 */
			if (tm_subbuf_copy(c->fbuf, subbuf_at(c, c->cur.id), c->subbuf_size, &ts,
					   &size) || ts != c->cur.ts || size < c->cur.off) {
				follow_gap(c);
				c->cur.valid = false;
				continue;
			}
			if (size > c->cur.off) {
				ret = copy_region(c, r, c->fbuf, c->cur.id, c->cur.off, size,
						  c->cur.walk_ts, &end_ts);
				r->lost = lost_add(r->lost, c->pending_lost);
				c->pending_lost = 0;
				c->cur.off = size;
				c->cur.walk_ts = end_ts;
				if (succ) {
					r->flags |= TRACEMAP_REGION_COMPLETE;
					c->cur.complete = true;
				}
				return ret;
			}
			if (!succ)
				return 0;
			c->cur.valid = false;
			left_intact = true;
		}
		if (!succ) {
			if (!c->pending_lost)
				return 0;
			/* report the gap even when nothing follows it yet */
			region_init(c, r, subbuf_at(c, 0), NO_ID);
			r->subbuf = r->data = NULL;
			r->lost = c->pending_lost;
			c->pending_lost = 0;
			return 1;
		}
		/*
		 * The writer fills pages in ring order, so while the page we leave
		 * still holds what we read, the oldest newer page is the one right
		 * after it. Once that page was recycled, the writer went through its
		 * successors too: what they held is gone. Checked after the search,
		 * which pairs with the writer's time stamp store before commit.
		 */
		if (!left_intact && c->cur.id != NO_ID &&
		    __atomic_load_n((const uint64_t *)subbuf_at(c, c->cur.id), __ATOMIC_ACQUIRE) !=
		    c->cur.ts)
			follow_gap(c);
		/*
		 * Nothing was left to follow from (the buffer was empty at open):
		 * the first page written since is still there unless the writer
		 * has used every page of the ring since.
		 */
		if (c->cur.id == NO_ID && newer + 1 >= c->nr_subbufs)
			follow_gap(c);
		c->cur = (typeof(c->cur)){ .valid = true, .id = sid, .ts = sts,
					   .walk_ts = UINT64_MAX };
	}
	return 0;
}

int tracemap_cpu_read_region(struct tracemap_cpu *c, struct tracemap_region *r)
{
	int ret;

	if (!c || !r)
		return tm_err(EINVAL);
	c->have_region = false;
	if (c->backend == TRACEMAP_BACKEND_READ)
		ret = consume_read_region(c, r);
	else if (c->mode == TRACEMAP_MODE_CONSUME)
		ret = consume_mmap_region(c, r);
	else if (c->mode == TRACEMAP_MODE_SNAPSHOT)
		ret = snapshot_region(c, r);
	else
		ret = follow_region(c, r);
	if (ret <= 0)
		return ret;

	c->st.pages++;
	c->st.bytes += r->end - r->start;
	if (r->lost > 0)
		c->st.lost += r->lost;
	else if (r->lost == TRACEMAP_LOST_UNKNOWN && c->mode == TRACEMAP_MODE_CONSUME)
		c->st.lost_unknown++;
	return 1;
}

/* -------------------------------------------------------------- events */

int tracemap_cpu_next_event(struct tracemap_cpu *c, struct tracemap_event *ev)
{
	struct tm_rec rec;
	int ret;

	if (!c || !ev)
		return tm_err(EINVAL);
	for (;;) {
		if (c->have_region) {
			ret = tm_walk_next(&c->ev_walk, &rec);
			if (ret > 0) {
				ev->ts = rec.ts;
				ev->data = rec.payload;
				ev->size = rec.size;
				ev->offset = rec.off;
				ev->cpu = c->cpu;
				ev->missed = c->ev_missed;
				c->ev_missed = 0;
				c->st.events++;
				return 1;
			}
			c->have_region = false;
			if (c->region.id == c->id && c->mode == TRACEMAP_MODE_CONSUME) {
				/* the consuming walk continues from here on the same page */
				c->walk_off = c->ev_walk.off;
				c->walk_ts = c->ev_walk.ts;
				c->walk_bad = ret < 0;
			}
			if (ret < 0) {
				c->st.corrupt++;
				c->ev_missed = TRACEMAP_LOST_UNKNOWN;
				tm_log(TRACEMAP_LOG_WARN, "cpu%d: corrupt record at offset %u of "
				       "sub-buffer %u: rest of the region skipped", c->cpu,
				       c->ev_walk.off, c->region.id);
				return tm_err(EBADMSG);
			}
		}
		ret = tracemap_cpu_read_region(c, &c->region);
		if (ret <= 0)
			return ret;
		c->ev_walk = (struct tm_walk){ c->region.data, c->region.start, c->region.end,
					       c->region.base_ts };
		/* a gap with no event after it yet waits for the next event */
		c->ev_missed = lost_add(c->ev_missed, c->region.lost);
		c->have_region = true;
	}
}

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

static int stage_emit(struct tracemap_cpu *c, void *buf)
{
	c->staged = false;
	c->stage_complete = false;
	return tm_subbuf_write(buf, c->subbuf_size, c->stage, 0, c->stage_end - c->stage_start,
			       c->stage_base, c->stage_lost);
}

static bool stage_continues(const struct tracemap_cpu *c, const struct tracemap_region *r)
{
	return r->data && !r->lost && r->id == c->stage_id && r->start == c->stage_end;
}

/* Hold @r: start a page with it or append it to the held one. */
static void stage_take(struct tracemap_cpu *c, const struct tracemap_region *r)
{
	if (!c->staged) {
		c->staged = true;
		c->stage_id = r->data ? r->id : NO_ID;
		c->stage_start = c->stage_end = r->start;
		c->stage_base = r->base_ts;
		c->stage_lost = r->lost;
		c->stage_since = tm_now_ns();
	}
	if (!r->data)
		return;
	memcpy(c->stage + (c->stage_end - c->stage_start), r->data + r->start, r->end - r->start);
	c->stage_end = r->end;
	c->stage_complete = r->flags & TRACEMAP_REGION_COMPLETE;
}

int tracemap_cpu_read_page(struct tracemap_cpu *c, void *buf, size_t size, unsigned int flags)
{
	struct tracemap_region r;
	int ret;

	if (!c || !buf || size < c->subbuf_size)
		return tm_err(EINVAL);
	for (;;) {
		if (c->staged && c->stage_complete)
			return stage_emit(c, buf);
		ret = tracemap_cpu_read_region(c, &r);
		if (ret < 0 && ret != -EBADMSG)
			return ret;
		if (ret <= 0)
			break;
		if (c->staged && !stage_continues(c, &r)) {
			if (c->stage_id == NO_ID) {
				/* only a gap is held: it goes on the page of this region */
				r.lost = lost_add(r.lost, c->stage_lost);
				c->staged = false;
			} else {
				/* the kernel moved past the held page: it is complete */
				ret = stage_emit(c, buf);
				stage_take(c, &r);
				return ret;
			}
		}
		stage_take(c, &r);
	}
	if (c->staged && (flags & TRACEMAP_PAGE_FLUSH))
		return stage_emit(c, buf);
	return 0;
}

uint64_t tracemap_cpu_pending_since(const struct tracemap_cpu *c)
{
	return c && c->staged ? c->stage_since : 0;
}

int tracemap_cpu_rewind(struct tracemap_cpu *c)
{
	if (!c)
		return tm_err(EINVAL);
	c->have_region = false;
	c->staged = false;
	c->scanned = false;
	c->nr_order = c->next_order = 0;
	return 0;
}

int tracemap_cpu_stats(const struct tracemap_cpu *c, struct tracemap_cpu_stats *st, size_t sz)
{
	struct tracemap_cpu_stats s;

	if (!c || !st)
		return tm_err(EINVAL);
	s = c->st;
	if (c->meta) {
		s.kernel_entries = __atomic_load_n(&c->meta->entries, __ATOMIC_RELAXED);
		s.kernel_overrun = __atomic_load_n(&c->meta->overrun, __ATOMIC_RELAXED);
		s.kernel_read = __atomic_load_n(&c->meta->read, __ATOMIC_RELAXED);
	}
	memcpy(st, &s, sz < sizeof(s) ? sz : sizeof(s));
	return 0;
}

void tm_cpu_count_wakeup(struct tracemap_cpu *c)
{
	c->st.wakeups++;
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
	return c->region.id;
}

bool tm_cpu_region_left(const struct tracemap_cpu *c)
{
	return c->have_region && c->ev_walk.off < c->ev_walk.end;
}
