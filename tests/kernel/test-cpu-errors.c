// SPDX-License-Identifier: GPL-2.0-only
/*
 * tracemap_cpu_open() errors on the real tracefs: each failure has its own
 * errno and exactly one error message that names what failed and says what
 * to do; a successful open says nothing. Without the mapping, the same, and
 * what needs the mapping refused with the kernel it needs.
 *
 * timeout: 60
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "tracemap.h"

#define TAG	"kc"

static struct {
	unsigned int n;			/* messages at warning level or worse */
	unsigned int all;		/* messages at any level */
	char last[512];
} msgs;

static const char *inst;

static void capture(void *ctx, enum tracemap_log_level level, const char *msg)
{
	msgs.all++;
	if (level > TRACEMAP_LOG_WARN)
		return;
	msgs.n++;
	snprintf(msgs.last, sizeof(msgs.last), "%s", msg);
}

static int setup(void **state)
{
	inst = th_instance_create(TAG, 0, 0);
	tracemap_set_print(capture, NULL);
	return inst ? 0 : -1;
}

static int teardown(void **state)
{
	tracemap_set_print(NULL, NULL);
	if (inst)
		th_instance_remove(inst);
	inst = NULL;
	return 0;
}

/*
 * Open must fail with @err and print exactly one message containing every
 * string of @hints (NULL-terminated).
 */
static void expect_failure(const char *instance, int cpu, enum tracemap_mode mode,
			   unsigned int flags, const char *dir, size_t sz, int err,
			   const char *const *hints)
{
	struct tracemap_cpu_opts o = { .sz = sz, .mode = mode, .flags = flags,
				       .tracefs_dir = dir };
	struct tracemap_cpu *c;

	memset(&msgs, 0, sizeof(msgs));
	errno = 0;
	c = tracemap_cpu_open(instance, cpu, &o);
	if (c)
		tracemap_cpu_close(c);
	assert_null(c);
	if (errno != err)
		fail_msg("errno %d (%s), expected %d (%s)", errno, strerror(errno), err,
			 strerror(err));
	assert_int_equal(msgs.n, 1);
	for (; *hints; hints++)
		if (!strstr(msgs.last, *hints))
			fail_msg("message \"%s\" lacks \"%s\"", msgs.last, *hints);
}

#define HINTS(...)	((const char *const[]){ __VA_ARGS__, NULL })
#define SZ		sizeof(struct tracemap_cpu_opts)

static void test_not_tracefs(void **state)
{
	expect_failure(inst, 0, TRACEMAP_MODE_CONSUME, 0, "/nonexistent/tracing", SZ, ENOENT,
		       HINTS("/nonexistent/tracing", "mount -t tracefs"));
	/* a directory that exists but is no tracefs */
	expect_failure(inst, 0, TRACEMAP_MODE_CONSUME, 0, "/tmp", SZ, ENOENT,
		       HINTS("/tmp", "mount -t tracefs"));
}

static void test_unknown_instance(void **state)
{
	char name[96];

	snprintf(name, sizeof(name), "tmtest-%s-%d-nonexistent", TAG, (int)getpid());
	expect_failure(name, 0, TRACEMAP_MODE_CONSUME, 0, NULL, SZ, ENODEV,
		       HINTS(name, "mkdir"));
	expect_failure(name, 0, TRACEMAP_MODE_SNAPSHOT, 0, th_tracefs(), SZ, ENODEV,
		       HINTS(name, "mkdir"));
}

static void test_absent_cpu(void **state)
{
	expect_failure(inst, 4096, TRACEMAP_MODE_CONSUME, 0, NULL, SZ, ENXIO,
		       HINTS("CPU 4096", "/sys/devices/system/cpu/possible"));
	expect_failure(inst, 4096, TRACEMAP_MODE_FOLLOW, 0, NULL, SZ, ENXIO,
		       HINTS("CPU 4096", "/sys/devices/system/cpu/possible"));
	expect_failure(inst, 4096, TRACEMAP_MODE_CONSUME, TRACEMAP_CPU_FORCE_READ, NULL, SZ,
		       ENXIO, HINTS("CPU 4096"));
}

