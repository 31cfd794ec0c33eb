// SPDX-License-Identifier: LGPL-2.1
/*
 * tracemap stream: enable events in an instance, print them as they arrive
 * the way 'trace-cmd report' prints a trace.dat, restore everything on
 * Ctrl-C/SIGTERM and print per-CPU statistics.
 *
 * Nothing is changed before every argument was checked. Changes are made in
 * this order and undone in the reverse one: the private instance (if no -B),
 * the stream (buffer_percent), the events.
 */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>
#include <tracefs.h>

#include "tracemap.h"
#include "tracemap-tool.h"

#define DRAIN_NS		(300 * 1000000ULL)	/* final drain after the stop */
#define CMDLINE_RELOAD_NS	(100 * 1000000ULL)	/* saved_cmdlines: tasks known gone */
#define CMDLINE_RELOAD_MIN_NS	(1000000ULL)		/* ... a task new and gone */
#define BUSY_CHECK_EVERY	256			/* busy-poll: rounds per signal check */
#define ROUND_GAP_NS		200000			/* at most 5000 rounds a second */
#define NR_GONE			64
#define STOP_CHECK_EVERY	4096			/* events per signal check in a round */
#define STDOUT_BUF		(1 << 20)

/* One event the stream enables, and what to put back. */
struct ev_item {
	char *system;
	char *event;
	bool was_enabled;
	bool enabled;		/* we enabled it (and restore it) */
};

struct sys_item {
	char *system;
	bool whole;		/* every event of the system was asked for */
};

struct opts {
	const char *instance;	/* -B */
	bool top;
	char **specs;		/* -e */
	int nr_specs;
	const char *cpumask;
	bool follow;
	bool unordered;
	int latency_ms;
	int watermark;
	bool busy;
	bool raw;
};

struct printer {
	struct tep_handle *tep;
	struct tep_event *exec_event;
	struct tep_plugin_list *plugins;
	struct trace_seq seq;
	const char *tfmt;	/* time column, as trace-cmd report picks it */
	const char *tracefs;
	uint64_t cmdline_reload;
	int gone[NR_GONE];	/* pids without a /proc entry, most recent */
	unsigned int next_gone;
	unsigned int since_check;	/* events since the last look at the signalfd */
	int sfd;
	bool stop;			/* a signal arrived during a round */
	bool raw;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ------------------------------------------------------------- events */

static bool in_list(char **list, const char *name)
{
	for (; list && *list; list++)
		if (!strcmp(*list, name))
			return true;
	return false;
}

static int add_event(struct ev_item **evs, int *nr, const char *sys, const char *ev)
{
	struct ev_item *n;
	int i;

	for (i = 0; i < *nr; i++)
		if (!strcmp((*evs)[i].system, sys) && !strcmp((*evs)[i].event, ev))
			return 0;
	n = realloc(*evs, (*nr + 1) * sizeof(**evs));
	if (!n)
		return -1;
	*evs = n;
	n[*nr] = (struct ev_item){ .system = strdup(sys), .event = strdup(ev) };
	if (!n[*nr].system || !n[*nr].event)
		return -1;
	(*nr)++;
	return 0;
}

static int add_system(struct sys_item **sys, int *nr, const char *name, bool whole)
{
	struct sys_item *n;
	int i;

	for (i = 0; i < *nr; i++) {
		if (!strcmp((*sys)[i].system, name)) {
			(*sys)[i].whole |= whole;
			return 0;
		}
	}
	n = realloc(*sys, (*nr + 1) * sizeof(**sys));
	if (!n)
		return -1;
	*sys = n;
	n[*nr] = (struct sys_item){ .system = strdup(name), .whole = whole };
	if (!n[*nr].system)
		return -1;
	(*nr)++;
	return 0;
}

/*
 * Resolve -e specs as trace-cmd does: "system:event", "system" (all its
 * events) or "event" (that event in every system); shell globs allowed.
 * The event lists are the tracefs ones, the same in every instance.
 */
static int resolve_events(const char *tfs, struct opts *o, struct ev_item **evs, int *nr_evs,
			  struct sys_item **sys, int *nr_sys)
{
	char **systems, **events;
	int i, s, e, found, ret = -1;

