// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Dumps: the whole buffer of every CPU copied without consuming anything,
 * held as self-contained pages, then written as trace.dat by tracedat.c.
 * The copy and the file write are separate calls so that the time the
 * writer gets to change the buffer is the copy alone.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracemap-local.h"

/*
 * What a page of a dump is: the kernel's sub-buffer with time stamp ts and
 * size bytes of records, rewritten self-contained with no mark (its bytes
 * then follow from those two, as the snapshot's reuse of a copy assumes),
 * or size 0: anything else (marked, partly read, the last one).
 */
struct page_key {
	uint64_t ts;
	uint64_t size;
};

struct dump_cpu {
	unsigned char **page;		/* the nr_pages self-contained sub-buffers, in order:
					   in the reader's copies or in pages */
	struct page_key *key;		/* of each page */
	unsigned char *pages;		/* room for the sub-buffers written out of place */
	size_t nr_pages;
	size_t ring_pages;		/* the most pages it can hold */
	size_t cap;			/* bytes mapped at pages */
	struct tm_snap_keep *keep;	/* the copies of the snapshot reader: the other pages */
	uint64_t read;			/* kernel: events consumed, as of the copy */
	struct tracemap_dump_cpu_stats st;
};

struct tracemap_dump {
	char *tracefs;
	char *instance;			/* NULL: the top-level buffer */
	char *clock;			/* the instance's trace clock */
	bool as_top;			/* TRACEMAP_DUMP_AS_TOP */
	char *cmdlines;			/* saved_cmdlines as of the copy */
	size_t cmdlines_len;
	char *events;			/* set_event as of the copy */
	char *kallsyms;			/* NULL: /proc/kallsyms */
	char *cpumask;			/* tracemap_dump_opts.cpumask, for a retake */
	unsigned int flags;		/* tracemap_dump_opts.flags */
	unsigned char ids[TM_EVENT_IDS / 8];	/* the event ids in the pages */
	unsigned int subbuf_size;
	int nr;
	struct dump_cpu *cpus;
	struct tracemap_dump_cpu_stats total;
};

/* "[local] global ..." -> "local" */
static char *read_clock(const char *idir)
{
	char path[4200], buf[512], *b, *e;

	snprintf(path, sizeof(path), "%s/trace_clock", idir);
	if (tm_read_file(path, buf, sizeof(buf)) > 0) {
		b = strchr(buf, '[');
		e = b ? strchr(b, ']') : NULL;
		if (b && e) {
			*e = '\0';
			return strdup(b + 1);
		}
	}
	return strdup("local");
}

/*
 * The losses the pages are marked with: what the file will say. Their
 * records were counted as the snapshot walked them (take_pages()).
 */
static void page_stats(struct dump_cpu *dc, unsigned int subbuf_size)
{
	struct tracemap_dump_cpu_stats *st = &dc->st;
	long long lost;
	size_t i;

	for (i = 0; i < dc->nr_pages; i++) {
		lost = tm_subbuf_lost(dc->page[i], subbuf_size);
		if (lost > 0)
			st->lost += lost;
		else if (lost == TRACEMAP_LOST_UNKNOWN)
			st->lost_gaps++;
	}
	st->pages = dc->nr_pages;
}

/*
 * Pages of a snapshot reader, as self-contained sub-buffers, into @dc; the
 * records they hold counted in its statistics, their event ids (the file
 * carries the formats of those) noted in @ids. When the dump owns the
 * reader (@in_place), whole pages stay where the reader copied them and are
 * rewritten there: one copy of the ring less than writing them out.
 */
static int take_pages(struct tracemap_cpu *c, struct dump_cpu *dc, unsigned char *ids,
		      bool in_place)
{
	unsigned int sbs = tracemap_cpu_subbuf_size(c);
	/* a lost-only region may add a page to the ring's worth */
	size_t cap = (size_t)tracemap_cpu_nr_subbufs(c) + 1;
	struct tm_tally t = { .ids = ids };
	size_t out_of_place = 0;
	const unsigned char *at;
	unsigned char *buf;
	int ret = 0;

	dc->pages = tm_pages_alloc(cap * sbs);
	dc->cap = cap * sbs;
	dc->page = calloc(cap, sizeof(*dc->page));
	if (!dc->pages || !dc->page)
		return tm_err(ENOMEM);
	tm_cpu_tally(c, &t);
	while (dc->nr_pages < cap) {
		buf = dc->pages + dc->nr_pages * sbs;
		at = buf;
		if (in_place)
			ret = tm_cpu_read_page_at(c, buf, &at, TRACEMAP_PAGE_FLUSH);
		else
			ret = tracemap_cpu_read_page(c, buf, sbs, TRACEMAP_PAGE_FLUSH);
		if (ret <= 0)
			break;
		/* the reader's copies are the dump's now: written once more only by mark_overrun() */
		dc->page[dc->nr_pages++] = (unsigned char *)(uintptr_t)at;
		out_of_place += at == buf;
	}
	/* every page stayed in the copies: the room for others goes back */
	if (!out_of_place) {
		tm_pages_free(dc->pages, dc->cap);
		dc->pages = NULL;
		dc->cap = 0;
	}
	tm_cpu_tally(c, NULL);
	dc->st.events = t.events;
	dc->st.bytes = t.bytes;
	dc->st.first_ts = t.first_ts;
	dc->st.last_ts = t.last_ts;
	return ret < 0 ? ret : 0;
}

