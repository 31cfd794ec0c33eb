// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Decoding the events of a stream through libtraceevent: the formats and
 * the saved cmdlines, system, name, task and fields by name.
 *
 * Formats are loaded as they are needed, never all of them: loading every
 * format of a distribution kernel at each start costs more than most
 * streams ever decode (bench/README.md). The handle starts with the header
 * page, the ftrace events (markers), the events enabled in the instance and
 * the saved cmdlines; an event of another type loads the formats of what
 * set_event lists then, and failing that the one format whose id it has.
 * kallsyms (the kernel's making of /proc/kallsyms is most of its cost;
 * ksyms.c keeps it in one buffer, so freeing it costs nothing at the stop)
 * is read when the first event that prints a kernel symbol arrives (a
 * marker does), or at open for a stream that decodes every event
 * (TRACEMAP_STREAM_DECODE, tm_decode_preload()); printk_formats with the
 * first trace_printk() event.
 *
 * Names of tasks. trace-cmd report takes saved_cmdlines as of the end of a
 * recording; live, the task usually still runs, so a pid is looked up in
 * /proc the first time it is seen (check_comm(), learn_comm()).
 * saved_cmdlines answers only for a task that is gone, and only for its own
 * pid: the kernel's list keeps the names of dead tasks whose pids were
 * taken again since, so loading it whole named new tasks after them, and
 * a name the events themselves give (the sched plugin's comm fields, seen
 * before the task's own events) could not replace one loaded first. It is
 * read again (rate-limited) when a task that is gone is not in it. A task
 * that execs takes the name of the program, as saved_cmdlines will say at
 * the end: the stream passes every sched_process_exec it delivers through
 * tm_decode_observe().
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event-parse.h>
#include <tracefs.h>

#include "tracemap-local.h"

#define CMDLINE_RELOAD_NS	(100 * 1000000ULL)	/* saved_cmdlines: tasks known gone */
#define CMDLINE_RELOAD_MIN_NS	(1000000ULL)		/* ... a task new and gone */
#define NR_GONE			64
/* PID_MAX_LIMIT of 64-bit kernels: no pid is larger */
#define PID_LIMIT		(4 * 1024 * 1024)
#define NR_TYPES		65536			/* common_type is a u16 */
#define FORMAT_MAX		(256 * 1024)		/* the largest format file read */

/* One line of saved_cmdlines. */
struct saved_comm {
	int pid;
	char comm[16];			/* TASK_COMM_LEN, as the kernel saves it */
};

struct tm_decode {
	struct tep_handle *tep;
	struct tep_event *exec_event;
	struct tep_event *switch_event;	/* sched_switch, with these fields: */
	const struct tep_format_field *next_pid, *next_comm;
	int named[256];			/* pids a sched_switch named, by pid % 256 */
	bool observing;			/* the handle is loaded: tm_decode_observe() has work */
	char *tracefs;
	char *idir;			/* the instance: its set_event */
	char *fmtbuf;			/* FORMAT_MAX bytes for reading a format */
	uint8_t *known;			/* bit per type: looked up, its needs met */
	bool syms;			/* kallsyms loaded */
	struct tm_ksyms *ksyms;		/* ... the handle's function resolver */
	bool printk;			/* printk_formats loaded */
	uint64_t cmdline_reload;
	struct saved_comm *saved;	/* saved_cmdlines as last read, by pid */
	size_t nr_saved;
	int gone[NR_GONE];		/* pids without a /proc entry, most recent */
	uint8_t *checked;		/* checked(): a bit per pid */
	unsigned int next_gone;
	int load_err;			/* loading failed once: do not try again */
};

struct tm_decode *tm_decode_new(const char *tracefs, const char *idir)
{
	struct tm_decode *d = calloc(1, sizeof(*d));

	if (!d || !(d->tracefs = strdup(tracefs)) || !(d->idir = strdup(idir))) {
		if (d)
			free(d->tracefs);
		free(d);
		tm_err(ENOMEM);
		return NULL;
	}
	return d;
}

/* bumped by every change of a tep's task names the library makes */
uint64_t tm_comm_gen;

void tm_comms_changed(void)
{
	__atomic_add_fetch(&tm_comm_gen, 1, __ATOMIC_RELAXED);
}

void tm_decode_free(struct tm_decode *d)
{
	if (!d)
		return;
	tep_free(d->tep);
	tm_ksyms_free(d->ksyms);
	free(d->known);
	free(d->checked);
	free(d->saved);
	free(d->fmtbuf);
	free(d->idir);
	free(d->tracefs);
	free(d);
}

/* One format file, unless the handle has it; false when it cannot be read or parsed. */
static bool load_format(struct tm_decode *d, const char *system, const char *event)
{
	char path[4096];
	int len;

	if (tep_find_event_by_name(d->tep, system, event))
		return true;
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", d->tracefs, system, event);
	len = tm_read_file(path, d->fmtbuf, FORMAT_MAX);
	return len > 0 && tep_parse_event(d->tep, d->fmtbuf, len, system) == TEP_ERRNO__SUCCESS;
}

/* Every event of @system (the ftrace system: it has no enable file and is always on). */
static void load_system(struct tm_decode *d, const char *system)
{
	char **events = tracefs_system_events(d->tracefs, system);
	int i;

	for (i = 0; events && events[i]; i++)
		load_format(d, system, events[i]);
	tracefs_list_free(events);
}

/* The events set_event lists now ("system:event" lines). */
static void load_enabled(struct tm_decode *d)
{
	char path[4096], *line = NULL, *colon;
	size_t cap = 0;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/set_event", d->idir);
	f = fopen(path, "re");
	if (!f)
		return;
	while ((n = getline(&line, &cap, f)) > 0) {
		line[strcspn(line, "\n")] = '\0';
		colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0';
		load_format(d, line, colon + 1);
	}
	free(line);
	fclose(f);
}

/* The format whose id is @type, found by the id files (an event enabled and gone). */
static void load_by_id(struct tm_decode *d, int type)
{
	char **systems = tracefs_event_systems(d->tracefs), **events, path[4096], buf[32];
	bool found = false;
	int s, i;

	for (s = 0; systems && systems[s] && !found; s++) {
		events = tracefs_system_events(d->tracefs, systems[s]);
		for (i = 0; events && events[i] && !found; i++) {
			snprintf(path, sizeof(path), "%s/events/%s/%s/id", d->tracefs, systems[s],
				 events[i]);
			if (tm_read_file(path, buf, sizeof(buf)) > 0 && atoi(buf) == type)
				found = load_format(d, systems[s], events[i]);
		}
		tracefs_list_free(events);
	}
	tracefs_list_free(systems);
}

/* The format prints a kernel address as a symbol (%ps, %pS, %pf, %pF, %pB). */
static bool prints_symbols(const struct tep_event *e)
{
	const char *p = e->print_fmt.format;

	while (p && (p = strstr(p, "%p"))) {
		p += 2;
		if (*p && strchr("sSfFB", *p))
			return true;
	}
	return false;
}

/* kallsyms as the handle's function resolver (ksyms.c): without it symbols print as addresses */
static void load_kallsyms(struct tm_decode *d)
{
	d->syms = true;
	d->ksyms = tm_ksyms_load("/proc/kallsyms");
	if (d->ksyms && tm_ksyms_attach(d->ksyms, d->tep)) {
		tm_ksyms_free(d->ksyms);
		d->ksyms = NULL;
	}
}

static void load_printk(struct tm_decode *d)
{
	char path[4096];
	int len;

	d->printk = true;
	snprintf(path, sizeof(path), "%s/printk_formats", d->tracefs);
	len = tm_read_file(path, d->fmtbuf, FORMAT_MAX);
	if (len > 0)
		tep_parse_printk_formats(d->tep, d->fmtbuf);
}

/*
 * Make @type known to the handle, with what printing it needs. Once per
 * type; an unknown type is looked for once.
 */
static void ensure(struct tm_decode *d, int type)
{
	struct tep_event *e;

	if (type < 0 || type >= NR_TYPES || (d->known[type / 8] & (1 << (type % 8))))
		return;
	d->known[type / 8] |= 1 << (type % 8);
	e = tep_find_event(d->tep, type);
	if (!e) {
		load_enabled(d);
		e = tep_find_event(d->tep, type);
	}
	if (!e) {
		load_by_id(d, type);
		e = tep_find_event(d->tep, type);
	}
	if (!e)
		return;
	if (!d->syms && prints_symbols(e))
		load_kallsyms(d);
	if (!d->printk && !strcmp(e->system, "ftrace") &&
	    (!strcmp(e->name, "bprint") || !strcmp(e->name, "bputs")))
		load_printk(d);
	if (!d->exec_event && !strcmp(e->system, "sched") && !strcmp(e->name, "sched_process_exec"))
		d->exec_event = e;
	if (!d->switch_event && !strcmp(e->system, "sched") && !strcmp(e->name, "sched_switch")) {
		d->next_pid = tep_find_field(e, "next_pid");
		d->next_comm = tep_find_field(e, "next_comm");
		/* a char array in place, as sched_switch has it: not a __string */
		if (d->next_pid && d->next_pid->size == 4 && d->next_comm &&
		    (d->next_comm->flags & TEP_FIELD_IS_STRING) &&
		    !(d->next_comm->flags & TEP_FIELD_IS_DYNAMIC) && d->next_comm->size > 0)
			d->switch_event = e;
	}
}

static int load_err(struct tm_decode *d, int err)
{
	d->load_err = err ? err : ENOENT;
	tm_log(TRACEMAP_LOG_ERROR, "cannot load the event formats from %s/events: %s",
	       d->tracefs, strerror(d->load_err));
	tep_free(d->tep);
	d->tep = NULL;
	return tm_err(d->load_err);
}

static int saved_cmp(const void *a, const void *b)
{
	const struct saved_comm *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/*
 * saved_cmdlines ("pid comm" lines) into d->saved, sorted by pid; the last
 * table stays when the file cannot be read.
 */
static void load_saved(struct tm_decode *d)
{
	struct saved_comm *t;
	char path[4096], *buf, *p, *end, *nl;
	size_t len, n = 0, cap = 0;
	long pid;

	snprintf(path, sizeof(path), "%s/saved_cmdlines", d->tracefs);
	buf = tm_read_whole(path, &len);
	if (!buf)
		return;
	for (p = buf; *p; p++)
		cap += *p == '\n';
	t = malloc((cap + 1) * sizeof(*t));
	if (!t) {
		free(buf);
		return;
	}
	for (p = buf; *p && n <= cap; p = nl ? nl + 1 : p + strlen(p)) {
		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		pid = strtol(p, &end, 10);
		if (end == p || *end != ' ' || pid <= 0 || pid >= PID_LIMIT)
			continue;
		t[n].pid = (int)pid;
		snprintf(t[n].comm, sizeof(t[n].comm), "%s", end + 1);
		n++;
	}
	free(buf);
	qsort(t, n, sizeof(*t), saved_cmp);
	free(d->saved);
	d->saved = t;
	d->nr_saved = n;
}

/* What saved_cmdlines said of @pid when last read, or NULL. */
static const char *saved_name(const struct tm_decode *d, int pid)
{
	struct saved_comm key = { .pid = pid };
	const struct saved_comm *e;

	if (!d->nr_saved)
		return NULL;
	e = bsearch(&key, d->saved, d->nr_saved, sizeof(key), saved_cmp);
	return e ? e->comm : NULL;
}

struct tep_handle *tm_decode_tep(struct tm_decode *d)
{
	char path[4096];
	int len;

	if (d->tep)
		return d->tep;
	if (d->load_err) {
		tm_err(d->load_err);
		return NULL;
	}
	d->tep = tep_alloc();
	d->fmtbuf = d->fmtbuf ? d->fmtbuf : malloc(FORMAT_MAX);
	d->known = d->known ? d->known : calloc(NR_TYPES / 8, 1);
	if (!d->tep || !d->fmtbuf || !d->known) {
		load_err(d, ENOMEM);
		return NULL;
	}
	/* the records are this machine's: its byte order and long */
	tep_set_file_bigendian(d->tep, tep_is_bigendian() ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(d->tep, tep_is_bigendian() ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(d->tep, sizeof(long));
	tep_set_page_size(d->tep, getpagesize());
	snprintf(path, sizeof(path), "%s/events/header_page", d->tracefs);
	len = tm_read_file(path, d->fmtbuf, FORMAT_MAX);
	if (len <= 0) {
		load_err(d, -len);
		return NULL;
	}
	tep_parse_header_page(d->tep, d->fmtbuf, len, sizeof(long));
	load_system(d, "ftrace");
	load_enabled(d);
	load_saved(d);
	/* a new handle: names a formatter kept are not its names */
	tm_comms_changed();
	/* from now on every event passes tm_decode_observe(): its format, an exec */
	d->observing = true;
	return d->tep;
}

struct tep_handle *tm_decode_preload(struct tm_decode *d)
{
	if (!tm_decode_tep(d))
		return NULL;
	/* markers print their caller as a symbol: not late on the first one */
	if (!d->syms)
		load_kallsyms(d);
	return d->tep;
}

void tm_decode_enabled(struct tm_decode *d)
{
	if (d && d->tep)
		load_enabled(d);
}

/* The event and its record for libtraceevent; NULL + errno when its format is unknown. */
static struct tep_event *find(struct tm_decode *d, const struct tracemap_event *ev,
			      struct tep_record *rec)
{
	struct tep_event *e;

	if (!ev || !ev->data) {
		tm_err(EINVAL);
		return NULL;
	}
	if (!tm_decode_tep(d))
		return NULL;
	tracemap_event_to_record(ev, rec);
	if (ev->size >= 2)
		ensure(d, tep_data_type(d->tep, rec));
	e = tep_find_event_by_record(d->tep, rec);
	if (!e)
		tm_err(ENOENT);
	return e;
}

static struct tep_format_field *find_field(struct tm_decode *d, const struct tracemap_event *ev,
					   const char *name, struct tep_record *rec)
{
	struct tep_format_field *f;
	struct tep_event *e;

	if (!name) {
		tm_err(EINVAL);
		return NULL;
	}
	e = find(d, ev, rec);
	if (!e)
		return NULL;
	f = tep_find_any_field(e, name);
	if (!f)
		tm_err(ENOENT);
	return f;
}

/* Whether @pid is a workqueue worker (PF_WQ_WORKER in field 9 of /proc/@pid/stat). */
static bool wq_worker(int pid)
{
	char path[64], buf[512], *p;
	unsigned int flags = 0;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the name in parentheses may hold anything: count from the last ')' */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %u", &flags) != 1)
		return false;
	return flags & 0x20;	/* PF_WQ_WORKER, include/linux/sched.h */
}

/*
 * /proc/@pid/comm into @comm (64 bytes) as the kernel's comm that
 * saved_cmdlines and sched_switch give trace-cmd report, without its
 * newline; 0 when the task is gone. /proc says more: a workqueue worker's
 * last or current work after '-' or '+' ("kworker/u8:0-writeback",
 * "kworker/1:1+events"), and a kernel thread's full name past the kernel's
 * 15 characters (TASK_COMM_LEN - 1), which both the kernel's comm lacks.
 */
static size_t read_proc_comm(int pid, char *comm)
{
	char path[64], *cut;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(comm, 1, 63, f);
	fclose(f);
	while (n && comm[n - 1] == '\n')
		n--;
	comm[n] = '\0';
	/* a rescuer, "kworker/R-<workqueue>", has a '-' of its own: its 15 characters stay */
	if (!strncmp(comm, "kworker/", 8) && strncmp(comm + 8, "R-", 2) && wq_worker(pid)) {
		cut = strpbrk(comm + 8, "-+");
		if (cut) {
			*cut = '\0';
			n = cut - comm;
		}
	}
	if (n > 15) {
		n = 15;
		comm[n] = '\0';
	}
	return n;
}

/* A comm from /proc for a pid the library did not name yet; false when the task is gone. */
static bool proc_comm(struct tm_decode *d, int pid)
{
	char comm[64];

	if (!read_proc_comm(pid, comm) || tep_register_comm(d->tep, comm, pid))
		return false;
	tm_comms_changed();
	return true;
}

/*
 * Whether the name of @pid was checked against /proc in this stream; marks
 * it checked. A bit per pid up to the kernel's limit, allocated (and its
 * pages touched) as pids come.
 */
static bool checked(struct tm_decode *d, int pid)
{
	unsigned int bit = 1u << (pid % 8);
	bool was;

	if (pid >= PID_LIMIT)
		return true;
	if (!d->checked) {
		d->checked = calloc(PID_LIMIT / 8, 1);
		if (!d->checked)
			return true;	/* no memory: saved_cmdlines as it is */
	}
	was = d->checked[pid / 8] & bit;
	d->checked[pid / 8] |= bit;
	return was;
}

/*
 * saved_cmdlines names the last task that had a pid when the kernel saved
 * it: after the pids wrapped, a task started since then is shown with the
 * name of a dead one. The first time a stream sees a pid, a live task's
 * name in /proc wins (a dead task keeps the saved name).
 */
static void check_comm(struct tm_decode *d, int pid)
{
	const char *saved;
	char comm[64];

	if (!read_proc_comm(pid, comm))
		return;
	saved = tep_data_comm_from_pid(d->tep, pid);
	if (saved && !strcmp(saved, comm))
		return;
	if (!tep_override_comm(d->tep, comm, pid))
		tm_comms_changed();
}

static void learn_comm(struct tm_decode *d, int pid)
{
	const char *name;
	bool seen = false;
	uint64_t now, wait;
	int i;

	for (i = 0; i < NR_GONE; i++)
		if (d->gone[i] == pid)
			seen = true;
	if (!seen) {
		if (proc_comm(d, pid)) {
			checked(d, pid);
			return;
		}
		d->gone[d->next_gone++ % NR_GONE] = pid;
	}
	/*
	 * Gone already: the kernel saved its comm when it last left the CPU.
	 * Not in the list as last read: read it again once for each new task
	 * (at most every millisecond), then only now and then.
	 */
	name = saved_name(d, pid);
	if (!name) {
		now = tm_now_ns();
		wait = seen ? CMDLINE_RELOAD_NS : CMDLINE_RELOAD_MIN_NS;
		if (now - d->cmdline_reload < wait)
			return;
		d->cmdline_reload = now;
		load_saved(d);
		name = saved_name(d, pid);
	}
	if (name && !tep_register_comm(d->tep, name, pid))
		tm_comms_changed();
}

/* An exec: the task takes the name of the program (out of line: rare). */
static __attribute__((noinline)) void observe_exec(struct tm_decode *d,
						   const struct tracemap_event *ev)
{
	struct tep_event *e = d->exec_event;
	struct tep_record rec;
	const char *file, *base;
	char comm[16];
	int pid, len = 0;

	tracemap_event_to_record(ev, &rec);
	pid = tep_data_pid(d->tep, &rec);
	file = tep_get_field_raw(NULL, e, "filename", &rec, &len, 0);
	if (!file || len <= 0 || pid <= 0)
		return;
	len = strnlen(file, len);
	base = memrchr(file, '/', len);
	base = base ? base + 1 : file;
	len -= base - file;
	/* the kernel keeps TASK_COMM_LEN - 1 = 15 characters */
	snprintf(comm, sizeof(comm), "%.*s", len, base);
	tep_override_comm(d->tep, comm, pid);
	tm_comms_changed();
}

/*
 * A sched_switch names the task it switches to before that task writes
 * anything: a pid no name was given yet gets this one, as the sched
 * plugin does when it prints the event (out of line: once per task).
 * The stream passes its own events here too: the switch from tracemap to
 * a new task is left out of the output, not the name it gives.
 */
static __attribute__((noinline)) void observe_switch(struct tm_decode *d,
						     const struct tracemap_event *ev)
{
	const unsigned char *p = ev->data;
	char comm[64];
	int32_t pid;
	size_t n;

	if ((unsigned int)d->next_pid->offset + 4 > ev->size ||
	    (unsigned int)(d->next_comm->offset + d->next_comm->size) > ev->size)
		return;
	memcpy(&pid, p + d->next_pid->offset, sizeof(pid));
	if (pid <= 0 || d->named[pid % 256] == pid)
		return;
	d->named[pid % 256] = pid;
	if (tep_is_pid_registered(d->tep, pid))
		return;
	n = strnlen((const char *)p + d->next_comm->offset, d->next_comm->size);
	if (n >= sizeof(comm))
		n = sizeof(comm) - 1;
	memcpy(comm, p + d->next_comm->offset, n);
	comm[n] = '\0';
	if (!tep_register_comm(d->tep, comm, pid))
		tm_comms_changed();
}

void tm_decode_observe(struct tm_decode *d, const struct tracemap_event *ev)
{
	uint16_t type;

	/* every event passes here: its type is read in place, not looked up */
	if (!d || !d->tep || ev->size < 2)
		return;
	/* common_type, first in every record of the local formats: host byte order */
	memcpy(&type, ev->data, sizeof(type));
	ensure(d, type);
	if (d->exec_event && type == (unsigned int)d->exec_event->id)
		observe_exec(d, ev);
	else if (d->switch_event && type == (unsigned int)d->switch_event->id)
		observe_switch(d, ev);
}

const bool *tm_decode_observing(const struct tm_decode *d)
{
	static const bool never;

	return d ? &d->observing : &never;
}

/* ------------------------------------------------------------ accessors */

/* The format of @ev in the stream's formats; NULL + errno */
static struct tep_event *event_of(struct tracemap_stream *s, const struct tracemap_event *ev)
{
	struct tm_decode *d = tm_stream_decode(s);
	struct tep_record rec;

	return d ? find(d, ev, &rec) : NULL;
}

/**
 * tracemap_stream_tep - the event formats of a stream, for libtraceevent
 * @s: the stream
 *
 * Loads the header page, the formats of the ftrace events and of the events
 * enabled in the instance, and the saved cmdlines on the first call (a few
 * milliseconds); the format of any other event, kallsyms and printk_formats
 * as events that need them are delivered. For the tracemap_event_*()
 * accessors and the caller's own libtraceevent calls (tep_print_event(),
 * plugins: a handler registered before its event's format loaded applies
 * when it does). The handle belongs to the stream: do not
 * free it; it goes with tracemap_stream_close().
 *
 * Returns the handle, or NULL with errno set after a message (the formats
 * cannot be read; later calls fail the same way at once).
 */
struct tep_handle *tracemap_stream_tep(struct tracemap_stream *s)
{
	struct tm_decode *d = tm_stream_decode(s);

	return d ? tm_decode_tep(d) : NULL;
}

/**
 * tracemap_event_system - the system of an event ("sched")
 * @s: the stream that delivered @ev
 * @ev: the event
 *
 * Returns the name, owned by the stream's formats, or NULL with errno set:
 * EINVAL for a NULL argument, ENOENT when no format has the event's id.
 */
const char *tracemap_event_system(struct tracemap_stream *s, const struct tracemap_event *ev)
{
	struct tep_event *e = event_of(s, ev);

	return e ? e->system : NULL;
}

/**
 * tracemap_event_name - the name of an event ("sched_switch")
 * @s: the stream that delivered @ev
 * @ev: the event
 *
 * Returns the name, owned by the stream's formats, or NULL with errno set
 * as for tracemap_event_system().
 */
const char *tracemap_event_name(struct tracemap_stream *s, const struct tracemap_event *ev)
{
	struct tep_event *e = event_of(s, ev);

	return e ? e->name : NULL;
}

/**
 * tracemap_event_pid - the task that wrote an event (common_pid)
 * @s: the stream that delivered @ev
 * @ev: the event
 *
 * Needs no formats: common_pid is part of every event's header.
 *
 * Returns the pid (0: the idle task or an interrupt on an idle CPU), or
 * -EINVAL.
 */
int tracemap_event_pid(struct tracemap_stream *s, const struct tracemap_event *ev)
{
	int32_t pid;

	/* struct trace_entry: u16 type, u8 flags, u8 preempt_count, s32 pid */
	if (!s || !ev || !ev->data || ev->size < 8)
		return tm_err(EINVAL);
	memcpy(&pid, (const unsigned char *)ev->data + 4, sizeof(pid));
	return pid;
}

/**
 * tracemap_event_comm - the name of the task that wrote an event
 * @s: the stream that delivered @ev
 * @ev: the event
 *
 * From saved_cmdlines as loaded with the formats, checked once per pid
 * against /proc (after the pids wrapped, saved_cmdlines may still name a
 * dead task that had the pid); a task started later is looked up in /proc,
 * and saved_cmdlines is read again (at most every millisecond for a new
 * pid, every 100 ms after that) for tasks that are gone. A task that execs takes its program's name from the
 * sched_process_exec events the stream delivers. The string belongs to the
 * stream's formats.
 *
 * Returns the name ("<idle>" for pid 0, "<...>" when unknown), or NULL
 * with errno set.
 */
const char *tracemap_event_comm(struct tracemap_stream *s, const struct tracemap_event *ev)
{
	struct tm_decode *d = tm_stream_decode(s);
	int pid = tracemap_event_pid(s, ev);

	if (!d || pid < 0 || !tm_decode_tep(d))
		return NULL;
	if (pid > 0 && !tep_is_pid_registered(d->tep, pid))
		learn_comm(d, pid);
	else if (pid > 0 && !checked(d, pid))
		check_comm(d, pid);
	return tep_data_comm_from_pid(d->tep, pid);
}

/**
 * tracemap_event_field_num - a number field of an event, by name
 * @s: the stream that delivered @ev
 * @ev: the event
 * @field: the field name, as in the event's format file (common_* too)
 * @val: where the value goes; signed fields are sign-extended
 *
 * Returns 0, or -errno: -ENOENT no such field (or unknown event),
 * -EMEDIUMTYPE the field is a string or an array, -EBADMSG the record is
 * shorter than the format says, -EINVAL a NULL argument.
 */
int tracemap_event_field_num(struct tracemap_stream *s, const struct tracemap_event *ev,
			     const char *field, long long *val)
{
	struct tm_decode *d = tm_stream_decode(s);
	struct tep_format_field *f;
	struct tep_record rec;
	unsigned long long v;

	if (!d || !val)
		return tm_err(EINVAL);
	f = find_field(d, ev, field, &rec);
	if (!f)
		return -errno;
	if ((f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_STRING | TEP_FIELD_IS_DYNAMIC)) ||
	    f->size < 1 || f->size > 8) {
		tm_log(TRACEMAP_LOG_DEBUG, "field %s of %s is not a number: read it with "
		       "tracemap_event_field_str() or _array()", field, f->event->name);
		return tm_err(EMEDIUMTYPE);
	}
	if ((unsigned int)(f->offset + f->size) > ev->size)
		return tm_err(EBADMSG);
	if (tep_read_number_field(f, ev->data, &v))
		return tm_err(EBADMSG);
	if ((f->flags & TEP_FIELD_IS_SIGNED) && f->size < 8 && (v >> (f->size * 8 - 1)) & 1)
		v |= ~0ULL << (f->size * 8);
	*val = (long long)v;
	return 0;
}

/**
 * tracemap_event_field_array - the bytes of an array or string field
 * @s: the stream that delivered @ev
 * @ev: the event
 * @field: the field name
 * @size: the number of bytes (may be NULL)
 *
 * Fixed arrays ("unsigned long args[6]") and dynamic ones (__data_loc,
 * __rel_loc) alike. The bytes are borrowed from the event and only 4-byte
 * aligned: copy them to read wider elements.
 *
 * Returns a pointer into the event, or NULL with errno set (ENOENT,
 * EBADMSG when the location points outside the record, EINVAL).
 */
const void *tracemap_event_field_array(struct tracemap_stream *s, const struct tracemap_event *ev,
				       const char *field, unsigned int *size)
{
	struct tm_decode *d = tm_stream_decode(s);
	struct tep_format_field *f;
	struct tep_record rec;
	const void *p;
	int len = 0;

	if (!d) {
		tm_err(EINVAL);
		return NULL;
	}
	f = find_field(d, ev, field, &rec);
	if (!f)
		return NULL;
	/* resolves __data_loc/__rel_loc of dynamic arrays and strings */
	p = tep_get_field_raw(NULL, f->event, field, &rec, &len, 0);
	/* a flexible array ("char buf[]" of ftrace:print, size 0) runs to the end of the record */
	if (p && !len && (f->flags & TEP_FIELD_IS_ARRAY) && !(f->flags & TEP_FIELD_IS_DYNAMIC) &&
	    (unsigned int)f->offset <= ev->size)
		len = ev->size - f->offset;
	if (!p || len < 0 || (const unsigned char *)p < (const unsigned char *)ev->data ||
	    (const unsigned char *)p + len > (const unsigned char *)ev->data + ev->size) {
		tm_err(EBADMSG);
		return NULL;
	}
	if (size)
		*size = (unsigned int)len;
	return p;
}

/**
 * tracemap_event_field_str - a string field of an event
 * @s: the stream that delivered @ev
 * @ev: the event
 * @field: the field name: a char array ("prev_comm") or a __string ("filename")
 *
 * Returns the string, borrowed from the event, or NULL with errno set as
 * for tracemap_event_field_array(), or EILSEQ when the field holds no
 * terminating NUL (read it with tracemap_event_field_array()).
 */
const char *tracemap_event_field_str(struct tracemap_stream *s, const struct tracemap_event *ev,
				     const char *field)
{
	unsigned int len = 0;
	const char *p;

	p = tracemap_event_field_array(s, ev, field, &len);
	if (!p)
		return NULL;
	/* char arrays and __string fields carry their NUL; one filled to the end does not */
	if (!memchr(p, '\0', len)) {
		tm_log(TRACEMAP_LOG_DEBUG, "field %s has no terminating NUL in its %u bytes: "
		       "read it with tracemap_event_field_array()", field, len);
		tm_err(EILSEQ);
		return NULL;
	}
	return p;
}
