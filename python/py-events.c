// SPDX-License-Identifier: LGPL-2.1
/*
 * Event specs as trace-cmd's -e takes them ("system:event", "system",
 * "event", shell globs), resolved against <tracefs>/events (the same list in
 * every instance), enabled through each event's own enable file, and put
 * back on close: enable to 0 where we set it, the filter to what it was.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "py-events.h"

static PyObject *os_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static PyObject *os_error(int err, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	PyErr_SetObject(PyExc_OSError, Py_BuildValue("(is)", err, msg));
	return NULL;
}

static int read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return n;
	buf[n] = '\0';
	return n;
}

static int write_small(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n < 0)
		n = -errno;
	close(fd);
	return n < 0 ? n : 0;
}

static int add_event(struct py_events *pe, const char *system, const char *name)
{
	struct py_event *n;
	int i;

	for (i = 0; i < pe->nr; i++)
		if (!strcmp(pe->ev[i].system, system) && !strcmp(pe->ev[i].name, name))
			return 0;
	n = realloc(pe->ev, (pe->nr + 1) * sizeof(*n));
	if (!n)
		return -1;
	pe->ev = n;
	n[pe->nr] = (struct py_event){ .system = strdup(system), .name = strdup(name) };
	if (!n[pe->nr].system || !n[pe->nr].name) {
		free(n[pe->nr].system);
		free(n[pe->nr].name);
		return -1;
	}
	pe->nr++;
	return 0;
}

/*
 * The events of one spec: glob <tfs>/events/SYS/EV/enable. A name without a
 * colon is a system when one matches, else an event of any system.
 */
static int match_spec(const char *tfs, const char *spec, glob_t *g)
{
	char pat[PATH_MAX];
	const char *colon = strchr(spec, ':');
	int ret;

	if (colon) {
		snprintf(pat, sizeof(pat), "%s/events/%.*s/%s/enable", tfs, (int)(colon - spec),
			 spec, colon[1] ? colon + 1 : "*");
		return glob(pat, 0, NULL, g);
	}
	snprintf(pat, sizeof(pat), "%s/events/%s/*/enable", tfs, spec);
	ret = glob(pat, 0, NULL, g);
	if (ret != GLOB_NOMATCH)
		return ret;
	snprintf(pat, sizeof(pat), "%s/events/*/%s/enable", tfs, spec);
	return glob(pat, 0, NULL, g);
}

/* Calls @fn for each event of @spec; -1 with FileNotFoundError when there is none. */
static int for_each_match(struct py_events *pe, const char *tfs, const char *spec,
			  int (*fn)(struct py_events *, const char *, const char *, void *),
			  void *arg)
{
	size_t base = strlen(tfs) + strlen("/events/"), i;
	char *sys, *ev, *slash;
	int ret = 0;
	glob_t g;

	if (!*spec || strstr(spec, "..") || strchr(spec, '/')) {
		os_error(ENOENT, "no such event '%s': give system:event, system or event as in "
			 "%s/available_events", spec, tfs);
		return -1;
	}
	if (match_spec(tfs, spec, &g)) {
		if (!strncmp(spec, "ftrace", 6) && (!spec[6] || spec[6] == ':'))
			os_error(ENOENT, "event '%s': ftrace events cannot be enabled; they are "
				 "always recorded (trace_marker writes arrive as ftrace:print)",
				 spec);
		else
			os_error(ENOENT, "no such event '%s' (see %s/available_events)", spec, tfs);
		return -1;
	}
	for (i = 0; i < g.gl_pathc && !ret; i++) {
		sys = g.gl_pathv[i] + base;
		slash = strchr(sys, '/');
		if (!slash)
			continue;
		*slash = '\0';
		ev = slash + 1;
		slash = strchr(ev, '/');
		if (!slash)
			continue;
		*slash = '\0';
		ret = fn(pe, sys, ev, arg);
	}
	globfree(&g);
	if (ret)
		PyErr_NoMemory();
	return ret ? -1 : 0;
}

static int add_cb(struct py_events *pe, const char *sys, const char *ev, void *arg)
{
	return add_event(pe, sys, ev);
}

static int filter_cb(struct py_events *pe, const char *sys, const char *ev, void *arg)
{
	int i;

	for (i = 0; i < pe->nr; i++) {
		if (strcmp(pe->ev[i].system, sys) || strcmp(pe->ev[i].name, ev))
			continue;
		free(pe->ev[i].filter);
		pe->ev[i].filter = strdup(arg);
		return pe->ev[i].filter ? 0 : -1;
	}
	return 0;
}

static const char *spec_str(PyObject *o, const char *what)
{
	if (!PyUnicode_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s: give str, not %.100s", what,
			     Py_TYPE(o)->tp_name);
		return NULL;
	}
	return PyUnicode_AsUTF8(o);
}

