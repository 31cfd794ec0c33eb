// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which buffer the library opens, and what it leaves behind: no instance
 * (NULL) is a private instance the stream makes and removes at close; a
 * name is that instance (made and removed with TRACEMAP_STREAM_CREATE when
 * missing), its buffer_size_kb and trace_clock put back at close;
 * TRACEMAP_TOP_LEVEL is the top level (checked read-only here: the top
 * level is shared); "", ".." and NULL where nothing can be read are refused
 * with a message saying what to pass. A consumer killed with SIGKILL
 * leaves a record that tracemap_state_repair() (and the next stream open)
 * puts back: its private instance removed, events, filters, set_event_pid
 * and buffer_percent as before.
 *
 * timeout: 120
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "tracemap.h"

#define TAG		"inst"
#define POLL_LIMIT	2000

const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libtraceevent.so\n";
}

static char state_dir[256];
static pid_t consumer;		/* a child still to reap when a case fails */

static struct {
	unsigned int n;
	char all[8][1024];
} msgs;

static void capture(void *ctx, enum tracemap_log_level level, const char *msg)
{
	if (level > TRACEMAP_LOG_WARN)
		return;
	if (msgs.n < 8)
		snprintf(msgs.all[msgs.n], sizeof(msgs.all[0]), "%s", msg);
	msgs.n++;
}

/* The message of the last failure contains every hint */
static void said(const char *const *hints)
{
	if (!msgs.n)
		fail_msg("no message");
	for (; *hints; hints++)
		if (!strstr(msgs.all[(msgs.n - 1) % 8], *hints))
			fail_msg("message \"%s\" lacks \"%s\"", msgs.all[(msgs.n - 1) % 8], *hints);
}

/* Some message of the last call contains @hint */
static bool any_said(const char *hint)
{
	unsigned int i;

	for (i = 0; i < msgs.n && i < 8; i++)
		if (strstr(msgs.all[i], hint))
			return true;
	return false;
}

static int nr_records(void)
{
	struct dirent *d;
	DIR *dp = opendir(state_dir);
	int n = 0;

	if (!dp)
		return 0;
	while ((d = readdir(dp)))
		n += d->d_name[0] != '.';
	closedir(dp);
	return n;
}

static bool instance_exists(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/instances/%s", th_tracefs(), name);
	return !access(path, F_OK);
}

static long read_num(const char *inst, const char *file)
{
	char *v = th_instance_read(inst, file);
	long n;

	assert_non_null(v);
	n = strtol(v, NULL, 10);
	free(v);
	return n;
}

static bool file_has(const char *inst, const char *file, const char *text)
{
	char *v = th_instance_read(inst, file);
	bool has = v && strstr(v, text);

	free(v);
	return has;
}

