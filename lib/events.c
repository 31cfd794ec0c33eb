// SPDX-License-Identifier: LGPL-2.1-only
/*
 * The instance state a stream sets up for its caller and puts back on close:
 * the events it enables (trace-cmd's -e), their filters (-f), the tasks to
 * trace (set_event_pid, options/event-fork) and, for a stream that leaves out
 * its own events, set_event_notrace_pid and a clause in the filter of every
 * sched event that names a task in its fields.
 *
 * Nothing is changed before every selection was resolved. Every change is
 * recorded before it is made, so a write that half worked is undone too.
 */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs.h>

#include "tracemap-local.h"

struct ev_item {
	char *system;
	char *event;
	char *filter;		/* the caller's filter, or NULL */
	char *old_filter;	/* to write back; NULL: we did not change it */
	bool was_enabled;
	bool enabled;		/* we enabled it (and disable it again) */
	bool helper;		/* not asked for: the own-event check needs it (self.c) */
};

struct sys_item {
	char *system;
	bool whole;		/* every event of the system was asked for */
};

struct tm_events {
	struct tracefs_instance *inst;
	char *tracefs;
	struct ev_item *evs;
	int nr_evs;
	struct sys_item *sys;
	int nr_sys;
	char **names;		/* "system:event" of evs, NULL-terminated */
	char *old_pids;		/* set_event_pid to write back; NULL: untouched */
	char *old_notrace;	/* set_event_notrace_pid to write back; NULL: untouched */
	int old_fork;		/* options/event-fork to write back; -1: untouched */
	tracemap_enable_fn on_enable;	/* told before an event is turned on */
	void *ctx;
	struct tm_state *state;		/* each change written down first (state.c) */
	int owner;		/* the process that set it up: only it puts back */
};

/* ------------------------------------------------------------ selection */

static bool in_list(char **list, const char *name)
{
	for (; list && *list; list++)
		if (!strcmp(*list, name))
			return true;
	return false;
}

static int add_event(struct tm_events *e, const char *sys, const char *ev, const char *filter)
{
	struct ev_item *n;
	int i;

	for (i = 0; i < e->nr_evs; i++) {
		if (strcmp(e->evs[i].system, sys) || strcmp(e->evs[i].event, ev))
			continue;
		/* a later -f for the same event replaces an earlier one, as in trace-cmd */
		if (filter) {
			free(e->evs[i].filter);
			e->evs[i].filter = strdup(filter);
			if (!e->evs[i].filter)
				return tm_err(ENOMEM);
		}
		return 0;
	}
	n = realloc(e->evs, (e->nr_evs + 1) * sizeof(*n));
	if (!n)
		return tm_err(ENOMEM);
	e->evs = n;
	n[e->nr_evs] = (struct ev_item){ .system = strdup(sys), .event = strdup(ev),
					 .filter = filter ? strdup(filter) : NULL };
	e->nr_evs++;
	if (!n[e->nr_evs - 1].system || !n[e->nr_evs - 1].event || (filter && !n[e->nr_evs - 1].filter))
		return tm_err(ENOMEM);
	return 0;
}

static int add_system(struct tm_events *e, const char *name, bool whole)
{
	struct sys_item *n;
	int i;

	for (i = 0; i < e->nr_sys; i++) {
		if (!strcmp(e->sys[i].system, name)) {
			e->sys[i].whole |= whole;
			return 0;
		}
	}
	n = realloc(e->sys, (e->nr_sys + 1) * sizeof(*n));
	if (!n)
		return tm_err(ENOMEM);
	e->sys = n;
	n[e->nr_sys] = (struct sys_item){ .system = strdup(name), .whole = whole };
	e->nr_sys++;
	return n[e->nr_sys - 1].system ? 0 : tm_err(ENOMEM);
}

