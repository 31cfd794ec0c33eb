// SPDX-License-Identifier: GPL-2.0-only
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

/*
 * The formatter for @inst's trace_clock: the library picks the time column
 * trace-cmd report shows for it. Returns 0, or -1 after a message.
 */
static int printer_use_clock(struct printer *p, struct tracefs_instance *inst)
{
	struct tracemap_format_opts fo = { .sz = sizeof(fo) };
	char *clock = tracefs_get_clock(inst);
	struct tracemap_format *f;

	fo.clock = clock;
	/* function_graph as trace-cmd report prints it: an entry waits for the next event */
	fo.flags = TRACEMAP_FORMAT_FGRAPH;
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

void printer_init(struct printer *p, bool raw, struct output *out)
{
	memset(p, 0, sizeof(*p));
	p->sfd = -1;
	p->raw = raw;
	p->out = out;
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
	return printer_use_clock(p, inst);
}

void printer_free(struct printer *p)
{
	if (p->raw || !p->tep)
		return;
	tracemap_format_free(p->fmt);
	p->fmt = NULL;
	tep_unload_plugins(p->plugins, p->tep);
	p->tep = NULL;
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

static int print_event(struct printer *p, const struct tracemap_event *ev)
{
	const char *line, *comm;
	int n, pid;

	/*
	 * The library learns the name of a task it does not know yet
	 * (saved_cmdlines, /proc, exec). For a task it knows, the call only
	 * looks the name up: not again for the events of the same task that
	 * follow (the formatter keeps the name itself).
	 */
	pid = tracemap_event_pid(p->stream, ev);
	if (pid != p->comm_pid || !p->comm_known) {
		comm = tracemap_event_comm(p->stream, ev);
		p->comm_pid = pid;
		p->comm_known = comm && strcmp(comm, "<...>");
	}
	/*
	 * The line of trace-cmd report 3.1.6, from the library's one formatter;
	 * none yet for a funcgraph_entry it holds until the next event.
	 */
	n = tracemap_format_line(p->fmt, ev, &line);
	p->held_since = n == 0 ? tracemap_now_ns() : 0;
	if (n <= 0)
		return 0;
	return out_put(p->out, line, n, true);
}

int printer_flush_held(struct printer *p)
{
	const char *line;
	int n;

	if (!p->held_since)
		return 0;
	p->held_since = 0;
	n = tracemap_format_flush(p->fmt, &line);
	if (n <= 0)
		return 0;
	return out_put(p->out, line, n, true);
}

int printer_hold_timeout(const struct printer *p, uint64_t hold_ns)
{
	uint64_t now, due;

	if (!p->held_since)
		return -1;
	now = tracemap_now_ns();
	due = p->held_since + hold_ns;
	return due <= now ? 0 : (int)((due - now + 999999) / 1000000);
}

int printer_idle(struct printer *p, uint64_t hold_ns)
{
	if (!p->held_since || tracemap_now_ns() - p->held_since < hold_ns)
		return 0;
	return printer_flush_held(p);
}

int printer_on_event(void *ctx, const struct tracemap_event *ev)
{
	struct printer *p = ctx;

	/*
	 * The final drain's bound: what is not taken stays in the buffers, what
	 * was taken (this event, the held rest: tracemap_cpu_stats()) is lost.
	 */
	if (p->until && tracemap_now_ns() >= p->until) {
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
	struct printer *p = ctx;
	char line[64];
	int n;

	/* a held entry came before the loss: its exit may be among the lost events */
	if (printer_flush_held(p))
		return -EPIPE;
	if (lost > 0)
		n = snprintf(line, sizeof(line), "CPU:%d [%lld EVENTS DROPPED]\n", cpu, lost);
	else
		n = snprintf(line, sizeof(line), "CPU:%d [EVENTS DROPPED]\n", cpu);
	return out_put(p->out, line, n, false) ? -EPIPE : 0;
}
