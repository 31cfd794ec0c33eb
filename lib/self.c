// SPDX-License-Identifier: LGPL-2.1-only
/*
 * The events a stream causes itself (TRACEMAP_STREAM_NO_SELF).
 *
 * Its own: those its threads write (common_pid, but not in an interrupt
 * that came while they ran), and the sched events that name them in their
 * fields. Waking the reader writes sched_waking and sched_wakeup from
 * whatever runs at the time, most often the idle task, and its switches in
 * and out name it as next_pid and prev_pid: a common_pid test alone
 * (set_event_notrace_pid) leaves almost all of them in. Every switch that
 * names it is left out, also one from a task that blocks as it gets the CPU,
 * as trace-cmd's filters on prev_pid and next_pid do (left in, they were
 * a good part of an idle system's lines: bench/README.md).
 *
 * Caused by its output: printing a line to a terminal wakes the tty's flush
 * worker, which wakes the terminal's reader (sshd, tmux, an xterm), and
 * their wake-ups and switches would be printed in turn, a feedback loop
 * (figures in bench/README.md). A task woken by one of our threads, or by a task so woken, is
 * "caused" until it blocks (a sched_switch away from it in a sleeping state,
 * or a wake-up by anyone else). Left out: its wake-ups, its switches away,
 * the switches to it from the idle task or from a task it preempts, and
 * what it writes in task context but for trace_marker writes (the ftrace
 * system), which a program makes on purpose. Who wakes whom is only in
 * sched_waking (sched_wakeup is often written by the idle task of the CPU
 * the task was queued on), so the stream enables sched_waking for the check
 * when no one else did and leaves its events out (tm_self_hide_waking()). A
 * wake-up made in an interrupt is not the interrupted task's doing. Not
 * followed when the stream traces chosen tasks (opts.pids): the kernel then
 * records nothing else.
 *
 * Two layers. In the kernel, what the stream sets up itself: its threads in
 * set_event_notrace_pid and a "pid != tid" clause in the filters of the
 * switch and wakeup events it enables, so that these events are never
 * written and never wake the reader. In user space, every delivered event
 * is checked against the same rules and the causes above, for events
 * enabled by someone else and threads started after the stream was opened
 * (the thread list is read again at most every REFRESH_NS).
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
#define FORMAT_MAX	16384	/* a sched event's format file */
#define MAX_CAUSED	64	/* caused tasks remembered; the oldest is forgotten */
/* struct trace_entry's flags: written in an interrupt (TRACE_FLAG_HARDIRQ, _SOFTIRQ, _NMI) */
#define IRQ_FLAGS	(0x08 | 0x10 | 0x40)
/* sched_switch's prev_state: the task state bits below TASK_REPORT_MAX ("+": preempted) */
#define SLEEP_STATES	0xff

/* the fields of a sched event that name a task */
static const char *const pid_fields[MAX_PID_FIELDS] = { "pid", "prev_pid", "next_pid" };

enum kind { OTHER, WAKING, WAKEUP, SWITCH };

