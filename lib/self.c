// SPDX-License-Identifier: LGPL-2.1
/*
 * The events a stream causes itself (TRACEMAP_STREAM_NO_SELF): those its own
 * threads write (common_pid), and the sched events that name them in their
 * fields. Waking the reader writes sched_waking and sched_wakeup from
 * whatever runs at the time, most often the idle task, and its switches in
 * and out name it as next_pid and prev_pid: a common_pid test alone
 * (set_event_notrace_pid) leaves almost all of them in.
 *
 * Two layers. In the kernel, what the stream sets up itself: its threads in
 * set_event_notrace_pid and a "pid != tid" clause in the filters of the
 * switch and wakeup events it enables, so that these events are never
 * written and never wake the reader. In user space, every delivered event is checked against
 * the same rules, for events enabled by someone else and threads started
 * after the stream was opened (the thread list is read again at most every
 * REFRESH_NS).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event-parse.h>
#include <tracefs.h>

#include "tracemap-local.h"

#define REFRESH_NS	(100 * 1000000ULL)
#define MAX_PID_FIELDS	3

/* the fields of a sched event that name a task */
static const char *const pid_fields[MAX_PID_FIELDS] = { "pid", "prev_pid", "next_pid" };

struct self_event {
	char *name;
	int id;
	int nr;
	unsigned int off[MAX_PID_FIELDS];
	const char *field[MAX_PID_FIELDS];
};

struct tm_self {
	int *tids;
	int nr_tids;
	int cap_tids;
	uint64_t refreshed;
	struct self_event *evs;		/* sched events with task fields */
	int nr_evs;
	int *ev_of_type;		/* index + 1 in evs by event id, 0: none */
	int nr_types;			/* ids ev_of_type covers */
};

static int read_tids(struct tm_self *self)
{
	struct dirent *d;
	int *n, tid;
	DIR *dir;

	dir = opendir("/proc/self/task");
	if (!dir) {
		/* no /proc: this thread at least */
		self->tids[0] = gettid();
		self->nr_tids = 1;
		return 0;
	}
	self->nr_tids = 0;
	while ((d = readdir(dir))) {
		tid = atoi(d->d_name);
		if (tid <= 0)
			continue;
		if (self->nr_tids == self->cap_tids) {
			n = realloc(self->tids, 2 * self->cap_tids * sizeof(*n));
			if (!n)
				break;
			self->tids = n;
			self->cap_tids *= 2;
		}
		self->tids[self->nr_tids++] = tid;
	}
	closedir(dir);
	return 0;
}

/* Field offsets of the sched events that name tasks, from their formats. */
static int load_sched(struct tm_self *self, const char *tracefs)
{
	const char *systems[] = { "sched", NULL };
	struct tep_format_field *f;
	struct tep_event **all, *ev;
	struct self_event *se;
	struct tep_handle *tep;
	int i, k, n;

	tep = tracefs_local_events_system(tracefs, systems);
	if (!tep)
		return 0;	/* no sched events: nothing names a task */
	n = tep_get_events_count(tep);
	all = tep_list_events(tep, TEP_EVENT_SORT_ID);
	self->evs = calloc(n ? n : 1, sizeof(*self->evs));
	if (!self->evs) {
		tep_free(tep);
		return tm_err(ENOMEM);
	}
	for (i = 0; all && i < n; i++) {
		ev = all[i];
		se = &self->evs[self->nr_evs];
		for (k = 0; k < MAX_PID_FIELDS; k++) {
			f = tep_find_field(ev, pid_fields[k]);
			if (!f || f->size != 4 || (f->flags & TEP_FIELD_IS_ARRAY))
				continue;
			se->off[se->nr] = f->offset;
			se->field[se->nr] = pid_fields[k];
			se->nr++;
		}
		if (!se->nr)
			continue;
		se->id = ev->id;
		se->name = strdup(ev->name);
		if (!se->name) {
			tep_free(tep);
			return tm_err(ENOMEM);
		}
		self->nr_evs++;
	}
	tep_free(tep);
	/* every event is checked: its type finds its entry without a search */
	for (i = 0; i < self->nr_evs; i++)
		if (self->evs[i].id >= self->nr_types)
			self->nr_types = self->evs[i].id + 1;
	self->ev_of_type = calloc(self->nr_types ? self->nr_types : 1, sizeof(int));
	if (!self->ev_of_type)
		return tm_err(ENOMEM);
	for (i = 0; i < self->nr_evs; i++)
		self->ev_of_type[self->evs[i].id] = i + 1;
	return 0;
}