/* Every event of @sname that matches @epat (NULL: all of them). Returns how many or -errno. */
static int add_matching(struct tm_events *e, const char *sname, const char *epat,
			const char *filter)
{
	char **events = tracefs_system_events(e->tracefs, sname);
	int i, found = 0, ret = 0;

	for (i = 0; events && events[i] && !ret; i++) {
		if (epat && fnmatch(epat, events[i], 0))
			continue;
		ret = add_event(e, sname, events[i], filter);
		if (!ret)
			ret = add_system(e, sname, !epat);
		found++;
	}
	tracefs_list_free(events);
	return ret ? ret : found;
}

/*
 * One selection as trace-cmd resolves -e: "system:event", "system" (all its
 * events), "event" (that event in every system), "all"; shell globs. The
 * ftrace system cannot be enabled: its events are always recorded.
 */
static int resolve_one(struct tm_events *e, char **systems, const struct tracemap_event_spec *sp)
{
	const char *spat = NULL, *epat;
	char *spec, *colon;
	int s, n, found = 0, ret = 0;

	if (!sp->name || !sp->name[0]) {
		tm_log(TRACEMAP_LOG_ERROR, "empty event selection: give system:event, system or "
		       "event (see available_events)");
		return tm_err(EINVAL);
	}
	spec = strdup(sp->name);
	if (!spec)
		return tm_err(ENOMEM);
	colon = strchr(spec, ':');
	epat = spec;
	if (colon) {
		*colon = '\0';
		spat = spec;
		epat = colon + 1;
		if (!*spat || !*epat) {
			tm_log(TRACEMAP_LOG_ERROR, "event '%s': empty %s name: give system:event, "
			       "or the system alone for all its events (e.g. sched:sched_switch "
			       "or sched)", sp->name, *spat ? "event" : "system");
			ret = tm_err(EINVAL);
			goto out;
		}
	}
	if (!spat && !strcmp(epat, "all")) {
		for (s = 0; systems[s] && ret >= 0; s++)
			if (strcmp(systems[s], "ftrace"))
				ret = add_matching(e, systems[s], NULL, sp->filter);
		found = 1;
		goto out;
	}
	for (s = 0; systems[s]; s++) {
		/* "name" alone: a system of that name, else events of that name */
		if (spat) {
			if (fnmatch(spat, systems[s], 0))
				continue;
			n = add_matching(e, systems[s], strcmp(epat, "*") ? epat : NULL,
					 sp->filter);
		} else {
			if (fnmatch(epat, systems[s], 0))
				continue;
			n = add_matching(e, systems[s], NULL, sp->filter);
		}
		if (n < 0) {
			ret = n;
			goto out;
		}
		found += n;
	}
	for (s = 0; !spat && !found && systems[s]; s++) {
		n = add_matching(e, systems[s], epat, sp->filter);
		if (n < 0) {
			ret = n;
			goto out;
		}
		found += n;
	}
out:
	if (ret >= 0 && !found) {
		if ((spat && !fnmatch(spat, "ftrace", 0)) ||
		    (!spat && !in_list(systems, epat) && !strcmp(epat, "ftrace")))
			tm_log(TRACEMAP_LOG_ERROR, "event '%s': ftrace events cannot be enabled; "
			       "they are always recorded (trace_marker writes arrive as "
			       "ftrace:print)", sp->name);
		else
			tm_log(TRACEMAP_LOG_ERROR, "event '%s': no such event (see %s/"
			       "available_events)", sp->name, e->tracefs);
		ret = tm_err(ENOENT);
	}
	free(spec);
	return ret < 0 ? ret : 0;
}

static int resolve(struct tm_events *e, const struct tracemap_event_spec *specs, int nr)
{
	char **systems;
	int i, ret = 0;

	systems = tracefs_event_systems(e->tracefs);
	if (!systems) {
		ret = tm_err(errno ? errno : ENOENT);
		tm_log(TRACEMAP_LOG_ERROR, "cannot list the events of %s/events: %s", e->tracefs,
		       strerror(-ret));
		return ret;
	}
	for (i = 0; i < nr && !ret; i++)
		ret = resolve_one(e, systems, &specs[i]);
	tracefs_list_free(systems);
	return ret;
}

/* ------------------------------------------------------------- changing */

