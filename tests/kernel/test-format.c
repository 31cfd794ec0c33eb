// SPDX-License-Identifier: GPL-2.0-only
/*
 * The text formatter against libtraceevent: every event format of this
 * kernel (events/<system>/<event>/format), each with synthetic payloads
 * that exercise every field (zero, all ones, one, the signed extremes,
 * random bytes, every value of its __print_symbolic/__print_flags, empty and
 * long strings, arrays), and real events of the common subsystems recorded
 * in a private instance. Each line of tracemap_format_line() must equal,
 * byte for byte, the line made of the three tep_print_event() calls of
 * 'trace-cmd report' 3.1.6 with the same plugins loaded; every difference is
 * printed with the event and both lines.
 *
 * timeout: 120
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>
#include <tracefs/tracefs.h>

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#define lsan_disable()	__lsan_disable()
#define lsan_enable()	__lsan_enable()
#else
#define lsan_disable()	do { } while (0)
#define lsan_enable()	do { } while (0)
#endif

#include "harness.h"
#include "tracemap.h"

#define TAG		"fmt"
#define PAYLOAD_MAX	8192
#define MAX_DIFFS	20
#define MAX_SYMS	64

/* Both sides load the formats and plugins alike, each its own copy: the sched plugin learns comms */
struct side {
	struct tep_handle *tep;
	struct tep_plugin_list *plugins;
};

static struct side ours, ref;
static struct tracemap_format *fmt;
static struct trace_seq seq;
static unsigned int diffs, compared, skipped_clamped, skipped_crash;

#ifdef TM_STORED_FORMATS
/* @path's contents, NUL-terminated, *@len its length; NULL on error */
static char *slurp(const char *path, size_t *len)
{
	char *buf = NULL;
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		buf = calloc(1, 1 << 16);
		n = buf ? fread(buf, 1, (1 << 16) - 1, f) : 0;
		fclose(f);
	}
	*len = n;
	return buf;
}

/*
 * The stored formats (TM_STORED_FORMATS/events/<system>/<event>/format) as
 * tracefs_local_events() reads a tracefs: the header page, then each format
 * through tep_parse_event() under its system's name.
 */
static struct tep_handle *stored_events(const char *dir)
{
	struct tep_handle *tep = tep_alloc();
	char path[1024];
	struct dirent *sd, *ed;
	DIR *sys, *evs;
	size_t len;
	char *buf;

	assert_non_null(tep);
	snprintf(path, sizeof(path), "%s/events/header_page", dir);
	buf = slurp(path, &len);
	if (!buf || !len)
		fail_msg("no %s: run the test from the top of the source tree", path);
	assert_int_equal(tep_parse_header_page(tep, buf, len, sizeof(long)), 0);
	free(buf);
	/* what tracefs_local_events() takes from the machine it runs on */
	tep_set_long_size(tep, sizeof(long));
	tep_set_page_size(tep, getpagesize());
	snprintf(path, sizeof(path), "%s/events", dir);
	sys = opendir(path);
	assert_non_null(sys);
	while ((sd = readdir(sys))) {
		if (sd->d_name[0] == '.' || sd->d_type != DT_DIR)
			continue;
		snprintf(path, sizeof(path), "%s/events/%s", dir, sd->d_name);
		evs = opendir(path);
		assert_non_null(evs);
		while ((ed = readdir(evs))) {
			if (ed->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/events/%s/%s/format", dir, sd->d_name,
				 ed->d_name);
			buf = slurp(path, &len);
			assert_non_null(buf);
			/* a format libtraceevent cannot parse stays, marked as failed */
			tep_parse_event(tep, buf, len, sd->d_name);
			free(buf);
		}
		closedir(evs);
	}
	closedir(sys);
	return tep;
}
#define load_events()	stored_events(TM_STORED_FORMATS)
#else
#define load_events()	tracefs_local_events(th_tracefs())
#endif

static void side_load(struct side *s)
{
	/* libtraceevent 1.7.1 leaks a few bytes parsing some formats: not ours */
	lsan_disable();
	s->tep = load_events();
	s->plugins = s->tep ? tep_load_plugins(s->tep) : NULL;
	lsan_enable();
	assert_non_null(s->tep);
}

static void side_free(struct side *s)
{
	if (!s->tep)
		return;
	tep_unload_plugins(s->plugins, s->tep);
	tep_free(s->tep);
	s->tep = NULL;
}

