// SPDX-License-Identifier: GPL-2.0-only
/*
 * libtracemap-tracecmd.so: the libtracefs tracefs_cpu_* calls of trace-cmd's
 * recorder (lib/trace-cmd/trace-recorder.c) served from the ring-buffer
 * mapping through libtracemap. Preloaded by trace-cmd-mmap(1). All twelve
 * tracefs_cpu_* entry points of libtracefs 1.6 are covered, since a host
 * may hand a plugin object to any of them; at load the plugin checks that
 * the host and its libtracefs call nothing else on such objects, and steps
 * aside with a message otherwise.
 *
 * The host's convention is kept, not the house one: these functions return
 * what libtracefs 1.6.4 returns (NULL/-1 with errno, 0 for "nothing"), see
 * Documentation/trace-cmd-mmap.1.txt.
 *
 * Only objects this file creates are served from the mapping; they are
 * recognised by a registry of pointers plus a magic number. Every other
 * object (alloc_fd() around guest sockets, objects libtracefs opens for
 * itself, objects of instances that cannot be mapped) goes to the real
 * functions, found with dlsym(RTLD_NEXT) so the plugin never links
 * libtracefs.
 *
 * Signal safety: trace-cmd calls tracefs_cpu_stop() from its SIGUSR1 and
 * SIGALRM handlers and tracefs_cpu_flush_write() from its SIGUSR2 handler.
 * Both only touch preallocated memory, make system calls and read the
 * registry, which the handlers never change. A handler-time flush that
 * interrupts the main flow in the middle of producing pages (busy set)
 * does nothing but ask the main flow to flush a page before it waits again.
 * tracemap_cpu_read_page() in consume mode allocates nothing and takes no
 * lock after open (GET_READER, copies into the reader's staging page); it
 * logs only on a corrupt meta page. Snapshot mode sorts with qsort(), which
 * may allocate, on its first read: only extract uses it, and extract reads
 * without signal handlers.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <tracefs.h>

#include "tracemap.h"

#define PLUGIN_NAME	"libtracemap-tracecmd.so"
#define OPTS_ENV	"TRACEMAP_TRACECMD"
#define MSG_PREFIX	"trace-cmd-mmap: "

/* the tracefs_cpu_* symbols; everything else stays hidden */
#define EXPORT		__attribute__((visibility("default")))

#define TCM_MAGIC	0x746d6d70u	/* "tmmp" */
#define TCM_DEAD	0x646d6d70u	/* closed; the shell stays for late signal handlers */
#define MAX_OBJECTS	1024
#define BATCH_PAGES	16		/* pages per write(): one 64 KiB splice's worth */
#define STOP_WRITE_MS	200		/* after stop: the longest wait for room in a pipe */
#define DGRAM_TICK_MS	10		/* record -N over UDP: complete pages go out at least this often */

/* ------------------------------------------------------------ options */

static struct {
	bool disabled;			/* mmap=0: everything goes to libtracefs */
	bool snapshot;			/* mode=snapshot (extract only) */
	bool stats;
	bool verbose;
	unsigned int max_age_ms;	/* 0: partial pages only on flush and stop */
	int host;			/* HOST_*: whose contract the calls keep */
	bool by_hand;			/* LD_PRELOAD set without the launcher */
} opt;

/*
 * trace-cmd's recorder gets whole pages and no -1/EAGAIN (what trace-cmd
 * 3.1.6 needs, see the man page); any other program gets libtracefs 1.6.4's
 * return values call for call (tests/plugins/tc-calls.sh compares them).
 */
enum { HOST_DETECT, HOST_TRACECMD, HOST_LIBTRACEFS };

/* ------------------------------------------------------- real libtracefs */

static struct {
	typeof(tracefs_cpu_open) *open;
	typeof(tracefs_cpu_alloc_fd) *alloc_fd;
	typeof(tracefs_cpu_close) *close;
	typeof(tracefs_cpu_read_size) *read_size;
	typeof(tracefs_cpu_read) *read;
	typeof(tracefs_cpu_write) *write;
	typeof(tracefs_cpu_pipe) *pipe;
	typeof(tracefs_cpu_flush_write) *flush_write;
	typeof(tracefs_cpu_stop) *stop;
	typeof(tracefs_cpu_free_fd) *free_fd;
	typeof(tracefs_cpu_flush) *flush;
	typeof(tracefs_cpu_buffered_read) *buffered_read;
	typeof(tracefs_instance_get_name) *get_name;
	typeof(tracefs_instance_get_trace_dir) *get_trace_dir;
	typeof(tracefs_tracing_dir) *tracing_dir;
	const void *base;		/* load address of libtracefs */
} real;

/* ------------------------------------------------------------ objects */

struct tcm_stats {
	unsigned long long pages;	/* sub-buffers written */
	unsigned long long flushed;	/* of which handed out before the kernel left them */
	unsigned long long bytes;
	unsigned long long writes;	/* write() calls on the output */
	unsigned long long waits;	/* blocking waits */
	unsigned long long flush_calls;	/* tracefs_cpu_flush_write() calls */
	unsigned long long deferred_flushes; /* ... that came in the middle of producing */
	unsigned long long abandoned;	/* pages a stopped reader of our pipe never took */
	unsigned long long burst;	/* pages handed out since the last wait */
	unsigned long long max_burst;	/* the most between two waits (or at the end) */
};

struct tcm {
	unsigned int magic;
	int cpu;
	struct tracemap_cpu *c;
	int fd;				/* trace_pipe_raw of c: poll and the stop wake-up */
	int ctrl[2];			/* stop() wakes a blocked wait through it */
	int subbuf;
	bool perm_nonblock;		/* opened non-blocking (record --poll), or stopped (exact) */
	bool exact;			/* libtracefs 1.6.4's contract (HOST_LIBTRACEFS) */
	volatile sig_atomic_t nb;	/* exact: libtracefs' TC_NONBLOCK (the fd's O_NONBLOCK) */
	bool spliced;			/* exact: write/buffered_read ran (libtracefs' init_splice) */
	int queued, qpos;		/* exact: buffered_read's pages in queue */
	unsigned char *queue;		/* exact: BATCH_PAGES sub-buffers for buffered_read */
	unsigned char *page;		/* exact: one sub-buffer for flush_write */
	volatile sig_atomic_t stopped;
	volatile sig_atomic_t busy;	/* producing: a handler-time flush must not run */
	volatile sig_atomic_t flush_req;
	int out_fd;			/* the last output checked for datagrams, or -1 */
	bool out_dgram;			/* it is: one page per write (record -N over UDP) */
	unsigned char *batch;		/* BATCH_PAGES sub-buffers */
	struct tcm_stats st;
	char label[80];			/* "instance foo cpu 1" for messages */
};