	systems = tracefs_event_systems(tfs);
	if (!systems && o->nr_specs) {
		tool_err("cannot list the events of %s/events: %s", tfs, strerror(errno));
		return -1;
	}
	for (i = 0; i < o->nr_specs; i++) {
		char *spec = strdup(o->specs[i]), *colon;
		const char *spat, *epat;
		bool whole;

		if (!spec)
			goto out;
		colon = strchr(spec, ':');
		if (colon) {
			*colon = '\0';
			spat = spec;
			epat = colon[1] ? colon + 1 : "*";
		} else {
			spat = NULL;
			epat = spec;
		}
		found = 0;
		for (s = 0; systems && systems[s]; s++) {
			const char *sname = systems[s];

			/* "name" alone: a system of that name, else events of that name */
			if (spat ? fnmatch(spat, sname, 0) : false)
				continue;
			whole = spat ? !strcmp(epat, "*") : !fnmatch(epat, sname, 0);
			if (!spat && !whole)
				continue;
			events = tracefs_system_events(tfs, sname);
			for (e = 0; events && events[e]; e++) {
				if (!whole && fnmatch(epat, events[e], 0))
					continue;
				if (add_event(evs, nr_evs, sname, events[e]) ||
				    add_system(sys, nr_sys, sname, whole)) {
					tracefs_list_free(events);
					free(spec);
					goto out;
				}
				found++;
			}
			tracefs_list_free(events);
		}
		if (!found && !spat) {
			for (s = 0; systems && systems[s]; s++) {
				events = tracefs_system_events(tfs, systems[s]);
				for (e = 0; events && events[e]; e++) {
					if (fnmatch(epat, events[e], 0))
						continue;
					if (add_event(evs, nr_evs, systems[s], events[e]) ||
					    add_system(sys, nr_sys, systems[s], false)) {
						tracefs_list_free(events);
						free(spec);
						goto out;
					}
					found++;
				}
				tracefs_list_free(events);
			}
		}
		if (!found) {
			if ((spat && !strcmp(spat, "ftrace")) ||
			    (!spat && !in_list(systems, epat) && !strcmp(epat, "ftrace")))
				tool_err("-e %s: ftrace events cannot be enabled; they are always "
					 "recorded (trace_marker writes arrive as ftrace:print)",
					 o->specs[i]);
			else
				tool_err("-e %s: no such event (see %s/available_events)",
					 o->specs[i], tfs);
			free(spec);
			goto out;
		}
		free(spec);
	}
	ret = 0;
out:
	tracefs_list_free(systems);
	return ret;
}

/*
 * One event's enable file. tracefs_event_enable() takes regexes and rescans
 * every system per call (milliseconds each, and a system like syscalls has
 * hundreds of events), so single events go through their own file; whole
 * systems through tracefs_event_enable/disable().
 */
static int event_file(struct tracefs_instance *inst, const struct ev_item *ev, const char *val)
{
	char file[512];
	char *v;
	int ret;

	snprintf(file, sizeof(file), "events/%s/%s/enable", ev->system, ev->event);
	if (val)
		return tracefs_instance_file_write(inst, file, val) < 0 ? -1 : 0;
	v = tracefs_instance_file_read(inst, file, NULL);
	if (!v) {
		tool_err("cannot read the state of %s:%s", ev->system, ev->event);
		return -1;
	}
	/* "0", "1", or with a '*' when soft-disabled by a trigger */
	ret = v[0] == '1';
	free(v);
	return ret;
}

/* Put back every event we enabled: whole systems in one write where that is exact. */
static void restore_events(struct tracefs_instance *inst, struct ev_item *evs, int nr_evs,
			   struct sys_item *sys, int nr_sys)
{
	int i, s;

