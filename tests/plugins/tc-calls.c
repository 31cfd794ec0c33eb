// SPDX-License-Identifier: GPL-2.0-only
/*
 * tc-calls: what each tracefs_cpu_* call of libtracefs returns, for a host
 * that is not trace-cmd. Run once with stock libtracefs and once with the
 * plugin preloaded (tc-calls.sh); the two outputs must be equal.
 *
 *   tc-calls INSTANCE [SCENARIO...]
 *
 * Pinned to CPU 0, reads CPU 0 of INSTANCE (the caller sizes its buffer).
 * Each scenario clears the instance, opens a reader, writes "seq=N"
 * markers and prints one line per call: the return value (whole pages as
 * "Np"), errno when it failed, and the markers that call delivered. A
 * scenario ends with a line that says whether every marker written came
 * out exactly once. Exit 0 when every scenario delivered exactly, 1
 * otherwise, 2 on a usage or set-up error.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <tracefs.h>

#define MAX_SEQ		20000

static struct tracefs_instance *inst;
static const char *inst_name;
static int subbuf;
static unsigned char seen[MAX_SEQ];
static unsigned int written;
static unsigned int expect_from;	/* markers before it were cleared away */
static int failures;

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static void write_file(const char *file, const char *val)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tracefs_instance_get_dir(inst), file);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		die(path);
	if (write(fd, val, strlen(val)) < 0)
		die(path);
	close(fd);
}

/* "echo > trace" in the instance: the kernel resets its ring buffers */
static void clear_buffer(void)
{
	write_file("trace", "");
}

static void markers(unsigned int count)
{
	char path[512], buf[32];
	unsigned int i;
	int fd, len;

	snprintf(path, sizeof(path), "%s/trace_marker", tracefs_instance_get_dir(inst));
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		die(path);
	for (i = written; i < written + count; i++) {
		len = snprintf(buf, sizeof(buf), "seq=%08u", i);
		if (write(fd, buf, len) != len)
			die("trace_marker");
	}
	written += count;
	close(fd);
}

/* Markers in @len bytes of whole sub-buffers; each is noted in seen[]. */
static int count_pages(const unsigned char *buf, long len)
{
	long off, i, data;
	uint64_t commit;
	unsigned int seq;
	int n = 0;

	for (off = 0; off + 16 <= len; off += subbuf) {
		memcpy(&commit, buf + off + 8, sizeof(commit));
		data = commit & 0xfffffff;
		if (data > subbuf - 16)
			data = subbuf - 16;
		for (i = off + 16; i + 12 <= off + 16 + data && i + 12 <= len; i++) {
			if (memcmp(buf + i, "seq=", 4))
				continue;
			if (sscanf((const char *)buf + i + 4, "%8u", &seq) == 1 && seq < MAX_SEQ &&
			    seen[seq] < 255)
				seen[seq]++;
			n++;
		}
	}
	return n;
}

static void report(const char *step, int ret, int err, int n)
{
	if (ret > 0 && ret % subbuf == 0)
		printf("  %-22s %dp", step, ret / subbuf);
	else
		printf("  %-22s %d", step, ret);
	if (ret < 0)
		printf(" errno %s", strerrorname_np(err) ? strerrorname_np(err) : "?");
	printf(" markers %d\n", n);
}

/* One call into a page buffer: read, buffered_read, flush. */
enum call { READ, READ_NB, BREAD, BREAD_NB, FLUSH, WRITE, WRITE_NB, PIPE_NB, FLUSH_WRITE };

static const char *const call_name[] = {
	"read", "read(nonblock)", "buffered_read", "buffered_read(nb)", "flush", "write",
	"write(nonblock)", "pipe(nonblock)", "flush_write",
};

static int out_fd;
static int pipe_fd[2];

static int do_call(struct tracefs_cpu *t, enum call c, int *markers_out)
{
	unsigned char *page = calloc(1, subbuf * 64);
	int ret, e, n = 0;
	off_t len;

	if (!page)
		die("calloc");
	errno = 0;
	switch (c) {
	case READ:	ret = tracefs_cpu_read(t, page, false); break;
	case READ_NB:	ret = tracefs_cpu_read(t, page, true); break;
	case BREAD:	ret = tracefs_cpu_buffered_read(t, page, false); break;
	case BREAD_NB:	ret = tracefs_cpu_buffered_read(t, page, true); break;
	case FLUSH:	ret = tracefs_cpu_flush(t, page); break;
	case WRITE:	ret = tracefs_cpu_write(t, out_fd, false); break;
	case WRITE_NB:	ret = tracefs_cpu_write(t, out_fd, true); break;
	case PIPE_NB:	ret = tracefs_cpu_pipe(t, pipe_fd[1], true); break;
	case FLUSH_WRITE: ret = tracefs_cpu_flush_write(t, out_fd); break;
	default:	ret = -1; break;
	}
	e = errno;
	if (c == WRITE || c == WRITE_NB || c == FLUSH_WRITE) {
		len = lseek(out_fd, 0, SEEK_CUR);
		if (len > 0 && pread(out_fd, page, len < subbuf * 64 ? len : subbuf * 64, 0) > 0)
			n = count_pages(page, len);
		if (ftruncate(out_fd, 0) || lseek(out_fd, 0, SEEK_SET))
			die("memfd");
	} else if (c == PIPE_NB) {
		int got = 0, r;

		while ((r = read(pipe_fd[0], page + got, subbuf * 64 - got)) > 0)
			got += r;
		n = count_pages(page, got);
	} else if (ret > 0) {
		n = count_pages(page, ret);
	}
	free(page);
	if (markers_out)
		*markers_out = n;
	errno = e;
	return ret;
}

