// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

const char *th_instance_create(const char *tag, int buffer_kb, int subbuf_kb)
{
	static const int sigs[] = { SIGSEGV, SIGABRT, SIGBUS, SIGALRM };
	static bool installed;
	size_t i;

	if (!installed) {
		for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			ti_remove_on_signal(sigs[i]);
		installed = true;
	}
	return ti_instance_create(tag, buffer_kb, subbuf_kb);
}

/* -1 not probed yet, 0 no, 1 yes */
static int have_mmap = -1;

static const char *probe_mmap(void)
{
	static char why[160];
	const char *inst;
	char path[512];
	void *p;
	int fd;

	if (!th_tracefs()) {
		printf("SKIP: tracefs is not mounted or not writable (run as root; "
		       "mount -t tracefs nodev /sys/kernel/tracing)\n");
		exit(TEST_SKIP);
	}
	inst = th_instance_create("probe", 0, 0);
	if (!inst) {
		printf("SKIP: cannot create a tracefs instance\n");
		exit(TEST_SKIP);
	}
	ti_path(path, sizeof(path), inst, "per_cpu/cpu0/trace_pipe_raw");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	p = fd < 0 ? MAP_FAILED : mmap(NULL, getpagesize(), PROT_READ, MAP_SHARED, fd, 0);
	have_mmap = p != MAP_FAILED;
	if (!have_mmap)
		snprintf(why, sizeof(why), "this kernel cannot map trace_pipe_raw (%s): "
			 "Linux 6.10 or later is needed", strerror(errno));
	else
		munmap(p, getpagesize());
	if (fd >= 0)
		close(fd);
	th_instance_remove(inst);
	return have_mmap ? NULL : why;
}

void th_require_mmap(void)
{
	const char *why = probe_mmap();

	if (why) {
		printf("SKIP: %s\n", why);
		exit(TEST_SKIP);
	}
}

void th_require_tracefs(void)
{
	const char *why = probe_mmap();

	if (why)
		printf("note: %s: the cases of the mapping skip\n", why);
}

bool th_have_mmap(void)
{
	if (have_mmap < 0)
		probe_mmap();
	return have_mmap;
}

/* ------------------------------------------------- backends of a case */

const enum th_backend th_backends[3] = { TH_NATIVE, TH_MMAP, TH_READ };

/* the running case's, from th_backend_case() */
static enum th_backend case_backend = TH_NATIVE;

enum th_backend th_backend_case(void **state)
{
	const enum th_backend *b = state ? *state : NULL;

	case_backend = b ? *b : TH_NATIVE;
	if (case_backend == TH_MMAP)
		th_mapping_case("the same case through read() is its twin");
	printf("# backend: %s\n", !th_on_read() ? "the mapping" : th_have_mmap() ?
	       "read(), forced (TRACEMAP_CPU_FORCE_READ)" : "read(), the kernel's only way");
	return case_backend;
}

void th_mapping_case(const char *what)
{
	if (!th_have_mmap()) {
		printf("skip: needs the mapping of trace_pipe_raw (Linux 6.10 or later): %s\n",
		       what);
		skip();
	}
	case_backend = TH_MMAP;
}

bool th_on_read(void)
{
	return case_backend == TH_READ || (case_backend == TH_NATIVE && !th_have_mmap());
}

unsigned int th_cpu_flags(void)
{
	/* without the mapping no flag: the fallback must happen by itself */
	return th_on_read() && th_have_mmap() ? TRACEMAP_CPU_FORCE_READ : 0;
}

void th_assert_stream_backend(const struct tracemap_stream *s)
{
	enum tracemap_backend want = th_on_read() ? TRACEMAP_BACKEND_READ : TRACEMAP_BACKEND_MMAP;
	int i, n = tracemap_stream_nr_cpus(s);

	assert_true(n > 0);
	for (i = 0; i < n; i++) {
		int got = tracemap_cpu_backend(tracemap_stream_cpu(s, i));

		if (got != (int)want)
			fail_msg("reader %d of the stream is on the %s backend, the case is on %s", i,
				 got == TRACEMAP_BACKEND_READ ? "read()" : "mapping",
				 want == TRACEMAP_BACKEND_READ ? "read()" : "the mapping");
	}
}

void th_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static cpu_set_t saved_affinity;

void th_save_affinity(void)
{
	sched_getaffinity(0, sizeof(saved_affinity), &saved_affinity);
}

void th_restore_affinity(void)
{
	sched_setaffinity(0, sizeof(saved_affinity), &saved_affinity);
}

int th_marker_open(const char *name, int raw)
{
	char path[512];

	ti_path(path, sizeof(path), name, raw ? "trace_marker_raw" : "trace_marker");
	return open(path, O_WRONLY | O_CLOEXEC);
}

