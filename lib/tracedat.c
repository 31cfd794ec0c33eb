// SPDX-License-Identifier: LGPL-2.1
/*
 * The trace.dat writer: file version 6, uncompressed, which trace-cmd 3.1.6
 * and KernelShark 2.2.1 read as they are. Layout (all numbers in host
 * order, announced by the endian byte):
 *
 *   "\027\010\104tracing" "6\0" endian(1) sizeof(long)(1) page_size(4)
 *   "header_page\0" size(8) events/header_page
 *   "header_event\0" size(8) events/header_event
 *   count(4) { size(8) format } of events/ftrace/
 *   systems(4) { "name\0" count(4) { size(8) format } } of the other systems
 *   size(4) /proc/kallsyms   size(4) printk_formats   size(8) saved_cmdlines
 *   cpus(4) "options  \0" { id(2) size(4) data } 0(2)
 *   "flyrecord\0" { offset(8) size(8) } per CPU, size(8) "[clock]"
 *   for an instance, the same flyrecord table again, where its BUFFER
 *   option points, and the top-level table left empty;
 *   then each CPU's pages, aligned to the page size.
 *
 * Everything before the pages is built in memory first, so every offset is
 * known before the first byte goes out and @fd may be a pipe.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* count(4) { size(8) format } of the events of one system directory */
static void put_system(struct obuf *b, const char *sysdir)
{
	char path[4096];
	char **ev;
	int i, n;

	ev = list_dirs(sysdir, "format", &n);
	put_u32(b, n);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s/format", sysdir, ev[i]);
		put_file(b, path, 8, false);
	}
	free_names(ev, n);
}

static void put_formats(struct obuf *b, const char *tracefs)
{
	char events[4096], path[4200];
	char **sys;
	int i, n, nsys = 0;

	snprintf(events, sizeof(events), "%s/events", tracefs);
	snprintf(path, sizeof(path), "%s/ftrace", events);
	put_system(b, path);

	/* directories that hold events: each has an "enable" file, and is not ftrace */
	sys = list_dirs(events, "enable", &n);
	for (i = 0; i < n; i++)
		nsys += strcmp(sys[i], "ftrace") != 0;
	put_u32(b, nsys);
	for (i = 0; i < n; i++) {
		if (!strcmp(sys[i], "ftrace"))
			continue;
		put_str(b, sys[i]);
		snprintf(path, sizeof(path), "%s/%s", events, sys[i]);
		put_system(b, path);
	}
	free_names(sys, n);
}

/* "flyrecord\0", the per-CPU table, the clock; returns where the table starts */
/*
 * What the file says about the kernel rather than the trace: header_page
 * and header_event, every event format, kallsyms, printk formats. Reading
 * it takes some 2000 tracefs files and megabytes of kallsyms, most of a
 * dump's cost when the buffer is small (a live view takes one a second),
 * and it changes only when modules come or go or dynamic events (kprobes,
 * uprobes, synthetic events) are made. So the last one is kept with
 * /proc/modules and dynamic_events as they read then, and reused while both
 * read the same. BPF programs loaded meanwhile add kallsyms entries that a
 * reused copy lacks.
 */
