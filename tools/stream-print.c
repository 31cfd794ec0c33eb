// SPDX-License-Identifier: LGPL-2.1
/*
 * tracemap stream: the text printer. Each event as 'trace-cmd report'
 * prints it from a trace.dat (or "[CPU] TS SIZE" with --raw), with the
 * stream's event formats and the task names the library learns live.
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

#define STOP_CHECK_EVERY	4096			/* events per signal check in a round */
#define DRAIN_CHECK_EVERY	256			/* events per clock check in the final drain */

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

void printer_init(struct printer *p, bool raw)
{
	memset(p, 0, sizeof(*p));
	p->sfd = -1;
	p->raw = raw;
}

int printer_attach(struct printer *p, struct tracemap_stream *s, struct tracefs_instance *inst)
{
	p->stream = s;
	if (p->raw)
		return 0;
	/* the library explains a failure */
	p->tep = tracemap_stream_tep(s);
	if (!p->tep)
		return -1;
	/* the plugins change how some events print (sched_switch, ...), as for trace-cmd */
	p->plugins = tep_load_plugins(p->tep);
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
	p->tep = NULL;
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

static void print_event(struct printer *p, const struct tracemap_event *ev)
{
	static const char spaces[] = "                    "; /* 20 */
	struct trace_seq *s = &p->seq;
	struct tep_record rec;
	struct tep_event *e;
	const char *name;
	int len;

	/* the library learns the task's name (saved_cmdlines, /proc, exec) */
	tracemap_event_comm(p->stream, ev);
	tracemap_event_to_record(ev, &rec);
	e = tep_find_event_by_record(p->tep, &rec);

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
	fwrite(s->buffer, 1, s->len, stdout);
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
	/* the final drain ends on time, also in the middle of a long round */
	if (p->until && !(p->since_check % DRAIN_CHECK_EVERY) && now_ns() >= p->until)
		return -ETIME;
	return 0;
}

int printer_on_lost(void *ctx, int cpu, long long lost)
{
	if (lost > 0)
		printf("CPU:%d [%lld EVENTS DROPPED]\n", cpu, lost);
	else
		printf("CPU:%d [EVENTS DROPPED]\n", cpu);
	return ferror(stdout) ? -EPIPE : 0;
}