/* The kernel's pid limit: no task has a pid at or above it. */
static int pid_max(void)
{
	int max = 4 * 1024 * 1024;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "re");

	if (f) {
		if (fscanf(f, "%d", &max) != 1 || max <= 0)
			max = 4 * 1024 * 1024;
		fclose(f);
	}
	return max;
}

/*
 * Both sides start from the same task names. libtracefs reads
 * saved_cmdlines at the end of each side's load, and on a busy machine the
 * kernel's list changes between the two reads (with a compile beside it,
 * 734 of 8,107 recorded lines named a task on one side only): each name
 * one side has is given to the other, the reference's where they differ.
 * Returns how many pids had a name on one side only or two names.
 */
static int same_comms(void)
{
	int pid, max = pid_max(), fixed = 0;
	char name[64];
	bool o, r;

	for (pid = 1; pid < max; pid++) {
		o = tep_is_pid_registered(ours.tep, pid);
		r = tep_is_pid_registered(ref.tep, pid);
		if (!o && !r)
			continue;
		if (r) {
			snprintf(name, sizeof(name), "%s", tep_data_comm_from_pid(ref.tep, pid));
			if (o && !strcmp(name, tep_data_comm_from_pid(ours.tep, pid)))
				continue;
			assert_int_equal(tep_override_comm(ours.tep, name, pid), 0);
		} else {
			snprintf(name, sizeof(name), "%s", tep_data_comm_from_pid(ours.tep, pid));
			assert_int_equal(tep_override_comm(ref.tep, name, pid), 0);
		}
		fixed++;
	}
	return fixed;
}

static int setup(void **state)
{
	struct tracemap_format_opts o = { .sz = sizeof(o), .clock = "local" };
	int n;

	side_load(&ours);
	side_load(&ref);
	n = same_comms();
	if (n)
		printf("note: saved_cmdlines changed between the two loads: %d task names made the same\n", n);
	fmt = tracemap_format_new(ours.tep, &o);
	assert_non_null(fmt);
	trace_seq_init(&seq);
	return 0;
}

static int teardown(void **state)
{
	tracemap_format_free(fmt);
	fmt = NULL;
	trace_seq_destroy(&seq);
	side_free(&ours);
	side_free(&ref);
	return 0;
}

/* ---------------------------------------------------------- reference */

static sigjmp_buf crash_jmp;

static void on_crash(int sig)
{
	siglongjmp(crash_jmp, sig);
}

/*
 * Run fn(arg); false when it crashed. libtraceevent dies on some synthetic
 * payloads (a divisor of 0, a length that sends it outside the record).
 */
static bool guarded(void (*fn)(const struct tracemap_event *), const struct tracemap_event *ev,
		    bool may_crash)
{
	struct sigaction sa = { .sa_handler = on_crash }, old_segv, old_fpe, old_bus;
	volatile bool ok = true;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGFPE, &sa, &old_fpe);
	sigaction(SIGBUS, &sa, &old_bus);
	/* what a crash leaves allocated is not a leak of ours */
	if (may_crash)
		lsan_disable();
	if (sigsetjmp(crash_jmp, 1))
		ok = false;
	else
		fn(ev);
	if (may_crash)
		lsan_enable();
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGFPE, &old_fpe, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	return ok;
}

/* The line of trace-cmd report 3.1.6 through libtraceevent, into seq */
static void ref_line(const struct tracemap_event *ev)
{
	static const char spaces[] = "                    ";
	struct tep_record rec;
	struct tep_event *e;
	const char *name;
	int len;

	tracemap_event_to_record(ev, &rec);
	trace_seq_reset(&seq);
	e = tep_find_event_by_record(ref.tep, &rec);
	tep_print_event(ref.tep, &seq, &rec, "%16s-%-5d [%03d]", TEP_PRINT_COMM, TEP_PRINT_PID,
			TEP_PRINT_CPU);
	tep_print_event(ref.tep, &seq, &rec, " %6.1000d:", TEP_PRINT_TIME);
	name = e ? e->name : "(NULL)";
	trace_seq_printf(&seq, " %s: ", name);
	len = strlen(name);
	if (len < 20)
		trace_seq_printf(&seq, "%.*s", 20 - len, spaces);
	tep_print_event(ref.tep, &seq, &rec, "%s", TEP_PRINT_INFO);
	if (seq.len && seq.buffer[seq.len - 1] == '\n')
		seq.len--;
	trace_seq_putc(&seq, '\n');
	trace_seq_terminate(&seq);
}

