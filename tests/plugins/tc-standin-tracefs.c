// SPDX-License-Identifier: GPL-2.0-only
/*
 * libtc-standin-tracefs.so: a stand-in for a newer libtracefs, preloaded
 * behind the trace-cmd plugin. It defines tracefs_cpu_open(), so the plugin
 * takes it for the real library, and one tracefs_cpu_* function the plugin
 * does not serve, which a host could call on a plugin object. The plugin
 * must notice at start-up and step aside. Nothing here is ever called.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

struct tracefs_instance;
struct tracefs_cpu;

#define EXPORT __attribute__((visibility("default")))

EXPORT struct tracefs_cpu *tracefs_cpu_open(struct tracefs_instance *instance, int cpu,
					    bool nonblock);
EXPORT int tracefs_cpu_frobnicate(struct tracefs_cpu *tcpu);

struct tracefs_cpu *tracefs_cpu_open(struct tracefs_instance *instance, int cpu, bool nonblock)
{
	errno = ENOSYS;
	return NULL;
}

int tracefs_cpu_frobnicate(struct tracefs_cpu *tcpu)
{
	errno = ENOSYS;
	return -1;
}