int th_write_marker_sized(int fd, unsigned int seq, unsigned int size)
{
	char buf[4000];
	ssize_t n;
	int len;

	len = snprintf(buf, sizeof(buf), "seq=%08u cpu=%d ", seq, sched_getcpu());
	if (size > sizeof(buf))
		size = sizeof(buf);
	if (size > (unsigned int)len) {
		memset(buf + len, 'x', size - len);
		len = size;
	} else {
		len--;		/* no padding: no trailing blank either */
	}
	n = write(fd, buf, len);
	if (n < 0)
		return -errno;
	return n == len ? 0 : -EIO;
}

int th_write_marker(int fd, unsigned int seq)
{
	return th_write_marker_sized(fd, seq, 0);
}

int th_write_markers(int fd, unsigned int first, unsigned int count)
{
	unsigned int i;
	int ret;

	for (i = 0; i < count; i++) {
		ret = th_write_marker(fd, first + i);
		if (ret)
			return ret;
	}
	return 0;
}

/* The string of a decoded ftrace:print payload, NUL-terminated in @buf */
static const char *marker_text(const void *payload, unsigned int size, char *buf, size_t len)
{
	/* ftrace:print: 8 bytes common fields, 8 bytes ip, then the string */
	unsigned int n;

	if (size <= 16)
		return NULL;
	n = size - 16 < len - 1 ? size - 16 : len - 1;
	memcpy(buf, (const char *)payload + 16, n);
	buf[n] = '\0';
	return buf;
}

long th_marker_seq(const void *payload, unsigned int size)
{
	const char *s;
	char buf[64];
	long v;

	s = marker_text(payload, size, buf, sizeof(buf));
	if (!s || sscanf(s, "seq=%ld", &v) != 1)
		return -1;
	return v;
}

int th_marker_cpu(const void *payload, unsigned int size)
{
	const char *s;
	char buf[64];

	s = marker_text(payload, size, buf, sizeof(buf));
	s = s ? strstr(s, "cpu=") : NULL;
	return s ? atoi(s + 4) : -1;
}

uint64_t th_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

unsigned long th_cpu_stat(const char *name, int cpu, const char *stat)
{
	char file[64], *txt, *p;
	unsigned long v;

	snprintf(file, sizeof(file), "per_cpu/cpu%d/stats", cpu);
	txt = th_instance_read(name, file);
	assert_non_null(txt);
	p = strstr(txt, stat);
	if (!p)
		free(txt);
	assert_non_null(p);
	v = strtoul(p + strlen(stat), NULL, 10);
	free(txt);
	return v;
}

/* ----------------------------------------------------- collected markers */

struct th_event *th_events_add(struct th_events *g, const struct tracemap_event *ev)
{
	struct th_event *e;

	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 1024;
		g->ev = realloc(g->ev, g->cap * sizeof(*g->ev));
		assert_non_null(g->ev);
	}
	e = &g->ev[g->n];
	*e = (struct th_event){ .ts = ev->ts, .missed = ev->missed, .cpu = ev->cpu };
	e->seq = th_marker_seq(ev->data, ev->size);
	/* only our markers are in the private instance: anything else is a decoding error */
	assert_true(e->seq >= 0);
	e->wcpu = th_marker_cpu(ev->data, ev->size);
	assert_true(e->wcpu >= 0);
	g->n++;
	return e;
}

void th_events_free(struct th_events *g)
{
	free(g->ev);
	memset(g, 0, sizeof(*g));
}

unsigned int th_drain_events(struct tracemap_cpu *c, struct th_events *g)
{
	struct tracemap_event ev;
	unsigned int i;
	int ret;

	for (i = 0; i < TH_DRAIN_LIMIT; i++) {
		ret = tracemap_cpu_next_event(c, &ev);
		if (!ret)
			return i;
		assert_int_equal(ret, 1);
		assert_int_equal(ev.cpu, tracemap_cpu_id(c));
		th_events_add(g, &ev);
	}
	fail_msg("reader did not run dry within %u calls", TH_DRAIN_LIMIT);
	return i;
}

void th_trace_markers(const char *name, const char *file, struct th_events *g)
{
	char *txt, *p;

	txt = th_instance_read(name, file);
	assert_non_null(txt);
	/* by hand: a sanitizer's strstr() is quadratic on megabytes of text */
	for (p = txt; *p; p++) {
		if (*p != 's' || strncmp(p, "seq=", 4))
			continue;
		if (g->n == g->cap) {
			g->cap = g->cap ? g->cap * 2 : 1024;
			g->ev = realloc(g->ev, g->cap * sizeof(*g->ev));
			if (!g->ev)
				free(txt);
			assert_non_null(g->ev);
		}
		g->ev[g->n++] = (struct th_event){ .seq = strtol(p + 4, NULL, 10), .cpu = -1,
						   .wcpu = -1 };
	}
	free(txt);
}