static const char *our_line;
static int our_len;

static void format_line(const struct tracemap_event *ev)
{
	our_len = tracemap_format_line(fmt, ev, &our_line);
}

/* Format @ev both ways; print and count a difference. */
static void compare(const struct tracemap_event *ev, const char *what)
{
	struct tracemap_format_stats before, after;
	struct tep_event *e;
	const char *line;
	unsigned int type;
	char *mine;
	int n;

	type = *(const unsigned short *)ev->data;
	tracemap_format_stats(fmt, &before, sizeof(before));
	if (!guarded(format_line, ev, tracemap_format_fallback(fmt, type) != NULL)) {
		/* only libtraceevent may crash: on a type we left to it */
		if (!tracemap_format_fallback(fmt, type))
			fail_msg("tracemap crashed on type %u (%s)", type, what);
		skipped_crash++;
		return;
	}
	n = our_len;
	line = our_line;
	assert_true(n > 0);
	assert_int_equal(line[n - 1], '\n');
	tracemap_format_stats(fmt, &after, sizeof(after));
	/* a line may hold a NUL (libtraceevent's %c of 0): compare lengths and bytes */
	mine = malloc(n + 1);
	assert_non_null(mine);
	memcpy(mine, line, n + 1);
	if (!guarded(ref_line, ev, true)) {
		skipped_crash++;
	} else if (after.clamped != before.clamped) {
		/* we stayed inside the record where libtraceevent read past it */
		skipped_clamped++;
	} else {
		compared++;
		if ((unsigned int)n != seq.len || memcmp(mine, seq.buffer, n)) {
			e = tep_find_event(ours.tep, type);
			if (diffs++ < MAX_DIFFS)
				printf("DIFF %s:%s (%s, %s):\n  tracemap: %s  libtraceevent: %s",
				       e ? e->system : "?", e ? e->name : "?", what,
				       tracemap_format_fallback(fmt, e ? e->id : -1) ? : "compiled",
				       mine, seq.buffer);
		}
	}
	free(mine);
}

/* ---------------------------------------------------------- synthetic */

struct symset {
	struct tep_format_field *field;
	long long vals[MAX_SYMS];
	int n;
	bool flags;
};

struct symsets {
	struct symset s[8];
	int n;
};

static void collect_syms(struct tep_event *e, struct tep_print_arg *a, struct symsets *ss);

static void add_syms(struct tep_event *e, struct tep_print_arg *field,
		     struct tep_print_flag_sym *list, bool flags, struct symsets *ss)
{
	struct symset *s;

	while (field && field->type == TEP_PRINT_TYPE)
		field = field->typecast.item;
	if (!field || field->type != TEP_PRINT_FIELD || ss->n == 8)
		return;
	s = &ss->s[ss->n++];
	s->field = field->field.field ? : tep_find_any_field(e, field->field.name);
	s->flags = flags;
	s->n = 0;
	for (; list && s->n < MAX_SYMS; list = list->next)
		s->vals[s->n++] = strtoll(list->value, NULL, 0);
	if (!s->field)
		ss->n--;
}

/* The fields of every __print_symbolic()/__print_flags() and their values */
static void collect_syms(struct tep_event *e, struct tep_print_arg *a, struct symsets *ss)
{
	for (; a; a = a->next) {
		switch (a->type) {
		case TEP_PRINT_FLAGS:
			add_syms(e, a->flags.field, a->flags.flags, true, ss);
			break;
		case TEP_PRINT_SYMBOL:
			add_syms(e, a->symbol.field, a->symbol.symbols, false, ss);
			break;
		case TEP_PRINT_TYPE:
			collect_syms(e, a->typecast.item, ss);
			break;
		case TEP_PRINT_OP:
			collect_syms(e, a->op.left, ss);
			collect_syms(e, a->op.right, ss);
			break;
		case TEP_PRINT_FUNC:
			collect_syms(e, a->func.args, ss);
			break;
		default:
			break;
		}
	}
}

static unsigned long long rnd_state = 0x9e3779b97f4a7c15ULL;

static unsigned long long rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static void put_num(unsigned char *p, int size, unsigned long long v)
{
	memcpy(p, &v, size > 8 ? 8 : size);
}

enum variant { V_ZERO, V_ONES, V_ONE, V_SMIN, V_SMAX, V_RANDOM, V_NR };

