// SPDX-License-Identifier: GPL-2.0-only
/*
 * function_graph lines, kernel-free and differential: synthetic
 * ftrace:function, funcgraph_entry and funcgraph_exit records (the formats
 * stored from Linux 6.18 in tests/unit/formats) on two CPUs go into a
 * trace.dat through the library's one writer; `trace-cmd report` (3.1.6)
 * prints it, and tracemap's formatter (TRACEMAP_FORMAT_FGRAPH) must print
 * the same lines for the same records in the same order: leaves, nested
 * calls, exits with an overrun, an entry at the end of the data, two CPUs
 * interleaved, a task or function that does not match, an unknown address,
 * every duration marker and the widths of the duration column. Run from
 * the top of the source tree, as make check does.
 *
 * timeout: 120
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "sbuf-encode.h"
#include "tracemap-local.h"

#include <event-parse.h>

#define FORMATS		"tests/unit/formats/events"
#define SBS		4096
#define MAX_RECS	256
#define MAX_LINES	512
#define T0		5000000000000ULL	/* 5000 s */
#define KALLSYMS \
	"ffffffff81000000 T _stext\n" \
	"ffffffff81100000 T do_sys_openat2\n" \
	"ffffffff81100400 t getname_flags\n" \
	"ffffffff81100800 T kmem_cache_alloc\n" \
	"ffffffff81100c00 T should_failslab\n" \
	"ffffffff81101000 T do_filp_open\n" \
	"ffffffff81101400 t path_openat\n" \
	"ffffffff81101800 T schedule\n" \
	"ffffffff81101c00 T _raw_spin_lock\n" \
	"ffffffff81102000 T __x64_sys_getppid\n" \
	"ffffffff81102400 T do_syscall_64\n" \
	"ffffffff81102800 T _etext\n"

enum { K_OPEN = 0, K_GETNAME, K_ALLOC, K_FAILSLAB, K_FILP, K_PATH, K_SCHED, K_LOCK, K_PPID,
       K_SYSCALL };
#define FN(i)		(0xffffffff81100000ULL + (unsigned long long)(i) * 0x400)
#define K_UNKNOWN	0xffffffff80001234ULL	/* before _stext: no name */

enum kind { FUNC, ENT, EXT };

struct rec {
	int cpu;
	uint64_t ts;
	enum kind kind;
	int pid;
	uint64_t func;		/* FUNC: ip */
	uint64_t parent;	/* FUNC: parent_ip */
	unsigned int depth;
	unsigned int overrun;
	uint64_t dur;		/* EXT: rettime - calltime */
};

static struct rec recs[MAX_RECS];
static unsigned int nr_recs, nr_leaves;
static uint64_t now = T0;

static void add(int cpu, enum kind k, int pid, uint64_t func, unsigned int depth, uint64_t dur)
{
	assert_true(nr_recs < MAX_RECS);
	now += 1700;
	recs[nr_recs++] = (struct rec){ .cpu = cpu, .ts = now, .kind = k, .pid = pid,
					.func = func, .depth = depth, .dur = dur,
					.parent = FN(K_SYSCALL) + 0x21 };
}

/* A leaf: the entry, then its exit next */
static void leaf(int cpu, int pid, uint64_t func, unsigned int depth, uint64_t dur)
{
	add(cpu, ENT, pid, func, depth, 0);
	add(cpu, EXT, pid, func, depth, dur);
	nr_leaves++;
}

