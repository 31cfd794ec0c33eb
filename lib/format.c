// SPDX-License-Identifier: LGPL-2.1-only
/*
 * The text formatter: the lines 'trace-cmd report' 3.1.6 prints, byte for
 * byte what libtraceevent's tep_print_event() writes with the same plugins
 * loaded, without parsing a format string or calling vsnprintf per event.
 *
 * Each event type is compiled once, on its first event, from what
 * libtraceevent already parsed (the print format and its argument tree) into
 * a list of operations: literal text, numbers read from fields or computed
 * from them, strings, flags and symbols, hex dumps. Types that use anything
 * the compiler does not know (print helpers, %pI/%pM/%pU, bitmasks, bprint,
 * plugin handlers other than sched's) are formatted by tep_print_event(),
 * and counted.
 *
 * Where libtraceevent reads outside the record (a length or index taken from
 * the data), the compiled program stays inside it and counts the event as
 * clamped: the output differs from libtraceevent's only there.
 */
#include "format-local.h"

static struct prog *prog_of(struct tracemap_format *f, int type)
{
	struct prog **np;
	int n;

	if (type < f->nr_progs && f->progs[type]) {
		/* a type libtraceevent did not know may have been parsed since */
		if (f->progs[type]->event || !tep_find_event(f->tep, type))
			return f->progs[type];
		if (f->progs[type]->fallback)
			f->st.types_fallback--;
		tm_fmt_prog_free(f->progs[type]);
		f->progs[type] = NULL;
	}
	if (type >= f->nr_progs) {
		n = type + 64;
		np = realloc(f->progs, n * sizeof(*np));
		if (!np)
			return NULL;
		memset(np + f->nr_progs, 0, (n - f->nr_progs) * sizeof(*np));
		f->progs = np;
		f->nr_progs = n;
	}
	f->progs[type] = tm_fmt_compile(f, type);
	if (f->progs[type])
		tm_fgraph_setup(f->progs[type]);
	return f->progs[type];
}

/* ---------------------------------------------------------- the API */

/**
 * tracemap_format_new - a text formatter of events
 * @tep: the event formats (and plugins, kallsyms, comms) to print with; the
 *	caller keeps it alive and frees it after tracemap_format_free()
 * @opts: NULL, or options (sz = sizeof(struct tracemap_format_opts))
 *
 * Returns the formatter, or NULL with errno set (EINVAL: no @tep or unknown
 * options, ENOMEM).
 */
