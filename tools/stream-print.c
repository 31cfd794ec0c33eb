// SPDX-License-Identifier: LGPL-2.1
/*
 * tracemap stream: the text printer. Each event as 'trace-cmd report'
 * prints it from a trace.dat (or "[CPU] TS SIZE" with --raw), with task
 * names learnt live.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <tracefs.h>

#include "tracemap.h"
#include "tracemap-tool.h"
#include "cmd-stream.h"

#define CMDLINE_RELOAD_NS	(100 * 1000000ULL)	/* saved_cmdlines: tasks known gone */
#define CMDLINE_RELOAD_MIN_NS	(1000000ULL)		/* ... a task new and gone */
#define STOP_CHECK_EVERY	4096			/* events per signal check in a round */

/* trace-cmd shows microseconds for these clocks and raw counts for the others */
const char *printer_time_format(struct tracefs_instance *inst)
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

int printer_init(struct printer *p, const char *tfs, struct tracefs_instance *inst, bool raw,
		 struct output *out)
{
	memset(p, 0, sizeof(*p));
	p->sfd = -1;
	p->out = out;
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
	p->tfmt = printer_time_format(inst);
	return 0;
}

void printer_free(struct printer *p)
{
	if (p->raw || !p->tep)
		return;
	trace_seq_destroy(&p->seq);
	tep_unload_plugins(p->plugins, p->tep);
	tep_free(p->tep);
}

/* "[CPU] TS SIZE": no formatting library on this path */
static int print_raw(struct printer *p, const struct tracemap_event *ev)
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
	return out_put(p->out, q, buf + sizeof(buf) - q, true);
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

static int print_event(struct printer *p, const struct tracemap_event *ev)
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
	return out_put(p->out, s->buffer, s->len, true);
}

int printer_on_event(void *ctx, const struct tracemap_event *ev)
{
	struct printer *p = ctx;

	/*
	 * The final drain's bound: what is not taken stays in the buffers, what
	 * was taken (this event, the held rest: tracemap_cpu_stats()) is lost.
	 */
	if (p->until && now_ns() >= p->until) {
		p->stop = true;
		p->out->unwritten++;
		return -EINTR;
	}
	/* the output ended (closed, full disk, ...): stop delivering; the event is counted */
	if (p->raw ? print_raw(p, ev) : print_event(p, ev))
		return -EPIPE;
	/* a reader far behind has long rounds: look for Ctrl-C inside them too */
	if (++p->since_check >= STOP_CHECK_EVERY && p->sfd >= 0) {
		p->since_check = 0;
		if (stop_requested(p->sfd)) {
			p->stop = true;
			p->signalled = true;
			return -EINTR;
		}
	}
	return 0;
}

int printer_on_lost(void *ctx, int cpu, long long lost)
{
	struct printer *p = ctx;
	char line[64];
	int n;

	if (lost > 0)
		n = snprintf(line, sizeof(line), "CPU:%d [%lld EVENTS DROPPED]\n", cpu, lost);
	else
		n = snprintf(line, sizeof(line), "CPU:%d [EVENTS DROPPED]\n", cpu);
	return out_put(p->out, line, n, false) ? -EPIPE : 0;
}
