// SPDX-License-Identifier: LGPL-2.1-only
/*
 * The trace.dat writer: file version 6, uncompressed, which trace-cmd 3.1.6
 * and KernelShark 2.2.1 read as they are. Layout (all numbers in host
 * order, announced by the endian byte):
 *
 *   "\027\010\104tracing" "6\0" endian(1) sizeof(long)(1) page_size(4)
 *   "header_page\0" size(8) events/header_page
 *   "header_event\0" size(8) events/header_event
 *   count(4) { size(8) format } of events/ftrace/
 *   systems(4) { "name\0" count(4) { size(8) format } } of the events in the
 *   pages and the enabled ones
 *   size(4) /proc/kallsyms   size(4) printk_formats   size(8) saved_cmdlines
 *   cpus(4) "options  \0" { id(2) size(4) data } 0(2)
 *   "flyrecord\0" { offset(8) size(8) } per CPU, size(8) "[clock]"
 *   for an instance, the same flyrecord table again, where its BUFFER
 *   option points, and the top-level table left empty;
 *   then each CPU's pages, aligned to the page size.
 *
 * Everything before the pages is built in memory first, so every offset is
 * known before the first byte goes out and @fd may be a pipe; the kernel
 * part (header formats to printk formats) is shared by the files that need
 * the same formats, not copied into each.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tracemap-local.h"

/* trace-cmd's option ids (trace.dat format, stable since version 6) */
#define OPTION_DONE		0
#define OPTION_BUFFER		3
#define OPTION_TRACECLOCK	4

struct obuf {
	unsigned char *p;
	size_t len;
	size_t cap;
	int err;			/* the first error, as a positive errno */
};

