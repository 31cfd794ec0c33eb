// SPDX-License-Identifier: GPL-2.0-only
/*
 * Every public entry point checks what a caller can pass: NULL handles and
 * buffers, options structs of the wrong size or with unknown flags or
 * fields, regions that point outside their sub-buffer. Each returns its
 * error (-EINVAL, -E2BIG, NULL with errno) instead of crashing, and
 * option errors are explained in one message. No kernel needed: every
 * check comes before tracefs is looked at.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "harness.h"
#include "tracemap.h"

static unsigned int nmsg;
static char last[512];

static void capture(void *ctx, enum tracemap_log_level level, const char *msg)
{
	if (level > TRACEMAP_LOG_WARN)
		return;
	nmsg++;
	snprintf(last, sizeof(last), "%s", msg);
}

static int setup(void **state)
{
	tracemap_set_print(capture, NULL);
	return 0;
}

static int teardown(void **state)
{
	tracemap_set_print(NULL, NULL);
	return 0;
}

#define EXPECT_EINVAL(call)						\
	do {								\
		errno = 0;						\
		assert_int_equal((call), -EINVAL);			\
		assert_int_equal(errno, EINVAL);			\
	} while (0)

static void test_null_reader(void **state)
{
	struct tracemap_cpu_stats st;
	struct tracemap_region r;
	struct tracemap_event ev;
	struct tep_record rec;
	char buf[4096];

	EXPECT_EINVAL(tracemap_cpu_fd(NULL));
	EXPECT_EINVAL(tracemap_cpu_id(NULL));
	EXPECT_EINVAL((int)tracemap_cpu_backend(NULL));
	EXPECT_EINVAL((int)tracemap_cpu_mode(NULL));
	EXPECT_EINVAL(tracemap_cpu_subbuf_size(NULL));
	EXPECT_EINVAL(tracemap_cpu_nr_subbufs(NULL));
	EXPECT_EINVAL(tracemap_cpu_read_region(NULL, &r));
	EXPECT_EINVAL(tracemap_cpu_next_event(NULL, &ev));
	EXPECT_EINVAL(tracemap_cpu_read_page(NULL, buf, sizeof(buf), 0));
	EXPECT_EINVAL(tracemap_cpu_rewind(NULL));
	EXPECT_EINVAL(tracemap_cpu_stats(NULL, &st, sizeof(st)));
	assert_int_equal(tracemap_cpu_pending_since(NULL), 0);
	tracemap_cpu_close(NULL);

	/* nothing to convert: rec is left alone, errno says why */
	memset(&rec, 0x5a, sizeof(rec));
	errno = 0;
	tracemap_event_to_record(NULL, &rec);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(((unsigned char *)&rec)[0], 0x5a);
	memset(&ev, 0, sizeof(ev));
	errno = 0;
	tracemap_event_to_record(&ev, NULL);
	assert_int_equal(errno, EINVAL);
}

static void test_null_stream(void **state)
{
	struct tracemap_event ev;

	EXPECT_EINVAL(tracemap_stream_poll(NULL, 0));
	EXPECT_EINVAL(tracemap_stream_consume(NULL));
	EXPECT_EINVAL(tracemap_stream_epoll_fd(NULL));
	EXPECT_EINVAL(tracemap_stream_next_event(NULL, &ev, 0));
	EXPECT_EINVAL(tracemap_stream_nr_cpus(NULL));
	errno = 0;
	assert_null(tracemap_stream_cpu(NULL, 0));
	assert_int_equal(errno, EINVAL);
	tracemap_stream_close(NULL);
}