/*
 * Events the writer overwrote before the oldest one still in the buffer are
 * lost right before the first page, as a consuming reader would be told.
 * That is certain only while nothing was consumed: a consumer has been told
 * of the losses before what it read, and what it left may follow on.
 */
static int mark_overrun(struct tracemap_cpu *c, struct dump_cpu *dc, unsigned int sbs,
			uint64_t overrun, uint64_t nread)
{
	unsigned int end = 0;
	uint64_t commit, ts;
	unsigned char *tmp;
	struct tm_walk w;
	struct tm_rec rec;
	long long lost;
	int ret;

	if (!overrun || nread || !dc->nr_pages)
		return 0;
	tmp = malloc(sbs);
	if (!tmp)
		return tm_err(ENOMEM);
	memcpy(tmp, dc->page[0], sbs);
	memcpy(&ts, tmp, sizeof(ts));
	memcpy(&commit, tmp + 8, sizeof(commit));
	lost = tm_subbuf_lost(tmp, sbs);
	lost = lost == TRACEMAP_LOST_UNKNOWN ? lost : lost + (long long)overrun;
	/* up to the last event: a full page's trailing padding makes room for the count */
	w = (struct tm_walk){ tmp + TM_SUBBUF_HDR, 0, TM_COMMIT_SIZE(commit), ts };
	while (tm_walk_next(&w, &rec) > 0)
		end = w.off;
	ret = tm_subbuf_write(dc->page[0], sbs, tmp + TM_SUBBUF_HDR, 0, end, ts, lost);
	/* the count lies where records were: a retake copies this page again */
	tm_cpu_copy_changed(c, dc->page[0]);
	free(tmp);
	return ret < 0 ? ret : 0;
}

/* What each page of @dc is (struct page_key), while @c still holds the copies */
static int page_keys(struct tracemap_cpu *c, struct dump_cpu *dc)
{
	uint64_t commit;
	size_t i;

	dc->ring_pages = (size_t)tracemap_cpu_nr_subbufs(c) + 1;
	dc->key = calloc(dc->nr_pages + 1, sizeof(*dc->key));
	if (!dc->key)
		return tm_err(ENOMEM);
	for (i = 0; i < dc->nr_pages; i++) {
		memcpy(&commit, dc->page[i] + 8, sizeof(commit));
		if (!tm_cpu_copy_clean(c, dc->page[i]) ||
		    ((uint32_t)commit & (TM_MISSED_EVENTS | TM_MISSED_STORED)))
			continue;
		memcpy(&dc->key[i].ts, dc->page[i], sizeof(dc->key[i].ts));
		dc->key[i].size = TM_COMMIT_SIZE(commit);
	}
	return 0;
}

static void add_total(struct tracemap_dump_cpu_stats *t, const struct tracemap_dump_cpu_stats *s)
{
	if (s->events && (!t->events || s->first_ts < t->first_ts))
		t->first_ts = s->first_ts;
	if (s->events && s->last_ts > t->last_ts)
		t->last_ts = s->last_ts;
	t->events += s->events;
	t->bytes += s->bytes;
	t->pages += s->pages;
	t->lost += s->lost;
	t->lost_gaps += s->lost_gaps;
	t->overrun += s->overrun;
}

/*
 * The pages of snapshot reader @c as the dump's @i-th CPU: the copy, the
 * overrun mark, the counts; the copies are the dump's then (the caller
 * closes @c).
 */
static int add_cpu(struct tracemap_dump *d, int i, struct tracemap_cpu *c)
{
	unsigned int sbs = tracemap_cpu_subbuf_size(c);
	struct dump_cpu *dc = &d->cpus[i];
	int ret;

	if (i && sbs != d->subbuf_size) {
		tm_log(TRACEMAP_LOG_ERROR, "CPU %d has %u-byte sub-buffers and CPU %d %u: "
		       "a trace.dat holds one page size", dc->st.cpu, sbs,
		       d->cpus[0].st.cpu, d->subbuf_size);
		return tm_err(EPROTO);
	}
	d->subbuf_size = sbs;
	ret = take_pages(c, dc, d->ids, true);
	if (!ret)
		ret = mark_overrun(c, dc, sbs, dc->st.overrun, dc->read);
	if (!ret)
		ret = page_keys(c, dc);
	if (!ret) {
		dc->keep = tm_cpu_keep_copies(c);
		if (!dc->keep)
			ret = -errno;
	}
	if (ret)
		return ret;
	page_stats(dc, sbs);
	add_total(&d->total, &dc->st);
	return 0;
}

