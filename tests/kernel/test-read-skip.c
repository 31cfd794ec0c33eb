// SPDX-License-Identifier: GPL-2.0-only
/*
 * The read() backend against a kernel that skips events (Documentation/design/kernel-facts.md,
 * "Kernel facts" 2): a reader that keeps catching up with the writer on
 * the page it reads can have that page taken back with the writer's last
 * events on it, which the kernel then counts as unread for good and never
 * hands out. Every event must be delivered once, in order, or reported
 * lost with its count: delivered + lost == written, what was lost is what
 * the kernel still counts unread plus what it overwrote, and
 * tracemap_cpu_stats_unread() is 0 at the end.
 *
 * The writer is a thread on CPU 1 calling close(1000000 + seq) with the
 * close syscall events enabled for it alone: an enter and an exit event
 * per call, the enter carrying seq, a few hundred nanoseconds apart, so
 * that a page fills while the reader on CPU 0 is in the kernel's window.
 * The kernel's race needs the reader's CPU to stall in a few instructions
 * (a VM's vCPU descheduled by the host); it showed in about 1 of 500 runs
 * here, so a run cannot make it happen, and the test runs as many as fit
 * in its time, printing how many the kernel skipped in.
 *
 * timeout: 120
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "tracemap.h"

#define TAG		"rs"
#define CALLS		200000u		/* close() calls per run: 400,000 events */
#define FD_BASE		1000000u
#define RUN_SECONDS	30		/* runs start until then */
#define MAX_RUNS	200

static struct th_fixture fx = TH_FIXTURE(TAG);

struct closer {
	pthread_t thread;
	bool started;
	int tid;		/* atomic: the thread's id, once it runs */
	int go;			/* atomic: its events are enabled */
	int done;		/* atomic: all calls made */
};

static struct closer cw;

static int teardown(void **state)
{
	if (cw.started) {
		__atomic_store_n(&cw.go, 1, __ATOMIC_RELEASE);
		pthread_join(cw.thread, NULL);
		cw.started = false;
	}
	th_fixture_drop(&fx);
	th_restore_affinity();
	return 0;
}

