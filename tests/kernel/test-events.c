// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a stream sets up and decodes on the real tracefs: events enabled with
 * their filters on open and put back on close (also what was enabled before),
 * the caller told before each event is turned on (and able to refuse it),
 * bad selections and filters refused with nothing changed, set_event_pid,
 * fields by name (numbers, fixed and dynamic strings, arrays) compared with
 * the kernel's own text of the same events, self-filtering (none of our
 * threads' events, the other tasks' all there), and a second consumer of a
 * CPU buffer reported and counted.
 *
 * timeout: 120
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "tracemap.h"

#define TAG		"ev"
#define POLL_LIMIT	2000
#define MAX_REC		100000

/*
 * LeakSanitizer (the -san build): libtraceevent 1.7.1 loses 2 bytes in
 * parsing one of this kernel's event formats (tracefs_local_events() +
 * tep_free() alone shows it), once per stream that loads the formats.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libtraceevent.so\n";
}

static struct th_fixture fx = TH_FIXTURE(TAG);
static struct tracemap_stream *stream;

/* What a test collects: a copy of the decoded fields it checks */
struct rec {
	char name[32];
	char s1[16], s2[16];
	long long n[6];
	int pid;
};

static struct rec *recs;
static unsigned int nrec;
static int (*decode_fn)(const struct tracemap_event *ev, struct rec *r);

static char warned[512];

static void sink(void *ctx, enum tracemap_log_level level, const char *msg)
{
	if (level <= TRACEMAP_LOG_WARN && !warned[0])
		snprintf(warned, sizeof(warned), "%s", msg);
}

static int on_event(void *ctx, const struct tracemap_event *ev)
{
	struct rec *r;
	int ret;

	if (nrec >= MAX_REC)
		return 0;
	r = &recs[nrec];
	memset(r, 0, sizeof(*r));
	r->pid = tracemap_event_pid(stream, ev);
	snprintf(r->name, sizeof(r->name), "%s:%s", tracemap_event_system(stream, ev),
		 tracemap_event_name(stream, ev));
	ret = decode_fn ? decode_fn(ev, r) : 0;
	if (ret < 0)
		return -1;
	if (!ret)
		nrec++;
	return 0;
}

static int setup(void **state)
{
	recs = calloc(MAX_REC, sizeof(*recs));
	return recs ? 0 : -1;
}

static int teardown(void **state)
{
	tracemap_stream_close(stream);
	stream = NULL;
	th_fixture_drop(&fx);
	tracemap_set_print(NULL, NULL);
	warned[0] = '\0';
	nrec = 0;
	decode_fn = NULL;
	return 0;
}

static char *file(const char *name)
{
	char *v = th_instance_read(fx.inst, name);

	assert_non_null(v);
	v[strcspn(v, "\n")] = '\0';
	return v;
}

static void assert_file(const char *name, const char *want)
{
	char *v = file(name);

	if (strcmp(v, want))
		fail_msg("%s is '%s', expected '%s'", name, v, want);
	free(v);
}

static struct tracemap_stream *open_with(const struct tracemap_event_spec *ev, int nr,
					 unsigned int flags, enum tracemap_mode mode)
{
	struct tracemap_stream_opts o = {
		.sz = sizeof(o), .mode = mode, .flags = flags, .on_event = on_event,
		.events = ev, .nr_events = nr, .cpu_flags = th_cpu_flags(),
	};

	stream = tracemap_stream_open(fx.inst, &o);
	if (stream)
		th_assert_stream_backend(stream);
	return stream;
}

/* Poll until a poll of @quiet_ms brings nothing. */
static void drain(int quiet_ms)
{
	int i, ret;

	for (i = 0; i < POLL_LIMIT; i++) {
		ret = tracemap_stream_poll(stream, quiet_ms);
		assert_true(ret >= 0);
		if (!ret)
			return;
	}
	fail_msg("the stream did not run dry");
}

/* ---------------------------------------------------- enable / restore */

