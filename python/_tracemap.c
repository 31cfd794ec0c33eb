// SPDX-License-Identifier: GPL-2.0-only
/*
 * tracemap._tracemap, the C core of the tracemap Python package: Stream,
 * Event and LostEvents over libtracemap's stream, delivered bcc-style to a
 * callback (poll/consume) or pulled by iteration, with fields decoded by
 * name through libtraceevent. Policy is the package's: the checks and
 * defaults of Stream's arguments (python/tracemap/_stream.py, which hands
 * this core plain values), closing streams at exit and exit on SIGTERM/SIGHUP
 * (python/tracemap/__init__.py).
 *
 * The GIL. poll() and a blocking read()/iteration release it while the
 * library waits; the event callback takes it back at its first event and
 * keeps it until the library call returns, so a round of many events costs
 * one hand-over, not one per event.
 *
 * Event objects own a copy of their payload: the library's payload is
 * borrowed only until its next call, and an object a callback keeps must
 * stay valid. The copy is part of the one allocation of the object, and
 * costs less than the noise of a delivery (bench/README.md), so it is
 * always taken.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>

#include "tracemap.h"

#define SIGNAL_CHECK_EVERY	1024	/* events per look for Ctrl-C inside a round */
#define WAIT_SLICE_MS		50	/* longest wait without a look for signals */
#define TM_ECANCELED_PY		(-ECANCELED)	/* the Python callback raised */

/* ------------------------------------------------------------ messages */

/* Errors become exceptions (raise_errno()); warnings go to stderr. */
static void print_hook(void *ctx, enum tracemap_log_level level, const char *msg)
{
	if (level == TRACEMAP_LOG_WARN)
		fprintf(stderr, "tracemap: warning: %s\n", msg);
}

/*
 * Raise the OSError subclass for @err (FileNotFoundError, PermissionError,
 * ...) with @msg. An unknown instance (ENODEV) is a FileNotFoundError.
 */
static PyObject *raise_oserror(int err, const char *msg)
{
	PyObject *type = err == ENODEV ? PyExc_FileNotFoundError : PyExc_OSError;
	PyObject *args;

	tracemap_clear_error();
	args = Py_BuildValue("(is)", err, msg);
	if (args) {
		/* PyErr_SetObject() takes its own reference */
		PyErr_SetObject(type, args);
		Py_DECREF(args);
	}
	return NULL;
}

/* raise_oserror() with the library's message when it gave one, else @what and strerror */
static PyObject *raise_errno(int err, const char *what)
{
	char msg[1024];

	if (*tracemap_last_error())
		snprintf(msg, sizeof(msg), "%s", tracemap_last_error());
	else
		snprintf(msg, sizeof(msg), "%s: %s", what, strerror(err));
	return raise_oserror(err, msg);
}

/* ------------------------------------------------------------- objects */

typedef struct StreamObject StreamObject;

/*
 * What events need of their stream to decode themselves. Events hold this,
 * not the Stream: a Stream refers to its callbacks, a callback often to the
 * events it keeps, and events (not tracked by the cycle collector, which
 * would cost every event) must not close that cycle.
 */
typedef struct {
	PyObject_HEAD
	struct tracemap_stream *s;	/* the Stream's while it is open, else NULL */
	struct tracemap_format *fmt;	/* str(ev): the library's formatter, on the stream's formats */
} DecoderObject;

typedef struct {
	PyObject_VAR_HEAD		/* ob_size: payload bytes */
	DecoderObject *dec;		/* strong */
	unsigned long long ts;
	int cpu;
	unsigned char data[];		/* the payload, struct trace_entry first */
} EventObject;

typedef struct {
	PyObject_HEAD
	PyObject *count;		/* int, or None: lost, count unknown */
	int cpu;
} LostObject;

struct StreamObject {
	PyObject_HEAD
	struct tracemap_stream *s;
	struct tep_plugin_list *plugins;	/* loaded into the stream's formats for str(ev) */
	PyObject *callback;
	PyObject *lost_cb;
	PyObject *pending;		/* pull: the event that follows a LostEvents */
	PyThreadState *tstate;		/* saved while the library runs without the GIL */
	StreamObject *next_open;	/* the list of open streams, closed at exit */
	PyInterpreterState *interp;	/* the interpreter whose exit closes it */
	char *instance;			/* NULL: the top-level buffer */
	char tfs[PATH_MAX];
	char idir[PATH_MAX];
	DecoderObject *dec;		/* shared with the events */
	pid_t owner;			/* the process that opened it (not a fork child) */
	int timeout_ms;			/* iteration */
	long delivered;			/* events given to Python in this call */
	unsigned int since_check;
	unsigned long busy_thread;	/* PyThread_get_thread_ident() of the delivering thread */
	enum tracemap_mode mode;
	bool busy;
};

static PyTypeObject EventType, LostType, StreamType, DecoderType;

/* set in a child of fork(): a Stream of the parent must not be used there */
static volatile sig_atomic_t forked;
static StreamObject *open_streams;

/* ---------------------------------------------------------- LostEvents */

static PyObject *lost_new(int cpu, long long lost)
{
	LostObject *l = PyObject_New(LostObject, &LostType);

	if (!l)
		return NULL;
	l->cpu = cpu;
	l->count = lost == TRACEMAP_LOST_UNKNOWN ? Py_NewRef(Py_None) : PyLong_FromLongLong(lost);
	if (!l->count) {
		Py_DECREF(l);
		return NULL;
	}
	return (PyObject *)l;
}

static void lost_dealloc(LostObject *l)
{
	Py_XDECREF(l->count);
	PyObject_Free(l);
}

static PyObject *lost_repr(LostObject *l)
{
	return PyUnicode_FromFormat("LostEvents(cpu=%d, count=%R)", l->cpu, l->count);
}

static PyObject *lost_get_cpu(LostObject *l, void *closure)
{
	return PyLong_FromLong(l->cpu);
}

static PyObject *lost_get_count(LostObject *l, void *closure)
{
	return Py_NewRef(l->count);
}

static PyGetSetDef lost_getset[] = {
	{ "cpu", (getter)lost_get_cpu, NULL, "CPU whose buffer lost the events.", NULL },
	{ "count", (getter)lost_get_count, NULL,
	  "Number of events lost, or None when the kernel only said that some were.", NULL },
	{ NULL },
};