static void *closer_main(void *arg)
{
	uint64_t deadline = th_now_ns() + 10ull * 1000000000ull;
	unsigned int i;

	th_pin(1);
	__atomic_store_n(&cw.tid, (int)gettid(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&cw.go, __ATOMIC_ACQUIRE) && th_now_ns() < deadline)
		;
	for (i = 0; i < CALLS; i++)
		close(FD_BASE + i);
	__atomic_store_n(&cw.done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static unsigned int event_id(const char *event)
{
	char file[128], *txt;
	unsigned int id;

	snprintf(file, sizeof(file), "events/syscalls/%s/id", event);
	txt = th_instance_read(fx.inst, file);
	assert_non_null(txt);
	id = strtoul(txt, NULL, 10);
	free(txt);
	return id;
}

static void set_events(const char *val)
{
	assert_int_equal(th_instance_write(fx.inst, "events/syscalls/sys_enter_close/enable", val),
			 0);
	assert_int_equal(th_instance_write(fx.inst, "events/syscalls/sys_exit_close/enable", val),
			 0);
}

struct tally {
	uint64_t delivered;	/* enter and exit events of the closer's calls */
	long long missed;	/* the losses reported with them */
	long last_seq;
};

/* Read @c dry: the closer's events, in order; returns the events read */
static unsigned int drain(struct tracemap_cpu *c, unsigned int enter, unsigned int exit_id,
			  struct tally *t)
{
	struct tracemap_event ev;
	unsigned int n = 0;
	uint16_t type;
	uint64_t fd;
	int ret;

	while ((ret = tracemap_cpu_next_event(c, &ev)) == 1) {
		n++;
		assert_true(ev.size >= 24);
		memcpy(&type, ev.data, sizeof(type));
		memcpy(&fd, (const char *)ev.data + 16, sizeof(fd));
		if (ev.missed > 0)
			t->missed += ev.missed;
		else
			assert_int_equal(ev.missed, 0);
		if (type == exit_id) {
			t->delivered++;
			continue;
		}
		assert_int_equal(type, enter);
		assert_true(fd >= FD_BASE && fd < FD_BASE + CALLS);
		/* once and in order */
		if ((long)(fd - FD_BASE) <= t->last_seq)
			fail_msg("seq %lu after %ld", (unsigned long)(fd - FD_BASE), t->last_seq);
		t->last_seq = fd - FD_BASE;
		t->delivered++;
	}
	assert_int_equal(ret, 0);
	return n;
}

/* One run on a fresh instance; returns the events the kernel skipped */
static uint64_t one_run(unsigned int run)
{
	uint64_t deadline, unread, overrun;
	unsigned int enter, exit_id;
	struct tracemap_cpu_stats st;
	struct tally t = { .last_seq = -1 };
	struct tracemap_cpu *c;
	char tid[32];
	bool done = false;

	th_fixture_new(&fx, 4096, 4);
	enter = event_id("sys_enter_close");
	exit_id = event_id("sys_exit_close");
	c = th_fixture_open(&fx, 1, TRACEMAP_MODE_CONSUME, TRACEMAP_CPU_FORCE_READ);

	cw = (struct closer){ 0 };
	assert_int_equal(pthread_create(&cw.thread, NULL, closer_main, NULL), 0);
	cw.started = true;
	deadline = th_now_ns() + 10ull * 1000000000ull;
	while (!__atomic_load_n(&cw.tid, __ATOMIC_ACQUIRE) && th_now_ns() < deadline)
		sched_yield();
	assert_true(__atomic_load_n(&cw.tid, __ATOMIC_ACQUIRE) > 0);
	snprintf(tid, sizeof(tid), "%d", cw.tid);
	/* this thread's own closes stay out: only the closer's are recorded */
	assert_int_equal(th_instance_write(fx.inst, "set_event_pid", tid), 0);
	set_events("1");
	__atomic_store_n(&cw.go, 1, __ATOMIC_RELEASE);

	/* as fast as read() goes: the reader catches up with the writer all the time */
	deadline = th_now_ns() + 30ull * 1000000000ull;
	while (th_now_ns() < deadline) {
		bool wd = __atomic_load_n(&cw.done, __ATOMIC_ACQUIRE);

		drain(c, enter, exit_id, &t);
		if (done)
			break;
		done = wd;
	}
	assert_true(done);
	pthread_join(cw.thread, NULL);
	cw.started = false;
	set_events("0");

	assert_int_equal(tracemap_cpu_stats(c, &st, sizeof(st)), 0);
	unread = th_cpu_stat(fx.inst, 1, "entries:");
	overrun = th_cpu_stat(fx.inst, 1, "overrun:");
	if (t.delivered + st.lost != 2 * CALLS || st.skipped != unread ||
	    st.lost != st.skipped + overrun)
		fail_msg("run %u: %u events written, %llu delivered, %llu reported lost (%llu "
			 "skipped by the kernel); kernel: %llu unread, %llu overwritten, %llu read",
			 run, 2 * CALLS, (unsigned long long)t.delivered,
			 (unsigned long long)st.lost, (unsigned long long)st.skipped,
			 (unsigned long long)unread, (unsigned long long)overrun,
			 (unsigned long long)st.kernel_read);
	assert_int_equal(st.lost_unknown, 0);
	assert_int_equal(st.corrupt, 0);
	/* a loss comes with the next event, if one follows it */
	assert_true(t.missed <= (long long)st.lost);
	assert_int_equal(tracemap_cpu_stats_unread(&st), 0);
	assert_int_equal(st.kernel_read, t.delivered);
	if (st.skipped)
		printf("run %u: the kernel skipped %llu events, reported lost\n", run,
		       (unsigned long long)st.skipped);
	th_fixture_drop(&fx);
	return st.skipped;
}

static void test_read_keeps_up(void **state)
{
	uint64_t end = th_now_ns() + RUN_SECONDS * 1000000000ull, skipped = 0;
	unsigned int run, hit = 0;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		skip();
	th_pin(0);
	for (run = 0; run < MAX_RUNS && th_now_ns() < end; run++) {
		uint64_t s = one_run(run);

		skipped += s;
		hit += s > 0;
	}
	printf("%u runs of %u close() calls: the kernel skipped events in %u, %llu in all, "
	       "each reported lost\n", run, CALLS, hit, (unsigned long long)skipped);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_read_keeps_up, teardown),
	};
	char path[512];

	th_require_tracefs();
	th_save_affinity();
	snprintf(path, sizeof(path), "%s/events/syscalls/sys_enter_close/id", th_tracefs());
	if (access(path, R_OK)) {
		printf("SKIP: no syscall events in this kernel (CONFIG_FTRACE_SYSCALLS): %s\n",
		       path);
		return TEST_SKIP;
	}
	return cmocka_run_group_tests_name("read skip", tests, NULL, teardown);
}
