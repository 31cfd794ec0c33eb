// SPDX-License-Identifier: GPL-2.0-only
/*
 * A reader or a stream used in a forked child: the mapping is not passed
 * on (VM_DONTCOPY), so every call there fails with EBADFD and one message
 * saying what to do, instead of SIGSEGV in tm_meta_load(). The child's
 * close frees only its copies: the parent's reader delivers every marker
 * after it, exactly once, and the stream's events and watermark stay set
 * until the parent closes it.
 *
 * timeout: 60
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "tracemap.h"

static struct th_fixture fx = TH_FIXTURE("nlib-fork");

/* in the child: messages at error level, and the last one */
static struct {
	unsigned int n;
	char last[512];
} msgs;

static void capture(void *ctx, enum tracemap_log_level level, const char *msg)
{
	if (level != TRACEMAP_LOG_ERROR)
		return;
	msgs.n++;
	snprintf(msgs.last, sizeof(msgs.last), "%s", msg);
}

/* child's checks: the exit status says which failed (0: none) */
#define CHILD_CHECK(n, cond)	do { if (!(cond)) _exit(n); } while (0)

/* Run @fn in a child and expect it to exit 0, not to be killed */
static void in_child(void (*fn)(void *arg), void *arg)
{
	int status;
	pid_t pid;

	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		memset(&msgs, 0, sizeof(msgs));
		tracemap_set_print(capture, NULL);
		fn(arg);
		/* _exit: the harness's exit handlers remove the parent's instance */
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		fail_msg("the child was killed by signal %d", WTERMSIG(status));
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status))
		fail_msg("the child's check %d failed", WEXITSTATUS(status));
}

static void message_said(int check)
{
	char want[64];

	snprintf(want, sizeof(want), "opened in process %d", (int)getppid());
	CHILD_CHECK(check, msgs.n == 1 && strstr(msgs.last, want) &&
		    strstr(msgs.last, "cannot be used in its child") &&
		    strstr(msgs.last, "open a new one"));
}

static void child_reader(void *arg)
{
	struct tracemap_cpu *c = arg;
	struct tracemap_cpu_stats st;
	struct tracemap_region r;
	struct tracemap_event ev;
	unsigned char page[65536];

	errno = 0;
	CHILD_CHECK(10, tracemap_cpu_next_event(c, &ev) == -EBADFD && errno == EBADFD);
	CHILD_CHECK(11, tracemap_cpu_read_region(c, &r) == -EBADFD);
	CHILD_CHECK(12, tracemap_cpu_read_page(c, page, sizeof(page), TRACEMAP_PAGE_FLUSH) ==
		    -EBADFD);
	CHILD_CHECK(13, tracemap_cpu_stats(c, &st, sizeof(st)) == -EBADFD);
	CHILD_CHECK(14, tracemap_cpu_wait(c, -1, 0) == -EBADFD);
	CHILD_CHECK(15, tracemap_cpu_rewind(c) == -EBADFD);
	/* one message for the reader, however many calls */
	message_said(16);
	tracemap_cpu_close(c);
}

/* markers @first..@first+@n-1 come next from @c, once each, no loss */
static void expect_markers(struct tracemap_cpu *c, unsigned int first, unsigned int n)
{
	struct th_events got = { 0 };
	unsigned int i;

	assert_int_equal(th_drain_events(c, &got), n);
	for (i = 0; i < n; i++) {
		assert_int_equal(got.ev[i].seq, first + i);
		assert_int_equal(got.ev[i].missed, 0);
	}
	th_events_free(&got);
}

static void reader_case(unsigned int flags)
{
	/* a region half walked when the child starts */
	struct tracemap_cpu *c = th_fixture_consume_markers(&fx, 256, flags, 10, 4);

	in_child(child_reader, c);
	/* the rest of the region, then everything after the child's close */
	expect_markers(c, 4, 6);
	th_fixture_write_markers(&fx, 10, 500);
	expect_markers(c, 10, 500);
}

static void test_reader_mmap(void **state)
{
	reader_case(TRACEMAP_CPU_NO_FALLBACK);
}

static void test_reader_read(void **state)
{
	reader_case(TRACEMAP_CPU_FORCE_READ);
}

static void child_stream(void *arg)
{
	struct tracemap_stream *s = arg;
	struct tracemap_event ev;

	CHILD_CHECK(20, tracemap_stream_poll(s, 0) == -EBADFD);
	CHILD_CHECK(21, tracemap_stream_consume(s) == -EBADFD);
	CHILD_CHECK(22, tracemap_stream_next_event(s, &ev, 0) == -EBADFD);
	CHILD_CHECK(23, tracemap_stream_restore_events(s) == -EBADFD);
	message_said(24);
	tracemap_stream_close(s);
}

static char *read_trimmed(const char *file)
{
	char *v = th_instance_read(fx.inst, file);

	assert_non_null(v);
	v[strcspn(v, "\n")] = 0;
	return v;
}

static void test_stream(void **state)
{
	static const struct tracemap_event_spec spec = { .name = "sched:sched_process_exit" };
	struct tracemap_stream_opts o = { .sz = sizeof(o), .cpumask = "1", .watermark = 0,
					  .flags = TRACEMAP_STREAM_LOW_LATENCY,
					  .events = &spec, .nr_events = 1 };
	struct tracemap_stream *s;
	struct tracemap_event ev;
	char *v;
	int i, ret;

	th_backend_case(state);
	o.cpu_flags = th_cpu_flags();
	th_fixture_new(&fx, 256, 0);
	th_pin(0);
	s = tracemap_stream_open(fx.inst, &o);
	assert_non_null(s);
	th_assert_stream_backend(s);
	th_fixture_write_markers(&fx, 0, 10);
	/* a task that exited on CPU 0 since the open may come first */
	do
		assert_int_equal(tracemap_stream_next_event(s, &ev, 5000), 1);
	while (th_marker_seq(ev.data, ev.size) < 0);
	assert_int_equal(th_marker_seq(ev.data, ev.size), 0);
	in_child(child_stream, s);

	/* the child's close put nothing back: the parent's stream goes on */
	v = read_trimmed("events/sched/sched_process_exit/enable");
	assert_string_equal(v, "1");
	free(v);
	v = read_trimmed("buffer_percent");
	assert_string_equal(v, "0");
	free(v);
	th_fixture_write_markers(&fx, 10, 100);
	for (i = 1; i < 110; i++) {
		ret = tracemap_stream_next_event(s, &ev, 5000);
		assert_int_equal(ret, 1);
		/* the child's exit is an event of the stream too */
		if (th_marker_seq(ev.data, ev.size) < 0) {
			i--;
			continue;
		}
		assert_int_equal(th_marker_seq(ev.data, ev.size), i);
		assert_int_equal(ev.missed, 0);
	}
	tracemap_stream_close(s);
	v = read_trimmed("events/sched/sched_process_exit/enable");
	assert_string_equal(v, "0");
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_reader_mmap, th_fixture_teardown),
		cmocka_unit_test_teardown(test_reader_read, th_fixture_teardown),
		TH_BOTH(test_stream, NULL, th_fixture_teardown),
	};

	return th_fixture_run_tests(tests, &fx);
}