static PyTypeObject LostType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "tracemap.LostEvents",
	.tp_doc = "Events lost on one CPU before the next event of that CPU.\n\n"
		  "Iteration and read() yield one where the kernel dropped events\n"
		  "(the buffer was full); the stream's lost= callback gets the same\n"
		  "information as (cpu, count).",
	.tp_basicsize = sizeof(LostObject),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_dealloc = (destructor)lost_dealloc,
	.tp_repr = (reprfunc)lost_repr,
	.tp_getset = lost_getset,
};

/* ------------------------------------------------------------- Decoder */

static PyTypeObject DecoderType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "tracemap._Decoder",
	.tp_doc = "The part of a Stream its events decode themselves with (internal).",
	.tp_basicsize = sizeof(DecoderObject),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_dealloc = (destructor)PyObject_Free,
};

/* --------------------------------------------------------------- Event */

static PyObject *event_new(StreamObject *st, const struct tracemap_event *ev)
{
	EventObject *e = PyObject_NewVar(EventObject, &EventType, ev->size);

	if (!e)
		return NULL;
	e->dec = (DecoderObject *)Py_NewRef(st->dec);
	e->ts = ev->ts;
	e->cpu = ev->cpu;
	memcpy(e->data, ev->data, ev->size);
	return (PyObject *)e;
}

static void event_dealloc(EventObject *e)
{
	Py_XDECREF(e->dec);
	PyObject_Free(e);
}

static unsigned int ev_size(const EventObject *e)
{
	return (unsigned int)Py_SIZE(e);
}

/* struct trace_entry: u16 type, u8 flags, u8 preempt_count, s32 pid */
static int ev_type(const EventObject *e)
{
	unsigned short t = 0;

	if (ev_size(e) >= 2)
		memcpy(&t, e->data, 2);
	return t;
}

static int ev_pid(const EventObject *e)
{
	int pid = 0;

	if (ev_size(e) >= 8)
		memcpy(&pid, e->data + 4, 4);
	return pid;
}

/* The copy as the library's event, for its accessors */
static void ev_view(const EventObject *e, struct tracemap_event *ev)
{
	*ev = (struct tracemap_event){
		.ts = e->ts, .data = e->data, .size = ev_size(e), .cpu = e->cpu,
	};
}

/*
 * The library stream that decodes @e: it owns the formats. NULL with
 * ValueError once the stream is closed.
 */
static struct tracemap_stream *ev_decoder(const EventObject *e)
{
	if (!e->dec->s)
		PyErr_SetString(PyExc_ValueError, "the event's stream is closed: read names and "
				"fields before close() (ts, cpu, pid and raw stay readable)");
	return e->dec->s;
}

/* The event's format, for the kind of each field; NULL without an exception when unknown */
static struct tep_event *ev_format(const EventObject *e, struct tracemap_stream *s)
{
	struct tep_handle *tep = tracemap_stream_tep(s);

	return tep ? tep_find_event(tep, ev_type(e)) : NULL;
}

/* An unsigned or sign-extended number of @size bytes at @p */
static PyObject *int_at(const unsigned char *p, int size, bool is_signed)
{
	unsigned long long v = 0;

	/* little- or big-endian as the kernel that wrote it: this machine's */
	switch (size) {
	case 1: { uint8_t x; memcpy(&x, p, 1); v = x; break; }
	case 2: { uint16_t x; memcpy(&x, p, 2); v = x; break; }
	case 4: { uint32_t x; memcpy(&x, p, 4); v = x; break; }
	default: memcpy(&v, p, 8); break;
	}
	if (is_signed && size < 8 && (v >> (size * 8 - 1)) & 1)
		v |= ~0ULL << (size * 8);
	return is_signed ? PyLong_FromLongLong((long long)v) : PyLong_FromUnsignedLongLong(v);
}

/*
 * A field's value as a Python int, str, bytes or list of ints. The library
 * finds and bounds the field; its format says which Python type fits.
 */
static PyObject *field_value(const EventObject *e, struct tracemap_stream *s,
			     struct tep_format_field *f)
{
	unsigned long fl = f->flags;
	struct tracemap_event ev;
	const unsigned char *p;
	unsigned int len = 0;
	PyObject *list, *o;
	long long v;
	int i, n, esz;

	ev_view(e, &ev);
	if (!(fl & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC | TEP_FIELD_IS_STRING)) &&
	    f->size >= 1 && f->size <= 8) {
		if (tracemap_event_field_num(s, &ev, f->name, &v) < 0)
			return raise_errno(errno, f->name);
		if (fl & TEP_FIELD_IS_SIGNED)
			return PyLong_FromLongLong(v);
		if (f->size < 8)
			v &= (1LL << (f->size * 8)) - 1;
		return PyLong_FromUnsignedLongLong((unsigned long long)v);
	}
	p = tracemap_event_field_array(s, &ev, f->name, &len);
	if (!p)
		return raise_errno(errno, f->name);
	if (fl & TEP_FIELD_IS_STRING)
		return PyUnicode_DecodeUTF8((const char *)p, strnlen((const char *)p, len),
					    "backslashreplace");
	esz = f->elementsize > 0 && f->elementsize <= 8 ? f->elementsize : 1;
	if (esz == 1 || (esz != 2 && esz != 4 && esz != 8))
		return PyBytes_FromStringAndSize((const char *)p, len);
	n = len / esz;
	list = PyList_New(n);
	for (i = 0; list && i < n; i++) {
		o = int_at(p + i * esz, esz, fl & TEP_FIELD_IS_SIGNED);
		if (!o) {
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, i, o);
	}
	return list;
}

/* The field @name, or NULL with KeyError/AttributeError (@exc) set. */
static PyObject *event_field(EventObject *e, PyObject *name, PyObject *exc)
{
	struct tracemap_event ev;
	struct tracemap_stream *s;
	long long v;
	struct tep_format_field *f;
	struct tep_event *fmt;
	const char *n;

	if (!PyUnicode_Check(name)) {
		PyErr_Format(exc, "field names are str, not %.100s", Py_TYPE(name)->tp_name);
		return NULL;
	}
	n = PyUnicode_AsUTF8(name);
	s = n ? ev_decoder(e) : NULL;
	if (!s)
		return NULL;
	/* numbers, the common case, in one call; the format only for the rest */
	ev_view(e, &ev);
	if (!tracemap_event_field_num(s, &ev, n, &v) && v >= 0)
		return PyLong_FromLongLong(v);
	fmt = ev_format(e, s);
	f = fmt ? tep_find_any_field(fmt, n) : NULL;
	if (!f) {
		if (fmt)
			PyErr_Format(exc, "%s:%s has no field '%s' (its fields: ev.as_dict())",
				     fmt->system, fmt->name, n);
		else
			PyErr_Format(exc, "event type %d is not in the event formats: no field '%s'",
				     ev_type(e), n);
		return NULL;
	}
	return field_value(e, s, f);
}