/*
 * One event's file. tracefs_event_enable() takes regexes and rescans every
 * system per call (milliseconds each, and a system like syscalls has
 * hundreds of events), so single events go through their own file.
 */
static char *event_read(struct tm_events *e, const struct ev_item *ev, const char *what)
{
	char file[512];

	snprintf(file, sizeof(file), "events/%s/%s/%s", ev->system, ev->event, what);
	return tracefs_instance_file_read(e->inst, file, NULL);
}

static int event_write(struct tm_events *e, const struct ev_item *ev, const char *what,
		       const char *val)
{
	char file[512];

	snprintf(file, sizeof(file), "events/%s/%s/%s", ev->system, ev->event, what);
	return tracefs_instance_file_write(e->inst, file, val) < 0 ? tm_err(errno ? errno : EIO)
								    : 0;
}

static void enable_failed(struct tm_events *e, const char *what, int err)
{
	tm_log(TRACEMAP_LOG_ERROR, "cannot enable %s in %s: %s", what,
	       e->inst ? tracefs_instance_get_name(e->inst) : "the top-level buffer",
	       strerror(-err));
}

/* Written down, and the caller's hook, before evs[@i] is turned on: a refusal is an error */
static int tell_enable(struct tm_events *e, int i)
{
	int ret = tm_state_note(e->state, "event", "%s", e->names[i]);

	if (ret)
		return ret;
	if (!e->on_enable || !e->on_enable(e->ctx, e->names[i]))
		return 0;
	tm_log(TRACEMAP_LOG_ERROR, "stream: %s not enabled: the caller refused it", e->names[i]);
	return tm_err(ECANCELED);
}

static int enable_events(struct tm_events *e)
{
	char what[512], *v;
	bool any_off;
	int i, s, ret;

	for (i = 0; i < e->nr_evs; i++) {
		v = event_read(e, &e->evs[i], "enable");
		if (!v) {
			ret = tm_err(errno ? errno : EIO);
			tm_log(TRACEMAP_LOG_ERROR, "cannot read the state of %s:%s: %s",
			       e->evs[i].system, e->evs[i].event, strerror(-ret));
			return ret;
		}
		/* "0", "1", or with a '*' when soft-disabled by a trigger */
		e->evs[i].was_enabled = v[0] == '1';
		free(v);
	}
	/* whole systems in one write, where that changes only what was asked for */
	for (s = 0; s < e->nr_sys; s++) {
		if (!e->sys[s].whole)
			continue;
		any_off = false;
		for (i = 0; i < e->nr_evs; i++)
			if (!strcmp(e->evs[i].system, e->sys[s].system) && !e->evs[i].was_enabled)
				any_off = true;
		if (!any_off)
			continue;
		for (i = 0; i < e->nr_evs; i++) {
			if (strcmp(e->evs[i].system, e->sys[s].system) || e->evs[i].was_enabled)
				continue;
			ret = tell_enable(e, i);
			if (ret)
				return ret;
			e->evs[i].enabled = true;
		}
		if (tracefs_event_enable(e->inst, e->sys[s].system, NULL)) {
			ret = tm_err(errno ? errno : EIO);
			enable_failed(e, e->sys[s].system, ret);
			return ret;
		}
	}
	for (i = 0; i < e->nr_evs; i++) {
		if (e->evs[i].was_enabled || e->evs[i].enabled)
			continue;
		ret = tell_enable(e, i);
		if (ret)
			return ret;
		e->evs[i].enabled = true;
		ret = event_write(e, &e->evs[i], "enable", "1");
		if (ret) {
			snprintf(what, sizeof(what), "%s:%s", e->evs[i].system, e->evs[i].event);
			enable_failed(e, what, ret);
			return ret;
		}
	}
	return 0;
}

