// SPDX-License-Identifier: LGPL-2.1
/*
 * tracemap stream: which events -e names, enabling them, and putting back
 * exactly what was changed.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracefs.h>

#include "tracemap-tool.h"
#include "cmd-stream.h"

static bool in_list(char **list, const char *name)
{
	for (; list && *list; list++)
		if (!strcmp(*list, name))
			return true;
	return false;
}

static int add_event(struct ev_set *set, const char *sys, const char *ev)
{
	struct ev_item *n;
	int i;

	for (i = 0; i < set->nr_evs; i++)
		if (!strcmp(set->evs[i].system, sys) && !strcmp(set->evs[i].event, ev))
			return 0;
	n = realloc(set->evs, (set->nr_evs + 1) * sizeof(*n));
	if (!n)
		return -1;
	set->evs = n;
	n[set->nr_evs] = (struct ev_item){ .system = strdup(sys), .event = strdup(ev) };
	if (!n[set->nr_evs].system || !n[set->nr_evs].event)
		return -1;
	set->nr_evs++;
	return 0;
}

static int add_system(struct ev_set *set, const char *name, bool whole)
{
	struct sys_item *n;
	int i;

	for (i = 0; i < set->nr_sys; i++) {
		if (!strcmp(set->sys[i].system, name)) {
			set->sys[i].whole |= whole;
			return 0;
		}
	}
	n = realloc(set->sys, (set->nr_sys + 1) * sizeof(*n));
	if (!n)
		return -1;
	set->sys = n;
	n[set->nr_sys] = (struct sys_item){ .system = strdup(name), .whole = whole };
	if (!n[set->nr_sys].system)
		return -1;
	set->nr_sys++;
	return 0;
}

/*
 * Add the events of system @sname that match @epat (all of them when
 * @whole); the number added, or -1 when out of memory.
 */
static int add_matching(const char *tfs, struct ev_set *set, const char *sname,
			const char *epat, bool whole)
{
	char **events = tracefs_system_events(tfs, sname);
	int e, found = 0;

	for (e = 0; events && events[e]; e++) {
		if (!whole && fnmatch(epat, events[e], 0))
			continue;
		if (add_event(set, sname, events[e]) || add_system(set, sname, whole)) {
			found = -1;
			break;
		}
		found++;
	}
	tracefs_list_free(events);
	return found;
}

/*
 * One -e spec as trace-cmd reads it: "system:event", "system" (all its
 * events) or "event" (that event in every system); shell globs allowed.
 * "name" alone is a system of that name if there is one, else events of
 * that name. The number of events added, or -1 when out of memory.
 */
static int resolve_spec(const char *tfs, char **systems, const char *spat, const char *epat,
			struct ev_set *set)
{
	int s, n, found = 0;
	bool whole;

	for (s = 0; systems && systems[s]; s++) {
		if (spat) {
			if (fnmatch(spat, systems[s], 0))
				continue;
			whole = !strcmp(epat, "*");
		} else {
			whole = !fnmatch(epat, systems[s], 0);
			if (!whole)
				continue;
		}
		n = add_matching(tfs, set, systems[s], epat, whole);
		if (n < 0)
			return -1;
		found += n;
	}
	if (found || spat)
		return found;
	for (s = 0; systems && systems[s]; s++) {
		n = add_matching(tfs, set, systems[s], epat, false);
		if (n < 0)
			return -1;
		found += n;
	}
	return found;
}

/* The event lists are the tracefs ones, the same in every instance. */
int events_resolve(const char *tfs, char **specs, int nr_specs, struct ev_set *set)
{
	const char *spat, *epat;
	char **systems, *spec, *colon;
	int i, found, ret = -1;

	systems = tracefs_event_systems(tfs);
	if (!systems && nr_specs) {
		tool_err("cannot list the events of %s/events: %s", tfs, strerror(errno));
		return -1;
	}
	for (i = 0; i < nr_specs; i++) {
		spec = strdup(specs[i]);
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
		found = resolve_spec(tfs, systems, spat, epat, set);
		if (!found) {
			if ((spat && !strcmp(spat, "ftrace")) ||
			    (!spat && !in_list(systems, epat) && !strcmp(epat, "ftrace")))
				tool_err("-e %s: ftrace events cannot be enabled; they are always "
					 "recorded (trace_marker writes arrive as ftrace:print)",
					 specs[i]);
			else
				tool_err("-e %s: no such event (see %s/available_events)",
					 specs[i], tfs);
		}
		free(spec);
		if (found <= 0)
			goto out;
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

/* Whole systems go back in one write where that is exact. */
void events_restore(struct tracefs_instance *inst, struct ev_set *set)
{
	struct ev_item *evs = set->evs;
	struct sys_item *sys = set->sys;
	int i, s;

	for (s = 0; s < set->nr_sys; s++) {
		bool all_off = sys[s].whole;

		for (i = 0; i < set->nr_evs && all_off; i++)
			if (!strcmp(evs[i].system, sys[s].system) &&
			    (evs[i].was_enabled || !evs[i].enabled))
				all_off = false;
		if (!all_off)
			continue;
		if (tracefs_event_disable(inst, sys[s].system, NULL))
			tool_err("cannot disable the events of %s again", sys[s].system);
		for (i = 0; i < set->nr_evs; i++)
			if (!strcmp(evs[i].system, sys[s].system))
				evs[i].enabled = false;
	}
	for (i = 0; i < set->nr_evs; i++) {
		if (!evs[i].enabled)
			continue;
		if (event_file(inst, &evs[i], "0"))
			tool_err("cannot disable %s:%s again", evs[i].system, evs[i].event);
		evs[i].enabled = false;
	}
}

int events_enable(struct tracefs_instance *inst, struct ev_set *set,
		  int (*note)(const char *key, const char *value))
{
	struct ev_item *evs = set->evs;
	struct sys_item *sys = set->sys;
	char name[512];
	int i, s, st;
	bool any_off;

	for (i = 0; i < set->nr_evs; i++) {
		st = event_file(inst, &evs[i], NULL);
		if (st < 0)
			return -1;
		evs[i].was_enabled = st;
	}
	/* written down first: a stream killed from here on leaves them to repair */
	for (i = 0; i < set->nr_evs && note; i++) {
		if (evs[i].was_enabled)
			continue;
		snprintf(name, sizeof(name), "%s:%s", evs[i].system, evs[i].event);
		if (note("event", name))
			return -1;
	}
	for (s = 0; s < set->nr_sys; s++) {
		if (!sys[s].whole)
			continue;
		any_off = false;
		for (i = 0; i < set->nr_evs; i++)
			if (!strcmp(evs[i].system, sys[s].system) && !evs[i].was_enabled)
				any_off = true;
		if (!any_off)
			continue;
		/* mark first: a write that half worked is undone too */
		for (i = 0; i < set->nr_evs; i++)
			if (!strcmp(evs[i].system, sys[s].system) && !evs[i].was_enabled)
				evs[i].enabled = true;
		if (tracefs_event_enable(inst, sys[s].system, NULL)) {
			tool_err("cannot enable the events of %s: %s", sys[s].system,
				 strerror(errno));
			return -1;
		}
	}
	for (i = 0; i < set->nr_evs; i++) {
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

void events_free(struct ev_set *set)
{
	int i;

	for (i = 0; i < set->nr_evs; i++) {
		free(set->evs[i].system);
		free(set->evs[i].event);
	}
	for (i = 0; i < set->nr_sys; i++)
		free(set->sys[i].system);
	free(set->evs);
	free(set->sys);
	*set = (struct ev_set){ 0 };
}