static char *memdup_str(const char *p, size_t len)
{
	char *s = malloc(len + 1);

	if (s) {
		if (len)
			memcpy(s, p, len);
		s[len] = '\0';
	}
	return s;
}

struct tracemap_dump *tm_dump_from_readers(struct tracemap_cpu **readers, int n,
					   const struct tm_dump_src *src)
{
	struct tracemap_dump *d = NULL;
	int i, ret = -ENOMEM;

	if (!readers || n <= 0 || !src || !src->tracefs) {
		ret = -EINVAL;
		goto fail;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		goto fail;
	d->cpus = calloc(n, sizeof(*d->cpus));
	d->tracefs = strdup(src->tracefs);
	d->instance = src->instance && *src->instance ? strdup(src->instance) : NULL;
	d->clock = strdup(src->clock ? src->clock : "local");
	d->cmdlines = memdup_str(src->cmdlines, src->cmdlines ? src->cmdlines_len : 0);
	d->cmdlines_len = src->cmdlines ? src->cmdlines_len : 0;
	d->events = strdup(src->events ? src->events : "");
	d->kallsyms = src->kallsyms ? strdup(src->kallsyms) : NULL;
	if (!d->cpus || !d->tracefs || !d->clock || !d->cmdlines || !d->events ||
	    (src->instance && *src->instance && !d->instance) || (src->kallsyms && !d->kallsyms))
		goto fail;
	d->total.cpu = -1;
	for (d->nr = 0; d->nr < n; d->nr++) {
		struct dump_cpu *dc = &d->cpus[d->nr];

		dc->st.cpu = tracemap_cpu_id(readers[d->nr]);
		dc->st.overrun = src->overrun ? src->overrun[d->nr] : 0;
		dc->read = src->read ? src->read[d->nr] : 0;
		/* the dump holds the reader's copies from here on: they are the pages */
		ret = add_cpu(d, d->nr, readers[d->nr]);
		tracemap_cpu_close(readers[d->nr]);
		readers[d->nr] = NULL;
		if (ret) {
			d->nr++;
			goto fail;
		}
	}
	return d;
fail:
	/* the readers the dump did not hold yet */
	for (i = 0; i < n && readers; i++) {
		tracemap_cpu_close(readers[i]);
		readers[i] = NULL;
	}
	tracemap_dump_free(d);
	errno = -ret;
	return NULL;
}

struct tm_snap_keep *tm_dump_keep(struct tracemap_dump *d, int cpu)
{
	struct tm_snap_keep *k;
	int i;

	for (i = 0; d && i < d->nr; i++) {
		if (d->cpus[i].st.cpu != cpu)
			continue;
		k = d->cpus[i].keep;
		d->cpus[i].keep = NULL;
		return k;
	}
	return NULL;
}

/* tracemap_dump_take(), seeded with @prev's copies (NULL: none), which it frees last */
static struct tracemap_dump *dump_take(const char *instance, const struct tracemap_dump_opts *opts,
				       struct tracemap_dump *prev, const char *who)
{
	struct tracemap_cpu_stats cst;
	struct tracemap_cpu_opts copts = { .sz = sizeof(copts), .mode = TRACEMAP_MODE_SNAPSHOT,
					   .flags = TRACEMAP_CPU_NO_FALLBACK };
	char tfs[4096], idir[4096], path[4200];
	uint64_t *overrun = NULL, *nread = NULL, *copy_ns = NULL, t0, start, total_ns;
	struct tracemap_cpu **readers = NULL;
	struct tracemap_dump *d = NULL;
	struct tracemap_dump_opts o;
	struct tm_dump_src src = { 0 };
	bool *set = NULL;
	size_t len;
	int ret, i, n, nr = 0;

	memset(&o, 0, sizeof(o));
	ret = tm_opts_copy(&o, sizeof(o), opts, sizeof(size_t), "tracemap_dump_opts");
	if (ret)
		goto out;
	if (o.flags & ~(TRACEMAP_DUMP_AS_TOP | TRACEMAP_DUMP_NO_KALLSYMS)) {
		tm_log(TRACEMAP_LOG_ERROR, "tracemap_dump_opts.flags %#x: unknown flags, "
		       "pass 0 or TRACEMAP_DUMP_* flags", o.flags);
		ret = tm_err(EINVAL);
		goto out;
	}
	ret = tm_instance_find(instance, o.tracefs_dir, who, "a dump of a new "
			       "private instance would be empty", tfs, sizeof(tfs), idir, sizeof(idir));
	if (ret)
		goto out;

	set = calloc(TM_MAX_CPUS, sizeof(*set));
	if (!set) {
		ret = tm_err(ENOMEM);
		goto out;
	}
	n = tm_select_cpus(o.cpumask, idir, set, TM_MAX_CPUS);
	if (n < 0) {
		ret = n;
		goto out;
	}
	readers = calloc(n, sizeof(*readers));
	overrun = calloc(n, sizeof(*overrun));
	nread = calloc(n, sizeof(*nread));
	copy_ns = calloc(n, sizeof(*copy_ns));
	if (!readers || !overrun || !nread || !copy_ns) {
		ret = tm_err(ENOMEM);
		goto out;
	}

	/* the copies first, back to back: the time between CPUs is the copy time alone */
	copts.tracefs_dir = tfs;
	start = tm_now_ns();
	for (i = 0; i < TM_MAX_CPUS; i++) {
		if (!set[i])
			continue;
		t0 = tm_now_ns();
		readers[nr] = tm_cpu_open_seeded(instance, i, &copts, tm_dump_keep(prev, i));
		if (!readers[nr]) {
			ret = -errno;
			goto out;
		}
		copy_ns[nr] = tm_now_ns() - t0;
		/* the kernel's counters as of the copy: the meta page has them only as of
		   the last GET_READER of any reader */
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/stats", idir, i);
		if (!tm_cpu_stats_file(path, &cst)) {
			overrun[nr] = cst.kernel_overrun;
			nread[nr] = cst.kernel_read;
		}
		nr++;
	}
	total_ns = tm_now_ns() - start;

	/* the top level has no buffer name in the file */
	src = (struct tm_dump_src){ .tracefs = tfs, .overrun = overrun, .read = nread,
				    .instance = tm_is_top(instance) ? NULL : instance };
	/* what names the tasks as of the copy */
	snprintf(path, sizeof(path), "%s/saved_cmdlines", tfs);
	src.cmdlines = tm_read_whole(path, &src.cmdlines_len);
	if (!src.cmdlines) {
		ret = -errno;
		tm_log(TRACEMAP_LOG_ERROR, "cannot read %s: %s", path, strerror(errno));
		goto out;
	}
	/* the enabled events, whose formats a reader wants even before they occur */
	snprintf(path, sizeof(path), "%s/set_event", idir);
	src.events = tm_read_whole(path, &len);
	if (!src.events) {
		ret = -errno;
		tm_log(TRACEMAP_LOG_ERROR, "cannot read %s: %s", path, strerror(errno));
		goto out;
	}
	src.clock = read_clock(idir);
	if (!src.clock) {
		ret = tm_err(ENOMEM);
		goto out;
	}

	d = tm_dump_from_readers(readers, nr, &src);
	if (!d) {
		ret = -errno;
		goto out;
	}
	d->as_top = o.flags & TRACEMAP_DUMP_AS_TOP;
	d->flags = o.flags;
	d->cpumask = o.cpumask ? strdup(o.cpumask) : NULL;
	if (o.flags & TRACEMAP_DUMP_NO_KALLSYMS) {
		/* an empty file: the writer's kallsyms section stays empty */
		free(d->kallsyms);
		d->kallsyms = strdup("/dev/null");
	}
	if ((o.cpumask && !d->cpumask) || ((o.flags & TRACEMAP_DUMP_NO_KALLSYMS) && !d->kallsyms)) {
		tracemap_dump_free(d);
		ret = tm_err(ENOMEM);
		goto out;
	}
	for (i = 0; i < nr; i++)
		d->cpus[i].st.copy_ns = copy_ns[i];
	d->total.copy_ns = total_ns;
out:
	/* every failure is explained, as tracemap_*_open() ones are */
	if (ret == -ENOMEM)
		tm_log(TRACEMAP_LOG_ERROR, "out of memory copying the buffer of %s: the copy "
		       "needs twice the ring of every CPU",
		       !instance || tm_is_top(instance) ? "the top level" : instance);
	for (i = 0; readers && i < nr; i++)
		tracemap_cpu_close(readers[i]);	/* NULL once the dump holds it */
	free(readers);
	free(overrun);
	free(nread);
	free(copy_ns);
	free(set);
	free((char *)src.cmdlines);
	free((char *)src.events);
	free((char *)src.clock);
	/* last: @instance and @opts may be its */
	tracemap_dump_free(prev);
	if (ret)
		errno = -ret;
	return ret ? NULL : d;
}

/**
 * tracemap_dump_take - copy the buffer of every CPU without consuming it
 * @instance: the instance name, or TRACEMAP_TOP_LEVEL for the top-level buffer;
 *	NULL is refused (EINVAL): a new private instance would give an empty dump
 * @opts: NULL, or options with sz set (tracefs_dir, cpumask, flags)
 *
 * Opens a snapshot reader per CPU, back to back (the copy: validated pages,
 * torn ones copied again or marked lost), takes its pages as self-contained
 * sub-buffers, marks the kernel's overrun on the first page when nothing was
 * consumed, and reads saved_cmdlines, the enabled events (set_event) and the
 * trace clock. The pages stay in the readers' copies, which the dump keeps
 * until tracemap_dump_free(); the readers themselves (descriptors, mappings)
 * are closed before it returns. Every failure is explained through the print
 * callback.
 *
 * Returns the dump, or NULL with errno set.
 */
struct tracemap_dump *tracemap_dump_take(const char *instance, const struct tracemap_dump_opts *opts)
{
	return dump_take(instance, opts, NULL, "tracemap_dump_take");
}

/**
 * tracemap_dump_retake - copy the same buffer again, only what changed since
 * @prev: a dump of tracemap_dump_take() or of this function; freed in every
 *	case, and none of its pages may be read any more
 *
 * Takes the buffer @prev was taken of (instance, tracefs, CPU mask, flags) as
 * tracemap_dump_take() does, but seeds each CPU's copy with @prev's: a
 * sub-buffer with the time stamp and size of one in @prev is not copied out
 * of the mapping again and its records are not counted again (the writer
 * gives a page a new time stamp when it recycles it), so a view that
 * refreshes a large buffer copies only what the writer changed since. The
 * copy is validated as the first one is (torn pages copied again or marked
 * lost) and the dump holds what a fresh one would hold, with the same
 * statistics. Like every dump it holds no descriptor and no mapping, so
 * keeping @prev between refreshes does not keep the instance from being
 * removed.
 *
 * Returns the new dump, or NULL with errno set (then @prev is freed too).
 */
struct tracemap_dump *tracemap_dump_retake(struct tracemap_dump *prev)
{
	struct tracemap_dump_opts o = { .sz = sizeof(o) };

	if (!prev) {
		tm_err(EINVAL);
		return NULL;
	}
	o.flags = prev->flags;
	o.tracefs_dir = prev->tracefs;
	o.cpumask = prev->cpumask;
	return dump_take(prev->instance ? prev->instance : TRACEMAP_TOP_LEVEL, &o, prev,
			 "tracemap_dump_retake");
}


/**
 * tracemap_dump_free - free a dump
 * @d: the dump, or NULL
 */
void tracemap_dump_free(struct tracemap_dump *d)
{
	int i;

	if (!d)
		return;
	for (i = 0; d->cpus && i < d->nr; i++) {
		tm_pages_free(d->cpus[i].pages, d->cpus[i].cap);
		free(d->cpus[i].page);
		free(d->cpus[i].key);
		tm_snap_keep_free(d->cpus[i].keep);
	}
	free(d->cpus);
	free(d->tracefs);
	free(d->instance);
	free(d->clock);
	free(d->cmdlines);
	free(d->events);
	free(d->kallsyms);
	free(d->cpumask);
	free(d);
}

/* tracemap_dump_rewrite()'s layout of the pages (place_pages()) */
struct placing {
	struct tracemap_dump *d;
	struct tm_tracedat_cpu *cpus;	/* as dump_write() hands them to the writer */
	const struct rewrite_memo *m;	/* the file as its last rewrite left it, or NULL */
	uint64_t size;			/* the file's size before */
	int fd;
	struct memo_cpu *out;		/* the layout written, d->nr of them */
};

/*
 * The dump as trace.dat to @fd; @t->have_gen as tm_tracedat_write() takes
 * it; with @pl, the pages where place_pages() puts them.
 */
static int place_pages(void *ctx, uint64_t head_end);

static int dump_write(struct tracemap_dump *d, int fd, struct tm_tracedat *t,
		      struct placing *pl)
{
	struct tm_tracedat_cpu *cpus;
	int i, ret;

	cpus = calloc(d->nr, sizeof(*cpus));
	if (!cpus)
		return tm_err(ENOMEM);
	for (i = 0; i < d->nr; i++)
		cpus[i] = (struct tm_tracedat_cpu){ .cpu = d->cpus[i].st.cpu,
						    .pages = (const unsigned char *const *)
							     d->cpus[i].page,
						    .nr_pages = d->cpus[i].nr_pages };
	t->tracefs = d->tracefs;
	t->instance = d->as_top ? NULL : d->instance;
	t->clock = d->clock;
	t->cmdlines = d->cmdlines;
	t->cmdlines_len = d->cmdlines_len;
	t->events = d->events;
	t->ids = d->ids;
	t->kallsyms = d->kallsyms;
	t->page_size = d->subbuf_size;
	t->cpus = cpus;
	t->nr = d->nr;
	if (pl) {
		pl->cpus = cpus;
		t->place = place_pages;
		t->place_ctx = pl;
	}
	ret = tm_tracedat_write(fd, t);
	free(cpus);
	return ret;
}

/**
 * tracemap_dump_write - write a dump as a trace.dat file (version 6, uncompressed)
 * @d: the dump
 * @fd: a file or a pipe, written front to back
 *
 * Reads the formats, kallsyms and printk formats during the call; an enabled
 * event whose format is gone by then is left out with a warning. A dump can
 * be written more than once.
 *
 * Returns 0, or -errno with errno set.
 */
int tracemap_dump_write(struct tracemap_dump *d, int fd)
{
	struct tm_tracedat t = { 0 };

	if (!d || fd < 0)
		return tm_err(EINVAL);
	return dump_write(d, fd, &t, NULL);
}

/*
 * The files tracemap_dump_rewrite() wrote last, as they were then: while
 * one is the same (inode, size, modification time), it still holds the
 * head and kernel part of generation gen, which a rewrite then does not
 * write again. Two, because a view writes the next image into a second
 * file while the first is still read, and then back into the first.
 */
#define REWRITE_MEMOS	2

/* Where a CPU's pages lie in a file tracemap_dump_rewrite() wrote, and what they are */
struct memo_cpu {
	int cpu;
	uint64_t region;		/* its room in the file: [region, region + room) */
	uint64_t room;
	uint64_t offset;		/* its pages, inside the room */
	size_t nr_pages;
	struct page_key *key;		/* of each */
};

struct rewrite_memo {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	unsigned int page_size;
	uint64_t gen;			/* 0: nothing known */
	uint64_t used;			/* rewrites.uses at its last rewrite */
	int nr;				/* the layout of the pages: nr CPUs, or 0 */
	struct memo_cpu *cpus;
	char *source;			/* the buffer they are of (source_of()) */
};

static struct {
	pthread_mutex_t lock;
	struct rewrite_memo m[REWRITE_MEMOS];
	uint64_t uses;
} rewrites = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void memo_forget(struct rewrite_memo *m)
{
	int i;

	for (i = 0; i < m->nr; i++)
		free(m->cpus[i].key);
	free(m->cpus);
	free(m->source);
	m->cpus = NULL;
	m->source = NULL;
	m->nr = 0;
	m->gen = 0;
}

/*
 * The buffer @d is of, its pages' time stamps in its clock: a page of
 * another buffer may have the time stamp and size of one of this one.
 */
static char *source_of(const struct tracemap_dump *d)
{
	char *s;

	if (asprintf(&s, "%s\n%s\n%s", d->tracefs, d->instance ? d->instance : "",
		     d->clock) < 0)
		return NULL;
	return s;
}

/*
 * The memo of the file @st is, or the least recently used one, which a new
 * file takes. Under rewrites.lock.
 */
static struct rewrite_memo *rewrite_memo(const struct stat *st)
{
	struct rewrite_memo *m, *old = &rewrites.m[0];
	int i;

	for (i = 0; i < REWRITE_MEMOS; i++) {
		m = &rewrites.m[i];
		if (m->gen && m->dev == st->st_dev && m->ino == st->st_ino)
			return m;
		if (m->used < old->used)
			old = m;
	}
	memo_forget(old);
	return old;
}

static bool same_file(const struct rewrite_memo *m, const struct stat *st)
{
	return m->gen && st->st_dev == m->dev && st->st_ino == m->ino &&
	       st->st_size == m->size &&
	       st->st_mtim.tv_sec == m->mtime.tv_sec &&
	       st->st_mtim.tv_nsec == m->mtime.tv_nsec;
}

#define ROOM_SLACK	(1u << 20)	/* the head may grow this much before the layout changes */
/*
 * A CPU's room in rings: its pages start over (all written) each time the
 * writer went through ROOM_RINGS - 1 rings since; the file is sparse, so a
 * larger room costs nothing but file size.
 */
#define ROOM_RINGS	4
#define ROOM_ALIGN	(2u << 20)

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* The memory of the file from @from to @to goes back; where it cannot, it stays */
static void punch(int fd, uint64_t from, uint64_t to)
{
	if (to > from)
		fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, from, to - from);
}

