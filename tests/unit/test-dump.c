// SPDX-License-Identifier: GPL-2.0-only
/*
 * A dump over a synthetic mapping whose writer recycles one sub-buffer
 * while it is copied, every time: that page must be dropped, never written
 * torn, and the file must say that events were lost where it was.
 *
 * The tear is made deterministic with page protections: the sub-buffers are
 * 8 KiB, so a sub-buffer's header and the second half of its data lie in
 * different memory pages. The copy reaching the second half faults; the
 * handler then "recycles" the page (a new time stamp, as the kernel's
 * writer leaves it) and lets the copy go on; the re-validation that reads
 * the header next faults too and re-arms the trap. So every copy of that
 * sub-buffer sees a changed header, exactly as a copy overtaken by the
 * writer does, through the code tracemap_dump_take() uses (the snapshot
 * reader, its pages, the dump's accounting) and the one trace.dat writer.
 *
 * The file is written against a small tracefs-like directory made here
 * (header formats and the ftrace print event as Linux 6.18 gives them), so
 * no kernel is needed; trace-cmd report (trace-cmd 3.1.6) reads it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "sbuf-encode.h"
#include "cpu-local.h"

#define SBS		8192
#define NR_SUBBUFS	4
#define TORN		2		/* the sub-buffer the writer recycles */
#define T0		7000000000ULL
#define PRINT_ID	5
#define PAYLOAD		28		/* common fields, ip, "seq NNNNNN\0" */

static struct {
	unsigned char *hdr;		/* the torn sub-buffer's first memory page */
	unsigned char *data;		/* its second: the rest of its data */
	unsigned int recycled;
} tear;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	unsigned char *a = si->si_addr;
	uint64_t ts;

	(void)uc;
	if (a >= tear.data && a < tear.data + 4096) {
		/* the copy reached the second half: the writer recycles the page */
		mprotect(tear.hdr, 4096, PROT_READ | PROT_WRITE);
		memcpy(&ts, tear.hdr, sizeof(ts));
		ts += 1000;
		memcpy(tear.hdr, &ts, sizeof(ts));
		tear.recycled++;
		mprotect(tear.hdr, 4096, PROT_NONE);
		mprotect(tear.data, 4096, PROT_READ);
	} else if (a >= tear.hdr && a < tear.hdr + 4096) {
		/* the header is read again: re-arm for the next copy */
		mprotect(tear.hdr, 4096, PROT_READ);
		mprotect(tear.data, 4096, PROT_NONE);
	} else {
		signal(sig, SIG_DFL);	/* a real fault: crash on return */
	}
}

/* @text into @dir/@name, making the directories on the way. */
static void put_file(const char *dir, const char *name, const char *text)
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
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void make_tracefs(const char *dir)
{
	put_file(dir, "events/header_page",
		 "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		 "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
		 "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
		 "\tfield: char data;\toffset:16;\tsize:8176;\tsigned:0;\n");
	put_file(dir, "events/header_event",
		 "# compressed entry header\n"
		 "\ttype_len    :    5 bits\n"
		 "\ttime_delta  :   27 bits\n"
		 "\tarray       :   32 bits\n\n"
		 "\tpadding     : type == 29\n"
		 "\ttime_extend : type == 30\n"
		 "\ttime_stamp : type == 31\n"
		 "\tdata max type_len  == 28\n");
	put_file(dir, "events/ftrace/print/format",
		 "name: print\nID: 5\nformat:\n"
		 "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		 "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		 "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		 "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		 "\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
		 "\tfield:char buf[];\toffset:16;\tsize:0;\tsigned:0;\n\n"
		 "print fmt: \"%ps: %s\", (void *)REC->ip, REC->buf\n");
	put_file(dir, "events/ftrace/print/id", "5\n");
}

/*
 * Print events "seq N" from *@seq on into the sub-buffer at @sb, 10 us apart
 * from @page_ts, at most @max (0: as many as fit), then with @pad the
 * end-of-page padding the kernel leaves when the next event does not fit.
 * The same @page_ts and *@seq give the same first records: a page that grew.
 * Returns the count; the size of the data in *@commit.
 */
static unsigned int put_events(unsigned char *sb, uint64_t page_ts, unsigned int *seq,
			       unsigned int max, bool pad, unsigned int *commit)
{
	unsigned char p[PAYLOAD];
	unsigned int n = 0;
	struct sbe e;

	assert_int_equal(sbe_init(&e, sb, SBS, page_ts), 0);
	while (!max || n < max) {
		memset(p, 0, sizeof(p));
		p[0] = PRINT_ID;
		memcpy(p + 4, &(int32_t){ 4242 }, 4);
		snprintf((char *)p + 16, sizeof(p) - 16, "seq %06u", *seq);
		if (sbe_event(&e, page_ts + n * 10000, p, sizeof(p), 0) < 0)
			break;
		(*seq)++;
		n++;
	}
	if (pad)
		assert_int_equal(sbe_end_page(&e), 0);
	sbe_finish(&e, 0);
	*commit = e.commit;
	sbe_release(&e);
	return n;
}