/* A string for variant @v: empty, long, short or random printable text */
static void make_string(char *buf, size_t cap, int v)
{
	size_t n, i;

	switch (v) {
	case V_ZERO:
		n = 0;
		break;
	case V_ONES:
		n = 300;
		break;
	case V_ONE:
		n = 1;
		break;
	default:
		n = rnd() % 40;
		break;
	}
	if (n >= cap)
		n = cap - 1;
	for (i = 0; i < n; i++)
		buf[i] = v == V_ONES ? 'a' + i % 26 : 0x21 + rnd() % 94;
	buf[n] = '\0';
}

static bool is_char(const struct tep_format_field *fl)
{
	return strstr(fl->type, "char") != NULL;
}

/*
 * A payload of @e for variant @v; symbol variants (v >= V_NR) set each
 * symbolic field to its (v - V_NR)th value, or all flags at once. Returns
 * the payload size.
 */
static unsigned int make_payload(struct tep_event *e, unsigned char *buf, int v,
				 const struct symsets *ss, int pid)
{
	struct tep_format_field **fields, *fl;
	unsigned int end = 0, dyn, size, i, k;
	int base = v < V_NR ? v : V_RANDOM;
	char str[512];

	memset(buf, 0, PAYLOAD_MAX);
	fields = tep_event_fields(e);
	assert_non_null(fields);
	for (i = 0; fields[i]; i++)
		if ((unsigned int)(fields[i]->offset + fields[i]->size) > end)
			end = fields[i]->offset + fields[i]->size;
	dyn = (end + 3) & ~3u;
	size = dyn;
	for (i = 0; fields[i]; i++) {
		fl = fields[i];
		if (fl->flags & TEP_FIELD_IS_DYNAMIC) {
			unsigned int len, off = size, loc;

			if (is_char(fl)) {
				make_string(str, sizeof(str), base);
				len = strlen(str) + 1;
				memcpy(buf + off, str, len);
			} else {
				unsigned int el = fl->elementsize ? : 1;

				len = base == V_ZERO ? 0 : el * (1 + rnd() % 8);
				for (k = 0; k < len; k++)
					buf[off + k] = base == V_ONES ? 0xff : rnd();
			}
			size = (off + len + 3) & ~3u;
			loc = fl->flags & TEP_FIELD_IS_RELATIVE ?
			      off - (fl->offset + fl->size) : off;
			put_num(buf + fl->offset, fl->size, ((unsigned long long)len << 16) | loc);
			continue;
		}
		if (fl->size == 0) {
			/* char buf[]: the rest of the record */
			make_string(str, sizeof(str), base);
			memcpy(buf + fl->offset, str, strlen(str) + 1);
			if (fl->offset + strlen(str) + 1 > size)
				size = fl->offset + strlen(str) + 1;
			continue;
		}
		if ((fl->flags & TEP_FIELD_IS_ARRAY) && is_char(fl)) {
			make_string(str, sizeof(str), base);
			strncpy((char *)buf + fl->offset, str, fl->size);
			continue;
		}
		for (k = 0; k < (unsigned int)fl->size; k++) {
			unsigned char *p = buf + fl->offset + k;
			bool top = k == (unsigned int)fl->size - 1;

			switch (base) {
			case V_ZERO:
				*p = 0;
				break;
			case V_ONES:
				*p = 0xff;
				break;
			case V_ONE:
				*p = k == 0;
				break;
			case V_SMIN:
				*p = top ? 0x80 : 0;
				break;
			case V_SMAX:
				*p = top ? 0x7f : 0xff;
				break;
			default:
				*p = rnd();
				break;
			}
		}
	}
	if (v >= V_NR) {
		for (i = 0; i < (unsigned int)ss->n; i++) {
			const struct symset *s = &ss->s[i];
			long long val = 0;

			if (s->field->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC) ||
			    !s->n)
				continue;
			if (s->flags && (v - V_NR) == s->n)
				for (k = 0; k < (unsigned int)s->n; k++)
					val |= s->vals[k];
			else
				val = s->vals[(v - V_NR) % s->n];
			put_num(buf + s->field->offset, s->field->size, val);
		}
	}
	fl = tep_find_common_field(e, "common_type");
	put_num(buf + fl->offset, fl->size, e->id);
	fl = tep_find_common_field(e, "common_pid");
	put_num(buf + fl->offset, fl->size, pid);
	free(fields);
	return size;
}

