// SPDX-License-Identifier: LGPL-2.1
/*
 * Decoding the events of a stream through libtraceevent: the formats of
 * every event and the saved cmdlines, loaded from tracefs once, when a
 * caller first asks (loading all formats takes a few hundred milliseconds);
 * system, name, task and fields by name.
 *
 * Names of tasks. trace-cmd report takes saved_cmdlines as of the end of a
 * recording; live, the task usually still runs, so a pid saved_cmdlines does
 * not know is looked up in /proc, and saved_cmdlines is read again
 * (rate-limited) for tasks that are gone. A task that execs takes the name
 * of the program, as saved_cmdlines will say at the end: the stream passes
 * every sched_process_exec it delivers through tm_decode_observe().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <tracefs.h>

#include "tracemap-local.h"

#define CMDLINE_RELOAD_NS	(100 * 1000000ULL)	/* saved_cmdlines: tasks known gone */
#define CMDLINE_RELOAD_MIN_NS	(1000000ULL)		/* ... a task new and gone */
#define NR_GONE			64

struct tm_decode {
	struct tep_handle *tep;
	struct tep_event *exec_event;
	struct tep_format_field *type_field;	/* common_type, to spot exec_event */
	bool observing;				/* exec_event and type_field are set */
	char *tracefs;
	uint64_t cmdline_reload;
	int gone[NR_GONE];		/* pids without a /proc entry, most recent */
	unsigned int next_gone;
	int load_err;			/* loading failed once: do not try again */
};

struct tm_decode *tm_decode_new(const char *tracefs)
{
	struct tm_decode *d = calloc(1, sizeof(*d));

	if (!d || !(d->tracefs = strdup(tracefs))) {
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
	free(d->tracefs);
	free(d);
}

struct tep_handle *tm_decode_tep(struct tm_decode *d)
{
	if (d->tep)
		return d->tep;
	if (d->load_err) {
		tm_err(d->load_err);
		return NULL;
	}
	d->tep = tracefs_local_events(d->tracefs);
	if (!d->tep) {
		d->load_err = errno ? errno : ENOENT;
		tm_log(TRACEMAP_LOG_ERROR, "cannot load the event formats from %s/events: %s",
		       d->tracefs, strerror(d->load_err));
		tm_err(d->load_err);
		return NULL;
	}
	tracefs_load_cmdlines(d->tracefs, d->tep);
	tm_comms_changed();
	d->exec_event = tep_find_event_by_name(d->tep, "sched", "sched_process_exec");
	if (d->exec_event)
		d->type_field = tep_find_common_field(d->exec_event, "common_type");
	d->observing = d->exec_event && d->type_field;
	return d->tep;
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

/* A comm from /proc for a pid saved_cmdlines did not know; false when the task is gone. */
static bool proc_comm(struct tm_decode *d, int pid)
{
	char path[64], comm[64];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(comm, 1, sizeof(comm) - 1, f);
	fclose(f);
	while (n && comm[n - 1] == '\n')
		n--;
	comm[n] = '\0';
	if (!n || tep_register_comm(d->tep, comm, pid))
		return false;
	tm_comms_changed();
	return true;
}

static void learn_comm(struct tm_decode *d, int pid)
{
	bool seen = false;
	uint64_t now, wait;
	int i;

	for (i = 0; i < NR_GONE; i++)
		if (d->gone[i] == pid)
			seen = true;
	if (!seen) {
		if (proc_comm(d, pid))
			return;
		d->gone[d->next_gone++ % NR_GONE] = pid;
	}
	/*
	 * Gone already: the kernel saved its comm when it last left the CPU.
	 * Look once for each new task (at most every millisecond), then only
	 * now and then.
	 */
	now = tm_now_ns();
	wait = seen ? CMDLINE_RELOAD_NS : CMDLINE_RELOAD_MIN_NS;
	if (now - d->cmdline_reload >= wait) {
		d->cmdline_reload = now;
		tracefs_load_cmdlines(d->tracefs, d->tep);
		tm_comms_changed();
	}
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

void tm_decode_observe(struct tm_decode *d, const struct tracemap_event *ev)
{
	struct tep_format_field *tf;
	unsigned long long type;
	uint16_t type16;

	/* every event passes here: its type is read, not looked up */
	if (!d || !d->exec_event)
		return;
	tf = d->type_field;
	if (!tf || (unsigned int)(tf->offset + tf->size) > ev->size)
		return;
	if (tf->size == 2) {
		/* the local formats: host byte order */
		memcpy(&type16, (const unsigned char *)ev->data + tf->offset, sizeof(type16));
		type = type16;
	} else if (tep_read_number_field(tf, ev->data, &type)) {
		return;
	}
	if (type == (unsigned int)d->exec_event->id)
		observe_exec(d, ev);
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
 * Loads the formats of every event and the saved cmdlines from the stream's
 * tracefs on the first call (a few hundred milliseconds), for the
 * tracemap_event_*() accessors and the caller's own libtraceevent calls
 * (tep_print_event(), plugins). The handle belongs to the stream: do not
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
 * From saved_cmdlines as loaded with the formats; a task started later is
 * looked up in /proc, and saved_cmdlines is read again (at most every
 * millisecond for a new pid, every 100 ms after that) for tasks that are
 * gone. A task that execs takes its program's name from the
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
