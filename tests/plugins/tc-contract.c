// SPDX-License-Identifier: GPL-2.0-only
/*
 * tc-contract: the libtracefs contract of the tracefs_cpu_* calls, as
 * trace-cmd's recorder relies on it (and of the three it does not make),
 * checked against libtracemap-tracecmd.so.
 * Linked with libtracefs; run with the plugin in LD_PRELOAD (tc-contract.sh):
 *
 *   tc-contract INSTANCE
 *
 * The calling process is pinned to CPU 0 and reads CPU 0 of INSTANCE, a
 * fresh instance with the default 50 % buffer_percent. Prints one line per
 * check; exit 0 all passed, 1 a check failed, 77 the plugin did not map.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <tracefs.h>

static const char *inst_name;
static struct tracefs_instance *inst;
static char map_path[512];
static int failures;

#define CHECK(cond, ...) do {						\
	if (cond) {							\
		printf("ok   ");					\
	} else {							\
		printf("FAIL ");					\
		failures++;						\
	}								\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	fflush(stdout);							\
} while (0)

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Is CPU 0's trace_pipe_raw of the instance mapped into this process? */
static int mapped(void)
{
	char line[1024];
	int found = 0;
	FILE *fp;

	fp = fopen("/proc/self/maps", "r");
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp))
		if (strstr(line, map_path))
			found = 1;
	fclose(fp);
	return found;
}

static void markers(unsigned int first, unsigned int count)
{
	char path[512], buf[32];
	unsigned int i;
	int fd, len;

	snprintf(path, sizeof(path), "%s/trace_marker", tracefs_instance_get_dir(inst));
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	for (i = first; i < first + count; i++) {
		len = snprintf(buf, sizeof(buf), "seq=%08u", i);
		if (write(fd, buf, len) != len) {
			perror("trace_marker");
			exit(1);
		}
	}
	close(fd);
}

/* Markers in what was written to @fd (a memfd) since offset 0; its size in *size. */
static int count_markers(int fd, long *size)
{
	unsigned char *buf;
	off_t len = lseek(fd, 0, SEEK_END);
	int n = 0;
	off_t i;

	*size = len;
	if (len <= 0)
		return 0;
	buf = malloc(len);
	if (!buf || pread(fd, buf, len, 0) != len)
		exit(1);
	for (i = 0; i + 4 <= len; i++)
		if (!memcmp(buf + i, "seq=", 4))
			n++;
	free(buf);
	return n;
}

/* Markers in the first @len bytes of @page */
static int page_markers(const char *page, int len)
{
	int i, n = 0;

	for (i = 0; i + 4 <= len; i++)
		n += !memcmp(page + i, "seq=", 4);
	return n;
}

static int new_memfd(void)
{
	int fd = memfd_create("tc-contract", MFD_CLOEXEC);

	if (fd < 0) {
		perror("memfd_create");
		exit(1);
	}
	return fd;
}

/* ------------------------------------------------------------ signals */

static struct tracefs_cpu *sig_tcpu;
static int sig_fd;
static volatile sig_atomic_t sig_action;	/* 0 nothing, 1 flush_write, 2 stop */
static volatile sig_atomic_t sig_ret;

static void on_alarm(int sig)
{
	if (sig_action == 1)
		sig_ret = tracefs_cpu_flush_write(sig_tcpu, sig_fd);
	else if (sig_action == 2)
		sig_ret = tracefs_cpu_stop(sig_tcpu);
}

/* as trace-cmd does it: signal(), which restarts system calls */
static void arm_alarm(int ms)
{
	struct itimerval it = {
		.it_value = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 },
	};

	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &it, NULL);
}

/* ------------------------------------------------------------ threads */

static void *stop_later(void *arg)
{
	usleep(100000);
	sig_ret = tracefs_cpu_stop(arg);
	return NULL;
}

/* ------------------------------------------------------------ iterate */

static int raw_markers;
static int raw_mapped;

static int on_raw(struct tep_event *event, struct tep_record *record, int cpu, void *ctx)
{
	if (!strcmp(event->name, "print"))
		raw_markers++;
	if (mapped())
		raw_mapped = 1;
	return 0;
}