static void test_enable_restore(void **state)
{
	static const struct tracemap_event_spec ev[] = {
		{ "sched:sched_switch", NULL },
		{ "sched:sched_wakeup", "prio < 100" },
		{ "sched_waking", NULL },	/* an event name alone */
	};
	const char *const *names;

	th_backend_case(state);
	th_fixture_new(&fx, 256, 0);
	/* enabled before: stays enabled after */
	assert_int_equal(th_instance_write(fx.inst, "events/sched/sched_waking/enable", "1"), 0);

	assert_non_null(open_with(ev, 3, 0, TRACEMAP_MODE_CONSUME));
	assert_file("events/sched/sched_switch/enable", "1");
	assert_file("events/sched/sched_wakeup/enable", "1");
	assert_file("events/sched/sched_wakeup/filter", "prio < 100");
	assert_file("events/sched/sched_switch/filter", "none");
	assert_file("events/sched/sched_process_exec/enable", "0");
	names = tracemap_stream_events(stream);
	assert_non_null(names);
	assert_string_equal(names[0], "sched:sched_switch");
	assert_string_equal(names[1], "sched:sched_wakeup");
	assert_string_equal(names[2], "sched:sched_waking");
	assert_null(names[3]);

	tracemap_stream_close(stream);
	stream = NULL;
	assert_file("events/sched/sched_switch/enable", "0");
	assert_file("events/sched/sched_wakeup/enable", "0");
	assert_file("events/sched/sched_wakeup/filter", "none");
	assert_file("events/sched/sched_waking/enable", "1");

	/* a whole system, and put back */
	{
		static const struct tracemap_event_spec sys[] = { { "sched", NULL } };

		assert_non_null(open_with(sys, 1, 0, TRACEMAP_MODE_CONSUME));
		assert_file("events/sched/sched_process_exec/enable", "1");
		/* put back while the stream stays open, for a final drain */
		assert_int_equal(tracemap_stream_restore_events(stream), 0);
		assert_file("events/sched/sched_process_exec/enable", "0");
		assert_null(tracemap_stream_events(stream)[0]);
		assert_int_equal(tracemap_stream_restore_events(stream), 0);
		tracemap_stream_close(stream);
		stream = NULL;
		assert_file("events/sched/sched_process_exec/enable", "0");
		assert_file("events/sched/sched_waking/enable", "1");
	}
}

/* ------------------------------------------------------- on_enable */

static char told[8][64];
static int nr_told, refuse_at = -1;

/* what the hook saw, and each event was still off when it was told */
static int on_enable(void *ctx, const char *name)
{
	char path[128], *v;

	assert_ptr_equal(ctx, &nr_told);
	if (nr_told == refuse_at)
		return 1;
	assert_true(nr_told < 8);
	snprintf(told[nr_told++], sizeof(told[0]), "%s", name);
	snprintf(path, sizeof(path), "events/%s/enable", name);
	*strchr(path + 7, ':') = '/';
	v = file(path);
	assert_string_equal(v, "0");
	free(v);
	return 0;
}

static void test_on_enable(void **state)
{
	static const struct tracemap_event_spec ev[] = {
		{ "sched:sched_switch", NULL },
		{ "sched:sched_wakeup", NULL },
		{ "sched:sched_process_exec", NULL },
	};
	struct tracemap_stream_opts o = {
		.sz = sizeof(o), .mode = TRACEMAP_MODE_CONSUME, .flags = TRACEMAP_STREAM_NO_SELF,
		.on_event = on_event, .ctx = &nr_told, .events = ev, .nr_events = 3,
		.on_enable = on_enable,
	};

	th_backend_case(state);
	o.cpu_flags = th_cpu_flags();
	th_fixture_new(&fx, 256, 0);
	/* on before: not told */
	assert_int_equal(th_instance_write(fx.inst, "events/sched/sched_wakeup/enable", "1"), 0);
	nr_told = 0;
	refuse_at = -1;
	stream = tracemap_stream_open(fx.inst, &o);
	assert_non_null(stream);
	th_assert_stream_backend(stream);
	/* sched_waking: the stream's own, to follow what its output causes */
	assert_int_equal(nr_told, 3);
	assert_string_equal(told[0], "sched:sched_switch");
	assert_string_equal(told[1], "sched:sched_process_exec");
	assert_string_equal(told[2], "sched:sched_waking");
	tracemap_stream_close(stream);
	stream = NULL;

	/* refused at the second: the open fails, nothing left changed */
	nr_told = 0;
	refuse_at = 1;
	stream = tracemap_stream_open(fx.inst, &o);
	assert_null(stream);
	assert_int_equal(errno, ECANCELED);
	assert_file("events/sched/sched_switch/enable", "0");
	assert_file("events/sched/sched_process_exec/enable", "0");
	assert_file("events/sched/sched_waking/enable", "0");
	assert_file("events/sched/sched_wakeup/enable", "1");
	assert_file("set_event_notrace_pid", "");
}