static int setup(void **state)
{
	snprintf(state_dir, sizeof(state_dir), "/tmp/tmtest-%s-state-%d", TAG, (int)getpid());
	setenv("TRACEMAP_STATE_DIR", state_dir, 1);
	tracemap_set_print(capture, NULL);
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	tracemap_set_print(NULL, NULL);
	if (consumer > 0) {
		kill(consumer, SIGKILL);
		waitpid(consumer, NULL, 0);
	}
	/* whatever a failed case left: put back, then the directory goes */
	tracemap_state_repair(0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", state_dir);
	return system(cmd) ? -1 : 0;
}

static int count_event(void *ctx, const struct tracemap_event *ev)
{
	(*(unsigned int *)ctx)++;
	return 0;
}

/* NULL: a private instance, read, and gone after close with its record */
static void test_private_default(void **state)
{
	unsigned int seen = 0;
	TRACEMAP_OPTS(tracemap_stream_opts, o, .on_event = count_event, .ctx = &seen,
		      .flags = TRACEMAP_STREAM_LOW_LATENCY);
	struct tracemap_stream *s;
	char prefix[64], name[256];
	int created = -1, fd, i;

	th_backend_case(state);
	o.cpu_flags = th_cpu_flags();
	s = tracemap_stream_open(NULL, &o);
	assert_non_null(s);
	th_assert_stream_backend(s);
	snprintf(name, sizeof(name), "%s", tracemap_stream_instance(s, &created));
	snprintf(prefix, sizeof(prefix), "tracemap-%d-", (int)getpid());
	if (strncmp(name, prefix, strlen(prefix)))
		fail_msg("private instance '%s' is not named %s<n>", name, prefix);
	assert_int_equal(created, 1);
	assert_true(instance_exists(name));
	/* the stream reads it: markers written there arrive */
	fd = th_marker_open(name, 0);
	assert_true(fd >= 0);
	assert_int_equal(th_write_markers(fd, 0, 3), 0);
	close(fd);
	for (i = 0; i < POLL_LIMIT && seen < 3; i++)
		assert_true(tracemap_stream_poll(s, 10) >= 0);
	assert_int_equal(seen, 3);
	/* a second one is another instance */
	{
		struct tracemap_stream *s2 = tracemap_stream_open(NULL, &o);

		assert_non_null(s2);
		assert_string_not_equal(tracemap_stream_instance(s2, NULL), name);
		tracemap_stream_close(s2);
	}
	tracemap_stream_close(s);
	assert_false(instance_exists(name));
	assert_int_equal(nr_records(), 0);
}

/* A private instance sized and clocked through the options */
static void test_private_size_clock(void **state)
{
	TRACEMAP_OPTS(tracemap_stream_opts, o, .buffer_size_kb = 2048, .clock = "global");
	struct tracemap_stream *s;
	const char *name;
	long kb;

	s = tracemap_stream_open(NULL, &o);
	assert_non_null(s);
	name = tracemap_stream_instance(s, NULL);
	kb = read_num(name, "buffer_size_kb");
	/* the kernel rounds up to whole sub-buffers */
	if (kb < 2048 || kb >= 2064)
		fail_msg("buffer_size_kb %ld, asked 2048", kb);
	assert_true(file_has(name, "trace_clock", "[global]"));
	tracemap_stream_close(s);

	/* a clock the kernel does not have: refused, with the list, nothing left */
	msgs.n = 0;
	o.clock = "no_such_clock";
	errno = 0;
	assert_null(tracemap_stream_open(NULL, &o));
	assert_int_equal(errno, EINVAL);
	said((const char *[]){ "no_such_clock", "no such trace clock", "global", NULL });
	assert_int_equal(nr_records(), 0);
}

/* A named instance: its size, clock, events, filters and pids written down, then put back */
static void test_named_put_back(void **state)
{
	static const struct tracemap_event_spec ev[] = { { "sched:sched_switch", "prev_pid != 1" } };
	int pid = getpid(), created = -1;
	TRACEMAP_OPTS(tracemap_stream_opts, o, .buffer_size_kb = 1024, .clock = "global",
		      .events = ev, .nr_events = 1, .pids = &pid, .nr_pids = 1,
		      .watermark = 25);
	const char *inst = th_instance_create(TAG, 0, 0);
	char *rec, path[512], *size_before, *clock_before;
	struct tracemap_stream *s;
	struct dirent *d;
	size_t len;
	DIR *dp;

	assert_non_null(inst);
	size_before = th_instance_read(inst, "buffer_size_kb");
	clock_before = th_instance_read(inst, "trace_clock");
	assert_non_null(size_before);
	assert_non_null(clock_before);
	assert_true(strstr(clock_before, "[local]") != NULL);

	s = tracemap_stream_open(inst, &o);
	assert_non_null(s);
	assert_string_equal(tracemap_stream_instance(s, &created), inst);
	assert_int_equal(created, 0);
	assert_true(file_has(inst, "trace_clock", "[global]"));
	assert_true(file_has(inst, "events/sched/sched_switch/enable", "1"));
	/* the record names every change, with the value before it */
	assert_int_equal(nr_records(), 1);
	dp = opendir(state_dir);
	assert_non_null(dp);
	while ((d = readdir(dp)) && d->d_name[0] == '.')
		;
	assert_non_null(d);
	snprintf(path, sizeof(path), "%s/%s", state_dir, d->d_name);
	closedir(dp);
	{
		FILE *f = fopen(path, "r");

		assert_non_null(f);
		rec = calloc(1, 8192);
		assert_non_null(rec);
		len = fread(rec, 1, 8191, f);
		fclose(f);
		assert_true(len > 0);
	}
	for (const char *const *want = (const char *[]){ "instance=", "buffer_size_kb=",
			"trace_clock=local", "buffer_percent=50", "event=sched:sched_switch",
			"filter=sched:sched_switch 0", "set_event_pid=", NULL }; *want; want++)
		if (!strstr(rec, *want))
			fail_msg("the record lacks \"%s\":\n%s", *want, rec);
	free(rec);

	tracemap_stream_close(s);
	assert_true(file_has(inst, "trace_clock", "[local]"));
	assert_true(file_has(inst, "events/sched/sched_switch/enable", "0"));
	assert_true(file_has(inst, "events/sched/sched_switch/filter", "none"));
	assert_int_equal(read_num(inst, "buffer_percent"), 50);
	{
		char *after = th_instance_read(inst, "buffer_size_kb");

		assert_non_null(after);
		assert_string_equal(after, size_before);
		free(after);
	}
	assert_true(instance_exists(inst));
	assert_int_equal(nr_records(), 0);
	free(size_before);
	free(clock_before);
	th_instance_remove(inst);
}

/* TRACEMAP_STREAM_CREATE: a missing name is made and removed; an existing one stays */
static void test_create_flag(void **state)
{
	TRACEMAP_OPTS(tracemap_stream_opts, o, .watermark = -1);
	const char *inst = th_instance_create(TAG, 0, 0);
	struct tracemap_stream *s;
	char name[128];
	int created = -1;

	assert_non_null(inst);
	snprintf(name, sizeof(name), "tmtest-%s-new-%d", TAG, (int)getpid());
	msgs.n = 0;
	errno = 0;
	assert_null(tracemap_stream_open(name, &o));
	assert_int_equal(errno, ENODEV);
	assert_false(instance_exists(name));

	o.flags = TRACEMAP_STREAM_CREATE;
	s = tracemap_stream_open(name, &o);
	assert_non_null(s);
	tracemap_stream_instance(s, &created);
	assert_int_equal(created, 1);
	assert_true(instance_exists(name));
	tracemap_stream_close(s);
	assert_false(instance_exists(name));

	s = tracemap_stream_open(inst, &o);
	assert_non_null(s);
	tracemap_stream_instance(s, &created);
	assert_int_equal(created, 0);
	tracemap_stream_close(s);
	assert_true(instance_exists(inst));
	assert_int_equal(nr_records(), 0);
	th_instance_remove(inst);
}

/* "", "..", a '/' and NULL where a private instance cannot serve: refused, said what to pass */
static void test_refusals(void **state)
{
	TRACEMAP_OPTS(tracemap_cpu_opts, co, .mode = TRACEMAP_MODE_SNAPSHOT);
	TRACEMAP_OPTS(tracemap_stream_opts, so);
	TRACEMAP_OPTS(tracemap_dump_opts, dop);
	static const struct tracemap_event_spec ev[] = { { "sched:sched_switch", NULL } };
	static const char *const bad[] = { "", "..", ".", "a/b" };
	char buf[4096];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		msgs.n = 0;
		errno = 0;
		assert_null(tracemap_stream_open(bad[i], &so));
		assert_int_equal(errno, EINVAL);
		said((const char *[]){ "TRACEMAP_TOP_LEVEL", NULL });
		msgs.n = 0;
		errno = 0;
		assert_null(tracemap_cpu_open(bad[i], 0, &co));
		assert_int_equal(errno, EINVAL);
		said((const char *[]){ "TRACEMAP_TOP_LEVEL", NULL });
		errno = 0;
		assert_null(tracemap_dump_take(bad[i], &dop));
		assert_int_equal(errno, EINVAL);
		errno = 0;
		assert_null(tracemap_events_enable(bad[i], ev, 1, NULL));
		assert_int_equal(errno, EINVAL);
		assert_int_equal(tracemap_instance_dir(th_tracefs(), bad[i], buf, sizeof(buf)),
				 -EINVAL);
	}

	/* NULL: a reader, a dump or an event set of a new private instance would be useless */
	msgs.n = 0;
	errno = 0;
	assert_null(tracemap_cpu_open(NULL, 0, &co));
	assert_int_equal(errno, EINVAL);
	said((const char *[]){ "tracemap_cpu_open", "no instance given", "TRACEMAP_TOP_LEVEL",
			       NULL });
	msgs.n = 0;
	errno = 0;
	assert_null(tracemap_dump_take(NULL, &dop));
	assert_int_equal(errno, EINVAL);
	said((const char *[]){ "tracemap_dump_take", "no instance given", "TRACEMAP_TOP_LEVEL",
			       NULL });
	msgs.n = 0;
	errno = 0;
	assert_null(tracemap_events_enable(NULL, ev, 1, NULL));
	assert_int_equal(errno, EINVAL);
	said((const char *[]){ "tracemap_events_enable", "no instance given", NULL });
	assert_int_equal(tracemap_instance_dir(th_tracefs(), NULL, buf, sizeof(buf)), -EINVAL);

	/* the top level only when named: its directory, without opening it */
	assert_int_equal(tracemap_instance_dir(th_tracefs(), TRACEMAP_TOP_LEVEL, buf, sizeof(buf)),
			 0);
	assert_string_equal(buf, th_tracefs());
	assert_int_equal(nr_records(), 0);
}

