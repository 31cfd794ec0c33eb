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
 * A file whose process is gone (or whose pid now belongs to another
 * process) is stale: tracemap stream and tracemap reset put back what it
 * names, tracemap stat says how.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
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

/* ------------------------------------------------------------- repair */

struct stale {
	int pid;
	unsigned long long start;
	char tracefs[4096];
	char instance[512];
	bool private;
	char percent[16];
	char events[64][256];
	int nr_events;
};

static int load(const char *path, struct stale *st)
{
	char line[4400], *v;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	memset(st, 0, sizeof(*st));
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		v = strchr(line, '=');
		if (!v)
			continue;
		*v++ = '\0';
		if (!strcmp(line, "pid"))
			st->pid = atoi(v);
		else if (!strcmp(line, "start"))
			st->start = strtoull(v, NULL, 10);
		else if (!strcmp(line, "tracefs"))
			snprintf(st->tracefs, sizeof(st->tracefs), "%s", v);
		else if (!strcmp(line, "instance"))
			snprintf(st->instance, sizeof(st->instance), "%s", v);
		else if (!strcmp(line, "private"))
			st->private = atoi(v);
		else if (!strcmp(line, "buffer_percent"))
			snprintf(st->percent, sizeof(st->percent), "%s", v);
		else if (!strcmp(line, "event") && st->nr_events < 64)
			snprintf(st->events[st->nr_events++], sizeof(st->events[0]), "%s", v);
	}
	fclose(f);
	return st->pid > 0 && st->tracefs[0] ? 0 : -1;
}

/* The process that wrote @st still runs (the same process, not a reused pid). */
static bool alive(const struct stale *st)
{
	if (st->pid == getpid())
		return true;
	if (kill(st->pid, 0) && errno == ESRCH)
		return false;
	return proc_start(st->pid) == st->start;
}

static int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), e;
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/* Put back what @st names; 0, or -1 when something could not be (said why). */
static int put_back(const struct stale *st, const char *idir)
{
	char path[4800], *colon;
	struct stat sb;
	int i, tries, ret = 0;

	if (stat(idir, &sb))
		return 0;	/* removed since: nothing left to put back */
	if (st->private) {
		snprintf(path, sizeof(path), "%s/tracing_on", idir);
		write_str(path, "0");
		/* a reader may still hold it for a moment (EBUSY) */
		for (tries = 0; rmdir(idir) && errno == EBUSY && tries < 50; tries++)
			usleep(20000);
		if (!stat(idir, &sb)) {
			tool_err("cannot remove %s: %s (remove it with rmdir when no one uses it)",
				 idir, strerror(errno));
			return -1;
		}
		return 0;
	}
	for (i = 0; i < st->nr_events; i++) {
		colon = strchr(st->events[i], ':');
		if (!colon)
			continue;
		snprintf(path, sizeof(path), "%s/events/%.*s/%s/enable", idir,
			 (int)(colon - st->events[i]), st->events[i], colon + 1);
		if (write_str(path, "0") && errno != ENOENT) {
			tool_err("cannot disable %s again (%s): %s", st->events[i], path,
				 strerror(errno));
			ret = -1;
		}
	}
	if (st->percent[0]) {
		snprintf(path, sizeof(path), "%s/buffer_percent", idir);
		if (write_str(path, st->percent)) {
			tool_err("cannot put back %s: %s", path, strerror(errno));
			ret = -1;
		}
	}
	return ret;
}

int state_repair(bool act, int *failed)
{
	const char *dir = state_dir();
	char path[4400], idir[4700], what[5000];
	struct stale *st;
	struct dirent *d;
	int found = 0;
	DIR *dp;

	dp = opendir(dir);
	if (!dp)
		return 0;
	st = malloc(sizeof(*st));
	if (!st) {
		closedir(dp);
		return 0;
	}
	while ((d = readdir(dp))) {
		if (!strstr(d->d_name, ".state"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (load(path, st) || alive(st))
			continue;
		found++;
		if (st->instance[0])
			snprintf(idir, sizeof(idir), "%s/instances/%s", st->tracefs, st->instance);
		else
			snprintf(idir, sizeof(idir), "%s", st->tracefs);
		if (st->private)
			snprintf(what, sizeof(what), "its private instance %s", st->instance);
		else
			snprintf(what, sizeof(what), "%s with %d event(s) enabled%s%s",
				 st->instance[0] ? st->instance : "the top-level buffer",
				 st->nr_events, st->percent[0] ? " and buffer_percent changed from " : "",
				 st->percent);
		if (!act) {
			tool_err("tracemap pid %d ended without putting back %s: run 'tracemap reset'",
				 st->pid, what);
			continue;
		}
		if (!put_back(st, idir)) {
			unlink(path);
			tool_err("put back what tracemap pid %d (no longer running) left: %s",
				 st->pid, what);
		} else if (failed) {
			(*failed)++;
		}
	}
	closedir(dp);
	free(st);
	return found;
}
