// SPDX-License-Identifier: GPL-2.0-only
/*
 * A dump taken again from the last one (tracemap_dump_retake()) on the real
 * ring buffer holds what a fresh tracemap_dump_take() holds at the same
 * moment, with only the pages that changed copied: after new markers, with
 * nothing new, and after the writer went round the ring (recycled pages,
 * the overrun marked before the oldest page kept). Compared are every
 * count of the dump (events, bytes, pages, first and last time, lost,
 * lost_gaps, overrun) and the pages of the written file byte for byte (the
 * rest of the file holds saved_cmdlines, which other tracers on the machine
 * may change in between). A kept dump holds no descriptor: the instance
 * can be removed, and a retake then fails and frees the dump.
 *
 * timeout: 120
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "tracefs-instance.h"
#include "tracemap.h"

static struct th_fixture fx = TH_FIXTURE("nlib-dump");

/* The pages of the file @d writes: its last @pages sub-buffers; malloc'ed */
static unsigned char *pages_of(struct tracemap_dump *d, uint64_t pages, size_t *len)
{
	unsigned char *p;
	struct stat st;
	uint32_t sbs;
	int fd;

	fd = memfd_create("tm-test-dump", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(tracemap_dump_write(d, fd), 0);
	assert_int_equal(fstat(fd, &st), 0);
	/* magic (10), "6\0", endianness, sizeof(long), then the page size */
	assert_int_equal(pread(fd, &sbs, sizeof(sbs), 14), (ssize_t)sizeof(sbs));
	*len = pages * sbs;
	assert_true(*len <= (size_t)st.st_size);
	p = malloc(*len + 1);
	assert_non_null(p);
	assert_int_equal(pread(fd, p, *len, st.st_size - *len), (ssize_t)*len);
	close(fd);
	return p;
}

/* @a, a retake, holds what @b, a fresh dump, holds; returns @a's counts */
static struct tracemap_dump_cpu_stats same(struct tracemap_dump *a, struct tracemap_dump *b)
{
	struct tracemap_dump_cpu_stats x, y;
	unsigned char *pa, *pb;
	size_t la, lb;

	assert_int_equal(tracemap_dump_nr_cpus(a), 1);
	assert_int_equal(tracemap_dump_nr_cpus(b), 1);
	assert_int_equal(tracemap_dump_stats(a, 0, &x, sizeof(x)), 0);
	assert_int_equal(tracemap_dump_stats(b, 0, &y, sizeof(y)), 0);
	if (x.events != y.events || x.bytes != y.bytes || x.pages != y.pages ||
	    x.first_ts != y.first_ts || x.last_ts != y.last_ts || x.lost != y.lost ||
	    x.lost_gaps != y.lost_gaps || x.overrun != y.overrun)
		fail_msg("retake: %lu events %lu pages %lu lost %lu gaps %lu overrun; fresh: "
			 "%lu events %lu pages %lu lost %lu gaps %lu overrun",
			 (unsigned long)x.events, (unsigned long)x.pages, (unsigned long)x.lost,
			 (unsigned long)x.lost_gaps, (unsigned long)x.overrun,
			 (unsigned long)y.events, (unsigned long)y.pages, (unsigned long)y.lost,
			 (unsigned long)y.lost_gaps, (unsigned long)y.overrun);
	pa = pages_of(a, x.pages, &la);
	pb = pages_of(b, y.pages, &lb);
	assert_int_equal(la, lb);
	assert_memory_equal(pa, pb, la);
	free(pa);
	free(pb);
	return x;
}

/* *@d taken again, and a fresh dump beside it: the same; returns the counts */
static struct tracemap_dump_cpu_stats retake_same(struct tracemap_dump **d,
						  const struct tracemap_dump_opts *o)
{
	struct tracemap_dump_cpu_stats st;
	struct tracemap_dump *f;

	*d = tracemap_dump_retake(*d);
	assert_non_null(*d);
	f = tracemap_dump_take(fx.inst, o);
	assert_non_null(f);
	st = same(*d, f);
	tracemap_dump_free(f);
	return st;
}

static void test_retake_equals_take(void **state)
{
	TRACEMAP_OPTS(tracemap_dump_opts, o, .cpumask = "1");
	struct tracemap_dump_cpu_stats st;
	struct tracemap_dump *d;
	char dir[4200];
	struct stat sst;

	(void)state;
	/* 64 KiB: a few thousand markers go round it */
	th_fixture_new(&fx, 64, 0);
	th_pin(0);
	th_fixture_write_markers(&fx, 0, 200);
	d = tracemap_dump_take(fx.inst, &o);
	assert_non_null(d);
	assert_int_equal(tracemap_dump_stats(d, -1, &st, sizeof(st)), 0);
	assert_int_equal(st.events, 200);

	/* 200 more: the newest page grew, new pages filled */
	th_fixture_write_markers(&fx, 200, 200);
	st = retake_same(&d, &o);
	assert_int_equal(st.events, 400);
	assert_int_equal(st.lost, 0);

	/* nothing new */
	st = retake_same(&d, &o);
	assert_int_equal(st.events, 400);

	/* round the ring: every page recycled, the overrun before the oldest kept */
	th_fixture_write_markers(&fx, 400, 6000);
	st = retake_same(&d, &o);
	assert_true(st.overrun > 0);
	/* the count goes after the oldest page's records; a page they fill has the mark alone */
	if (st.lost_gaps)
		assert_int_equal(st.lost, 0);
	else
		assert_int_equal(st.lost, st.overrun);
	assert_true(st.lost_gaps <= 1);
	assert_int_equal(st.events + st.overrun, 6400);
	printf("# %lu events kept, %lu overwritten\n", (unsigned long)st.events,
	       (unsigned long)st.overrun);

	/* a kept dump holds no descriptor: the instance goes, the retake fails */
	snprintf(dir, sizeof(dir), "%s/instances/%s", ti_tracefs(), fx.inst);
	/* the marker's file is the only one of the instance still open */
	close(fx.marker);
	fx.marker = -1;
	if (rmdir(dir))
		fail_msg("rmdir %s while a dump of it is kept: %s", dir, strerror(errno));
	assert_int_not_equal(stat(dir, &sst), 0);
	errno = 0;
	assert_null(tracemap_dump_retake(d));
	assert_int_equal(errno, ENODEV);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_retake_equals_take, th_fixture_teardown),
	};

	/* a dump copies the mapping: before Linux 6.10 it is refused (tool-nomap.sh) */
	th_require_mmap();
	return th_fixture_run_tests(tests, &fx);
}