static void disable_events(struct tm_events *e)
{
	bool all_off;
	int i, s;

	for (s = 0; s < e->nr_sys; s++) {
		all_off = e->sys[s].whole;
		for (i = 0; i < e->nr_evs && all_off; i++)
			if (!strcmp(e->evs[i].system, e->sys[s].system) &&
			    (e->evs[i].was_enabled || !e->evs[i].enabled))
				all_off = false;
		if (!all_off)
			continue;
		if (tracefs_event_disable(e->inst, e->sys[s].system, NULL))
			tm_log(TRACEMAP_LOG_WARN, "cannot disable the events of %s again: %s",
			       e->sys[s].system, strerror(errno));
		for (i = 0; i < e->nr_evs; i++)
			if (!strcmp(e->evs[i].system, e->sys[s].system))
				e->evs[i].enabled = false;
	}
	for (i = 0; i < e->nr_evs; i++) {
		if (!e->evs[i].enabled)
			continue;
		if (event_write(e, &e->evs[i], "enable", "0"))
			tm_log(TRACEMAP_LOG_WARN, "cannot disable %s:%s again: %s",
			       e->evs[i].system, e->evs[i].event, strerror(errno));
		e->evs[i].enabled = false;
	}
}

/* "(user) && (own)", either part may be missing */
static char *compose_filter(const char *user, const char *own)
{
	char *f = NULL;
	int ret;

	if (user && own)
		ret = asprintf(&f, "(%s) && (%s)", user, own);
	else
		ret = asprintf(&f, "%s", user ? user : own);
	return ret < 0 ? NULL : f;
}

/*
 * Why the kernel refused a filter: it leaves the text and a
 * "parse_error: ..." line in the filter file. @buf is "" when it says none.
 */
static void filter_error(struct tm_events *e, const struct ev_item *ev, char *buf, size_t size)
{
	char *txt = event_read(e, ev, "filter"), *p;

	buf[0] = '\0';
	p = txt ? strstr(txt, "parse_error: ") : NULL;
	if (p) {
		p += strlen("parse_error: ");
		p[strcspn(p, "\n")] = '\0';
		snprintf(buf, size, "%s", p);
	}
	free(txt);
}

static int set_filters(struct tm_events *e, struct tm_self *self)
{
	char own[1024], *f, *old;
	struct ev_item *ev;
	bool has_own;
	int i, ret;

	for (i = 0; i < e->nr_evs; i++) {
		ev = &e->evs[i];
		has_own = self && tm_self_clause(self, ev->system, ev->event, own, sizeof(own)) > 0;
		if (!ev->filter && !has_own)
			continue;
		old = event_read(e, ev, "filter");
		if (!old) {
			ret = tm_err(errno ? errno : EIO);
			tm_log(TRACEMAP_LOG_ERROR, "cannot read the filter of %s:%s: %s",
			       ev->system, ev->event, strerror(-ret));
			return ret;
		}
		/* "none" when there is none; writing "0" clears */
		if (!strncmp(old, "none", 4)) {
			free(old);
			old = strdup("0");
			if (!old)
				return tm_err(ENOMEM);
		}
		old[strcspn(old, "\n")] = '\0';
		ev->old_filter = old;
		ret = tm_state_note(e->state, "filter", "%s:%s %s", ev->system, ev->event, old);
		if (ret)
			return ret;
		f = compose_filter(ev->filter, has_own ? own : NULL);
		if (!f)
			return tm_err(ENOMEM);
		ret = event_write(e, ev, "filter", f);
		if (ret) {
			char why[256];

			/* the kernel's reason, else what write() said */
			filter_error(e, ev, why, sizeof(why));
			if (why[0])
				ret = tm_err(EINVAL);
			if (ev->filter)
				tm_log(TRACEMAP_LOG_ERROR, "filter '%s' on %s:%s is not valid: %s "
				       "(the fields are in %s/events/%s/%s/format)", ev->filter,
				       ev->system, ev->event, why[0] ? why : strerror(-ret),
				       e->tracefs, ev->system, ev->event);
			else
				tm_log(TRACEMAP_LOG_ERROR, "cannot set the filter of %s:%s: %s",
				       ev->system, ev->event, strerror(-ret));
			free(f);
			return ret;
		}
		free(f);
	}
	return 0;
}

