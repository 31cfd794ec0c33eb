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

/*
 * The formatter for @inst's trace_clock: the library picks the time column
 * trace-cmd report shows for it. Returns 0, or -1 after a message.
 */
int printer_use_clock(struct printer *p, struct tracefs_instance *inst)
{
	struct tracemap_format_opts fo = { .sz = sizeof(fo) };
	char *clock = tracefs_get_clock(inst);
	struct tracemap_format *f;

	fo.clock = clock;
	f = tracemap_format_new(p->tep, &fo);
	free(clock);
	if (!f) {
		tool_err("cannot set up the text formatter: %s", strerror(errno));
		return -1;
	}
	tracemap_format_free(p->fmt);
	p->fmt = f;
	return 0;
}

int printer_init(struct printer *p, const char *tfs, struct tracefs_instance *inst, bool raw)
{
	memset(p, 0, sizeof(*p));
	p->sfd = -1;
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
	return printer_use_clock(p, inst);
}

void printer_free(struct printer *p)
{
	if (p->raw || !p->tep)
		return;
	tracemap_format_free(p->fmt);
	p->fmt = NULL;
	tep_unload_plugins(p->plugins, p->tep);
	tep_free(p->tep);
}

/* "[CPU] TS SIZE": no formatting library on this path */
static void print_raw(const struct tracemap_event *ev)
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
	fwrite(q, 1, buf + sizeof(buf) - q, stdout);
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

static void print_event(struct printer *p, const struct tracemap_event *ev)
{
	struct tep_record rec;
	const char *line;
	int pid, n;

	tracemap_event_to_record(ev, &rec);
	pid = tep_data_pid(p->tep, &rec);
	if (p->exec_event && ev->size >= 2 &&
	    *(const unsigned short *)ev->data == p->exec_event->id)
		exec_comm(p, p->exec_event, &rec, pid);
	else if (pid > 0 && pid != p->known_pid) {
		/* libtraceevent never forgets a pid: one lookup per run of its events */
		if (tep_is_pid_registered(p->tep, pid))
			p->known_pid = pid;
		else
			learn_comm(p, pid);
	}

	/* the line of trace-cmd report 3.1.6, from the library's one formatter */
	n = tracemap_format_line(p->fmt, ev, &line);
	if (n > 0)
		fwrite(line, 1, n, stdout);
}

int printer_on_event(void *ctx, const struct tracemap_event *ev)
{
	struct printer *p = ctx;

	if (p->raw)
		print_raw(ev);
	else
		print_event(p, ev);
	if (ferror(stdout))
		return -EPIPE;
	/* a reader far behind has long rounds: look for Ctrl-C inside them too */
	if (++p->since_check >= STOP_CHECK_EVERY && p->sfd >= 0) {
		p->since_check = 0;
		if (stop_requested(p->sfd)) {
			p->stop = true;
			return -EINTR;
		}
	}
	return 0;
}

void printer_print_stats(const struct printer *p)
{
	struct tracemap_format_stats st;

	if (p->raw || !p->fmt || tracemap_format_stats(p->fmt, &st, sizeof(st)))
		return;
	fprintf(stderr, "tracemap: text: %llu events, %llu through libtraceevent (%u of %u event types)\n",
		(unsigned long long)st.events, (unsigned long long)st.fallback_events,
		st.types_fallback, st.types_fallback + st.types_compiled);
}

int printer_on_lost(void *ctx, int cpu, long long lost)
{
	if (lost > 0)
		printf("CPU:%d [%lld EVENTS DROPPED]\n", cpu, lost);
	else
		printf("CPU:%d [EVENTS DROPPED]\n", cpu);
	return ferror(stdout) ? -EPIPE : 0;
}