/*
 * Written only by the main flow; handlers only read it. A closed object stays
 * registered as a dead shell: trace-cmd's SIGUSR2 handler may still flush a
 * recorder that is being freed, and must then find an object that says "no
 * data" rather than hand our memory to libtracefs.
 */
static struct tcm *registry[MAX_OBJECTS];
static int registry_hi;

static struct tcm *lookup(const struct tracefs_cpu *tcpu)
{
	int i, hi = __atomic_load_n(&registry_hi, __ATOMIC_ACQUIRE);
	unsigned int magic;
	struct tcm *t;

	if (!tcpu)
		return NULL;
	for (i = 0; i < hi; i++) {
		t = __atomic_load_n(&registry[i], __ATOMIC_ACQUIRE);
		if (t != (const struct tcm *)tcpu)
			continue;
		magic = __atomic_load_n(&t->magic, __ATOMIC_ACQUIRE);
		if (magic == TCM_MAGIC || magic == TCM_DEAD)
			return t;
	}
	return NULL;
}

static bool is_dead(const struct tcm *t)
{
	return __atomic_load_n(&t->magic, __ATOMIC_ACQUIRE) == TCM_DEAD;
}

static bool registry_add(struct tcm *t)
{
	int i, slot = -1;

	for (i = 0; i < MAX_OBJECTS && slot < 0; i++)
		if (!registry[i])
			slot = i;
	/* full: reuse the oldest dead shell, long closed */
	for (i = 0; i < MAX_OBJECTS && slot < 0; i++) {
		struct tcm *old = registry[i];

		if (is_dead(old)) {
			__atomic_store_n(&registry[i], NULL, __ATOMIC_RELEASE);
			free(old);
			slot = i;
		}
	}
	if (slot < 0)
		return false;
	/* pairs with the acquire loads in lookup(), also from handlers */
	__atomic_store_n(&registry[slot], t, __ATOMIC_RELEASE);
	if (slot >= registry_hi)
		__atomic_store_n(&registry_hi, slot + 1, __ATOMIC_RELEASE);
	return true;
}

/* ------------------------------------------------------------ messages */

/* snprintf into a stack buffer and one write(): usable from handlers too */
static void __attribute__((format(printf, 1, 2))) say(const char *fmt, ...)
{
	char msg[640];
	va_list ap;
	int n, e = errno;

	n = snprintf(msg, sizeof(msg), MSG_PREFIX);
	va_start(ap, fmt);
	n += vsnprintf(msg + n, sizeof(msg) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(msg) - 2)
		n = sizeof(msg) - 2;
	msg[n++] = '\n';
	if (write(STDERR_FILENO, msg, n) < 0)
		errno = e;
	errno = e;
}

/* set while a failure of the library is quoted in the plugin's own message */
static bool quoting;

/* quiet unless verbose: the one fallback warning quotes tracemap_last_error() */
static void lib_print(void *ctx, enum tracemap_log_level level, const char *msg)
{
	if (opt.verbose && !quoting)
		say("libtracemap: %s", msg);
}

/*
 * A kernel without the mapping (before 6.10) is said once per run, not once
 * per CPU: trace-cmd opens its buffers in one recorder process per CPU, all
 * forked from the host after the plugin loaded, so the flag lives in a
 * shared anonymous page. It also spares the other recorders the attempt.
 */
static int nomap_local;
static int *nomap = &nomap_local;	/* 1: found out and said */

static void nomap_share(void)
{
	void *p = mmap(NULL, sizeof(*nomap), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);

	if (p != MAP_FAILED)
		nomap = p;
}

/* "6.1.0-57-amd64" for messages */
static const char *kernel_release(void)
{
	static struct utsname u;

	if (!u.release[0] && uname(&u))
		snprintf(u.release, sizeof(u.release), "unknown");
	return u.release;
}

/* ------------------------------------------------------------ the host */

/* Every tracefs_cpu_* function of libtracefs 1.6.4; the plugin exports each. */
static const char *const covered[] = {
	"tracefs_cpu_open", "tracefs_cpu_alloc_fd", "tracefs_cpu_close", "tracefs_cpu_free_fd",
	"tracefs_cpu_read_size", "tracefs_cpu_read", "tracefs_cpu_buffered_read",
	"tracefs_cpu_write", "tracefs_cpu_stop", "tracefs_cpu_flush", "tracefs_cpu_flush_write",
	"tracefs_cpu_pipe",
};

static bool is_covered(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(covered) / sizeof(covered[0]); i++)
		if (!strcmp(name, covered[i]))
			return true;
	return false;
}

/* What the scan of the loaded objects found. */
struct host_scan {
	const void *self;		/* load address of this plugin */
	const void *tracefs;		/* of the libtracefs the real functions come from */
	bool imports_open;		/* some object calls tracefs_cpu_open() */
	bool tracecmd;			/* ... and it is trace-cmd's recorder */
	char unknown[128];		/* a tracefs_cpu_* name the plugin does not serve */
	char unknown_in[256];		/* the object that imports or defines it */
};

/* A dynamic-section address: glibc relocates them in place, but not on every arch. */
static const void *dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) p)
{
	return (const void *)(p < info->dlpi_addr ? p + info->dlpi_addr : p);
}

/* Symbols in the dynamic symbol table, from DT_HASH or DT_GNU_HASH. */
static size_t dynsym_count(const struct dl_phdr_info *info, const ElfW(Dyn) *dyn)
{
	const uint32_t *hash = NULL, *gnu = NULL, *buckets, *chain;
	uint32_t nbuckets, symoff, bloom, i, last = 0;

	for (; dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag == DT_HASH)
			hash = dyn_ptr(info, dyn->d_un.d_ptr);
		else if (dyn->d_tag == DT_GNU_HASH)
			gnu = dyn_ptr(info, dyn->d_un.d_ptr);
	}
	if (hash)
		return hash[1];	/* nchain */
	if (!gnu)
		return 0;
	nbuckets = gnu[0];
	symoff = gnu[1];
	bloom = gnu[2];
	buckets = gnu + 4 + bloom * (sizeof(ElfW(Addr)) / 4);
	chain = buckets + nbuckets;
	for (i = 0; i < nbuckets; i++)
		if (buckets[i] > last)
			last = buckets[i];
	if (last < symoff)
		return symoff;
	while (!(chain[last - symoff] & 1))
		last++;
	return last + 1;
}

