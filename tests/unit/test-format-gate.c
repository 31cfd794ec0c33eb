// SPDX-License-Identifier: GPL-2.0-only
/*
 * The formatter compiles event types only with the libtraceevent releases
 * its compiler was verified against (lib/format-compile.c): the version
 * pkg-config gave at build time and the version of the library loaded at
 * run time must both be verified; a library whose version cannot be told
 * (linked statically) stands for the build's. Outside them every event
 * goes through tep_print_event(), as with TRACEMAP_FORMAT_NO_COMPILE.
 */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "format-local.h"

static void test_versions(void **state)
{
	char why[96];

	assert_null(tm_fmt_version_refusal("1.7.1", "1.7.1", why, sizeof(why)));
	assert_null(tm_fmt_version_refusal("1.7.1", NULL, why, sizeof(why)));
	assert_string_equal(tm_fmt_version_refusal("1.8.0", "1.7.1", why, sizeof(why)),
			    "built against libtraceevent 1.8.0");
	assert_string_equal(tm_fmt_version_refusal("1.7.1", "1.7.3", why, sizeof(why)),
			    "libtraceevent 1.7.3 loaded");
	assert_string_equal(tm_fmt_version_refusal("1.7.1", "1", why, sizeof(why)),
			    "libtraceevent 1 loaded");
	assert_string_equal(tm_fmt_version_refusal("", NULL, why, sizeof(why)),
			    "built against libtraceevent of unknown version");
}

/* This build and this machine: the refusal says what the versions are */
static void test_this_machine(void **state)
{
	const char *why = tm_fmt_compile_refusal();

	printf("built against libtraceevent %s: %s\n", TM_TEP_BUILD_VERSION,
	       why ? why : "compiling");
	assert_ptr_equal(why, tm_fmt_compile_refusal());
	if (!strcmp(TM_TEP_BUILD_VERSION, "1.7.1"))
		assert_null(why);
	else
		assert_non_null(why);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_this_machine),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