static bool same_key(const struct page_key *a, const struct page_key *b)
{
	return a->size && a->size == b->size && a->ts == b->ts;
}

/*
 * Where the pages of @dc go in @o's room (@tc's offset its start) so that
 * those of them @o left in the file stay where they are: the first kernel
 * page as it was is looked up among @o's, the pages placed around it, and
 * the run of them equal to @o's there is kept.
 */
static void slide(const struct memo_cpu *o, const struct dump_cpu *dc,
		  struct tm_tracedat_cpu *tc, uint64_t sbs)
{
	size_t first, j, run;
	uint64_t at;

	for (first = 0; first < dc->nr_pages && !dc->key[first].size; first++)
		;
	for (j = 0; first < dc->nr_pages && j < o->nr_pages; j++)
		if (same_key(&o->key[j], &dc->key[first]))
			break;
	if (first == dc->nr_pages || j == o->nr_pages ||
	    o->offset + j * sbs < tc->offset + first * sbs)
		return;
	at = o->offset + (j - first) * sbs;
	if (at + dc->nr_pages * sbs > o->region + o->room)
		return;
	for (run = 0; first + run < dc->nr_pages && j + run < o->nr_pages &&
	     same_key(&o->key[j + run], &dc->key[first + run]); run++)
		;
	tc->offset = at;
	tc->keep_from = first;
	tc->keep_to = first + run;
}