static void restore_filters(struct tm_events *e)
{
	int i;

	for (i = 0; i < e->nr_evs; i++) {
		if (!e->evs[i].old_filter)
			continue;
		if (event_write(e, &e->evs[i], "filter", e->evs[i].old_filter))
			tm_log(TRACEMAP_LOG_WARN, "cannot restore the filter of %s:%s to '%s': %s",
			       e->evs[i].system, e->evs[i].event, e->evs[i].old_filter,
			       strerror(errno));
		free(e->evs[i].old_filter);
		e->evs[i].old_filter = NULL;
	}
}

/*
 * A pid list file (set_event_pid, set_event_notrace_pid): read what is there
 * into *@old, then write @pids, after it when @append. Opening for writing
 * without append clears the list.
 */
static int set_pid_file(struct tm_events *e, const char *file, const int *pids, int nr,
			bool append, char **old)
{
	char num[16];
	int i, ret = 0;

	*old = tracefs_instance_file_read(e->inst, file, NULL);
	if (!*old) {
		*old = strdup("");
		if (!*old)
			return tm_err(ENOMEM);
	}
	/* one pid a line in the file, one line in the record */
	for (i = 0; (*old)[i]; i++)
		if ((*old)[i] == '\n')
			(*old)[i] = ' ';
	ret = tm_state_note(e->state, file, "%s", *old);
	if (ret)
		return ret;
	for (i = 0; i < nr && !ret; i++) {
		snprintf(num, sizeof(num), "%d", pids[i]);
		if (i == 0 && !append)
			ret = tracefs_instance_file_write(e->inst, file, num) < 0;
		else
			ret = tracefs_instance_file_append(e->inst, file, num) < 0;
	}
	if (ret) {
		ret = tm_err(errno ? errno : EIO);
		tm_log(TRACEMAP_LOG_ERROR, "cannot write pid %s to %s: %s", num, file,
		       strerror(-ret));
	}
	return ret;
}

static void restore_pid_file(struct tm_events *e, const char *file, char **old)
{
	char *p, *save = NULL;
	bool first = true;
	int ret = 0;

	if (!*old)
		return;
	for (p = strtok_r(*old, " \n", &save); p && !ret; p = strtok_r(NULL, " \n", &save)) {
		if (first)
			ret = tracefs_instance_file_write(e->inst, file, p) < 0;
		else
			ret = tracefs_instance_file_append(e->inst, file, p) < 0;
		first = false;
	}
	/* an empty list: opening with O_TRUNC clears it */
	if (first)
		ret = tracefs_instance_file_write(e->inst, file, "") < 0;
	if (ret)
		tm_log(TRACEMAP_LOG_WARN, "cannot restore %s: %s", file, strerror(errno));
	free(*old);
	*old = NULL;
}

static int set_fork(struct tm_events *e)
{
	int on = tracefs_option_is_enabled(e->inst, TRACEFS_OPTION_EVENT_FORK);

	if (on)
		return 0;
	if (tm_state_note(e->state, "event-fork", "0"))
		return -errno;
	e->old_fork = 0;
	if (tracefs_option_enable(e->inst, TRACEFS_OPTION_EVENT_FORK)) {
		tm_log(TRACEMAP_LOG_ERROR, "cannot turn on options/event-fork: %s",
		       strerror(errno));
		return tm_err(errno ? errno : EIO);
	}
	return 0;
}

static int make_names(struct tm_events *e)
{
	int i;

	e->names = calloc(e->nr_evs + 1, sizeof(*e->names));
	if (!e->names)
		return tm_err(ENOMEM);
	for (i = 0; i < e->nr_evs; i++)
		if (asprintf(&e->names[i], "%s:%s", e->evs[i].system, e->evs[i].event) < 0) {
			e->names[i] = NULL;
			return tm_err(ENOMEM);
		}
	return 0;
}

