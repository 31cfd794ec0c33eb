// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a tracemap stream changes in tracefs, written down before it changes
 * it, so that a stream killed without a chance to put things back (SIGKILL,
 * a crash, a power cut of the session) leaves enough behind to repair: one
 * file per stream, <state dir>/<pid>.state, removed when the stream ends:
 *
 *   pid=1234
 *   start=567890              start time of the process (/proc/PID/stat)
 *   tracefs=/sys/kernel/tracing
 *   instance=NAME             empty: the top-level buffer
 *   private=1                 the instance is the stream's own: remove it
 *   buffer_percent=50         the value before the stream set its own
 *   event=sched:sched_switch  an event the stream enabled
 *
 * It names what the tool itself makes (its private instance, -B made when
 * missing); what the library changes it writes down in records of its own.
 * The library reads both kinds: tracemap_state_repair() (tracemap reset,
 * tracemap stat, the start of tracemap stream) puts back what a record of a
 * process that is gone names.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracemap-tool.h"

#define STATE_DIR	"/run/tracemap"

static char state_path[4096];
static FILE *state_fp;

static const char *state_dir(void)
{
	const char *d = getenv("TRACEMAP_STATE_DIR");

	return d && *d ? d : STATE_DIR;
}

/* Field 22 of /proc/PID/stat: the start time, which tells a reused pid apart. */
static unsigned long long proc_start(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	/* the name in parentheses may hold spaces: count from the last ')' */
	p = strrchr(buf, ')');
	for (i = 2; p && i < 22; i++)
		p = strchr(p + 1, ' ');
	if (p)
		v = strtoull(p + 1, NULL, 10);
	return v;
}

int state_begin(const char *tfs, const char *instance, bool private)
{
	const char *dir = state_dir();
	int fd;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		tool_err("cannot create %s: %s (set TRACEMAP_STATE_DIR to a writable directory)",
			 dir, strerror(errno));
		return -1;
	}
	snprintf(state_path, sizeof(state_path), "%s/%d.state", dir, (int)getpid());
	fd = open(state_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	state_fp = fd < 0 ? NULL : fdopen(fd, "w");
	if (!state_fp) {
		tool_err("cannot write %s: %s (set TRACEMAP_STATE_DIR to a writable directory)",
			 state_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	fprintf(state_fp, "pid=%d\nstart=%llu\ntracefs=%s\ninstance=%s\nprivate=%d\n",
		(int)getpid(), proc_start(getpid()), tfs, instance ? instance : "", private);
	return state_note(NULL, NULL);
}

int state_note(const char *key, const char *value)
{
	if (!state_fp)
		return 0;
	if (key)
		fprintf(state_fp, "%s=%s\n", key, value);
	/* on disk before the change it describes */
	if (fflush(state_fp) || fdatasync(fileno(state_fp))) {
		tool_err("cannot write %s: %s", state_path, strerror(errno));
		return -1;
	}
	return 0;
}

void state_end(void)
{
	if (!state_fp)
		return;
	fclose(state_fp);
	state_fp = NULL;
	unlink(state_path);
}
