// SPDX-License-Identifier: LGPL-2.1-only
/*
 * function_graph lines as trace-cmd report 3.1.6 prints them
 * (TRACEMAP_FORMAT_FGRAPH): an entry whose next event is its own exit is a
 * leaf, "func();" with the duration; other entries open "func() {" and
 * exits close "}" with the duration; each indented two columns per depth,
 * the duration preceded by its marker ('+' over 10 us, '!' over 100 us,
 * '#' over 1 ms, '$' over 1 s).
 *
 * The next event decides whether an entry is a leaf, so an entry is held
 * (copied) until the next event or tracemap_format_flush(). trace-cmd
 * report takes the next record in time order of all CPUs; an exit from
 * another CPU (the task migrated) does not fold, as in later trace-cmd.
 */
#include "format-local.h"

#define FG_INDENT	2	/* columns per depth */
#define FG_MAX_INDENT	4096	/* a depth beyond this is not the kernel's: clamped */

static const char *const fg_names[FG_NR_FIELDS] = { "func", "depth", "calltime", "rettime" };

/* Marks @pg as an entry or exit of ftrace when it has the fields trace-cmd reads */
void tm_fgraph_setup(struct prog *pg)
{
	struct tep_event *ev = pg->event;
	int kind, i, n;

	pg->fgraph = FG_NONE;
	if (!ev || !ev->system || !ev->name || strcmp(ev->system, "ftrace"))
		return;
	if (!strcmp(ev->name, "funcgraph_entry"))
		kind = FG_ENTRY, n = FG_DEPTH + 1;
	else if (!strcmp(ev->name, "funcgraph_exit"))
		kind = FG_EXIT, n = FG_NR_FIELDS;
	else
		return;
	for (i = 0; i < n; i++) {
		pg->fg[i] = tep_find_field(ev, fg_names[i]);
		if (!pg->fg[i] || pg->fg[i]->size > 8 || (pg->fg[i]->flags & TEP_FIELD_IS_ARRAY))
			return;
	}
	pg->fgraph = kind;
}

/* Field @i of @ev; false when the record is too short for it */
static bool fg_val(const struct prog *pg, const struct tracemap_event *ev, int i,
		   unsigned long long *v)
{
	const struct tep_format_field *fd = pg->fg[i];

	if ((unsigned int)fd->offset + fd->size > ev->size)
		return false;
	*v = read_num((const unsigned char *)ev->data + fd->offset, fd->size);
	return true;
}

static int fg_pid(const struct prog *pg, const struct tracemap_event *ev)
{
	return (int)read_num((const unsigned char *)ev->data + pg->pid_offset, pg->pid_size);
}

/* The marker, then "usecs.nsecs us " padded to 7 columns before "|  " */
static void put_duration(struct obuf *o, unsigned long long d)
{
	unsigned long usecs = d / 1000;
	char num[32], *q;
	int len;

	/* ~0: trace-cmd's "no duration", no marker */
	if (d == ~0ULL)
		ob_put(o, "  ", 2);
	else if (d > 1000000000ULL)
		ob_put(o, "$ ", 2);
	else if (d > 1000000ULL)
		ob_put(o, "# ", 2);
	else if (d > 100000ULL)
		ob_put(o, "! ", 2);
	else if (d > 10000ULL)
		ob_put(o, "+ ", 2);
	else
		ob_put(o, "  ", 2);
	q = put_dec(num, usecs, 0, 0);
	len = q - num;
	/* nanoseconds while the number stays under 7 digits */
	if (len < 7) {
		*q++ = '.';
		q = put_dec(q, d % 1000, 3, '0');
	}
	ob_put(o, num, q - num);
	ob_put(o, " us ", 4);
	if (q - num < 7)
		ob_fill(o, ' ', 7 - (q - num));
	ob_put(o, "|  ", 3);
}

/* Two columns per depth (a depth beyond the kernel's is clamped) */
static void put_indent(struct tracemap_format *f, unsigned long long depth)
{
	int cols = (int)(depth * FG_INDENT);

	if (cols > FG_MAX_INDENT) {
		cols = FG_MAX_INDENT;
		f->clamped = true;
	}
	if (cols > 0)
		ob_fill(&f->out, ' ', cols);
}