struct tracemap_format *tracemap_format_new(struct tep_handle *tep,
					   const struct tracemap_format_opts *opts)
{
	static const char *const usecs[] = { "local", "global", "uptime", "perf", "tai" };
	struct tracemap_format_opts o = { 0 };
	struct tracemap_format *f;
	size_t i;

	if (!tep) {
		errno = EINVAL;
		return NULL;
	}
	if (tm_opts_copy(&o, sizeof(o), opts, TM_FORMAT_OPTS_MIN_SZ, "tracemap_format_opts"))
		return NULL;
	if (o.flags & ~(TRACEMAP_FORMAT_NO_COMPILE | TRACEMAP_FORMAT_FGRAPH)) {
		tm_log(TRACEMAP_LOG_ERROR, "tracemap_format_new: unknown flags 0x%x", o.flags);
		errno = EINVAL;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->tep = tep;
	f->compile = !(o.flags & TRACEMAP_FORMAT_NO_COMPILE) && !tm_fmt_compile_refusal();
	f->fgraph = o.flags & TRACEMAP_FORMAT_FGRAPH;
	f->long_size = tep_get_long_size(tep) ? : (int)sizeof(long);
	/* trace-cmd report shows microseconds for these clocks, the raw count for the others */
	f->usecs = !o.clock || !strncmp(o.clock, "mono", 4);
	for (i = 0; !f->usecs && i < sizeof(usecs) / sizeof(usecs[0]); i++)
		f->usecs = !strcmp(o.clock, usecs[i]);
	trace_seq_init(&f->seq);
	/*
	 * libtraceevent collects comms in a list until its first lookup, and
	 * only the sorted table it then builds ignores a second comm of a pid:
	 * build it now, so that registered[] above says what a call would do.
	 */
	tep_is_pid_registered(tep, 1);
	memset(f->registered, 0, sizeof(f->registered));
	return f;
}

/**
 * tracemap_format_free - free a formatter and its compiled programs (NULL-safe)
 * @f: the formatter
 */
void tracemap_format_free(struct tracemap_format *f)
{
	int i;

	if (!f)
		return;
	for (i = 0; i < f->nr_progs; i++)
		tm_fmt_prog_free(f->progs[i]);
	free(f->progs);
	free(f->out.buf);
	free(f->pad);
	free(f->fg_data);
	trace_seq_destroy(&f->seq);
	free(f);
}

/* the info part through libtraceevent */
/*
 * @ev as a tep_record. tep_print_event() reads an event's fields at their
 * offsets whatever the record's size: a record shorter than its fields (the
 * common ones for a type it does not know) goes to it zero-padded.
 */
static bool to_record(struct tracemap_format *f, const struct prog *pg,
		      const struct tracemap_event *ev, struct tep_record *rec)
{
	unsigned int need = pg->event ? pg->fields_end : 8;
	unsigned char *np;

	tracemap_event_to_record(ev, rec);
	if ((unsigned int)ev->size >= need)
		return true;
	if (need > f->pad_cap) {
		np = realloc(f->pad, need);
		if (!np) {
			/* reported as ENOMEM by finish() */
			f->out.oom = true;
			return false;
		}
		f->pad = np;
		f->pad_cap = need;
	}
	memset(f->pad, 0, need);
	memcpy(f->pad, ev->data, ev->size);
	rec->data = f->pad;
	rec->size = need;
	return true;
}

static void info_tep(struct tracemap_format *f, const struct prog *pg,
		     const struct tracemap_event *ev)
{
	struct tep_record rec;

	if (!to_record(f, pg, ev, &rec))
		return;
	trace_seq_reset(&f->seq);
	tep_print_event(f->tep, &f->seq, &rec, "%s", TEP_PRINT_INFO);
	ob_put(&f->out, f->seq.buffer, f->seq.len);
	f->st.fallback_events++;
}

static void info(struct tracemap_format *f, const struct prog *pg, const struct tracemap_event *ev)
{
	if (pg->fallback) {
		info_tep(f, pg, ev);
		return;
	}
	f->clamped = false;
	tm_fmt_run(f, pg, ev->data, ev->size);
	if (f->clamped)
		f->st.clamped++;
}

static int finish(struct tracemap_format *f, const char **out)
{
	if (!ob_reserve(&f->out, 0) || f->out.oom) {
		f->out.oom = false;
		*out = NULL;
		return tm_err(ENOMEM);
	}
	f->out.buf[f->out.len] = '\0';
	*out = f->out.buf;
	return f->out.len;
}

/* The checks and the program of one event's text; 0 or -errno */
static int start(struct tracemap_format *f, const struct tracemap_event *ev, const char **out,
		 struct prog **pg)
{
	if (!f || !ev || !out || ev->size < 2)
		return tm_err(EINVAL);
	f->out.len = 0;
	f->st.events++;
	*pg = prog_of(f, read_num(ev->data, 2));
	return *pg ? 0 : tm_err(ENOMEM);
}

/**
 * tracemap_format_info - the event's own text, as tep_print_event("%s", TEP_PRINT_INFO)
 * @f: the formatter
 * @ev: the event (its payload starts with the common fields)
 * @out: set to the NUL-terminated text, owned by @f and valid until its next call
 *
 * Returns the length of the text, or -errno (EINVAL, ENOMEM).
 */
int tracemap_format_info(struct tracemap_format *f, const struct tracemap_event *ev,
			 const char **out)
{
	struct prog *pg;
	int ret = start(f, ev, out, &pg);

	if (ret)
		return ret;
	info(f, pg, ev);
	return finish(f, out);
}

/* the 3.1.6 line of an event libtraceevent does not know: its own three calls */
static void line_unknown(struct tracemap_format *f, const struct prog *pg,
			 const struct tracemap_event *ev)
{
	const char *tfmt = f->usecs ? " %6.1000d:" : "%12d:";
	struct trace_seq *s = &f->seq;
	struct tep_record rec;

	if (!to_record(f, pg, ev, &rec))
		return;
	trace_seq_reset(s);
	tep_print_event(f->tep, s, &rec, "%16s-%-5d [%03d]", TEP_PRINT_COMM, TEP_PRINT_PID,
			TEP_PRINT_CPU);
	tep_print_event(f->tep, s, &rec, tfmt, TEP_PRINT_TIME);
	trace_seq_puts(s, " (NULL): ");
	trace_seq_printf(s, "%.*s", 20 - 6, "                    ");
	tep_print_event(f->tep, s, &rec, "%s", TEP_PRINT_INFO);
	ob_put(&f->out, s->buffer, s->len);
	f->st.fallback_events++;
}

/* The name of task @pid, as tep_data_comm_from_pid() says; *@len its length. */
static const char *comm_of(struct tracemap_format *f, int pid, size_t *len)
{
	struct comm_slot *c = &f->comms[(unsigned int)pid % NR_COMMS];
	uint64_t gen = tm_comms_gen() + 1;
	const char *comm;
	size_t n;

	if (c->gen == gen && c->pid == pid) {
		*len = c->len;
		return c->comm;
	}
	comm = tep_data_comm_from_pid(f->tep, pid);
	n = strlen(comm);
	*len = n;
	if (n >= sizeof(c->comm))
		return comm;
	memcpy(c->comm, comm, n + 1);
	c->len = n;
	c->pid = pid;
	c->gen = gen;
	return c->comm;
}

/**
 * tracemap_format_forget_names - look task and function names up again
 * @f: the formatter
 *
 * tracemap_format_line() looks the name of a task up in its tep once and
 * keeps it until the library changes a name (a stream learning one, an
 * exec, the sched plugin's comms); it looks a kernel address up once too.
 * A program that changes the tep's names itself (tep_register_comm(),
 * tep_override_comm(), tracefs_load_cmdlines(), tep_register_function())
 * calls this before its next line.
 *
 * Returns 0, or -EINVAL for a NULL formatter.
 */
int tracemap_format_forget_names(struct tracemap_format *f)
{
	if (!f)
		return tm_err(EINVAL);
	memset(f->comms, 0, sizeof(f->comms));
	memset(f->funcs, 0, sizeof(f->funcs));
	return 0;
}

void tm_fmt_put_line(struct tracemap_format *f, const struct prog *pg,
		     const struct tracemap_event *ev, const struct tracemap_event *ret)
{
	struct obuf *o = &f->out;
	size_t start = o->len;
	const char *comm;
	size_t comm_len;
	char *q, *p;
	int pid;

	if (!pg->event || !pg->pid_size ||
	    pg->pid_offset + pg->pid_size > ev->size) {
		line_unknown(f, pg, ev);
		goto end;
	}
	pid = (int)read_num((const unsigned char *)ev->data + pg->pid_offset, pg->pid_size);
	comm = comm_of(f, pid, &comm_len);
	/* the prefix and the name in one piece: the comm and at most 72 bytes more */
	if (!ob_reserve(o, comm_len + 80 + pg->head_len))
		goto end;
	q = o->buf + o->len;
	/* "%16s-%-5d [%03d]" */
	q = fill(q, ' ', comm_len < 16 ? 16 - comm_len : 0);
	memcpy(q, comm, comm_len);
	q += comm_len;
	*q++ = '-';
	p = q;
	if (pid < 0)
		*q++ = '-';
	q = put_dec(q, pid < 0 ? -(long long)pid : pid, 0, 0);
	q = fill(q, ' ', q - p < 5 ? 5 - (q - p) : 0);
	*q++ = ' ';
	*q++ = '[';
	if (ev->cpu < 0) {
		/* never for a real event; keep printf's sign */
		*q++ = '-';
		q = put_dec(q, -(unsigned long long)ev->cpu, 2, '0');
	} else {
		q = put_dec(q, (unsigned int)ev->cpu, 3, '0');
	}
	*q++ = ']';
	if (f->usecs) {
		/* " %6.1000d:" of tep_print_event: rounded microseconds as s.us */
		unsigned long long t = (ev->ts + 500) / 1000;

		*q++ = ' ';
		q = put_dec(q, t / 1000000, 5, ' ');
		*q++ = '.';
		q = put_dec(q, t % 1000000, 6, '0');
	} else {
		/* "%12d:": libtraceevent's 10^12 divisor overflows to none */
		q = put_dec(q, ev->ts, 12, ' ');
	}
	*q++ = ':';
	memcpy(q, pg->head, pg->head_len);
	o->len = q + pg->head_len - o->buf;
	if (f->fgraph && pg->fgraph)
		tm_fgraph_info(f, pg, ev, ret);
	else
		info(f, pg, ev);
end:
	if (o->len > start && o->buf[o->len - 1] == '\n')
		o->len--;
	ob_putc(o, '\n');
}

/**
 * tracemap_format_line - the line 'trace-cmd report' 3.1.6 prints for an event
 * @f: the formatter
 * @ev: the event
 * @out: set to the NUL-terminated line, ending in '\n', owned by @f and valid
 *	until its next call
 *
 * "comm-pid [cpu] time: name: info": comm right-aligned in 16 columns, the
 * pid left-aligned in 5, the CPU in 3 digits, the time in seconds with
 * microseconds (or the raw count for counter clocks), the name padded to 20.
 * The task's name is looked up once, then kept while the library changes
 * no name (see tracemap_format_forget_names()).
 *
 * With TRACEMAP_FORMAT_FGRAPH, events come in the order they are printed
 * and funcgraph_entry/funcgraph_exit print as trace-cmd report's
 * function_graph: an entry is held (the text is empty) until the next
 * event, which folds it into one "func();" line with the duration when it
 * is its exit (same CPU, task and function); otherwise the held entry's
 * "func() {" line comes first in the text. tracemap_format_flush() gives a
 * held entry out when no event follows.
 *
 * Returns the length of the text (0: held), or -errno (EINVAL, ENOMEM).
 */
int tracemap_format_line(struct tracemap_format *f, const struct tracemap_event *ev,
			 const char **out)
{
	struct prog *pg;
	int ret = start(f, ev, out, &pg);

	if (ret)
		return ret;
	if (f->fgraph)
		tm_fgraph_line(f, pg, ev);
	else
		tm_fmt_put_line(f, pg, ev, NULL);
	return finish(f, out);
}

/**
 * tracemap_format_flush - the line of a funcgraph_entry still held
 * @f: the formatter (TRACEMAP_FORMAT_FGRAPH)
 * @out: set to the NUL-terminated line ("" when nothing is held), owned by
 *	@f and valid until its next call
 *
 * The held entry's "func() {" line, as trace-cmd report prints an entry
 * that no exit follows: for the end of the events, or when the caller
 * stops waiting for the next one (a stream gone idle, lost events).
 *
 * Returns the length of the line (0: nothing was held), or -errno (EINVAL,
 * ENOMEM).
 */
int tracemap_format_flush(struct tracemap_format *f, const char **out)
{
	if (!f || !out)
		return tm_err(EINVAL);
	f->out.len = 0;
	tm_fgraph_flush(f);
	return finish(f, out);
}

/**
 * tracemap_format_stats - what the formatter did so far
 * @f: the formatter
 * @st: filled with min(@sz, sizeof) bytes of the statistics
 * @sz: sizeof(struct tracemap_format_stats)
 *
 * Returns 0 or -EINVAL.
 */
int tracemap_format_stats(const struct tracemap_format *f, struct tracemap_format_stats *st,
			  size_t sz)
{
	if (!f || !st)
		return tm_err(EINVAL);
	memcpy(st, &f->st, sz < sizeof(f->st) ? sz : sizeof(f->st));
	return 0;
}

/**
 * tracemap_format_fallback - why an event type is formatted by libtraceevent
 * @f: the formatter
 * @type: the event type id (common_type)
 *
 * Compiles the type if it was not yet. Returns NULL when the type is compiled,
 * otherwise a short reason ("plugin handler", "%p extension", ...).
 */
const char *tracemap_format_fallback(struct tracemap_format *f, int type)
{
	struct prog *pg;

	if (!f || type < 0 || type > 0xffff)
		return "invalid type";
	pg = prog_of(f, type);
	if (!pg)
		return "out of memory";
	return pg->fallback ? pg->reason : NULL;
}

