// SPDX-License-Identifier: LGPL-2.1
/*
 * Consuming per-CPU reader on the real tracefs, through the mapping and
 * through the read() fallback (the same tests, parameterised by backend):
 * exact counts and order of trace_marker events around sub-buffer
 * boundaries, per-CPU placement, events really leaving the kernel buffer,
 * exact overwrite-mode loss accounting and buffer resets.
 *
 * timeout: 180
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <kbuffer.h>

#include "harness.h"
#include "tracemap.h"

#define TAG		"kc"
#define MAX_READERS	4
#define DRAIN_LIMIT	(1u << 22)	/* calls: bounds every drain loop */

enum api {
	API_EVENTS,			/* tracemap_cpu_next_event() */
	API_PAGES,			/* tracemap_cpu_read_page(), decoded with kbuffer */
};

struct params {
	unsigned int flags;		/* 0 or TRACEMAP_CPU_FORCE_READ */
	int subbuf_kb;
	enum api api;
};

struct got_ev {
	long seq;
	long long missed;
	int cpu;			/* reader's CPU as reported with the event */
	int wcpu;			/* CPU the writer ran on, from the payload */
};

struct got {
	struct got_ev *ev;
	unsigned int n;
	unsigned int cap;
	unsigned int pages;
};

struct writer {
	pthread_t thread;
	bool started;
	int fd;
	int cpu;
	unsigned int count;
	unsigned int rate;		/* events per second */
	unsigned int written;		/* atomic: events written so far */
	int error;			/* atomic: -errno of a failed write */
};

static struct {
	const char *inst;
	struct tracemap_cpu *rd[MAX_READERS];
	int marker;
	cpu_set_t saved;
	struct got g[2];
	struct writer w;
} fx = { .marker = -1 };

/* bytes of one "seq=%08u cpu=%d" trace_marker record, measured once */
static unsigned int rec_size;

/* ------------------------------------------------------------- fixture */

static void stop_writer(void)
{
	if (!fx.w.started)
		return;
	/* the writer's loop is bounded by its count: it ends by itself */
	pthread_join(fx.w.thread, NULL);
	fx.w.started = false;
	close(fx.w.fd);
}

/* Close everything of the current instance and remove it. */
static void drop_instance(void)
{
	int i;

	stop_writer();
	for (i = 0; i < MAX_READERS; i++) {
		tracemap_cpu_close(fx.rd[i]);
		fx.rd[i] = NULL;
	}
	if (fx.marker >= 0)
		close(fx.marker);
	fx.marker = -1;
	if (fx.inst)
		th_instance_remove(fx.inst);
	fx.inst = NULL;
	for (i = 0; i < 2; i++) {
		free(fx.g[i].ev);
		memset(&fx.g[i], 0, sizeof(fx.g[i]));
	}
}

static void drop_got(void)
{
	int i;

	for (i = 0; i < 2; i++) {
		free(fx.g[i].ev);
		memset(&fx.g[i], 0, sizeof(fx.g[i]));
	}
}

static int teardown(void **state)
{
	drop_instance();
	sched_setaffinity(0, sizeof(fx.saved), &fx.saved);
	return 0;
}

static void new_instance(int buffer_kb, int subbuf_kb)
{
	drop_instance();
	fx.inst = th_instance_create(TAG, buffer_kb, subbuf_kb);
	assert_non_null(fx.inst);
	fx.marker = th_marker_open(fx.inst, 0);
	assert_true(fx.marker >= 0);
}

static struct tracemap_cpu *open_reader(int cpu, unsigned int flags)
{
	struct tracemap_cpu_opts o = { .sz = sizeof(o), .mode = TRACEMAP_MODE_CONSUME,
				       .flags = flags };
	struct tracemap_cpu *c;
	int i;

	c = tracemap_cpu_open(fx.inst, cpu, &o);
	assert_non_null(c);
	/* a silent fallback would test the wrong backend */
	assert_int_equal(tracemap_cpu_backend(c), flags & TRACEMAP_CPU_FORCE_READ ?
			 TRACEMAP_BACKEND_READ : TRACEMAP_BACKEND_MMAP);
	for (i = 0; i < MAX_READERS && fx.rd[i]; i++)
		;
	assert_true(i < MAX_READERS);
	fx.rd[i] = c;
	return c;
}