/* Attributes of the type first (ts, cpu, pid, ...), then the event's fields. */
static PyObject *event_getattro(EventObject *e, PyObject *name)
{
	if (!PyUnicode_Check(name) || _PyType_Lookup(Py_TYPE(e), name) ||
	    PyUnicode_READ_CHAR(name, 0) == '_')
		return PyObject_GenericGetAttr((PyObject *)e, name);
	return event_field(e, name, PyExc_AttributeError);
}

static PyObject *event_subscript(EventObject *e, PyObject *key)
{
	return event_field(e, key, PyExc_KeyError);
}

static PyObject *ev_get_ts(EventObject *e, void *c)
{
	return PyLong_FromUnsignedLongLong(e->ts);
}

static PyObject *ev_get_cpu(EventObject *e, void *c)
{
	return PyLong_FromLong(e->cpu);
}

static PyObject *ev_get_pid(EventObject *e, void *c)
{
	return PyLong_FromLong(ev_pid(e));
}

static PyObject *ev_get_id(EventObject *e, void *c)
{
	return PyLong_FromLong(ev_type(e));
}

/*
 * The library's names of the event: @which is "comm" (the task's name,
 * "<...>" when unknown), "name" or "system" (None for an unknown type).
 */
static PyObject *ev_get_text(EventObject *e, void *which)
{
	struct tracemap_stream *s = ev_decoder(e);
	struct tracemap_event ev;
	const char *v;

	if (!s)
		return NULL;
	ev_view(e, &ev);
	switch (((const char *)which)[0]) {
	case 'c':
		v = tracemap_event_comm(s, &ev);
		if (!v)
			return raise_errno(errno, "comm");
		return PyUnicode_DecodeUTF8(v, strlen(v), "backslashreplace");
	case 'n':
		v = tracemap_event_name(s, &ev);
		break;
	default:
		v = tracemap_event_system(s, &ev);
		break;
	}
	return v ? PyUnicode_FromString(v) : Py_NewRef(Py_None);
}

static PyObject *ev_get_raw(EventObject *e, void *c)
{
	return PyBytes_FromStringAndSize((const char *)e->data, ev_size(e));
}

static PyObject *event_as_dict(EventObject *e, PyObject *unused)
{
	struct tracemap_stream *s = ev_decoder(e);
	struct tep_format_field *f;
	struct tep_event *fmt;
	PyObject *d, *v;
	int pass;

	d = s ? PyDict_New() : NULL;
	if (!d)
		return NULL;
	fmt = ev_format(e, s);
	/* common_* first, then the event's own fields, in format order */
	for (pass = 0; fmt && pass < 2; pass++) {
		f = pass ? fmt->format.fields : fmt->format.common_fields;
		for (; f; f = f->next) {
			v = field_value(e, s, f);
			if (!v || PyDict_SetItemString(d, f->name, v)) {
				Py_XDECREF(v);
				Py_DECREF(d);
				return NULL;
			}
			Py_DECREF(v);
		}
	}
	return d;
}

/* The line 'trace-cmd report' prints for this event (3.1.6 columns), by libtracemap-format(3). */
static PyObject *event_str(EventObject *e)
{
	struct tracemap_stream *s = ev_decoder(e);
	struct tracemap_event ev;
	const char *line;
	int n;

	if (!s)
		return NULL;
	if (!e->dec->fmt)
		return raise_errno(EINVAL, "no text formatter");
	ev_view(e, &ev);
	tracemap_event_comm(s, &ev);	/* learns the task's name */
	n = tracemap_format_line(e->dec->fmt, &ev, &line);
	if (n < 0)
		return raise_errno(-n, "cannot format the event");
	if (n && line[n - 1] == '\n')
		n--;
	return PyUnicode_DecodeUTF8(line, n, "backslashreplace");
}

static PyObject *event_repr(EventObject *e)
{
	struct tep_event *fmt = e->dec->s ? ev_format(e, e->dec->s) : NULL;

	return PyUnicode_FromFormat("<tracemap.Event %s:%s cpu=%d ts=%llu pid=%d>",
				    fmt ? fmt->system : "?", fmt ? fmt->name : "?", e->cpu,
				    e->ts, ev_pid(e));
}

static PyObject *event_dir(EventObject *e, PyObject *unused)
{
	PyObject *names = PyObject_Dir((PyObject *)Py_TYPE(e));
	struct tep_format_field *f;
	struct tep_event *fmt;
	PyObject *n;

	if (!names)
		return NULL;
	fmt = e->dec->s ? ev_format(e, e->dec->s) : NULL;
	for (f = fmt ? fmt->format.fields : NULL; f; f = f->next) {
		n = PyUnicode_FromString(f->name);
		if (!n || PyList_Append(names, n)) {
			Py_XDECREF(n);
			Py_DECREF(names);
			return NULL;
		}
		Py_DECREF(n);
	}
	return names;
}

static PyMethodDef event_methods[] = {
	{ "as_dict", (PyCFunction)event_as_dict, METH_NOARGS,
	  "as_dict() -> dict\n\nEvery field by name, the common_* ones first." },
	{ "__dir__", (PyCFunction)event_dir, METH_NOARGS, NULL },
	{ NULL },
};

static PyGetSetDef event_getset[] = {
	{ "ts", (getter)ev_get_ts, NULL, "Time stamp in the instance's trace clock (ns for the "
	  "default 'local' clock).", NULL },
	{ "cpu", (getter)ev_get_cpu, NULL, "CPU whose buffer held the event.", NULL },
	{ "pid", (getter)ev_get_pid, NULL, "The task that wrote the event (common_pid).", NULL },
	{ "comm", (getter)ev_get_text, NULL, "Command name of pid ('<...>' when unknown).", "comm" },
	{ "system", (getter)ev_get_text, NULL, "Event system, e.g. 'sched'.", "system" },
	{ "name", (getter)ev_get_text, NULL, "Event name, e.g. 'sched_switch'.", "name" },
	{ "id", (getter)ev_get_id, NULL, "Event type id (common_type).", NULL },
	{ "raw", (getter)ev_get_raw, NULL, "The payload as bytes, struct trace_entry first, for "
	  "custom decoders.", NULL },
	{ NULL },
};

