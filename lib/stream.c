// SPDX-License-Identifier: LGPL-2.1-only
/*
 * A stream over the per-CPU readers of one instance: wakeups through
 * poll/epoll and the instance's buffer_percent, a time-ordered merge with one
 * pending event per CPU, and fill-priority draining when order does not
 * matter.
 *
 * Ordering without waiting for idle CPUs. Every event a GET_READER (or a
 * read(), or a copy of a live page) hands out was committed before that
 * call. So when CPU B is found empty by a call made after the call that
 * fetched the region of CPU A's pending event, any event B writes later was
 * reserved after that point, that is with a newer time stamp, and A's event
 * can go out. Calls into the readers are numbered (op) to know which came
 * first; an idle CPU costs one empty check per region of the others, and
 * never a wait. The exception is a writer that was stopped in the middle of
 * a write for longer than it took us to notice (a preempted vCPU): its
 * event arrives with an older time stamp after newer ones were delivered and
 * is counted in tracemap_cpu_stats.late.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "tracemap-local.h"

#define DEFAULT_LATENCY_MS	100
/*
 * buffer_percent of a stream opened without TRACEMAP_STREAM_LOW_LATENCY and
 * watermark 0: the kernel's own default. The stream then runs on its
 * latency tick (and on a half-full CPU buffer), instead of being woken for
 * each event: a wakeup writes sched events of its own, which would wake it
 * again (bench/README.md).
 */
#define DEFAULT_WATERMARK	50
#define KNOWN_FLAGS		(TRACEMAP_STREAM_UNORDERED | TRACEMAP_STREAM_BUSY_POLL | \
				 TRACEMAP_STREAM_NO_SELF | TRACEMAP_STREAM_LOW_LATENCY | \
				 TRACEMAP_STREAM_PID_FORKS | TRACEMAP_STREAM_DECODE | \
				 TRACEMAP_STREAM_CREATE)
#define MIN_ROUND_REGIONS	64	/* regions one CPU may hand out per round */
#define MAX_CORRUPT_RETRIES	16

struct scpu {
	struct tracemap_cpu *c;
	struct tracemap_event ev;	/* the pending event, borrowed from the reader */
	uint64_t region_op;		/* op of the call that fetched the region of ev */
	uint64_t empty_op;		/* op of the last call that found nothing new */
	uint64_t regions;		/* the reader's region count after the last call */
	uint64_t round_regions;		/* regions fetched in the current round */
	uint64_t wake_round;		/* last round counted as a wakeup */
	unsigned int region_id;		/* sub-buffer id of the last region fetched */
	int cpu;
	bool has;
	bool region_seen;		/* region_id is set */
	enum tm_pace_cpu pace;		/* its part of the pacing (pace.c) */
	bool lost_told;			/* on_lost was called for the pending event */
	bool held;			/* the reader counts ev as held (tm_cpu_hold()) */
	long long carry_missed;		/* loss before own events left out (pull model) */
	uint64_t cleared;		/* the reader's resets seen so far */
	unsigned int epoch;		/* the trace_clock epoch of its pending event */
};

struct tracemap_stream {
	struct scpu *cpus;
	int nr;
	enum tracemap_mode mode;
	unsigned int flags;
	tracemap_event_fn on_event;
	tracemap_lost_fn on_lost;
	void *ctx;

	int epfd;
	int timerfd;			/* latency tick: below the watermark, follow mode */
	int kickfd;			/* readable while the next round needs no wakeup (pace.c) */

	uint64_t op;			/* calls into the readers, in program order */
	uint64_t round;			/* delivery rounds: each consume, each wakeup */
	uint64_t round_op;		/* op at the start of the current round */
	struct tm_wake wake;		/* the wake-up policy (wake.c) */
	struct tm_pace pace;		/* how rounds end and start (pace.c) */
	uint64_t budget;		/* regions per CPU per round */
	uint64_t last_ts;		/* newest time delivered (ordered) */
	struct scpu *run;		/* ordered: the CPU of the last event ... */
	uint64_t run_limit;		/* ... the oldest pending event of the others ... */
	struct scpu *run_next;		/* ... and its CPU (NULL: none) */
	struct scpu *drain;		/* unordered: the CPU being drained ... */
	uint64_t drain_op;		/* ... and the region it was chosen for */
	unsigned int round_events;	/* next_event() returned in this round: the wake-up policy's measure */

	/* the instance, its size, clock and tracer, the crash record; put back last */
	struct tracemap_instance *inst;
	char *percent_path;
	int old_percent;		/* buffer_percent to restore, -1: untouched */

	struct tm_events *events;	/* what opts.events/pids changed, to restore */
	struct tm_self *self;		/* TRACEMAP_STREAM_NO_SELF */
	struct tm_decode *decode;	/* formats, loaded when first asked for */
	const bool *observe;		/* tm_decode_observing(): execs rename tasks */
	int owner;			/* the process that opened it (tm_in_child()) */
	bool child_told;		/* tm_child_refused() said so */

	/* trace_clock changes (clock_check()): each one starts an epoch of the merge */
	char *clock_path;
	char clock[32];
	unsigned int epoch;
	unsigned int last_epoch;	/* of last_ts */
};

/* 0, or -EBADFD (once said why) for a stream used in a forked child */
static int usable(struct tracemap_stream *s)
{
	return tm_in_child(s->owner) ? tm_child_refused("a tracemap stream", s->owner,
							&s->child_told) : 0;
}

/* The selected clock of trace_clock ("[mono] local ..." -> "mono"); "" if unreadable */
static void read_clock(const char *path, char *clock, size_t size)
{
	char buf[512], *b, *e;

	clock[0] = '\0';
	if (!path || tm_read_file(path, buf, sizeof(buf)) <= 0)
		return;
	b = strchr(buf, '[');
	e = b ? strchr(b, ']') : NULL;
	if (e && (size_t)(e - b - 1) < size) {
		memcpy(clock, b + 1, e - b - 1);
		clock[e - b - 1] = '\0';
	}
}