static void close_reader(struct tracemap_cpu *c)
{
	int i;

	for (i = 0; i < MAX_READERS; i++)
		if (fx.rd[i] == c)
			fx.rd[i] = NULL;
	tracemap_cpu_close(c);
}

/* Markers of constant size: "seq=%08u cpu=%d" */
static void write_markers(unsigned int first, unsigned int count)
{
	char buf[64];
	unsigned int i;
	int len;

	for (i = 0; i < count; i++) {
		len = snprintf(buf, sizeof(buf), "seq=%08u cpu=%d", first + i, sched_getcpu());
		assert_int_equal(write(fx.marker, buf, len), len);
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Writer thread on its own CPU, paced by spinning on the clock. */
static void *writer_main(void *arg)
{
	struct writer *w = arg;
	unsigned int i;
	char buf[64];
	uint64_t t0;
	int len;

	th_pin(w->cpu);
	t0 = now_ns();
	for (i = 0; i < w->count; i++) {
		while (now_ns() - t0 < (uint64_t)i * 1000000000ull / w->rate)
			;
		len = snprintf(buf, sizeof(buf), "seq=%08u cpu=%d", i, sched_getcpu());
		if (write(w->fd, buf, len) != len) {
			__atomic_store_n(&w->error, -errno, __ATOMIC_RELEASE);
			break;
		}
		/* pairs with the acquire load in writer_done() */
		__atomic_store_n(&w->written, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void start_writer(int cpu, unsigned int count, unsigned int rate)
{
	fx.w = (struct writer){ .cpu = cpu, .count = count, .rate = rate };
	fx.w.fd = th_marker_open(fx.inst, 0);
	assert_true(fx.w.fd >= 0);
	assert_int_equal(pthread_create(&fx.w.thread, NULL, writer_main, &fx.w), 0);
	fx.w.started = true;
}

static bool writer_done(void)
{
	return __atomic_load_n(&fx.w.written, __ATOMIC_ACQUIRE) == fx.w.count ||
	       __atomic_load_n(&fx.w.error, __ATOMIC_ACQUIRE);
}

static void reset_buffer(void)
{
	assert_int_equal(th_instance_write(fx.inst, "trace", ""), 0);
}

/* Lines of @file of the instance that carry one of our markers */
static unsigned int count_trace_lines(const char *file)
{
	unsigned int n = 0;
	char *txt, *p;

	txt = th_instance_read(fx.inst, file);
	assert_non_null(txt);
	/* by hand: a sanitizer's strstr() is quadratic on megabytes of text */
	for (p = txt; *p; p++)
		if (*p == 's' && !strncmp(p, "seq=", 4))
			n++;
	free(txt);
	return n;
}

static int online_cpus(void)
{
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

/* ------------------------------------------------------------- draining */

static void got_add(struct got *g, const void *payload, unsigned int size, long long missed,
		    int cpu)
{
	const char *cp;
	char buf[64];
	unsigned int n;

	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 1024;
		g->ev = realloc(g->ev, g->cap * sizeof(*g->ev));
		assert_non_null(g->ev);
	}
	g->ev[g->n].seq = th_marker_seq(payload, size);
	/* anything but our marker in the private instance is a decoding error */
	assert_true(g->ev[g->n].seq >= 0);
	n = size - 16 < sizeof(buf) - 1 ? size - 16 : sizeof(buf) - 1;
	memcpy(buf, (const char *)payload + 16, n);
	buf[n] = '\0';
	cp = strstr(buf, "cpu=");
	assert_non_null(cp);
	g->ev[g->n].wcpu = atoi(cp + 4);
	g->ev[g->n].missed = missed;
	g->ev[g->n].cpu = cpu;
	g->n++;
}

static void drain_events(struct tracemap_cpu *c, struct got *g)
{
	struct tracemap_event ev;
	unsigned int i;
	int ret;

	for (i = 0; i < DRAIN_LIMIT; i++) {
		ret = tracemap_cpu_next_event(c, &ev);
		if (!ret)
			return;
		assert_int_equal(ret, 1);
		got_add(g, ev.data, ev.size, ev.missed, ev.cpu);
	}
	fail_msg("reader did not run dry within %u calls", DRAIN_LIMIT);
}

/* Decode one page as trace-cmd would, with libtraceevent's own parser. */
static void add_page(struct got *g, void *page, unsigned int subbuf_size, int cpu)
{
	unsigned long long ts, commit;
	struct kbuffer *kb;
	long long missed = 0;
	unsigned int size;
	void *p;

	memcpy(&commit, (char *)page + 8, sizeof(commit));
	size = (uint32_t)commit & ((1u << 27) - 1);
	assert_true(size <= subbuf_size - 16);
	if ((uint32_t)commit & (1u << 31)) {
		missed = -1;
		if ((uint32_t)commit & (1u << 30))
			memcpy(&missed, (char *)page + 16 + size, sizeof(missed));
	}
	kb = kbuffer_alloc(KBUFFER_LSIZE_SAME_AS_HOST, KBUFFER_ENDIAN_SAME_AS_HOST);
	assert_non_null(kb);
	assert_int_equal(kbuffer_load_subbuffer(kb, page), 0);
	for (p = kbuffer_read_event(kb, &ts); p; p = kbuffer_next_event(kb, &ts)) {
		got_add(g, p, kbuffer_event_size(kb), missed, cpu);
		missed = 0;
	}
	kbuffer_free(kb);
	/* a page carrying a loss but no event would lose the report */
	assert_int_equal(missed, 0);
	g->pages++;
}

/* Complete pages, then with @flush the held-back partial one too */
static void drain_pages(struct tracemap_cpu *c, struct got *g, bool flush)
{
	unsigned int sbs = tracemap_cpu_subbuf_size(c), i, flags = 0;
	void *page = malloc(sbs);
	int ret;

	assert_non_null(page);
	for (i = 0; i < DRAIN_LIMIT; i++) {
		ret = tracemap_cpu_read_page(c, page, sbs, flags);
		if (ret < 0)
			free(page);
		assert_true(ret >= 0);
		if (!ret) {
			if (flags || !flush)
				break;
			/* complete pages first, then the held-back tail */
			flags = TRACEMAP_PAGE_FLUSH;
			continue;
		}
		assert_int_equal(ret, sbs);
		add_page(g, page, sbs, tracemap_cpu_id(c));
	}
	free(page);
	assert_true(i < DRAIN_LIMIT);
}

static void drain(struct tracemap_cpu *c, enum api api, struct got *g)
{
	if (api == API_PAGES)
		drain_pages(c, g, true);
	else
		drain_events(c, g);
}

/* Exactly seq first..first+count-1, in order, nothing lost, all from @cpu */
static void check_exact(const struct got *g, unsigned int from, long first, unsigned int count,
			int cpu)
{
	unsigned int i;

	assert_int_equal(g->n - from, count);
	for (i = 0; i < count; i++) {
		const struct got_ev *e = &g->ev[from + i];

		if (e->seq != first + (long)i)
			fail_msg("event %u: seq %ld, expected %ld", i, e->seq, first + (long)i);
		assert_int_equal(e->missed, 0);
		assert_int_equal(e->cpu, cpu);
		assert_int_equal(e->wcpu, cpu);
	}
}

static void check_stats(struct tracemap_cpu *c, const struct params *p, uint64_t delivered,
			uint64_t lost, uint64_t entries)
{
	struct tracemap_cpu_stats st;

	assert_int_equal(tracemap_cpu_stats(c, &st, sizeof(st)), 0);
	if (p->api == API_EVENTS)
		assert_int_equal(st.events, delivered);
	assert_int_equal(st.lost, lost);
	assert_int_equal(st.lost_unknown, 0);
	assert_int_equal(st.corrupt, 0);
	if (p->flags & TRACEMAP_CPU_FORCE_READ) {
		assert_int_equal(st.get_reader, 0);
		assert_true(st.reads > 0);
	} else {
		assert_int_equal(st.reads, 0);
		/* the kernel's own counters agree */
		assert_int_equal(st.kernel_entries, entries);
		assert_int_equal(st.kernel_read, entries - lost);
		assert_int_equal(st.kernel_overrun, lost);
	}
}

/* Events of one sub-buffer of @subbuf_kb */
static unsigned int per_page(int subbuf_kb)
{
	return (subbuf_kb * 1024 - 16) / rec_size;
}

/* ---------------------------------------------------------------- tests */

/*
 * One marker into a fresh buffer, read as one region: its length is the
 * record size the page-boundary counts are computed from.
 */
static int measure_record(void **state)
{
	struct tracemap_region r;
	struct tracemap_cpu *c;

	sched_getaffinity(0, sizeof(fx.saved), &fx.saved);
	th_pin(0);
	new_instance(0, 4);
	c = open_reader(0, 0);
	write_markers(0, 1);
	if (tracemap_cpu_read_region(c, &r) != 1 || r.end <= r.start)
		return -1;
	rec_size = r.end - r.start;
	drop_instance();
	printf("one marker record: %u bytes, %u per 4 KiB, %u per 8 KiB sub-buffer\n", rec_size,
	       per_page(4), per_page(8));
	return rec_size >= 16 && rec_size < 256 ? 0 : -1;
}

static void counts_of(int subbuf_kb, unsigned int counts[5])
{
	unsigned int pp = per_page(subbuf_kb);

	counts[0] = 1;
	counts[1] = pp / 2;
	counts[2] = pp;
	counts[3] = pp + 1;
	counts[4] = 50 * pp;
}

/* Each count into a fresh buffer, the reader open before the writes. */
static void test_counts(void **state)
{
	const struct params *p = *state;
	unsigned int counts[5], i;
	struct tracemap_cpu *c;

	counts_of(p->subbuf_kb, counts);
	th_pin(0);
	for (i = 0; i < 5; i++) {
		new_instance(1024, p->subbuf_kb);
		c = open_reader(0, p->flags);
		assert_int_equal(tracemap_cpu_subbuf_size(c), p->subbuf_kb * 1024);
		write_markers(0, counts[i]);
		drain(c, p->api, &fx.g[0]);
		check_exact(&fx.g[0], 0, 0, counts[i], 0);
		check_stats(c, p, counts[i], 0, counts[i]);
		if (p->api == API_PAGES)
			assert_true(fx.g[0].pages >= (counts[i] + per_page(p->subbuf_kb) - 1) /
				    per_page(p->subbuf_kb));
		/* nothing is delivered twice */
		drain(c, p->api, &fx.g[0]);
		assert_int_equal(fx.g[0].n, counts[i]);
		drop_instance();
	}
}

/*
 * The same counts one after the other on one reader: every batch starts
 * where the last one left the writer, inside a partly read sub-buffer.
 */
static void test_counts_incremental(void **state)
{
	const struct params *p = *state;
	unsigned int counts[5], i, seq = 0;
	struct tracemap_cpu *c;

	counts_of(p->subbuf_kb, counts);
	th_pin(0);
	new_instance(1024, p->subbuf_kb);
	c = open_reader(0, p->flags);
	for (i = 0; i < 5; i++) {
		unsigned int from = fx.g[0].n;

		write_markers(seq, counts[i]);
		drain(c, p->api, &fx.g[0]);
		check_exact(&fx.g[0], from, seq, counts[i], 0);
		seq += counts[i];
	}
	check_exact(&fx.g[0], 0, 0, seq, 0);
	check_stats(c, p, seq, 0, seq);
}

/* Writes hopping between CPUs land in the reader of the CPU they ran on. */
static void test_both_cpus(void **state)
{
	const struct params *p = *state;
	unsigned int chunk, i, k[2] = { 0, 0 }, seq = 0, from = 0;
	struct tracemap_cpu *c[2];

	if (online_cpus() < 2)
		skip();
	new_instance(1024, p->subbuf_kb);
	for (i = 0; i < 2; i++)
		c[i] = open_reader(i, p->flags);
	for (chunk = 0; chunk < 40; chunk++) {
		th_pin(chunk % 2);
		/* chunks of varying length so that pages end at different places */
		write_markers(seq, 5 + chunk * 7);
		seq += 5 + chunk * 7;
	}
	for (i = 0; i < 2; i++) {
		drain(c[i], p->api, &fx.g[i]);
		assert_int_equal(tracemap_cpu_id(c[i]), i);
	}
	/* replay the chunk layout: per-CPU order is write order */
	seq = 0;
	for (chunk = 0; chunk < 40; chunk++) {
		int cpu = chunk % 2;

		from = k[cpu];
		for (i = 0; i < 5 + chunk * 7; i++) {
			const struct got_ev *e;

			assert_true(from + i < fx.g[cpu].n);
			e = &fx.g[cpu].ev[from + i];
			assert_int_equal(e->seq, seq + i);
			assert_int_equal(e->cpu, cpu);
			assert_int_equal(e->wcpu, cpu);
			assert_int_equal(e->missed, 0);
		}
		k[cpu] += 5 + chunk * 7;
		seq += 5 + chunk * 7;
	}
	assert_int_equal(fx.g[0].n, k[0]);
	assert_int_equal(fx.g[1].n, k[1]);
}

/* What one reader consumed is gone for trace, trace_pipe_raw and a second reader. */
static void test_really_consumes(void **state)
{
	const struct params *p = *state;
	unsigned int n = per_page(p->subbuf_kb) * 5 / 2, first;
	struct tracemap_cpu *c, *c2;
	struct tracemap_region r;
	char path[512], *page;
	int fd, ret;

	th_pin(0);
	new_instance(1024, p->subbuf_kb);
	write_markers(0, n);
	/* the checks below can see the events: they are there before reading */
	assert_int_equal(count_trace_lines("trace"), n);
	assert_int_equal(count_trace_lines("per_cpu/cpu0/trace"), n);

	c = open_reader(0, p->flags);
	/* one region: exactly its events leave the buffer */
	assert_int_equal(tracemap_cpu_read_region(c, &r), 1);
	page = malloc(r.subbuf_size);
	assert_non_null(page);
	ret = tracemap_region_write_subbuf(&r, page, r.subbuf_size);
	if (ret == (int)r.subbuf_size)
		add_page(&fx.g[0], page, r.subbuf_size, 0);
	free(page);
	assert_int_equal(ret, r.subbuf_size);
	first = fx.g[0].n;
	assert_true(first > 0 && first < n);
	check_exact(&fx.g[0], 0, 0, first, 0);
	assert_int_equal(count_trace_lines("per_cpu/cpu0/trace"), n - first);

	drain(c, p->api, &fx.g[0]);
	check_exact(&fx.g[0], 0, 0, n, 0);
	assert_int_equal(count_trace_lines("trace"), 0);
	assert_int_equal(count_trace_lines("per_cpu/cpu0/trace"), 0);

	/* a second reader, while the first is open, and after it closed */
	c2 = open_reader(0, p->flags);
	drain(c2, p->api, &fx.g[1]);
	assert_int_equal(fx.g[1].n, 0);
	close_reader(c2);
	close_reader(c);
	c2 = open_reader(0, p->flags);
	drain(c2, p->api, &fx.g[1]);
	assert_int_equal(fx.g[1].n, 0);
	close_reader(c2);

	/* the kernel's own consuming read has nothing either */
	snprintf(path, sizeof(path), "%s/instances/%s/per_cpu/cpu0/trace_pipe_raw", th_tracefs(),
		 fx.inst);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(fd >= 0);
	page = malloc(65536);
	assert_non_null(page);
	ret = read(fd, page, 65536);
	if (ret < 0)
		ret = -errno;
	free(page);
	close(fd);
	assert_int_equal(ret, -EAGAIN);
}

/*
 * Overwrite mode, no reader while far more than fits is written: every
 * event is either delivered or counted lost, and each loss comes with the
 * event it precedes. Then once more with the reader open.
 */
static void check_lossy(const struct got *g, long last, bool allow_unknown, uint64_t *lost)
{
	long prev = -1;
	unsigned int i;

	*lost = 0;
	assert_true(g->n > 0);
	for (i = 0; i < g->n; i++) {
		const struct got_ev *e = &g->ev[i];

		if (e->seq <= prev)
			fail_msg("event %u: seq %ld after %ld", i, e->seq, prev);
		/* a full page has no room for the count (trace-cmd's format) */
		if (allow_unknown && e->missed == TRACEMAP_LOST_UNKNOWN && e->seq - prev > 1)
			*lost += e->seq - prev - 1;
		else if (e->missed != e->seq - prev - 1)
			fail_msg("event %u: seq %ld after %ld reported %lld missed", i, e->seq,
				 prev, e->missed);
		else
			*lost += e->missed;
		prev = e->seq;
	}
	/* the newest events are never overwritten */
	assert_int_equal(prev, last);
}

static unsigned long kernel_stat(const char *name)
{
	char *txt = th_instance_read(fx.inst, "per_cpu/cpu0/stats"), *p;
	unsigned long v;

	assert_non_null(txt);
	p = strstr(txt, name);
	assert_non_null(p);
	v = strtoul(p + strlen(name), NULL, 10);
	free(txt);
	return v;
}

static void test_overwrite_accounting(void **state)
{
	const struct params *p = *state;
	unsigned int w1 = 40 * per_page(p->subbuf_kb), w2 = 25 * per_page(p->subbuf_kb);
	struct tracemap_cpu *c;
	uint64_t lost;

	th_pin(0);
	/* 16 KiB: a handful of sub-buffers */
	new_instance(16, p->subbuf_kb);
	write_markers(0, w1);
	c = open_reader(0, p->flags);
	drain(c, p->api, &fx.g[0]);
	check_lossy(&fx.g[0], w1 - 1, p->api == API_PAGES, &lost);
	assert_true(lost > 0);
	assert_int_equal(fx.g[0].n + lost, w1);
	assert_int_equal(kernel_stat("overrun:"), lost);
	check_stats(c, p, fx.g[0].n, lost, w1);

	/* a second overflow while the reader is open, after a partial page */
	write_markers(w1, 3);
	drain(c, p->api, &fx.g[0]);
	write_markers(w1 + 3, w2);
	drain(c, p->api, &fx.g[0]);
	check_lossy(&fx.g[0], w1 + 3 + w2 - 1, p->api == API_PAGES, &lost);
	assert_int_equal(fx.g[0].n + lost, w1 + 3 + w2);
	assert_int_equal(kernel_stat("overrun:"), lost);
	check_stats(c, p, fx.g[0].n, lost, w1 + 3 + w2);

	/*
	 * echo > trace, then more is written and lost than before it: the
	 * kernel's counters restart and overtake the reader's old view.
	 */
	drop_got();
	reset_buffer();
	write_markers(0, 2 * (w1 + w2));
	drain(c, p->api, &fx.g[0]);
	check_lossy(&fx.g[0], 2 * (w1 + w2) - 1, p->api == API_PAGES, &lost);
	assert_int_equal(fx.g[0].n + lost, 2 * (w1 + w2));
	assert_int_equal(kernel_stat("overrun:"), lost);
}

/*
 * echo > trace while a consuming reader is open: what was written after
 * the reset arrives exactly once; what the reset discarded never does.
 */
static void test_reset(void **state)
{
	const struct params *p = *state;
	unsigned int pp = per_page(p->subbuf_kb), from;
	struct tracemap_cpu *c;

	th_pin(0);
	new_instance(1024, p->subbuf_kb);
	c = open_reader(0, p->flags);

	/* reader inside a partly written page; unread events discarded */
	write_markers(0, 30);
	drain(c, p->api, &fx.g[0]);
	check_exact(&fx.g[0], 0, 0, 30, 0);
	write_markers(30, 20);
	reset_buffer();
	write_markers(1000, 10);
	from = fx.g[0].n;
	drain(c, p->api, &fx.g[0]);
	check_exact(&fx.g[0], from, 1000, 10, 0);

	/* after the reset, more than before it: the kernel counters grow past ours */
	write_markers(2000, 3 * pp);
	reset_buffer();
	write_markers(3000, 4 * pp + 3);
	from = fx.g[0].n;
	drain(c, p->api, &fx.g[0]);
	check_exact(&fx.g[0], from, 3000, 4 * pp + 3, 0);

	/* a reset with nothing unread, then fewer events than the reader has seen */
	reset_buffer();
	write_markers(5000, 5);
	from = fx.g[0].n;
	drain(c, p->api, &fx.g[0]);
	check_exact(&fx.g[0], from, 5000, 5, 0);

	/* a reset of an empty buffer, then the reader page fills exactly */
	reset_buffer();
	reset_buffer();
	write_markers(6000, pp);
	from = fx.g[0].n;
	drain(c, p->api, &fx.g[0]);
	check_exact(&fx.g[0], from, 6000, pp, 0);
	write_markers(7000, 1);
	from = fx.g[0].n;
	drain(c, p->api, &fx.g[0]);
	check_exact(&fx.g[0], from, 7000, 1, 0);
}

/*
 * Consuming while a writer thread runs on the other CPU, waking up with
 * poll(): the reader chases the writer on its page. Every event once, in
 * order; with this buffer and rate nothing is lost.
 */
static void test_live(void **state)
{
	const struct params *p = *state;
	const unsigned int count = 100000;
	uint64_t deadline;
	struct tracemap_cpu *c;
	struct pollfd pfd;
	bool done = false;

	if (online_cpus() < 2)
		skip();
	th_pin(0);
	new_instance(4096, p->subbuf_kb);
	/* wake up for every event, not at half the buffer */
	assert_int_equal(th_instance_write(fx.inst, "buffer_percent", "0"), 0);
	c = open_reader(1, p->flags);
	pfd = (struct pollfd){ .fd = tracemap_cpu_fd(c), .events = POLLIN };
	start_writer(1, count, 200000);
	deadline = now_ns() + 60ull * 1000000000ull;
	while (!done && now_ns() < deadline) {
		/* read what is there after the writer finished: then nothing is missing */
		done = writer_done();
		if (p->api == API_PAGES)
			drain_pages(c, &fx.g[0], done);
		else
			drain_events(c, &fx.g[0]);
		if (!done)
			assert_true(poll(&pfd, 1, 10) >= 0);
	}
	stop_writer();
	assert_true(done);
	assert_int_equal(fx.w.error, 0);
	check_exact(&fx.g[0], 0, 0, count, 1);
	check_stats(c, p, count, 0, count);
}

/* ---------------------------------------------------------------- main */

#define P(flags, kb, api)	(&(struct params){ flags, kb, api })
#define MMAP			0
#define READ			TRACEMAP_CPU_FORCE_READ
#define T(name, fn, prm)	{ name, fn, NULL, teardown, prm }

int main(void)
{
	const struct CMUnitTest tests[] = {
		T("counts mmap 4k events", test_counts, P(MMAP, 4, API_EVENTS)),
		T("counts mmap 8k events", test_counts, P(MMAP, 8, API_EVENTS)),
		T("counts mmap 4k pages", test_counts, P(MMAP, 4, API_PAGES)),
		T("counts mmap 8k pages", test_counts, P(MMAP, 8, API_PAGES)),
		T("counts read 4k events", test_counts, P(READ, 4, API_EVENTS)),
		T("counts read 8k events", test_counts, P(READ, 8, API_EVENTS)),
		T("counts read 4k pages", test_counts, P(READ, 4, API_PAGES)),
		T("counts read 8k pages", test_counts, P(READ, 8, API_PAGES)),
		T("incremental mmap 4k events", test_counts_incremental, P(MMAP, 4, API_EVENTS)),
		T("incremental mmap 8k pages", test_counts_incremental, P(MMAP, 8, API_PAGES)),
		T("incremental read 4k events", test_counts_incremental, P(READ, 4, API_EVENTS)),
		T("incremental read 8k pages", test_counts_incremental, P(READ, 8, API_PAGES)),
		T("both cpus mmap", test_both_cpus, P(MMAP, 4, API_EVENTS)),
		T("both cpus read", test_both_cpus, P(READ, 4, API_EVENTS)),
		T("really consumes mmap", test_really_consumes, P(MMAP, 4, API_EVENTS)),
		T("really consumes read", test_really_consumes, P(READ, 4, API_EVENTS)),
		T("overwrite accounting mmap 4k events", test_overwrite_accounting,
		  P(MMAP, 4, API_EVENTS)),
		T("overwrite accounting mmap 8k pages", test_overwrite_accounting,
		  P(MMAP, 8, API_PAGES)),
		T("overwrite accounting read 4k events", test_overwrite_accounting,
		  P(READ, 4, API_EVENTS)),
		T("overwrite accounting read 8k pages", test_overwrite_accounting,
		  P(READ, 8, API_PAGES)),
		T("live mmap 4k events", test_live, P(MMAP, 4, API_EVENTS)),
		T("live mmap 8k pages", test_live, P(MMAP, 8, API_PAGES)),
		T("live read 4k pages", test_live, P(READ, 4, API_PAGES)),
		T("live read 8k events", test_live, P(READ, 8, API_EVENTS)),
		T("reset mmap 4k", test_reset, P(MMAP, 4, API_EVENTS)),
		T("reset mmap 8k pages", test_reset, P(MMAP, 8, API_PAGES)),
		T("reset read 4k", test_reset, P(READ, 4, API_EVENTS)),
		T("reset read 8k pages", test_reset, P(READ, 8, API_PAGES)),
	};

	th_require_mmap();
	return cmocka_run_group_tests_name("cpu consume", tests, measure_record, teardown);
}