struct tm_self *tm_self_new(const char *tracefs)
{
	struct tm_self *self = calloc(1, sizeof(*self));
	int ret;

	if (!self) {
		tm_err(ENOMEM);
		return NULL;
	}
	self->cap_tids = 16;
	self->tids = calloc(self->cap_tids, sizeof(*self->tids));
	if (!self->tids) {
		free(self);
		tm_err(ENOMEM);
		return NULL;
	}
	read_tids(self);
	self->refreshed = tm_now_ns();
	ret = load_sched(self, tracefs);
	if (ret) {
		tm_self_free(self);
		errno = -ret;
		return NULL;
	}
	return self;
}

void tm_self_free(struct tm_self *self)
{
	int i;

	if (!self)
		return;
	for (i = 0; i < self->nr_evs; i++)
		free(self->evs[i].name);
	free(self->evs);
	free(self->ev_of_type);
	free(self->tids);
	free(self);
}

const int *tm_self_tids(const struct tm_self *self, int *nr)
{
	*nr = self->nr_tids;
	return self->tids;
}

void tm_self_refresh(struct tm_self *self, uint64_t now)
{
	if (now - self->refreshed < REFRESH_NS)
		return;
	self->refreshed = now;
	read_tids(self);
}

/*
 * The events the kernel is told to drop: those that wake or switch to a
 * task and are written by another one. Each filter write waits for an RCU
 * grace period in the kernel (slow on a loaded machine), so the other sched
 * events that name a task (sched_stat_runtime, sched_process_exit, ...),
 * written by that task itself, are left to set_event_notrace_pid and the
 * check as they arrive.
 */
static bool wakes_or_switches(const char *event)
{
	return !strcmp(event, "sched_switch") || !strcmp(event, "sched_waking") ||
	       !strcmp(event, "sched_wakeup") || !strcmp(event, "sched_wakeup_new");
}

int tm_self_clause(const struct tm_self *self, const char *system, const char *event,
		   char *buf, size_t size)
{
	const struct self_event *se = NULL;
	size_t len = 0;
	int i, k;

	if (strcmp(system, "sched") || !wakes_or_switches(event))
		return 0;
	for (i = 0; i < self->nr_evs && !se; i++)
		if (!strcmp(self->evs[i].name, event))
			se = &self->evs[i];
	if (!se)
		return 0;
	buf[0] = '\0';
	/*
	 * common_pid too: set_event_notrace_pid decides a wakeup by the task
	 * woken, not by the one that wakes it (our wakeups of a pipe's reader).
	 */
	for (k = -1; k < se->nr; k++) {
		for (i = 0; i < self->nr_tids; i++) {
			len += snprintf(buf + len, len < size ? size - len : 0, "%s%s != %d",
					len ? " && " : "", k < 0 ? "common_pid" : se->field[k],
					self->tids[i]);
			if (len >= size)
				return tm_err(ENOSPC);
		}
	}
	return (int)len;
}

static bool is_own(const struct tm_self *self, int pid)
{
	int i;

	if (pid <= 0)
		return false;
	for (i = 0; i < self->nr_tids; i++)
		if (self->tids[i] == pid)
			return true;
	return false;
}

bool tm_self_match(const struct tm_self *self, const struct tracemap_event *ev)
{
	const unsigned char *p = ev->data;
	const struct self_event *se;
	uint16_t type;
	int32_t pid;
	int k;

	/* struct trace_entry: u16 type, u8 flags, u8 preempt_count, s32 pid */
	if (ev->size < 8)
		return false;
	memcpy(&pid, p + 4, sizeof(pid));
	if (is_own(self, pid))
		return true;
	memcpy(&type, p, sizeof(type));
	if (type >= self->nr_types || !self->ev_of_type[type])
		return false;
	se = &self->evs[self->ev_of_type[type] - 1];
	for (k = 0; k < se->nr; k++) {
		if (se->off[k] + 4 > ev->size)
			continue;
		memcpy(&pid, p + se->off[k], sizeof(pid));
		if (is_own(self, pid))
			return true;
	}
	return false;
}