static PyMappingMethods event_mapping = {
	.mp_subscript = (binaryfunc)event_subscript,
};

static PyTypeObject EventType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "tracemap.Event",
	.tp_doc = "One trace event, a copy that stays valid after the callback returns.\n\n"
		  "ev.ts, ev.cpu, ev.pid, ev.comm, ev.system, ev.name, ev.id and ev.raw\n"
		  "(the payload as bytes); every field of the event as an attribute\n"
		  "(ev.prev_pid) and as ev['prev_pid'] (use the latter for a field named\n"
		  "like an attribute, e.g. sched_waking's ev['pid']). Numbers are int,\n"
		  "strings str, char arrays bytes, other arrays lists of int.\n"
		  "ev.as_dict() gives all fields; str(ev) the line trace-cmd report prints.",
	.tp_basicsize = offsetof(EventObject, data),
	.tp_itemsize = 1,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_dealloc = (destructor)event_dealloc,
	.tp_getattro = (getattrofunc)event_getattro,
	.tp_as_mapping = &event_mapping,
	.tp_str = (reprfunc)event_str,
	.tp_repr = (reprfunc)event_repr,
	.tp_methods = event_methods,
	.tp_getset = event_getset,
};

/* -------------------------------------------------------------- Stream */

/* Take the GIL back inside a library call that runs without it. */
static void hold_gil(StreamObject *st)
{
	if (st->tstate) {
		PyEval_RestoreThread(st->tstate);
		st->tstate = NULL;
	}
}

/* libtracemap's tracemap_event_fn: < 0 stops the delivery and is returned by poll */
static int on_event(void *ctx, const struct tracemap_event *ev)
{
	StreamObject *st = ctx;
	PyObject *e, *r;

	hold_gil(st);
	e = event_new(st, ev);
	if (!e)
		return TM_ECANCELED_PY;
	r = PyObject_CallOneArg(st->callback, e);
	Py_DECREF(e);
	if (!r)
		return TM_ECANCELED_PY;
	Py_DECREF(r);
	st->delivered++;
	if (++st->since_check >= SIGNAL_CHECK_EVERY) {
		st->since_check = 0;
		if (PyErr_CheckSignals())
			return TM_ECANCELED_PY;
	}
	return 0;
}

/* libtracemap's tracemap_lost_fn */
static int on_lost(void *ctx, int cpu, long long lost)
{
	StreamObject *st = ctx;
	PyObject *r, *count;

	if (!st->lost_cb)
		return 0;
	hold_gil(st);
	count = lost == TRACEMAP_LOST_UNKNOWN ? Py_NewRef(Py_None) : PyLong_FromLongLong(lost);
	if (!count)
		return TM_ECANCELED_PY;
	r = PyObject_CallFunction(st->lost_cb, "iN", cpu, count);
	if (!r)
		return TM_ECANCELED_PY;
	Py_DECREF(r);
	return 0;
}

static void unlink_open(StreamObject *st)
{
	StreamObject **p;

	for (p = &open_streams; *p; p = &(*p)->next_open) {
		if (*p == st) {
			*p = st->next_open;
			break;
		}
	}
	st->next_open = NULL;
}

/*
 * Undo in the reverse order of stream_init(): the events, the stream (and
 * the buffer_percent it set), the private instance. Only the process that
 * opened the stream does this, not a fork child.
 */
static void stream_teardown(StreamObject *st)
{
	if (st->owner != getpid())
		return;
	if (st->dec) {
		tracemap_format_free(st->dec->fmt);
		st->dec->fmt = NULL;
	}
	if (st->plugins)
		tep_unload_plugins(st->plugins, tracemap_stream_tep(st->s));
	st->plugins = NULL;
	/* the library puts back what it changed and removes the instance it made */
	if (st->dec)
		st->dec->s = NULL;
	tracemap_stream_close(st->s);
	st->s = NULL;
	unlink_open(st);
}

static int stream_traverse(StreamObject *st, visitproc visit, void *arg)
{
	Py_VISIT(st->callback);
	Py_VISIT(st->lost_cb);
	Py_VISIT(st->pending);
	return 0;
}

static int stream_clear(StreamObject *st)
{
	Py_CLEAR(st->callback);
	Py_CLEAR(st->lost_cb);
	Py_CLEAR(st->pending);
	return 0;
}

static void stream_dealloc(StreamObject *st)
{
	PyObject_GC_UnTrack(st);
	stream_teardown(st);
	stream_clear(st);
	Py_XDECREF(st->dec);
	free(st->instance);
	Py_TYPE(st)->tp_free((PyObject *)st);
}

static PyObject *stream_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
	StreamObject *st = (StreamObject *)type->tp_alloc(type, 0);

	if (!st)
		return NULL;
	st->timeout_ms = -1;
	st->dec = PyObject_New(DecoderObject, &DecoderType);
	if (!st->dec) {
		Py_DECREF(st);
		return NULL;
	}
	st->dec->s = NULL;
	st->dec->fmt = NULL;
	return (PyObject *)st;
}

/* The instance's trace_clock ("local", "mono", "x86-tsc", ...) into @buf; "" when unreadable */
static void read_clock(const char *idir, char *buf, size_t size)
{
	char path[PATH_MAX + 16], line[256], *b, *e;
	ssize_t n;
	int fd;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/trace_clock", idir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	line[n > 0 ? n : 0] = '\0';
	b = strchr(line, '[');
	e = b ? strchr(b, ']') : NULL;
	if (b && e) {
		*e = '\0';
		snprintf(buf, size, "%s", b + 1);
	}
}

/*
 * The selection ((spec, filter or None), ...) as the library's specs; the
 * strings are borrowed from @events, which the caller keeps until the
 * stream is open.
 */
static struct tracemap_event_spec *event_specs(PyObject *events, int *nr)
{
	Py_ssize_t n = PyTuple_GET_SIZE(events), i;
	struct tracemap_event_spec *sp;