static void test_bad_selections(void **state)
{
	static const struct tracemap_event_spec empty[] = { { "sched:", NULL } };
	static const struct tracemap_event_spec nosuch[] = {
		{ "sched:sched_switch", NULL }, { "sched:no_such_event", NULL } };
	static const struct tracemap_event_spec ftrace[] = { { "ftrace:print", NULL } };
	static const struct tracemap_event_spec badf[] = {
		{ "sched:sched_switch", NULL }, { "sched:sched_wakeup", "no_such_field == 1" } };
	static const struct tracemap_event_spec syntax[] = {
		{ "sched:sched_wakeup", "common_pid ==" } };

	th_backend_case(state);
	th_fixture_new(&fx, 256, 0);
	tracemap_set_print(sink, NULL);

	assert_null(open_with(empty, 1, 0, TRACEMAP_MODE_CONSUME));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(warned, "empty event name"));
	warned[0] = '\0';

	assert_null(open_with(nosuch, 2, 0, TRACEMAP_MODE_CONSUME));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(warned, "no such event"));
	warned[0] = '\0';

	assert_null(open_with(ftrace, 1, 0, TRACEMAP_MODE_CONSUME));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(warned, "always recorded"));
	warned[0] = '\0';

	/* the first event was enabled before the filter of the second failed: put back */
	assert_null(open_with(badf, 2, 0, TRACEMAP_MODE_CONSUME));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(warned, "no_such_field"));
	/* the kernel's reason, not the errno of a file operation */
	assert_non_null(strstr(warned, "Field not found"));
	assert_null(strstr(warned, "No such file"));
	assert_file("events/sched/sched_switch/enable", "0");
	assert_file("events/sched/sched_wakeup/enable", "0");
	assert_file("events/sched/sched_wakeup/filter", "none");
	assert_file("buffer_percent", "50");

	warned[0] = '\0';
	assert_null(open_with(syntax, 1, 0, TRACEMAP_MODE_CONSUME));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(warned, "Invalid value"));
	assert_file("events/sched/sched_wakeup/enable", "0");
	assert_file("events/sched/sched_wakeup/filter", "none");
}

/* ---------------------------------------------------------- decoding */

/*
 * sched_switch fields against the kernel's text of the same events: a
 * follow stream and the instance's trace file read the same buffer without
 * consuming it.
 */
static int decode_switch(const struct tracemap_event *ev, struct rec *r)
{
	const char *p, *n;

	if (strcmp(r->name, "sched:sched_switch"))
		return 0;
	p = tracemap_event_field_str(stream, ev, "prev_comm");
	n = tracemap_event_field_str(stream, ev, "next_comm");
	if (!p || !n)
		return -1;
	snprintf(r->s1, sizeof(r->s1), "%s", p);
	snprintf(r->s2, sizeof(r->s2), "%s", n);
	if (tracemap_event_field_num(stream, ev, "prev_pid", &r->n[0]) ||
	    tracemap_event_field_num(stream, ev, "next_pid", &r->n[1]) ||
	    tracemap_event_field_num(stream, ev, "prev_prio", &r->n[2]) ||
	    tracemap_event_field_num(stream, ev, "next_prio", &r->n[3]))
		return -1;
	return 0;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	int i, c;

	c = strcmp(x->s1, y->s1);
	if (!c)
		c = strcmp(x->s2, y->s2);
	for (i = 0; !c && i < 4; i++)
		c = x->n[i] < y->n[i] ? -1 : x->n[i] > y->n[i];
	return c;
}

static void sleeps(int n)
{
	struct timespec ts = { .tv_nsec = 1000000 };
	int i;

	for (i = 0; i < n; i++)
		nanosleep(&ts, NULL);
}

