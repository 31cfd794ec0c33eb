// SPDX-License-Identifier: GPL-2.0-only
/*
 * tracemap_instance_open() and its put-back: a private instance named
 * <prefix>-<pid>-<n>, made and removed; a named one whose buffer_size_kb
 * and a file set through tracemap_instance_set() (options/overwrite) are
 * put back at close, each written in the crash record first (once per
 * file); a process killed with SIGKILL leaves a record that
 * tracemap_state_repair() puts back; what cannot be an instance file or a
 * name part is refused with a message; a tracer the kernel refuses
 * (EPERM here) leaves nothing.
 *
 * timeout: 120
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "tracemap.h"

#define TAG		"ni"

const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libtraceevent.so\n";
}

static char state_dir[256];
static pid_t child;		/* a child still to reap when a case fails */
static char last_msg[1024];
static char all_msgs[8192];

static void capture(void *ctx, enum tracemap_log_level level, const char *msg)
{
	(void)ctx;
	if (level > TRACEMAP_LOG_WARN)
		return;
	snprintf(last_msg, sizeof(last_msg), "%s", msg);
	if (strlen(all_msgs) + strlen(msg) + 2 < sizeof(all_msgs)) {
		strcat(all_msgs, msg);
		strcat(all_msgs, "\n");
	}
}

static int nr_records(void)
{
	struct dirent *d;
	DIR *dp = opendir(state_dir);
	int n = 0;

	if (!dp)
		return 0;
	while ((d = readdir(dp)))
		n += d->d_name[0] != '.';
	closedir(dp);
	return n;
}

/* The whole of the only record, or NULL */
static char *record(void)
{
	char path[600], *buf = NULL;
	struct dirent *d;
	size_t len = 0;
	DIR *dp = opendir(state_dir);
	FILE *f;

	while (dp && (d = readdir(dp)) && !buf) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", state_dir, d->d_name);
		f = fopen(path, "r");
		if (f) {
			buf = calloc(1, 8192);
			if (buf)
				len = fread(buf, 1, 8191, f);
			fclose(f);
		}
	}
	if (dp)
		closedir(dp);
	(void)len;
	return buf;
}

static bool instance_exists(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/instances/%s", th_tracefs(), name);
	return !access(path, F_OK);
}

static long read_num(const char *inst, const char *file)
{
	char *v = th_instance_read(inst, file);
	long n;

	assert_non_null(v);
	n = strtol(v, NULL, 10);
	free(v);
	return n;
}