static void test_every_format(void **state)
{
	static const int pids[] = { 0, 1, 4242, -1, 65535 };
	unsigned int nr_events = 0, nr_fallback = 0, i;
	struct tracemap_format_stats st;
	struct tep_event **events;
	long page = sysconf(_SC_PAGESIZE);
	/* a guard page right after the payloads: a runaway read crashes at once */
	unsigned char *map = mmap(NULL, PAYLOAD_MAX + page, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *buf = map;
	struct tracemap_event ev;
	char what[64];
	int v, nv, j;

	assert_true(map != MAP_FAILED);
	assert_int_equal(mprotect(map + PAYLOAD_MAX, page, PROT_NONE), 0);
	events = tep_list_events(ours.tep, TEP_EVENT_SORT_ID);
	assert_non_null(events);
	for (i = 0; events[i]; i++) {
		struct tep_event *e = events[i];
		struct symsets ss = { .n = 0 };
		const char *why;

		nr_events++;
		collect_syms(e, e->print_fmt.args, &ss);
		nv = V_NR;
		for (j = 0; j < ss.n; j++)
			if (V_NR + ss.s[j].n + 1 > nv)
				nv = V_NR + ss.s[j].n + 1;
		for (v = 0; v < nv + 3; v++) {
			memset(&ev, 0, sizeof(ev));
			ev.data = buf;
			ev.size = make_payload(e, buf, v, &ss, pids[v % 5]);
			ev.cpu = v % 3;
			ev.ts = v == V_ONES ? ~0ULL - 1000 : v * 1234567891ULL + 499;
			snprintf(what, sizeof(what), "synthetic payload %d", v);
			compare(&ev, what);
		}
		why = tracemap_format_fallback(fmt, e->id);
		if (why) {
			nr_fallback++;
			printf("fallback %s:%s: %s\n", e->system, e->name, why);
		}
	}
	tracemap_format_stats(fmt, &st, sizeof(st));
	printf("%u event formats: %u compiled, %u through libtraceevent; %u lines compared, "
	       "%u differ, %u not compared (clamped %u, libtraceevent crashed %u)\n",
	       nr_events, nr_events - nr_fallback, nr_fallback, compared, diffs,
	       skipped_clamped + skipped_crash, skipped_clamped, skipped_crash);

	munmap(map, PAYLOAD_MAX + page);
	/* every format of the kernel was looked at, and most are compiled */
	assert_true(nr_events > 100);
	assert_true(nr_fallback * 4 < nr_events);
	assert_true(compared > nr_events * V_NR);
	assert_int_equal(diffs, 0);
}

/* ---------------------------------------------------------- recorded */

static const char *const subsystems[] = {
	"sched", "irq", "timer", "syscalls", "workqueue", "block", "net", "ftrace/print",
};

#ifndef TM_STORED_FORMATS
/* Fork and exec, sleep, write and fsync a file, send UDP to ourselves */
static void workload(const char *inst)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char path[] = "/tmp/tracemap-fmt-XXXXXX", msg[600];
	socklen_t alen = sizeof(a);
	int i, fd, s, r, status;
	pid_t pid;

	for (i = 0; i < 3; i++) {
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		usleep(1000);
	}
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, path, sizeof(path)), sizeof(path));
	fsync(fd);
	close(fd);
	unlink(path);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	r = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(s >= 0 && r >= 0);
	assert_int_equal(bind(r, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(r, (struct sockaddr *)&a, &alen), 0);
	assert_int_equal(sendto(s, "x", 1, 0, (struct sockaddr *)&a, sizeof(a)), 1);
	close(s);
	close(r);
	/* markers: short, long, with a newline at the end */
	fd = th_marker_open(inst, 0);
	assert_true(fd >= 0);
	memset(msg, 'm', sizeof(msg));
	assert_int_equal(write(fd, "hello", 5), 5);
	assert_int_equal(write(fd, msg, 500), 500);
	assert_int_equal(write(fd, "line\n", 5), 5);
	close(fd);
	/* raw markers: an id and 0, 5 and 64 bytes */
	fd = th_marker_open(inst, 1);
	assert_true(fd >= 0);
	for (i = 0; i < 69; i++)
		msg[i] = i * 37;
	assert_int_equal(write(fd, msg, 4), 4);
	assert_int_equal(write(fd, msg, 9), 9);
	assert_int_equal(write(fd, msg, 68), 68);
	close(fd);
}

