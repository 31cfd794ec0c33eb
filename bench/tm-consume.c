// SPDX-License-Identifier: GPL-2.0-only
/*
 * tm-consume: the in-process consumers of the benchmark, all reading every
 * CPU of one instance until SIGINT/SIGTERM, then draining what is left and
 * printing one result line.
 *
 *   tm-consume -m MODE -B instance -t tag [-w watermark] [-l latency_ms] [-L] [-R ready_fd]
 *   tm-consume -c        prints the modes this build has
 *   tm-consume -p        prints the watermark (buffer_percent) a default stream sets
 *
 * MODE
 *   lib      tracemap_stream_poll() with the library's default settings; the
 *            callback checks sequence numbers and samples latency
 *   busy     the same stream driven by tracemap_stream_consume() in a loop
 *   read     plain read() of per_cpu/cpuN/trace_pipe_raw, parsed with kbuffer
 *   tracefs  libtracefs tracefs_iterate_raw_events(), called again after each wait
 *   mmap     the floor: mmap + TRACE_MMAP_IOCTL_GET_READER and nothing else;
 *            delivered and lost come from the meta page counters
 *   walk     the floor, and every record it is handed walked with the
 *            library's record walker (tm_walk_next()) and checked like the
 *            lib callback: the least any consumer that delivers events pays,
 *            one loop with no merge, no gate, no callback
 *   idle     reads nothing: the writer alone
 *
 * -L opens the stream (lib, busy) with TRACEMAP_STREAM_LOW_LATENCY, a
 * wakeup per event (what tracemap stream does), instead of the default
 * watermark and tick.
 * -w sets the instance's buffer_percent for the peers (read, tracefs, mmap, walk)
 * and the stream's watermark (lib, busy); -l is the longest wait between
 * drains. Without them every consumer keeps its own defaults.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <event-parse.h>
#include <kbuffer.h>
#include <tracefs.h>

#include "tracemap.h"
#include "uapi/trace_mmap.h"
#include "tracemap-local.h"
#include "bench.h"

/*
 * A latency sample (a clock read, 25 ns on this VM) for the first marker
 * written at least LAT_SPACING_NS after the last sampled one: about 1,000
 * samples per second of writing at any rate from 1k/s, so that the
 * measured consumer's own instrumentation does not grow with the rate
 * (one in 16 markers cost the library consumer 2 ns per event, which no
 * peer pays).
 */
#define LAT_SPACING_NS	1000000ull

struct cons {
	const char *inst;
	uint32_t tag;
	int raw_id;			/* ftrace:raw_data type id */
	int watermark;			/* -1: leave */
	int latency_ms;			/* -1: consumer default */
	bool low_latency;		/* -L */
	struct bn_seq seq;
	struct bn_lat lat;
	uint64_t lat_next;		/* the next sample: the first marker written from here */
	uint64_t lost;			/* reported with a count */
	uint64_t lost_unknown;		/* reported without a count */
	uint64_t kernel_delivered;	/* mmap: from the meta page */
	uint64_t waits, drains, calls;
	uint64_t events;		/* tracefs: events seen, to tell an empty pass */
	bool noseq;
};

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	stop = 1;
}

static int raw_data_id(void)
{
	char path[256], buf[4096];
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/events/ftrace/raw_data/format", bn_tracefs());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "ID:");
	return p ? atoi(p + 3) : -1;
}

/* One decoded payload (struct trace_entry first). */
static inline void marker(struct cons *c, const void *data, unsigned int size, bool sample)
{
	const struct bn_marker *m = (const void *)((const char *)data + BN_RAW_OFF);

	if (size < BN_RAW_SIZE || *(const uint16_t *)data != c->raw_id || m->tag != c->tag) {
		c->seq.other++;
		return;
	}
	bn_seq_add(&c->seq, m->seq);
	if (sample && m->mono_ns >= c->lat_next) {
		c->lat_next = m->mono_ns + LAT_SPACING_NS;
		bn_lat_add(&c->lat, bn_now() - m->mono_ns);
	}
}

static void count_lost(struct cons *c, long long lost)
{
	if (lost > 0)
		c->lost += lost;
	else if (lost)
		c->lost_unknown++;
}

