// SPDX-License-Identifier: GPL-2.0-only
/*
 * --func-stack (TRACEMAP_TRACER_FUNC_STACK) on a fake tracefs directory
 * (tracemap_tracer_opts.tracefs_dir), no root, no kernel:
 * - a kernel with one func_stack_trace for all buffers is modelled by the
 *   instance's options/func_stack_trace being a symlink to the top level's:
 *   the library tells it from the top level following its write, warns
 *   naming the top level and every instance, notes the global put-back in
 *   the crash record, and puts the top level back at restore;
 * - a record left by a killed process puts the top level's flag back even
 *   when the instance is gone (a private instance removed by the repair);
 * - a per-instance flag (two files) gives no warning and no global note,
 *   and the top level is never written.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "tracemap.h"

#define INST	"tmtest-fs-unit"

static char root[PATH_MAX];		/* the fake tracefs */
static char statedir[PATH_MAX];		/* TRACEMAP_STATE_DIR */
static char msgs[8192];

static void sink(void *ctx, enum tracemap_log_level level, const char *msg)
{
	size_t len = strlen(msgs);

	(void)ctx;
	(void)level;
	snprintf(msgs + len, sizeof(msgs) - len, "%s\n", msg);
}

static void put(const char *rel, const char *val)
{
	char path[PATH_MAX * 2];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(val, fp);
	assert_int_equal(fclose(fp), 0);
}

static int get(const char *rel)
{
	char path[PATH_MAX * 2], buf[16] = "";
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	fp = fopen(path, "r");
	assert_non_null(fp);
	assert_non_null(fgets(buf, sizeof(buf), fp));
	fclose(fp);
	return buf[0] == '1';
}

static void mkdirs(const char *rel)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(mkdir(path, 0755), 0);
}

static void rm_rf(const char *path)
{
	char cmd[PATH_MAX * 2 + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	assert_int_equal(system(cmd), 0);
}

/* The whole crash record (one only), or "" when there is none */
static void record(char *buf, size_t size)
{
	char path[PATH_MAX * 2];
	struct dirent *de;
	DIR *d = opendir(statedir);
	size_t n = 0;
	FILE *fp;

	buf[0] = '\0';
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", statedir, de->d_name);
		fp = fopen(path, "r");
		assert_non_null(fp);
		n += fread(buf + n, 1, size - 1 - n, fp);
		buf[n] = '\0';
		fclose(fp);
	}
	closedir(d);
}

/* A tracefs with the top level and instance INST, without the instance's flag */
static int setup(void **state)
{
	char tmpl[] = "/tmp/tmtest-fs-XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	snprintf(root, sizeof(root), "%s/tracefs", tmpl);
	snprintf(statedir, sizeof(statedir), "%s/state", tmpl);
	assert_int_equal(mkdir(root, 0755), 0);
	assert_int_equal(setenv("TRACEMAP_STATE_DIR", statedir, 1), 0);
	put("trace_pipe", "");
	mkdirs("options");
	put("options/func_stack_trace", "0\n");
	mkdirs("instances");
	mkdirs("instances/" INST);
	mkdirs("instances/" INST "/options");
	put("instances/" INST "/current_tracer", "nop\n");
	return 0;
}

static void make_flag(bool shared)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s/instances/" INST "/options/func_stack_trace", root);
	if (shared)
		assert_int_equal(symlink("../../../options/func_stack_trace", path), 0);
	else
		put("instances/" INST "/options/func_stack_trace", "0\n");
}

static int setup_shared(void **state)
{
	setup(state);
	make_flag(true);
	return 0;
}

static int setup_own(void **state)
{
	setup(state);
	make_flag(false);
	return 0;
}

static int teardown(void **state)
{
	char *slash;

	(void)state;
	slash = strrchr(root, '/');
	*slash = '\0';
	rm_rf(root);
	tracemap_set_print(NULL, NULL);
	return 0;
}

static struct tracemap_tracer *set_stack(void)
{
	TRACEMAP_OPTS(tracemap_tracer_opts, o, .tracer = "function",
		      .flags = TRACEMAP_TRACER_FUNC_STACK, .tracefs_dir = root);