/* The function's name, or its address in hex; then @tail */
static void put_func(struct tracemap_format *f, unsigned long long func, const char *tail)
{
	const char *name = tm_fmt_func_of(f, func)->name;
	char hex[24];

	if (name) {
		ob_put(&f->out, name, strlen(name));
	} else {
		snprintf(hex, sizeof(hex), "%llx", func);
		ob_put(&f->out, hex, strlen(hex));
	}
	ob_put(&f->out, tail, strlen(tail));
}

/* rettime - calltime of exit @ev (program @pg); false when it is too short */
static bool fg_duration(const struct prog *pg, const struct tracemap_event *ev,
			unsigned long long *d)
{
	unsigned long long call, rett;

	if (!fg_val(pg, ev, FG_CALLTIME, &call) || !fg_val(pg, ev, FG_RETTIME, &rett))
		return false;
	*d = rett - call;
	return true;
}

void tm_fgraph_info(struct tracemap_format *f, const struct prog *pg,
		    const struct tracemap_event *ev, const struct tracemap_event *ret)
{
	unsigned long long func, depth, d;
	struct obuf *o = &f->out;

	f->clamped = false;
	if (pg->fgraph == FG_EXIT) {
		if (!fg_duration(pg, ev, &d) || !fg_val(pg, ev, FG_DEPTH, &depth)) {
			/* trace-cmd's mark for a field it cannot read */
			ob_putc(o, '!');
			return;
		}
		put_duration(o, d);
		put_indent(f, depth);
		ob_putc(o, '}');
	} else if (ret) {
		/* a leaf: the duration is its exit's */
		if (!fg_duration(f->fg_ret_pg, ret, &d) || !fg_val(pg, ev, FG_DEPTH, &depth) ||
		    !fg_val(pg, ev, FG_FUNC, &func)) {
			ob_putc(o, '!');
			return;
		}
		put_duration(o, d);
		put_indent(f, depth);
		put_func(f, func, "();");
	} else {
		if (!fg_val(pg, ev, FG_DEPTH, &depth) || !fg_val(pg, ev, FG_FUNC, &func)) {
			ob_putc(o, '!');
			return;
		}
		/* no marker, no duration */
		ob_fill(o, ' ', 13);
		ob_put(o, "|  ", 3);
		put_indent(f, depth);
		put_func(f, func, "() {");
	}
	if (f->clamped)
		f->st.clamped++;
}

/* Whether @ev (program @pg) is the exit of the held entry, next on its CPU */
static bool is_leaf(struct tracemap_format *f, const struct prog *pg,
		    const struct tracemap_event *ev)
{
	const struct tracemap_event *h = &f->fg_held;
	unsigned long long ef, xf;

	if (pg->fgraph != FG_EXIT || ev->cpu != h->cpu ||
	    pg->pid_offset + pg->pid_size > ev->size ||
	    fg_pid(pg, ev) != fg_pid(f->fg_pg, h))
		return false;
	return fg_val(f->fg_pg, h, FG_FUNC, &ef) && fg_val(pg, ev, FG_FUNC, &xf) && ef == xf;
}

void tm_fgraph_flush(struct tracemap_format *f)
{
	if (!f->fg_holding)
		return;
	f->fg_holding = false;
	tm_fmt_put_line(f, f->fg_pg, &f->fg_held, NULL);
}

void tm_fgraph_line(struct tracemap_format *f, const struct prog *pg,
		    const struct tracemap_event *ev)
{
	unsigned char *nd;

	if (f->fg_holding && is_leaf(f, pg, ev)) {
		f->fg_holding = false;
		f->fg_ret_pg = pg;
		tm_fmt_put_line(f, f->fg_pg, &f->fg_held, ev);
		return;
	}
	tm_fgraph_flush(f);
	if (pg->fgraph != FG_ENTRY || pg->pid_offset + pg->pid_size > ev->size) {
		tm_fmt_put_line(f, pg, ev, NULL);
		return;
	}
	/* held until the next event: a copy, the payload is only borrowed */
	if (ev->size > f->fg_cap) {
		nd = realloc(f->fg_data, ev->size);
		if (!nd) {
			/* cannot wait: printed as an entry no exit follows */
			tm_fmt_put_line(f, pg, ev, NULL);
			return;
		}
		f->fg_data = nd;
		f->fg_cap = ev->size;
	}
	memcpy(f->fg_data, ev->data, ev->size);
	f->fg_held = *ev;
	f->fg_held.data = f->fg_data;
	f->fg_pg = pg;
	f->fg_holding = true;
}