	sp = PyMem_Calloc(n ? n : 1, sizeof(*sp));
	if (!sp) {
		PyErr_NoMemory();
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if (!PyArg_ParseTuple(PyTuple_GET_ITEM(events, i), "sz:events", &sp[i].name,
				      &sp[i].filter)) {
			PyMem_Free(sp);
			return NULL;
		}
	}
	*nr = (int)n;
	return sp;
}

/* (pid, ...) as an array of int */
static int *pid_list(PyObject *pids, int *nr)
{
	Py_ssize_t n = PyTuple_GET_SIZE(pids), i;
	int *p;

	p = PyMem_Calloc(n ? n : 1, sizeof(*p));
	if (!p) {
		PyErr_NoMemory();
		return NULL;
	}
	for (i = 0; i < n; i++) {
		long v = PyLong_AsLong(PyTuple_GET_ITEM(pids, i));

		if ((v == -1 && PyErr_Occurred()) || v <= 0 || v > INT_MAX) {
			if (!PyErr_Occurred())
				PyErr_Format(PyExc_ValueError, "pids: %ld is not a pid", v);
			PyMem_Free(p);
			return NULL;
		}
		p[i] = (int)v;
	}
	*nr = (int)n;
	return p;
}

/*
 * Stream(instance, events, cpumask, mode, flags, pids, watermark,
 * latency_ms, buffer_kb, tracefs, timeout_ms, callback, lost), every value
 * already checked by tracemap.Stream (python/tracemap/_stream.py): instance
 * as tracemap_stream_open() takes it (None: a private one the library makes
 * and removes, TOP_LEVEL, or a name); events ((spec, filter or None), ...);
 * cpumask a hex mask or None; mode a MODE_* and flags STREAM_* of this
 * module; pids a tuple of pids; buffer_kb 0 or the private one's size.
 */
static int stream_init(StreamObject *st, PyObject *args, PyObject *kw)
{
	struct tracemap_stream_opts so = { .sz = sizeof(so) };
	struct tracemap_format_opts fo = { .sz = sizeof(fo) };
	const char *instance, *cpumask, *tracefs;
	struct tracemap_event_spec *sp = NULL;
	PyObject *events, *pids, *callback, *lost;
	int mode, watermark, latency_ms, buffer_kb;
	struct tep_handle *tep;
	int *pidv = NULL, ret = -1;
	unsigned int flags;
	char clock[64];

	if (st->s || st->owner) {
		PyErr_SetString(PyExc_RuntimeError, "Stream.__init__ called twice");
		return -1;
	}
	if ((kw && PyDict_GET_SIZE(kw)) ||
	    !PyArg_ParseTuple(args, "zO!ziIO!iiiziOO:Stream", &instance, &PyTuple_Type, &events,
			      &cpumask, &mode, &flags, &PyTuple_Type, &pids, &watermark, &latency_ms,
			      &buffer_kb, &tracefs, &st->timeout_ms, &callback, &lost)) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_TypeError, "the C core takes its values by position: "
					"open tracemap.Stream");
		return -1;
	}
	sp = event_specs(events, &so.nr_events);
	pidv = sp ? pid_list(pids, &so.nr_pids) : NULL;
	if (!pidv)
		goto out;
	st->mode = mode;
	if (callback != Py_None)
		st->callback = Py_NewRef(callback);
	if (lost != Py_None)
		st->lost_cb = Py_NewRef(lost);
	st->owner = getpid();
	st->interp = PyInterpreterState_Get();

	tracemap_clear_error();
	if (tracemap_tracefs_dir(tracefs, st->tfs, sizeof(st->tfs)) < 0) {
		raise_errno(errno, "tracefs");
		goto out;
	}
	st->next_open = open_streams;
	open_streams = st;

	so.mode = st->mode;
	/* the formats before the events are enabled, not in the first callback */
	so.flags = flags | TRACEMAP_STREAM_DECODE;
	so.cpumask = cpumask;
	so.watermark = watermark;
	so.latency_ms = latency_ms;
	so.on_event = on_event;
	so.on_lost = on_lost;
	so.ctx = st;
	so.tracefs_dir = st->tfs;
	so.buffer_size_kb = buffer_kb;
	so.events = sp;
	so.pids = so.nr_pids ? pidv : NULL;
	tracemap_clear_error();
	Py_BEGIN_ALLOW_THREADS
	st->s = tracemap_stream_open(instance, &so);
	Py_END_ALLOW_THREADS
	if (!st->s) {
		raise_errno(errno, "cannot open the stream");
		goto out;
	}
	/* the private instance the library made, or the one named */
	instance = tracemap_stream_instance(st->s, NULL);
	if (!instance || tracemap_instance_dir(st->tfs, instance, st->idir, sizeof(st->idir))) {
		raise_errno(errno, "cannot find the stream's instance");
		goto out;
	}
	if (strcmp(instance, TRACEMAP_TOP_LEVEL)) {
		st->instance = strdup(instance);
		if (!st->instance) {
			PyErr_NoMemory();
			goto out;
		}
	}
	st->dec->s = st->s;
	tep = tracemap_stream_tep(st->s);
	if (!tep) {
		raise_errno(errno, "cannot load the event formats");
		goto out;
	}
	/* the plugins change how some events print (sched_switch, ...), as for trace-cmd */
	st->plugins = tep_load_plugins(tep);
	read_clock(st->idir, clock, sizeof(clock));
	fo.clock = clock[0] ? clock : NULL;
	st->dec->fmt = tracemap_format_new(tep, &fo);
	if (!st->dec->fmt) {
		raise_errno(errno, "cannot set up the text formatter");
		goto out;
	}
	ret = 0;
out:
	if (ret)
		stream_teardown(st);
	PyMem_Free(sp);
	PyMem_Free(pidv);
	return ret;
}

/*
 * A Stream's mapping, fds and instance belong to the process that opened
 * it: in a fork child they are the parent's (the library's readers would
 * share its consumer position and crash on unmapped pages).
 */
static int check_process(StreamObject *st)
{
	if (forked && st->owner && st->owner != getpid()) {
		PyErr_Format(PyExc_RuntimeError, "this Stream was opened by process %d: a fork "
			     "child (pid %d) cannot use it; open a new Stream in the child",
			     (int)st->owner, (int)getpid());
		return -1;
	}
	return 0;
}