static void test_recorded(void **state)
{
	struct tracemap_stream_opts so = { .sz = sizeof(so), .mode = TRACEMAP_MODE_SNAPSHOT };
	unsigned int seen[sizeof(subsystems) / sizeof(subsystems[0])] = { 0 };
	const char *inst;
	struct tracemap_stream *st;
	struct tracemap_event ev;
	unsigned int n = 0, before = compared, i, markers = 0, raw = 0;
	char file[128];
	int r;

	/* tracing is off before the stream: consuming or not, it sees the same events */
	if (th_backend_case(state) == TH_READ) {
		so.mode = TRACEMAP_MODE_CONSUME;
		so.cpu_flags = th_cpu_flags();
	}
	inst = th_instance_create(TAG, 2048, 0);
	assert_non_null(inst);
	for (i = 0; i < sizeof(subsystems) / sizeof(subsystems[0]); i++) {
		snprintf(file, sizeof(file), "events/%s/enable", subsystems[i]);
		if (th_instance_write(inst, file, "1"))
			printf("note: cannot enable %s in this kernel\n", subsystems[i]);
	}
	workload(inst);
	assert_int_equal(th_instance_write(inst, "tracing_on", "0"), 0);
	st = tracemap_stream_open(inst, &so);
	assert_non_null(st);
	th_assert_stream_backend(st);
	while ((r = tracemap_stream_next_event(st, &ev, 0)) == 1 && n < 2000000) {
		struct tep_event *e = tep_find_event(ours.tep, *(const unsigned short *)ev.data);

		n++;
		for (i = 0; e && i < sizeof(subsystems) / sizeof(subsystems[0]); i++)
			if (!strncmp(subsystems[i], e->system, strlen(e->system)))
				seen[i]++;
		if (e && !strcmp(e->name, "print"))
			markers++;
		if (e && !strcmp(e->name, "raw_data"))
			raw++;
		compare(&ev, "recorded");
	}
	assert_int_equal(r, 0);
	tracemap_stream_close(st);
	th_instance_remove(inst);
	for (i = 0; i < sizeof(subsystems) / sizeof(subsystems[0]); i++)
		printf("recorded %-12s %u events\n", subsystems[i], seen[i]);
	printf("%u recorded events, %u compared, %u differ\n", n, compared - before, diffs);
	/* sched, syscalls and the markers always fire in the workload */
	assert_true(seen[0] > 0);
	assert_true(seen[3] > 0);
	assert_int_equal(markers, 3);
	assert_int_equal(raw, 3);
	assert_int_equal(diffs, 0);
}

#endif

/* ---------------------------------------------------------- API */

/* an event type that appears after the formatter started (id 0xfffe) */
static const char late_format[] =
	"name: late\nID: 65534\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:int value;\toffset:8;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"value=%d\", REC->value\n";

static void test_api(void **state)
{
	static unsigned char late[12] = { 0xfe, 0xff, 0, 0, 1, 0, 0, 0, 0xd6, 0xff, 0xff, 0xff };
	struct tracemap_format_opts o = { .sz = 4 };
	struct tracemap_event ev = { 0 };
	unsigned short type = 0xfffe;
	const char *line;

	errno = 0;
	assert_null(tracemap_format_new(NULL, NULL));
	assert_int_equal(errno, EINVAL);
	assert_null(tracemap_format_new(ours.tep, &o));
	assert_int_equal(errno, EINVAL);
	o.sz = sizeof(o);
	o.flags = 0x80;
	assert_null(tracemap_format_new(ours.tep, &o));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(tracemap_format_line(fmt, NULL, &line), -EINVAL);
	ev.data = &type;
	ev.size = 1;
	assert_int_equal(tracemap_format_line(fmt, &ev, &line), -EINVAL);
	/* an event type libtraceevent does not know: its own line */
	ev.size = 2;
	compare(&ev, "unknown type");
	assert_string_equal(tracemap_format_fallback(fmt, type), "unknown event type");
	/* ... until libtraceevent learns it: then it is compiled */
	assert_int_equal(tep_parse_event(ours.tep, late_format, strlen(late_format), "tmtest"), 0);
	assert_int_equal(tep_parse_event(ref.tep, late_format, strlen(late_format), "tmtest"), 0);
	ev.size = sizeof(late);
	ev.data = late;
	compare(&ev, "type parsed late");
	assert_null(tracemap_format_fallback(fmt, type));
	assert_int_equal(diffs, 0);
	tracemap_format_free(NULL);
}