/*
 * A rewrite puts each CPU's pages in a room of their own, ROOM_RINGS rings,
 * past the head. When the file holds the pages of the last rewrite, those
 * still in the dump (the ring moved on by a few pages) stay where they
 * are, the new ones are written after them, and the image is written for
 * what changed; pages that reach the end of the room start at its
 * beginning again, all written. What the image no longer holds is punched
 * out of the file, whose memory goes back. tm_tracedat.place.
 */
static int place_pages(void *ctx, uint64_t head_end)
{
	struct placing *pl = ctx;
	struct tracemap_dump *d = pl->d;
	const struct rewrite_memo *m = pl->m;
	uint64_t sbs = d->subbuf_size, at, end;
	bool known = m && m->nr == d->nr && m->cpus[0].region >= head_end;
	const struct memo_cpu *o;
	struct tm_tracedat_cpu *tc;
	int i;

	for (i = 0; known && i < d->nr; i++)
		known = m->cpus[i].cpu == d->cpus[i].st.cpu &&
			m->cpus[i].room >= ROOM_RINGS * d->cpus[i].ring_pages * sbs;
	/* a new layout: whatever the file held past the head goes */
	if (!known)
		punch(pl->fd, align_up(head_end, 4096), pl->size);
	at = align_up(head_end + ROOM_SLACK, ROOM_ALIGN);
	for (i = 0; i < d->nr; i++) {
		o = known ? &m->cpus[i] : NULL;
		tc = &pl->cpus[i];
		pl->out[i] = (struct memo_cpu){ .cpu = d->cpus[i].st.cpu, .region = at,
						.room = ROOM_RINGS * d->cpus[i].ring_pages * sbs,
						.nr_pages = d->cpus[i].nr_pages };
		if (o) {
			pl->out[i].region = o->region;
			pl->out[i].room = o->room;
		}
		tc->offset = pl->out[i].region;
		tc->keep_from = tc->keep_to = 0;
		if (o) {
			slide(o, &d->cpus[i], tc, sbs);
			/* the old pages outside the new ones */
			end = tc->offset + tc->nr_pages * sbs;
			punch(pl->fd, o->offset, tc->offset < o->offset + o->nr_pages * sbs ?
			      tc->offset : o->offset + o->nr_pages * sbs);
			punch(pl->fd, end > o->offset ? end : o->offset,
			      o->offset + o->nr_pages * sbs);
		}
		pl->out[i].offset = tc->offset;
		at = pl->out[i].region + pl->out[i].room;
	}
	return 0;
}