static int scan_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	const ElfW(Dyn) *dyn = NULL, *d;
	const ElfW(Sym) *sym = NULL;
	struct host_scan *h = arg;
	const char *str = NULL;
	const void *base = (const void *)info->dlpi_addr;
	bool lib, opens = false, recorder = false;
	size_t i, n;

	if (base == h->self)
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return 0;
	for (d = dyn; d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_SYMTAB)
			sym = dyn_ptr(info, d->d_un.d_ptr);
		else if (d->d_tag == DT_STRTAB)
			str = dyn_ptr(info, d->d_un.d_ptr);
	}
	if (!sym || !str)
		return 0;
	lib = h->tracefs && base == h->tracefs;
	n = dynsym_count(info, dyn);
	for (i = 0; i < n; i++) {
		const char *name = str + sym[i].st_name;
		bool undef = sym[i].st_shndx == SHN_UNDEF;

		/* trace-cmd, or libtracecmd: the recorder of lib/trace-cmd/trace-recorder.c */
		if (!undef && !strcmp(name, "tracecmd_create_buffer_recorder_fd"))
			recorder = true;
		if (strncmp(name, "tracefs_cpu_", 12))
			continue;
		/* the host's calls, and what its libtracefs offers */
		if (undef && !lib && !strcmp(name, "tracefs_cpu_open"))
			opens = true;
		if ((undef != lib) && !is_covered(name) && !h->unknown[0]) {
			snprintf(h->unknown, sizeof(h->unknown), "%s", name);
			snprintf(h->unknown_in, sizeof(h->unknown_in), "%s",
				 info->dlpi_name && *info->dlpi_name ? info->dlpi_name :
				 "the program");
		}
	}
	if (opens) {
		h->imports_open = true;
		h->tracecmd |= recorder;
	}
	return 0;
}

/* The program, as messages name it: "trace-cmd (pid 123)" */
static const char *prog(void)
{
	static char name[96];

	if (!name[0])
		snprintf(name, sizeof(name), "%s (pid %d)", program_invocation_short_name,
			 (int)getpid());
	return name;
}

/*
 * A host the plugin supports: it (or a library of it, libtracecmd for
 * trace-cmd) opens ring buffers with tracefs_cpu_open(), and neither it nor
 * its libtracefs has a tracefs_cpu_* function the plugin does not serve,
 * which would get a plugin object it cannot handle. Otherwise it says why,
 * naming the program, and lets every call through to libtracefs. Returns
 * whether the plugin serves this program.
 *
 * A program without libtracefs (timeout, env, sh: a wrapper the plugin was
 * preloaded into on its way to trace-cmd) is expected: the plugin steps aside
 * quietly (a line with verbose) and stays in LD_PRELOAD for its children.
 */
static bool check_host(void)
{
	struct host_scan h = { 0 };
	Dl_info info;

	if (dladdr((void *)check_host, &info))
		h.self = info.dli_fbase;
	h.tracefs = real.base;
	if (!real.open) {
		if (opt.verbose)
			say("no libtracefs in %s: stepping aside, staying in LD_PRELOAD for the "
			    "programs it runs", prog());
		return false;
	}
	dl_iterate_phdr(scan_object, &h);
	if (h.unknown[0]) {
		say("%s: %s has %s, which this plugin (written for libtracefs 1.6) does not "
		    "serve: stepping aside, the ring buffers are read by libtracefs", prog(),
		    h.unknown_in, h.unknown);
		return false;
	}
	if (!h.imports_open) {
		say("%s does not open ring buffers with tracefs_cpu_open(): the plugin has "
		    "nothing to do here and stays in LD_PRELOAD for the programs it runs", prog());
		return false;
	}
	if (opt.host == HOST_DETECT)
		opt.host = h.tracecmd ? HOST_TRACECMD : HOST_LIBTRACEFS;
	return true;
}

/* ------------------------------------------------------------ set-up */

static void parse_options(const char *s)
{
	char buf[512], *tok, *save = NULL, *val;

	if (!s)
		return;
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		val = strchr(tok, '=');
		if (val)
			*val++ = '\0';
		if (!strcmp(tok, "mode") && val && !strcmp(val, "consume")) {
			opt.snapshot = false;
		} else if (!strcmp(tok, "mode") && val && !strcmp(val, "snapshot")) {
			opt.snapshot = true;
		} else if (!strcmp(tok, "max-age-ms") && val && *val) {
			char *end;
			unsigned long v = strtoul(val, &end, 10);

			if (*end || v > INT_MAX)
				say("%s: max-age-ms=%s is not a number of milliseconds: ignored",
				    OPTS_ENV, val);
			else
				opt.max_age_ms = v;
		} else if (!strcmp(tok, "stats") && !val) {
			opt.stats = true;
		} else if (!strcmp(tok, "verbose") && !val) {
			opt.verbose = true;
		} else if (!strcmp(tok, "mmap") && val && (!strcmp(val, "0") ||
							    !strcmp(val, "1"))) {
			opt.disabled = val[0] == '0';
		} else if (!strcmp(tok, "host") && val && (!strcmp(val, "trace-cmd") ||
							    !strcmp(val, "libtracefs"))) {
			opt.host = val[0] == 't' ? HOST_TRACECMD : HOST_LIBTRACEFS;
		} else if (!strcmp(tok, "trace-cmd") && val) {
			/* the launcher's: which binary to run */
		} else {
			say("%s: unknown setting '%s%s%s' ignored (known: mode=consume|snapshot, "
			    "max-age-ms=N, stats, verbose, mmap=0|1, host=trace-cmd|libtracefs, trace-cmd=PATH)", OPTS_ENV,
			    tok, val ? "=" : "", val ? val : "");
		}
	}
}

/* argv[1] of this process: trace-cmd's subcommand */
static void read_subcommand(char *buf, size_t size)
{
	char cmd[256];
	ssize_t n;
	size_t len;
	int fd;

	buf[0] = '\0';
	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, cmd, sizeof(cmd) - 1);
	close(fd);
	if (n <= 0)
		return;
	cmd[n] = '\0';
	len = strlen(cmd) + 1;
	if ((ssize_t)len < n)
		snprintf(buf, size, "%s", cmd + len);
}

