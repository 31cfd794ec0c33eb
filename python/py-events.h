/* SPDX-License-Identifier: LGPL-2.1 */
/*
 * The events a Python stream enables (and filters), and what to put back.
 * Interim: the library's event enabling (issue 13) takes this over.
 */
#ifndef _TRACEMAP_PY_EVENTS_H
#define _TRACEMAP_PY_EVENTS_H

#include <Python.h>
#include <stdbool.h>

struct py_event {
	char *system;
	char *name;
	char *filter;		/* asked for, or NULL */
	char *old_filter;	/* to write back; NULL: untouched */
	bool enabled;		/* we wrote 1 and write 0 back */
};

struct py_events {
	struct py_event *ev;
	int nr;
	char *idir;		/* the instance they were enabled in */
};

/* Resolve trace-cmd -e specs and -f filters. 0, or -1 with a Python exception. */
int py_events_resolve(struct py_events *pe, const char *tfs, PyObject *events,
		      PyObject *filters);
/* Set the filters, enable the events in @idir. 0, or -1 with an exception (restore undoes). */
int py_events_enable(struct py_events *pe, const char *idir);
/* Put back every enable and filter changed; idempotent, no exception. */
void py_events_restore(struct py_events *pe);
void py_events_free(struct py_events *pe);
/* ['system:event', ...] */
PyObject *py_events_list(const struct py_events *pe);

#endif