/* The records, in time order (each later than the one before) */
static void script(void)
{
	/* CPU 0, task 1234: a call tree with leaves of every marker */
	add(0, ENT, 1234, FN(K_SYSCALL), 0, 0);
	add(0, ENT, 1234, FN(K_OPEN), 1, 0);
	leaf(0, 1234, FN(K_GETNAME), 2, 523);			/* "  0.523 us" */
	leaf(0, 1234, FN(K_ALLOC), 2, 10000);			/* 10 us: no marker yet */
	leaf(0, 1234, FN(K_ALLOC), 2, 10001);			/* '+' */
	leaf(0, 1234, FN(K_ALLOC), 2, 100001);			/* '!' */
	leaf(0, 1234, FN(K_ALLOC), 2, 1000001);		/* '#' */
	leaf(0, 1234, FN(K_ALLOC), 2, 1000000001ULL);		/* '$', 7 digits: no ns */
	leaf(0, 1234, FN(K_ALLOC), 2, 999999999ULL);		/* '#', 6 digits */
	leaf(0, 1234, FN(K_ALLOC), 2, 0);
	leaf(0, 1234, FN(K_ALLOC), 2, ~0ULL);			/* trace-cmd's "no duration" */
	leaf(0, 1234, K_UNKNOWN, 2, 2200);			/* no name: the address */
	leaf(0, 1234, FN(K_GETNAME) + 0x17, 2, 300);		/* inside a function: its name */
	/* CPU 1 comes between an entry and its exit: not a leaf */
	add(0, ENT, 1234, FN(K_FILP), 2, 0);
	add(1, ENT, 4321, FN(K_PPID), 0, 0);
	add(0, ENT, 1234, FN(K_PATH), 3, 0);
	add(1, EXT, 4321, FN(K_PPID), 0, 812);
	leaf(1, 4321, FN(K_LOCK), 0, 90);
	add(0, EXT, 1234, FN(K_PATH), 3, 45000);
	/* an exit of another function, then of another task: not leaves */
	add(0, ENT, 1234, FN(K_SCHED), 3, 0);
	add(0, EXT, 1234, FN(K_LOCK), 3, 120);
	add(0, ENT, 1234, FN(K_LOCK), 3, 0);
	add(0, EXT, 99, FN(K_LOCK), 3, 130);
	/* the function tracer's events in between */
	add(0, FUNC, 1234, FN(K_FAILSLAB), 0, 0);
	add(0, ENT, 1234, FN(K_FAILSLAB), 3, 0);
	add(1, FUNC, 4321, FN(K_LOCK) + 8, 0, 0);
	add(0, EXT, 1234, FN(K_FAILSLAB), 3, 77);
	/* an exit whose graph stack overran */
	add(0, EXT, 1234, FN(K_FILP), 2, 700000);
	recs[nr_recs - 1].overrun = 3;
	add(0, EXT, 1234, FN(K_OPEN), 1, 12345678901ULL);	/* 8 digits of us */
	add(0, EXT, 1234, FN(K_SYSCALL), 0, 12345678901234ULL);
	/* deep, then an entry on each CPU at the end of the data */
	leaf(1, 4321, FN(K_SCHED), 9, 4);
	add(0, ENT, 1234, FN(K_PPID), 0, 0);
	add(1, ENT, 4321, FN(K_OPEN), 1, 0);
}

struct fmts {
	struct tep_handle *tep;
	struct tep_plugin_list *plugins;
	struct tep_event *ev[3];	/* by enum kind */
};

static char *read_text(const char *path, size_t *len)
{
	char *buf = malloc(65536);
	ssize_t n;
	int fd;

	assert_non_null(buf);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		fail_msg("%s: %s (run from the top of the source tree)", path, strerror(errno));
	n = read(fd, buf, 65535);
	close(fd);
	assert_true(n > 0);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* @text into @dir/@name, making the directories on the way */
static void put_file(const char *dir, const char *name, const char *text, size_t len)
{
	char path[4096], *p;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (p = path + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
}

static const char *const names[3] = { "function", "funcgraph_entry", "funcgraph_exit" };

/* The tracefs-like directory the writer reads, and a tep of the same formats */
static void make_formats(const char *dir, struct fmts *fm)
{
	static const char *const heads[] = { "header_page", "header_event" };
	char path[512], name[128];
	unsigned int i;
	size_t len;
	char *text;

	fm->tep = tep_alloc();
	assert_non_null(fm->tep);
	tep_set_long_size(fm->tep, 8);
	tep_set_page_size(fm->tep, SBS);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), FORMATS "/%s", heads[i]);
		text = read_text(path, &len);
		snprintf(name, sizeof(name), "events/%s", heads[i]);
		put_file(dir, name, text, len);
		free(text);
	}
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), FORMATS "/ftrace/%s/format", names[i]);
		text = read_text(path, &len);
		snprintf(name, sizeof(name), "events/ftrace/%s/format", names[i]);
		put_file(dir, name, text, len);
		assert_int_equal(tep_parse_event(fm->tep, text, len, "ftrace"), 0);
		free(text);
		fm->ev[i] = tep_find_event_by_name(fm->tep, "ftrace", names[i]);
		assert_non_null(fm->ev[i]);
	}
	put_file(dir, "kallsyms", KALLSYMS, strlen(KALLSYMS));
	assert_int_equal(tep_parse_kallsyms(fm->tep, KALLSYMS), 0);
	assert_int_equal(tep_register_comm(fm->tep, "worker", 1234), 0);
	assert_int_equal(tep_register_comm(fm->tep, "sh", 4321), 0);
	/* the function plugin prints ftrace:function, as for trace-cmd and the tool */
	fm->plugins = tep_load_plugins(fm->tep);
}