static void test_invalid(void **state)
{
	expect_failure(inst, 0, TRACEMAP_MODE_SNAPSHOT, TRACEMAP_CPU_FORCE_READ, NULL, SZ, EINVAL,
		       HINTS("snapshot", "TRACEMAP_CPU_FORCE_READ", "TRACEMAP_MODE_CONSUME"));
	expect_failure(inst, 0, TRACEMAP_MODE_FOLLOW, TRACEMAP_CPU_FORCE_READ, NULL, SZ, EINVAL,
		       HINTS("follow", "TRACEMAP_CPU_FORCE_READ"));
	expect_failure(inst, -1, TRACEMAP_MODE_CONSUME, 0, NULL, SZ, EINVAL, HINTS("CPU -1"));
	expect_failure(inst, 0, (enum tracemap_mode)7, 0, NULL, SZ, EINVAL, HINTS("mode 7"));
	expect_failure(inst, 0, TRACEMAP_MODE_CONSUME, 0, NULL, 8, EINVAL,
		       HINTS("sizeof(struct tracemap_cpu_opts)"));
}

/* A name no instance can have: no mkdir advice that cannot work */
static void test_long_instance_name(void **state)
{
	char name[301];

	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	expect_failure(name, 0, TRACEMAP_MODE_CONSUME, 0, NULL, SZ, ENAMETOOLONG,
		       HINTS("300 bytes", "at most 255"));
	assert_null(strstr(msgs.last, "mkdir"));
}

/*
 * As a user who may not read tracefs, an existing instance is a permission
 * problem, not a missing one: EACCES and a message that says run as root.
 */
static void test_no_permission(void **state)
{
	int status;
	pid_t pid;

	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct tracemap_cpu_opts o = { .sz = sizeof(o) };
		struct tracemap_cpu *c;

		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(3);
		memset(&msgs, 0, sizeof(msgs));
		errno = 0;
		c = tracemap_cpu_open(inst, 0, &o);
		if (c)
			_exit(4);
		if (errno != EACCES) {
			printf("errno %d (%s), expected EACCES\n", errno, strerror(errno));
			_exit(5);
		}
		if (msgs.n != 1 || !strstr(msgs.last, "permission") || !strstr(msgs.last, "root") ||
		    strstr(msgs.last, "mkdir") || strstr(msgs.last, "not mounted")) {
			printf("%u messages, last \"%s\"\n", msgs.n, msgs.last);
			_exit(6);
		}
		/* the top level: the same */
		errno = 0;
		if (tracemap_cpu_open(TRACEMAP_TOP_LEVEL, 0, &o) || errno != EACCES)
			_exit(7);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* What a consuming reader opened without flags reads through: the fallback without the mapping */
static enum tracemap_backend native_backend(void)
{
	return th_have_mmap() ? TRACEMAP_BACKEND_MMAP : TRACEMAP_BACKEND_READ;
}

/*
 * The checks above can pass: the same arguments with the errors removed
 * open, without a warning (the fallback to read() is no error).
 */
static void test_valid_is_silent(void **state)
{
	static const struct {
		enum tracemap_mode mode;
		unsigned int flags;
		enum tracemap_backend backend;	/* READ: forced, or the fallback */
	} ok[] = {
		{ TRACEMAP_MODE_CONSUME, 0, TRACEMAP_BACKEND_MMAP },
		{ TRACEMAP_MODE_CONSUME, TRACEMAP_CPU_FORCE_READ, TRACEMAP_BACKEND_READ },
		{ TRACEMAP_MODE_SNAPSHOT, 0, TRACEMAP_BACKEND_MMAP },
		{ TRACEMAP_MODE_FOLLOW, 0, TRACEMAP_BACKEND_MMAP },
	};
	struct tracemap_cpu_opts o = { .sz = SZ };
	struct tracemap_cpu *c;
	unsigned int i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		/* snapshot and follow: test_no_mapping where the kernel cannot map */
		if (ok[i].mode != TRACEMAP_MODE_CONSUME && !th_have_mmap())
			continue;
		memset(&msgs, 0, sizeof(msgs));
		o.mode = ok[i].mode;
		o.flags = ok[i].flags;
		o.tracefs_dir = i % 2 ? th_tracefs() : NULL;
		c = tracemap_cpu_open(inst, 0, &o);
		assert_non_null(c);
		assert_int_equal(tracemap_cpu_backend(c), ok[i].flags ? ok[i].backend :
				 native_backend());
		assert_int_equal(tracemap_cpu_mode(c), ok[i].mode);
		assert_int_equal(tracemap_cpu_id(c), 0);
		tracemap_cpu_close(c);
		assert_int_equal(msgs.n, 0);
	}
	/* NULL options: consume through the mapping (read() without it) */
	c = tracemap_cpu_open(inst, 0, NULL);
	assert_non_null(c);
	assert_int_equal(tracemap_cpu_backend(c), native_backend());
	tracemap_cpu_close(c);
	assert_int_equal(msgs.n, 0);
}