/* @name's value in @buf, a field of sched_switch */
static void put_field(struct tep_event *e, unsigned char *buf, const char *name, long long v)
{
	struct tep_format_field *fl = tep_find_any_field(e, name);

	assert_non_null(fl);
	put_num(buf + fl->offset, fl->size, v);
}

/*
 * The formatter keeps a task's name between lines: a name the sched plugin
 * learns from a switch, and one the caller changes (with
 * tracemap_format_forget_names()), show on the very next line of that task.
 */
static void test_comms(void **state)
{
	static unsigned char own[12] = { 0xfe, 0xff, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0 };
	const int pid = 4194301;	/* above any pid this kernel hands out */
	struct tep_event *sw = tep_find_event_by_name(ours.tep, "sched", "sched_switch");
	struct tracemap_event ev = { .data = own, .size = sizeof(own), .ts = 5000000 };
	struct tracemap_event swev = { .ts = 6000000 };
	unsigned char swbuf[256] = { 0 };
	struct tep_format_field *fl;
	const char *line;

	assert_non_null(sw);
	/* the "late" type of test_api, written by the task */
	memcpy(own + 4, &pid, sizeof(pid));
	compare(&ev, "unknown task");
	assert_int_equal(tracemap_format_line(fmt, &ev, &line) > 0, 1);
	assert_non_null(strstr(line, "<...>-4194301 "));

	/* a switch to it teaches both sides its name */
	fl = tep_find_common_field(sw, "common_type");
	put_num(swbuf + fl->offset, fl->size, sw->id);
	put_field(sw, swbuf, "common_pid", 0);
	memcpy(swbuf + tep_find_any_field(sw, "next_comm")->offset, "tmcommtest", 11);
	memcpy(swbuf + tep_find_any_field(sw, "prev_comm")->offset, "swapper/1", 10);
	put_field(sw, swbuf, "prev_pid", 0);
	put_field(sw, swbuf, "next_pid", pid);
	put_field(sw, swbuf, "prev_prio", 120);
	put_field(sw, swbuf, "next_prio", 120);
	swev.data = swbuf;
	for (fl = sw->format.fields; fl; fl = fl->next)
		if ((unsigned int)(fl->offset + fl->size) > swev.size)
			swev.size = fl->offset + fl->size;
	compare(&swev, "switch naming the task");
	compare(&ev, "task named by a switch");
	assert_int_equal(tracemap_format_line(fmt, &ev, &line) > 0, 1);
	assert_non_null(strstr(line, "tmcommtest-4194301 "));

	/* the caller renames it in both: seen after tracemap_format_forget_names() */
	assert_int_equal(tep_override_comm(ours.tep, "tmrenamed", pid), 0);
	assert_int_equal(tep_override_comm(ref.tep, "tmrenamed", pid), 0);
	assert_int_equal(tracemap_format_forget_names(fmt), 0);
	compare(&ev, "task renamed by the caller");
	assert_int_equal(tracemap_format_line(fmt, &ev, &line) > 0, 1);
	assert_non_null(strstr(line, "tmrenamed-4194301 "));
	assert_int_equal(tracemap_format_forget_names(NULL), -EINVAL);
	assert_int_equal(diffs, 0);
}

/*
 * Records cut short (fuzz-format found both): the sched plugin's program
 * reads no field past the record (0, counted as clamped), and a record
 * shorter than its common fields reaches tep_print_event() zero-padded.
 * The -san build sees any read outside.
 */
static void test_short_records(void **state)
{
	struct tep_event *sw = tep_find_event_by_name(ours.tep, "sched", "sched_switch");
	struct tracemap_format_stats before, after;
	struct tracemap_event ev = { .ts = 8000000 };
	const char *line;
	unsigned char *rec;

	assert_non_null(sw);
	assert_null(tracemap_format_fallback(fmt, sw->id));
	rec = calloc(1, 12);
	assert_non_null(rec);
	memcpy(rec, &sw->id, 2);
	ev.data = rec;
	ev.size = 12;
	tracemap_format_stats(fmt, &before, sizeof(before));
	assert_true(tracemap_format_info(fmt, &ev, &line) > 0);
	tracemap_format_stats(fmt, &after, sizeof(after));
	assert_int_equal(after.clamped, before.clamped + 1);
	assert_non_null(strstr(line, ":0 [0] R ==> :0 [0]"));
	ev.size = 3;
	assert_true(tracemap_format_line(fmt, &ev, &line) > 0);
	assert_non_null(strstr(line, "[000]"));
	free(rec);
}