/*
 * Following what a stream's output causes takes sched_waking (self.c): it
 * is enabled with the switch and wakeup events asked for, when it was not
 * among them. Not for other selections: its events would take room in the
 * buffers (and be lost in overflows) where no loop of switches and wake-ups
 * can be printed.
 */
static int add_waking(struct tm_events *e)
{
	bool sched = false;
	char path[4096];
	int i;

	for (i = 0; i < e->nr_evs; i++) {
		if (strcmp(e->evs[i].system, "sched"))
			continue;
		if (!strcmp(e->evs[i].event, "sched_waking"))
			return 0;
		sched |= !strcmp(e->evs[i].event, "sched_switch") ||
			 !strncmp(e->evs[i].event, "sched_wakeup", 12);
	}
	if (!sched)
		return 0;
	snprintf(path, sizeof(path), "%s/events/sched/sched_waking", e->tracefs);
	if (access(path, F_OK))
		return 0;	/* an older kernel: sched_wakeup names the waker */
	i = add_event(e, "sched", "sched_waking", NULL);
	if (!i)
		e->evs[e->nr_evs - 1].helper = true;
	return i;
}

/* sched_waking on only for the check: its events are not the caller's */
static void hide_helper(struct tm_events *e, struct tm_self *self)
{
	int i;

	for (i = 0; i < e->nr_evs; i++)
		if (e->evs[i].helper && !e->evs[i].was_enabled)
			tm_self_hide_waking(self);
}

/* ------------------------------------------------------------ interface */

int tm_events_setup(struct tm_events **out, const char *tracefs, const char *instance,
		    struct tm_state *state, const struct tracemap_event_spec *specs, int nr_specs,
		    const int *pids, int nr_pids, bool pid_forks, struct tm_self *self,
		    tracemap_enable_fn on_enable, void *ctx)
{
	struct tm_events *e;
	int ret;

	*out = NULL;
	if (nr_specs < 0 || (nr_specs && !specs) || nr_pids < 0 || (nr_pids && !pids)) {
		tm_log(TRACEMAP_LOG_ERROR, "stream: events %p/%d or pids %p/%d do not match",
		       (const void *)specs, nr_specs, (const void *)pids, nr_pids);
		return tm_err(EINVAL);
	}
	if (!nr_specs && !nr_pids && !self)
		return 0;
	e = calloc(1, sizeof(*e));
	if (!e)
		return tm_err(ENOMEM);
	e->old_fork = -1;
	e->owner = tm_cur_pid;
	e->on_enable = on_enable;
	e->ctx = ctx;
	e->state = state;
	e->tracefs = strdup(tracefs);
	if (!e->tracefs) {
		ret = tm_err(ENOMEM);
		goto fail;
	}
	if (!tm_is_top(instance)) {
		e->inst = tracefs_instance_alloc(tracefs, instance);
		if (!e->inst) {
			ret = tm_err(errno ? errno : ENOMEM);
			tm_log(TRACEMAP_LOG_ERROR, "cannot open instance %s: %s", instance,
			       strerror(-ret));
			goto fail;
		}
	}
	ret = resolve(e, specs, nr_specs);
	if (!ret && self && tm_self_causes(self))
		ret = add_waking(e);
	if (!ret)
		ret = make_names(e);
	if (ret)
		goto fail;
	*out = e;
	/* from here on, every change is recorded for tm_events_restore() */
	if (nr_pids)
		ret = set_pid_file(e, "set_event_pid", pids, nr_pids, false, &e->old_pids);
	if (!ret && nr_pids && pid_forks)
		ret = set_fork(e);
	if (!ret && self) {
		const int *tids;
		int nr_tids;

		tids = tm_self_tids(self, &nr_tids);
		ret = set_pid_file(e, "set_event_notrace_pid", tids, nr_tids, true,
				   &e->old_notrace);
	}
	if (!ret)
		ret = set_filters(e, self);
	if (!ret)
		ret = enable_events(e);
	if (!ret && self)
		hide_helper(e, self);
	if (ret) {
		tm_events_restore(e);
		*out = NULL;
	}
	return ret;
fail:
	tm_events_restore(e);
	return ret;
}