int py_events_resolve(struct py_events *pe, const char *tfs, PyObject *events,
		      PyObject *filters)
{
	PyObject *it, *o, *key, *val;
	const char *spec, *f;
	Py_ssize_t pos = 0;
	int i, ret = 0;

	if (events == Py_None) {
		if (filters != Py_None) {
			PyErr_SetString(PyExc_ValueError, "filters without events: name the events "
					"to filter");
			return -1;
		}
		return 0;
	}
	if (PyUnicode_Check(events)) {
		PyErr_SetString(PyExc_TypeError, "events: give a list of event specs, e.g. "
				"['sched:sched_switch']");
		return -1;
	}
	it = PyObject_GetIter(events);
	if (!it)
		return -1;
	while (!ret && (o = PyIter_Next(it))) {
		spec = spec_str(o, "events");
		ret = spec ? for_each_match(pe, tfs, spec, add_cb, NULL) : -1;
		Py_DECREF(o);
	}
	Py_DECREF(it);
	if (ret || PyErr_Occurred())
		return -1;

	if (filters == Py_None)
		return 0;
	if (PyUnicode_Check(filters)) {
		f = PyUnicode_AsUTF8(filters);
		for (i = 0; f && i < pe->nr; i++) {
			pe->ev[i].filter = strdup(f);
			if (!pe->ev[i].filter)
				return PyErr_NoMemory(), -1;
		}
		return f ? 0 : -1;
	}
	if (!PyDict_Check(filters)) {
		PyErr_SetString(PyExc_TypeError, "filters: give a filter string for every event, "
				"or a dict {event spec: filter}");
		return -1;
	}
	while (PyDict_Next(filters, &pos, &key, &val)) {
		spec = spec_str(key, "filters key");
		f = spec ? spec_str(val, "filter") : NULL;
		if (!f || for_each_match(pe, tfs, spec, filter_cb, (void *)f))
			return -1;
	}
	return 0;
}

static void event_path(char *buf, size_t size, const char *idir, const struct py_event *e,
		       const char *file)
{
	snprintf(buf, size, "%s/events/%s/%s/%s", idir, e->system, e->name, file);
}

int py_events_enable(struct py_events *pe, const char *idir)
{
	char path[PATH_MAX], buf[4096];
	struct py_event *e;
	int i, ret;

	free(pe->idir);
	pe->idir = strdup(idir);
	if (!pe->idir) {
		PyErr_NoMemory();
		return -1;
	}
	for (i = 0; i < pe->nr; i++) {
		e = &pe->ev[i];
		if (e->filter) {
			event_path(path, sizeof(path), idir, e, "filter");
			ret = read_small(path, buf, sizeof(buf));
			if (ret < 0) {
				os_error(-ret, "cannot read %s: %s", path, strerror(-ret));
				return -1;
			}
			buf[strcspn(buf, "\n")] = '\0';
			e->old_filter = strdup(strcmp(buf, "none") ? buf : "0");
			if (!e->old_filter) {
				PyErr_NoMemory();
				return -1;
			}
			ret = write_small(path, e->filter);
			if (ret < 0) {
				/* the kernel says what is wrong in the filter file */
				if (read_small(path, buf, sizeof(buf)) < 0)
					buf[0] = '\0';
				os_error(-ret, "filter '%s' for %s:%s refused: %s%s%s", e->filter,
					 e->system, e->name, strerror(-ret), buf[0] ? "\n" : "",
					 buf);
				return -1;
			}
		}
		event_path(path, sizeof(path), idir, e, "enable");
		ret = read_small(path, buf, sizeof(buf));
		if (ret < 0) {
			os_error(-ret, "cannot read %s: %s", path, strerror(-ret));
			return -1;
		}
		/* "0", "1", or with a '*' when soft-disabled by a trigger */
		if (buf[0] == '1')
			continue;
		e->enabled = true;
		ret = write_small(path, "1");
		if (ret < 0) {
			os_error(-ret, "cannot enable %s:%s (%s): %s", e->system, e->name, path,
				 strerror(-ret));
			return -1;
		}
	}
	return 0;
}

void py_events_restore(struct py_events *pe)
{
	char path[PATH_MAX];
	struct py_event *e;
	int i;

	for (i = 0; pe->idir && i < pe->nr; i++) {
		e = &pe->ev[i];
		if (e->enabled) {
			event_path(path, sizeof(path), pe->idir, e, "enable");
			if (write_small(path, "0") < 0 && errno != ENOENT)
				fprintf(stderr, "tracemap: cannot disable %s:%s again (%s): %s\n",
					e->system, e->name, path, strerror(errno));
			e->enabled = false;
		}
		if (e->old_filter) {
			event_path(path, sizeof(path), pe->idir, e, "filter");
			if (write_small(path, e->old_filter) < 0 && errno != ENOENT)
				fprintf(stderr, "tracemap: cannot restore the filter of %s:%s (%s): "
					"%s\n", e->system, e->name, path, strerror(errno));
			free(e->old_filter);
			e->old_filter = NULL;
		}
	}
}

void py_events_free(struct py_events *pe)
{
	int i;

	for (i = 0; i < pe->nr; i++) {
		free(pe->ev[i].system);
		free(pe->ev[i].name);
		free(pe->ev[i].filter);
		free(pe->ev[i].old_filter);
	}
	free(pe->ev);
	free(pe->idir);
	pe->ev = NULL;
	pe->idir = NULL;
	pe->nr = 0;
}

PyObject *py_events_list(const struct py_events *pe)
{
	PyObject *l = PyList_New(pe->nr), *s;
	int i;

	for (i = 0; l && i < pe->nr; i++) {
		s = PyUnicode_FromFormat("%s:%s", pe->ev[i].system, pe->ev[i].name);
		if (!s) {
			Py_CLEAR(l);
			break;
		}
		PyList_SET_ITEM(l, i, s);
	}
	return l;
}