/* Drop this library from LD_PRELOAD so the traced command does not load it. */
static void strip_preload(void)
{
	const char *pre = getenv("LD_PRELOAD");
	char *copy, *tok, *save = NULL, *out;
	const char *self = NULL, *base;
	Dl_info info;
	size_t used = 0;

	if (!pre)
		return;
	if (dladdr((void *)strip_preload, &info) && info.dli_fname)
		self = info.dli_fname;
	copy = strdup(pre);
	out = calloc(1, strlen(pre) + 1);
	if (!copy || !out)
		goto out;
	for (tok = strtok_r(copy, ": ", &save); tok; tok = strtok_r(NULL, ": ", &save)) {
		base = strrchr(tok, '/');
		base = base ? base + 1 : tok;
		if (!strcmp(base, PLUGIN_NAME) || (self && !strcmp(tok, self)))
			continue;
		used += sprintf(out + used, "%s%s", used ? ":" : "", tok);
	}
	if (used)
		setenv("LD_PRELOAD", out, 1);
	else
		unsetenv("LD_PRELOAD");
out:
	free(copy);
	free(out);
}

/*
 * Whether this kernel maps the ring buffer, asked before extract runs in
 * snapshot mode: CPU 0 of the top level, which extract always reads and
 * snapshot mode maps anyway, is mapped for a moment (consume mode's open
 * takes no page). Only "the kernel cannot map" counts as no; any other
 * failure is left to the open of each CPU, which says what it is.
 */
static bool kernel_maps(void)
{
	struct tracemap_cpu_opts o = {
		.sz = sizeof(o), .mode = TRACEMAP_MODE_CONSUME, .flags = TRACEMAP_CPU_NO_FALLBACK,
	};
	struct tracemap_cpu *c;
	int e;

	quoting = true;
	c = tracemap_cpu_open(TRACEMAP_TOP_LEVEL, 0, &o);
	e = errno;
	quoting = false;
	tracemap_clear_error();
	tracemap_cpu_close(c);
	return c || e != EOPNOTSUPP;
}

#define RESOLVE(field, sym)	(real.field = (typeof(real.field))dlsym(RTLD_NEXT, #sym))

static void __attribute__((constructor)) tcm_init(void)
{
	const char *env = getenv(OPTS_ENV);
	char sub[64];
	Dl_info info;

	/* the launcher always sets TRACEMAP_TRACECMD, even to "" */
	opt.by_hand = !env;
	parse_options(env);

	/* all of them now: dlsym() is not async-signal-safe */
	RESOLVE(open, tracefs_cpu_open);
	RESOLVE(alloc_fd, tracefs_cpu_alloc_fd);
	RESOLVE(close, tracefs_cpu_close);
	RESOLVE(read_size, tracefs_cpu_read_size);
	RESOLVE(read, tracefs_cpu_read);
	RESOLVE(write, tracefs_cpu_write);
	RESOLVE(pipe, tracefs_cpu_pipe);
	RESOLVE(flush_write, tracefs_cpu_flush_write);
	RESOLVE(stop, tracefs_cpu_stop);
	RESOLVE(free_fd, tracefs_cpu_free_fd);
	RESOLVE(flush, tracefs_cpu_flush);
	RESOLVE(buffered_read, tracefs_cpu_buffered_read);
	RESOLVE(get_name, tracefs_instance_get_name);
	RESOLVE(get_trace_dir, tracefs_instance_get_trace_dir);
	RESOLVE(tracing_dir, tracefs_tracing_dir);
	if (real.open && dladdr((void *)real.open, &info))
		real.base = info.dli_fbase;

	tracemap_set_print(lib_print, NULL);
	if (!check_host()) {
		/* a wrapper on the way to the host: keep LD_PRELOAD and the settings */
		opt.disabled = true;
		return;
	}
	/* the host: the command it runs (trace-cmd record's workload) must not load it */
	strip_preload();
	unsetenv(OPTS_ENV);
	nomap_share();

	if (opt.snapshot && !opt.disabled) {
		read_subcommand(sub, sizeof(sub));
		if (strcmp(sub, "extract")) {
			say("mode=snapshot only applies to 'extract' (this is '%s'): consuming",
			    sub);
			opt.snapshot = false;
		} else if (!kernel_maps()) {
			/*
			 * Before trace-cmd touches anything: a consuming fallback
			 * would remove what the user asked to keep.
			 */
			say("--mode=snapshot copies the ring buffer through its memory mapping, "
			    "which this kernel (%s) does not have (Linux 6.10 or later is "
			    "needed): nothing extracted, the buffer is left as it is; without "
			    "--mode=snapshot, extract reads and removes the events as stock "
			    "trace-cmd does", kernel_release());
			_exit(2);
		}
	}
	if (opt.by_hand || opt.verbose)
		say("serving the tracefs_cpu_* calls of %s%s (%s's contract; mode=%s, "
		    "max-age-ms=%u%s)", prog(), opt.disabled ? " through libtracefs (mmap=0)" :
		    " from the ring-buffer mapping", opt.host == HOST_TRACECMD ? "trace-cmd" :
		    "libtracefs 1.6.4", opt.snapshot ? "snapshot" : "consume", opt.max_age_ms,
		    opt.stats ? ", stats" : "");
}

/* libtracefs calls its own exported functions through the PLT: leave those alone */
static bool called_from_libtracefs(const void *caller)
{
	Dl_info info;

	return real.base && dladdr(caller, &info) && info.dli_fbase == real.base;
}

/* ------------------------------------------------------------ open/close */