static bool reserve(struct obuf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 1 << 20;
	unsigned char *p;

	if (b->err)
		return false;
	if (b->len + n <= b->cap)
		return true;
	while (cap < b->len + n)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->err = ENOMEM;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

static void put(struct obuf *b, const void *data, size_t n)
{
	if (!reserve(b, n))
		return;
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

static void put_str(struct obuf *b, const char *s)
{
	put(b, s, strlen(s) + 1);
}

static void put_u16(struct obuf *b, uint16_t v) { put(b, &v, sizeof(v)); }
static void put_u32(struct obuf *b, uint32_t v) { put(b, &v, sizeof(v)); }
static void put_u64(struct obuf *b, uint64_t v) { put(b, &v, sizeof(v)); }

static void patch_u64(struct obuf *b, size_t at, uint64_t v)
{
	if (!b->err)
		memcpy(b->p + at, &v, sizeof(v));
}

/*
 * A size field of @szlen bytes and the contents of @path after it. tracefs
 * files have no size before they are read, so the size is patched in after.
 * A missing file is written as empty when @optional.
 */
static void put_file(struct obuf *b, const char *path, int szlen, bool optional)
{
	size_t at = b->len, n = 0;
	uint64_t size64;
	uint32_t size32;
	ssize_t r;
	int fd;

	if (szlen == 4)
		put_u32(b, 0);
	else
		put_u64(b, 0);
	if (b->err)
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (optional && errno == ENOENT)
			return;
		b->err = errno;
		tm_log(TRACEMAP_LOG_ERROR, "trace.dat: cannot read %s: %s", path, strerror(errno));
		return;
	}
	for (;;) {
		if (!reserve(b, 64 * 1024))
			break;
		r = read(fd, b->p + b->len, b->cap - b->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			b->err = errno;
			tm_log(TRACEMAP_LOG_ERROR, "trace.dat: cannot read %s: %s", path,
			       strerror(errno));
			break;
		}
		if (!r)
			break;
		b->len += r;
		n += r;
	}
	close(fd);
	if (b->err)
		return;
	if (szlen == 4) {
		size32 = n;
		memcpy(b->p + at, &size32, sizeof(size32));
	} else {
		size64 = n;
		memcpy(b->p + at, &size64, sizeof(size64));
	}
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the entries of @dir that are directories holding @file. */
static char **list_dirs(const char *dir, const char *file, int *count)
{
	char path[4096], **names = NULL, **p;
	struct dirent *de;
	int n = 0, cap = 0;
	DIR *dp;

	*count = 0;
	dp = opendir(dir);
	if (!dp)
		return NULL;
	while ((de = readdir(dp))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s", dir, de->d_name, file);
		if (access(path, F_OK))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			p = realloc(names, cap * sizeof(*names));
			if (!p)
				break;
			names = p;
		}
		names[n] = strdup(de->d_name);
		if (!names[n])
			break;
		n++;
	}
	closedir(dp);
	if (names)
		qsort(names, n, sizeof(*names), cmp_name);
	*count = n;
	return names;
}

static void free_names(char **names, int n)
{
	while (n-- > 0)
		free(names[n]);
	free(names);
}

/*
 * What the file says about the kernel rather than the trace: header_page
 * and header_event, the ftrace formats, kallsyms, printk formats, and the
 * format of each event the file needs. Reading all of it takes megabytes of
 * kallsyms and, for every event of the kernel, some 2300 format files that
 * KernelShark then parses on every load; a live view writes a file a second.
 * So a file holds the formats of the events in its pages and the enabled
 * ones only, and what was read is kept with /proc/modules and
 * dynamic_events as they read then, and reused while both read the same:
 * formats change only when modules come or go or dynamic events (kprobes,
 * uprobes, synthetic events) are made. BPF programs loaded meanwhile add
 * kallsyms entries that a reused copy lacks.
 */
struct fmt {
	char *sys;
	char *name;
	char *text;			/* NULL until read */
	size_t len;
	int id;
	bool want;			/* in the file being written */
};

/*
 * The kernel part of a file as written: header formats, the systems with
 * the selected formats, kallsyms, printk formats. Files with the same
 * selection share it (a live view writes the same one on every refresh)
 * instead of copying megabytes of kallsyms into each; a writer holds a
 * reference while it writes. Each assembled part has a generation of its
 * own, never reused, so that a file known to hold one need not get it again.
 */
struct kpart {
	unsigned char *p;
	size_t len;
	uint64_t gen;
	unsigned int refs;		/* under kc.lock */
};

static struct {
	pthread_mutex_t lock;
	char *tracefs;
	char *kallsyms;
	struct obuf sig;
	struct obuf head;		/* header_page, header_event, the ftrace formats */
	struct obuf tail;		/* kallsyms, printk formats */
	struct fmt *fmts;
	int nr, cap;
	bool all_ids;			/* every event of the kernel is in fmts */
	struct kpart *part;		/* the last assembled part */
	int *part_sel;			/* its formats: indices into fmts, in file order */
	int part_n;
	uint64_t last_gen;		/* kept across resets */
} kc = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* under kc.lock */
static void kpart_put(struct kpart *kp)
{
	if (kp && !--kp->refs) {
		free(kp->p);
		free(kp);
	}
}

static void kc_reset(void)
{
	int i;

	kpart_put(kc.part);
	free(kc.part_sel);
	kc.part = NULL;
	kc.part_sel = NULL;
	kc.part_n = 0;

	for (i = 0; i < kc.nr; i++) {
		free(kc.fmts[i].sys);
		free(kc.fmts[i].name);
		free(kc.fmts[i].text);
	}
	free(kc.fmts);
	free(kc.tracefs);
	free(kc.kallsyms);
	free(kc.sig.p);
	free(kc.head.p);
	free(kc.tail.p);
	kc.fmts = NULL;
	kc.nr = kc.cap = 0;
	kc.all_ids = false;
	kc.tracefs = NULL;
	kc.kallsyms = NULL;
	kc.sig = kc.head = kc.tail = (struct obuf){ 0 };
}

static struct fmt *kc_find(const char *sys, const char *name, int id)
{
	int i;

	for (i = 0; i < kc.nr; i++)
		if (sys ? !strcmp(kc.fmts[i].sys, sys) && !strcmp(kc.fmts[i].name, name) :
			  kc.fmts[i].id == id)
			return &kc.fmts[i];
	return NULL;
}

static struct fmt *kc_add(const char *sys, const char *name, int id)
{
	struct fmt *f;

	if (kc.nr == kc.cap) {
		f = realloc(kc.fmts, (kc.cap ? kc.cap * 2 : 64) * sizeof(*f));
		if (!f)
			return NULL;
		kc.fmts = f;
		kc.cap = kc.cap ? kc.cap * 2 : 64;
	}
	f = &kc.fmts[kc.nr];
	*f = (struct fmt){ .sys = strdup(sys), .name = strdup(name), .id = id };
	if (!f->sys || !f->name) {
		free(f->sys);
		free(f->name);
		return NULL;
	}
	kc.nr++;
	return f;
}

/* Reads the format of @f once; its "ID:" line gives the id when not known. */
static int kc_load(struct fmt *f)
{
	struct obuf t = { 0 };
	char path[4200];
	const char *p;

	if (f->text)
		return 0;
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", kc.tracefs, f->sys, f->name);
	put_file(&t, path, 8, false);
	put(&t, "", 1);
	if (t.err) {
		free(t.p);
		return -t.err;
	}
	p = strstr((char *)t.p + 8, "\nID: ");
	if (p)
		f->id = atoi(p + 5);
	f->len = t.len - 1;
	f->text = (char *)t.p;		/* size(8) format, as the file wants it */
	return 0;
}

/* Every event of the kernel with its id: needed only for an id of no enabled event. */
static void kc_all_ids(void)
{
	char events[4096], path[8400], buf[32];
	char **sys, **ev;
	int i, j, n, m;

	snprintf(events, sizeof(events), "%s/events", kc.tracefs);
	sys = list_dirs(events, "enable", &n);
	for (i = 0; i < n; i++) {
		if (!strcmp(sys[i], "ftrace"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", events, sys[i]);
		ev = list_dirs(path, "id", &m);
		for (j = 0; j < m; j++) {
			snprintf(path, sizeof(path), "%s/%s/%s/id", events, sys[i], ev[j]);
			if (kc_find(sys[i], ev[j], 0) || tm_read_file(path, buf, sizeof(buf)) <= 0)
				continue;
			kc_add(sys[i], ev[j], atoi(buf));
		}
		free_names(ev, m);
	}
	free_names(sys, n);
	kc.all_ids = true;
}

/*
 * count(4) { size(8) format } of events/ftrace, whose events (print, bprint,
 * function, ...) readers need in every file, and whose ids are then known
 */
static int put_ftrace(struct obuf *b, const char *tracefs)
{
	char dir[4200];
	struct fmt *f;
	char **ev;
	int i, n, ret = 0;

	snprintf(dir, sizeof(dir), "%s/events/ftrace", tracefs);
	ev = list_dirs(dir, "format", &n);
	put_u32(b, n);
	for (i = 0; !ret && i < n; i++) {
		f = kc_add("ftrace", ev[i], -1);
		ret = f ? kc_load(f) : -ENOMEM;
		if (!ret)
			put(b, f->text, f->len);
	}
	free_names(ev, n);
	return ret;
}

/* The parts read once per signature: headers, ftrace formats, kallsyms, printk formats. */
static int kc_fill(const char *tracefs, const char *kallsyms, struct obuf *sig)
{
	char path[4200];
	int ret;

	kc.tracefs = strdup(tracefs);
	kc.kallsyms = strdup(kallsyms);
	if (!kc.tracefs || !kc.kallsyms)
		return -ENOMEM;
	kc.sig = *sig;
	*sig = (struct obuf){ 0 };
	put_str(&kc.head, "header_page");
	snprintf(path, sizeof(path), "%s/events/header_page", tracefs);
	put_file(&kc.head, path, 8, false);
	put_str(&kc.head, "header_event");
	snprintf(path, sizeof(path), "%s/events/header_event", tracefs);
	put_file(&kc.head, path, 8, false);
	ret = put_ftrace(&kc.head, tracefs);
	if (ret)
		return ret;
	put_file(&kc.tail, kallsyms, 4, true);
	snprintf(path, sizeof(path), "%s/printk_formats", tracefs);
	put_file(&kc.tail, path, 4, true);
	return -(kc.head.err ? kc.head.err : kc.tail.err);
}

static int cmp_fmt(const void *a, const void *b)
{
	const struct fmt *x = *(struct fmt *const *)a, *y = *(struct fmt *const *)b;
	int r = strcmp(x->sys, y->sys);

	return r ? r : strcmp(x->name, y->name);
}

/* A name tracefs can have as a directory of events/: no path in it. */
static bool event_name(const char *s)
{
	return *s && strcmp(s, ".") && strcmp(s, "..") && !strchr(s, '/');
}

/*
 * An enabled event whose format is gone (a dynamic event removed since
 * set_event was read) is left out with a warning: the file is still good.
 */
static bool format_exists(const char *sys, const char *name)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/events/%s/%s/format", kc.tracefs, sys, name);
	if (!access(path, F_OK) || errno != ENOENT)
		return true;
	tm_log(TRACEMAP_LOG_WARN, "trace.dat: the enabled event %s:%s has no format (%s): "
	       "left out of the file", sys, name, path);
	return false;
}

/* Marks the formats @t needs: its "system:event" lines, then the ids in its pages. */
static int kc_select(const struct tm_tracedat *t)
{
	const char *p = t->events, *nl, *colon;
	char sys[256], name[256];
	struct fmt *f;
	int i, ret;

	for (i = 0; i < kc.nr; i++)
		kc.fmts[i].want = false;
	for (; p && *p; p = nl + 1) {
		nl = strchrnul(p, '\n');
		colon = memchr(p, ':', nl - p);
		if (colon && colon - p < (long)sizeof(sys) && nl - colon <= (long)sizeof(name)) {
			snprintf(sys, sizeof(sys), "%.*s", (int)(colon - p), p);
			snprintf(name, sizeof(name), "%.*s", (int)(nl - colon - 1), colon + 1);
			/* the ftrace formats are all in the ftrace part */
			if (!strcmp(sys, "ftrace") || !event_name(sys) || !event_name(name))
				goto next;
			f = kc_find(sys, name, 0);
			if (!f && !format_exists(sys, name))
				goto next;
			if (!f)
				f = kc_add(sys, name, -1);
			if (!f)
				return -ENOMEM;
			ret = kc_load(f);
			if (ret)
				return ret;
			f->want = true;
		}
next:
		if (!*nl)
			break;
	}
	for (i = 0; t->ids && i < TM_EVENT_IDS; i++) {
		if (!(t->ids[i / 8] & (1 << (i % 8))))
			continue;
		f = kc_find(NULL, NULL, i);
		if (!f && !kc.all_ids) {
			kc_all_ids();
			f = kc_find(NULL, NULL, i);
		}
		if (!f) {
			tm_log(TRACEMAP_LOG_WARN, "trace.dat: event id %d of the pages has no "
			       "format in %s/events: readers will not decode it", i, kc.tracefs);
			continue;
		}
		if (!strcmp(f->sys, "ftrace"))
			continue;
		ret = kc_load(f);
		if (ret)
			return ret;
		f->want = true;
	}
	return 0;
}

/* The part for formats @sel[0..@n) (file order), its reference for kc; under kc.lock. */
static struct kpart *kpart_build(struct fmt **sel, int n)
{
	struct obuf b = { 0 };
	struct kpart *kp;
	int i, nsys = 0;

	for (i = 0; i < n; i++)
		nsys += !i || strcmp(sel[i]->sys, sel[i - 1]->sys);
	put(&b, kc.head.p, kc.head.len);
	put_u32(&b, nsys);
	for (i = 0; i < n; i++) {
		int j = i;

		if (i && !strcmp(sel[i]->sys, sel[i - 1]->sys))
			continue;
		while (j < n && !strcmp(sel[j]->sys, sel[i]->sys))
			j++;
		put_str(&b, sel[i]->sys);
		put_u32(&b, j - i);
		for (j = i; j < n && !strcmp(sel[j]->sys, sel[i]->sys); j++)
			put(&b, sel[j]->text, sel[j]->len);
	}
	put(&b, kc.tail.p, kc.tail.len);
	kp = b.err ? NULL : calloc(1, sizeof(*kp));
	if (!kp) {
		free(b.p);
		return NULL;
	}
	*kp = (struct kpart){ .p = b.p, .len = b.len, .gen = ++kc.last_gen, .refs = 1 };
	return kp;
}

/*
 * The kernel part @t needs, with a reference for the caller (kpart_put()
 * under kc.lock), or NULL with *@err set: read again when /proc/modules or
 * dynamic_events changed, assembled again when the selection of formats did.
 */
static struct kpart *kernel_part(const struct tm_tracedat *t, int *err)
{
	const char *kallsyms = t->kallsyms ? t->kallsyms : "/proc/kallsyms";
	struct kpart *kp = NULL;
	struct fmt **sel = NULL;
	struct obuf sig = { 0 };
	int *idx = NULL;
	char path[4200];
	int i, n = 0;
	int ret;

	put_file(&sig, "/proc/modules", 8, true);
	snprintf(path, sizeof(path), "%s/dynamic_events", t->tracefs);
	put_file(&sig, path, 8, true);

	pthread_mutex_lock(&kc.lock);
	if (sig.err || !kc.tracefs || strcmp(kc.tracefs, t->tracefs) ||
	    strcmp(kc.kallsyms, kallsyms) || kc.sig.len != sig.len ||
	    memcmp(kc.sig.p, sig.p, sig.len)) {
		kc_reset();
		ret = kc_fill(t->tracefs, kallsyms, &sig);
		if (ret)
			goto fail;
	}
	ret = kc_select(t);
	sel = calloc(kc.nr + 1, sizeof(*sel));
	idx = calloc(kc.nr + 1, sizeof(*idx));
	if (!ret && (!sel || !idx))
		ret = -ENOMEM;
	if (ret)
		goto fail;
	for (i = 0; i < kc.nr; i++)
		if (kc.fmts[i].want)
			sel[n++] = &kc.fmts[i];
	qsort(sel, n, sizeof(*sel), cmp_fmt);
	for (i = 0; i < n; i++)
		idx[i] = sel[i] - kc.fmts;
	if (!kc.part || kc.part_n != n || memcmp(kc.part_sel, idx, n * sizeof(*idx))) {
		kp = kpart_build(sel, n);
		if (!kp) {
			ret = -ENOMEM;
			goto fail;
		}
		kpart_put(kc.part);
		free(kc.part_sel);
		kc.part = kp;
		kc.part_sel = idx;
		kc.part_n = n;
		idx = NULL;
	}
	kp = kc.part;
	kp->refs++;
	goto out;
fail:
	/* what failed was explained by put_file(); nothing half-read is kept */
	kc_reset();
	*err = -ret;
out:
	pthread_mutex_unlock(&kc.lock);
	free(idx);
	free(sel);
	free(sig.p);
	return kp;
}

/* "flyrecord\0", the per-CPU table, the clock; returns where the table starts */
static size_t put_flyrecord(struct obuf *b, int nr_cpus, const char *clock_str)
{
	size_t table;
	int i;

	put(b, "flyrecord", 10);
	table = b->len;
	for (i = 0; i < nr_cpus; i++) {
		put_u64(b, 0);
		put_u64(b, 0);
	}
	put_u64(b, strlen(clock_str));
	put(b, clock_str, strlen(clock_str));
	return table;
}

static int write_all(int fd, const void *data, size_t n)
{
	const unsigned char *p = data;
	ssize_t r;

	while (n) {
		r = write(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return tm_err(errno);
		if (!r)
			return tm_err(EIO);
		p += r;
		n -= r;
	}
	return 0;
}

#define PAGE_IOV 256

/* @iov for @cpu's pages @i up to @to, at most PAGE_IOV of them: how many */
static size_t page_iov(struct iovec *iov, const struct tm_tracedat_cpu *cpu, size_t i, size_t to,
		       unsigned int page_size)
{
	size_t n = to - i < PAGE_IOV ? to - i : PAGE_IOV, k;

	for (k = 0; k < n; k++)
		iov[k] = (struct iovec){ (void *)(uintptr_t)cpu->pages[i + k], page_size };
	return n;
}

/* The pages of @cpu, where each one is, in batches of one writev() */
static int write_pages(int fd, const struct tm_tracedat_cpu *cpu, unsigned int page_size)
{
	struct iovec iov[PAGE_IOV];
	size_t i = 0, n, k;
	ssize_t r;

	while (i < cpu->nr_pages) {
		n = page_iov(iov, cpu, i, cpu->nr_pages, page_size);
		r = writev(fd, iov, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return tm_err(errno);
		if (r == (ssize_t)(n * page_size)) {
			i += n;
			continue;
		}
		/* a short write (a pipe): the rest of the page it stopped in, then on */
		k = r / page_size;
		r = write_all(fd, cpu->pages[i + k] + r % page_size, page_size - r % page_size);
		if (r)
			return r;
		i += k + 1;
	}
	return 0;
}

/* The pages of @cpu but those the file @fd holds already, at their offset in it */
static int put_pages(int fd, const struct tm_tracedat_cpu *cpu, unsigned int page_size)
{
	struct iovec iov[PAGE_IOV];
	size_t i = 0, n, to;
	uint64_t at;
	ssize_t r;

	while (i < cpu->nr_pages) {
		if (i >= cpu->keep_from && i < cpu->keep_to) {
			i = cpu->keep_to;
			continue;
		}
		to = i < cpu->keep_from ? cpu->keep_from : cpu->nr_pages;
		n = page_iov(iov, cpu, i, to, page_size);
		at = cpu->offset + (uint64_t)i * page_size;
		r = pwritev(fd, iov, n, at);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return tm_err(errno);
		if (!r)
			return tm_err(EIO);
		/* a short write: on from the page it stopped in, written whole again */
		i += r / page_size;
	}
	return 0;
}

/* Whether @t's cpus as place() left them fit a file whose head ends at @head_end */
static bool placed_ok(const struct tm_tracedat *t, uint64_t head_end)
{
	uint64_t end = head_end;
	int i;

	for (i = 0; i < t->nr; i++) {
		if (t->cpus[i].offset < end || t->cpus[i].offset % t->page_size ||
		    t->cpus[i].keep_from > t->cpus[i].keep_to ||
		    t->cpus[i].keep_to > t->cpus[i].nr_pages)
			return false;
		end = t->cpus[i].offset + (uint64_t)t->cpus[i].nr_pages * t->page_size;
	}
	return true;
}

int tm_tracedat_write(int fd, struct tm_tracedat *t)
{
	static const unsigned char magic[10] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	char *clock_opt = NULL, *clock_str = NULL;
	size_t table, buffer_opt = 0, pos, base;
	struct obuf b = { 0 }, r = { 0 };
	unsigned char *zero = NULL;
	struct kpart *kp = NULL;
	uint64_t *offs = NULL;
	int i, ret, nr_cpus;

	if (!t->nr || !t->page_size)
		return tm_err(EINVAL);
	nr_cpus = t->cpus[t->nr - 1].cpu + 1;
	if (asprintf(&clock_str, "[%s]", t->clock) < 0 ||
	    asprintf(&clock_opt, "[%s]", t->clock) < 0) {
		ret = tm_err(ENOMEM);
		goto out;
	}

	/* the head, then the kernel part (shared, not copied), then @r: the rest */
	put(&b, magic, sizeof(magic));
	put_str(&b, "6");
	put(&b, &(uint8_t){ __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ }, 1);
	put(&b, &(uint8_t){ sizeof(long) }, 1);
	put_u32(&b, t->page_size);
	if (b.err) {
		ret = tm_err(b.err);
		goto out;
	}
	ret = 0;
	kp = kernel_part(t, &ret);
	if (!kp) {
		ret = tm_err(ret ? ret : ENOMEM);
		goto out;
	}
	base = b.len + kp->len;

	put_u64(&r, t->cmdlines_len);
	put(&r, t->cmdlines, t->cmdlines_len);

	put_u32(&r, nr_cpus);
	put(&r, "options  ", 10);
	/* the clock is also stored after each flyrecord table when this option is there */
	put_u16(&r, OPTION_TRACECLOCK);
	put_u32(&r, strlen(clock_opt) + 1);
	put_str(&r, clock_opt);
	if (t->instance) {
		put_u16(&r, OPTION_BUFFER);
		put_u32(&r, 8 + strlen(t->instance) + 1);
		buffer_opt = r.len;
		put_u64(&r, 0);
		put_str(&r, t->instance);
	}
	put_u16(&r, OPTION_DONE);

	/* the top-level buffer; an instance's data goes in its own table, left empty here */
	table = put_flyrecord(&r, nr_cpus, clock_str);
	if (t->instance) {
		patch_u64(&r, buffer_opt, base + r.len);
		table = put_flyrecord(&r, nr_cpus, clock_str);
	}
	if (r.err) {
		ret = tm_err(r.err);
		goto out;
	}

	offs = calloc(t->nr, sizeof(*offs));
	zero = calloc(1, t->page_size);
	if (!offs || !zero) {
		ret = tm_err(ENOMEM);
		goto out;
	}
	pos = base + r.len;
	if (t->place) {
		ret = t->place(t->place_ctx, pos);
		if (!ret && !placed_ok(t, pos))
			ret = tm_err(EINVAL);
		if (ret)
			goto out;
	}
	for (i = 0; i < t->nr; i++) {
		uint64_t size = (uint64_t)t->cpus[i].nr_pages * t->page_size;

		pos = (pos + t->page_size - 1) / t->page_size * t->page_size;
		if (t->place)
			pos = t->cpus[i].offset;
		offs[i] = pos;
		patch_u64(&r, table + (size_t)t->cpus[i].cpu * 16, pos);
		patch_u64(&r, table + (size_t)t->cpus[i].cpu * 16 + 8, size);
		pos += size;
	}

	if (t->have_gen && t->have_gen == kp->gen) {
		/* @fd holds these bytes already */
		ret = lseek(fd, base, SEEK_CUR) < 0 ? tm_err(errno) : 0;
	} else {
		ret = write_all(fd, b.p, b.len);
		if (!ret)
			ret = write_all(fd, kp->p, kp->len);
	}
	if (!ret)
		ret = write_all(fd, r.p, r.len);
	pos = base + r.len;
	/* placed: each CPU's pages where they go, nothing written between */
	for (i = 0; !ret && t->place && i < t->nr; i++) {
		ret = put_pages(fd, &t->cpus[i], t->page_size);
		pos = offs[i] + (uint64_t)t->cpus[i].nr_pages * t->page_size;
		if (!ret && i == t->nr - 1 && lseek(fd, pos, SEEK_SET) < 0)
			ret = tm_err(errno);
	}
	for (i = 0; !ret && !t->place && i < t->nr; i++) {
		ret = write_all(fd, zero, offs[i] - pos);
		if (!ret)
			ret = write_pages(fd, &t->cpus[i], t->page_size);
		pos = offs[i] + (uint64_t)t->cpus[i].nr_pages * t->page_size;
	}
	if (ret)
		tm_log(TRACEMAP_LOG_ERROR, "trace.dat: write failed: %s", strerror(-ret));
	else
		t->gen = kp->gen;
out:
	if (kp) {
		pthread_mutex_lock(&kc.lock);
		kpart_put(kp);
		pthread_mutex_unlock(&kc.lock);
	}
	free(b.p);
	free(r.p);
	free(offs);
	free(zero);
	free(clock_str);
	free(clock_opt);
	return ret;
}