/* A child that opens a stream in @inst (events, filter, pids, buffer_percent) and a private one */
static pid_t start_consumer(const char *inst, char *priv, size_t size)
{
	static const struct tracemap_event_spec ev[] = { { "sched:sched_switch", "prev_pid != 1" } };
	int p[2], child_pid;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		TRACEMAP_OPTS(tracemap_stream_opts, o, .events = ev, .nr_events = 1,
			      .pids = &child_pid, .nr_pids = 1, .watermark = 25);
		struct tracemap_stream *s1, *s2;
		char line[300];

		child_pid = getpid();
		close(p[0]);
		s1 = tracemap_stream_open(inst, &o);
		s2 = tracemap_stream_open(NULL, &o);
		if (!s1 || !s2)
			_exit(3);
		snprintf(line, sizeof(line), "%s\n", tracemap_stream_instance(s2, NULL));
		if (write(p[1], line, strlen(line)) < 0)
			_exit(4);
		for (;;)
			pause();
	}
	consumer = pid;
	close(p[1]);
	n = read(p[0], priv, size - 1);
	close(p[0]);
	if (n <= 0)
		fail_msg("the consumer did not start");
	priv[n] = '\0';
	priv[strcspn(priv, "\n")] = '\0';
	return pid;
}

/* 'Z' once the killed child is a zombie (not reaped), as /proc/PID/stat says */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return p && p[1] == ' ' ? p[2] : '?';
}