/* Everything but the shell; a handler that comes late sees a dead object. */
static void release_tcm(struct tcm *t)
{
	__atomic_store_n(&t->magic, TCM_DEAD, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	tracemap_cpu_close(t->c);
	t->c = NULL;
	if (t->ctrl[0] >= 0)
		close(t->ctrl[0]);
	if (t->ctrl[1] >= 0)
		close(t->ctrl[1]);
	t->ctrl[0] = t->ctrl[1] = -1;
	free(t->batch);
	free(t->queue);
	free(t->page);
	t->batch = t->queue = t->page = NULL;
}

/* An object that never made it into the registry. */
static void free_tcm(struct tcm *t)
{
	if (!t)
		return;
	release_tcm(t);
	free(t);
}

static struct tracefs_cpu *fall_back(struct tracefs_instance *instance, int cpu, bool nonblock,
				     const char *label, const char *why)
{
	say("%s: %s; reading it through libtracefs (splice) instead", label, why);
	return real.open(instance, cpu, nonblock);
}

/*
 * The kernel cannot map at all: one line for the whole run (the first
 * recorder to find out says it), one per CPU only with verbose.
 */
static struct tracefs_cpu *no_mapping(struct tracefs_instance *instance, int cpu, bool nonblock,
				      const char *label)
{
	/* pairs with itself in the other recorders of this run */
	if (!__atomic_exchange_n(nomap, 1, __ATOMIC_ACQ_REL))
		say("this kernel (%s) cannot map the ring buffer (Linux 6.10 or later is needed): "
		    "%s reads it through libtracefs (splice), as %s", kernel_release(),
		    program_invocation_short_name, opt.host == HOST_TRACECMD ?
		    "stock trace-cmd does" : "it does without the plugin");
	if (opt.verbose)
		say("%s: no mapping on this kernel; reading it through libtracefs (splice)",
		    label);
	return real.open(instance, cpu, nonblock);
}

EXPORT struct tracefs_cpu *tracefs_cpu_open(struct tracefs_instance *instance, int cpu,
					    bool nonblock)
{
	const void *caller = __builtin_return_address(0);
	struct tracemap_cpu_opts o = { .sz = sizeof(o) };
	const char *name = NULL, *dir = NULL;
	char label[80], why[640];
	struct tcm *t;
	int expect, e;

	if (!real.open) {
		errno = ENOSYS;
		return NULL;
	}
	if (opt.disabled || called_from_libtracefs(caller))
		return real.open(instance, cpu, nonblock);

	if (instance) {
		name = real.get_name ? real.get_name(instance) : NULL;
		dir = real.get_trace_dir ? real.get_trace_dir(instance) : NULL;
	}
	if (!dir && real.tracing_dir)
		dir = real.tracing_dir();
	snprintf(label, sizeof(label), "%s%s%scpu %d", name ? "instance " : "",
		 name ? name : "", name ? " " : "", cpu);
	/* another recorder of this run found the kernel without the mapping */
	if (__atomic_load_n(nomap, __ATOMIC_ACQUIRE) && !opt.snapshot)
		return no_mapping(instance, cpu, nonblock, label);

	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->ctrl[0] = t->ctrl[1] = -1;
	t->out_fd = -1;
	t->cpu = cpu;
	t->perm_nonblock = nonblock;
	t->nb = nonblock;
	snprintf(t->label, sizeof(t->label), "%s", label);

	o.mode = opt.snapshot ? TRACEMAP_MODE_SNAPSHOT : TRACEMAP_MODE_CONSUME;
	o.flags = TRACEMAP_CPU_NO_FALLBACK;
	o.tracefs_dir = dir;
	tracemap_clear_error();
	/* libtracefs's NULL instance is the top level; libtracemap wants it named */
	quoting = true;
	t->c = tracemap_cpu_open(name ? name : TRACEMAP_TOP_LEVEL, cpu, &o);
	quoting = false;
	if (!t->c) {
		e = errno;
		free_tcm(t);
		if (e == EOPNOTSUPP && !opt.snapshot)
			return no_mapping(instance, cpu, nonblock, label);
		if (opt.snapshot) {
			/* a consuming fallback would destroy what the user asked to keep */
			say("%s: cannot map the ring buffer (%s): snapshot mode needs the mapping, "
			    "nothing extracted; use mode=consume to read it through libtracefs",
			    label, *tracemap_last_error() ? tracemap_last_error() : strerror(e));
			errno = e;
			return NULL;
		}
		snprintf(why, sizeof(why), "cannot map the ring buffer (%s)",
			 *tracemap_last_error() ? tracemap_last_error() : strerror(e));
		return fall_back(instance, cpu, nonblock, label, why);
	}

	t->subbuf = tracemap_cpu_subbuf_size(t->c);
	/* the page size libtracefs (and so trace-cmd) assumes: top-level events/header_page */
	expect = tracemap_header_subbuf_size(dir);
	if (t->subbuf != expect) {
		snprintf(why, sizeof(why), "sub-buffers of %d bytes, but trace-cmd reads %d-byte "
			 "pages (events/header_page)", t->subbuf, expect);
		free_tcm(t);
		if (opt.snapshot) {
			say("%s: %s: snapshot mode cannot fall back, nothing extracted", label,
			    why);
			errno = EINVAL;
			return NULL;
		}
		return fall_back(instance, cpu, nonblock, label, why);
	}

	t->fd = tracemap_cpu_fd(t->c);
	t->exact = opt.host == HOST_LIBTRACEFS;
	t->batch = malloc((size_t)BATCH_PAGES * t->subbuf);
	if (t->exact) {
		t->queue = malloc((size_t)BATCH_PAGES * t->subbuf);
		t->page = malloc(t->subbuf);
	}
	if (!t->batch || (t->exact && (!t->queue || !t->page)) ||
	    (!nonblock && pipe2(t->ctrl, O_CLOEXEC | O_NONBLOCK))) {
		e = errno;
		free_tcm(t);
		errno = e;
		return NULL;
	}
	t->magic = TCM_MAGIC;
	if (!registry_add(t)) {
		free_tcm(t);
		snprintf(why, sizeof(why), "more than %d recorders open at once", MAX_OBJECTS);
		return fall_back(instance, cpu, nonblock, label, why);
	}
	if (opt.verbose)
		say("%s: mapped %d sub-buffers of %d bytes (%s%s)", label,
		    tracemap_cpu_nr_subbufs(t->c), t->subbuf, opt.snapshot ? "snapshot" : "consume",
		    nonblock ? ", non-blocking" : "");
	return (struct tracefs_cpu *)t;
}

EXPORT struct tracefs_cpu *tracefs_cpu_alloc_fd(int fd, int subbuf_size, bool nonblock)
{
	/* guest sockets and fifos (record -A host side), and libtracefs' own open */
	if (!real.alloc_fd) {
		errno = ENOSYS;
		return NULL;
	}
	return real.alloc_fd(fd, subbuf_size, nonblock);
}

static void print_stats(struct tcm *t)
{
	struct tracemap_cpu_stats s;

	if (tracemap_cpu_stats(t->c, &s, sizeof(s)))
		return;
	say("%s: %llu pages (%llu flushed early) %llu bytes in %llu writes; lost %llu events%s; "
	    "%llu GET_READER, %llu waits, %llu flush calls (%llu deferred); %llu pages not taken "
	    "after stop; kernel: %llu entries, %llu overrun", t->label, t->st.pages, t->st.flushed,
	    t->st.bytes, t->st.writes,
	    (unsigned long long)s.lost, s.lost_unknown ? " plus gaps of unknown size" : "",
	    (unsigned long long)s.get_reader, t->st.waits, t->st.flush_calls,
	    t->st.deferred_flushes, t->st.abandoned,
	    (unsigned long long)s.kernel_entries, (unsigned long long)s.kernel_overrun);
	/* nobody tells the sender what a UDP listener dropped: say where to look */
	if (t->out_dgram)
		say("%s: sent as %llu UDP datagrams, at most %llu in a row; the listener's "
		    "socket drops what it cannot hold without telling anyone (netstat -su "
		    "there: receive buffer errors); record -N with -t loses nothing", t->label,
		    t->st.writes, t->st.burst > t->st.max_burst ? t->st.burst : t->st.max_burst);
}

/*
 * Both ends of an object: a plugin object's fd belongs to its reader, never
 * to the caller, so close and free_fd release it alike; any other object
 * goes to @real_fn.
 */
static void release(struct tracefs_cpu *tcpu, void (*real_fn)(struct tracefs_cpu *))
{
	struct tcm *t = lookup(tcpu);

	if (!t) {
		if (tcpu && real_fn)
			real_fn(tcpu);
		return;
	}
	if (is_dead(t))
		return;
	if (opt.stats)
		print_stats(t);
	release_tcm(t);
}

EXPORT void tracefs_cpu_close(struct tracefs_cpu *tcpu)
{
	release(tcpu, real.close);
}

/*
 * libtracefs frees the object and leaves the fd it was given open. A plugin
 * object was made by tracefs_cpu_open(), which gave the caller no fd: free
 * it the way tracefs_cpu_close() does (libtracefs would free our memory).
 */
EXPORT void tracefs_cpu_free_fd(struct tracefs_cpu *tcpu)
{
	release(tcpu, real.free_fd);
}

EXPORT int tracefs_cpu_read_size(struct tracefs_cpu *tcpu)
{
	struct tcm *t = lookup(tcpu);

	if (!t)
		return real.read_size ? real.read_size(tcpu) : -1;
	return is_dead(t) ? -1 : t->subbuf;
}

/* ------------------------------------------------------------ pages */

static inline void set_busy(struct tcm *t, int v)
{
	/* the handlers run on this thread: order against them, not other CPUs */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->busy = v;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static bool partial_due(struct tcm *t)
{
	uint64_t since;

	if (!opt.max_age_ms)
		return false;
	since = tracemap_cpu_pending_since(t->c);
	return since && tracemap_now_ns() - since >= (uint64_t)opt.max_age_ms * 1000000;
}

/*
 * Up to @max whole sub-buffers into @buf: complete pages first, then at most
 * one partial page when @flush, after stop, or when the held page is older
 * than max-age-ms. Returns the number of pages or -1 with errno.
 */
static int produce(struct tcm *t, unsigned char *buf, int max, bool flush)
{
	bool want_flush = flush || t->stopped;
	unsigned int flags = 0;
	int n = 0, ret;

	while (n < max) {
		ret = tracemap_cpu_read_page(t->c, buf + (size_t)n * t->subbuf, t->subbuf, flags);
		if (ret < 0) {
			if (n)
				break;
			errno = -ret;
			return -1;
		}
		if (!ret) {
			if (flags || !(want_flush || partial_due(t)))
				break;
			flags = TRACEMAP_PAGE_FLUSH;
			continue;
		}
		n++;
		if (flags) {
			/* one page the kernel may still add to; the rest waits for the next call */
			t->st.flushed++;
			break;
		}
		if (flush)
			break;
	}
	return n;
}

/* A UDP socket (record -N without -t): the listener reads one page per datagram. */
static bool is_dgram(struct tcm *t, int wfd)
{
	socklen_t len = sizeof(int);
	struct stat st;
	int type;

	if (wfd != t->out_fd) {
		t->out_fd = wfd;
		t->out_dgram = !fstat(wfd, &st) && S_ISSOCK(st.st_mode) &&
			       !getsockopt(wfd, SOL_SOCKET, SO_TYPE, &type, &len) &&
			       type == SOCK_DGRAM;
	}
	return t->out_dgram;
}

/*
 * After stop, trace-cmd stream's parent reads the pipes only until one round
 * finds nothing, then waits for the recorders: a final flush that fills the
 * pipe after that would block forever (stock trace-cmd hangs there). So once
 * stopped, a pipe gets page-sized (atomic) writes, each only when it has room
 * within STOP_WRITE_MS; pages nobody takes are counted and dropped.
 */
static bool bounded_output(const struct tcm *t, int wfd)
{
	struct stat st;

	return t->stopped && !fstat(wfd, &st) && S_ISFIFO(st.st_mode);
}

/* Write all of @len bytes; the pages are already consumed from the buffer. */
static int write_all(struct tcm *t, int wfd, const unsigned char *buf, size_t len)
{
	struct pollfd p = { .fd = wfd, .events = POLLOUT };
	size_t done = 0, chunk = len;
	bool bounded;
	ssize_t n;

	bounded = bounded_output(t, wfd);
	if (bounded || is_dgram(t, wfd))
		chunk = t->subbuf;
	while (done < len) {
		if (bounded && poll(&p, 1, STOP_WRITE_MS) == 0) {
			t->st.abandoned += (len - done) / t->subbuf;
			errno = EPIPE;
			return -1;
		}
		n = write(wfd, buf + done, chunk < len - done ? chunk : len - done);
		if (n > 0) {
			done += n;
			t->st.writes++;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			poll(&p, 1, 100);
			continue;
		}
		return -1;
	}
	return 0;
}

/*
 * Wait for data, stop or a signal. Returns 1 to look for data again, 0 when
 * stopped, -1 with errno EINTR when a signal arrived.
 */
static int wait_input(struct tcm *t)
{
	int timeout = -1, ret;
	uint64_t since, age;
	char c[16];

	if (t->stopped)
		return 0;
	/*
	 * Over UDP the listener's socket drops what it cannot take at once: a
	 * watermark wake-up would hand it half the buffer in one burst, so
	 * complete pages go out as they fill.
	 */
	if (t->out_dgram)
		timeout = DGRAM_TICK_MS;
	if (opt.max_age_ms && (timeout < 0 || opt.max_age_ms < (unsigned int)timeout)) {
		timeout = opt.max_age_ms;
		since = tracemap_cpu_pending_since(t->c);
		if (since) {
			age = (tracemap_now_ns() - since) / 1000000;
			timeout = age >= opt.max_age_ms ? 0 : (int)(opt.max_age_ms - age);
		}
	}
	t->st.waits++;
	if (t->st.burst > t->st.max_burst)
		t->st.max_burst = t->st.burst;
	t->st.burst = 0;
	/* the library's wake-up policy: no spinning on a ready fd that hands out nothing */
	ret = tracemap_cpu_wait(t->c, t->ctrl[0], timeout);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	if (ret == TRACEMAP_WAIT_EXTRA) {
		while (read(t->ctrl[0], c, sizeof(c)) > 0)
			;
		t->stopped = 1;
		return 0;
	}
	return 1;
}

/*
 * The common body of tracefs_cpu_write/pipe/read: pages into @out (a caller
 * buffer, one page) or to @wfd (up to BATCH_PAGES). Returns bytes, 0 when
 * there is nothing, -1 with errno (EINTR when a signal interrupts a wait).
 */
static int transfer(struct tcm *t, int wfd, void *out, bool nonblock)
{
	bool block = !nonblock && !t->perm_nonblock;
	int n, max = out ? 1 : BATCH_PAGES;
	unsigned char *buf = out ? out : t->batch;
	bool flush;
	int ret;

	if (is_dead(t)) {
		errno = EBADF;
		return -1;
	}
	/* known before the first wait, so that it paces from the start */
	if (wfd >= 0)
		is_dgram(t, wfd);
	set_busy(t, 1);
	for (;;) {
		flush = t->flush_req;
		t->flush_req = 0;
		n = produce(t, buf, max, false);
		if (!n && flush)
			n = produce(t, buf, 1, true);
		if (n < 0) {
			ret = -1;
			break;
		}
		if (n) {
			t->st.pages += n;
			t->st.burst += n;
			ret = n * t->subbuf;
			if (!out && write_all(t, wfd, buf, (size_t)ret))
				ret = -1;
			else
				t->st.bytes += ret;
			break;
		}
		if (!block || t->stopped) {
			ret = 0;
			break;
		}
		set_busy(t, 0);
		ret = wait_input(t);
		set_busy(t, 1);
		if (ret < 0)
			break;
	}
	set_busy(t, 0);
	return ret;
}

/* ------------------------------------------- libtracefs 1.6.4's contract */

/*
 * For a host that is not trace-cmd, each call returns what libtracefs 1.6.4
 * (src/tracefs-record.c) returns for the same buffer: a read hands out a
 * partly filled page; write, pipe and buffered_read hand out whole pages
 * only (splice), -1/EAGAIN when non-blocking and none is complete, 0 when a
 * blocking one is woken without one; after stop the next blocking call
 * returns whether the kernel had the fd ready, and the reader never blocks
 * again. tests/plugins/tc-calls.sh runs the same calls stock and preloaded.
 */

static bool fd_ready(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/* libtracefs' wait_on_input(): 1 to read, 0 when stopped with no data ready, -1 */
static int exact_wait(struct tcm *t, bool nonblock)
{
	char c[16];
	int ret;

	if (t->perm_nonblock) {
		t->nb = 1;
		return 1;
	}
	t->nb = nonblock;
	if (nonblock)
		return 1;
	for (;;) {
		/* select() on the fd (the buffer_percent watermark) and the stop pipe */
		ret = tracemap_cpu_wait(t->c, t->ctrl[0], -1);
		if (ret < 0) {
			errno = -ret;
			return -1;
		}
		t->st.waits++;
		if (fd_ready(t->ctrl[0])) {
			while (read(t->ctrl[0], c, sizeof(c)) > 0)
				;
			t->nb = 1;
			t->perm_nonblock = true;
			return fd_ready(t->fd);
		}
		if (fd_ready(t->fd))
			return 1;
	}
}

/*
 * One wait for the reader's data or the stop request (ctrl[0]), counted:
 * tracemap_cpu_wait()'s result, or -1 with errno set.
 */
static int wait_data(struct tcm *t)
{
	int ret = tracemap_cpu_wait(t->c, t->ctrl[0], -1);

	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	t->st.waits++;
	return ret;
}

/*
 * Up to @max complete pages into @buf, as splice() from trace_pipe_raw gives
 * them after the wait: -1/EAGAIN when non-blocking and none is complete; a
 * blocking one waits, and after one wake-up (data below a page, or stop's
 * ioctl) looks once more and returns 0.
 */
static int exact_pages(struct tcm *t, unsigned char *buf, int max)
{
	bool woken = false;
	int n;

	for (;;) {
		n = produce(t, buf, max, false);
		if (n)
			return n;
		if (t->nb) {
			errno = EAGAIN;
			return -1;
		}
		if (woken)
			return 0;
		if (wait_data(t) < 0)
			return -1;
		woken = true;
	}
}

static int exact_read(struct tcm *t, void *buffer, bool nonblock)
{
	int n, ret = exact_wait(t, nonblock);

	if (ret <= 0)
		return ret;
	for (;;) {
		/* read() of trace_pipe_raw: a partly filled page too */
		n = produce(t, buffer, 1, true);
		if (n < 0)
			return -1;
		if (n) {
			t->st.pages++;
			t->st.bytes += t->subbuf;
			return t->subbuf;
		}
		if (t->nb) {
			/* EAGAIN, which libtracefs turns into 0 with errno 0 */
			errno = 0;
			return 0;
		}
		/* a blocking read() waits for data; stop (O_NONBLOCK and the ioctl) ends it */
		ret = wait_data(t);
		if (ret < 0)
			return -1;
		if (ret == TRACEMAP_WAIT_EXTRA)
			t->nb = 1;
	}
}

/* One page of buffered_read's queue (libtracefs' splice pipe) into @buffer. */
static int exact_dequeue(struct tcm *t, void *buffer)
{
	memcpy(buffer, t->queue + (size_t)t->qpos * t->subbuf, t->subbuf);
	t->qpos++;
	t->queued--;
	return t->subbuf;
}

static int exact_buffered_read(struct tcm *t, void *buffer, bool nonblock)
{
	int n, ret;

	if (t->queued)
		return exact_dequeue(t, buffer);
	ret = exact_wait(t, nonblock);
	if (ret <= 0)
		return ret;
	t->spliced = true;
	n = exact_pages(t, t->queue, BATCH_PAGES);
	if (n <= 0)
		return n;
	t->st.pages += n;
	t->st.bytes += (uint64_t)n * t->subbuf;
	t->queued = n;
	t->qpos = 0;
	return exact_dequeue(t, buffer);
}

static int exact_flush(struct tcm *t, void *buffer)
{
	int n;

	/* flush makes the fd non-blocking, as libtracefs does */
	t->nb = 1;
	if (t->queued)
		return exact_dequeue(t, buffer);
	n = produce(t, buffer, 1, true);
	if (n < 0)
		return -1;
	if (!n) {
		errno = 0;
		return 0;
	}
	t->st.pages++;
	t->st.bytes += t->subbuf;
	return t->subbuf;
}

static int exact_flush_write(struct tcm *t, int wfd)
{
	int ret = exact_flush(t, t->page);

	if (ret > 0)
		ret = write(wfd, t->page, ret);
	if (ret < 0 && errno == EAGAIN)
		ret = 0;
	return ret;
}

/* write and pipe: complete pages to @wfd; buffered_read's queue goes first */
static int exact_write(struct tcm *t, int wfd, bool nonblock, bool is_pipe)
{
	int n, ret = exact_wait(t, nonblock);
	size_t len;

	if (ret <= 0)
		return ret;
	/* libtracefs 1.6.4's pipe splices pipe_size bytes, 0 until a write set it up */
	if (is_pipe && !t->spliced)
		return 0;
	t->spliced = true;
	n = exact_pages(t, t->batch, BATCH_PAGES);
	if (n <= 0)
		return n;
	t->st.pages += n;
	len = (size_t)n * t->subbuf;
	if (t->queued) {
		if (write_all(t, wfd, t->queue + (size_t)t->qpos * t->subbuf,
			      (size_t)t->queued * t->subbuf))
			return -1;
		len += (size_t)t->queued * t->subbuf;
		t->queued = 0;
	}
	if (write_all(t, wfd, t->batch, (size_t)n * t->subbuf))
		return -1;
	t->st.bytes += len;
	return len;
}

/* Async-signal-safe: libtracefs' stop, which does nothing on a non-blocking reader. */
static int exact_stop(struct tcm *t)
{
	int e = errno, ret;

	if (t->perm_nonblock)
		return 0;
	if (write(t->ctrl[1], "s", 1) < 0 && errno != EAGAIN)
		return -1;
	ret = ioctl(t->fd, 0) < 0 ? 1 : 0;
	t->nb = 1;
	errno = e;
	return ret;
}

/* Pages to @wfd for write and pipe (@is_pipe); other objects go to @real_fn. */
static int write_out(struct tracefs_cpu *tcpu, int wfd, bool nonblock, bool is_pipe,
		     int (*real_fn)(struct tracefs_cpu *, int, bool))
{
	struct tcm *t = lookup(tcpu);

	if (!t)
		return real_fn ? real_fn(tcpu, wfd, nonblock) : -1;
	if (t->exact && !is_dead(t))
		return exact_write(t, wfd, nonblock, is_pipe);
	return transfer(t, wfd, NULL, nonblock);
}

EXPORT int tracefs_cpu_write(struct tracefs_cpu *tcpu, int wfd, bool nonblock)
{
	return write_out(tcpu, wfd, nonblock, false, real.write);
}

EXPORT int tracefs_cpu_pipe(struct tracefs_cpu *tcpu, int wfd, bool nonblock)
{
	return write_out(tcpu, wfd, nonblock, true, real.pipe);
}

/* One page into @buffer for read and buffered_read; other objects go to @real_fn. */
static int read_into(struct tracefs_cpu *tcpu, void *buffer, bool nonblock,
		     int (*real_fn)(struct tracefs_cpu *, void *, bool))
{
	struct tcm *t = lookup(tcpu);

	if (!t)
		return real_fn ? real_fn(tcpu, buffer, nonblock) : -1;
	if (!buffer) {
		errno = EINVAL;
		return -1;
	}
	if (t->exact && !is_dead(t))
		return real_fn == real.buffered_read ? exact_buffered_read(t, buffer, nonblock) :
			exact_read(t, buffer, nonblock);
	return transfer(t, -1, buffer, nonblock);
}

EXPORT int tracefs_cpu_read(struct tracefs_cpu *tcpu, void *buffer, bool nonblock)
{
	return read_into(tcpu, buffer, nonblock, real.read);
}

/* libtracefs: whole pages through a pipe; here the same pages read hands out */
EXPORT int tracefs_cpu_buffered_read(struct tracefs_cpu *tcpu, void *buffer, bool nonblock)
{
	return read_into(tcpu, buffer, nonblock, real.buffered_read);
}

/*
 * What is left, without waiting: one page per call, a partial one
 * included, 0 when nothing is left (libtracefs returns the bytes read).
 */
EXPORT int tracefs_cpu_flush(struct tracefs_cpu *tcpu, void *buffer)
{
	struct tcm *t = lookup(tcpu);
	int n, e = errno;

	if (!t)
		return real.flush ? real.flush(tcpu, buffer) : -1;
	if (!buffer) {
		errno = EINVAL;
		return -1;
	}
	if (is_dead(t))
		return 0;
	if (t->exact)
		return exact_flush(t, buffer);
	set_busy(t, 1);
	n = produce(t, buffer, 1, true);
	set_busy(t, 0);
	if (n < 0)
		return -1;
	t->st.pages += n;
	t->st.bytes += n * t->subbuf;
	errno = e;
	return n * t->subbuf;
}

/* Async-signal-safe: SIGUSR1/SIGALRM handlers of trace-cmd's recorders. */
EXPORT int tracefs_cpu_stop(struct tracefs_cpu *tcpu)
{
	struct tcm *t = lookup(tcpu);
	int e = errno, ret;

	if (!t)
		return real.stop ? real.stop(tcpu) : -1;
	if (is_dead(t))
		return 0;
	if (t->exact)
		return exact_stop(t);
	t->stopped = 1;
	if (t->perm_nonblock)
		return 0;	/* as libtracefs: a non-blocking reader never waits */
	if (write(t->ctrl[1], "s", 1) < 0 && errno != EAGAIN)
		return -1;
	/* the kernel's "wake all waiters", as libtracefs does */
	ret = ioctl(t->fd, 0) < 0 ? 1 : 0;
	errno = e;
	return ret;
}

/* Async-signal-safe: the SIGUSR2 handler of trace-cmd stream's recorders. */
EXPORT int tracefs_cpu_flush_write(struct tracefs_cpu *tcpu, int wfd)
{
	struct tcm *t = lookup(tcpu);
	int n, ret, e = errno;

	if (!t)
		return real.flush_write ? real.flush_write(tcpu, wfd) : -1;
	if (is_dead(t))
		return 0;
	if (t->exact)
		return exact_flush_write(t, wfd);
	t->st.flush_calls++;
	if (t->busy) {
		/* interrupted the main flow in the middle of producing: it flushes later */
		t->flush_req = 1;
		t->st.deferred_flushes++;
		return 0;
	}
	set_busy(t, 1);
	n = produce(t, t->batch, 1, true);
	if (n < 0) {
		/* EAGAIN never: a flush with nothing to hand out returns 0 */
		set_busy(t, 0);
		return -1;
	}
	ret = 0;
	if (n) {
		ret = t->subbuf;
		t->st.pages++;
		t->st.burst++;
		if (write_all(t, wfd, t->batch, ret))
			ret = -1;
		else
			t->st.bytes += ret;
	}
	set_busy(t, 0);
	if (ret >= 0)
		errno = e;
	return ret;
}