/*
 * @sc's reader saw the buffer reset (its gap goes out with the event). A
 * trace_clock change resets every CPU's buffer, and the events after it
 * carry another clock's time stamps, which cannot be compared with those
 * before: the merge takes them as a new epoch, after every event of the
 * old one (before()), and says so once.
 */
static void clock_check(struct tracemap_stream *s, struct scpu *sc)
{
	char now[32];

	read_clock(s->clock_path, now, sizeof(now));
	if (now[0] && strcmp(now, s->clock)) {
		tm_log(TRACEMAP_LOG_WARN, "stream: the trace_clock changed from %s to %s while the "
		       "stream read it (the kernel cleared the buffers): the events after it carry "
		       "%s time stamps and come after every event before it", s->clock, now, now);
		snprintf(s->clock, sizeof(s->clock), "%s", now);
		s->epoch++;
	}
	sc->epoch = s->epoch;
}

/* ---------------------------------------------------------- watermark */

static int read_percent(const char *path)
{
	char buf[32];
	char *end;
	long v;
	int ret;

	ret = tm_read_file(path, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	v = strtol(buf, &end, 10);
	if (end == buf || v < 0 || v > 100)
		return tm_err(EPROTO);
	return (int)v;
}

static int set_watermark(struct tracemap_stream *s, const char *idir, int watermark)
{
	char path[4200], val[16];
	int old, ret;

	snprintf(path, sizeof(path), "%s/buffer_percent", idir);
	old = read_percent(path);
	if (old < 0) {
		tm_log(TRACEMAP_LOG_ERROR, "cannot read %s (%s): the kernel has no buffer_percent "
		       "(Linux 5.1 or later); open with watermark -1", path, strerror(-old));
		return old;
	}
	s->percent_path = strdup(path);
	if (!s->percent_path) {
		tm_log(TRACEMAP_LOG_ERROR, "stream: out of memory");
		return tm_err(ENOMEM);
	}
	if (watermark < 0)
		return old;
	if (old != watermark) {
		ret = tm_state_note(s->inst->in.state, "buffer_percent", "%d", old);
		if (ret)
			return ret;
		snprintf(val, sizeof(val), "%d", watermark);
		ret = tm_write_file(path, val);
		if (ret < 0) {
			tm_log(TRACEMAP_LOG_ERROR, "cannot write %d to %s: %s", watermark, path,
			       strerror(-ret));
			return ret;
		}
		s->old_percent = old;
	}
	return watermark;
}

static int restore_watermark(struct tracemap_stream *s)
{
	char val[16];
	int ret;

	if (s->old_percent < 0)
		return 0;
	snprintf(val, sizeof(val), "%d", s->old_percent);
	ret = tm_write_file(s->percent_path, val);
	/* an instance removed under the stream took its buffer_percent with it */
	if (ret == -ENOENT || ret == -ENODEV)
		ret = 0;
	if (ret < 0)
		tm_log(TRACEMAP_LOG_WARN, "cannot restore %s to %d: %s", s->percent_path,
		       s->old_percent, strerror(-ret));
	s->old_percent = -1;
	return ret < 0 ? ret : 0;
}

/* ------------------------------------------------------------ opening */

static int add_fd(int epfd, int fd)
{
	struct epoll_event e = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e) ? tm_err(errno) : 0;
}

/*
 * @ev happened to the stream's pacing (pace.c): do what its row says. The
 * kick is a level: the eventfd stays readable from the round that left
 * work for the next one until a round that leaves none, so that a run of
 * rounds costs one write and one read, not two syscalls each.
 */