/**
 * tracemap_dump_rewrite - write a dump over the trace.dat image a file holds
 * @d: the dump
 * @fd: a regular file (a memfd, a file on tmpfs) open for writing, empty or
 *	holding an earlier image that nobody reads any more
 *
 * Writes the trace tracemap_dump_write() writes, from offset 0 over what the
 * file holds, and then makes the file reach to the image's end, never
 * shorter than it was (what lies past the image is punched out). A view
 * that shows one image at a time and replaces it on every refresh keeps the
 * file's storage this way: on tmpfs, allocating, zeroing and freeing the
 * pages of a new file costs more than writing the image. The head is the
 * same as tracemap_dump_write()'s; each CPU's pages lie in a room of their
 * own past it (page-aligned, four times the CPU's ring, the file sparse in
 * between), and the CPU table says where; the image ends with the last
 * room, so the file's size stays the same from one rewrite to the next. When the file is one of the last two this function wrote, unchanged
 * since (inode, size and modification time), the kernel part of the image
 * (header formats, event formats, kallsyms, printk formats) that is the same
 * as then is not written again, nor are the pages the file holds of the same
 * buffer (the same kernel page, as time stamp and size tell, unmarked): the
 * new ones are placed around them, and what the image no longer holds is
 * punched out of the file. Whoever still maps or reads the old image sees it
 * change under it, so the caller makes sure nobody does.
 *
 * Returns 0, or -errno with errno set (-EINVAL when @fd is not a regular file).
 */
