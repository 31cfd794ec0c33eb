// SPDX-License-Identifier: LGPL-2.1-only
/*
 * What binaries linked against TRACEMAP_0.1 get. There NULL and "" named
 * the top-level buffer; since TRACEMAP_0.4 NULL asks tracemap_stream_open()
 * for a private instance and is refused elsewhere, and "" is refused. A
 * program built before keeps its meaning through these versions of the
 * symbols (the dynamic linker binds it to the node it was linked against);
 * a program built now gets the new ones (lib/libtracemap.map).
 */
#include "tracemap-local.h"

int tm_compat_instance_dir(const char *tracefs, const char *instance, char *buf, size_t size);
struct tracemap_cpu *tm_compat_cpu_open(const char *instance, int cpu,
					const struct tracemap_cpu_opts *opts);
struct tracemap_stream *tm_compat_stream_open(const char *instance,
					      const struct tracemap_stream_opts *opts);
struct tracemap_events *tm_compat_events_enable(const char *instance,
						const struct tracemap_event_spec *specs,
						int nr_specs, const char *tracefs_dir);
struct tracemap_dump *tm_compat_dump_take(const char *instance,
					  const struct tracemap_dump_opts *opts);

/* .symver rather than the symver attribute, which clang (the fuzzers) does not know */
#define COMPAT(name, impl)	__asm__(".symver " #impl ", " #name "@TRACEMAP_0.1");	\
				__attribute__((visibility("default")))

static const char *old_meaning(const char *instance)
{
	return instance && *instance ? instance : TRACEMAP_TOP_LEVEL;
}

COMPAT(tracemap_instance_dir, tm_compat_instance_dir)
int tm_compat_instance_dir(const char *tracefs, const char *instance, char *buf, size_t size)
{
	return tracemap_instance_dir(tracefs, old_meaning(instance), buf, size);
}

COMPAT(tracemap_cpu_open, tm_compat_cpu_open)
struct tracemap_cpu *tm_compat_cpu_open(const char *instance, int cpu,
					const struct tracemap_cpu_opts *opts)
{
	return tracemap_cpu_open(old_meaning(instance), cpu, opts);
}

COMPAT(tracemap_stream_open, tm_compat_stream_open)
struct tracemap_stream *tm_compat_stream_open(const char *instance,
					      const struct tracemap_stream_opts *opts)
{
	return tracemap_stream_open(old_meaning(instance), opts);
}

COMPAT(tracemap_events_enable, tm_compat_events_enable)
struct tracemap_events *tm_compat_events_enable(const char *instance,
						const struct tracemap_event_spec *specs,
						int nr_specs, const char *tracefs_dir)
{
	return tracemap_events_enable(old_meaning(instance), specs, nr_specs, tracefs_dir);
}

COMPAT(tracemap_dump_take, tm_compat_dump_take)
struct tracemap_dump *tm_compat_dump_take(const char *instance,
					  const struct tracemap_dump_opts *opts)
{
	return tracemap_dump_take(old_meaning(instance), opts);
}