static void test_fields_match_kernel_text(void **state)
{
	static const struct tracemap_event_spec ev[] = { { "sched:sched_switch", NULL } };
	struct rec *kern;
	unsigned int nk = 0, i;
	char *text, *line, *save = NULL;

	th_mapping_case("a follow stream beside the kernel's text of the same buffer");
	th_fixture_new(&fx, 1024, 0);
	decode_fn = decode_switch;
	assert_non_null(open_with(ev, 1, TRACEMAP_STREAM_LOW_LATENCY, TRACEMAP_MODE_FOLLOW));
	sleeps(20);
	assert_int_equal(th_instance_write(fx.inst, "tracing_on", "0"), 0);
	drain(150);
	assert_true(nrec >= 20);

	text = th_instance_read(fx.inst, "trace");
	assert_non_null(text);
	kern = calloc(MAX_REC, sizeof(*kern));
	assert_non_null(kern);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct rec *k = &kern[nk];
		char *p = strstr(line, "sched_switch: prev_comm=");

		if (!p || nk >= MAX_REC)
			continue;
		/* the kernel's format: prev_comm=%s prev_pid=%d prev_prio=%d ... next_comm=%s ... */
		if (sscanf(p, "sched_switch: prev_comm=%15s prev_pid=%lld prev_prio=%lld",
			   k->s1, &k->n[0], &k->n[2]) != 3)
			continue;
		p = strstr(p, "==> next_comm=");
		if (!p || sscanf(p, "==> next_comm=%15s next_pid=%lld next_prio=%lld",
				 k->s2, &k->n[1], &k->n[3]) != 3)
			continue;
		nk++;
	}
	free(text);
	/* comms with spaces would not scan: this test's tasks have none */
	assert_int_equal(nk, nrec);
	qsort(recs, nrec, sizeof(*recs), cmp_rec);
	qsort(kern, nk, sizeof(*kern), cmp_rec);
	for (i = 0; i < nk; i++)
		if (cmp_rec(&recs[i], &kern[i]))
			fail_msg("event %u: decoded %s/%lld -> %s/%lld, kernel %s/%lld -> %s/%lld", i,
				 recs[i].s1, recs[i].n[0], recs[i].s2, recs[i].n[1], kern[i].s1,
				 kern[i].n[0], kern[i].s2, kern[i].n[1]);
	free(kern);
}

/* raw_syscalls:sys_enter: a fixed array of numbers; sched_process_exec: a __string */
static int decode_sys(const struct tracemap_event *ev, struct rec *r)
{
	unsigned long args[6];
	const void *p;
	unsigned int size = 0;
	const char *f;
	long long v;

	if (!strcmp(r->name, "raw_syscalls:sys_enter")) {
		/* borrowed from the record: 4-byte aligned only */
		p = tracemap_event_field_array(stream, ev, "args", &size);
		if (!p || size != sizeof(args) ||
		    tracemap_event_field_num(stream, ev, "id", &r->n[0]))
			return -1;
		memcpy(args, p, sizeof(args));
		r->n[1] = (long long)args[0];
		r->n[2] = (long long)args[1];
		r->n[3] = (long long)args[2];
		/* an array is not a number, nor a missing field */
		if (tracemap_event_field_num(stream, ev, "args", &v) != -EMEDIUMTYPE ||
		    tracemap_event_field_num(stream, ev, "nope", &v) != -ENOENT)
			return -1;
	} else if (!strcmp(r->name, "sched:sched_process_exec")) {
		f = tracemap_event_field_str(stream, ev, "filename");
		if (!f)
			return -1;
		snprintf(r->s1, sizeof(r->s1), "%s", f);
		if (tracemap_event_field_num(stream, ev, "pid", &r->n[0]))
			return -1;
		snprintf(r->s2, sizeof(r->s2), "%s", tracemap_event_comm(stream, ev));
	}
	return 0;
}