	for (s = 0; s < nr_sys; s++) {
		bool all_off = sys[s].whole;

		for (i = 0; i < nr_evs && all_off; i++)
			if (!strcmp(evs[i].system, sys[s].system) &&
			    (evs[i].was_enabled || !evs[i].enabled))
				all_off = false;
		if (!all_off)
			continue;
		if (tracefs_event_disable(inst, sys[s].system, NULL))
			tool_err("cannot disable the events of %s again", sys[s].system);
		for (i = 0; i < nr_evs; i++)
			if (!strcmp(evs[i].system, sys[s].system))
				evs[i].enabled = false;
	}
	for (i = 0; i < nr_evs; i++) {
		if (!evs[i].enabled)
			continue;
		if (event_file(inst, &evs[i], "0"))
			tool_err("cannot disable %s:%s again", evs[i].system, evs[i].event);
		evs[i].enabled = false;
	}
}

static int enable_events(struct tracefs_instance *inst, struct ev_item *evs, int nr_evs,
			 struct sys_item *sys, int nr_sys)
{
	int i, s, st;
	bool any_off;

	for (i = 0; i < nr_evs; i++) {
		st = event_file(inst, &evs[i], NULL);
		if (st < 0)
			return -1;
		evs[i].was_enabled = st;
	}
	for (s = 0; s < nr_sys; s++) {
		if (!sys[s].whole)
			continue;
		any_off = false;
		for (i = 0; i < nr_evs; i++)
			if (!strcmp(evs[i].system, sys[s].system) && !evs[i].was_enabled)
				any_off = true;
		if (!any_off)
			continue;
		/* mark first: a write that half worked is undone too */
		for (i = 0; i < nr_evs; i++)
			if (!strcmp(evs[i].system, sys[s].system) && !evs[i].was_enabled)
				evs[i].enabled = true;
		if (tracefs_event_enable(inst, sys[s].system, NULL)) {
			tool_err("cannot enable the events of %s: %s", sys[s].system,
				 strerror(errno));
			return -1;
		}
	}
	for (i = 0; i < nr_evs; i++) {
		if (evs[i].was_enabled || evs[i].enabled)
			continue;
		evs[i].enabled = true;
		if (event_file(inst, &evs[i], "1")) {
			tool_err("cannot enable %s:%s: %s", evs[i].system, evs[i].event,
				 strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void free_events(struct ev_item *evs, int nr_evs, struct sys_item *sys, int nr_sys)
{
	int i;

	for (i = 0; i < nr_evs; i++) {
		free(evs[i].system);
		free(evs[i].event);
	}
	for (i = 0; i < nr_sys; i++)
		free(sys[i].system);
	free(evs);
	free(sys);
}

/* ------------------------------------------------------------ printing */

/* trace-cmd shows microseconds for these clocks and raw counts for the others */
static const char *time_format(struct tracefs_instance *inst)
{
	static const char *const usecs[] = { "local", "global", "uptime", "perf", "tai" };
	const char *fmt = "%12d:";
	char *clock = tracefs_get_clock(inst);
	size_t i;

	if (!clock)
		return " %6.1000d:";
	if (!strncmp(clock, "mono", 4))
		fmt = " %6.1000d:";
	for (i = 0; i < sizeof(usecs) / sizeof(usecs[0]); i++)
		if (!strcmp(clock, usecs[i]))
			fmt = " %6.1000d:";
	free(clock);
	return fmt;
}

static int printer_init(struct printer *p, const char *tfs, struct tracefs_instance *inst,
			bool raw)
{
	memset(p, 0, sizeof(*p));
	p->sfd = -1;
	p->raw = raw;
	p->tracefs = tfs;
	if (raw)
		return 0;
	p->tep = tracefs_local_events(tfs);
	if (!p->tep) {
		tool_err("cannot load the event formats from %s/events: %s", tfs, strerror(errno));
		return -1;
	}
	/* the plugins change how some events print (sched_switch, ...), as for trace-cmd */
	p->plugins = tep_load_plugins(p->tep);
	p->exec_event = tep_find_event_by_name(p->tep, "sched", "sched_process_exec");
	trace_seq_init(&p->seq);
	p->tfmt = time_format(inst);
	return 0;
}

static void printer_free(struct printer *p)
{
	if (p->raw || !p->tep)
		return;
	trace_seq_destroy(&p->seq);
	tep_unload_plugins(p->plugins, p->tep);
	tep_free(p->tep);
}

/* "[CPU] TS SIZE": no formatting library on this path */
static void print_raw(const struct tracemap_event *ev)
{
	char buf[64], *q = buf + sizeof(buf);
	unsigned long long v;
	int cpu = ev->cpu, i;

	*--q = '\n';
	v = ev->size;
	do {
		*--q = '0' + v % 10;
		v /= 10;
	} while (v);
	*--q = ' ';
	v = ev->ts;
	do {
		*--q = '0' + v % 10;
		v /= 10;
	} while (v);
	*--q = ' ';
	*--q = ']';
	for (i = 0; i < 3 || cpu; i++) {
		*--q = '0' + cpu % 10;
		cpu /= 10;
	}
	*--q = '[';
	fwrite(q, 1, buf + sizeof(buf) - q, stdout);
}

/*
 * The comm of a task that was not in saved_cmdlines when we loaded it. trace-cmd
 * report takes saved_cmdlines as of the end of the recording; live, the task
 * usually still runs, so ask /proc, and re-read saved_cmdlines (rate-limited)
 * for tasks that are gone.
 */
static void learn_comm(struct printer *p, int pid)
{
	char path[64], comm[64];
	uint64_t now, wait;
	bool seen = false;
	FILE *f;
	size_t n;
	int i;

	for (i = 0; i < NR_GONE; i++)
		if (p->gone[i] == pid)
			seen = true;
	if (!seen) {
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		f = fopen(path, "re");
		if (f) {
			n = fread(comm, 1, sizeof(comm) - 1, f);
			fclose(f);
			while (n && comm[n - 1] == '\n')
				n--;
			comm[n] = '\0';
			if (n && !tep_register_comm(p->tep, comm, pid))
				return;
		}
		p->gone[p->next_gone++ % NR_GONE] = pid;
	}
	/*
	 * Gone already: the kernel saved its comm when it last left the CPU.
	 * Look once for each new task (at most every millisecond), then only
	 * now and then.
	 */
	now = now_ns();
	wait = seen ? CMDLINE_RELOAD_NS : CMDLINE_RELOAD_MIN_NS;
	if (now - p->cmdline_reload >= wait) {
		p->cmdline_reload = now;
		tracefs_load_cmdlines(p->tracefs, p->tep);
	}
}

/*
 * A task that execs takes the name of the program: what trace-cmd finds in
 * saved_cmdlines at the end of a recording. Without this the lines after an
 * exec would keep the name /proc gave before it ("taskset" for
 * "taskset -c 1 sh").
 */
static void exec_comm(struct printer *p, struct tep_event *e, struct tep_record *rec, int pid)
{
	char comm[16];
	const char *file, *base;
	int len = 0;

	file = tep_get_field_raw(NULL, e, "filename", rec, &len, 0);
	if (!file || len <= 0 || pid <= 0)
		return;
	len = strnlen(file, len);
	base = memrchr(file, '/', len);
	base = base ? base + 1 : file;
	len -= base - file;
	/* the kernel keeps TASK_COMM_LEN - 1 = 15 characters */
	snprintf(comm, sizeof(comm), "%.*s", len, base);
	tep_override_comm(p->tep, comm, pid);
}

static void print_event(struct printer *p, const struct tracemap_event *ev)
{
	static const char spaces[] = "                    "; /* 20 */
	struct trace_seq *s = &p->seq;
	struct tep_record rec;
	struct tep_event *e;
	const char *name;
	int pid, len;

	tracemap_event_to_record(ev, &rec);
	pid = tep_data_pid(p->tep, &rec);
	e = tep_find_event_by_record(p->tep, &rec);
	if (e && e == p->exec_event)
		exec_comm(p, e, &rec, pid);
	else if (pid > 0 && !tep_is_pid_registered(p->tep, pid))
		learn_comm(p, pid);

	/* the columns of trace-cmd report 3.1.6 (trace_show_data()) */
	trace_seq_reset(s);
	tep_print_event(p->tep, s, &rec, "%16s-%-5d [%03d]", TEP_PRINT_COMM, TEP_PRINT_PID,
			TEP_PRINT_CPU);
	tep_print_event(p->tep, s, &rec, p->tfmt, TEP_PRINT_TIME);
	name = e ? e->name : "(NULL)";
	trace_seq_printf(s, " %s: ", name);
	len = strlen(name);
	if (len < 20)
		trace_seq_printf(s, "%.*s", 20 - len, spaces);
	tep_print_event(p->tep, s, &rec, "%s", TEP_PRINT_INFO);
	if (s->len && s->buffer[s->len - 1] == '\n')
		s->len--;
	trace_seq_putc(s, '\n');
	fwrite(s->buffer, 1, s->len, stdout);
}

static bool stop_requested(int sfd);

static int on_event(void *ctx, const struct tracemap_event *ev)
{
	struct printer *p = ctx;

	if (p->raw)
		print_raw(ev);
	else
		print_event(p, ev);
	if (ferror(stdout))
		return -EPIPE;
	/* a reader far behind has long rounds: look for Ctrl-C inside them too */
	if (++p->since_check >= STOP_CHECK_EVERY && p->sfd >= 0) {
		p->since_check = 0;
		if (stop_requested(p->sfd)) {
			p->stop = true;
			return -EINTR;
		}
	}
	return 0;
}

static int on_lost(void *ctx, int cpu, long long lost)
{
	if (lost > 0)
		printf("CPU:%d [%lld EVENTS DROPPED]\n", cpu, lost);
	else
		printf("CPU:%d [EVENTS DROPPED]\n", cpu);
	return ferror(stdout) ? -EPIPE : 0;
}

/* ---------------------------------------------------------- statistics */

static void print_stats(struct tracemap_stream *s, double secs)
{
	struct tracemap_cpu_stats st, tot = { 0 };
	struct tracemap_cpu *c;
	int i;

	fprintf(stderr, "tracemap: %.1f s\n", secs);
	fprintf(stderr, "%4s %-7s %12s %14s %10s %6s %10s %12s %10s %8s\n", "cpu", "backend",
		"events", "bytes", "lost", "gaps", "wakeups", "get_reader", "reads", "late");
	for (i = 0; i < tracemap_stream_nr_cpus(s); i++) {
		c = tracemap_stream_cpu(s, i);
		if (tracemap_cpu_stats(c, &st, sizeof(st)))
			continue;
		fprintf(stderr, "%4d %-7s %12llu %14llu %10llu %6llu %10llu %12llu %10llu %8llu\n",
			tracemap_cpu_id(c),
			tracemap_cpu_backend(c) == TRACEMAP_BACKEND_MMAP ? "mmap" : "read",
			(unsigned long long)st.events, (unsigned long long)st.bytes,
			(unsigned long long)st.lost, (unsigned long long)st.lost_unknown,
			(unsigned long long)st.wakeups, (unsigned long long)st.get_reader,
			(unsigned long long)st.reads, (unsigned long long)st.late);
		tot.events += st.events;
		tot.bytes += st.bytes;
		tot.lost += st.lost;
		tot.lost_unknown += st.lost_unknown;
		tot.wakeups += st.wakeups;
		tot.get_reader += st.get_reader;
		tot.reads += st.reads;
		tot.late += st.late;
	}
	fprintf(stderr, "%4s %-7s %12llu %14llu %10llu %6llu %10llu %12llu %10llu %8llu\n", "all",
		"", (unsigned long long)tot.events, (unsigned long long)tot.bytes,
		(unsigned long long)tot.lost, (unsigned long long)tot.lost_unknown,
		(unsigned long long)tot.wakeups, (unsigned long long)tot.get_reader,
		(unsigned long long)tot.reads, (unsigned long long)tot.late);
}

/* ------------------------------------------------------------ the loop */

static bool stop_requested(int sfd)
{
	struct signalfd_siginfo si;

	return read(sfd, &si, sizeof(si)) == sizeof(si);
}

/* Returns 0 when stopped by a signal or a closed output, -1 on an error. */
/*
 * Output goes out at once to a terminal; to a file or pipe it is held in
 * stdio's buffer for at most the latency bound, so a slow trickle of
 * events does not cost one write() per wakeup.
 */
struct flusher {
	uint64_t held_since;	/* 0: nothing held */
	uint64_t max_ns;
	bool eager;
};

/* Returns non-zero when the output is gone (EPIPE). */
static int flush_output(struct flusher *f, int delivered)
{
	uint64_t now;

	if (delivered > 0 && !f->held_since)
		f->held_since = now_ns();
	if (!f->held_since)
		return 0;
	now = now_ns();
	if (!f->eager && now - f->held_since < f->max_ns)
		return 0;
	f->held_since = 0;
	return fflush(stdout);
}

/* epoll_wait() timeout: until held output is due, else forever */
static int flush_timeout(const struct flusher *f)
{
	uint64_t due, now;

	if (!f->held_since)
		return -1;
	due = f->held_since + f->max_ns;
	now = now_ns();
	return now >= due ? 0 : (int)((due - now + 999999) / 1000000);
}

static int stream_loop(struct tracemap_stream *s, struct printer *p, int sfd, bool busy,
		       int latency_ms)
{
	struct flusher f = { .max_ns = (uint64_t)latency_ms * 1000000,
			     .eager = isatty(STDOUT_FILENO) };
	struct epoll_event e, evs[2];
	uint64_t now, last_round = 0;
	unsigned int rounds = 0;
	int ep, ret, n, i;
	bool stop = false;

	if (busy) {
		while (!stop) {
			ret = tracemap_stream_consume(s);
			if (ret == -EPIPE || p->stop)
				return 0;
			if (ret < 0)
				goto fail;
			if (flush_output(&f, ret))
				return 0;
			if ((ret == 0 || ++rounds % BUSY_CHECK_EVERY == 0) && stop_requested(sfd))
				stop = true;
		}
		return 0;
	}

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0) {
		ret = -errno;
		goto fail;
	}
	e = (struct epoll_event){ .events = EPOLLIN, .data.fd = sfd };
	epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &e);
	e = (struct epoll_event){ .events = EPOLLIN, .data.fd = tracemap_stream_epoll_fd(s) };
	if (epoll_ctl(ep, EPOLL_CTL_ADD, e.data.fd, &e)) {
		ret = -errno;
		close(ep);
		goto fail;
	}
	while (!stop) {
		/*
		 * Wake-up moderation: at most one round every ROUND_GAP_NS. A
		 * trickle of events (watermark 0) would otherwise cost a
		 * wake-up and a GET_READER per CPU for every event or two.
		 */
		now = now_ns();
		if (now - last_round < ROUND_GAP_NS) {
			struct timespec ts = { .tv_nsec = ROUND_GAP_NS - (now - last_round) };

			nanosleep(&ts, NULL);
		}
		n = epoll_wait(ep, evs, 2, flush_timeout(&f));
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && flush_output(&f, 0))
			stop = true;
		if (n < 0) {
			ret = -errno;
			close(ep);
			goto fail;
		}
		for (i = 0; i < n; i++) {
			if (evs[i].data.fd == sfd) {
				stop = true;
				continue;
			}
			last_round = now_ns();
			ret = tracemap_stream_consume(s);
			if (ret == -EPIPE || p->stop || flush_output(&f, ret)) {
				stop = true;
				continue;
			}
			if (ret < 0) {
				close(ep);
				goto fail;
			}
		}
	}
	close(ep);
	return 0;
fail:
	tool_err("reading the ring buffers failed: %s", strerror(-ret));
	return -1;
}

/* Deliver what is still in the buffers after the stop, for a bounded time. */
static void final_drain(struct tracemap_stream *s)
{
	uint64_t end = now_ns() + DRAIN_NS;
	int ret;

	do {
		ret = tracemap_stream_consume(s);
	} while (ret > 0 && now_ns() < end);
	fflush(stdout);
}

/* --------------------------------------------------------------- main */

static void warn_tracing_off(struct tracefs_instance *inst, const char *tfs)
{
	char *on = tracefs_instance_file_read(inst, "tracing_on", NULL);
	char *dir;

	if (on && on[0] == '0') {
		dir = tracefs_instance_get_dir(inst);
		tool_err("warning: tracing is off in %s (tracing_on is 0): no new events will be "
			 "recorded; turn it on with 'echo 1 > %s/tracing_on'",
			 inst ? tracefs_instance_get_name(inst) : "the top-level buffer",
			 dir ? dir : tfs);
		tracefs_put_tracing_file(dir);
	}
	free(on);
}

static int parse_int(const char *opt, const char *arg, int min, int max, int *val)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max) {
		tool_err("%s %s: give a number from %d to %d", opt, arg, min, max);
		return -1;
	}
	*val = (int)v;
	return 0;
}