int main(int argc, char **argv)
{
	int ret, e, pfd[2], sv[2], out, out2, n, calls, odd;
	struct tracefs_cpu *t, *u, *g;
	char page[8192], back[8192];
	struct tep_handle *tep;
	pthread_t thr;
	cpu_set_t set;
	double t0, dt;
	long size;

	if (argc != 2) {
		fprintf(stderr, "usage: tc-contract INSTANCE\n");
		return 2;
	}
	inst_name = argv[1];
	inst = tracefs_instance_alloc(NULL, inst_name);
	if (!inst || !tracefs_instance_exists(inst_name)) {
		fprintf(stderr, "no instance %s\n", inst_name);
		return 1;
	}
	snprintf(map_path, sizeof(map_path), "/instances/%s/per_cpu/cpu0/trace_pipe_raw",
		 inst_name);
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);

	/* open: mapped by the plugin */
	t = tracefs_cpu_open(inst, 0, false);
	if (!t) {
		perror("tracefs_cpu_open");
		return 1;
	}
	if (mapped() != 1) {
		printf("SKIP: tracefs_cpu_open did not map %s: is the plugin preloaded and the "
		       "kernel >= 6.10?\n", map_path);
		return 77;
	}
	CHECK(1, "tracefs_cpu_open maps the instance's CPU 0");
	CHECK(tracefs_cpu_read_size(t) == getpagesize(), "read_size %d == page size %d",
	      tracefs_cpu_read_size(t), getpagesize());
	CHECK(tracefs_cpu_read_size(NULL) == -1, "read_size(NULL) == -1");

	/* nothing there: 0, never -1/EAGAIN */
	out = new_memfd();
	errno = 0;
	ret = tracefs_cpu_write(t, out, true);
	CHECK(ret == 0, "non-blocking write with nothing returns 0 (got %d, errno %d)", ret, errno);
	ret = tracefs_cpu_read(t, page, true);
	CHECK(ret == 0, "non-blocking read with nothing returns 0 (got %d)", ret);

	/* a signal interrupts a blocking wait: -1/EINTR */
	sig_action = 0;
	arm_alarm(100);
	t0 = now_ms();
	ret = tracefs_cpu_write(t, out, false);
	e = errno;
	dt = now_ms() - t0;
	CHECK(ret == -1 && e == EINTR && dt >= 80,
	      "blocking write is interrupted by SIGALRM: %d errno %d after %.0f ms", ret, e, dt);

	/* flush_write from the handler while the main flow waits: one page */
	if (pipe(pfd))
		return 1;
	markers(0, 10);
	sig_tcpu = t;
	sig_fd = pfd[1];
	sig_ret = -2;
	sig_action = 1;
	arm_alarm(100);
	ret = tracefs_cpu_write(t, out, false);
	e = errno;
	sig_action = 0;
	CHECK(ret == -1 && e == EINTR, "blocking write below the watermark waits, then EINTR "
	      "(%d errno %d)", ret, e);
	CHECK(sig_ret == getpagesize(), "flush_write in the handler wrote one page (%d)",
	      (int)sig_ret);
	n = read(pfd[0], page, sizeof(page));
	odd = 0;
	for (ret = 0; ret + 4 <= n; ret++)
		if (!memcmp(page + ret, "seq=", 4))
			odd++;
	CHECK(n == getpagesize() && odd == 10, "the pipe got %d bytes with %d of 10 markers", n,
	      odd);

	/* stop from another thread wakes a blocked write through the ctrl pipe */
	sig_ret = -2;
	pthread_create(&thr, NULL, stop_later, t);
	t0 = now_ms();
	ret = tracefs_cpu_write(t, out, false);
	dt = now_ms() - t0;
	pthread_join(thr, NULL);
	CHECK(ret == 0 && sig_ret == 0 && dt >= 80 && dt < 2000,
	      "stop wakes a blocked write: write %d, stop %d, after %.0f ms", ret, (int)sig_ret,
	      dt);
	t0 = now_ms();
	ret = tracefs_cpu_write(t, out, false);
	dt = now_ms() - t0;
	CHECK(ret == 0 && dt < 50, "after stop a blocking write returns at once (%d, %.1f ms)",
	      ret, dt);
	CHECK(tracefs_cpu_stop(t) == 0, "stop again returns 0");
	tracefs_cpu_close(t);
	CHECK(mapped() == 0, "close unmaps");

	/* stop in a signal handler, as trace-cmd's finish() */
	t = tracefs_cpu_open(inst, 0, false);
	sig_tcpu = t;
	sig_ret = -2;
	sig_action = 2;
	arm_alarm(100);
	ret = tracefs_cpu_write(t, out, false);
	e = errno;
	sig_action = 0;
	CHECK(ret == -1 && e == EINTR && sig_ret == 0,
	      "stop in a handler: write %d errno %d, stop returned %d", ret, e, (int)sig_ret);
	t0 = now_ms();
	ret = tracefs_cpu_write(t, out, false);
	dt = now_ms() - t0;
	CHECK(ret == 0 && dt < 50, "then a blocking write returns at once (%d, %.1f ms)", ret, dt);
	tracefs_cpu_close(t);

	/* flush_write after stop: one whole page per call, then 0 */
	u = tracefs_cpu_open(inst, 0, false);
	markers(100, 300);
	tracefs_cpu_stop(u);
	out2 = new_memfd();
	calls = 0;
	odd = 0;
	do {
		ret = tracefs_cpu_flush_write(u, out2);
		calls++;
		if (ret != 0 && ret != getpagesize())
			odd++;
	} while (ret > 0 && calls < 100);
	n = count_markers(out2, &size);
	CHECK(ret == 0 && !odd && size == (long)(calls - 1) * getpagesize() && calls >= 3,
	      "flush_write: %d calls, each one page or the final 0 (%ld bytes)", calls, size);
	CHECK(n == 300, "the flushed pages hold %d of 300 markers", n);
	tracefs_cpu_close(u);

	/* opened non-blocking (record --poll): stop does nothing, writes never wait */
	u = tracefs_cpu_open(inst, 0, true);
	t0 = now_ms();
	ret = tracefs_cpu_write(u, out, false);
	dt = now_ms() - t0;
	CHECK(ret == 0 && dt < 50, "non-blocking object: write with nothing returns 0 at once");
	markers(400, 20);
	ret = tracefs_cpu_write(u, out, false);
	CHECK(ret == 0, "non-blocking object: a partial page is held (%d)", ret);
	CHECK(tracefs_cpu_stop(u) == 0, "non-blocking object: stop returns 0");
	ret = tracefs_cpu_flush_write(u, out);
	CHECK(ret == getpagesize(), "non-blocking object: flush_write hands out the held page");
	tracefs_cpu_close(u);

	/*
	 * The three calls trace-cmd 3.1.6 does not make, on a plugin object:
	 * libtracefs would read the plugin's memory as its own (flush returned
	 * -1, free_fd freed it twice)
	 */
	u = tracefs_cpu_open(inst, 0, true);
	ret = tracefs_cpu_buffered_read(u, page, true);
	CHECK(ret == 0, "buffered_read with nothing returns 0 (%d)", ret);
	markers(600, 20);
	/* complete pages (the rest of the kernel's page the tests above left), then 0 */
	n = 0;
	for (calls = 0; calls < 8 && (ret = tracefs_cpu_buffered_read(u, page, true)) > 0; calls++)
		n += page_markers(page, ret);
	CHECK(ret == 0 && calls < 8, "buffered_read: %d whole pages, then 0", calls);
	/* what is left: one partial page, then 0 */
	ret = tracefs_cpu_flush(u, page);
	odd = ret;
	n += page_markers(page, ret);
	ret = tracefs_cpu_flush(u, page);
	CHECK(odd == getpagesize() && ret == 0 && n == 20, "flush hands out the partial page "
	      "(%d bytes) then 0 (%d): %d of 20 markers in all", odd, ret, n);
	CHECK(tracefs_cpu_flush(u, NULL) == -1 && errno == EINVAL, "flush(NULL buffer): EINVAL");
	tracefs_cpu_free_fd(u);
	CHECK(mapped() == 0, "free_fd releases a plugin object (unmapped, no double free)");
	tracefs_cpu_free_fd(NULL);

	/* alloc_fd wraps a socket: the real libtracefs serves it */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 1;
	g = tracefs_cpu_alloc_fd(sv[0], getpagesize(), true);
	memset(page, 0x5a, getpagesize());
	if (write(sv[1], page, getpagesize()) != getpagesize())
		return 1;
	ret = g ? tracefs_cpu_read(g, back, true) : -1;
	CHECK(g && ret == getpagesize() && !memcmp(page, back, ret) && mapped() == 0,
	      "alloc_fd(socket) passes through: read %d bytes from the socket", ret);
	tracefs_cpu_close(g);
	CHECK(fcntl(sv[0], F_GETFD) == -1, "close of an alloc_fd object closes its fd");
	close(sv[1]);

	/* libtracefs' own tracefs_cpu_open (raw event iteration) is not mapped */
	markers(500, 50);
	tep = tracefs_local_events(NULL);
	raw_markers = 0;
	raw_mapped = 0;
	ret = tep ? tracefs_iterate_raw_events(tep, inst, NULL, 0, on_raw, NULL) : -1;
	CHECK(ret == 0 && raw_markers == 50 && !raw_mapped,
	      "tracefs_iterate_raw_events goes through libtracefs: %d of 50 markers, %s",
	      raw_markers, raw_mapped ? "mapped" : "not mapped");
	tep_free(tep);

	tracefs_cpu_close(NULL);
	tracefs_instance_free(inst);
	printf("%d failed\n", failures);
	return failures ? 1 : 0;
}