/* Killed, and left a zombie: nothing of it runs, though its pid still answers */
static void kill_consumer(pid_t pid)
{
	int i;

	consumer = pid;
	assert_int_equal(kill(pid, SIGKILL), 0);
	for (i = 0; i < 5000 && proc_state(pid) != 'Z'; i++)
		usleep(1000);
	assert_int_equal(proc_state(pid), 'Z');
}

static void reap(pid_t pid)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	consumer = 0;
	assert_true(WIFSIGNALED(status));
}

static void assert_put_back(const char *inst, const char *priv)
{
	char *pids;

	assert_false(instance_exists(priv));
	assert_true(file_has(inst, "events/sched/sched_switch/enable", "0"));
	assert_true(file_has(inst, "events/sched/sched_switch/filter", "none"));
	assert_int_equal(read_num(inst, "buffer_percent"), 50);
	pids = th_instance_read(inst, "set_event_pid");
	assert_non_null(pids);
	assert_string_equal(pids, "");
	free(pids);
	assert_int_equal(nr_records(), 0);
}

/* SIGKILL: the records stay; a check changes nothing, a repair puts all back */
static void test_killed_consumer(void **state)
{
	const char *inst = th_instance_create(TAG, 0, 0);
	TRACEMAP_OPTS(tracemap_stream_opts, o, .watermark = -1);
	struct tracemap_stream *s;
	char priv[256];
	pid_t pid;

	assert_non_null(inst);
	pid = start_consumer(inst, priv, sizeof(priv));
	kill_consumer(pid);
	assert_true(instance_exists(priv));
	assert_true(file_has(inst, "events/sched/sched_switch/enable", "1"));
	assert_int_equal(read_num(inst, "buffer_percent"), 25);
	assert_int_equal(nr_records(), 2);

	/* a zombie is no longer running: its records are stale */
	msgs.n = 0;
	assert_int_equal(tracemap_state_repair(TRACEMAP_STATE_CHECK), 2);
	assert_int_equal(msgs.n, 2);
	assert_true(any_said("ended without putting back"));
	assert_true(any_said("run 'tracemap reset'"));
	assert_true(any_said(priv));
	assert_true(instance_exists(priv));
	assert_true(file_has(inst, "events/sched/sched_switch/enable", "1"));
	reap(pid);

	msgs.n = 0;
	assert_int_equal(tracemap_state_repair(0), 2);
	assert_true(any_said("put back what"));
	assert_true(any_said("removed the private instance it created"));
	assert_true(any_said("sched:sched_switch off"));
	assert_true(any_said("buffer_percent 50"));
	assert_put_back(inst, priv);
	msgs.n = 0;
	assert_int_equal(tracemap_state_repair(0), 0);
	assert_int_equal(msgs.n, 0);

	/* again, and the next stream open puts it back first */
	pid = start_consumer(inst, priv, sizeof(priv));
	kill_consumer(pid);
	reap(pid);
	assert_int_equal(nr_records(), 2);
	msgs.n = 0;
	s = tracemap_stream_open(inst, &o);
	assert_non_null(s);
	assert_true(any_said("put back what"));
	tracemap_stream_close(s);
	assert_put_back(inst, priv);
	th_instance_remove(inst);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TH_BOTH(test_private_default, NULL, NULL),
		cmocka_unit_test(test_private_size_clock),
		cmocka_unit_test(test_named_put_back),
		cmocka_unit_test(test_create_flag),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_killed_consumer),
	};

	/* instances are the same to both backends: without the mapping, read() reads them */
	th_require_tracefs();
	return cmocka_run_group_tests(tests, setup, teardown) ? 1 : 0;
}