enum { OPT_TOP = 256, OPT_NONCONSUMING, OPT_UNORDERED, OPT_LATENCY, OPT_WATERMARK, OPT_BUSY,
       OPT_RAW };

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "top", no_argument, NULL, OPT_TOP },
		{ "non-consuming", no_argument, NULL, OPT_NONCONSUMING },
		{ "unordered", no_argument, NULL, OPT_UNORDERED },
		{ "latency-ms", required_argument, NULL, OPT_LATENCY },
		{ "watermark", required_argument, NULL, OPT_WATERMARK },
		{ "busy-poll", no_argument, NULL, OPT_BUSY },
		{ "raw", no_argument, NULL, OPT_RAW },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->latency_ms = 100;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+B:e:M:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'B':
			o->instance = optarg;
			break;
		case 'e':
			o->specs[o->nr_specs++] = optarg;
			break;
		case 'M':
			o->cpumask = optarg;
			break;
		case OPT_TOP:
			o->top = true;
			break;
		case OPT_NONCONSUMING:
			o->follow = true;
			break;
		case OPT_UNORDERED:
			o->unordered = true;
			break;
		case OPT_LATENCY:
			if (parse_int("--latency-ms", optarg, 1, 3600000, &o->latency_ms))
				return -1;
			break;
		case OPT_WATERMARK:
			if (parse_int("--watermark", optarg, 0, 100, &o->watermark))
				return -1;
			break;
		case OPT_BUSY:
			o->busy = true;
			break;
		case OPT_RAW:
			o->raw = true;
			break;
		case 'h':
			tool_usage(stdout);
			exit(0);
		default:
			if (optopt && optopt < 256 && strchr("BeM", optopt))
				tool_err("option -%c needs an argument (tracemap --help)", optopt);
			else if (optopt >= OPT_LATENCY && optopt <= OPT_WATERMARK)
				tool_err("option %s needs an argument (tracemap --help)",
					 argv[optind - 1]);
			else
				tool_err("unknown option '%s' (tracemap --help)", argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		tool_err("unexpected argument '%s' (tracemap --help)", argv[optind]);
		return -1;
	}
	if (o->top && o->instance) {
		tool_err("-B and --top exclude each other: give one buffer to stream");
		return -1;
	}
	return 0;
}