static void test_arrays_and_dynamic_strings(void **state)
{
	char filter[64];
	struct tracemap_event_spec ev[] = {
		{ "raw_syscalls:sys_enter", filter },
		{ "sched:sched_process_exec", NULL },
	};
	unsigned int i, nsys = 0, nexec = 0;
	int pid, st;

	th_backend_case(state);
	th_fixture_new(&fx, 1024, 0);
	snprintf(filter, sizeof(filter), "id == %d && common_pid == %d", SYS_lseek, (int)getpid());
	decode_fn = decode_sys;
	assert_non_null(open_with(ev, 2, TRACEMAP_STREAM_LOW_LATENCY, TRACEMAP_MODE_CONSUME));
	for (i = 0; i < 7; i++)
		syscall(SYS_lseek, -1L, 12345L + i, 2L);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* other tasks exec too: stop writing, then read dry */
	assert_int_equal(th_instance_write(fx.inst, "tracing_on", "0"), 0);
	drain(150);

	for (i = 0; i < nrec; i++) {
		if (!strcmp(recs[i].name, "raw_syscalls:sys_enter")) {
			assert_int_equal(recs[i].n[0], SYS_lseek);
			assert_int_equal(recs[i].n[1], -1);
			assert_int_equal(recs[i].n[2], 12345 + nsys);
			assert_int_equal(recs[i].n[3], 2);
			assert_int_equal(recs[i].pid, getpid());
			nsys++;
		} else if (!strcmp(recs[i].name, "sched:sched_process_exec") &&
			   recs[i].n[0] == pid) {
			assert_string_equal(recs[i].s1, "/bin/true");
			/* the exec renamed the task */
			assert_string_equal(recs[i].s2, "true");
			nexec++;
		}
	}
	assert_int_equal(nsys, 7);
	assert_int_equal(nexec, 1);
}