/* A sub-buffer full of print events "seq N" from *seq on, 10 us apart. */
static unsigned int fill(unsigned char *sb, uint64_t page_ts, unsigned int *seq)
{
	unsigned int n, commit;

	n = put_events(sb, page_ts, seq, 0, false, &commit);
	/* the data must reach the second memory page for the trap to work */
	assert_true(commit > 4096);
	return n;
}

/*
 * A synthetic mapping of @n sub-buffers: the meta page, then @n sub-buffers
 * full of print events "seq N" from *@seq on (the first event of each in
 * @first, their counts in @count, when not NULL). The reader page is
 * sub-buffer 0 with nothing handed out: every page is in a dump.
 */
static unsigned char *make_mapping(unsigned int n, unsigned int *seq, unsigned int *first,
				   unsigned int *count)
{
	struct trace_buffer_meta *meta;
	unsigned char *map;
	unsigned int i, got;

	map = mmap(NULL, SBS + (size_t)n * SBS, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(map != MAP_FAILED);
	meta = (struct trace_buffer_meta *)map;
	meta->meta_page_size = SBS;
	meta->meta_struct_len = sizeof(*meta);
	meta->subbuf_size = SBS;
	meta->nr_subbufs = n;
	meta->reader.id = 0;
	meta->reader.read = 0;
	for (i = 0; i < n; i++) {
		if (first)
			first[i] = *seq;
		/* the time of each event follows from its number, as a writer's would */
		got = fill(map + SBS + i * SBS, T0 + (uint64_t)*seq * 10000, seq);
		if (count)
			count[i] = got;
	}
	return map;
}

/*
 * Write @d (freed then) as @dir/trace.dat and start `trace-cmd report` on it;
 * NULL when trace-cmd is not installed (the file is then not read back).
 */
static FILE *write_and_report(struct tracemap_dump *d, const char *dir)
{
	char path[4200], cmd[8600];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/trace.dat", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(tracemap_dump_write(d, fd), 0);
	close(fd);
	tracemap_dump_free(d);

	if (system("command -v trace-cmd > /dev/null")) {
		printf("trace-cmd is not installed: the file is not read back (make deps)\n");
		return NULL;
	}
	snprintf(cmd, sizeof(cmd), "trace-cmd report %s 2>&1", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	return f;
}

static void test_torn_page_dropped(void **state)
{
	unsigned int first[NR_SUBBUFS], count[NR_SUBBUFS], seq = 0, got = 0, marks = 0;
	char dir[] = "/tmp/tm-test-dump.XXXXXX", cmd[8600], line[512];
	struct tracemap_dump_cpu_stats st;
	struct tracemap_cpu *c;
	struct tracemap_dump *d;
	struct sigaction sa = { 0 }, old;
	unsigned char *map;
	bool mark_before = false;
	unsigned int next = 0;
	FILE *f;

	(void)state;
	map = make_mapping(NR_SUBBUFS, &seq, first, count);

	tear.hdr = map + SBS + TORN * SBS;
	tear.data = tear.hdr + 4096;
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	assert_int_equal(sigaction(SIGSEGV, &sa, &old), 0);
	assert_int_equal(mprotect(map, SBS + NR_SUBBUFS * SBS, PROT_READ), 0);
	assert_int_equal(mprotect(tear.data, 4096, PROT_NONE), 0);

	c = tm_cpu_open_memory(0, TRACEMAP_MODE_SNAPSHOT, map, map + SBS, SBS, NR_SUBBUFS, NULL,
			       NULL);
	assert_non_null(c);
	assert_non_null(mkdtemp(dir));
	make_tracefs(dir);
	d = tm_dump_from_readers(&c, 1, &(struct tm_dump_src){ .tracefs = dir });
	assert_non_null(d);
	mprotect(map, SBS + NR_SUBBUFS * SBS, PROT_READ);
	sigaction(SIGSEGV, &old, NULL);
	/* every copy of it was overtaken: 4 tries in each of the 16 passes */
	assert_true(tear.recycled >= 16);

	/* the torn page's events are gone, every other one is there once */
	assert_int_equal(tracemap_dump_stats(d, -1, &st, sizeof(st)), 0);
	assert_int_equal(st.events, count[0] + count[1] + count[3]);
	assert_true(st.lost_gaps >= 1);

	f = write_and_report(d, dir);
	if (!f)
		goto out;
	while (fgets(line, sizeof(line), f)) {
		char *s = strstr(line, "seq ");
		unsigned int n;

		if (strstr(line, "EVENTS DROPPED")) {
			marks++;
			mark_before = true;
			continue;
		}
		if (!s || sscanf(s, "seq %u", &n) != 1)
			continue;
		if (next == first[TORN])
			next = first[TORN + 1];
		/* in order, exactly once, nothing of the torn page */
		if (n != next) {
			pclose(f);
			fail_msg("trace-cmd report: seq %u where %u was expected", n, next);
		}
		/* the drop is marked right where the torn page's events are missing */
		if (n == first[TORN + 1] && !mark_before) {
			pclose(f);
			fail_msg("trace-cmd report: no EVENTS DROPPED before seq %u", n);
		}
		mark_before = false;
		next++;
		got++;
	}
	assert_int_equal(pclose(f) & 0xff, 0);
	assert_int_equal(got, count[0] + count[1] + count[3]);
	assert_true(marks >= 1);
out:
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	munmap(map, SBS + NR_SUBBUFS * SBS);
}

/*
 * set_event names an event whose format is gone by the time the file is
 * written (a kprobe removed after the copy), and lines that are no event
 * names at all: the file leaves them out and holds every record (found by
 * fuzz-tracedat: the whole write failed with ENOENT).
 */
static void test_enabled_event_gone(void **state)
{
	char dir[] = "/tmp/tm-test-dump.XXXXXX", cmd[8600], line[512];
	struct trace_buffer_meta *meta;
	struct tracemap_cpu *c;
	struct tracemap_dump *d;
	unsigned char *map;
	unsigned int seq = 0, n, got = 0;
	FILE *f;

	(void)state;
	map = calloc(1, SBS + 2 * SBS);
	assert_non_null(map);
	meta = (struct trace_buffer_meta *)map;
	meta->meta_page_size = SBS;
	meta->meta_struct_len = sizeof(*meta);
	meta->subbuf_size = SBS;
	meta->nr_subbufs = 2;
	/* the reader page is the empty sub-buffer 1 */
	meta->reader.id = 1;
	n = fill(map + SBS, T0, &seq);

	c = tm_cpu_open_memory(0, TRACEMAP_MODE_SNAPSHOT, map, map + SBS, SBS, 2, NULL, NULL);
	assert_non_null(c);
	assert_non_null(mkdtemp(dir));
	make_tracefs(dir);
	d = tm_dump_from_readers(&c, 1, &(struct tm_dump_src){
		.tracefs = dir, .events = "ftrace:print\nkprobes:gone\n../..:x\nnoline" });
	assert_non_null(d);
	f = write_and_report(d, dir);
	if (!f)
		goto out;
	while (fgets(line, sizeof(line), f))
		got += !!strstr(line, "seq ");
	assert_int_equal(pclose(f) & 0xff, 0);
	assert_int_equal(got, n);
out:
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	free(map);
}

/* A dump of @n full sub-buffers of a synthetic mapping, written against @dir. */
static struct tracemap_dump *synthetic_dump(const char *dir, unsigned int n, unsigned int *seq)
{
	unsigned char *map = make_mapping(n, seq, NULL, NULL);
	struct tracemap_dump *d;
	struct tracemap_cpu *c;

	c = tm_cpu_open_memory(0, TRACEMAP_MODE_SNAPSHOT, map, map + SBS, SBS, n, NULL, NULL);
	assert_non_null(c);
	d = tm_dump_from_readers(&c, 1, &(struct tm_dump_src){ .tracefs = dir });	/* it holds c now */
	assert_non_null(d);
	munmap(map, SBS + (size_t)n * SBS);
	return d;
}

/* The whole content of @fd, malloc'ed; its length in *@len. */
static unsigned char *file_bytes(int fd, size_t *len)
{
	struct stat st;
	unsigned char *p;

	assert_int_equal(fstat(fd, &st), 0);
	p = malloc(st.st_size + 1);
	assert_non_null(p);
	assert_int_equal(pread(fd, p, st.st_size, 0), st.st_size);
	*len = st.st_size;
	return p;
}

/*
 * @got holds the trace @want holds: the same bytes up to the CPU table of
 * the flyrecord section, the same number of pages of each CPU, with the
 * same bytes, wherever the table puts them, and the same trace clock after
 * the table. A rewrite places the pages of its CPUs as it sees fit.
 */
static void same_trace(const unsigned char *got, size_t got_len, const unsigned char *want,
		       size_t len)
{
	const unsigned char *opt, *fly;
	uint64_t go, gs, wo, ws;
	uint32_t nr_cpus, i;
	size_t table;

	opt = memmem(want, len, "options  ", 10);
	fly = memmem(want, len, "flyrecord", 10);
	assert_true(opt && fly && opt - want >= 4);
	memcpy(&nr_cpus, opt - 4, sizeof(nr_cpus));
	table = fly - want + 10;
	assert_true(table + nr_cpus * 16 <= got_len && table + nr_cpus * 16 <= len);
	assert_memory_equal(got, want, table);
	for (i = 0; i < nr_cpus; i++) {
		memcpy(&go, got + table + i * 16, 8);
		memcpy(&gs, got + table + i * 16 + 8, 8);
		memcpy(&wo, want + table + i * 16, 8);
		memcpy(&ws, want + table + i * 16 + 8, 8);
		assert_int_equal(gs, ws);
		assert_true(go + gs <= got_len && wo + ws <= len);
		assert_memory_equal(got + go, want + wo, ws);
	}
	/* the clock: its length, then the string */
	memcpy(&ws, want + table + nr_cpus * 16, 8);
	assert_true(table + nr_cpus * 16 + 8 + ws <= got_len);
	assert_memory_equal(got + table + nr_cpus * 16, want + table + nr_cpus * 16, 8 + ws);
}

/* Where the file @fd holds the pages of CPU 0 (a file of one buffer) */
static uint64_t cpu0_pages_at(int fd)
{
	const unsigned char *fly;
	unsigned char *p;
	uint64_t off;
	size_t len;

	p = file_bytes(fd, &len);
	fly = memmem(p, len, "flyrecord", 10);
	assert_non_null(fly);
	memcpy(&off, fly + 10, sizeof(off));
	free(p);
	return off;
}

/* tracemap_dump_rewrite() of @d leaves @fd holding the trace @want holds. */
static void rewrite_gives(struct tracemap_dump *d, int fd, const unsigned char *want, size_t len)
{
	unsigned char *got;
	size_t n;

	assert_int_equal(tracemap_dump_rewrite(d, fd), 0);
	got = file_bytes(fd, &n);
	same_trace(got, n, want, len);
	free(got);
}

/*
 * A rewrite gives the trace a write into an empty file gives, whether the
 * file held a larger or a smaller image before, whether its kernel part is
 * skipped (the file as the last rewrite left it) or written (the file was
 * changed since: its modification time differs, or its size).
 */
static void test_rewrite_equals_write(void **state)
{
	char dir[] = "/tmp/tm-test-rewrite.XXXXXX", cmd[4200];
	unsigned char *big, *small, junk[64];
	size_t big_len, small_len;
	struct tracemap_dump *a, *b;
	struct timespec ts[2] = { { 0, 0 }, { 0, 0 } };
	unsigned int seq = 0;
	int fa, fb, fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	make_tracefs(dir);
	a = synthetic_dump(dir, 4, &seq);
	b = synthetic_dump(dir, 2, &seq);

	fa = memfd_create("tm-test-a", MFD_CLOEXEC);
	fb = memfd_create("tm-test-b", MFD_CLOEXEC);
	fd = memfd_create("tm-test-rewrite", MFD_CLOEXEC);
	assert_true(fa >= 0 && fb >= 0 && fd >= 0);
	assert_int_equal(tracemap_dump_write(a, fa), 0);
	assert_int_equal(tracemap_dump_write(b, fb), 0);
	big = file_bytes(fa, &big_len);
	small = file_bytes(fb, &small_len);
	assert_true(big_len > small_len);

	rewrite_gives(b, fd, small, small_len);		/* into an empty file */
	rewrite_gives(a, fd, big, big_len);		/* over a smaller image */
	rewrite_gives(a, fd, big, big_len);		/* its own last image: part skipped */
	rewrite_gives(b, fd, small, small_len);		/* over a larger image */

	/* changed by someone else, same size: the modification time tells */
	memset(junk, 0xa5, sizeof(junk));
	assert_int_equal(pwrite(fd, junk, sizeof(junk), 100), (ssize_t)sizeof(junk));
	assert_int_equal(futimens(fd, ts), 0);
	rewrite_gives(b, fd, small, small_len);
	/* and longer */
	assert_int_equal(pwrite(fd, junk, sizeof(junk), 100), (ssize_t)sizeof(junk));
	assert_int_equal(pwrite(fd, junk, 1, small_len), 1);
	rewrite_gives(b, fd, small, small_len);

	/* not a regular file */
	assert_int_equal(tracemap_dump_rewrite(b, -1), -EINVAL);
	{
		int p[2];

		assert_int_equal(pipe(p), 0);
		assert_int_equal(tracemap_dump_rewrite(b, p[1]), -EINVAL);
		assert_int_equal(errno, EINVAL);
		close(p[0]);
		close(p[1]);
	}

	free(big);
	free(small);
	close(fa);
	close(fb);
	close(fd);
	tracemap_dump_free(a);
	tracemap_dump_free(b);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* Byte @off of @fd becomes @val, and the file's times are put back. */
static void change_unseen(int fd, off_t off, unsigned char val)
{
	struct timespec ts[2];
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(pwrite(fd, &val, 1, off), 1);
	ts[0] = st.st_atim;
	ts[1] = st.st_mtim;
	assert_int_equal(futimens(fd, ts), 0);
}

/*
 * A view writes its next image into a second file while the first is still
 * read, then back into the first: the kernel part of each file is skipped
 * while the file is as its own last rewrite left it. Seen through a byte of
 * the kernel part changed behind the library's back, with the modification
 * time put back: a skipped part keeps the change, a written one does not.
 */
static void test_rewrite_two_files(void **state)
{
	char dir[] = "/tmp/tm-test-rewrite2.XXXXXX", cmd[4200];
	unsigned char *want, *got, junk = 0xa5;
	struct tracemap_dump *a;
	int fx, fy, fz, ref, i;
	unsigned int seq = 0;
	size_t len, n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	make_tracefs(dir);
	a = synthetic_dump(dir, 2, &seq);
	ref = memfd_create("tm-test-ref", MFD_CLOEXEC);
	fx = memfd_create("tm-test-x", MFD_CLOEXEC);
	fy = memfd_create("tm-test-y", MFD_CLOEXEC);
	fz = memfd_create("tm-test-z", MFD_CLOEXEC);
	assert_true(ref >= 0 && fx >= 0 && fy >= 0 && fz >= 0);
	assert_int_equal(tracemap_dump_write(a, ref), 0);
	want = file_bytes(ref, &len);
	/* offset 100: inside the header page's format, the kernel part */
	assert_true(len > 100 && want[100] != junk);

	rewrite_gives(a, fx, want, len);
	rewrite_gives(a, fy, want, len);
	rewrite_gives(a, fx, want, len);
	rewrite_gives(a, fy, want, len);

	/* x changed, its time put back: x's rewrite after y's skips its part */
	change_unseen(fx, 100, junk);
	assert_int_equal(tracemap_dump_rewrite(a, fx), 0);
	got = file_bytes(fx, &n);
	assert_true(n > 100);
	assert_int_equal(got[100], junk);
	free(got);

	/* a third file pushes the older memo (y's) out: y's part is written again */
	rewrite_gives(a, fz, want, len);
	change_unseen(fy, 100, junk);
	rewrite_gives(a, fy, want, len);

	for (i = 0; i < 4; i++)
		close((int[]){ ref, fx, fy, fz }[i]);
	free(want);
	tracemap_dump_free(a);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * Nothing was consumed and the kernel overwrote 37 events: all of them are
 * older than the first page kept, and the dump says so before it, with the
 * count, also when that page carries the kernel's "events missed" flag
 * without a count (the flag reports some of the same overwritten events,
 * so neither "unknown" nor flag plus overrun would be right).
 */
static void test_overrun_before_flagged_page(void **state)
{
	char dir[] = "/tmp/tm-test-overrun.XXXXXX", cmd[4200];
	uint64_t overrun = 37, nread = 0, commit;
	struct tracemap_dump_cpu_stats st;
	unsigned int seq = 0, count[2];
	struct tracemap_cpu *c;
	struct tracemap_dump *d;
	unsigned char *map;

	(void)state;
	map = make_mapping(2, &seq, NULL, count);
	memcpy(&commit, map + SBS + 8, sizeof(commit));
	commit |= SBE_MISSED_EVENTS;
	memcpy(map + SBS + 8, &commit, sizeof(commit));
	c = tm_cpu_open_memory(0, TRACEMAP_MODE_SNAPSHOT, map, map + SBS, SBS, 2, NULL, NULL);
	assert_non_null(c);
	assert_non_null(mkdtemp(dir));
	make_tracefs(dir);
	d = tm_dump_from_readers(&c, 1, &(struct tm_dump_src){ .tracefs = dir,
				 .overrun = &overrun, .read = &nread });
	assert_non_null(d);
	assert_int_equal(tracemap_dump_stats(d, -1, &st, sizeof(st)), 0);
	assert_int_equal(st.events, count[0] + count[1]);
	assert_int_equal(st.lost_gaps, 0);
	assert_int_equal(st.lost, 37);
	tracemap_dump_free(d);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	munmap(map, SBS + 2 * SBS);
}

/* Sub-buffer @i of mapping @map: put_events(), padded when filled */
static unsigned int fill_some(unsigned char *map, unsigned int i, uint64_t page_ts,
			      unsigned int *seq, unsigned int max)
{
	unsigned int commit;

	return put_events(map + SBS + (size_t)i * SBS, page_ts, seq, max, !max, &commit);
}

/* The memory page behind the second half of sub-buffer @i: its data past 4 KiB */
static unsigned char *second_half(unsigned char *map, unsigned int i)
{
	return map + SBS + (size_t)i * SBS + 4096;
}

static struct {
	unsigned char *map;
	unsigned int nr;
	unsigned int touched;
} watch;

/* A read of a watched second half: counted, then let through */
static void on_touch(int sig, siginfo_t *si, void *uc)
{
	unsigned char *a = si->si_addr;
	unsigned int i;

	(void)uc;
	for (i = 0; i < watch.nr; i++) {
		if (a >= second_half(watch.map, i) && a < second_half(watch.map, i) + 4096) {
			mprotect(second_half(watch.map, i), 4096, PROT_READ | PROT_WRITE);
			watch.touched++;
			return;
		}
	}
	signal(sig, SIG_DFL);
}

/* The image tracemap_dump_write() makes of @d, malloc'ed; its length in *@len. */
static unsigned char *image_of(struct tracemap_dump *d, size_t *len)
{
	unsigned char *p;
	int fd;

	fd = memfd_create("tm-test-image", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(tracemap_dump_write(d, fd), 0);
	p = file_bytes(fd, len);
	close(fd);
	return p;
}

/* @a and @b hold the same: statistics (but the copy time) and image */
static void same_dump(struct tracemap_dump *a, struct tracemap_dump *b)
{
	struct tracemap_dump_cpu_stats x, y;
	unsigned char *ia, *ib;
	size_t la, lb;

	assert_int_equal(tracemap_dump_stats(a, -1, &x, sizeof(x)), 0);
	assert_int_equal(tracemap_dump_stats(b, -1, &y, sizeof(y)), 0);
	x.copy_ns = y.copy_ns = 0;
	assert_memory_equal(&x, &y, sizeof(x));
	ia = image_of(a, &la);
	ib = image_of(b, &lb);
	assert_int_equal(la, lb);
	assert_memory_equal(ia, ib, la);
	free(ia);
	free(ib);
}

/*
 * @d taken again over the @nr sub-buffers of @map, the data of each behind
 * PROT_NONE while it is taken: the new dump (@d is freed), and in *@read
 * how many sub-buffers it read the data of.
 */
static struct tracemap_dump *retake_watched(struct tracemap_dump *d, unsigned char *map,
					    unsigned int nr, const struct tm_dump_src *src,
					    unsigned int *read)
{
	struct sigaction sa = { 0 }, old;
	struct tracemap_cpu *c;
	struct tm_snap_keep *k;
	unsigned int i;

	watch.map = map;
	watch.nr = nr;
	watch.touched = 0;
	sa.sa_sigaction = on_touch;
	sa.sa_flags = SA_SIGINFO;
	assert_int_equal(sigaction(SIGSEGV, &sa, &old), 0);
	for (i = 0; i < nr; i++)
		assert_int_equal(mprotect(second_half(map, i), 4096, PROT_NONE), 0);
	k = tm_dump_keep(d, 0);
	assert_non_null(k);
	assert_null(tm_dump_keep(d, 1));
	tracemap_dump_free(d);
	c = tm_cpu_open_memory_from(k, 0, TRACEMAP_MODE_SNAPSHOT, map, map + SBS, SBS, nr);
	assert_non_null(c);
	d = tm_dump_from_readers(&c, 1, src);
	assert_non_null(d);
	sigaction(SIGSEGV, &old, NULL);
	for (i = 0; i < nr; i++)
		assert_int_equal(mprotect(second_half(map, i), 4096, PROT_READ | PROT_WRITE), 0);
	*read = watch.touched;
	return d;
}

/* An empty mapping of @nr sub-buffers whose reader page is @reader, @read bytes handed out */
static unsigned char *empty_mapping(unsigned int nr, unsigned int reader, unsigned int read)
{
	struct trace_buffer_meta *meta;
	unsigned char *map;

	map = mmap(NULL, SBS + (size_t)nr * SBS, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(map != MAP_FAILED);
	meta = (struct trace_buffer_meta *)map;
	*meta = (struct trace_buffer_meta){ .meta_page_size = SBS, .meta_struct_len = sizeof(*meta),
					    .subbuf_size = SBS, .nr_subbufs = nr,
					    .reader = { .id = reader, .read = read } };
	return map;
}

#define RT_NR		7
#define RT_MS		100000000ULL

/*
 * A dump taken again from the last one after the writer went on (the newest
 * page grew to full, the two oldest were recycled with newer events, the
 * second of them partly written) equals a fresh dump of the same memory,
 * byte for byte and in every count, and reads only the three pages that
 * changed. The oldest page carries the overrun mark both times, which the
 * dump wrote over its copy: taken again with nothing changed, that page
 * alone is read.
 */
static void test_retake_equals_take(void **state)
{
	char dir[] = "/tmp/tm-test-retake.XXXXXX", cmd[4200];
	unsigned int seq = 0, first5, count[6], i, want = 0, read;
	uint64_t overrun = 37, nread = 0, at;
	unsigned char was, now, *img, *got;
	struct stat fst;
	size_t len, n;
	off_t size;
	int fr;
	struct tracemap_dump_cpu_stats st;
	struct tracemap_dump *d, *f;
	struct tracemap_cpu *c;
	struct tm_dump_src src;
	unsigned char *map;

	(void)state;
	assert_non_null(mkdtemp(dir));
	make_tracefs(dir);
	src = (struct tm_dump_src){ .tracefs = dir, .overrun = &overrun, .read = &nread };
	/* the reader page is the last sub-buffer, empty: the writer never writes there */
	map = empty_mapping(RT_NR, RT_NR - 1, 0);
	for (i = 0; i < 5; i++)
		count[i] = fill_some(map, i, T0 + i * RT_MS, &seq, 0);
	first5 = seq;
	count[5] = fill_some(map, 5, T0 + 5 * RT_MS, &seq, 20);

	c = tm_cpu_open_memory(0, TRACEMAP_MODE_SNAPSHOT, map, map + SBS, SBS, RT_NR, NULL, NULL);
	assert_non_null(c);
	d = tm_dump_from_readers(&c, 1, &src);
	assert_non_null(d);
	assert_int_equal(tracemap_dump_stats(d, -1, &st, sizeof(st)), 0);
	assert_int_equal(st.events, count[0] + count[1] + count[2] + count[3] + count[4] + 20);
	assert_int_equal(st.lost, 37);

	/* the writer fills page 5, then recycles 0 and 1 */
	seq = first5;
	count[5] = fill_some(map, 5, T0 + 5 * RT_MS, &seq, 0);
	assert_true(count[5] > 20);
	count[0] = fill_some(map, 0, T0 + 6 * RT_MS, &seq, 0);
	count[1] = fill_some(map, 1, T0 + 7 * RT_MS, &seq, 200);
	for (i = 0; i < 6; i++)
		want += count[i];

	fr = memfd_create("tm-test-retake", MFD_CLOEXEC);
	assert_true(fr >= 0);
	assert_int_equal(tracemap_dump_rewrite(d, fr), 0);
	at = cpu0_pages_at(fr);
	assert_int_equal(fstat(fr, &fst), 0);
	size = fst.st_size;

	d = retake_watched(d, map, RT_NR, &src, &read);
	assert_int_equal(read, 3);

	/*
	 * Its image over the last one: pages 3 and 4, the same as then, stay
	 * where they are (a byte changed there behind the library's back
	 * stays), the others are written (the first, marked; the grown 5; the
	 * recycled 0 and 1). Then the file holds the trace a write gives.
	 */
	memcpy(&was, (unsigned char *)map + SBS + 3 * SBS + 200, 1);
	change_unseen(fr, at + 3 * SBS + 200, was ^ 0xff);
	assert_int_equal(tracemap_dump_rewrite(d, fr), 0);
	assert_int_equal(cpu0_pages_at(fr), at + 2 * SBS);
	/* the same size: a caller that keeps its files as long as they were changes none */
	assert_int_equal(fstat(fr, &fst), 0);
	assert_int_equal(fst.st_size, size);
	assert_int_equal(pread(fr, &now, 1, at + 3 * SBS + 200), 1);
	assert_int_equal(now, was ^ 0xff);
	change_unseen(fr, at + 3 * SBS + 200, was);
	img = image_of(d, &len);
	got = file_bytes(fr, &n);
	same_trace(got, n, img, len);
	free(img);
	free(got);
	close(fr);
	c = tm_cpu_open_memory(0, TRACEMAP_MODE_SNAPSHOT, map, map + SBS, SBS, RT_NR, NULL, NULL);
	assert_non_null(c);
	f = tm_dump_from_readers(&c, 1, &src);
	assert_non_null(f);
	assert_int_equal(tracemap_dump_stats(d, -1, &st, sizeof(st)), 0);
	assert_int_equal(st.events, want);
	assert_int_equal(st.pages, 6);
	assert_int_equal(st.lost, 37);
	assert_int_equal(st.lost_gaps, 0);
	same_dump(d, f);

	/* again with nothing changed: the overrun mark is a count where the padding was */
	d = retake_watched(d, map, RT_NR, &src, &read);
	assert_int_equal(read, 1);
	same_dump(d, f);

	tracemap_dump_free(d);
	tracemap_dump_free(f);
	munmap(map, SBS + RT_NR * SBS);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * A retake whose writer recycles a page while it is copied, every time (the
 * tear of test_torn_page_dropped on a page recycled since the last dump, so
 * that the retake must copy it): the page is dropped and marked lost, as a
 * fresh dump under the same writer does, and every other event is there.
 */
static void test_retake_torn_page_lost(void **state)
{
	char dir[] = "/tmp/tm-test-retake-torn.XXXXXX", cmd[4200];
	unsigned int seq = 0, count[NR_SUBBUFS];
	struct tracemap_dump_cpu_stats st, fresh;
	struct sigaction sa = { 0 }, old;
	struct tracemap_dump *d;
	struct tracemap_cpu *c;
	struct tm_snap_keep *k;
	unsigned char *map;

	(void)state;
	assert_non_null(mkdtemp(dir));
	make_tracefs(dir);
	map = make_mapping(NR_SUBBUFS, &seq, NULL, count);
	c = tm_cpu_open_memory(0, TRACEMAP_MODE_SNAPSHOT, map, map + SBS, SBS, NR_SUBBUFS, NULL,
			       NULL);
	assert_non_null(c);
	d = tm_dump_from_readers(&c, 1, &(struct tm_dump_src){ .tracefs = dir });
	assert_non_null(d);
	k = tm_dump_keep(d, 0);
	tracemap_dump_free(d);

	/* the oldest page recycled: the newest now, and torn by every copy */
	count[0] = fill_some(map, 0, T0 + NR_SUBBUFS * 100000000ULL, &seq, 0);
	tear.hdr = map + SBS;
	tear.data = tear.hdr + 4096;
	tear.recycled = 0;
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	assert_int_equal(sigaction(SIGSEGV, &sa, &old), 0);
	assert_int_equal(mprotect(map, SBS + NR_SUBBUFS * SBS, PROT_READ), 0);
	assert_int_equal(mprotect(tear.data, 4096, PROT_NONE), 0);

	c = tm_cpu_open_memory_from(k, 0, TRACEMAP_MODE_SNAPSHOT, map, map + SBS, SBS, NR_SUBBUFS);
	assert_non_null(c);
	d = tm_dump_from_readers(&c, 1, &(struct tm_dump_src){ .tracefs = dir });
	assert_non_null(d);
	assert_true(tear.recycled >= 16);
	assert_int_equal(tracemap_dump_stats(d, -1, &st, sizeof(st)), 0);
	tracemap_dump_free(d);

	c = tm_cpu_open_memory(0, TRACEMAP_MODE_SNAPSHOT, map, map + SBS, SBS, NR_SUBBUFS, NULL,
			       NULL);
	assert_non_null(c);
	d = tm_dump_from_readers(&c, 1, &(struct tm_dump_src){ .tracefs = dir });
	assert_non_null(d);
	mprotect(map, SBS + NR_SUBBUFS * SBS, PROT_READ);
	sigaction(SIGSEGV, &old, NULL);
	assert_int_equal(tracemap_dump_stats(d, -1, &fresh, sizeof(fresh)), 0);
	tracemap_dump_free(d);

	/* the torn page is gone, every other event there, the gap counted */
	assert_int_equal(st.events, count[1] + count[2] + count[3]);
	assert_true(st.lost_gaps >= 1);
	st.copy_ns = fresh.copy_ns = 0;
	assert_memory_equal(&st, &fresh, sizeof(st));

	munmap(map, SBS + NR_SUBBUFS * SBS);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * The reader page partly handed out by a consumer: a dump writes its rest
 * from the middle over its copy, so a retake copies it again, and equals a
 * fresh dump.
 */
static void test_retake_after_partly_read(void **state)
{
	char dir[] = "/tmp/tm-test-retake-read.XXXXXX", cmd[4200];
	struct tracemap_dump_cpu_stats st;
	struct tracemap_dump *d1, *d2;
	unsigned int seq = 0, n[3], read;
	struct tracemap_cpu *c;
	struct tm_dump_src src;
	unsigned char *map;

	(void)state;
	assert_non_null(mkdtemp(dir));
	make_tracefs(dir);
	src = (struct tm_dump_src){ .tracefs = dir };
	/* the reader page 2 holds the oldest events, the first 10 (32 bytes each) handed out */
	map = empty_mapping(3, 2, 10 * 32);
	n[2] = fill_some(map, 2, T0, &seq, 0);
	n[0] = fill_some(map, 0, T0 + RT_MS, &seq, 0);
	n[1] = fill_some(map, 1, T0 + 2 * RT_MS, &seq, 40);

	c = tm_cpu_open_memory(0, TRACEMAP_MODE_SNAPSHOT, map, map + SBS, SBS, 3, NULL, NULL);
	assert_non_null(c);
	d1 = tm_dump_from_readers(&c, 1, &src);
	assert_non_null(d1);
	assert_int_equal(tracemap_dump_stats(d1, -1, &st, sizeof(st)), 0);
	assert_int_equal(st.events, n[2] - 10 + n[0] + n[1]);

	d1 = retake_watched(d1, map, 3, &src, &read);
	assert_int_equal(read, 1);

	c = tm_cpu_open_memory(0, TRACEMAP_MODE_SNAPSHOT, map, map + SBS, SBS, 3, NULL, NULL);
	assert_non_null(c);
	d2 = tm_dump_from_readers(&c, 1, &src);
	assert_non_null(d2);
	same_dump(d1, d2);

	tracemap_dump_free(d1);
	tracemap_dump_free(d2);
	munmap(map, SBS + 3 * SBS);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * A writer going round the ring many times, a rewrite of each retake over
 * the last image: the pages slide through their room, start at its
 * beginning again when they reach its end, and every time the file holds
 * the trace a write gives, with the same size.
 */
static void test_rewrite_follows_ring(void **state)
{
	char dir[] = "/tmp/tm-test-ring.XXXXXX", cmd[4200];
	unsigned int seq = 0, i, read;
	unsigned char *map, *img, *got;
	uint64_t at, first_at = 0;
	struct tracemap_dump *d;
	struct tracemap_cpu *c;
	struct tm_dump_src src;
	unsigned int restarts = 0;
	struct stat fst;
	size_t len, n;
	off_t size = 0;
	int fr;

	(void)state;
	assert_non_null(mkdtemp(dir));
	make_tracefs(dir);
	src = (struct tm_dump_src){ .tracefs = dir };
	map = empty_mapping(RT_NR, RT_NR - 1, 0);
	for (i = 0; i < 6; i++)
		fill_some(map, i, T0 + (uint64_t)seq * 10000, &seq, 0);
	c = tm_cpu_open_memory(0, TRACEMAP_MODE_SNAPSHOT, map, map + SBS, SBS, RT_NR, NULL, NULL);
	assert_non_null(c);
	d = tm_dump_from_readers(&c, 1, &src);
	assert_non_null(d);
	fr = memfd_create("tm-test-ring", MFD_CLOEXEC);
	assert_true(fr >= 0);
	for (i = 0; i < 60; i++) {
		assert_int_equal(tracemap_dump_rewrite(d, fr), 0);
		at = cpu0_pages_at(fr);
		assert_int_equal(fstat(fr, &fst), 0);
		if (!i) {
			first_at = at;
			size = fst.st_size;
		}
		assert_int_equal(fst.st_size, size);
		restarts += i && at == first_at;
		img = image_of(d, &len);
		got = file_bytes(fr, &n);
		same_trace(got, n, img, len);
		free(img);
		free(got);
		/* the oldest page recycled with the newest events */
		fill_some(map, i % 6, T0 + (uint64_t)seq * 10000, &seq, 0);
		d = retake_watched(d, map, RT_NR, &src, &read);
		assert_int_equal(read, 1);
	}
	/* a room of 4 rings of 8 pages, 6 of them in the image: back at its start every 27 */
	assert_int_equal(restarts, 2);
	tracemap_dump_free(d);
	close(fr);
	munmap(map, SBS + RT_NR * SBS);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_torn_page_dropped),
		cmocka_unit_test(test_enabled_event_gone),
		cmocka_unit_test(test_rewrite_equals_write),
		cmocka_unit_test(test_rewrite_two_files),
		cmocka_unit_test(test_overrun_before_flagged_page),
		cmocka_unit_test(test_retake_equals_take),
		cmocka_unit_test(test_retake_torn_page_lost),
		cmocka_unit_test(test_retake_after_partly_read),
		cmocka_unit_test(test_rewrite_follows_ring),
	};

	return cmocka_run_group_tests(tests, NULL, NULL) ? 1 : 0;
}