/* ------------------------------------------------------ the library stream */

#ifdef BN_HAVE_STREAM
static int lib_event(void *ctx, const struct tracemap_event *ev)
{
	marker(ctx, ev->data, ev->size, true);
	return 0;
}

static int lib_lost(void *ctx, int cpu, long long lost)
{
	count_lost(ctx, lost);
	return 0;
}

static int run_lib(struct cons *c, int ready_fd, bool busy)
{
	struct tracemap_stream_opts o = {
		.sz = sizeof(o),
		.mode = TRACEMAP_MODE_CONSUME,
		.on_event = lib_event,
		.on_lost = lib_lost,
		.ctx = c,
	};
	struct tracemap_stream *s;
	int r = 0, idle = 0;

	/* zero-initialised options are the library's defaults; busy: consume never sleeps */
	if (busy)
		o.flags |= TRACEMAP_STREAM_BUSY_POLL;
	if (c->low_latency)
		o.flags |= TRACEMAP_STREAM_LOW_LATENCY;
	if (c->watermark >= 0)
		o.watermark = c->watermark;
	if (c->latency_ms >= 0)
		o.latency_ms = c->latency_ms;
	s = tracemap_stream_open(c->inst, &o);
	if (!s) {
		fprintf(stderr, "tracemap_stream_open(%s): %s\n", c->inst, strerror(errno));
		return -1;
	}
	if (ready_fd >= 0 && write(ready_fd, "R", 1) < 0)
		stop = 1;
	/*
	 * SIGINT ends the wait (-EINTR); the timeout only bounds a stop that
	 * came just before it. 200 ms, twice the tick, cost a wakeup of its own
	 * every other tick: the deadline drifted just past a tick, and the rest
	 * of it (under a ms) was waited out.
	 */
	while (!stop) {
		r = busy ? tracemap_stream_consume(s) : tracemap_stream_poll(s, 1000);
		c->calls++;
		if (r < 0 && r != -EINTR && r != -EAGAIN)
			break;
	}
	/* drain: until a pass finds nothing, twice in a row */
	while (r >= 0 || r == -EINTR || r == -EAGAIN) {
		r = tracemap_stream_consume(s);
		if (r == 0 && ++idle >= 2)
			break;
		if (r > 0)
			idle = 0;
	}
	tracemap_stream_close(s);
	return r < 0 && r != -EINTR && r != -EAGAIN ? r : 0;
}

/* The buffer_percent a default stream puts in effect, for the peers to use the same. */
static int probe_defaults(void)
{
	struct tracemap_stream_opts o = { .sz = sizeof(o), .on_event = lib_event };
	struct tracemap_stream *s;
	const char *inst;
	char val[16];

	inst = bn_instance_create(0);
	if (!inst)
		return 1;
	s = tracemap_stream_open(inst, &o);
	if (!s) {
		fprintf(stderr, "tracemap_stream_open(%s): %s\n", inst, strerror(errno));
		return 1;
	}
	if (bn_instance_read(inst, "buffer_percent", val, sizeof(val)) <= 0)
		return 1;
	tracemap_stream_close(s);
	ti_instance_remove(inst);
	printf("watermark=%d\n", atoi(val));
	return 0;
}
#else
static int probe_defaults(void)
{
	fprintf(stderr, "the library stream (lib/stream.c) is not built yet\n");
	return 1;
}

static int run_lib(struct cons *c, int ready_fd, bool busy)
{
	fprintf(stderr, "the library stream (lib/stream.c) is not built yet\n");
	return -1;
}
#endif

/* ------------------------------------------------------------- peer helpers */

static int set_watermark(struct cons *c, char *old, size_t size)
{
	char val[16];

	old[0] = '\0';
	if (c->watermark < 0)
		return 0;
	if (bn_instance_read(c->inst, "buffer_percent", old, size) < 0)
		old[0] = '\0';
	snprintf(val, sizeof(val), "%d", c->watermark);
	return ti_instance_write(c->inst, "buffer_percent", val);
}

static void restore_watermark(struct cons *c, const char *old)
{
	if (old[0])
		ti_instance_write(c->inst, "buffer_percent", old);
}