/*
 * The options copy: a newer caller's larger struct opens when the fields
 * this library does not know are zero, and fails with E2BIG and a message
 * when one is set; an older caller's smaller one fails with EINVAL.
 */
static void test_opts_size(void **state)
{
	struct {
		struct tracemap_cpu_opts o;
		unsigned long long newer[2];
	} big = { .o = { .sz = sizeof(big), .mode = TRACEMAP_MODE_CONSUME } };
	struct tracemap_cpu *c;

	memset(&msgs, 0, sizeof(msgs));
	c = tracemap_cpu_open(inst, 0, &big.o);
	assert_non_null(c);
	assert_int_equal(tracemap_cpu_backend(c), native_backend());
	tracemap_cpu_close(c);
	assert_int_equal(msgs.n, 0);

	big.newer[1] = 1;
	memset(&msgs, 0, sizeof(msgs));
	errno = 0;
	c = tracemap_cpu_open(inst, 0, &big.o);
	tracemap_cpu_close(c);
	assert_null(c);
	assert_int_equal(errno, E2BIG);
	assert_int_equal(msgs.n, 1);
	assert_non_null(strstr(msgs.last, "tracemap_cpu_opts"));
	assert_non_null(strstr(msgs.last, "update libtracemap"));

	expect_failure(inst, 0, TRACEMAP_MODE_CONSUME, 0, NULL, SZ - 1, EINVAL,
		       HINTS("tracemap_cpu_opts.sz", "sizeof(struct tracemap_cpu_opts)"));
}

/*
 * Without the mapping, what needs it is refused with EOPNOTSUPP and one
 * message naming the kernel it needs: snapshot, follow, and a consuming
 * reader that may not fall back.
 */
static void test_no_mapping(void **state)
{
	if (th_have_mmap()) {
		printf("skip: this kernel maps trace_pipe_raw: nothing to refuse\n");
		skip();
	}
	expect_failure(inst, 0, TRACEMAP_MODE_SNAPSHOT, 0, NULL, SZ, EOPNOTSUPP,
		       HINTS("cannot map", "Linux 6.10 or later"));
	expect_failure(inst, 0, TRACEMAP_MODE_FOLLOW, 0, NULL, SZ, EOPNOTSUPP,
		       HINTS("cannot map", "Linux 6.10 or later"));
	expect_failure(inst, 0, TRACEMAP_MODE_CONSUME, TRACEMAP_CPU_NO_FALLBACK, NULL, SZ,
		       EOPNOTSUPP, HINTS("cannot map", "Linux 6.10 or later"));
}

/* The getters of a NULL reader fail alike, the enum ones included. */
static void test_null_getters(void **state)
{
	assert_int_equal(tracemap_cpu_fd(NULL), -EINVAL);
	assert_int_equal(tracemap_cpu_id(NULL), -EINVAL);
	assert_int_equal((int)tracemap_cpu_backend(NULL), -EINVAL);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal((int)tracemap_cpu_mode(NULL), -EINVAL);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(tracemap_cpu_subbuf_size(NULL), -EINVAL);
	assert_int_equal(tracemap_cpu_nr_subbufs(NULL), -EINVAL);
	assert_int_equal(tracemap_cpu_wait(NULL, -1, 0), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_tracefs),
		cmocka_unit_test(test_unknown_instance),
		cmocka_unit_test(test_absent_cpu),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_long_instance_name),
		cmocka_unit_test(test_no_permission),
		cmocka_unit_test(test_valid_is_silent),
		cmocka_unit_test(test_opts_size),
		cmocka_unit_test(test_no_mapping),
		cmocka_unit_test(test_null_getters),
	};

	/* without the mapping the same errors, and its refusals (test_no_mapping) */
	th_require_tracefs();
	return cmocka_run_group_tests_name("cpu open errors", tests, setup, teardown);
}