static void set(struct tep_event *ev, unsigned char *p, const char *field, uint64_t v)
{
	struct tep_format_field *f = tep_find_any_field(ev, field);

	assert_non_null(f);
	assert_true(f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8);
	memcpy(p + f->offset, &v, f->size);	/* little endian, as this machine */
}

/* The payload of @r as the kernel writes it; returns its length */
static unsigned int payload(const struct fmts *fm, const struct rec *r, unsigned char *p)
{
	struct tep_event *ev = fm->ev[r->kind];
	struct tep_format_field *f;
	unsigned int len = 0;

	for (f = ev->format.common_fields; f; f = f->next)
		if (f->offset + f->size > (int)len)
			len = f->offset + f->size;
	for (f = ev->format.fields; f; f = f->next)
		if (f->offset + f->size > (int)len)
			len = f->offset + f->size;
	memset(p, 0, 64);
	set(ev, p, "common_type", ev->id);
	set(ev, p, "common_pid", r->pid);
	switch (r->kind) {
	case FUNC:
		set(ev, p, "ip", r->func);
		set(ev, p, "parent_ip", r->parent);
		break;
	case ENT:
		set(ev, p, "func", r->func);
		set(ev, p, "depth", r->depth);
		break;
	case EXT:
		set(ev, p, "func", r->func);
		set(ev, p, "depth", r->depth);
		set(ev, p, "overrun", r->overrun);
		/* the exit's stamps are the kernel's, not the record's time */
		set(ev, p, "calltime", r->ts - 1000000000ULL);
		set(ev, p, "rettime", r->ts - 1000000000ULL + r->dur);
		break;
	}
	return len;
}

/* @text, split into lines (in place) after the line starting with @after (NULL: all) */
static unsigned int split(char *text, const char *after, char **lines)
{
	unsigned int n = 0;
	char *p = text, *nl;
	bool on = !after;

	for (; *p; p = nl + 1) {
		nl = strchrnul(p, '\n');
		if (on) {
			assert_true(n < MAX_LINES);
			lines[n++] = p;
		} else if (!strncmp(p, after, strlen(after))) {
			on = true;
		}
		if (!*nl)
			break;
		*nl = '\0';
	}
	return n;
}