int tracemap_dump_rewrite(struct tracemap_dump *d, int fd)
{
	struct tm_tracedat t = { 0 };
	struct placing pl = { 0 };
	struct rewrite_memo *m;
	char *source;
	struct stat st;
	uint64_t end;
	int i, ret;

	if (!d || fd < 0)
		return tm_err(EINVAL);
	if (fstat(fd, &st))
		return tm_err(errno);
	if (!S_ISREG(st.st_mode)) {
		tm_log(TRACEMAP_LOG_ERROR, "tracemap_dump_rewrite: fd %d is not a regular file: "
		       "pass a memfd or a file, or write with tracemap_dump_write()", fd);
		return tm_err(EINVAL);
	}
	if (lseek(fd, 0, SEEK_SET) < 0)
		return tm_err(errno);
	pl = (struct placing){ .d = d, .fd = fd, .size = st.st_size };
	pl.out = calloc(d->nr, sizeof(*pl.out));
	source = source_of(d);
	if (!pl.out || !source) {
		free(pl.out);
		free(source);
		return tm_err(ENOMEM);
	}
	pthread_mutex_lock(&rewrites.lock);
	m = rewrite_memo(&st);
	if (same_file(m, &st) && m->page_size == d->subbuf_size) {
		t.have_gen = m->gen;
		/* the pages in the file are of this buffer */
		if (!strcmp(m->source, source))
			pl.m = m;
	}
	ret = dump_write(d, fd, &t, &pl);
	/* forgotten: a failed write leaves the file in no known state */
	memo_forget(m);
	/*
	 * The file reaches to the end of the last room and never gets shorter
	 * (what lies past the image is punched out): its size stays while the
	 * pages move in their rooms, and a caller need not make it longer again
	 * for mappings of old images, which would change it behind the memo.
	 */
	end = pl.out[d->nr - 1].region + pl.out[d->nr - 1].room;
	if (end < pl.size)
		end = pl.size;
	if (!ret && (ftruncate(fd, end) || fstat(fd, &st)))
		ret = tm_err(errno);
	/* what is where now: the keys of the pages written */
	for (i = 0; !ret && i < d->nr; i++) {
		pl.out[i].key = malloc((d->cpus[i].nr_pages + 1) * sizeof(*pl.out[i].key));
		if (!pl.out[i].key)
			ret = tm_err(ENOMEM);
		else
			memcpy(pl.out[i].key, d->cpus[i].key,
			       d->cpus[i].nr_pages * sizeof(*pl.out[i].key));
	}
	if (!ret)
		*m = (struct rewrite_memo){ .dev = st.st_dev, .ino = st.st_ino, .size = st.st_size,
					    .mtime = st.st_mtim, .page_size = d->subbuf_size,
					    .gen = t.gen, .used = ++rewrites.uses, .nr = d->nr,
					    .cpus = pl.out, .source = source };
	pthread_mutex_unlock(&rewrites.lock);
	if (ret) {
		for (i = 0; i < d->nr; i++)
			free(pl.out[i].key);
		free(pl.out);
		free(source);
	}
	return ret;
}

