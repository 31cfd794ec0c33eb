// SPDX-License-Identifier: GPL-2.0-only
/*
 * tracemap_cpu_wait() on the real tracefs, through the mapping and through
 * read() (its fallback without the mapping): it reports the reader's data
 * (buffer_percent 0), the caller's other descriptor and timeouts apart,
 * and applies the library's empty-wakeup back-off: after three wakeups
 * from which no region was read it pauses 1 ms instead of trusting the
 * descriptor, still watching the caller's descriptor, and a region read
 * resets the count.
 *
 * timeout: 60
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "tracemap.h"

#define TAG	"kw"
#define LONG_MS	5000		/* bounds a wait that must end at once */

static struct {
	const char *inst;
	struct tracemap_cpu *c;
	int marker;
	int pipe[2];
} f = { .marker = -1, .pipe = { -1, -1 } };

static int setup(void **state)
{
	th_save_affinity();
	th_pin(0);
	f.inst = th_instance_create(TAG, 64, 0);
	if (!f.inst || th_instance_write(f.inst, "buffer_percent", "0"))
		return -1;
	f.marker = th_marker_open(f.inst, 0);
	if (f.marker < 0 || pipe(f.pipe))
		return -1;
	return 0;
}

/* The reader of CPU 0 on the case's backend (each case: test_closed_fd closes its fd) */
static void open_reader(void **state)
{
	struct tracemap_cpu_opts o = { .sz = sizeof(o), .flags = TRACEMAP_CPU_NO_FALLBACK };

	th_backend_case(state);
	if (th_on_read())
		o.flags = th_cpu_flags();
	f.c = tracemap_cpu_open(f.inst, 0, &o);
	assert_non_null(f.c);
	assert_int_equal(tracemap_cpu_backend(f.c), th_on_read() ? TRACEMAP_BACKEND_READ :
			 TRACEMAP_BACKEND_MMAP);
}

static int close_reader(void **state)
{
	tracemap_cpu_close(f.c);
	f.c = NULL;
	return 0;
}

static int teardown(void **state)
{
	tracemap_cpu_close(f.c);
	f.c = NULL;
	if (f.marker >= 0)
		close(f.marker);
	if (f.pipe[0] >= 0) {
		close(f.pipe[0]);
		close(f.pipe[1]);
	}
	f.marker = f.pipe[0] = f.pipe[1] = -1;
	if (f.inst)
		th_instance_remove(f.inst);
	f.inst = NULL;
	th_restore_affinity();
	return 0;
}

/* Read every region of the reader: what it holds is then handed out. */
static unsigned int read_all(void)
{
	struct tracemap_region r;
	unsigned int n = 0;
	int ret;

	while ((ret = tracemap_cpu_read_region(f.c, &r)) > 0)
		n++;
	assert_int_equal(ret, 0);
	return n;
}

static void drain_pipe(void)
{
	char buf[16];

	assert_int_equal(read(f.pipe[0], buf, sizeof(buf)), 1);
}

/* Nothing in the buffer: a timeout; the other descriptor: EXTRA; a marker: DATA. */
static void test_results(void **state)
{
	uint64_t t0;

	open_reader(state);
	read_all();
	t0 = th_now_ns();
	assert_int_equal(tracemap_cpu_wait(f.c, f.pipe[0], 20), 0);
	assert_true(th_now_ns() - t0 >= 20 * 1000000ull);

	assert_int_equal(write(f.pipe[1], "x", 1), 1);
	assert_int_equal(tracemap_cpu_wait(f.c, f.pipe[0], LONG_MS), TRACEMAP_WAIT_EXTRA);
	drain_pipe();

	assert_int_equal(th_write_marker(f.marker, 1), 0);
	assert_int_equal(tracemap_cpu_wait(f.c, f.pipe[0], LONG_MS), TRACEMAP_WAIT_DATA);
	assert_int_equal(read_all(), 1);
	assert_int_equal(tracemap_cpu_wait(f.c, -1, 0), 0);
}

/*
 * A marker left unread keeps the descriptor readable: three waits report
 * it, the fourth pauses 1 ms without looking at it, and the pause still
 * sees the caller's descriptor. Reading the region resets the count.
 */
static void test_backoff(void **state)
{
	uint64_t t0, dt;
	int i;

	open_reader(state);
	read_all();
	assert_int_equal(th_write_marker(f.marker, 2), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(tracemap_cpu_wait(f.c, -1, LONG_MS), TRACEMAP_WAIT_DATA);
	t0 = th_now_ns();
	assert_int_equal(tracemap_cpu_wait(f.c, -1, LONG_MS), TRACEMAP_WAIT_DATA);
	dt = th_now_ns() - t0;
	if (dt < 1000000)
		fail_msg("the fourth empty wakeup returned after %llu ns: no 1 ms back-off",
			 (unsigned long long)dt);

	/* the next empty wakeup backs off again, and the pause watches the pipe */
	assert_int_equal(tracemap_cpu_wait(f.c, -1, LONG_MS), TRACEMAP_WAIT_DATA);
	assert_int_equal(write(f.pipe[1], "x", 1), 1);
	assert_int_equal(tracemap_cpu_wait(f.c, f.pipe[0], LONG_MS), TRACEMAP_WAIT_EXTRA);
	drain_pipe();

	/* a region read resets the count: a timeout of 0 looks at the descriptor again */
	assert_int_equal(read_all(), 1);
	assert_int_equal(tracemap_cpu_wait(f.c, -1, 0), 0);
	assert_int_equal(th_write_marker(f.marker, 3), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(tracemap_cpu_wait(f.c, -1, LONG_MS), TRACEMAP_WAIT_DATA);
	assert_int_equal(read_all(), 1);
}

/* A descriptor that is not open is an error, not "readable" (it closes the reader's) */
static void test_closed_fd(void **state)
{
	int bad;

	open_reader(state);
	bad = dup(f.pipe[0]);
	assert_true(bad >= 0);
	close(bad);
	assert_int_equal(tracemap_cpu_wait(f.c, bad, LONG_MS), -EBADF);
	assert_int_equal(errno, EBADF);
	close(tracemap_cpu_fd(f.c));
	assert_int_equal(tracemap_cpu_wait(f.c, -1, LONG_MS), -EBADF);
	assert_int_equal(tracemap_cpu_wait(f.c, f.pipe[0], LONG_MS), -EBADF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TH_BOTH(test_results, NULL, close_reader),
		TH_BOTH(test_backoff, NULL, close_reader),
		TH_BOTH(test_closed_fd, NULL, close_reader),
	};

	/* the cases of the mapping skip one by one: their twins run through read() */
	th_require_tracefs();
	return cmocka_run_group_tests_name("cpu wait", tests, setup, teardown);
}