static int check_usable(StreamObject *st)
{
	if (check_process(st))
		return -1;
	if (!st->s) {
		PyErr_SetString(PyExc_ValueError, "the stream is closed");
		return -1;
	}
	if (st->busy && st->busy_thread != PyThread_get_thread_ident()) {
		PyErr_Format(PyExc_RuntimeError, "the stream is delivering in thread %lu: a Stream "
			     "is read by one thread at a time (use one Stream per thread, or hand "
			     "the events over with a queue)", st->busy_thread);
		return -1;
	}
	if (st->busy) {
		PyErr_SetString(PyExc_RuntimeError, "the stream is in use (a callback cannot "
				"poll, consume or read its own stream)");
		return -1;
	}
	return 0;
}

/* mark the Stream busy in this thread, for check_usable() of another call */
static void set_busy(StreamObject *st)
{
	st->busy = true;
	st->busy_thread = PyThread_get_thread_ident();
}

/* Remaining milliseconds to @deadline (UINT64_MAX: -1, forever) */
static int remaining_ms(uint64_t deadline)
{
	uint64_t now;

	if (deadline == UINT64_MAX)
		return -1;
	now = tracemap_now_ns();
	return now >= deadline ? 0 : (int)((deadline - now + 999999) / 1000000);
}

/*
 * How long one wait inside the library may take. Python's C signal handler
 * only sets a flag: a signal that arrives while the library is between two
 * waits (in a round, not in epoll_wait) interrupts nothing, and the next wait
 * would sleep on. Waits of at most WAIT_SLICE_MS bound how late Ctrl-C is
 * seen; idle, that costs a wake-up every WAIT_SLICE_MS.
 */
static int wait_slice(uint64_t deadline)
{
	int ms = remaining_ms(deadline);

	return ms < 0 || ms > WAIT_SLICE_MS ? WAIT_SLICE_MS : ms;
}

static uint64_t deadline_of(int timeout_ms)
{
	return timeout_ms < 0 ? UINT64_MAX : tracemap_now_ns() + (uint64_t)timeout_ms * 1000000;
}

/*
 * poll() and consume(): the library delivers through on_event/on_lost. An
 * EINTR from its wait is a signal: Python's handler runs (Ctrl-C raises
 * KeyboardInterrupt), and a handler that does not raise lets the poll go on
 * until its deadline (PEP 475).
 */
static PyObject *run_delivery(StreamObject *st, int timeout_ms, bool wait)
{
	uint64_t deadline = deadline_of(timeout_ms);
	int ret;

	if (check_usable(st))
		return NULL;
	if (!st->callback) {
		PyErr_SetString(PyExc_ValueError, "no callback: give callback= or call "
				"open_callback(fn) first (or iterate over the stream)");
		return NULL;
	}
	set_busy(st);
	st->delivered = 0;
	for (;;) {
		tracemap_clear_error();
		if (wait) {
			st->tstate = PyEval_SaveThread();
			ret = tracemap_stream_poll(st->s, wait_slice(deadline));
			hold_gil(st);
		} else {
			ret = tracemap_stream_consume(st->s);
		}
		if (PyErr_Occurred() || ret > 0 || (ret < 0 && ret != -EINTR))
			break;
		/* a timed-out slice or EINTR: Python's signal handlers, then on to the deadline */
		if (PyErr_CheckSignals() || st->delivered || !wait || !remaining_ms(deadline))
			break;
	}
	st->busy = false;
	if (PyErr_Occurred())
		return NULL;
	if (ret < 0 && ret != -EINTR)
		return raise_errno(-ret, "poll");
	return PyLong_FromLong(st->delivered);
}

static PyObject *stream_poll(StreamObject *st, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "timeout_ms", NULL };
	int timeout_ms = -1;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|i:poll", kwlist, &timeout_ms))
		return NULL;
	return run_delivery(st, timeout_ms, true);
}

static PyObject *stream_consume(StreamObject *st, PyObject *unused)
{
	return run_delivery(st, 0, false);
}

/* open_callback() of tracemap.Stream, which checked that both are callable (lost: or None) */
static PyObject *stream_set_callbacks(StreamObject *st, PyObject *args)
{
	PyObject *cb, *lost;

	if (!PyArg_ParseTuple(args, "OO:_set_callbacks", &cb, &lost))
		return NULL;
	Py_XSETREF(st->callback, Py_NewRef(cb));
	if (lost != Py_None)
		Py_XSETREF(st->lost_cb, Py_NewRef(lost));
	Py_RETURN_NONE;
}

/*
 * The pull way: the next Event, a LostEvents before an event that follows a
 * gap, or NULL without an exception when @timeout_ms passed.
 */
static PyObject *next_item(StreamObject *st, int timeout_ms)
{
	struct tracemap_event ev;
	uint64_t deadline;
	PyObject *e, *l;
	int ret;

	if (st->pending) {
		e = st->pending;
		st->pending = NULL;
		return e;
	}
	if (check_usable(st))
		return NULL;
	/* a snapshot is what is there: it ends instead of waiting */
	if (st->mode == TRACEMAP_MODE_SNAPSHOT)
		timeout_ms = 0;
	deadline = deadline_of(timeout_ms);
	set_busy(st);
	for (;;) {
		tracemap_clear_error();
		/* no hand-over of the GIL while events are at hand */
		ret = tracemap_stream_next_event(st->s, &ev, 0);
		if (!ret && remaining_ms(deadline)) {
			Py_BEGIN_ALLOW_THREADS
			ret = tracemap_stream_next_event(st->s, &ev, wait_slice(deadline));
			Py_END_ALLOW_THREADS
		}
		if (ret == -EINTR || (!ret && remaining_ms(deadline))) {
			if (PyErr_CheckSignals())
				break;
			continue;
		}
		break;
	}
	st->busy = false;
	if (PyErr_Occurred())
		return NULL;
	if (ret < 0)
		return raise_errno(-ret, "read");
	if (!ret)
		return NULL;
	e = event_new(st, &ev);
	if (!e || !ev.missed)
		return e;
	l = lost_new(ev.cpu, ev.missed);
	if (!l) {
		Py_DECREF(e);
		return NULL;
	}
	st->pending = e;
	return l;
}

static PyObject *stream_read(StreamObject *st, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "timeout_ms", NULL };
	int timeout_ms = -1;
	PyObject *r;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|i:read", kwlist, &timeout_ms))
		return NULL;
	r = next_item(st, timeout_ms);
	if (!r && !PyErr_Occurred())
		Py_RETURN_NONE;
	return r;
}

