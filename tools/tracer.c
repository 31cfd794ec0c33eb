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

const struct tracemap_tracer_opts *tool_tracer_opts(const struct tool_tracer *t, const char *tfs,
						    struct tracemap_tracer_opts *o)
{
	if (!t->tracer)
		return NULL;
	*o = (struct tracemap_tracer_opts){
		.sz = sizeof(*o),
		.tracer = t->tracer,
		.filter = t->filter,
		.notrace = t->notrace,
		.graph = t->graph,
		.flags = t->func_stack ? TRACEMAP_TRACER_FUNC_STACK : 0,
		.tracefs_dir = tfs,
	};
	return o;
}

void tool_tracer_free(struct tool_tracer *t)
{
	free(t->filter);
	free(t->notrace);
	free(t->graph);
	t->filter = t->notrace = t->graph = NULL;
}