/* set_event_pid: only the given task's events, put back on close */
static void test_pids(void **state)
{
	char filter[64];
	struct tracemap_event_spec ev[] = { { "raw_syscalls:sys_enter", filter } };
	struct tracemap_stream_opts o = {
		.sz = sizeof(o), .on_event = on_event, .flags = TRACEMAP_STREAM_LOW_LATENCY,
		.events = ev, .nr_events = 1,
	};
	int pids[1], go[2], pid, st, i;
	char c = 0;

	th_backend_case(state);
	o.cpu_flags = th_cpu_flags();
	th_fixture_new(&fx, 1024, 0);
	snprintf(filter, sizeof(filter), "id == %d", SYS_lseek);
	assert_int_equal(pipe(go), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		for (i = 0; i < 5; i++)
			syscall(SYS_lseek, -1L, 777L, 0L);
		_exit(0);
	}
	close(go[0]);
	pids[0] = pid;
	o.pids = pids;
	o.nr_pids = 1;
	decode_fn = NULL;
	stream = tracemap_stream_open(fx.inst, &o);
	assert_non_null(stream);
	th_assert_stream_backend(stream);
	{
		char *v = file("set_event_pid");

		assert_int_equal(atoi(v), pid);
		free(v);
	}
	/* ours are not traced, the child's 5 are */
	for (i = 0; i < 3; i++)
		syscall(SYS_lseek, -1L, 777L, 0L);
	assert_int_equal(write(go[1], &c, 1), 1);
	close(go[1]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	drain(150);
	assert_int_equal(nrec, 5);
	for (i = 0; i < (int)nrec; i++)
		assert_int_equal(recs[i].pid, pid);
	tracemap_stream_close(stream);
	stream = NULL;
	assert_file("set_event_pid", "");
}

/* ----------------------------------------------------- self-filtering */

static int tids[64], ntids;

static bool ours(long long pid)
{
	int i;

	for (i = 0; i < ntids; i++)
		if (tids[i] == pid)
			return true;
	return false;
}

static int child_pid;
/* the child's voluntary context switches in its loop of sleeps (getrusage()) */
static unsigned int child_switches;

/* Returns 1 to leave out events that name neither us nor the child (other tasks' load). */
static int decode_sched(const struct tracemap_event *ev, struct rec *r)
{
	int i;

	r->n[0] = r->n[1] = r->n[2] = -1;
	r->n[3] = -1;
	if (tracemap_event_field_num(stream, ev, "common_flags", &r->n[4]))
		return -1;
	if (!strcmp(r->name, "sched:sched_switch")) {
		if (tracemap_event_field_num(stream, ev, "prev_pid", &r->n[0]) ||
		    tracemap_event_field_num(stream, ev, "next_pid", &r->n[1]) ||
		    tracemap_event_field_num(stream, ev, "prev_state", &r->n[3]))
			return -1;
	} else if (tracemap_event_field_num(stream, ev, "pid", &r->n[2])) {
		return -1;
	}
	if (ours(r->pid))
		return 0;
	for (i = 0; i < 3; i++)
		if (ours(r->n[i]) || r->n[i] == child_pid)
			return 0;
	return 1;
}

/*
 * A child sleeps SLEEPS times while the stream runs. With NO_SELF none of
 * the delivered events is ours, by common_pid or in the task fields, and
 * the child's sleeps are all there; without it, our own are there too.
 * All of them: as many as the child's own count of its voluntary context
 * switches. A sleep whose timer fires before the task gets to schedule()
 * (a vCPU the host holds back, QEMU's TCG) switches nothing and records no
 * sched_switch: 29 of 30 in the 6.1 and 6.12 guests, on both backends.
 */
#define SLEEPS	30

static unsigned int self_run(unsigned int flags, bool external, unsigned int *own,
			     uint64_t *own_stat)
{
	/*
	 * Only this program's tasks by name: the other tasks of a busy machine
	 * would overflow the buffer of a slow (sanitizer) build.
	 */
	static const struct tracemap_event_spec ev[] = {
		{ "sched:sched_switch", "prev_comm ~ \"test-events*\" || next_comm ~ "
		  "\"test-events*\" || prev_comm == \"tmevchild\" || next_comm == \"tmevchild\"" },
		{ "sched:sched_wakeup", "comm ~ \"test-events*\" || comm == \"tmevchild\"" },
		{ "sched:sched_waking", "comm ~ \"test-events*\" || comm == \"tmevchild\"" },
	};
	struct tracemap_cpu_stats st;
	unsigned int i, child_sleeps = 0;
	int pid, status, k;
	char path[128];

	nrec = 0;
	*own = 0;
	*own_stat = 0;
	decode_fn = decode_sched;
	/* external: enabled by someone else, so only the user-space check applies */
	if (external) {
		for (k = 0; k < 3; k++) {
			snprintf(path, sizeof(path), "events/%s/filter", ev[k].name);
			*strchr(path + 7, ':') = '/';
			assert_int_equal(th_instance_write(fx.inst, path, ev[k].filter), 0);
			*strrchr(path, '/') = '\0';
			strcat(path, "/enable");
			assert_int_equal(th_instance_write(fx.inst, path, "1"), 0);
		}
	}
	assert_non_null(open_with(ev, external ? 0 : 3, flags | TRACEMAP_STREAM_LOW_LATENCY,
				  TRACEMAP_MODE_CONSUME));
	ntids = 1;
	tids[0] = getpid();
	if ((flags & TRACEMAP_STREAM_NO_SELF) && !external) {
		char *v = file("events/sched/sched_switch/filter");
		char want[64];

		snprintf(want, sizeof(want), "prev_pid != %d", (int)getpid());
		assert_non_null(strstr(v, want));
		free(v);
	}
	/*
	 * The child on the other CPU: there its switches out never name us as
	 * next_pid, so every one of its sleeps is an event of another task.
	 */
	th_pin(0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct rusage r0, r1;

		th_pin(1);
		prctl(PR_SET_NAME, "tmevchild");
		getrusage(RUSAGE_SELF, &r0);
		sleeps(SLEEPS);
		getrusage(RUSAGE_SELF, &r1);
		/* the kernel's count of its sleeps: one whose timer fired first never switched */
		_exit(r1.ru_nvcsw - r0.ru_nvcsw < 250 ? r1.ru_nvcsw - r0.ru_nvcsw : 250);
	}
	child_pid = pid;
	/* the stream reads while the child runs: our own wakeups happen */
	for (k = 0; k < POLL_LIMIT; k++) {
		assert_true(tracemap_stream_poll(stream, 5) >= 0);
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
	}
	if (k == POLL_LIMIT)
		assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	child_switches = WEXITSTATUS(status);
	/* the other tasks of this machine go on: stop writing, then read dry */
	assert_int_equal(th_instance_write(fx.inst, "tracing_on", "0"), 0);
	drain(100);
	assert_int_equal(th_instance_write(fx.inst, "tracing_on", "1"), 0);
	for (i = 0; i < nrec; i++) {
		/*
		 * Ours: written by us (but not in an interrupt: hardirq, softirq,
		 * NMI flags), or naming us (libtracemap-stream(3), Own events).
		 */
		if ((ours(recs[i].pid) && !(recs[i].n[4] & 0x58)) || ours(recs[i].n[0]) ||
		    ours(recs[i].n[1]) || ours(recs[i].n[2]))
			(*own)++;
		/* the child going to sleep: S (1) */
		if (recs[i].n[0] == pid && recs[i].n[3] == 1)
			child_sleeps++;
	}
	for (k = 0; k < tracemap_stream_nr_cpus(stream); k++) {
		assert_int_equal(tracemap_cpu_stats(tracemap_stream_cpu(stream, k), &st,
						    sizeof(st)), 0);
		*own_stat += st.own;
		/* a child sleep missing is explained by a loss the reader reported, or not */
		if (st.lost || st.lost_unknown || st.skipped || tracemap_cpu_stats_unread(&st))
			printf("# cpu%d: %llu lost, %llu gaps, %llu skipped by the kernel, %llu "
			       "unread\n", k, (unsigned long long)st.lost,
			       (unsigned long long)st.lost_unknown, (unsigned long long)st.skipped,
			       (unsigned long long)tracemap_cpu_stats_unread(&st));
	}
	tracemap_stream_close(stream);
	stream = NULL;
	assert_file("set_event_notrace_pid", "");
	if (external) {
		assert_int_equal(th_instance_write(fx.inst, "events/enable", "0"), 0);
		for (k = 0; k < 3; k++) {
			snprintf(path, sizeof(path), "events/%s/filter", ev[k].name);
			*strchr(path + 7, ':') = '/';
			assert_int_equal(th_instance_write(fx.inst, path, "0"), 0);
		}
	}
	assert_file("events/sched/sched_switch/filter", "none");
	th_restore_affinity();
	return child_sleeps;
}

/* Every sleep of the child the kernel switched for came, and most of the SLEEPS did switch */
static void check_sleeps(unsigned int seen)
{
	if (child_switches != SLEEPS)
		printf("# the child switched %u times for its %u sleeps\n", child_switches, SLEEPS);
	assert_int_equal(seen, child_switches);
	assert_true(child_switches >= SLEEPS - 5);
}

static void test_self_filter(void **state)
{
	unsigned int own, sleeps_seen;
	uint64_t own_stat;

	th_backend_case(state);
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		skip();
	th_fixture_new(&fx, 1024, 0);
	sleeps_seen = self_run(TRACEMAP_STREAM_NO_SELF, false, &own, &own_stat);
	printf("# NO_SELF: %u events, %u own, %llu left out in user space, %u child sleeps\n",
	       nrec, own, (unsigned long long)own_stat, sleeps_seen);
	assert_int_equal(own, 0);
	check_sleeps(sleeps_seen);

	/* events the stream did not enable: no filter of ours, the user-space check */
	sleeps_seen = self_run(TRACEMAP_STREAM_NO_SELF, true, &own, &own_stat);
	printf("# NO_SELF, events enabled by others: %u events, %u own, %llu left out in user "
	       "space, %u child sleeps\n", nrec, own, (unsigned long long)own_stat, sleeps_seen);
	assert_int_equal(own, 0);
	assert_true(own_stat > 0);
	check_sleeps(sleeps_seen);

	sleeps_seen = self_run(0, false, &own, &own_stat);
	printf("# without: %u events, %u own, %u child sleeps\n", nrec, own, sleeps_seen);
	assert_true(own > 0);
	assert_int_equal(own_stat, 0);
	check_sleeps(sleeps_seen);
}

/*
 * sched_waking, enabled only to follow what the stream's output causes:
 * every one of them left out and counted in helper, none in own. A
 * non-consuming stream, so that the instance's trace file still has them
 * to count.
 */
static void test_helper_apart(void **state)
{
	static const struct tracemap_event_spec ev[] = { { "sched:sched_switch", NULL } };
	struct tracemap_cpu_stats st;
	uint64_t helper = 0, own = 0;
	unsigned int wakings = 0, i;
	int k, status;
	char *txt, *p;
	pid_t pid;

	th_mapping_case("a follow stream leaves the trace file its events to count");
	th_fixture_new(&fx, 2048, 0);
	assert_non_null(open_with(ev, 1, TRACEMAP_STREAM_NO_SELF, TRACEMAP_MODE_FOLLOW));
	assert_file("events/sched/sched_waking/enable", "1");
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		sleeps(SLEEPS);
		_exit(0);
	}
	for (k = 0; k < POLL_LIMIT; k++) {
		assert_true(tracemap_stream_poll(stream, 5) >= 0);
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
	}
	assert_int_equal(th_instance_write(fx.inst, "tracing_on", "0"), 0);
	drain(100);
	for (i = 0; i < nrec; i++)
		assert_string_not_equal(recs[i].name, "sched:sched_waking");
	for (k = 0; k < tracemap_stream_nr_cpus(stream); k++) {
		assert_int_equal(tracemap_cpu_stats(tracemap_stream_cpu(stream, k), &st,
						    sizeof(st)), 0);
		assert_int_equal(st.lost + st.lost_unknown + st.gaps_possible, 0);
		helper += st.helper;
		own += st.own;
	}
	txt = th_instance_read(fx.inst, "trace");
	assert_non_null(txt);
	for (p = txt; (p = strstr(p, " sched_waking: ")); p++)
		wakings++;
	free(txt);
	printf("# %u sched_waking in the buffer; helper %llu, own %llu, %u delivered\n", wakings,
	       (unsigned long long)helper, (unsigned long long)own, nrec);
	assert_true(wakings >= SLEEPS);
	assert_int_equal(helper, wakings);
	assert_int_equal(th_instance_write(fx.inst, "tracing_on", "1"), 0);
}