const char *const *tm_events_names(const struct tm_events *e)
{
	static const char *const none[] = { NULL };

	return e && e->names ? (const char *const *)e->names : none;
}

void tm_events_restore(struct tm_events *e)
{
	int i;

	if (!e)
		return;
	/* in a forked child the events are still the parent's: only the memory goes */
	if (!tm_in_child(e->owner)) {
		disable_events(e);
		restore_filters(e);
		restore_pid_file(e, "set_event_notrace_pid", &e->old_notrace);
		restore_pid_file(e, "set_event_pid", &e->old_pids);
		if (e->old_fork == 0 &&
		    tracefs_option_disable(e->inst, TRACEFS_OPTION_EVENT_FORK))
			tm_log(TRACEMAP_LOG_WARN, "cannot turn options/event-fork off again: %s",
			       strerror(errno));
	}
	free(e->old_notrace);
	free(e->old_pids);
	for (i = 0; i < e->nr_evs; i++) {
		free(e->evs[i].system);
		free(e->evs[i].event);
		free(e->evs[i].filter);
		free(e->evs[i].old_filter);
	}
	for (i = 0; i < e->nr_sys; i++)
		free(e->sys[i].system);
	for (i = 0; e->names && e->names[i]; i++)
		free(e->names[i]);
	free(e->names);
	free(e->evs);
	free(e->sys);
	free(e->tracefs);
	tracefs_instance_free(e->inst);
	free(e);
}

/* ------------------------------------------------- without a stream */

struct tracemap_events {
	struct tm_events *e;		/* NULL: nothing was selected */
	struct tm_inst in;		/* the instance, and the record of what changed */
};

/**
 * tracemap_events_enable - enable events in an instance until they are restored
 * @instance: the instance name, or TRACEMAP_TOP_LEVEL; NULL is refused (EINVAL):
 *	a private instance would be removed before anything read it
 * @specs: the events, as tracemap_stream_opts.events takes them (filters included)
 * @nr_specs: how many; 0 gives a handle that changes nothing
 * @tracefs_dir: the tracefs mount; NULL to find it
 *
 * For front-ends that need events on without reading them through a stream
 * (a flight recorder waiting for a signal, a viewer): the same selection,
 * filters and put-back as a stream's opts.events, written down first for
 * tracemap_state_repair() (which it calls first). Nothing is changed when
 * a spec names no event.
 *
 * Returns the handle for tracemap_events_restore(), or NULL with errno set
 * after a message.
 */
struct tracemap_events *tracemap_events_enable(const char *instance,
					       const struct tracemap_event_spec *specs,
					       int nr_specs, const char *tracefs_dir)
{
	struct tracemap_events *ev;
	char tfs[PATH_MAX];
	int ret;

	if (tm_instance_required(instance, "tracemap_events_enable", "a private instance "
				 "would be gone before anything read its events")) {
		errno = EINVAL;
		return NULL;
	}
	ret = tracemap_tracefs_dir(tracefs_dir, tfs, sizeof(tfs));
	if (ret < 0) {
		errno = -ret;
		return NULL;
	}
	tracemap_state_repair(0);
	ev = calloc(1, sizeof(*ev));
	if (!ev) {
		tm_err(ENOMEM);
		return NULL;
	}
	ret = tm_inst_open(&ev->in, tfs, instance, false, NULL);
	if (!ret)
		ret = tm_events_setup(&ev->e, tfs, instance, ev->in.state, specs, nr_specs, NULL,
				      0, false, NULL, NULL, NULL);
	if (ret) {
		tm_inst_close(&ev->in);
		free(ev);
		errno = -ret;
		return NULL;
	}
	return ev;
}

/**
 * tracemap_events_restore - put back what tracemap_events_enable() changed
 * @ev: the handle (NULL-safe); freed
 */
void tracemap_events_restore(struct tracemap_events *ev)
{
	if (!ev)
		return;
	tm_events_restore(ev->e);
	tm_inst_close(&ev->in);
	free(ev);
}