/**
 * tracemap_dump_nr_cpus - how many CPUs a dump holds
 * @d: the dump
 *
 * Returns the count, or -EINVAL.
 */
int tracemap_dump_nr_cpus(const struct tracemap_dump *d)
{
	return d ? d->nr : tm_err(EINVAL);
}

/**
 * tracemap_dump_cpu - the CPU number of a dump's @idx-th CPU (ascending)
 * @d: the dump
 * @idx: 0 <= @idx < tracemap_dump_nr_cpus()
 *
 * Returns the CPU number, or -EINVAL.
 */
int tracemap_dump_cpu(const struct tracemap_dump *d, int idx)
{
	if (!d || idx < 0 || idx >= d->nr)
		return tm_err(EINVAL);
	return d->cpus[idx].st.cpu;
}

/**
 * tracemap_dump_stats - what a dump holds, per CPU or in all
 * @d: the dump
 * @cpu: a CPU number of the dump, or -1 for the sums over all CPUs
 * @st: receives the statistics
 * @sz: sizeof(*@st) as the caller knows it; min(@sz, sizeof) bytes are copied
 *
 * Returns 0, -ENOENT when @cpu is not in the dump, or -EINVAL.
 */
int tracemap_dump_stats(const struct tracemap_dump *d, int cpu,
			struct tracemap_dump_cpu_stats *st, size_t sz)
{
	const struct tracemap_dump_cpu_stats *s = NULL;
	int i;

	if (!d || !st || cpu < -1)
		return tm_err(EINVAL);
	if (cpu == -1)
		s = &d->total;
	for (i = 0; !s && i < d->nr; i++)
		if (d->cpus[i].st.cpu == cpu)
			s = &d->cpus[i].st;
	if (!s)
		return tm_err(ENOENT);
	memcpy(st, s, sz < sizeof(*s) ? sz : sizeof(*s));
	return 0;
}