/* ----------------------------------------------------- second consumer */

static unsigned int markers;

static int count_markers(const struct tracemap_event *ev, struct rec *r)
{
	if (!strcmp(r->name, "ftrace:print"))
		markers++;
	return 0;
}

static void test_second_consumer(void **state)
{
	struct tracemap_cpu_opts co = { .sz = sizeof(co), .mode = TRACEMAP_MODE_CONSUME };
	struct tracemap_stream_opts o = { .sz = sizeof(o), .cpumask = "1", .on_event = on_event,
					  .flags = TRACEMAP_STREAM_LOW_LATENCY };
	struct tracemap_cpu_stats st;
	struct tracemap_cpu *other;
	struct th_events g = { 0 };

	th_backend_case(state);
	/* the other consumer on the stream's backend */
	o.cpu_flags = th_cpu_flags();
	co.flags = th_on_read() ? th_cpu_flags() : TRACEMAP_CPU_NO_FALLBACK;
	th_fixture_new(&fx, 256, 0);
	tracemap_set_print(sink, NULL);
	decode_fn = count_markers;
	markers = 0;
	th_pin(0);
	stream = tracemap_stream_open(fx.inst, &o);
	assert_non_null(stream);
	th_assert_stream_backend(stream);
	other = tracemap_cpu_open(fx.inst, 0, &co);
	assert_non_null(other);

	th_fixture_write_markers(&fx, 0, 10);
	assert_int_equal(th_drain_events(other, &g), 10);
	th_fixture_write_markers(&fx, 10, 5);
	drain(100);
	assert_int_equal(markers, 5);
	assert_int_equal(tracemap_cpu_stats(tracemap_stream_cpu(stream, 0), &st, sizeof(st)), 0);
	assert_int_equal(st.stolen, 10);
	assert_non_null(strstr(warned, "another reader"));

	tracemap_cpu_close(other);
	th_events_free(&g);
	th_restore_affinity();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TH_BOTH(test_enable_restore, NULL, teardown),
		TH_BOTH(test_on_enable, NULL, teardown),
		TH_BOTH(test_bad_selections, NULL, teardown),
		cmocka_unit_test_teardown(test_fields_match_kernel_text, teardown),
		TH_BOTH(test_arrays_and_dynamic_strings, NULL, teardown),
		TH_BOTH(test_pids, NULL, teardown),
		TH_BOTH(test_self_filter, NULL, teardown),
		cmocka_unit_test_teardown(test_helper_apart, teardown),
		TH_BOTH(test_second_consumer, NULL, teardown),
	};

	/* the cases of the mapping skip one by one: the others run through read() */
	th_require_tracefs();
	th_save_affinity();
	return cmocka_run_group_tests(tests, setup, NULL);
}