/* Free the formatter and sides a test made for itself; the group's are back */
static void own_sides_drop(struct tracemap_format *saved_fmt, const struct side *saved_ours,
			   const struct side *saved_ref)
{
	tracemap_format_free(fmt);
	side_free(&ours);
	side_free(&ref);
	fmt = saved_fmt;
	ours = *saved_ours;
	ref = *saved_ref;
}

/*
 * A handler of a plugin that is not libtraceevent's own sched_switch plugin,
 * from a file whose path still names it (here the kmem plugin, copied into
 * a directory "plugin_sched_switch.d"), is not compiled as the sched
 * plugin's: the line is whatever that handler prints.
 */
static void test_foreign_handler(void **state)
{
	char dir[] = "/tmp/tracemap-fmt-XXXXXX", sub[64], copy[128], cmd[512];
	struct tracemap_format *saved_fmt = fmt;
	struct side saved_ours = ours, saved_ref = ref;
	struct tep_event *kfree_ev, *sw;
	tep_event_handler_func handler;
	int (*loader)(struct tep_handle *);
	unsigned char buf[256] = { 0 };
	struct tracemap_event ev = { .data = buf, .ts = 7000000 };
	struct tep_format_field *fl;
	Dl_info info;
	void *dl;

	side_load(&ours);
	side_load(&ref);
	fmt = tracemap_format_new(ours.tep, NULL);
	assert_non_null(fmt);
	kfree_ev = tep_find_event_by_name(ours.tep, "kmem", "kfree");
	sw = tep_find_event_by_name(ours.tep, "sched", "sched_switch");
	assert_non_null(kfree_ev);
	assert_non_null(sw);
	/* the kmem plugin libtraceevent loaded, copied */
	if (!kfree_ev->handler || !dladdr((void *)kfree_ev->handler, &info)) {
		printf("SKIP: libtraceevent's kmem plugin is not installed\n");
		own_sides_drop(saved_fmt, &saved_ours, &saved_ref);
		skip();
	}
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/plugin_sched_switch.d", dir);
	snprintf(copy, sizeof(copy), "%s/plugin_kmem.so", sub);
	snprintf(cmd, sizeof(cmd), "mkdir %s && cp '%s' %s", sub, info.dli_fname, copy);
	assert_int_equal(system(cmd), 0);
	dl = dlopen(copy, RTLD_NOW | RTLD_LOCAL);
	/* the mapping stays: nothing is left in /tmp whatever fails below */
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	assert_non_null(dl);
	loader = (int (*)(struct tep_handle *))dlsym(dl, "tep_plugin_loader");
	assert_non_null(loader);

	/* the copy's kmem handlers, and its kfree handler for sched_switch too */
	assert_int_equal(loader(ours.tep), 0);
	assert_int_equal(loader(ref.tep), 0);
	handler = kfree_ev->handler;
	assert_non_null(handler);
	assert_int_equal(tep_register_event_handler(ours.tep, sw->id, "sched", "sched_switch",
						    handler, NULL), TEP_REGISTER_SUCCESS_OVERWRITE);
	assert_int_equal(tep_register_event_handler(ref.tep, sw->id, "sched", "sched_switch",
						    handler, NULL), TEP_REGISTER_SUCCESS_OVERWRITE);
	fl = tep_find_common_field(sw, "common_type");
	put_num(buf + fl->offset, fl->size, sw->id);
	memcpy(buf + tep_find_any_field(sw, "next_comm")->offset, "tmforeign", 10);
	for (fl = sw->format.fields; fl; fl = fl->next)
		if ((unsigned int)(fl->offset + fl->size) > ev.size)
			ev.size = fl->offset + fl->size;
	compare(&ev, "sched_switch through another plugin's handler");
	assert_string_equal(tracemap_format_fallback(fmt, sw->id), "plugin handler");
	assert_int_equal(diffs, 0);

	own_sides_drop(saved_fmt, &saved_ours, &saved_ref);
	dlclose(dl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_api),
		cmocka_unit_test(test_comms),
		cmocka_unit_test(test_every_format),
		cmocka_unit_test(test_foreign_handler),
		cmocka_unit_test(test_short_records),
#ifndef TM_STORED_FORMATS
		TH_BOTH(test_recorded, NULL, NULL),
#endif
	};

#ifndef TM_STORED_FORMATS
	/* the formats are tracefs': only the recorded events need a stream, of either backend */
	th_require_tracefs();
#endif
	return cmocka_run_group_tests(tests, setup, teardown);
}