static char *run_report(const char *path)
{
	char cmd[4200], *out = calloc(1, 1 << 20);
	size_t n = 0, r;
	FILE *f;

	assert_non_null(out);
	snprintf(cmd, sizeof(cmd), "trace-cmd report -i %s 2>&1", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while ((r = fread(out + n, 1, (1 << 20) - 1 - n, f)) > 0)
		n += r;
	assert_int_equal(pclose(f), 0);
	return out;
}

static void test_report_lines(void **state)
{
	static unsigned char pages[2][8][SBS];
	const unsigned char *pp[2][8];
	char dir[] = "/tmp/tm-test-fgraph.XXXXXX", ksyms[128], path[128], cmd[256];
	struct tracemap_format_opts fo = { .sz = sizeof(fo), .flags = TRACEMAP_FORMAT_FGRAPH,
					   .clock = "local" };
	struct tm_tracedat_cpu cpus[2];
	struct tracemap_format *f;
	char *want[MAX_LINES], *got[MAX_LINES], *report, *mine;
	unsigned int nw, ng, i, np[2] = { 0, 0 }, diffs = 0;
	size_t mlen = 0, mcap = 1 << 20;
	struct sbe e[2];
	struct fmts fm;
	struct tm_tracedat t;
	const char *line;
	unsigned char p[64];
	int fd, n, c;

	(void)state;
	if (system("command -v trace-cmd > /dev/null")) {
		printf("SKIP: trace-cmd is not installed (make deps)\n");
		skip();
	}
	script();
	assert_non_null(mkdtemp(dir));
	make_formats(dir, &fm);

	/* the records into sub-buffers, a new one when one is full */
	for (c = 0; c < 2; c++)
		assert_int_equal(sbe_init(&e[c], pages[c][0], SBS, T0), 0);
	for (i = 0; i < nr_recs; i++) {
		unsigned int len = payload(&fm, &recs[i], p);

		c = recs[i].cpu;
		if (sbe_event(&e[c], recs[i].ts, p, len, 0) >= 0)
			continue;
		sbe_finish(&e[c], 0);
		sbe_release(&e[c]);
		assert_true(++np[c] < 8);
		assert_int_equal(sbe_init(&e[c], pages[c][np[c]], SBS, recs[i].ts), 0);
		assert_true(sbe_event(&e[c], recs[i].ts, p, len, 0) >= 0);
	}
	for (c = 0; c < 2; c++) {
		sbe_finish(&e[c], 0);
		sbe_release(&e[c]);
		for (i = 0; i <= np[c]; i++)
			pp[c][i] = pages[c][i];
		cpus[c] = (struct tm_tracedat_cpu){ .pages = pp[c], .nr_pages = np[c] + 1,
						    .cpu = c };
	}
	snprintf(ksyms, sizeof(ksyms), "%s/kallsyms", dir);
	t = (struct tm_tracedat){ .tracefs = dir, .clock = "local", .cmdlines =
				  "1234 worker\n4321 sh\n", .kallsyms = ksyms,
				  .page_size = SBS, .cpus = cpus, .nr = 2 };
	t.cmdlines_len = strlen(t.cmdlines);
	snprintf(path, sizeof(path), "%s/trace.dat", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(tm_tracedat_write(fd, &t), 0);
	close(fd);

	/* tracemap: the same records, in the order an ordered stream gives them */
	f = tracemap_format_new(fm.tep, &fo);

	assert_non_null(f);
	mine = malloc(mcap);
	assert_non_null(mine);
	for (i = 0; i <= nr_recs; i++) {
		if (i < nr_recs) {
			struct tracemap_event ev = { .ts = recs[i].ts, .data = p, .cpu = recs[i].cpu };

			ev.size = (payload(&fm, &recs[i], p) + 3) & ~3u;
			n = tracemap_format_line(f, &ev, &line);
			/* the copy of a held entry must not lean on the caller's buffer */
			memset(p, 0xa5, sizeof(p));
		} else {
			n = tracemap_format_flush(f, &line);
		}
		assert_true(n >= 0 && mlen + n < mcap);
		memcpy(mine + mlen, line, n);
		mlen += n;
	}
	mine[mlen] = '\0';
	assert_int_equal(tracemap_format_flush(f, &line), 0);
	tracemap_format_free(f);

	report = run_report(path);
	nw = split(report, "cpus=", want);
	ng = split(mine, NULL, got);
	for (i = 0; i < nw || i < ng; i++) {
		const char *w = i < nw ? want[i] : "(none)", *g = i < ng ? got[i] : "(none)";

		if (strcmp(w, g)) {
			printf("line %u differs:\n  trace-cmd report: '%s'\n  tracemap:         '%s'\n",
			       i + 1, w, g);
			diffs++;
		} else {
			printf("  %s\n", g);
		}
	}
	printf("%u records, %u lines of trace-cmd report, %u of tracemap, %u differ\n",
	       nr_recs, nw, ng, diffs);
	/* each leaf is one line, every other record one */
	assert_int_equal(nw, nr_recs - nr_leaves);
	assert_int_equal(diffs, 0);

	free(report);
	free(mine);
	tep_unload_plugins(fm.plugins, fm.tep);
	tep_free(fm.tep);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