static int call(struct tracefs_cpu *t, enum call c)
{
	int ret, e, n;

	ret = do_call(t, c, &n);
	e = errno;
	report(call_name[c], ret, e, n);
	return ret;
}

/* Call @c until it returns <= 0 (at most 200 times); print the sum. */
static void drain(struct tracefs_cpu *t, enum call c)
{
	int ret, e, n, total = 0, calls = 0;
	char step[64];

	do {
		ret = do_call(t, c, &n);
		e = errno;
		total += n;
	} while (ret > 0 && ++calls < 200);
	snprintf(step, sizeof(step), "%s until <= 0", call_name[c]);
	printf("  %-22s last %d", step, ret);
	if (ret < 0)
		printf(" errno %s", strerrorname_np(e) ? strerrorname_np(e) : "?");
	printf(" markers %d\n", total);
}

static struct tracefs_cpu *begin(const char *name, bool nonblock)
{
	struct tracefs_cpu *t;

	printf("%s:\n", name);
	memset(seen, 0, sizeof(seen));
	written = 0;
	expect_from = 0;
	clear_buffer();
	t = tracefs_cpu_open(inst, 0, nonblock);
	if (!t)
		die("tracefs_cpu_open");
	return t;
}

/* Every marker written since begin() came out exactly once. */
static void end(struct tracefs_cpu *t)
{
	unsigned int i, missing = 0, dup = 0;

	for (i = 0; i < written; i++) {
		missing += i >= expect_from && !seen[i];
		dup += seen[i] > 1;
	}
	printf("  exact: %s (%u written, %u cleared, %u missing, %u twice)\n",
	       missing || dup ? "NO" : "yes", written, expect_from, missing, dup);
	if (missing || dup)
		failures++;
	tracefs_cpu_close(t);
}

/* ------------------------------------------------------------ scenarios */

/* libtracefs hands out a partly filled page on a non-blocking read */
static void s_read_nonblock(void)
{
	struct tracefs_cpu *t = begin("read-nonblock", false);

	call(t, READ_NB);
	markers(20);
	call(t, READ_NB);
	call(t, READ_NB);
	markers(5);
	call(t, READ_NB);
	end(t);
}

/* opened non-blocking: every read is */
static void s_read_perm(void)
{
	struct tracefs_cpu *t = begin("read-open-nonblock", true);

	call(t, READ);
	markers(20);
	call(t, READ);
	call(t, READ);
	printf("  stop %d\n", tracefs_cpu_stop(t));
	markers(3);
	call(t, READ);
	end(t);
}

/* a blocking read after stop: what is left, then 0 */
static void s_read_stop(void)
{
	struct tracefs_cpu *t = begin("read-after-stop", false);

	markers(20);
	printf("  stop %d\n", tracefs_cpu_stop(t));
	call(t, READ);
	call(t, READ);
	call(t, READ);
	markers(7);
	call(t, READ);
	call(t, READ);
	end(t);
}

/* more than a page: full pages, then the partial one */
static void s_read_pages(void)
{
	struct tracefs_cpu *t = begin("read-pages", false);

	markers(600);
	drain(t, READ_NB);
	end(t);
}

static void s_buffered(void)
{
	struct tracefs_cpu *t = begin("buffered-read", false);

	call(t, BREAD_NB);
	markers(20);
	call(t, BREAD_NB);
	call(t, FLUSH);
	call(t, FLUSH);
	markers(600);
	drain(t, BREAD_NB);
	drain(t, FLUSH);
	end(t);
}

static void s_buffered_stop(void)
{
	struct tracefs_cpu *t = begin("buffered-read-after-stop", false);

	markers(600);
	printf("  stop %d\n", tracefs_cpu_stop(t));
	drain(t, BREAD);
	drain(t, BREAD);
	drain(t, FLUSH);
	end(t);
}

static void s_flush(void)
{
	struct tracefs_cpu *t = begin("flush", false);

	call(t, FLUSH);
	markers(20);
	call(t, FLUSH);
	call(t, FLUSH);
	markers(600);
	drain(t, FLUSH);
	end(t);
}

static void s_write(void)
{
	struct tracefs_cpu *t = begin("write", false);

	call(t, WRITE_NB);
	markers(20);
	call(t, WRITE_NB);
	call(t, FLUSH_WRITE);
	call(t, FLUSH_WRITE);
	markers(600);
	drain(t, WRITE_NB);
	drain(t, FLUSH_WRITE);
	end(t);
}