static int setup(void **state)
{
	(void)state;
	snprintf(state_dir, sizeof(state_dir), "/tmp/tmtest-%s-state-%d", TAG, (int)getpid());
	setenv("TRACEMAP_STATE_DIR", state_dir, 1);
	tracemap_set_print(capture, NULL);
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	tracemap_set_print(NULL, NULL);
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	/* whatever a failed case left: put back, then the directory goes */
	tracemap_state_repair(0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", state_dir);
	return system(cmd) ? -1 : 0;
}

/* NULL: <prefix>-<pid>-<n>, made here and gone at close with its record */
static void test_private_prefix(void **state)
{
	TRACEMAP_OPTS(tracemap_instance_opts, o, .prefix = "tmtest-" TAG "-p");
	struct tracemap_instance *ti;
	char want[64], name[256];
	int created = -1;

	(void)state;
	ti = tracemap_instance_open(NULL, &o);
	assert_non_null(ti);
	snprintf(name, sizeof(name), "%s", tracemap_instance_name(ti, &created));
	snprintf(want, sizeof(want), "tmtest-%s-p-%d-", TAG, (int)getpid());
	if (strncmp(name, want, strlen(want)))
		fail_msg("private instance '%s' is not named %s<n>", name, want);
	assert_int_equal(created, 1);
	assert_true(instance_exists(name));
	assert_int_equal(nr_records(), 1);
	assert_int_equal(tracemap_instance_close(ti), 0);
	assert_false(instance_exists(name));
	assert_int_equal(nr_records(), 0);
}

/* A named instance: the size and options/overwrite put back, noted once */
static void test_named_put_back(void **state)
{
	TRACEMAP_OPTS(tracemap_instance_opts, o, .buffer_size_kb = 300);
	const char *inst = th_instance_create(TAG, 100, 0);
	struct tracemap_instance *ti;
	long kb;
	char *rec;
	int created = -1;

	(void)state;
	assert_non_null(inst);
	assert_int_equal(th_instance_write(inst, "options/overwrite", "0"), 0);
	kb = read_num(inst, "buffer_size_kb");
	ti = tracemap_instance_open(inst, &o);
	assert_non_null(ti);
	assert_string_equal(tracemap_instance_name(ti, &created), inst);
	assert_int_equal(created, 0);
	assert_true(read_num(inst, "buffer_size_kb") >= 300);
	assert_int_equal(tracemap_instance_set(ti, "options/overwrite", "1"), 0);
	assert_int_equal(tracemap_instance_set(ti, "options/overwrite", "1"), 0);
	assert_int_equal(read_num(inst, "options/overwrite"), 1);
	rec = record();
	assert_non_null(rec);
	if (!strstr(rec, "\nfile=options/overwrite 0\n") ||
	    strstr(strstr(rec, "\nfile=") + 1, "\nfile="))
		fail_msg("the record does not name options/overwrite once: %s", rec);
	free(rec);
	assert_int_equal(tracemap_instance_close(ti), 0);
	assert_int_equal(read_num(inst, "options/overwrite"), 0);
	assert_int_equal(read_num(inst, "buffer_size_kb"), kb);
	assert_int_equal(nr_records(), 0);
	th_instance_remove(inst);
}

/* Names and files that are not the instance's, unknown flags: refused, said */
static void test_refusals(void **state)
{
	TRACEMAP_OPTS(tracemap_instance_opts, o, .prefix = "a/b");
	const char *inst = th_instance_create(TAG, 0, 0);
	struct tracemap_instance *ti;
	char name[128];

	(void)state;
	assert_non_null(inst);
	errno = 0;
	assert_null(tracemap_instance_open(NULL, &o));
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(last_msg, "prefix"));
	o.prefix = NULL;
	o.flags = 1u << 7;
	errno = 0;
	assert_null(tracemap_instance_open(NULL, &o));
	assert_int_equal(errno, EINVAL);
	o.flags = 0;
	snprintf(name, sizeof(name), "tmtest-%s-new-%d", TAG, (int)getpid());
	errno = 0;
	assert_null(tracemap_instance_open(name, &o));
	assert_int_equal(errno, ENODEV);
	assert_false(instance_exists(name));
	o.flags = TRACEMAP_INSTANCE_CREATE;
	ti = tracemap_instance_open(name, &o);
	assert_non_null(ti);
	assert_true(instance_exists(name));
	assert_int_equal(tracemap_instance_close(ti), 0);
	assert_false(instance_exists(name));

	ti = tracemap_instance_open(inst, NULL);
	assert_non_null(ti);
	assert_int_equal(tracemap_instance_set(ti, "../tracing_on", "0"), -EINVAL);
	assert_non_null(strstr(last_msg, "give a file of the instance"));
	assert_int_equal(tracemap_instance_set(ti, "/etc/passwd", "0"), -EINVAL);
	assert_int_equal(tracemap_instance_set(ti, "options/overwrite", NULL), -EINVAL);
	assert_int_equal(tracemap_instance_set(NULL, "options/overwrite", "1"), -EINVAL);
	assert_int_equal(tracemap_instance_set(ti, "no_such_file", "1"), -ENOENT);
	assert_int_equal(tracemap_instance_close(ti), 0);
	assert_int_equal(nr_records(), 0);
	th_instance_remove(inst);
}