static struct {
	pthread_mutex_t lock;
	char *tracefs;
	struct obuf sig;
	struct obuf part;
} kernel_part = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void put_kernel_part(struct obuf *b, const char *tracefs)
{
	struct obuf sig = { 0 }, part = { 0 };
	char path[4200], *dir;

	put_file(&sig, "/proc/modules", 8, true);
	snprintf(path, sizeof(path), "%s/dynamic_events", tracefs);
	put_file(&sig, path, 8, true);

	pthread_mutex_lock(&kernel_part.lock);
	if (!sig.err && kernel_part.tracefs && !strcmp(kernel_part.tracefs, tracefs) &&
	    kernel_part.sig.len == sig.len && !memcmp(kernel_part.sig.p, sig.p, sig.len)) {
		put(b, kernel_part.part.p, kernel_part.part.len);
		goto out;
	}
	put_str(&part, "header_page");
	snprintf(path, sizeof(path), "%s/events/header_page", tracefs);
	put_file(&part, path, 8, false);
	put_str(&part, "header_event");
	snprintf(path, sizeof(path), "%s/events/header_event", tracefs);
	put_file(&part, path, 8, false);
	put_formats(&part, tracefs);
	put_file(&part, "/proc/kallsyms", 4, true);
	snprintf(path, sizeof(path), "%s/printk_formats", tracefs);
	put_file(&part, path, 4, true);
	if (part.err) {
		b->err = part.err;
		goto out;
	}
	put(b, part.p, part.len);
	dir = strdup(tracefs);
	if (sig.err || !dir) {
		free(dir);
		goto out;
	}
	free(kernel_part.tracefs);
	free(kernel_part.sig.p);
	free(kernel_part.part.p);
	kernel_part.tracefs = dir;
	kernel_part.sig = sig;
	kernel_part.part = part;
	sig = (struct obuf){ 0 };
	part = (struct obuf){ 0 };
out:
	pthread_mutex_unlock(&kernel_part.lock);
	free(sig.p);
	free(part.p);
}

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

int tm_tracedat_write(int fd, const struct tm_tracedat *t)
{
	static const unsigned char magic[10] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	char *clock_opt = NULL, *clock_str = NULL;
	size_t table, buffer_opt = 0, pos;
	unsigned char *zero = NULL;
	struct obuf b = { 0 };
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

	put(&b, magic, sizeof(magic));
	put_str(&b, "6");
	put(&b, &(uint8_t){ __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ }, 1);
	put(&b, &(uint8_t){ sizeof(long) }, 1);
	put_u32(&b, t->page_size);

	put_kernel_part(&b, t->tracefs);
	put_u64(&b, t->cmdlines_len);
	put(&b, t->cmdlines, t->cmdlines_len);

	put_u32(&b, nr_cpus);
	put(&b, "options  ", 10);
	/* the clock is also stored after each flyrecord table when this option is there */
	put_u16(&b, OPTION_TRACECLOCK);
	put_u32(&b, strlen(clock_opt) + 1);
	put_str(&b, clock_opt);
	if (t->instance) {
		put_u16(&b, OPTION_BUFFER);
		put_u32(&b, 8 + strlen(t->instance) + 1);
		buffer_opt = b.len;
		put_u64(&b, 0);
		put_str(&b, t->instance);
	}
	put_u16(&b, OPTION_DONE);

	/* the top-level buffer; an instance's data goes in its own table, left empty here */
	table = put_flyrecord(&b, nr_cpus, clock_str);
	if (t->instance) {
		patch_u64(&b, buffer_opt, b.len);
		table = put_flyrecord(&b, nr_cpus, clock_str);
	}
	if (b.err) {
		ret = tm_err(b.err);
		goto out;
	}

	offs = calloc(t->nr, sizeof(*offs));
	zero = calloc(1, t->page_size);
	if (!offs || !zero) {
		ret = tm_err(ENOMEM);
		goto out;
	}
	pos = b.len;
	for (i = 0; i < t->nr; i++) {
		uint64_t size = (uint64_t)t->cpus[i].nr_pages * t->page_size;

		pos = (pos + t->page_size - 1) / t->page_size * t->page_size;
		offs[i] = pos;
		patch_u64(&b, table + (size_t)t->cpus[i].cpu * 16, pos);
		patch_u64(&b, table + (size_t)t->cpus[i].cpu * 16 + 8, size);
		pos += size;
	}

	ret = write_all(fd, b.p, b.len);
	pos = b.len;
	for (i = 0; !ret && i < t->nr; i++) {
		ret = write_all(fd, zero, offs[i] - pos);
		if (!ret)
			ret = write_all(fd, t->cpus[i].pages,
					(size_t)t->cpus[i].nr_pages * t->page_size);
		pos = offs[i] + (uint64_t)t->cpus[i].nr_pages * t->page_size;
	}
	if (ret)
		tm_log(TRACEMAP_LOG_ERROR, "trace.dat: write failed: %s", strerror(-ret));
out:
	free(b.p);
	free(offs);
	free(zero);
	free(clock_str);
	free(clock_opt);
	return ret;
}
