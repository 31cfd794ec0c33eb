// SPDX-License-Identifier: GPL-2.0-only
/*
 * trace-cmd record's tracer options, shared by stream and flight: -p
 * tracer, -l / -n / -g function (repeatable) and --func-stack, handed to
 * libtracemap (tracemap_tracer_set()), which sets them on the instance and
 * puts back what was there.
 */
#include <stdlib.h>

#include "tracemap.h"
#include "tracemap-tool.h"

/* Append @arg to the NULL-ended list *@list. */
static int add(const char ***list, int *nr, const char *arg)
{
	const char **n = realloc(*list, (*nr + 2) * sizeof(*n));

	if (!n) {
		tool_err("out of memory");
		return -1;
	}
	n[(*nr)++] = arg;
	n[*nr] = NULL;
	*list = n;
	return 0;
}

int tool_tracer_opt(int c, const char *arg, struct tool_tracer *t)
{
	switch (c) {
	case 'p':
		t->tracer = arg;
		return 1;
	case 'l':
		return add(&t->filter, &t->nr_filter, arg) ? -1 : 1;
	case 'n':
		return add(&t->notrace, &t->nr_notrace, arg) ? -1 : 1;
	case 'g':
		return add(&t->graph, &t->nr_graph, arg) ? -1 : 1;
	case TOOL_OPT_FUNC_STACK:
		t->func_stack = true;
		return 1;
	}
	return 0;
}

int tool_tracer_check(const struct tool_tracer *t)
{
	if (!t->tracer && (t->nr_filter || t->nr_notrace || t->nr_graph || t->func_stack)) {
		tool_err("-l, -n, -g and --func-stack filter a function tracer: give it with -p "
			 "(-p function, -p function_graph)");
		return -1;
	}
	return 0;
}

struct tracemap_tracer *tool_tracer_set(const char *tfs, const char *iname,
					const struct tool_tracer *t, bool *failed)
{
	struct tracemap_tracer_opts o = { .sz = sizeof(o) };
	struct tracemap_tracer *tr;

	*failed = false;
	if (!t->tracer)
		return NULL;
	o.tracer = t->tracer;
	o.filter = t->filter;
	o.notrace = t->notrace;
	o.graph = t->graph;
	o.flags = t->func_stack ? TRACEMAP_TRACER_FUNC_STACK : 0;
	o.tracefs_dir = tfs;
	/* a failure is explained by the library (libtracemap-print(3)) */
	tr = tracemap_tracer_set(iname ? iname : TRACEMAP_TOP_LEVEL, &o);
	*failed = !tr;
	return tr;
}

void tool_tracer_free(struct tool_tracer *t)
{
	free(t->filter);
	free(t->notrace);
	free(t->graph);
	t->filter = t->notrace = t->graph = NULL;
}