/* SIGKILL after a change: tracemap_state_repair() puts it back and says so */
static void test_killed(void **state)
{
	const char *inst = th_instance_create(TAG, 0, 0);
	int fds[2];
	char c;

	(void)state;
	assert_non_null(inst);
	assert_int_equal(th_instance_write(inst, "options/overwrite", "0"), 0);
	assert_int_equal(pipe(fds), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		struct tracemap_instance *ti = tracemap_instance_open(inst, NULL);

		if (!ti || tracemap_instance_set(ti, "options/overwrite", "1"))
			_exit(1);
		if (write(fds[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &c, 1), 1);
	close(fds[0]);
	assert_int_equal(read_num(inst, "options/overwrite"), 1);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	child = 0;
	all_msgs[0] = '\0';
	assert_int_equal(tracemap_state_repair(0), 1);
	assert_int_equal(read_num(inst, "options/overwrite"), 0);
	if (!strstr(all_msgs, "options/overwrite 0"))
		fail_msg("the repair did not say it put options/overwrite back: %s", all_msgs);
	assert_int_equal(nr_records(), 0);
	th_instance_remove(inst);
}

/* options/func_stack_trace of the top level: 0, 1, or -1 */
static int top_stack(void)
{
	char path[4096], buf[8] = "";
	FILE *fp;

	snprintf(path, sizeof(path), "%s/options/func_stack_trace", th_tracefs());
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	if (!fgets(buf, sizeof(buf), fp))
		buf[0] = '\0';
	fclose(fp);
	return buf[0] == '1' ? 1 : buf[0] == '0' ? 0 : -1;
}

/*
 * A tracer the kernel refuses: NULL, and the instance as it was, no record.
 * The top level's func_stack_trace is never changed: a kernel may keep one
 * for every buffer, so --func-stack is asked for only where the instance's
 * value differs from the top level's (proven its own without a write).
 */
static void test_tracer_refused(void **state)
{
	TRACEMAP_OPTS(tracemap_tracer_opts, to, .tracer = "function");
	TRACEMAP_OPTS(tracemap_instance_opts, o, .tracer = &to);
	const char *inst = th_instance_create(TAG, 0, 0);
	int top = top_stack(), own = -1;
	struct tracemap_instance *ti;
	char *tracer;

	(void)state;
	assert_non_null(inst);
	tracer = th_instance_read(inst, "options/func_stack_trace");
	if (tracer)
		own = tracer[0] == '1';
	free(tracer);
	if (own < 0 || top < 0) {
		th_instance_remove(inst);
		skip();
	}
	if (own != top) {
		assert_int_equal(th_instance_write(inst, "options/func_stack_trace", "0"), 0);
		to.flags = TRACEMAP_TRACER_FUNC_STACK;
	} else {
		print_message("# func_stack_trace left out: the instance's equals the top level's, "
			      "and only a write could tell whether the kernel keeps one for every "
			      "buffer (6.18 does), a write that would change the top level\n");
	}
	errno = 0;
	ti = tracemap_instance_open(inst, &o);
	if (ti) {
		/* a kernel that runs the function tracer: set, and put back at close */
		tracer = th_instance_read(inst, "current_tracer");
		assert_non_null(tracer);
		assert_non_null(strstr(tracer, "function"));
		free(tracer);
		assert_int_equal(tracemap_instance_close(ti), 0);
	} else {
		assert_int_equal(errno, EPERM);
		assert_non_null(strstr(last_msg, "function tracers"));
	}
	tracer = th_instance_read(inst, "current_tracer");
	assert_non_null(tracer);
	assert_non_null(strstr(tracer, "nop"));
	free(tracer);
	assert_int_equal(read_num(inst, "options/func_stack_trace"), own != top ? 0 : own);
	assert_int_equal(top_stack(), top);
	assert_int_equal(nr_records(), 0);
	th_instance_remove(inst);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_private_prefix),
		cmocka_unit_test(test_named_put_back),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_killed),
		cmocka_unit_test(test_tracer_refused),
	};

	th_require_tracefs();
	return cmocka_run_group_tests(tests, setup, teardown) ? 1 : 0;
}