static int open_cpus(struct cons *c, int *fds, int n, int flags)
{
	char file[64], path[256];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(file, sizeof(file), "per_cpu/cpu%d/trace_pipe_raw", i);
		ti_path(path, sizeof(path), c->inst, file);
		fds[i] = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | flags);
		if (fds[i] < 0) {
			fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Wait up to the latency bound for any CPU to become readable. */
static void wait_cpus(struct cons *c, const int *fds, int n)
{
	struct pollfd p[64];
	int i;

	for (i = 0; i < n && i < 64; i++) {
		p[i].fd = fds[i];
		p[i].events = POLLIN;
	}
	c->waits++;
	poll(p, i, c->latency_ms);
}

/* ------------------------------------------------------------------ read() */

static int run_read(struct cons *c, int ready_fd)
{
	int n = bn_nr_cpus(), fds[64], i, psize = getpagesize();
	struct kbuffer *kb;
	char old[16];
	void *page;
	bool again;

	if (n > 64 || open_cpus(c, fds, n, 0) || set_watermark(c, old, sizeof(old)))
		return -1;
	kb = kbuffer_alloc(KBUFFER_LSIZE_SAME_AS_HOST, KBUFFER_ENDIAN_SAME_AS_HOST);
	page = malloc(psize);
	if (!kb || !page)
		return -1;
	if (ready_fd >= 0 && write(ready_fd, "R", 1) < 0)
		stop = 1;
	for (;;) {
		bool last = stop;

		do {
			again = false;
			for (i = 0; i < n; i++) {
				ssize_t r = read(fds[i], page, psize);
				void *data;

				c->calls++;
				if (r <= 0)
					continue;
				again = true;
				kbuffer_load_subbuffer(kb, page);
				count_lost(c, kbuffer_missed_events(kb));
				while ((data = kbuffer_read_event(kb, NULL))) {
					marker(c, data, kbuffer_event_size(kb), false);
					kbuffer_next_event(kb, NULL);
				}
			}
			c->drains++;
		} while (again);
		if (last)
			break;
		wait_cpus(c, fds, n);
	}
	restore_watermark(c, old);
	kbuffer_free(kb);
	free(page);
	return 0;
}

/* ------------------------------------------------------------------ libtracefs */

static int tfs_event(struct tep_event *ev, struct tep_record *rec, int cpu, void *ctx)
{
	struct cons *c = ctx;

	if (rec->missed_events)
		count_lost(c, rec->missed_events);
	marker(c, rec->data, rec->size, false);
	c->events++;
	return 0;
}

static int run_tracefs(struct cons *c, int ready_fd)
{
	const char *systems[] = { "ftrace", NULL };
	struct tracefs_instance *ti;
	int n = bn_nr_cpus(), fds[64];
	struct tep_handle *tep;
	char old[16];
	uint64_t before;

	if (n > 64 || open_cpus(c, fds, n, 0) || set_watermark(c, old, sizeof(old)))
		return -1;
	tep = tracefs_local_events_system(NULL, systems);
	ti = tracefs_instance_create(c->inst);
	if (!tep || !ti) {
		fprintf(stderr, "libtracefs cannot load events or instance %s\n", c->inst);
		return -1;
	}
	if (ready_fd >= 0 && write(ready_fd, "R", 1) < 0)
		stop = 1;
	for (;;) {
		bool last = stop;

		do {
			before = c->events;
			c->calls++;
			if (tracefs_iterate_raw_events(tep, ti, NULL, 0, tfs_event, c) < 0) {
				fprintf(stderr, "tracefs_iterate_raw_events: %s\n", strerror(errno));
				return -1;
			}
		} while (c->events != before);
		if (last)
			break;
		wait_cpus(c, fds, n);
	}
	restore_watermark(c, old);
	tracefs_instance_free(ti);
	tep_free(tep);
	return 0;
}

/* ------------------------------------------------------------ the floor */

struct fcpu {
	const struct trace_buffer_meta *meta;
	size_t len;
	uint64_t read0, overrun0;
	unsigned int id, rd;
	struct tm_walk w;		/* -m walk: the reader sub-buffer's records */
};

static int map_cpu(int fd, struct fcpu *f)
{
	const struct trace_buffer_meta *m;
	long psz = getpagesize();

	m = mmap(NULL, psz, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -1;
	f->len = (size_t)m->meta_page_size + (size_t)m->nr_subbufs * m->subbuf_size;
	munmap((void *)m, psz);
	f->meta = mmap(NULL, f->len, PROT_READ, MAP_SHARED, fd, 0);
	if (f->meta == MAP_FAILED)
		return -1;
	/* the meta page changes only inside GET_READER (ours) or on a reset */
	f->read0 = f->meta->read;
	f->overrun0 = f->meta->overrun;
	f->id = f->meta->reader.id;
	f->rd = f->meta->reader.read;
	return 0;
}

/*
 * -m walk: the bytes GET_READER just handed out, up to @rd of sub-buffer
 * @id, walked with the library's record walker and checked as the library
 * stream's callback checks them.
 */
static void walk_cpu(struct cons *c, struct fcpu *f, unsigned int id, unsigned int rd)
{
	const unsigned char *sb;
	struct tm_rec rec;

	if (id != f->id || !f->w.data) {
		sb = (const unsigned char *)f->meta + f->meta->meta_page_size +
		     (size_t)id * f->meta->subbuf_size;
		f->w.data = sb + TM_SUBBUF_HDR;
		/* the reader page found at start: what was read before is not ours */
		f->w.off = id == f->id ? f->rd : 0;
		memcpy(&f->w.ts, sb, sizeof(f->w.ts));
	}
	f->w.end = rd;
	while (tm_walk_next(&f->w, &rec) > 0)
		marker(c, rec.payload, rec.size, true);
}

/* GET_READER until the kernel hands out nothing new (@walk: and walk it) */
static void drain_cpu(struct cons *c, int fd, struct fcpu *f, bool walk)
{
	for (;;) {
		unsigned int id, rd;

		c->calls++;
		if (ioctl(fd, TRACE_MMAP_IOCTL_GET_READER) < 0 && errno != EINTR)
			return;
		id = __atomic_load_n(&f->meta->reader.id, __ATOMIC_ACQUIRE);
		rd = __atomic_load_n(&f->meta->reader.read, __ATOMIC_ACQUIRE);
		if (id == f->id && rd == f->rd)
			return;
		if (walk)
			walk_cpu(c, f, id, rd);
		f->id = id;
		f->rd = rd;
	}
}

static int run_mmap(struct cons *c, int ready_fd, bool walk)
{
	int n = bn_nr_cpus(), fds[64], i;
	struct fcpu f[64];
	char old[16];

	if (n > 64 || open_cpus(c, fds, n, 0) || set_watermark(c, old, sizeof(old)))
		return -1;
	for (i = 0; i < n; i++) {
		if (map_cpu(fds[i], &f[i])) {
			fprintf(stderr, "cannot map cpu%d of %s: %s\n", i, c->inst, strerror(errno));
			return -1;
		}
	}
	if (ready_fd >= 0 && write(ready_fd, "R", 1) < 0)
		stop = 1;
	for (;;) {
		bool last = stop;

		for (i = 0; i < n; i++)
			drain_cpu(c, fds[i], &f[i], walk);
		c->drains++;
		if (last)
			break;
		wait_cpus(c, fds, n);
	}
	/* the walk counts what it delivered; the floor only what the kernel handed out */
	c->noseq = !walk;
	for (i = 0; i < n; i++) {
		c->kernel_delivered += f[i].meta->read - f[i].read0;
		c->lost += f[i].meta->overrun - f[i].overrun0;
		munmap((void *)f[i].meta, f[i].len);
		close(fds[i]);
	}
	restore_watermark(c, old);
	return 0;
}

/* ---------------------------------------------------------- no reader */

/* Reads nothing: the writer's own ceiling, and what overflow looks like. */
static int run_idle(struct cons *c, int ready_fd)
{
	sigset_t none;

	sigemptyset(&none);
	if (ready_fd >= 0 && write(ready_fd, "R", 1) < 0)
		return -1;
	while (!stop)
		sigsuspend(&none);
	c->noseq = true;
	return 0;
}

/* ------------------------------------------------------------------ main */

static void usage(void)
{
	fprintf(stderr, "usage: tm-consume -m lib|busy|read|tracefs|mmap|walk|idle -B instance -t tag "
		"[-w watermark] [-l latency_ms] [-L] [-R ready_fd]\n       tm-consume -c|-p\n");
	exit(1);
}

int main(int argc, char **argv)
{
	struct cons c = { .watermark = -1, .latency_ms = -1 };
	struct sigaction sa = { .sa_handler = on_stop };
	const char *mode = NULL;
	int ready_fd = -1, opt, r;
	struct rusage ru0, ru1;
	uint64_t cpu_ns;

	while ((opt = getopt(argc, argv, "cpm:B:t:w:l:LR:h")) != -1) {
		switch (opt) {
		case 'p':
			return probe_defaults();
		case 'c':
#ifdef BN_HAVE_STREAM
			printf("lib busy ");
#endif
			printf("read tracefs mmap walk idle\n");
			return 0;
		case 'm': mode = optarg; break;
		case 'B': c.inst = optarg; break;
		case 't': c.tag = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'w': c.watermark = atoi(optarg); break;
		case 'l': c.latency_ms = atoi(optarg); break;
		case 'L': c.low_latency = true; break;
		case 'R': ready_fd = atoi(optarg); break;
		default: usage();
		}
	}
	if (!mode || !c.inst || optind != argc)
		usage();
	/* no SA_RESTART: a blocked poll/epoll_wait returns EINTR at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	bn_seq_init(&c.seq);
	c.raw_id = raw_data_id();
	if (c.raw_id < 0) {
		fprintf(stderr, "cannot read the id of ftrace:raw_data under %s/events\n",
			bn_tracefs());
		return 1;
	}
	if (c.latency_ms < 0 && strcmp(mode, "lib") && strcmp(mode, "busy"))
		c.latency_ms = 100;

	getrusage(RUSAGE_SELF, &ru0);
	if (!strcmp(mode, "lib"))
		r = run_lib(&c, ready_fd, false);
	else if (!strcmp(mode, "busy"))
		r = run_lib(&c, ready_fd, true);
	else if (!strcmp(mode, "read"))
		r = run_read(&c, ready_fd);
	else if (!strcmp(mode, "tracefs"))
		r = run_tracefs(&c, ready_fd);
	else if (!strcmp(mode, "mmap"))
		r = run_mmap(&c, ready_fd, false);
	else if (!strcmp(mode, "walk"))
		r = run_mmap(&c, ready_fd, true);
	else if (!strcmp(mode, "idle"))
		r = run_idle(&c, ready_fd);
	else
		usage();
	getrusage(RUSAGE_SELF, &ru1);
	if (r < 0)
		return 1;
	cpu_ns = (ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec + ru1.ru_stime.tv_sec -
		  ru0.ru_stime.tv_sec) * 1000000000ull +
		 (ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec + ru1.ru_stime.tv_usec -
		  ru0.ru_stime.tv_usec) * 1000ll;

	printf("delivered=%llu dups=%llu late=%llu other=%llu noseq=%d lost=%llu "
	       "lost_unknown=%llu calls=%llu waits=%llu self_cpu_ns=%llu lat_n=%llu ",
	       (unsigned long long)(c.noseq ? c.kernel_delivered : c.seq.delivered),
	       (unsigned long long)c.seq.dups, (unsigned long long)c.seq.late,
	       (unsigned long long)c.seq.other, c.noseq, (unsigned long long)c.lost,
	       (unsigned long long)c.lost_unknown, (unsigned long long)c.calls,
	       (unsigned long long)c.waits, (unsigned long long)cpu_ns,
	       (unsigned long long)c.lat.n);
	printf("lat_p50_ns=%llu lat_p99_ns=%llu lat_max_ns=%llu\n",
	       (unsigned long long)bn_lat_pct(&c.lat, 50),
	       (unsigned long long)bn_lat_pct(&c.lat, 99),
	       (unsigned long long)bn_lat_pct(&c.lat, 100));
	bn_seq_free(&c.seq);
	return 0;
}