static void s_write_stop(void)
{
	struct tracefs_cpu *t = begin("write-after-stop", false);

	markers(600);
	printf("  stop %d\n", tracefs_cpu_stop(t));
	drain(t, WRITE);
	drain(t, WRITE);
	drain(t, FLUSH_WRITE);
	end(t);
}

static void s_pipe(void)
{
	struct tracefs_cpu *t = begin("pipe", false);

	markers(600);
	drain(t, PIPE_NB);
	drain(t, WRITE_NB);
	markers(600);
	drain(t, PIPE_NB);
	drain(t, FLUSH_WRITE);
	end(t);
}

/*
 * A reader (stopped first when @stop), the buffer cleared behind it once
 * the reader took all there was, the reader used again: it delivers every
 * event written after the clear.
 */
static void s_clear(const char *name, unsigned int count, bool stop, enum call c, enum call fin)
{
	struct tracefs_cpu *t = begin(name, false);

	markers(count);
	if (stop)
		printf("  stop %d\n", tracefs_cpu_stop(t));
	drain(t, c);
	drain(t, fin);
	clear_buffer();
	markers(count);
	drain(t, c);
	drain(t, fin);
	end(t);
}

static void s_clear_read(void)
{
	s_clear("clear-read", 1000, true, READ, FLUSH);
}

static void s_clear_write(void)
{
	s_clear("clear-write", 1000, true, WRITE, FLUSH_WRITE);
}

/* rounds of less than a page: the reader stopped inside the page the clear resets */
static void s_clear_small(void)
{
	s_clear("clear-small-read", 50, true, READ, FLUSH);
	s_clear("clear-small-write", 50, true, WRITE, FLUSH_WRITE);
	s_clear("clear-small-nonblock", 50, false, READ_NB, FLUSH);
}

/* rounds of several sizes, each stopped, drained, cleared, the reader reused */
static void s_clear_rounds(void)
{
	static const unsigned int sizes[] = { 1500, 7, 400, 113, 114, 1, 900 };
	struct tracefs_cpu *t = begin("clear-rounds", false);
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		markers(sizes[i]);
		tracefs_cpu_stop(t);
		drain(t, i & 1 ? WRITE : READ);
		drain(t, i & 1 ? FLUSH_WRITE : FLUSH);
		clear_buffer();
	}
	end(t);
}

/* the buffer cleared with unread events in it, no stop */
static void s_clear_unread(void)
{
	struct tracefs_cpu *t = begin("clear-unread", false);
	unsigned int i, after = 0;

	markers(300);
	call(t, READ_NB);
	clear_buffer();
	expect_from = written;
	markers(300);
	while (do_call(t, READ_NB, NULL) > 0)
		;
	/*
	 * Of the events written before the clear, the plugin may hand out a
	 * page it had taken from the kernel before the clear: count only the
	 * ones written after it.
	 */
	for (i = expect_from; i < written; i++)
		after += seen[i] == 1;
	printf("  written after the clear: %u of %u\n", after, written - expect_from);
	memset(seen, 0, expect_from);
	end(t);
}

static const struct {
	const char *name;
	void (*fn)(void);
} scenarios[] = {
	{ "read-nonblock", s_read_nonblock },
	{ "read-open-nonblock", s_read_perm },
	{ "read-after-stop", s_read_stop },
	{ "read-pages", s_read_pages },
	{ "buffered-read", s_buffered },
	{ "buffered-read-after-stop", s_buffered_stop },
	{ "flush", s_flush },
	{ "write", s_write },
	{ "write-after-stop", s_write_stop },
	{ "pipe", s_pipe },
	{ "clear-read", s_clear_read },
	{ "clear-write", s_clear_write },
	{ "clear-small", s_clear_small },
	{ "clear-rounds", s_clear_rounds },
	{ "clear-unread", s_clear_unread },
};

int main(int argc, char **argv)
{
	size_t i;
	cpu_set_t set;
	int a;

	if (argc < 2) {
		fprintf(stderr, "usage: tc-calls INSTANCE [SCENARIO...]\n");
		return 2;
	}
	inst_name = argv[1];
	inst = tracefs_instance_alloc(NULL, inst_name);
	if (!inst || !tracefs_instance_exists(inst_name)) {
		fprintf(stderr, "tc-calls: no instance %s\n", inst_name);
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
	out_fd = memfd_create("tc-calls", MFD_CLOEXEC);
	if (out_fd < 0 || pipe2(pipe_fd, O_CLOEXEC | O_NONBLOCK))
		die("memfd/pipe");
	fcntl(pipe_fd[1], F_SETPIPE_SZ, 1 << 20);
	subbuf = getpagesize();

	for (i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		bool want = argc == 2;

		for (a = 2; a < argc; a++)
			want |= !strcmp(argv[a], scenarios[i].name);
		if (want) {
			scenarios[i].fn();
			fflush(stdout);
		}
	}
	tracefs_instance_free(inst);
	return failures ? 1 : 0;
}
