// SPDX-License-Identifier: GPL-2.0-only
/*
 * A small program that uses libtracemap.so as any other consumer would, for
 * tool-reset-lib.sh:
 *
 *   lib-consumer hold [INSTANCE]   a stream of INSTANCE (none: a private one)
 *                                  with sched:sched_switch, a filter, its own
 *                                  pid in set_event_pid and buffer_percent 25;
 *                                  prints "instance NAME created N", then
 *                                  waits for SIGTERM (close) or SIGKILL
 *   lib-consumer hold INSTANCE TRACER [nostack]   the same with TRACER as its
 *                                  tracer (opts.tracer) limited to vfs_read
 *                                  (set_ftrace_filter) and options/func_stack_trace
 *                                  on (left alone with nostack)
 *   lib-consumer old-top           what a program linked against TRACEMAP_0.1
 *                                  gets for NULL and "": the top-level
 *                                  directory (read only, nothing opened)
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tracemap.h"

/* the TRACEMAP_0.1 version, as a binary built against 0.1.0 binds it */
int old_instance_dir(const char *tracefs, const char *instance, char *buf, size_t size);
__asm__(".symver old_instance_dir, tracemap_instance_dir@TRACEMAP_0.1");

static int hold(const char *instance, const char *tracer, bool stack)
{
	static const struct tracemap_event_spec ev[] = { { "sched:sched_switch", "prev_pid != 1" } };
	/* one function: patching them all took a 6.12 guest under QEMU's TCG down */
	static const char *const filter[] = { "vfs_read", NULL };
	int pid = getpid(), created = 0, sig;
	TRACEMAP_OPTS(tracemap_tracer_opts, to, .tracer = tracer, .filter = filter,
		      .flags = stack ? TRACEMAP_TRACER_FUNC_STACK : 0);
	TRACEMAP_OPTS(tracemap_stream_opts, o, .events = ev, .nr_events = 1, .pids = &pid,
		      .nr_pids = 1, .watermark = 25, .tracer = tracer ? &to : NULL);
	struct tracemap_stream *s;
	const char *name;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	s = tracemap_stream_open(instance, &o);
	if (!s)
		return 1;
	name = tracemap_stream_instance(s, &created);
	printf("instance %s created %d\n", name, created);
	fflush(stdout);
	sigwait(&set, &sig);
	tracemap_stream_close(s);
	return 0;
}

static int old_top(void)
{
	char tfs[4096], a[4096], b[4096];

	if (tracemap_tracefs_dir(NULL, tfs, sizeof(tfs)))
		return 1;
	if (old_instance_dir(tfs, NULL, a, sizeof(a)) || old_instance_dir(tfs, "", b, sizeof(b)))
		return 1;
	printf("tracefs %s\nold NULL %s\nold empty %s\n", tfs, a, b);
	errno = 0;
	printf("new NULL %d\n", tracemap_instance_dir(tfs, NULL, a, sizeof(a)));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "hold"))
		return hold(argc > 2 ? argv[2] : NULL, argc > 3 ? argv[3] : NULL,
			    argc <= 4 || strcmp(argv[4], "nostack"));
	if (argc == 2 && !strcmp(argv[1], "old-top"))
		return old_top();
	fprintf(stderr, "usage: lib-consumer hold [INSTANCE [TRACER [nostack]]] | old-top\n");
	return 2;
}
