// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the dump and the one trace.dat writer (lib/dump.c,
 * lib/tracedat.c), read back by libtracecmd 3.1.6 in the same process.
 *
 * The input describes up to 16 CPUs with sparse numbers, each a synthetic
 * mapping of sub-buffers written by the test encoder (record kinds, sizes,
 * times, event ids) that may lie (a commit past the end, bytes overwritten,
 * a meta page pointing anywhere), the kernel's overrun of each CPU (the
 * drop mark on its first page), saved_cmdlines (empty, huge or garbage),
 * set_event (known, unknown and garbage lines), the clock, an instance name
 * and the format of one event whose text the input writes. The dump is
 * taken from snapshot readers over those mappings (tm_dump_from_readers(),
 * as tracemap_dump_take() builds its own) against a small tracefs-like
 * directory made at start-up, and written to a memfd; or written over the
 * memfd (tracemap_dump_rewrite()), taken again from itself over the same
 * mappings (the seed of tm_dump_keep()) and written over its last image.
 *
 * What must hold: the writer returns 0 (or a clean -errno), and then
 * tracecmd_open_fd() reads the file, every CPU gives exactly the records
 * the dump counted, and on a CPU whose mapping did not lie exactly the
 * records that went in (time, size, payload bytes) with the drop mark on
 * its first record. ASan/UBSan/LSan watch both libraries.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sanitizer/lsan_interface.h>
#include <trace-cmd/trace-cmd.h>

#include "sbuf-encode.h"
#include "fuzz.h"
#include "tracemap-local.h"

#define MAX_CPUS	16
#define MAX_PAGES	6
#define META_SIZE	((unsigned int)sizeof(struct trace_buffer_meta))
#define PRINT_ID	5
#define SWITCH_ID	6
#define ODD_ID		7

static char tracefs[64];
static char kallsyms[128];
static unsigned int generation;