	msgs[0] = '\0';
	tracemap_set_print(sink, NULL);
	return tracemap_tracer_set(INST, &o);
}

static void test_shared_warned_and_put_back(void **state)
{
	struct tracemap_tracer *t;
	char rec[4096];

	(void)state;
	t = set_stack();
	assert_non_null(t);
	assert_int_equal(get("options/func_stack_trace"), 1);
	if (!strstr(msgs, "also set it in the top level") || !strstr(msgs, "every other instance") ||
	    !strstr(msgs, "tracemap reset"))
		fail_msg("no warning that the top level and every instance changed: '%s'", msgs);
	record(rec, sizeof(rec));
	if (!strstr(rec, "\nfunc_stack_trace=0\n") || !strstr(rec, "\nfunc_stack_trace_global=0"))
		fail_msg("the crash record does not name the global put-back: '%s'", rec);
	assert_int_equal(tracemap_tracer_restore(t), 0);
	assert_int_equal(get("options/func_stack_trace"), 0);
	record(rec, sizeof(rec));
	assert_string_equal(rec, "");
}

/* Killed with the global flag set, in an instance that is gone at the repair */
static void test_shared_repaired_without_instance(void **state)
{
	char path[PATH_MAX * 2];
	int status, fds[2];
	pid_t child;
	char c;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		close(fds[0]);
		if (!set_stack() || write(fds[1], "x", 1) != 1)
			_exit(1);
		/* ends without restore, as after SIGKILL */
		_exit(0);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &c, 1), 1);
	close(fds[0]);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(get("options/func_stack_trace"), 1);
	snprintf(path, sizeof(path), "%s/instances/" INST, root);
	rm_rf(path);
	msgs[0] = '\0';
	tracemap_set_print(sink, NULL);
	assert_int_equal(tracemap_state_repair(0), 1);
	assert_int_equal(get("options/func_stack_trace"), 0);
	if (!strstr(msgs, "func_stack_trace 0 in the top level and every instance"))
		fail_msg("the repair did not say it put the top level's flag back: '%s'", msgs);
}

static void test_own_flag_left_alone(void **state)
{
	struct tracemap_tracer *t;
	char rec[4096];

	(void)state;
	put("options/func_stack_trace", "0\n");
	t = set_stack();
	assert_non_null(t);
	assert_int_equal(get("instances/" INST "/options/func_stack_trace"), 1);
	assert_int_equal(get("options/func_stack_trace"), 0);
	if (strstr(msgs, "top level"))
		fail_msg("a warning for a per-instance flag: '%s'", msgs);
	record(rec, sizeof(rec));
	if (!strstr(rec, "\nfunc_stack_trace=0\n") || strstr(rec, "func_stack_trace_global"))
		fail_msg("the record of a per-instance flag: '%s'", rec);
	assert_int_equal(tracemap_tracer_restore(t), 0);
	assert_int_equal(get("instances/" INST "/options/func_stack_trace"), 0);
	assert_int_equal(get("options/func_stack_trace"), 0);
}

/* Already on in the top level: per-instance here, and nothing of the top level is touched */
static void test_top_already_on(void **state)
{
	struct tracemap_tracer *t;
	char rec[4096];

	(void)state;
	put("options/func_stack_trace", "1\n");
	t = set_stack();
	assert_non_null(t);
	assert_int_equal(get("instances/" INST "/options/func_stack_trace"), 1);
	if (strstr(msgs, "top level"))
		fail_msg("a warning when the top level was already on: '%s'", msgs);
	record(rec, sizeof(rec));
	if (strstr(rec, "func_stack_trace_global"))
		fail_msg("a global put-back of a flag that was on: '%s'", rec);
	assert_int_equal(tracemap_tracer_restore(t), 0);
	assert_int_equal(get("instances/" INST "/options/func_stack_trace"), 0);
	assert_int_equal(get("options/func_stack_trace"), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_shared_warned_and_put_back, setup_shared,
						teardown),
		cmocka_unit_test_setup_teardown(test_shared_repaired_without_instance, setup_shared,
						teardown),
		cmocka_unit_test_setup_teardown(test_own_flag_left_alone, setup_own, teardown),
		cmocka_unit_test_setup_teardown(test_top_already_on, setup_own, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