/* Regions whose records lie outside their sub-buffer, as the probe built them */
static void test_region_out_of_range(void **state)
{
	static unsigned char src[4096], dst[4096];
	struct tracemap_region r = {
		.subbuf = src, .data = src + 16, .subbuf_size = sizeof(src),
	};
	const struct { unsigned int start, end; } bad[] = {
		{ UINT_MAX - 10, UINT_MAX - 5 },	/* short, far past the end */
		{ UINT_MAX - 10, UINT_MAX },
		{ 4000, 4100 },				/* straddles the end */
		{ 4080, 4081 },				/* starts at the end */
		{ 0, 4081 },				/* one byte more than the data area */
		{ 10, 5 },				/* end before start */
	};
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r.start = bad[i].start;
		r.end = bad[i].end;
		EXPECT_EINVAL(tracemap_region_write_subbuf(&r, dst, sizeof(dst)));
	}
	/* the largest valid region still works */
	r.start = 0;
	r.end = 4080;
	assert_int_equal(tracemap_region_write_subbuf(&r, dst, sizeof(dst)), 4096);
	/* a sub-buffer size the header does not fit in, a too small destination */
	r.subbuf_size = 15;
	r.end = 0;
	EXPECT_EINVAL(tracemap_region_write_subbuf(&r, dst, sizeof(dst)));
	r.subbuf_size = sizeof(src);
	EXPECT_EINVAL(tracemap_region_write_subbuf(&r, dst, sizeof(dst) - 1));
}

static void test_cpu_opts(void **state)
{
	struct {
		struct tracemap_cpu_opts o;
		unsigned char newer[8];		/* fields of a later version */
	} big;
	struct tracemap_cpu_opts o = { .sz = sizeof(o) };

	/* unknown flag bits: refused, with the bits named */
	nmsg = 0;
	o.flags = TRACEMAP_CPU_FORCE_READ | (1u << 7);
	errno = 0;
	assert_null(tracemap_cpu_open(NULL, 0, &o));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(nmsg, 1);
	assert_non_null(strstr(last, "0x80"));

	/* too small */
	nmsg = 0;
	o.flags = 0;
	o.sz = sizeof(size_t);
	errno = 0;
	assert_null(tracemap_cpu_open(NULL, 0, &o));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(nmsg, 1);
	assert_non_null(strstr(last, "sizeof(struct tracemap_cpu_opts)"));

	/* larger, with a field this version does not know set */
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.newer[3] = 1;
	nmsg = 0;
	errno = 0;
	assert_null(tracemap_cpu_open(NULL, 0, &big.o));
	assert_int_equal(errno, E2BIG);
	assert_int_equal(nmsg, 1);

	/* a negative CPU, an unknown mode */
	o.sz = sizeof(o);
	errno = 0;
	assert_null(tracemap_cpu_open(NULL, -1, &o));
	assert_int_equal(errno, EINVAL);
	o.mode = (enum tracemap_mode)7;
	errno = 0;
	assert_null(tracemap_cpu_open(NULL, 0, &o));
	assert_int_equal(errno, EINVAL);
}

static void test_stream_opts(void **state)
{
	struct tracemap_stream_opts o = { .sz = sizeof(o) };

	o.cpu_flags = 1u << 9;
	o.tracefs_dir = "/nonexistent-tracefs";
	errno = 0;
	/* the tracefs check comes first here: any error, but no crash and no stream */
	assert_null(tracemap_stream_open(NULL, &o));
	assert_int_not_equal(errno, 0);
	o.cpu_flags = 0;
	o.flags = 1u << 30;
	errno = 0;
	assert_null(tracemap_stream_open(NULL, &o));
	assert_int_equal(errno, EINVAL);
	o.flags = 0;
	o.sz = 1;
	errno = 0;
	assert_null(tracemap_stream_open(NULL, &o));
	assert_int_equal(errno, EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_null_reader),
		cmocka_unit_test(test_null_stream),
		cmocka_unit_test(test_region_out_of_range),
		cmocka_unit_test(test_cpu_opts),
		cmocka_unit_test(test_stream_opts),
	};

	return cmocka_run_group_tests(tests, setup, teardown) ? 1 : 0;
}