static void put_text(const char *name, const void *text, size_t len)
{
	char path[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tracefs, name);
	for (p = path + strlen(tracefs) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	check(f);
	check(fwrite(text, 1, len, f) == len);
	check(!fclose(f));
}

static void put_str(const char *name, const char *text)
{
	put_text(name, text, strlen(text));
}

#define COMMON_FIELDS \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

/* header formats and events as Linux 6.18 gives them, plus the fuzzed one */
static void make_tracefs(void)
{
	put_str("events/header_page",
		"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
		"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
		"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n");
	put_str("events/header_event",
		"# compressed entry header\n\ttype_len    :    5 bits\n"
		"\ttime_delta  :   27 bits\n\tarray       :   32 bits\n\n"
		"\tpadding     : type == 29\n\ttime_extend : type == 30\n"
		"\ttime_stamp : type == 31\n\tdata max type_len  == 28\n");
	put_str("events/ftrace/print/format",
		"name: print\nID: 5\nformat:\n" COMMON_FIELDS
		"\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
		"\tfield:char buf[];\toffset:16;\tsize:0;\tsigned:0;\n\n"
		"print fmt: \"%ps: %s\", (void *)REC->ip, REC->buf\n");
	put_str("events/ftrace/print/id", "5\n");
	put_str("events/sched/enable", "0\n");
	put_str("events/sched/sched_switch/format",
		"name: sched_switch\nID: 6\nformat:\n" COMMON_FIELDS
		"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
		"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
		"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
		"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
		"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
		"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
		"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"
		"print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> "
		"next_comm=%s next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, "
		"REC->prev_prio, (REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002)"
		" + 1) << 1) - 1)) ? __print_flags(REC->prev_state & ((((0x00000000 | "
		"0x00000001 | 0x00000002) + 1) << 1) - 1), \"|\", { 0x00000001, \"S\" }, "
		"{ 0x00000002, \"D\" }) : \"R\", REC->prev_state & (((0x00000000 | 0x00000001 "
		"| 0x00000002) + 1) << 1) ? \"+\" : \"\", REC->next_comm, REC->next_pid, "
		"REC->next_prio\n");
	put_str("events/sched/sched_switch/id", "6\n");
	put_str("events/fuzz/enable", "0\n");
	put_str("events/fuzz/odd/format",
		"name: odd\nID: 7\nformat:\n" COMMON_FIELDS
		"\tfield:int v;\toffset:8;\tsize:4;\tsigned:1;\n\nprint fmt: \"v=%d\", REC->v\n");
	put_str("events/fuzz/odd/id", "7\n");
	put_str("dynamic_events", "");
	put_str("saved_cmdlines", "");
}

static void remove_tree(const char *dir)
{
	char path[512];
	struct dirent *de;
	DIR *d = opendir(dir);

	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (de->d_type == DT_DIR)
			remove_tree(path);
		else
			unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

static void cleanup(void)
{
	remove_tree(tracefs);
	unlink(kallsyms);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Directories of earlier runs that died (a crash skips atexit()): their pid is gone. */
static void remove_stale(const char *tmp)
{
	struct dirent *de;
	char path[512];
	DIR *d = opendir(tmp);
	int pid;

	while (d && (de = readdir(d))) {
		if (sscanf(de->d_name, "tm-fuzz-tracedat.%d", &pid) != 1 || !kill(pid, 0) ||
		    errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmp, de->d_name);
		remove_tree(path);
	}
	if (d)
		closedir(d);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	remove_stale(tmp);
	snprintf(tracefs, sizeof(tracefs), "%.40s/tm-fuzz-tracedat.%d", tmp, (int)getpid());
	remove_tree(tracefs);
	check(!mkdir(tracefs, 0700));
	atexit(cleanup);
	make_tracefs();
	snprintf(kallsyms, sizeof(kallsyms), "%s/kallsyms", tracefs);
	put_str("kallsyms", "ffffffff81000000 T _stext\nffffffff81001000 t tm_fuzz_fn\n");
	tracecmd_set_loglevel(TEP_LOG_NONE);
	return 0;
}

/* The format of fuzz:odd from the input: field lines and a print format. */
static void odd_format(struct fuzz_in *in)
{
	static const char *types[] = { "int", "char", "u64", "unsigned long", "char *", "__u8",
				       "long long", "__data_loc char[]" };
	char text[2048], fmt[64], dyn[32];
	unsigned int n, i, off = 8, k;
	size_t len;

	len = snprintf(text, sizeof(text), "name: odd\nID: %d\nformat:\n" COMMON_FIELDS,
		       ODD_ID);
	n = take(in) % 8;
	for (i = 0; i < n; i++) {
		unsigned int t = take(in), size = 1u << (take(in) % 4);

		len += snprintf(text + len, sizeof(text) - len,
				"\tfield:%s f%u%s;\toffset:%u;\tsize:%u;\tsigned:%u;\n",
				types[t % 8], i, t & 8 ? "[4]" : "", off, t & 8 ? size * 4 : size,
				t >> 4 & 1);
		off += t & 8 ? size * 4 : size;
	}
	for (i = 0, k = take(in) % 48; i < k && i + 1 < sizeof(fmt); i++) {
		fmt[i] = take(in);
		/* the format text is one line; the kernel's has no NUL or newline in it */
		if (!fmt[i] || fmt[i] == '\n')
			fmt[i] = '%';
	}
	fmt[i] = '\0';
	len += snprintf(text + len, sizeof(text) - len, "\nprint fmt: \"%s\"%s\n", fmt,
			n ? ", REC->f0" : "");
	put_text("events/fuzz/odd/format", text, len < sizeof(text) ? len : sizeof(text) - 1);
	/* dynamic events changed: the writer reads the formats again */
	snprintf(dyn, sizeof(dyn), "p:fuzz/odd %u\n", ++generation);
	put_str("dynamic_events", dyn);
}

/* saved_cmdlines: none, a few, garbage, or a large table */
static char *cmdlines(struct fuzz_in *in, size_t *len)
{
	unsigned int kind = take(in), n, i;
	size_t cap = kind % 8 == 2 ? 2 << 20 : 4096, l = 0;
	char *s = malloc(cap);

	check(s);
	switch (kind % 8) {
	case 0:
		break;
	case 1:
		/* bytes as they come, NULs and all */
		for (n = take(in), i = 0; i < n; i++)
			s[l++] = take(in);
		break;
	case 2:
		/* the kernel's largest table: 32768 entries */
		for (i = 0; i < 32768 && l + 64 < cap; i++)
			l += snprintf(s + l, cap - l, "%u task-%u-with-a-long-name\n", i + 1, i);
		break;
	default:
		for (n = take(in) % 64, i = 0; i < n; i++)
			l += snprintf(s + l, cap - l, "%u comm%u\n", take(in) << 8 | take(in), i);
		break;
	}
	*len = l;
	return s;
}

/* set_event: known, unknown and garbage lines */
static char *set_event(struct fuzz_in *in)
{
	static const char *lines[] = { "ftrace:print\n", "sched:sched_switch\n", "fuzz:odd\n",
				       "nosuch:event\n", "sched:nosuch\n", ":\n", "noline",
				       "../..:../format\n" };
	unsigned int n = take(in) % 6, i, j, k;
	char *s = calloc(1, 4096);
	size_t l = 0;

	check(s);
	for (i = 0; i < n; i++) {
		k = take(in);
		if (k < 240) {
			l += snprintf(s + l, 4096 - l, "%s", lines[k % 8]);
			continue;
		}
		for (j = 0; j < k % 16 && l < 4000; j++)
			s[l++] = take(in) | 1;	/* no NUL: set_event is text */
	}
	return s;
}

/* One CPU: its mapping, what the encoder wrote and whether the mapping lies. */
struct fcpu {
	int cpu;
	unsigned char *map;
	unsigned int nr_subbufs;
	struct sbe e[MAX_PAGES];
	unsigned char *pages[MAX_PAGES];
	unsigned int nr_pages;
	bool lies;
	uint64_t overrun;
};

static unsigned char *subbuf_at(struct fcpu *fc, unsigned int sbs, unsigned int id)
{
	return fc->map + META_SIZE + (size_t)id * sbs;
}

static void build_cpu(struct fcpu *fc, struct fuzz_in *in, unsigned int sbs, uint64_t *ts)
{
	struct trace_buffer_meta *meta;
	unsigned int k, i, n, lie;
	unsigned char payload[256];

	fc->nr_pages = 1 + take(in) % MAX_PAGES;
	/* the pages, then an empty reader page as at mmap time */
	fc->nr_subbufs = fc->nr_pages + 1;
	fc->map = calloc(1, META_SIZE + (size_t)fc->nr_subbufs * sbs);
	check(fc->map);
	meta = (struct trace_buffer_meta *)fc->map;
	meta->meta_page_size = META_SIZE;
	meta->meta_struct_len = META_SIZE;
	meta->subbuf_size = sbs;
	meta->nr_subbufs = fc->nr_subbufs;
	meta->reader.id = fc->nr_pages;
	for (k = 0; k < fc->nr_pages; k++) {
		struct sbe *e = &fc->e[k];

		fc->pages[k] = subbuf_at(fc, sbs, k);
		check(!sbe_init(e, fc->pages[k], sbs, *ts));
		n = take(in) % 24;
		for (i = 0; i < n; i++) {
			unsigned int kind = take(in), len = take(in) % 200, d = take(in);
			uint64_t t = *ts + ((uint64_t)d << (kind >> 4 & 7) * 4);
			uint16_t id = kind & 8 ? take(in) << 8 | take(in) :
				      (uint16_t[]){ PRINT_ID, SWITCH_ID, ODD_ID }[kind % 3];
			int ret;

			memset(payload, 'a' + i % 26, sizeof(payload));
			memcpy(payload, &id, sizeof(id));
			if (len > 16)
				payload[len - 1] = '\0';
			if (kind & 0x80)
				ret = sbe_time_extend(e, t + (1ULL << 27));
			else if ((kind & 0x41) == 0x41)
				ret = sbe_discard(e, t, len % 64);
			else
				ret = sbe_event(e, t, payload, len < 2 ? 2 : len,
						kind & 0x40 ? SBE_LONG : 0);
			if (ret < 0)
				break;
			*ts = e->ts;
		}
		sbe_finish(e, 0);
		*ts = e->ts + 1;
	}
	fc->overrun = take(in) & 1 ? take(in) << 8 | take(in) : 0;

	lie = take(in);
	k = take(in) % fc->nr_pages;
	fc->lies = (lie & 7) >= 5;
	switch (lie & 7) {
	case 5:
		/* a commit past the end, or any value */
		memcpy(fc->pages[k] + 8, (uint64_t[]){ (uint64_t)take(in) << (lie >> 3 & 31) },
		       8);
		break;
	case 6:
		/* bytes of a record overwritten */
		for (n = take(in) % 16, i = 0; i < n; i++)
			fc->pages[k][(take(in) << 8 | take(in)) % sbs] = take(in);
		break;
	case 7:
		/* a meta page that points anywhere */
		meta->reader.id = take(in) % (fc->nr_subbufs + 2);
		meta->reader.read = take(in) << 8 | take(in);
		break;
	}
}

/* The CPU's records from the file: exactly the encoder's when its mapping did not lie. */
static uint64_t read_cpu(struct tracecmd_input *h, struct fcpu *fc, unsigned int sbs)
{
	struct tep_record *rec;
	unsigned int k = 0, j = 0, marked = 0;
	uint64_t n = 0;

	/* the drop mark goes on the first page the snapshot hands out: one with data */
	while (marked < fc->nr_pages && !fc->e[marked].commit)
		marked++;

	while ((rec = tracecmd_read_data(h, fc->cpu))) {
		check(rec->cpu == fc->cpu);
		check(rec->size >= 0 && (unsigned int)rec->size <= sbs);
		if (!fc->lies) {
			struct sbe_rec *want;

			while (k < fc->nr_pages && j >= fc->e[k].nr) {
				k++;
				j = 0;
			}
			check(k < fc->nr_pages);
			want = &fc->e[k].recs[j];
			check(rec->ts == want->ts);
			check((unsigned int)rec->size == want->size);
			check(!memcmp(rec->data, fc->pages[k] + SBE_HDR + want->payload_off,
				      want->size));
			/*
			 * The drop mark: kbuffer reports it on the first record only
			 * when that opens the page (no time extend before it), as the
			 * count, or -1 when the page had no room for it.
			 */
			if (k == marked && j == 0 && fc->overrun && want->off == 0)
				check(rec->missed_events == (long long)fc->overrun ||
				      rec->missed_events == -1);
			else
				check(rec->missed_events == 0);
			j++;
		} else {
			check(rec->missed_events >= -1);
		}
		n++;
		tracecmd_free_record(rec);
	}
	if (!fc->lies) {
		uint64_t want = 0;

		for (k = 0; k < fc->nr_pages; k++)
			want += fc->e[k].nr;
		check(n == want);
	}
	return n;
}

/*
 * libtracecmd 3.1.6 leaves about one mapping of the file behind per
 * tracecmd_open_fd()/tracecmd_close() (seen in /proc/self/maps), and after
 * some 10,000 inputs mmap() fails (vm.max_map_count). Nothing of the file
 * is used after the close: what is still mapped of it is unmapped here.
 */
static void unmap_left(int fd)
{
	unsigned long start, end, ino;
	char line[512], name[64];
	struct stat st;
	FILE *f;

	if (fstat(fd, &st))
		return;
	f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %*s %*s %*s %lu %63s", &start, &end, &ino, name) == 4 &&
		    ino == st.st_ino && strstr(name, "tm-fuzz-tracedat"))
			munmap((void *)start, end - start);
	}
	if (f)
		fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a trace.dat's pages are at least the system page size: trace-cmd maps them */
	static const unsigned int sizes[] = { 4096, 8192, 4096, 16384 };
	static const char *clocks[] = { "local", "global", "mono", "x86-tsc", "counter", "boot",
					"perf", "uptime" };
	struct tracemap_cpu *readers[MAX_CPUS];
	struct tracecmd_input *h, *ih;
	struct fcpu cpus[MAX_CPUS] = { 0 };
	struct fuzz_in in = { data, size };
	struct tm_dump_src src = { 0 };
	struct tracemap_dump_cpu_stats st;
	struct tracemap_dump *d;
	unsigned int flags, sbs, nr, i, k;
	uint64_t ts = 1000000000ULL, overrun[MAX_CPUS];
	char instance[32];
	int fd, ret, cpu = -1;

	tracemap_set_print(fuzz_print, NULL);
	flags = take(&in);
	sbs = sizes[take(&in) % 4];
	nr = 1 + take(&in) % MAX_CPUS;
	if (flags & 1)
		odd_format(&in);
	for (i = 0; i < nr; i++) {
		cpu += 1 + (flags & 2 ? take(&in) % 16 : 0);
		cpus[i].cpu = cpu;
		build_cpu(&cpus[i], &in, sbs, &ts);
		overrun[i] = cpus[i].overrun;
		readers[i] = tm_cpu_open_memory(cpu, TRACEMAP_MODE_SNAPSHOT, cpus[i].map,
						cpus[i].map + META_SIZE, sbs, cpus[i].nr_subbufs,
						NULL, NULL);
		check(readers[i]);
	}
	snprintf(instance, sizeof(instance), "fuzz-%u", flags >> 4);
	src = (struct tm_dump_src){
		.tracefs = tracefs, .instance = flags & 4 ? instance : NULL,
		.clock = clocks[flags >> 3 & 7], .events = set_event(&in),
		.overrun = overrun, .kallsyms = kallsyms,
	};
	src.cmdlines = cmdlines(&in, &src.cmdlines_len);

	d = tm_dump_from_readers(readers, nr, &src);
	check(d);
	check(tracemap_dump_nr_cpus(d) == (int)nr);
	fd = memfd_create("tm-fuzz-tracedat", MFD_CLOEXEC);
	check(fd >= 0);
	if (flags & 0x80) {
		ret = tracemap_dump_rewrite(d, fd);
		for (i = 0; !ret && i < nr; i++) {
			readers[i] = tm_cpu_open_memory_from(tm_dump_keep(d, cpus[i].cpu),
							     cpus[i].cpu, TRACEMAP_MODE_SNAPSHOT,
							     cpus[i].map, cpus[i].map + META_SIZE, sbs,
							     cpus[i].nr_subbufs);
			check(readers[i]);
		}
		if (!ret) {
			tracemap_dump_free(d);
			d = tm_dump_from_readers(readers, nr, &src);
			check(d);
			ret = tracemap_dump_rewrite(d, fd);
		}
	} else {
		ret = tracemap_dump_write(d, fd);
	}
	/* nothing here can fail but memory */
	check(ret == 0 || ret == -ENOMEM);
	if (ret)
		goto out;

	check(lseek(fd, 0, SEEK_SET) == 0);
	/*
	 * libtracecmd 3.1.6 leaks the clock name it parses while opening (a
	 * sscanf("%ms") in tracecmd_parse_trace_clock(), 6 bytes per open,
	 * whose stack the fast unwinder cannot name for a suppression): what
	 * it allocates in the open is not counted; nothing of ours runs there.
	 */
	__lsan_disable();
	h = tracecmd_open_fd(dup(fd), TRACECMD_FL_LOAD_NO_PLUGINS | TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS);
	__lsan_enable();
	if (!h && getenv("FUZZ_DEBUG"))
		fprintf(stderr, "tracecmd_open_fd failed: %m\n");
	check(h);
	ih = h;
	if (src.instance) {
		check(tracecmd_buffer_instances(h) == 1);
		check(!strcmp(tracecmd_buffer_instance_name(h, 0), instance));
		ih = tracecmd_buffer_instance_handle(h, 0);
		check(ih);
	}
	for (i = 0; i < nr; i++) {
		check(!tracemap_dump_stats(d, cpus[i].cpu, &st, sizeof(st)));
		/* the file holds what the dump counted, no more, no less */
		check(read_cpu(ih, &cpus[i], sbs) == st.events);
	}
	if (ih != h)
		tracecmd_close(ih);
	tracecmd_close(h);
	unmap_left(fd);
out:
	close(fd);
	tracemap_dump_free(d);
	for (i = 0; i < nr; i++) {
		for (k = 0; k < cpus[i].nr_pages; k++)
			sbe_release(&cpus[i].e[k]);
		free(cpus[i].map);
	}
	free((char *)src.events);
	free((char *)src.cmdlines);
	return 0;
}