static PyObject *stream_iternext(StreamObject *st)
{
	/* NULL without an exception: StopIteration */
	return next_item(st, st->timeout_ms);
}

static PyObject *stream_fileno(StreamObject *st, PyObject *unused)
{
	if (check_process(st))
		return NULL;
	if (!st->s) {
		PyErr_SetString(PyExc_ValueError, "the stream is closed");
		return NULL;
	}
	return PyLong_FromLong(tracemap_stream_epoll_fd(st->s));
}

static PyObject *stream_restore_events(StreamObject *st, PyObject *unused)
{
	int ret;

	if (check_usable(st))
		return NULL;
	tracemap_clear_error();
	ret = tracemap_stream_restore_events(st->s);
	if (ret < 0)
		return raise_errno(-ret, "restore the events");
	Py_RETURN_NONE;
}

static PyObject *stream_close(StreamObject *st, PyObject *unused)
{
	if (st->busy && st->busy_thread != PyThread_get_thread_ident()) {
		PyErr_Format(PyExc_RuntimeError, "close() while thread %lu delivers this stream's "
			     "events: close it after that poll/read returns", st->busy_thread);
		return NULL;
	}
	if (st->busy) {
		PyErr_SetString(PyExc_RuntimeError, "close() while the stream delivers (in its own "
				"callback, or poll/read in another thread): close it after that returns");
		return NULL;
	}
	stream_teardown(st);
	Py_RETURN_NONE;
}

#define STAT(name) { #name, offsetof(struct tracemap_cpu_stats, name) }

static PyObject *stream_stats(StreamObject *st, PyObject *unused)
{
	static const struct { const char *name; size_t off; } fields[] = {
		STAT(events), STAT(bytes), STAT(lost), STAT(lost_unknown), STAT(corrupt),
		STAT(pages), STAT(get_reader), STAT(reads), STAT(wakeups), STAT(kernel_entries),
		STAT(kernel_overrun), STAT(kernel_read), STAT(late), STAT(stolen), STAT(own),
		STAT(helper), STAT(cleared), STAT(gaps_possible), STAT(held), STAT(skipped),
		STAT(ring_scans),
	};
	struct tracemap_cpu_stats cs;
	struct tracemap_cpu *c;
	PyObject *all, *d, *v;
	size_t f;
	int i, n;

	if (check_process(st))
		return NULL;
	if (!st->s) {
		PyErr_SetString(PyExc_ValueError, "the stream is closed");
		return NULL;
	}
	all = PyDict_New();
	n = tracemap_stream_nr_cpus(st->s);
	for (i = 0; all && i < n; i++) {
		c = tracemap_stream_cpu(st->s, i);
		if (tracemap_cpu_stats(c, &cs, sizeof(cs)) < 0) {
			Py_DECREF(all);
			return raise_errno(errno, "stats");
		}
		d = PyDict_New();
		for (f = 0; d && f < sizeof(fields) / sizeof(fields[0]); f++) {
			v = PyLong_FromUnsignedLongLong(*(uint64_t *)((char *)&cs + fields[f].off));
			if (!v || PyDict_SetItemString(d, fields[f].name, v))
				Py_CLEAR(d);
			Py_XDECREF(v);
		}
		v = d ? PyLong_FromLong(tracemap_cpu_id(c)) : NULL;
		if (!v || PyDict_SetItem(all, v, d))
			Py_CLEAR(all);
		Py_XDECREF(v);
		Py_XDECREF(d);
	}
	return all;
}

static PyObject *st_get_instance(StreamObject *st, void *c)
{
	return st->instance ? PyUnicode_FromString(st->instance) : Py_NewRef(Py_None);
}

static PyObject *st_get_instance_dir(StreamObject *st, void *c)
{
	return PyUnicode_FromString(st->idir);
}

static PyObject *st_get_closed(StreamObject *st, void *c)
{
	return PyBool_FromLong(!st->s);
}

static PyObject *st_get_cpus(StreamObject *st, void *c)
{
	PyObject *l, *v;
	int i, n;

	if (!st->s)
		return PyList_New(0);
	n = tracemap_stream_nr_cpus(st->s);
	l = PyList_New(n);
	for (i = 0; l && i < n; i++) {
		v = PyLong_FromLong(tracemap_cpu_id(tracemap_stream_cpu(st->s, i)));
		if (!v) {
			Py_CLEAR(l);
			break;
		}
		PyList_SET_ITEM(l, i, v);
	}
	return l;
}

static PyObject *st_get_events(StreamObject *st, void *c)
{
	const char *const *names = st->s ? tracemap_stream_events(st->s) : NULL;
	PyObject *l = PyList_New(0), *n;

	for (; l && names && *names; names++) {
		n = PyUnicode_FromString(*names);
		if (!n || PyList_Append(l, n))
			Py_CLEAR(l);
		Py_XDECREF(n);
	}
	return l;
}