void th_assert_seq_run(const struct th_events *g, unsigned int from, long first,
		       unsigned int count)
{
	unsigned int i;

	assert_int_equal(g->n - from, count);
	for (i = 0; i < count; i++) {
		const struct th_event *e = &g->ev[from + i];

		if (e->seq != first + (long)i)
			fail_msg("event %u: seq %ld, expected %ld", i, e->seq, first + (long)i);
		assert_int_equal(e->missed, 0);
	}
}

/* --------------------------------------------------------- writer thread */

static void *writer_main(void *arg)
{
	struct th_writer *w = arg;
	unsigned int i;
	uint64_t t0;
	int ret;

	th_pin(w->cpu);
	t0 = th_now_ns();
	for (i = 0; i < __atomic_load_n(&w->count, __ATOMIC_RELAXED); i++) {
		if (w->rate)
			while (th_now_ns() - t0 < (uint64_t)i * 1000000000ull / w->rate)
				;
		ret = th_write_marker_sized(w->fd, i, w->size);
		if (ret) {
			__atomic_store_n(&w->error, ret, __ATOMIC_RELEASE);
			break;
		}
		/* pairs with the acquire load in th_writer_written() */
		__atomic_store_n(&w->written, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

void th_writer_start(struct th_writer *w, const char *name, int cpu, unsigned int count,
		     unsigned int rate)
{
	th_writer_start_sized(w, name, cpu, count, rate, 0);
}

void th_writer_start_sized(struct th_writer *w, const char *name, int cpu, unsigned int count,
			   unsigned int rate, unsigned int size)
{
	*w = (struct th_writer){ .cpu = cpu, .count = count, .rate = rate, .size = size };
	w->fd = th_marker_open(name, 0);
	assert_true(w->fd >= 0);
	assert_int_equal(pthread_create(&w->thread, NULL, writer_main, w), 0);
	w->started = true;
}

void th_writer_cancel(struct th_writer *w)
{
	__atomic_store_n(&w->count, 0, __ATOMIC_RELAXED);
}

void th_writer_join(struct th_writer *w)
{
	if (!w->started)
		return;
	pthread_join(w->thread, NULL);
	w->started = false;
	close(w->fd);
	w->fd = -1;
}

unsigned int th_writer_written(const struct th_writer *w)
{
	return __atomic_load_n(&w->written, __ATOMIC_ACQUIRE);
}

bool th_writer_done(const struct th_writer *w)
{
	return th_writer_written(w) >= __atomic_load_n(&w->count, __ATOMIC_RELAXED) ||
	       __atomic_load_n(&w->error, __ATOMIC_ACQUIRE);
}

unsigned int th_writer_wait(const struct th_writer *w, unsigned int n, uint64_t deadline_ns)
{
	while (!th_writer_done(w) && th_writer_written(w) < n && th_now_ns() < deadline_ns)
		sched_yield();
	return th_writer_written(w);
}

/* --------------------------------------------------------------- fixture */

void th_fixture_clear_got(struct th_fixture *f)
{
	int i;

	for (i = 0; i < TH_FIXTURE_GOT; i++)
		th_events_free(&f->got[i]);
}

void th_fixture_drop(struct th_fixture *f)
{
	int i;

	th_writer_join(&f->w);
	for (i = 0; i < TH_MAX_READERS; i++) {
		tracemap_cpu_close(f->rd[i]);
		f->rd[i] = NULL;
	}
	if (f->marker >= 0)
		close(f->marker);
	f->marker = -1;
	if (f->inst)
		th_instance_remove(f->inst);
	f->inst = NULL;
	th_fixture_clear_got(f);
}

static struct th_fixture *run_fixture;

static int fixture_setup(void **state)
{
	th_save_affinity();
	return 0;
}

int th_fixture_teardown(void **state)
{
	/* the next case says its own backend, or has none */
	case_backend = TH_NATIVE;
	th_fixture_drop(run_fixture);
	th_restore_affinity();
	return 0;
}

int th_fixture_run(const char *name, const struct CMUnitTest *tests, size_t n,
		   struct th_fixture *f)
{
	run_fixture = f;
	/* the cases of the mapping skip one by one (th_fixture_open(), th_mapping_case()) */
	th_require_tracefs();
	return _cmocka_run_group_tests(name, tests, n, fixture_setup, th_fixture_teardown) ? 1 : 0;
}

void th_fixture_new(struct th_fixture *f, int buffer_kb, int subbuf_kb)
{
	char path[512];

	th_fixture_drop(f);
	/* buffer_subbuf_size_kb came with Linux 6.8 */
	snprintf(path, sizeof(path), "%s/buffer_subbuf_size_kb", th_tracefs());
	if (subbuf_kb > 4 && access(path, F_OK)) {
		printf("skip: no %s (Linux 6.8 or later): no %d KiB sub-buffers\n", path, subbuf_kb);
		skip();
	}
	f->inst = th_instance_create(f->tag, buffer_kb, subbuf_kb);
	/* th_instance_create() printed why */
	if (!f->inst && errno == EPERM && subbuf_kb > 0)
		skip();
	assert_non_null(f->inst);
	f->marker = th_marker_open(f->inst, 0);
	assert_true(f->marker >= 0);
}

struct tracemap_cpu *th_fixture_open(struct th_fixture *f, int cpu, enum tracemap_mode mode,
				     unsigned int flags)
{
	struct tracemap_cpu_opts o = { .sz = sizeof(o), .mode = mode, .flags = flags };
	/* forced, or a read() case's consuming reader (th_cpu_flags(): the fallback) */
	bool read = (flags & TRACEMAP_CPU_FORCE_READ) ||
		    (mode == TRACEMAP_MODE_CONSUME && case_backend == TH_READ);
	struct tracemap_cpu *c;
	int i;

	if (!read && !th_have_mmap()) {
		printf("skip: the mapping is needed (Linux 6.10 or later)\n");
		skip();
	}
	c = tracemap_cpu_open(f->inst, cpu, &o);
	assert_non_null(c);
	for (i = 0; i < TH_MAX_READERS && f->rd[i]; i++)
		;
	if (i == TH_MAX_READERS)
		tracemap_cpu_close(c);
	assert_true(i < TH_MAX_READERS);
	f->rd[i] = c;
	assert_int_equal(tracemap_cpu_mode(c), mode);
	/* a silent fallback would test the wrong backend */
	assert_int_equal(tracemap_cpu_backend(c), read ? TRACEMAP_BACKEND_READ :
			 TRACEMAP_BACKEND_MMAP);
	return c;
}

void th_fixture_close(struct th_fixture *f, struct tracemap_cpu *c)
{
	int i;

	for (i = 0; i < TH_MAX_READERS; i++)
		if (f->rd[i] == c)
			f->rd[i] = NULL;
	tracemap_cpu_close(c);
}

void th_fixture_write_markers(struct th_fixture *f, unsigned int first, unsigned int count)
{
	assert_int_equal(th_write_markers(f->marker, first, count), 0);
}

struct tracemap_cpu *th_fixture_consume_markers(struct th_fixture *f, int buffer_kb,
						unsigned int flags, unsigned int count,
						unsigned int taken)
{
	struct tracemap_event ev;
	struct tracemap_cpu *c;
	unsigned int i;

	th_fixture_new(f, buffer_kb, 0);
	th_pin(0);
	c = th_fixture_open(f, 0, TRACEMAP_MODE_CONSUME, flags);
	th_fixture_write_markers(f, 0, count);
	for (i = 0; i < taken; i++) {
		assert_int_equal(tracemap_cpu_next_event(c, &ev), 1);
		assert_int_equal(th_marker_seq(ev.data, ev.size), i);
	}
	return c;
}

/* bytes of one marker record, measured by th_measure_marker_record() */
static unsigned int marker_record;

unsigned int th_measure_marker_record(const char *tag)
{
	struct tracemap_cpu_opts o = { .sz = sizeof(o), .mode = TRACEMAP_MODE_CONSUME };
	struct tracemap_cpu *c = NULL;
	struct tracemap_region r;
	const char *inst;
	int fd = -1;

	marker_record = 0;
	th_pin(0);
	inst = th_instance_create(tag, 0, 4);
	if (inst) {
		c = tracemap_cpu_open(inst, 0, &o);
		fd = th_marker_open(inst, 0);
	}
	if (c && fd >= 0 && !th_write_marker(fd, 0) && tracemap_cpu_read_region(c, &r) == 1 &&
	    r.end > r.start)
		marker_record = r.end - r.start;
	/* a few dozen bytes: anything else is a measuring error */
	if (marker_record < 16 || marker_record >= 256)
		marker_record = 0;
	tracemap_cpu_close(c);
	if (fd >= 0)
		close(fd);
	if (inst)
		th_instance_remove(inst);
	return marker_record;
}

unsigned int th_markers_per_subbuf(int subbuf_kb)
{
	assert_true(marker_record > 0);
	return (subbuf_kb * 1024 - 16) / marker_record;
}