struct self_event {
	char *name;
	int id;
	int nr;
	enum kind kind;
	unsigned int off[MAX_PID_FIELDS];
	const char *field[MAX_PID_FIELDS];
	unsigned int state_off;		/* SWITCH: prev_state */
	unsigned int state_size;
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
	bool causes;			/* follow the tasks our output wakes */
	bool hide_waking;		/* sched_waking is enabled for the check alone */
	int caused[MAX_CAUSED];
	unsigned int nr_caused;
	unsigned int next_caused;	/* the slot to reuse when full */
	int marker_ids[4];		/* ftrace print, raw_data, bprint, bputs; -1: none */
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

/* The id of @system:@event from its id file; -1 when there is none. */
static int event_id(const char *tracefs, const char *system, const char *event)
{
	char path[4096], buf[32];

	snprintf(path, sizeof(path), "%s/events/%s/%s/id", tracefs, system, event);
	if (tm_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	return atoi(buf);
}

static enum kind kind_of(const char *name)
{
	if (!strcmp(name, "sched_waking"))
		return WAKING;
	if (!strcmp(name, "sched_wakeup") || !strcmp(name, "sched_wakeup_new"))
		return WAKEUP;
	if (!strcmp(name, "sched_switch"))
		return SWITCH;
	return OTHER;
}

/* @ev's fields that name a task; false when it has none. */
static bool task_fields(struct self_event *se, struct tep_event *ev)
{
	struct tep_format_field *f;
	int k;

	for (k = 0; k < MAX_PID_FIELDS; k++) {
		f = tep_find_field(ev, pid_fields[k]);
		if (!f || f->size != 4 || (f->flags & TEP_FIELD_IS_ARRAY))
			continue;
		se->off[se->nr] = f->offset;
		se->field[se->nr] = pid_fields[k];
		se->nr++;
	}
	f = tep_find_field(ev, "prev_state");
	if (f && (f->size == 4 || f->size == 8)) {
		se->state_off = f->offset;
		se->state_size = f->size;
	}
	return se->nr > 0;
}

/*
 * Field offsets of the sched events that name tasks, from their format
 * files alone: tracefs_local_events_system() would also read kallsyms,
 * printk_formats and saved_cmdlines at every start.
 */
static int load_sched(struct tm_self *self, const char *tracefs)
{
	char **names = tracefs_system_events(tracefs, "sched");
	struct tep_handle *tep = tep_alloc();
	struct self_event *se;
	char path[4096], *fmt = NULL;
	struct tep_event *ev;
	int i, n, len, ret = 0;

	if (!tep) {
		tracefs_list_free(names);
		return tm_err(ENOMEM);
	}
	n = tracefs_list_size(names);
	self->evs = calloc(n > 0 ? n : 1, sizeof(*self->evs));
	fmt = malloc(FORMAT_MAX);
	if (!self->evs || !fmt) {
		ret = tm_err(ENOMEM);
		goto out;
	}
	/* no sched events: nothing names a task */
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/events/sched/%s/format", tracefs, names[i]);
		len = tm_read_file(path, fmt, FORMAT_MAX);
		ev = NULL;
		if (len <= 0 || tep_parse_format(tep, &ev, fmt, len, "sched") || !ev)
			continue;
		se = &self->evs[self->nr_evs];
		if (!task_fields(se, ev))
			continue;
		se->id = ev->id;
		se->kind = kind_of(ev->name);
		se->name = strdup(ev->name);
		if (!se->name) {
			ret = tm_err(ENOMEM);
			goto out;
		}
		self->nr_evs++;
	}
out:
	free(fmt);
	tracefs_list_free(names);
	tep_free(tep);
	if (ret < 0)
		return ret;
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

/**
 * tm_self_new - the own-event rules of this process
 * @tracefs: the tracefs mount
 * @causes: also leave out what the stream's output causes (see the top)
 */
struct tm_self *tm_self_new(const char *tracefs, bool causes)
{
	static const char *const markers[] = { "print", "raw_data", "bprint", "bputs" };
	struct tm_self *self = calloc(1, sizeof(*self));
	size_t i;
	int ret;

	if (!self) {
		tm_err(ENOMEM);
		return NULL;
	}
	self->causes = causes;
	self->cap_tids = 16;
	self->tids = calloc(self->cap_tids, sizeof(*self->tids));
	if (!self->tids) {
		free(self);
		tm_err(ENOMEM);
		return NULL;
	}
	read_tids(self);
	self->refreshed = tm_now_ns();
	for (i = 0; i < sizeof(markers) / sizeof(markers[0]); i++)
		self->marker_ids[i] = event_id(tracefs, "ftrace", markers[i]);
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

bool tm_self_causes(const struct tm_self *self)
{
	return self->causes;
}

void tm_self_hide_waking(struct tm_self *self)
{
	self->hide_waking = true;
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
	return kind_of(event) != OTHER;
}

static int64_t prev_state(const struct self_event *se, const struct tracemap_event *ev)
{
	int64_t state = 0;
	int32_t s32;

	if (se->state_size == 8) {
		memcpy(&state, (const unsigned char *)ev->data + se->state_off, 8);
	} else if (se->state_size == 4) {
		memcpy(&s32, (const unsigned char *)ev->data + se->state_off, 4);
		state = s32;
	}
	return state;
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
	 * Except in sched_waking when causes are followed: our wakeups of
	 * other tasks are how the check learns what our output wakes.
	 */
	for (k = se->kind == WAKING && self->causes ? 0 : -1; k < se->nr; k++) {
		for (i = 0; i < self->nr_tids; i++) {
			/* an interrupt of ours wakes a task: the system's news */
			if (k < 0)
				len += snprintf(buf + len, len < size ? size - len : 0,
						"%s(common_pid != %d || common_flags & %d)",
						len ? " && " : "", self->tids[i], IRQ_FLAGS);
			else
				len += snprintf(buf + len, len < size ? size - len : 0,
						"%s%s != %d", len ? " && " : "", se->field[k],
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

static int caused_slot(const struct tm_self *self, int pid)
{
	unsigned int i;

	if (pid <= 0)
		return -1;
	for (i = 0; i < self->nr_caused; i++)
		if (self->caused[i] == pid)
			return (int)i;
	return -1;
}

static bool is_caused(const struct tm_self *self, int pid)
{
	return caused_slot(self, pid) >= 0;
}

static void set_caused(struct tm_self *self, int pid)
{
	if (pid <= 0 || is_own(self, pid) || is_caused(self, pid))
		return;
	if (self->nr_caused < MAX_CAUSED) {
		self->caused[self->nr_caused++] = pid;
		return;
	}
	self->caused[self->next_caused] = pid;
	self->next_caused = (self->next_caused + 1) % MAX_CAUSED;
}

static void clear_caused(struct tm_self *self, int pid)
{
	int i = caused_slot(self, pid);

	if (i < 0)
		return;
	self->caused[i] = self->caused[--self->nr_caused];
	if (self->next_caused >= self->nr_caused)
		self->next_caused = 0;
}

static int32_t field32(const struct tracemap_event *ev, unsigned int off)
{
	int32_t v = -1;

	if (off + sizeof(v) <= ev->size)
		memcpy(&v, (const unsigned char *)ev->data + off, sizeof(v));
	return v;
}

static bool is_marker(const struct tm_self *self, int type)
{
	size_t i;

	for (i = 0; i < sizeof(self->marker_ids) / sizeof(self->marker_ids[0]); i++)
		if (self->marker_ids[i] == type)
			return true;
	return false;
}

/*
 * Follow what our output causes (see the top) through @se's event; true
 * when the event is part of it.
 */
static bool caused_event(struct tm_self *self, const struct self_event *se,
			 const struct tracemap_event *ev, int waker, bool in_task)
{
	int64_t state;
	int task, next;
	bool ret;

	switch (se->kind) {
	case WAKING:
	case WAKEUP:
		task = field32(ev, se->off[0]);
		if (in_task && (is_own(self, waker) || is_caused(self, waker))) {
			set_caused(self, task);
			return true;
		}
		/* woken by anyone else: it had blocked, and this stint is not ours */
		if (se->kind == WAKING)
			clear_caused(self, task);
		/* sched_wakeup from the idle task of another CPU: the waking told */
		return is_caused(self, task);
	case SWITCH:
		task = field32(ev, se->off[0]);
		next = se->nr > 1 ? field32(ev, se->off[1]) : -1;
		state = prev_state(se, ev);
		/*
		 * A caused task leaves the CPU, or takes it from the idle task or
		 * from one it preempts; a task that blocks is the system's news.
		 */
		ret = is_caused(self, task) ||
		      (is_caused(self, next) && (task == 0 || !(state & SLEEP_STATES)));
		if (state & SLEEP_STATES)
			clear_caused(self, task);
		return ret;
	default:
		return false;
	}
}

enum tm_self_kind tm_self_match(struct tm_self *self, const struct tracemap_event *ev)
{
	const unsigned char *p = ev->data;
	const struct self_event *se = NULL;
	bool own = false, in_task;
	int32_t pid, waker;
	uint16_t type;
	int k;

	/* struct trace_entry: u16 type, u8 flags, u8 preempt_count, s32 pid */
	if (ev->size < 8)
		return TM_SELF_NONE;
	memcpy(&type, p, sizeof(type));
	memcpy(&waker, p + 4, sizeof(waker));
	in_task = !(p[2] & IRQ_FLAGS);
	if (type < self->nr_types && self->ev_of_type[type])
		se = &self->evs[self->ev_of_type[type] - 1];
	if (se && se->state_size && se->state_off + se->state_size > ev->size)
		se = NULL;	/* too short for its format: no state to read */
	if (se) {
		for (k = 0; k < se->nr && !own; k++) {
			pid = field32(ev, se->off[k]);
			own = is_own(self, pid);
		}
		if (self->causes && caused_event(self, se, ev, waker, in_task))
			own = true;
		/* on only for this check: not the caller's, whoever it names */
		if (se->kind == WAKING && self->hide_waking)
			return TM_SELF_HELPER;
	}
	/* an interrupt that came while we ran is not ours */
	if (in_task && is_own(self, waker))
		return TM_SELF_OWN;
	/* what a caused task does until it blocks, but for its own trace_marker writes */
	if (self->causes && in_task && is_caused(self, waker) && !is_marker(self, type))
		own = true;
	return own ? TM_SELF_OWN : TM_SELF_NONE;
}