int cmd_stream(int argc, char **argv)
{
	struct tracemap_stream_opts so = { .sz = sizeof(so) };
	struct tracefs_instance *inst = NULL;
	struct ev_item *evs = NULL;
	struct sys_item *sys = NULL;
	struct tracemap_stream *s = NULL;
	struct opts o = { 0 };
	struct printer p;
	int nr_evs = 0, nr_sys = 0, sfd = -1, ret = 1;
	bool private = false, printer_ok = false;
	char pname[64];
	const char *tfs, *iname;
	uint64_t start;
	sigset_t sigs;

	/* held from here on, read through a signalfd: setup and restore are never cut short */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	o.specs = calloc(argc, sizeof(*o.specs));
	if (!o.specs || parse_args(argc, argv, &o))
		goto out;
	tfs = tool_tracefs();
	if (!tfs ||
	    tool_instance_check(o.instance, ", or leave out -B to stream a private instance"))
		goto out;
	if (resolve_events(tfs, &o, &evs, &nr_evs, &sys, &nr_sys))
		goto out;

	/* the buffer: an existing instance, the top level, or our own */
	if (o.instance) {
		inst = tracefs_instance_alloc(tfs, o.instance);
		if (!inst) {
			tool_err("cannot open instance %s: %s", o.instance, strerror(errno));
			goto out;
		}
	}
	if (printer_init(&p, tfs, inst, o.raw))
		goto out;
	printer_ok = true;
	if (!o.instance && !o.top) {
		snprintf(pname, sizeof(pname), "tracemap-%d", (int)getpid());
		inst = tracefs_instance_create(pname);
		if (!inst) {
			tool_err("cannot create instance %s: %s", pname, strerror(errno));
			goto out;
		}
		if (!tracefs_instance_is_new(inst)) {
			tool_err("instance %s already exists: remove it (rmdir %s/instances/%s) "
				 "if no one uses it", pname, tfs, pname);
			tracefs_instance_free(inst);
			inst = NULL;
			goto out;
		}
		private = true;
		/* same clock as a fresh instance has; keep the time column in step */
		if (!o.raw)
			p.tfmt = time_format(inst);
	}
	iname = inst ? tracefs_instance_get_name(inst) : NULL;
	warn_tracing_off(inst, tfs);

	so.mode = o.follow ? TRACEMAP_MODE_FOLLOW : TRACEMAP_MODE_CONSUME;
	so.flags = o.unordered ? TRACEMAP_STREAM_UNORDERED : 0;
	so.cpumask = o.cpumask;
	so.watermark = o.watermark;
	so.latency_ms = o.latency_ms;
	so.on_event = on_event;
	so.on_lost = on_lost;
	so.ctx = &p;
	so.tracefs_dir = tfs;
	s = tracemap_stream_open(iname, &so);
	if (!s) {
		if (errno != ENXIO && errno != EINVAL && errno != ENODEV)
			tool_err("cannot stream %s: %s", iname ? iname : "the top-level buffer",
				 strerror(errno));
		goto out;
	}
	if (enable_events(inst, evs, nr_evs, sys, nr_sys))
		goto out;

	sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0) {
		tool_err("signalfd: %s", strerror(errno));
		goto out;
	}
	if (private)
		fprintf(stderr, "tracemap: streaming the private instance %s (markers: %s/instances/"
			"%s/trace_marker); Ctrl-C stops\n", iname, tfs, iname);
	/* a file or pipe gets large writes; a terminal a line at a time */
	if (!isatty(STDOUT_FILENO))
		setvbuf(stdout, NULL, _IOFBF, STDOUT_BUF);
	start = now_ns();
	p.sfd = sfd;
	ret = stream_loop(s, &p, sfd, o.busy, o.latency_ms) ? 1 : 0;
	p.sfd = -1;

	/* stop: the events first, then what is left in the buffers */
	restore_events(inst, evs, nr_evs, sys, nr_sys);
	final_drain(s);
	print_stats(s, (now_ns() - start) / 1e9);
out:
	restore_events(inst, evs, nr_evs, sys, nr_sys);
	tracemap_stream_close(s);
	if (private && tracefs_instance_destroy(inst))
		tool_err("cannot remove instance %s: %s (remove it with rmdir)",
			 tracefs_instance_get_name(inst), strerror(errno));
	tracefs_instance_free(inst);
	if (printer_ok)
		printer_free(&p);
	free_events(evs, nr_evs, sys, nr_sys);
	free(o.specs);
	if (sfd >= 0)
		close(sfd);
	fflush(stdout);
	return ret;
}
