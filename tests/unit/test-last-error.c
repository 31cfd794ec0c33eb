// SPDX-License-Identifier: GPL-2.0-only
/*
 * tracemap_last_error(): the library's last error or warning of the
 * calling thread, with the default sink and with the caller's, cleared by
 * tracemap_clear_error(), and not seen by another thread. The tool, the
 * trace-cmd plugin and the Python module quote it instead of each keeping
 * their own copy of the messages.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "tracemap.h"

static char sunk[512];

static void sink(void *ctx, enum tracemap_log_level level, const char *msg)
{
	snprintf(sunk, sizeof(sunk), "%s", msg);
}

static void *other_thread(void *arg)
{
	return (void *)(long)(*tracemap_last_error() != '\0');
}

static void test_last_error(void **state)
{
	char buf[256];
	pthread_t t;
	void *seen;

	tracemap_set_print(sink, NULL);
	tracemap_clear_error();
	assert_string_equal(tracemap_last_error(), "");
	assert_true(tracemap_tracefs_dir("/nonexistent-tracemap-test", buf, sizeof(buf)) < 0);
	assert_true(strlen(tracemap_last_error()) > 0);
	assert_string_equal(tracemap_last_error(), sunk);
	assert_non_null(strstr(tracemap_last_error(), "/nonexistent-tracemap-test"));

	/* per thread */
	assert_int_equal(pthread_create(&t, NULL, other_thread, NULL), 0);
	assert_int_equal(pthread_join(t, &seen), 0);
	assert_null(seen);

	tracemap_clear_error();
	assert_string_equal(tracemap_last_error(), "");

	/* kept with the default sink too (the message also goes to stderr) */
	tracemap_set_print(NULL, NULL);
	assert_true(tracemap_tracefs_dir("/nonexistent-tracemap-test", buf, sizeof(buf)) < 0);
	assert_non_null(strstr(tracemap_last_error(), "/nonexistent-tracemap-test"));
	tracemap_clear_error();
}

static void test_now_ns(void **state)
{
	uint64_t a = tracemap_now_ns(), b = tracemap_now_ns();
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	assert_true(a > 0 && b >= a);
	assert_true((uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec >= b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_last_error),
		cmocka_unit_test(test_now_ns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