/* stream_NAME as the method NAME (a cast for the METH_VARARGS | METH_KEYWORDS ones) */
#define STREAM_METHOD(name, flags, doc) \
	{ #name, (PyCFunction)(void (*)(void))stream_##name, flags, doc }

static PyMethodDef stream_methods[] = {
	STREAM_METHOD(poll, METH_VARARGS | METH_KEYWORDS, "poll(timeout_ms=-1) -> int\n\n"
	  "Wait up to timeout_ms (-1: forever) for events and deliver them to the\n"
	  "callback. Returns the number of events delivered (0: timeout). The\n"
	  "GIL is released while waiting; Ctrl-C raises KeyboardInterrupt."),
	STREAM_METHOD(consume, METH_NOARGS, "consume() -> int\n\n"
	  "Deliver what is in the buffers now to the callback, without waiting.\n"
	  "Returns the number of events delivered."),
	STREAM_METHOD(read, METH_VARARGS | METH_KEYWORDS,
	  "read(timeout_ms=-1) -> Event | LostEvents | None\n\n"
	  "The next event, waiting up to timeout_ms (-1: forever); a LostEvents\n"
	  "comes before the event that follows a gap; None on timeout (and at the\n"
	  "end of a snapshot)."),
	STREAM_METHOD(fileno, METH_NOARGS, "fileno() -> int\n\n"
	  "A file descriptor that is readable when consume() has events to\n"
	  "deliver: for selectors, select and asyncio's loop.add_reader()."),
	STREAM_METHOD(stats, METH_NOARGS, "stats() -> dict\n\n"
	  "Per-CPU statistics {cpu: {name: value}}, libtracemap's struct\n"
	  "tracemap_cpu_stats (tracemap-python(7) says what each counts): events,\n"
	  "bytes, lost (known counts), lost_unknown (gaps without a count),\n"
	  "corrupt, pages, get_reader, reads, wakeups, kernel_entries,\n"
	  "kernel_overrun, kernel_read, late, stolen (taken by another consumer),\n"
	  "own (events of this process's threads and those they caused, left out\n"
	  "by self_filter), helper (sched_waking events enabled only for that\n"
	  "check, left out, not in own), cleared (resets of the buffer seen, each\n"
	  "a gap in lost_unknown), gaps_possible, held, skipped, ring_scans."),
	STREAM_METHOD(restore_events, METH_NOARGS, "restore_events()\n\n"
	  "Put back the events, filters and pids the stream set up, and keep\n"
	  "reading: for a final drain that ends (close() does it too)."),
	STREAM_METHOD(close, METH_NOARGS, "close()\n\n"
	  "Restore the events and filters, close the readers, restore\n"
	  "buffer_percent and remove the private instance. Idempotent."),
	{ "_set_callbacks", (PyCFunction)stream_set_callbacks, METH_VARARGS, NULL },
	{ NULL },
};

static PyGetSetDef stream_getset[] = {
	{ "instance", (getter)st_get_instance, NULL,
	  "Name of the instance read (the private one when instance=None), None "
	  "for the top-level buffer.", NULL },
	{ "instance_dir", (getter)st_get_instance_dir, NULL,
	  "Its tracefs directory (write to its trace_marker to add events).", NULL },
	{ "cpus", (getter)st_get_cpus, NULL, "The CPUs read.", NULL },
	{ "events", (getter)st_get_events, NULL,
	  "The events enabled for the stream, as 'system:event'.", NULL },
	{ "closed", (getter)st_get_closed, NULL, "True after close().", NULL },
	{ NULL },
};

static PyTypeObject StreamType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "tracemap._tracemap.Stream",
	.tp_doc = "The C core of tracemap.Stream, which checks the arguments and\n"
		  "documents them: open that one.",
	.tp_basicsize = sizeof(StreamObject),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
	.tp_new = stream_new,
	.tp_init = (initproc)stream_init,
	.tp_dealloc = (destructor)stream_dealloc,
	.tp_traverse = (traverseproc)stream_traverse,
	.tp_clear = (inquiry)stream_clear,
	.tp_iter = PyObject_SelfIter,
	.tp_iternext = (iternextfunc)stream_iternext,
	.tp_methods = stream_methods,
	.tp_getset = stream_getset,
};

/* -------------------------------------------------------------- module */

/*
 * atexit: an interpreter that exits with streams open leaves tracefs as it
 * found it. The list is the process's; a subinterpreter that ends closes
 * its own streams, not those of the others.
 */
static PyObject *close_all(PyObject *mod, PyObject *unused)
{
	PyInterpreterState *interp = PyInterpreterState_Get();
	StreamObject **p = &open_streams, *st;

	while ((st = *p)) {
		if (st->interp != interp) {
			p = &st->next_open;
			continue;
		}
		stream_teardown(st);
		if (*p == st)
			unlink_open(st);
	}
	Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
	{ "_close_all", close_all, METH_NOARGS, "Close every open stream (run at exit)." },
	{ NULL },
};

static void after_fork_child(void)
{
	forked = 1;
}

static int tracemap_exec(PyObject *m)
{
	static bool once;

	if (PyType_Ready(&DecoderType) || PyType_Ready(&EventType) || PyType_Ready(&LostType) ||
	    PyType_Ready(&StreamType))
		return -1;
	if (PyModule_AddType(m, &StreamType) || PyModule_AddType(m, &EventType) ||
	    PyModule_AddType(m, &LostType) ||
	    PyModule_AddStringConstant(m, "__version__", TRACEMAP_PY_VERSION))
		return -1;
	/* the values Stream() takes for mode and flags */
	if (PyModule_AddIntConstant(m, "MODE_CONSUME", TRACEMAP_MODE_CONSUME) ||
	    PyModule_AddIntConstant(m, "MODE_FOLLOW", TRACEMAP_MODE_FOLLOW) ||
	    PyModule_AddIntConstant(m, "MODE_SNAPSHOT", TRACEMAP_MODE_SNAPSHOT) ||
	    PyModule_AddIntConstant(m, "STREAM_UNORDERED", TRACEMAP_STREAM_UNORDERED) ||
	    PyModule_AddIntConstant(m, "STREAM_NO_SELF", TRACEMAP_STREAM_NO_SELF) ||
	    PyModule_AddIntConstant(m, "STREAM_LOW_LATENCY", TRACEMAP_STREAM_LOW_LATENCY) ||
	    PyModule_AddIntConstant(m, "STREAM_PID_FORKS", TRACEMAP_STREAM_PID_FORKS) ||
	    PyModule_AddStringConstant(m, "TOP_LEVEL", TRACEMAP_TOP_LEVEL))
		return -1;
	if (once)
		return 0;
	once = true;
	tracemap_set_print(print_hook, NULL);
	pthread_atfork(NULL, NULL, after_fork_child);
	/*
	 * libtraceevent's plugins resolve its symbols in the global namespace,
	 * where Python's RTLD_LOCAL loading of this module did not put them:
	 * without this, str(ev) of sched_switch would miss its plugin.
	 */
	dlopen("libtraceevent.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
	return 0;
}

/*
 * PEP 489 multi-phase init. The static types, the library's state and the
 * list of open streams are the process's; each stream notes its
 * interpreter, whose exit (close_all) closes it.
 */
static PyModuleDef_Slot tracemap_slots[] = {
	{ Py_mod_exec, tracemap_exec },
	{ 0, NULL },
};

static struct PyModuleDef tracemap_module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "tracemap._tracemap",
	.m_doc =
	"The C core of the tracemap package: Stream, Event, LostEvents.\n"
	"Import tracemap, not this module; see tracemap-python(7).",
	.m_size = 0,
	.m_methods = module_methods,
	.m_slots = tracemap_slots,
};

PyMODINIT_FUNC PyInit__tracemap(void);

PyMODINIT_FUNC PyInit__tracemap(void)
{
	return PyModuleDef_Init(&tracemap_module);
}