static void pace_event(struct tracemap_stream *s, enum tm_pace_event ev, unsigned int cond)
{
	uint64_t v = 1;

	switch (tm_pace_step(&s->pace, NULL, ev, cond)) {
	case TM_PACE_KICK:
		if (write(s->kickfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			tm_log(TRACEMAP_LOG_WARN, "stream: eventfd write: %s", strerror(errno));
		break;
	case TM_PACE_UNKICK:
		if (read(s->kickfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			tm_log(TRACEMAP_LOG_WARN, "stream: eventfd read: %s", strerror(errno));
		break;
	default:
		break;
	}
}

/* Take the tick off the epoll fd; the pacing learns that it fired. */
static void clear_tick(struct tracemap_stream *s)
{
	uint64_t v;

	if (s->timerfd >= 0 && read(s->timerfd, &v, sizeof(v)) == sizeof(v))
		pace_event(s, TM_PACE_TICK, 0);
	else if (s->timerfd >= 0 && errno != EAGAIN)
		tm_log(TRACEMAP_LOG_WARN, "stream: timerfd read: %s", strerror(errno));
}

/*
 * The chase limit (pace.c, rows 1-2) applies in consume mode, and to a
 * stream without a tick; following (a tick, copies of live pages) drains
 * up to the writer.
 */
static void pace_init(struct tracemap_stream *s)
{
	tm_pace_init(&s->pace, (s->timerfd >= 0 ? TM_PACE_HAS_TICK : 0) |
			       (s->kickfd >= 0 ? TM_PACE_HAS_KICK : 0) |
			       (s->timerfd < 0 || s->mode == TRACEMAP_MODE_CONSUME ?
				TM_PACE_CHASE_LIMIT : 0));
	/* whatever is in the buffers already is work for the first consume */
	pace_event(s, TM_PACE_OPEN, 0);
}

static int setup_wakeups(struct tracemap_stream *s, int watermark, int latency_ms)
{
	struct itimerspec its = { 0 };
	bool tick;
	int i, ret;

	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0)
		return tm_err(errno);
	s->kickfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->kickfd < 0)
		return tm_err(errno);
	ret = add_fd(s->epfd, s->kickfd);
	if (ret)
		return ret;

	/*
	 * A consuming reader's fd is readable when the kernel's watermark is
	 * met. Nothing is consumed in follow mode, so its fds would stay
	 * readable: it ticks instead. Below a watermark > 0 the kernel never
	 * wakes anyone, so the tail is fetched on the tick too.
	 */
	if (s->mode == TRACEMAP_MODE_CONSUME) {
		for (i = 0; i < s->nr; i++) {
			ret = add_fd(s->epfd, tracemap_cpu_fd(s->cpus[i].c));
			if (ret)
				return ret;
		}
	}
	tick = s->mode == TRACEMAP_MODE_FOLLOW ||
	       (s->mode == TRACEMAP_MODE_CONSUME && watermark != 0);
	if (tick) {
		s->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if (s->timerfd < 0)
			return tm_err(errno);
		its.it_value.tv_sec = latency_ms / 1000;
		its.it_value.tv_nsec = (long)(latency_ms % 1000) * 1000000;
		its.it_interval = its.it_value;
		if (timerfd_settime(s->timerfd, 0, &its, NULL))
			return tm_err(errno);
		ret = add_fd(s->epfd, s->timerfd);
		if (ret)
			return ret;
	}
	pace_init(s);
	return 0;
}

static void new_round(struct tracemap_stream *s)
{
	int i;

	if (s->self)
		tm_self_refresh(s->self, tm_now_ns());
	s->round++;
	s->round_op = s->op;
	pace_event(s, TM_PACE_START, 0);
	s->round_events = 0;
	for (i = 0; i < s->nr; i++) {
		s->cpus[i].round_regions = 0;
		tm_pace_step(&s->pace, &s->cpus[i].pace, TM_PACE_NEW_ROUND, 0);
	}
}

/**
 * tracemap_stream_open - open the readers of an instance's CPUs as one stream
 * @instance: NULL for a private instance (tracemap-<pid>-<n>, made here and
 *	removed at close), an instance name (made when missing with
 *	TRACEMAP_STREAM_CREATE), or TRACEMAP_TOP_LEVEL for the top-level buffer
 * @opts: mode, order, CPUs, watermark, latency and callbacks; NULL for the defaults
 *
 * Puts back what ended processes left (tracemap_state_repair()), makes the
 * instance when it is to be made and sets its buffer_size_kb and
 * trace_clock (@opts), its tracer and function filters (@opts->tracer, as
 * tracemap_tracer_set(): before any reader, since the kernel changes no
 * tracer under one), opens a reader per selected CPU (every one before
 * anything else is changed), sets buffer_percent to the watermark (consume mode: 50 for watermark 0
 * unless TRACEMAP_STREAM_LOW_LATENCY asks for a wakeup per event), reads
 * the own-event rules (TRACEMAP_STREAM_NO_SELF), enables the events of
 * @opts->events with their filters and the tasks of @opts->pids, and sets
 * up the wake-ups. Every change is written down before it is made (state.c).
 * A failure puts back what was changed and is explained through the print
 * callback.
 *
 * Returns the stream, or NULL with errno set.
 */
struct tracemap_stream *tracemap_stream_open(const char *instance,
					     const struct tracemap_stream_opts *opts)
{
	char tfs[4096];
	const char *idir, *iname;
	struct tracemap_stream_opts o = { .sz = sizeof(o) };
	struct tracemap_cpu_opts copts = { .sz = sizeof(copts) };
	struct tracemap_instance_opts io = { .sz = sizeof(io) };
	struct tracemap_stream *s = NULL;
	int ret, i, n, latency, watermark, max_subbufs = 0;
	bool *set = NULL;

	if (tm_opts_copy(&o, sizeof(o), opts, TM_STREAM_OPTS_MIN_SZ, "tracemap_stream_opts"))
		return NULL;
	if (o.mode > TRACEMAP_MODE_FOLLOW || (o.flags & ~KNOWN_FLAGS) || o.watermark > 100) {
		tm_log(TRACEMAP_LOG_ERROR, "stream: invalid options (mode %d, flags %#x, "
		       "watermark %d)", o.mode, o.flags, o.watermark);
		tm_err(EINVAL);
		return NULL;
	}
	latency = o.latency_ms > 0 ? o.latency_ms : DEFAULT_LATENCY_MS;
	if (!o.watermark && !(o.flags & TRACEMAP_STREAM_LOW_LATENCY))
		o.watermark = DEFAULT_WATERMARK;

	ret = tracemap_tracefs_dir(o.tracefs_dir, tfs, sizeof(tfs));
	if (ret)
		return NULL;
	/* what a killed stream left, before we look at what is there */
	tracemap_state_repair(0);

	set = calloc(TM_MAX_CPUS, sizeof(*set));
	s = calloc(1, sizeof(*s));
	if (!set || !s) {
		tm_log(TRACEMAP_LOG_ERROR, "stream: out of memory");
		ret = tm_err(ENOMEM);
		goto fail;
	}
	s->epfd = s->timerfd = s->kickfd = -1;
	s->old_percent = -1;
	s->owner = tm_cur_pid;
	/* the size, clock and tracer before any reader (tm_instance_open()) */
	io.flags = (o.flags & TRACEMAP_STREAM_CREATE) ? TRACEMAP_INSTANCE_CREATE : 0;
	io.buffer_size_kb = o.buffer_size_kb;
	io.clock = o.clock;
	io.tracer = o.tracer;
	ret = tm_instance_open(&s->inst, tfs, instance, &io);
	if (ret)
		goto fail;
	idir = s->inst->in.dir;
	iname = s->inst->in.name;
	s->mode = o.mode;
	s->flags = o.flags;
	s->on_event = o.on_event;
	s->on_lost = o.on_lost;
	s->ctx = o.ctx;
	s->decode = tm_decode_new(tfs, idir);
	if (!s->decode) {
		ret = -errno;
		goto fail;
	}
	s->observe = tm_decode_observing(s->decode);
	if (asprintf(&s->clock_path, "%s/trace_clock", idir) < 0) {
		s->clock_path = NULL;
		tm_log(TRACEMAP_LOG_ERROR, "stream: out of memory");
		ret = tm_err(ENOMEM);
		goto fail;
	}
	read_clock(s->clock_path, s->clock, sizeof(s->clock));

	n = tm_select_cpus(o.cpumask, idir, set, TM_MAX_CPUS);
	if (n < 0) {
		ret = n;
		goto fail;
	}
	s->cpus = calloc(n, sizeof(*s->cpus));
	if (!s->cpus) {
		tm_log(TRACEMAP_LOG_ERROR, "stream: out of memory");
		ret = tm_err(ENOMEM);
		goto fail;
	}

	/* every reader first: a bad CPU fails before anything is changed */
	copts.mode = o.mode;
	copts.flags = o.cpu_flags;
	copts.tracefs_dir = tfs;
	for (i = 0; i < TM_MAX_CPUS; i++) {
		struct scpu *sc;

		if (!set[i])
			continue;
		sc = &s->cpus[s->nr];
		sc->cpu = i;
		sc->c = tracemap_cpu_open(iname, i, &copts);
		if (!sc->c) {
			ret = -errno;
			goto fail;
		}
		s->nr++;
		if (tracemap_cpu_nr_subbufs(sc->c) > max_subbufs)
			max_subbufs = tracemap_cpu_nr_subbufs(sc->c);
	}
	s->budget = max_subbufs > MIN_ROUND_REGIONS ? max_subbufs : MIN_ROUND_REGIONS;

	watermark = o.watermark;
	if (o.mode == TRACEMAP_MODE_CONSUME) {
		watermark = set_watermark(s, idir, o.watermark);
		if (watermark < 0) {
			ret = watermark;
			goto fail;
		}
	}
	/* a program that decodes every event: not while its events pile up */
	if ((o.flags & TRACEMAP_STREAM_DECODE) && !tm_decode_preload(s->decode)) {
		ret = -errno;
		goto fail;
	}
	if (o.flags & TRACEMAP_STREAM_NO_SELF) {
		/* chosen tasks: the kernel records nothing our output causes in others */
		s->self = tm_self_new(tfs, !o.nr_pids);
		if (!s->self) {
			ret = -errno;
			goto fail;
		}
	}
	/* the events last: every check that can fail was made */
	ret = tm_events_setup(&s->events, tfs, iname, s->inst->in.state, o.events, o.nr_events,
			      o.pids, o.nr_pids, o.flags & TRACEMAP_STREAM_PID_FORKS, s->self,
			      o.on_enable, o.ctx);
	if (ret)
		goto fail;
	tm_decode_enabled(s->decode);
	ret = setup_wakeups(s, watermark, latency);
	if (ret) {
		tm_log(TRACEMAP_LOG_ERROR, "stream: cannot set up the wake-ups (epoll, eventfd, "
		       "timerfd): %s", strerror(-ret));
		goto fail;
	}
	new_round(s);
	free(set);
	return s;
fail:
	free(set);
	tracemap_stream_close(s);
	errno = -ret;
	return NULL;
}

struct tracemap_stream *tm_stream_open_readers(struct tracemap_cpu **cpus, int n,
					       const struct tracemap_stream_opts *o)
{
	struct tracemap_stream *s;
	int i, max_subbufs = 0;

	s = calloc(1, sizeof(*s));
	if (!s || n < 1 || !(s->cpus = calloc(n, sizeof(*s->cpus)))) {
		free(s);
		tm_err(ENOMEM);
		return NULL;
	}
	s->epfd = s->timerfd = s->kickfd = -1;
	s->old_percent = -1;
	s->owner = tm_cur_pid;
	s->mode = o->mode;
	/* nothing to wait on: never pace by sleeping */
	s->flags = o->flags | TRACEMAP_STREAM_BUSY_POLL;
	s->on_event = o->on_event;
	s->on_lost = o->on_lost;
	s->ctx = o->ctx;
	/* no formats: nothing to observe */
	s->observe = tm_decode_observing(NULL);
	for (i = 0; i < n; i++) {
		s->cpus[i].cpu = i;
		s->cpus[i].c = cpus[i];
		if (tracemap_cpu_nr_subbufs(cpus[i]) > max_subbufs)
			max_subbufs = tracemap_cpu_nr_subbufs(cpus[i]);
	}
	s->nr = n;
	s->budget = max_subbufs > MIN_ROUND_REGIONS ? max_subbufs : MIN_ROUND_REGIONS;
	pace_init(s);
	new_round(s);
	return s;
}

/**
 * tracemap_stream_close - close the readers, restore buffer_percent, free
 * @s: the stream; NULL is allowed
 *
 * Returns 0, or the first -errno of buffer_percent and the instance's
 * put-back (tracemap_instance_close()), each said in a message: a tool
 * exits with failure when the kernel is left changed.
 */
int tracemap_stream_close(struct tracemap_stream *s)
{
	int i, ret = 0, r;

	if (!s)
		return 0;
	/* the events first: nothing more is written for a reader that goes away */
	tm_events_restore(s->events);
	tm_self_free(s->self);
	tm_decode_free(s->decode);
	for (i = 0; i < s->nr; i++)
		tracemap_cpu_close(s->cpus[i].c);
	free(s->cpus);
	/* the instance is the parent's to put back */
	if (s->percent_path && !tm_in_child(s->owner))
		ret = restore_watermark(s);
	/* last, with no reader left (the kernel takes the tracer back now): a
	 * private instance goes once nothing uses it */
	r = tracemap_instance_close(s->inst);
	if (r && !ret)
		ret = r;
	free(s->percent_path);
	free(s->clock_path);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->timerfd >= 0)
		close(s->timerfd);
	if (s->kickfd >= 0)
		close(s->kickfd);
	free(s);
	return ret;
}

/**
 * tracemap_stream_instance - the instance a stream reads
 * @s: the stream
 * @created: NULL, or set to 1 when the stream made the instance (a private
 *	one, or a missing one with TRACEMAP_STREAM_CREATE) and removes it at
 *	close, else 0
 *
 * Returns the instance name (TRACEMAP_TOP_LEVEL for the top-level buffer),
 * owned by @s, or NULL with errno EINVAL for a NULL stream.
 */
const char *tracemap_stream_instance(const struct tracemap_stream *s, int *created)
{
	if (!s || !s->inst) {
		tm_err(EINVAL);
		return NULL;
	}
	return tracemap_instance_name(s->inst, created);
}

/**
 * tracemap_stream_nr_cpus - the number of CPUs in a stream
 * @s: the stream
 *
 * Returns the count, or -EINVAL for a NULL stream.
 */
int tracemap_stream_nr_cpus(const struct tracemap_stream *s)
{
	return s ? s->nr : tm_err(EINVAL);
}

/**
 * tracemap_stream_cpu - the reader of one CPU of a stream
 * @s: the stream
 * @idx: 0 to tracemap_stream_nr_cpus() - 1
 *
 * For tracemap_cpu_id() and tracemap_cpu_stats(); it stays the stream's.
 *
 * Returns the reader, or NULL with errno EINVAL.
 */
struct tracemap_cpu *tracemap_stream_cpu(const struct tracemap_stream *s, int idx)
{
	if (!s || idx < 0 || idx >= s->nr) {
		tm_err(EINVAL);
		return NULL;
	}
	return s->cpus[idx].c;
}

/**
 * tracemap_stream_epoll_fd - a descriptor for the caller's event loop
 * @s: the stream
 *
 * Readable when tracemap_stream_consume() has something to do.
 *
 * Returns the epoll descriptor, or -EINVAL for a NULL stream.
 */
int tracemap_stream_epoll_fd(const struct tracemap_stream *s)
{
	return s ? s->epfd : tm_err(EINVAL);
}

/**
 * tracemap_stream_events - the events a stream enabled from its options
 * @s: the stream
 *
 * The events that @opts->events of tracemap_stream_open() resolved to, as
 * "system:event" (whether or not they were enabled before), owned by @s.
 *
 * Returns a NULL-terminated list (empty without opts->events, or after
 * tracemap_stream_restore_events()), or NULL with errno EINVAL when @s is
 * NULL.
 */
const char *const *tracemap_stream_events(const struct tracemap_stream *s)
{
	if (!s) {
		tm_err(EINVAL);
		return NULL;
	}
	return tm_events_names(s->events);
}

/**
 * tracemap_stream_restore_events - put back the instance state of the options
 * @s: the stream
 *
 * Disables the events the stream enabled and puts back their filters,
 * set_event_pid, set_event_notrace_pid and options/event-fork, as
 * tracemap_stream_close() would; the stream stays open, so that what the
 * buffers still hold can be delivered without new events coming in.
 * tracemap_stream_events() is empty afterwards. Calling it again does
 * nothing.
 *
 * Returns 0, or -EINVAL when @s is NULL.
 */
int tracemap_stream_restore_events(struct tracemap_stream *s)
{
	if (!s)
		return tm_err(EINVAL);
	if (usable(s))
		return -EBADFD;
	tm_events_restore(s->events);
	s->events = NULL;
	return 0;
}

struct tm_decode *tm_stream_decode(struct tracemap_stream *s)
{
	if (!s)
		tm_err(EINVAL);
	return s ? s->decode : NULL;
}

/* ------------------------------------------------------------ merging */

/*
 * Whether @sc may take a region in this round: its budget, and the chase
 * limit (pace.c, rows 1-6). A chased CPU delivers the rest of its region
 * and then waits for the next round, like a CPU out of budget: it is not
 * "found empty" (the writer may have moved on since), so the merge stalls
 * on it and the round ends stalled.
 */
static bool may_take(struct tracemap_stream *s, struct scpu *sc)
{
	unsigned int cond = sc->round_regions < s->budget ? 0 : TM_PACE_SPENT;

	/* the walk's position: only where a row reads it */
	if (sc->pace == TM_PACE_CHASED && !tm_cpu_region_left(sc->c))
		cond |= TM_PACE_REGION_DONE;
	return tm_pace_ask(&s->pace, &sc->pace, cond) == TM_PACE_TAKE;
}

/*
 * Whether the next round waits for the kernel's wakeup or the tick after
 * a round that delivered @delivered events: pace.c's rows 18-21, asked
 * without applying them (the pull model has no kick to set).
 */
static bool round_waits(const struct tracemap_stream *s, bool delivered)
{
	return tm_pace_rule(&s->pace, NULL, TM_PACE_DONE,
			    delivered ? TM_PACE_DELIVERED : 0)->set & TM_PACE_WAITS;
}

/*
 * @sc's event, just taken from its reader, waits for the merge: in consume
 * mode it counts as held, not delivered, until take() (stats.held).
 */
static void keep(struct tracemap_stream *s, struct scpu *sc)
{
	sc->has = true;
	sc->lost_told = false;
	if (s->mode == TRACEMAP_MODE_CONSUME) {
		tm_cpu_hold(sc->c, true);
		sc->held = true;
	}
}

/* One call into a reader: its next event becomes pending, or it is empty now. */
static int fetch(struct tracemap_stream *s, struct scpu *sc)
{
	uint64_t op = ++s->op, regions;
	unsigned int id, cond;
	int ret, tries = 0;

	do {
		/* -EBADMSG: counted by the reader, which skips to the next region */
		ret = tracemap_cpu_next_event(sc->c, &sc->ev);
	} while (ret == -EBADMSG && ++tries < MAX_CORRUPT_RETRIES);

	if (tm_cpu_cleared(sc->c) != sc->cleared) {
		sc->cleared = tm_cpu_cleared(sc->c);
		clock_check(s, sc);
	}
	regions = tm_cpu_regions(sc->c);
	if (regions != sc->regions) {
		sc->round_regions += regions - sc->regions;
		sc->regions = regions;
		sc->region_op = op;
		id = tm_cpu_region_id(sc->c);
		/*
		 * The same sub-buffer again (pace.c, row 7): the writer is on the
		 * reader page, unless the mapping shows it gone on (the first
		 * region of a round often ends the page the last round stopped on).
		 */
		cond = sc->region_seen && id == sc->region_id ? TM_PACE_SAME_PAGE : 0;
		if (cond && tm_cpu_writer_left(sc->c))
			cond |= TM_PACE_WRITER_LEFT;
		tm_pace_step(&s->pace, &sc->pace, TM_PACE_REGION, cond);
		sc->region_id = id;
		sc->region_seen = true;
		if (sc->wake_round != s->round) {
			sc->wake_round = s->round;
			tm_cpu_count_wakeup(sc->c);
		}
	}
	if (ret == -EBADMSG)
		ret = 0;
	if (ret < 0)
		return ret;
	if (!ret) {
		sc->empty_op = op;
		return 0;
	}
	keep(s, sc);
	return 1;
}

/* Fetch from every CPU that holds nothing and was not looked at in this round. */
static int refill(struct tracemap_stream *s)
{
	struct scpu *sc;
	int i, ret;

	for (i = 0; i < s->nr; i++) {
		sc = &s->cpus[i];
		if (sc->has || sc->empty_op > s->round_op || !may_take(s, sc))
			continue;
		ret = fetch(s, sc);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Nothing pending: say whether every CPU was seen empty in this round. */
static int round_end(struct tracemap_stream *s)
{
	int i;

	for (i = 0; i < s->nr; i++) {
		if (s->cpus[i].empty_op <= s->round_op) {
			tm_pace_step(&s->pace, NULL, TM_PACE_STALL, 0);
			return 0;
		}
	}
	tm_pace_step(&s->pace, NULL, TM_PACE_EMPTY, 0);
	return 0;
}

static bool before(const struct scpu *a, const struct scpu *b)
{
	if (a->epoch != b->epoch)
		return a->epoch < b->epoch;
	return a->ev.ts < b->ev.ts || (a->ev.ts == b->ev.ts && a < b);
}

/*
 * The oldest pending event goes out once every CPU without one was found
 * empty after that event's region was fetched.
 */
static int next_ordered(struct tracemap_stream *s, struct scpu **out)
{
	struct scpu *head, *sc;
	uint64_t region_op;
	bool again;
	int i, ret;

	/*
	 * Fast path: nothing changed on the other CPUs since the last event
	 * went out, so the next one of its CPU may follow if it comes from the
	 * same region (the others' checks still postdate its fetch) and is older
	 * than every other pending event.
	 */
	sc = s->run;
	s->run = NULL;
	if (sc && !sc->has && may_take(s, sc)) {
		region_op = sc->region_op;
		ret = fetch(s, sc);
		if (ret < 0)
			return ret;
		if (ret > 0 && sc->region_op == region_op && sc->ev.ts < s->run_limit) {
			s->run = sc;
			*out = sc;
			return 1;
		}
	}

	ret = refill(s);
	if (ret)
		return ret;
	for (;;) {
		head = NULL;
		for (i = 0; i < s->nr; i++) {
			sc = &s->cpus[i];
			if (sc->has && (!head || before(sc, head)))
				head = sc;
		}
		if (!head)
			return round_end(s);
		again = false;
		for (i = 0; i < s->nr; i++) {
			sc = &s->cpus[i];
			if (sc == head || sc->has || sc->empty_op > head->region_op)
				continue;
			if (!may_take(s, sc)) {
				tm_pace_step(&s->pace, NULL, TM_PACE_STALL, 0);
				return 0;
			}
			ret = fetch(s, sc);
			if (ret < 0)
				return ret;
			again |= ret > 0;
		}
		if (!again) {
			s->run = head;
			s->run_limit = UINT64_MAX;
			s->run_next = NULL;
			for (i = 0; i < s->nr; i++) {
				sc = &s->cpus[i];
				/* a later epoch's events wait anyway: no limit */
				if (sc != head && sc->has && sc->epoch == head->epoch &&
				    sc->ev.ts < s->run_limit) {
					s->run_limit = sc->ev.ts;
					s->run_next = sc;
				}
			}
			*out = head;
			return 1;
		}
	}
}

/*
 * Fill priority: drain a region of the CPU whose buffer holds the most,
 * then choose again. Every CPU's counters are fresh from the refill's
 * GET_READER, or read() and its look at the stats file, at the start of a
 * round.
 */
static int next_unordered(struct tracemap_stream *s, struct scpu **out)
{
	struct scpu *best = NULL, *sc;
	uint64_t most = 0, b;
	int i, start, ret;

	ret = refill(s);
	if (ret)
		return ret;
	if (s->drain && s->drain->has && s->drain->region_op == s->drain_op) {
		*out = s->drain;
		return 1;
	}
	/* ties go round-robin, starting after the CPU drained last */
	start = s->drain ? (int)(s->drain - s->cpus) + 1 : 0;
	for (i = 0; i < s->nr; i++) {
		sc = &s->cpus[(start + i) % s->nr];
		if (!sc->has)
			continue;
		b = tm_cpu_backlog(sc->c);
		if (!best || b > most) {
			best = sc;
			most = b;
		}
	}
	if (!best)
		return round_end(s);
	s->drain = best;
	s->drain_op = best->region_op;
	*out = best;
	return 1;
}

static int merge_next(struct tracemap_stream *s, struct scpu **out)
{
	if (s->flags & TRACEMAP_STREAM_UNORDERED)
		return next_unordered(s, out);
	return next_ordered(s, out);
}

/* The pending event of @sc leaves; the reader's data stays valid until its next call. */
static inline void take(struct tracemap_stream *s, struct scpu *sc)
{
	sc->has = false;
	/* an event of the fast path (run_region()) was never held */
	if (sc->held) {
		tm_cpu_hold(sc->c, false);
		sc->held = false;
	}
	if (s->flags & TRACEMAP_STREAM_UNORDERED)
		return;
	/* a new clock's time stamps: the order starts again */
	if (sc->epoch != s->last_epoch) {
		s->last_epoch = sc->epoch;
		s->last_ts = 0;
	}
	if (sc->ev.ts < s->last_ts)
		tm_cpu_count_late(sc->c);
	else
		s->last_ts = sc->ev.ts;
}

/* An event the stream caused itself, left out with TRACEMAP_STREAM_NO_SELF. */
static bool own_event(struct tracemap_stream *s, struct scpu *sc)
{
	enum tm_self_kind kind;

	if (!s->self)
		return false;
	kind = tm_self_match(s->self, &sc->ev);
	if (kind == TM_SELF_NONE)
		return false;
	tm_cpu_count_own(sc->c, kind == TM_SELF_HELPER);
	/*
	 * Data all the same: a round of own events only (the aftermath of a
	 * line printed to a terminal) is no empty wakeup to back off from.
	 */
	tm_wake_data(&s->wake);
	return true;
}

/*
 * @sc's event, taken: left out as the stream's own (0), or observed and
 * given to on_event (1, or < 0 from the callback). deliver() and a run
 * through a region (run_region()) alike.
 */
static inline int hand_out(struct tracemap_stream *s, struct scpu *sc)
{
	int ret;

	/* before the own-event check: an own event still names tasks and execs */
	if (*s->observe)
		tm_decode_observe(s->decode, &sc->ev);
	if (own_event(s, sc))
		return 0;
	if (s->on_event) {
		ret = s->on_event(s->ctx, &sc->ev);
		if (ret < 0)
			return ret;
	}
	return 1;
}

static inline int deliver(struct tracemap_stream *s, struct scpu *sc)
{
	int ret;

	if (sc->ev.missed && s->on_lost) {
		/* reported once; the event stays pending if the caller stops here */
		if (!sc->lost_told) {
			sc->lost_told = true;
			ret = s->on_lost(s->ctx, sc->cpu, sc->ev.missed);
			if (ret < 0)
				return ret;
		}
		sc->ev.missed = 0;
	}
	take(s, sc);
	return hand_out(s, sc);
}

/*
 * Ordered, @sc's last event went out ahead of every other CPU: the rest of
 * its region goes out in one loop while it stays older than every other
 * pending event (s->run_limit). The region was fetched before the other
 * CPUs were last found empty, so nothing they hold can be older; no merge
 * bookkeeping and no call into the kernel per event: the loop walks the
 * reader's region itself (tm_cpu_region_walk()), no event in it carries a
 * loss (the region's first went out through deliver()) or is held, and the
 * records taken are counted once at the end. Returns the events delivered
 * (the first event at or past the limit stays pending), or < 0 from the
 * callbacks.
 */
static int run_region(struct tracemap_stream *s, struct scpu *sc)
{
	struct tm_walk *w = tm_cpu_region_walk(sc->c);
	uint64_t limit = s->run_limit, last = s->last_ts;
	struct tracemap_event *ev = &sc->ev;
	unsigned int taken = 0, own = 0;
	bool pending = false;
	struct tm_rec rec;
	int ret = 0;

	if (!w)
		return 0;
	/* the same for every event of the run */
	ev->cpu = sc->cpu;
	ev->missed = 0;
	while (tm_walk_next(w, &rec) > 0) {
		ev->ts = rec.ts;
		ev->data = rec.payload;
		ev->size = rec.size;
		ev->offset = rec.off;
		taken++;
		if (rec.ts >= limit) {
			pending = true;
			break;
		}
		if (rec.ts < last)
			tm_cpu_count_late(sc->c);
		else
			last = rec.ts;
		ret = hand_out(s, sc);
		if (ret < 0)
			break;
		own += !ret;
	}
	/* a record the walk stopped at (the end, a corrupt one) is the reader's again */
	tm_cpu_walked(sc->c, taken);
	s->last_ts = last;
	if (pending) {
		/* the merge decides; its region is unchanged */
		keep(s, sc);
		s->run = NULL;
	}
	/* at most a sub-buffer's records: no overflow */
	return ret < 0 ? ret : (int)(taken - own - pending);
}

/*
 * The run of @a stopped at its event no older than s->run_limit, which now
 * waits. When the CPU that set the limit holds the oldest pending event and
 * every CPU without one was found empty in this round after that event's
 * region was fetched, next_ordered() would choose it without a fetch: its
 * event goes out and its region runs on at once, the limit now the oldest
 * of the others (finely interleaved CPUs hand over at every event). Returns
 * that CPU, or NULL for the merge to decide.
 */
static struct scpu *hand_over(struct tracemap_stream *s, struct scpu *a)
{
	struct scpu *b = s->run_next, *next = NULL, *sc;
	uint64_t limit = UINT64_MAX;
	int i;

	if (!b || !b->has || !a->has || before(a, b))
		return NULL;
	for (i = 0; i < s->nr; i++) {
		sc = &s->cpus[i];
		if (sc == b)
			continue;
		if (!sc->has) {
			if (sc->empty_op <= s->round_op || sc->empty_op <= b->region_op)
				return NULL;
		} else if (sc->epoch == b->epoch && sc->ev.ts < limit) {
			limit = sc->ev.ts;
			next = sc;
		}
	}
	s->run = b;
	s->run_limit = limit;
	s->run_next = next;
	return b;
}

/* One round: deliver everything that can go out now, within the budget. */
static int run_round(struct tracemap_stream *s)
{
	struct scpu *sc;
	int n = 0, ret;

	new_round(s);
	for (;;) {
		ret = merge_next(s, &sc);
		if (ret <= 0)
			break;
		do {
			ret = deliver(s, sc);
			if (ret < 0)
				break;
			if (n < INT_MAX)
				n += ret;
			if (s->run != sc)
				break;
			ret = run_region(s, sc);
			if (ret < 0)
				break;
			n = n > INT_MAX - ret ? INT_MAX : n + ret;
			/* s->run still set: the region ended, the next event needs a fetch */
		} while (!s->run && (sc = hand_over(s, sc)));
		if (ret < 0)
			break;
	}
	if (n)
		tm_wake_data(&s->wake);
	tm_wake_round(&s->wake, (unsigned int)n);
	if (ret < 0)
		return ret;
	/* events delivered, not own ones: those are what the stream's own wakeups write */
	pace_event(s, TM_PACE_DONE, n > 0 ? TM_PACE_DELIVERED : 0);
	return n;
}

/*
 * Whether the kernel's wakeup of a buffer is among @evs: that one is
 * expected to bring data (the empty-wakeup back-off counts it); the tick
 * and the kick are the stream's own and may find nothing.
 */
static bool kernel_woke(const struct tracemap_stream *s, const struct epoll_event *evs, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (evs[i].data.fd != s->timerfd && evs[i].data.fd != s->kickfd)
			return true;
	return false;
}

/*
 * Wait for the epoll fd until @deadline (UINT64_MAX: forever); once it has
 * passed, only look. Returns > 0 when woken, 0 on timeout, or -errno.
 */
static int wait_until(struct tracemap_stream *s, uint64_t deadline)
{
	struct epoll_event evs[8];
	int timeout = -1, ret;
	uint64_t now;

	/*
	 * A stream of readers opened by the caller (tm_stream_open_readers())
	 * has nothing to wait on: it looks again at once, as if woken.
	 */
	if (s->epfd < 0) {
		pace_event(s, TM_PACE_WOKEN, 0);
		return 1;
	}
	if (deadline != UINT64_MAX) {
		now = tm_now_ns();
		timeout = now >= deadline ? 0 : (int)((deadline - now + 999999) / 1000000);
	}
	ret = epoll_wait(s->epfd, evs, sizeof(evs) / sizeof(evs[0]), timeout);
	if (ret < 0)
		return tm_err(errno);
	if (ret > 0) {
		if (kernel_woke(s, evs, ret))
			tm_wake_woken(&s->wake);
		clear_tick(s);
		pace_event(s, TM_PACE_WOKEN, 0);
	}
	return ret;
}

/*
 * The wake-up policy (wake.c) before every round of poll, consume and
 * next_event: pause after wakeups that brought nothing, then start at most
 * one round per TM_MIN_ROUND_NS, sleeping at most until @deadline. Only at
 * watermark 0 (no tick): above it the kernel wakes in batches. A busy
 * poller asked for no sleep at all. Returns true when a signal cut a
 * sleep short: poll and next_event then return -EINTR rather than wait
 * on if the round brings nothing, as a signal in their own wait would.
 */
static bool pace(struct tracemap_stream *s, uint64_t deadline)
{
	bool signalled = false;

	if (s->flags & TRACEMAP_STREAM_BUSY_POLL)
		return false;
	if (tm_wake_backoff(&s->wake))
		signalled = tm_wake_pause();
	if (s->timerfd < 0)
		signalled |= tm_wake_moderate(&s->wake, deadline);
	return signalled;
}

static uint64_t deadline_of(int timeout_ms)
{
	return timeout_ms < 0 ? UINT64_MAX : tm_now_ns() + (uint64_t)timeout_ms * 1000000;
}

/*
 * The wait of poll and next_event: once the deadline passed after a wait,
 * 0; else wait. Returns > 0 to go on with a round, 0 or -errno to return.
 */
static int wait_more(struct tracemap_stream *s, uint64_t deadline, bool *waited)
{
	if (*waited && deadline != UINT64_MAX && tm_now_ns() >= deadline)
		return 0;
	*waited = true;
	return wait_until(s, deadline);
}

/**
 * tracemap_stream_consume - deliver what is ready to the callbacks
 * @s: the stream
 *
 * One round, without waiting for data, paced by the wake-up policy
 * (wake.c) unless TRACEMAP_STREAM_BUSY_POLL.
 *
 * Returns the events delivered, or a negative callback value or -errno.
 */
int tracemap_stream_consume(struct tracemap_stream *s)
{
	if (!s)
		return tm_err(EINVAL);
	if (usable(s))
		return -EBADFD;
	clear_tick(s);
	pace(s, UINT64_MAX);
	/*
	 * Called on a wakeup of the epoll fd: one that delivers nothing counts
	 * as empty, unless the tick or the kick (the stream's own) made it
	 */
	if (!tm_pace_own_wakeup(&s->pace))
		tm_wake_woken(&s->wake);
	return run_round(s);
}

/**
 * tracemap_stream_poll - wait for events and deliver them to the callbacks
 * @s: the stream
 * @timeout_ms: the longest wait, -1 for no limit
 *
 * Returns the events delivered (0 on timeout), or a negative callback
 * value or -errno.
 */
int tracemap_stream_poll(struct tracemap_stream *s, int timeout_ms)
{
	bool waited = false, signalled;
	uint64_t deadline;
	int ret;

	if (!s)
		return tm_err(EINVAL);
	if (usable(s))
		return -EBADFD;
	deadline = deadline_of(timeout_ms);
	for (;;) {
		/* after a round that waits (pace.c, WAITS), only a wakeup brings news */
		if (!tm_pace_waits(&s->pace)) {
			signalled = pace(s, deadline);
			ret = run_round(s);
			if (ret)
				return ret;
			if (signalled)
				return tm_err(EINTR);
		}
		ret = wait_more(s, deadline, &waited);
		if (ret <= 0)
			return ret;
	}
}

/**
 * tracemap_stream_next_event - the next event of the stream, pull model
 * @s: the stream
 * @ev: filled with the event, borrowed until the next call on @s
 * @timeout_ms: the longest wait, -1 for no limit
 *
 * Returns 1 with @ev filled, 0 on timeout, or -errno.
 */
int tracemap_stream_next_event(struct tracemap_stream *s, struct tracemap_event *ev,
			       int timeout_ms)
{
	bool waited = false, signalled = false;
	uint64_t deadline;
	struct scpu *sc;
	int ret;

	if (!s || !ev)
		return tm_err(EINVAL);
	if (usable(s))
		return -EBADFD;
	deadline = deadline_of(timeout_ms);
	for (;;) {
		ret = merge_next(s, &sc);
		if (ret < 0)
			return ret;
		if (ret > 0) {
			take(s, sc);
			tm_wake_data(&s->wake);
			if (*s->observe)
				tm_decode_observe(s->decode, &sc->ev);
			if (own_event(s, sc)) {
				sc->carry_missed = tm_lost_add(sc->carry_missed, sc->ev.missed);
				continue;
			}
			sc->ev.missed = tm_lost_add(sc->carry_missed, sc->ev.missed);
			sc->carry_missed = 0;
			s->round_events++;
			*ev = sc->ev;
			return 1;
		}
		/* a signal cut the pacing short and the round found nothing */
		if (signalled)
			return tm_err(EINTR);
		if (round_waits(s, s->round_events > 0)) {
			ret = wait_more(s, deadline, &waited);
			if (ret <= 0)
				return ret;
		}
		tm_wake_round(&s->wake, s->round_events);
		signalled = pace(s, deadline);
		new_round(s);
	}
}
