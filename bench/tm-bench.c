// SPDX-License-Identifier: GPL-2.0-only
/*
 * tm-bench: measure one consumer at one offered rate, once.
 *
 *   tm-bench -n name -r rate -d ms -k own|self|text|raw|dat -o outdir [-R rep]
 *            [-b buffer_kb] [-W writer_cpu] [-C reader_cpu] [-S stop_timeout_ms]
 *            -- command [args...]
 *
 * Creates a private instance (1 MiB per CPU by default), starts the command
 * in its own process group pinned to the reader CPU, waits until it reads
 * the instance, runs the paced marker writer pinned to the writer CPU, lets
 * the consumer catch up, sends SIGINT to the group (what Ctrl-C does) and
 * measures until the group has exited. A group still there after the stop
 * timeout "did not stop" and is killed. The placeholders {I} (instance),
 * {T} (marker tag), {O} (output prefix) and {R} (ready fd) are replaced in
 * the command's arguments.
 *
 * How delivered markers are counted (-k):
 *   own   the command is tm-consume and prints its own counts on stdout
 *   self  the same counts, and the CPU is the consumer's own self_cpu_ns (from
 *         ready to exit, its children included): for interpreters whose
 *         start-up costs more CPU than the run, where the group's rusage at
 *         exit minus its schedstat time at ready does not add up
 *   text  stdout is decoded text: every "raw_data: id:<hex seq>" (libtraceevent's
 *         format) or "raw_data: # <hex seq> <bytes>" (trace-cmd's) is a marker
 *   raw   stdout has one line per event (tracemap stream --raw); counted
 *         lines carry no sequence number
 *   dat   {O}.dat is a trace.dat, read back with libtracecmd
 *
 * CPU is the user+sys time of every process of the group from the moment
 * the consumer was ready and idle until all of them exited (wait4() of each,
 * this program is their child subreaper), so trace-cmd's per-CPU recorders,
 * flushes and the final trace.dat write are included.
 *
 * Prints one line of key=value pairs; bench/run-bench.sh collects them.
 *
 * tm-bench -J spins on both CPUs for -d ms and reports the gaps the platform
 * (interrupts, host preemption of the vCPUs) puts between two clock reads.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <trace-cmd.h>

#include "bench.h"

struct opts {
	const char *name;
	const char *kind;
	const char *outdir;
	uint64_t rate;
	uint64_t duration_ms;
	int rep;
	int buffer_kb;
	int writer_cpu;
	int reader_cpu;
	int stop_timeout_ms;
	char **cmd;
};

struct result {
	uint64_t written, failed;
	double achieved;
	uint64_t delivered, unique, dups, late, other;
	uint64_t reported_lost, reported_unknown;
	uint64_t kernel_overrun, undrained;
	uint64_t cpu_ns, self_cpu_ns;
	uint64_t lat_n, lat_p50, lat_p99, lat_max;
	uint64_t file_bytes;
	double stop_ms;
	double ready_ms;
	double other_pct;		/* CPU time of anything else on the two CPUs, % */
	bool stopped;
	bool noseq;
	const char *error;
};

static pid_t child_pgid;
static const char *instance;

static void kill_group(void)
{
	if (child_pgid > 0)
		kill(-child_pgid, SIGKILL);
}

static void die(const char *msg)
{
	kill_group();
	fprintf(stderr, "tm-bench: %s\n", msg);
	exit(1);
}

/* ------------------------------------------------------------- the group */

static long clk_tck;

/*
 * If /proc/@pid is a process of group @pgid, its stat line in @buf and a
 * pointer to the ')' that ends its name (the fields follow); else NULL.
 */
static char *group_member_stat(const char *pid, pid_t pgid, char *buf, size_t size)
{
	char path[288], *p;
	ssize_t n;
	int fd, pgrp;

	if (pid[0] < '1' || pid[0] > '9')
		return NULL;
	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %d", &pgrp) != 1 || pgrp != pgid)
		return NULL;
	return p;
}

/* CPU ns of every live process of the group plus what they already reaped */
static uint64_t group_cpu_ns(pid_t pgid)
{
	uint64_t sum = 0;
	struct dirent *d;
	DIR *proc;

	proc = opendir("/proc");
	if (!proc)
		return 0;
	while ((d = readdir(proc))) {
		char path[288], buf[1024], *p;
		unsigned long long cut, cst;
		struct dirent *t;
		ssize_t n;
		DIR *task;
		int fd, i;

		p = group_member_stat(d->d_name, pgid, buf, sizeof(buf));
		if (!p)
			continue;
		/*
		 * fields 16, 17: cutime, cstime (ticks) of reaped children. @p is
		 * at the ')' before field 3: the 14th space after it precedes
		 * field 16. (13 read stime and cutime: the baseline at ready
		 * then held the consumer's system time twice, and its CPU came
		 * out low by that, most per event at low rates: tracemap stream
		 * at 100k events/s said 14 to 200 ns per event where its run
		 * time during the writer's second was 740 to 1,200.)
		 */
		for (i = 0; i < 14 && p; i++)
			p = strchr(p + 1, ' ');
		if (p && sscanf(p + 1, "%llu %llu", &cut, &cst) == 2)
			sum += (cut + cst) * (1000000000ull / clk_tck);
		/* live threads: exact run time from schedstat */
		snprintf(path, sizeof(path), "/proc/%s/task", d->d_name);
		task = opendir(path);
		if (!task)
			continue;
		while ((t = readdir(task))) {
			unsigned long long run;

			if (t->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/task/%s/schedstat", d->d_name,
				 t->d_name);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			if (n > 0) {
				buf[n] = '\0';
				if (sscanf(buf, "%llu", &run) == 1)
					sum += run;
			}
		}
		closedir(task);
	}
	closedir(proc);
	return sum;
}

/* Busy time (everything but idle and iowait) of the writer and reader CPUs, from /proc/stat */
static uint64_t cpus_busy_ns(const struct opts *o)
{
	unsigned long long us, ni, sy, id, io, irq, sirq, st, sum = 0;
	char line[512], want1[16], want2[16];
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		return 0;
	snprintf(want1, sizeof(want1), "cpu%d ", o->writer_cpu);
	snprintf(want2, sizeof(want2), "cpu%d ", o->reader_cpu);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, want1, strlen(want1)) && strncmp(line, want2, strlen(want2)))
			continue;
		if (sscanf(strchr(line, ' '), "%llu %llu %llu %llu %llu %llu %llu %llu", &us, &ni,
			   &sy, &id, &io, &irq, &sirq, &st) == 8)
			sum += us + ni + sy + irq + sirq + st;
	}
	fclose(f);
	return sum * (1000000000ull / clk_tck);
}

/* Does some process of the group hold per_cpu/cpuN/trace_pipe_raw of the instance open? */
static int group_open_cpus(pid_t pgid, int nr_cpus)
{
	char want[160];
	uint64_t seen = 0;
	struct dirent *d;
	size_t wl;
	DIR *proc;
	int i, n = 0;

	wl = snprintf(want, sizeof(want), "/instances/%s/per_cpu/cpu", instance);
	proc = opendir("/proc");
	if (!proc)
		return 0;
	while ((d = readdir(proc))) {
		char path[300], buf[512], *p;
		struct dirent *f;
		ssize_t len;
		DIR *fds;

		if (!group_member_stat(d->d_name, pgid, buf, sizeof(buf)))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd", d->d_name);
		fds = opendir(path);
		if (!fds)
			continue;
		while ((f = readdir(fds))) {
			char link[300];

			if (f->d_name[0] == '.')
				continue;
			snprintf(link, sizeof(link), "/proc/%s/fd/%s", d->d_name, f->d_name);
			len = readlink(link, buf, sizeof(buf) - 1);
			if (len <= 0)
				continue;
			buf[len] = '\0';
			p = strstr(buf, want);
			if (p && strstr(p + wl, "/trace_pipe_raw")) {
				i = atoi(p + wl);
				if (i >= 0 && i < 64)
					seen |= 1ull << i;
			}
		}
		closedir(fds);
	}
	closedir(proc);
	for (i = 0; i < nr_cpus && i < 64; i++)
		n += !!(seen & (1ull << i));
	return n;
}

/* ------------------------------------------------------------- counting */

static void parse_own(const char *line, struct result *r)
{
	static const struct { const char *key; size_t off; } keys[] = {
#define K(k, f) { k "=", offsetof(struct result, f) }
		K("delivered", delivered), K("dups", dups), K("late", late),
		K("other", other), K("lost", reported_lost),
		K("lost_unknown", reported_unknown), K("self_cpu_ns", self_cpu_ns),
		K("lat_n", lat_n), K("lat_p50_ns", lat_p50), K("lat_p99_ns", lat_p99),
		K("lat_max_ns", lat_max),
#undef K
	};
	const char *p;
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		size_t kl = strlen(keys[i].key);

		for (p = line; (p = strstr(p, keys[i].key)); p += kl) {
			if (p == line || p[-1] == ' ') {
				*(uint64_t *)((char *)r + keys[i].off) = strtoull(p + kl, NULL, 10);
				break;
			}
		}
	}
	p = strstr(line, "noseq=");
	r->noseq = p && p[6] == '1';
	r->unique = r->delivered - r->dups;
}

/* "CPU:N [n EVENTS DROPPED]" or "[EVENTS DROPPED]" (count unknown) */
static void count_dropped(const char *line, struct result *r)
{
	const char *p = strstr(line, "EVENTS DROPPED]");
	const char *b;

	if (!p)
		return;
	for (b = p; b > line && b[-1] != '['; b--)
		;
	if (b == p)
		r->reported_unknown++;
	else
		r->reported_lost += strtoull(b, NULL, 10);
}

static int count_text(const char *path, struct result *r, bool raw)
{
	struct bn_seq s;
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return -1;
	bn_seq_init(&s);
	while (getline(&line, &cap, f) > 0) {
		const char *p;

		if (strstr(line, "EVENTS DROPPED]")) {
			count_dropped(line, r);
			continue;
		}
		if (raw) {
			/* one event per line that starts with a CPU column */
			if (line[0] == '[' || (line[0] >= '0' && line[0] <= '9'))
				s.delivered++;
			continue;
		}
		/* libtraceevent's format "id:%04x ..." or trace-cmd's "# %x <bytes>" */
		p = strstr(line, "raw_data:");
		if (!p)
			continue;
		for (p += 9; *p == ' '; p++)
			;
		if (!strncmp(p, "id:", 3))
			p += 3;
		else if (!strncmp(p, "# ", 2))
			p += 2;
		else
			continue;
		bn_seq_add(&s, strtoull(p, NULL, 16));
	}
	free(line);
	fclose(f);
	r->delivered = s.delivered;
	r->dups = s.dups;
	r->late = s.late;
	r->unique = s.delivered - s.dups;
	r->noseq = raw;
	bn_seq_free(&s);
	return 0;
}

struct dat_ctx {
	struct bn_seq seq;
	struct result *r;
	uint32_t tag;
	int raw_id;
};

static int dat_record(struct tracecmd_input *h, struct tep_record *rec, int cpu, void *data)
{
	struct dat_ctx *c = data;
	const struct bn_marker *m = (const void *)((const char *)rec->data + BN_RAW_OFF);

	if (rec->missed_events > 0)
		c->r->reported_lost += rec->missed_events;
	else if (rec->missed_events < 0)
		c->r->reported_unknown++;
	if (rec->size < (int)BN_RAW_SIZE || *(const uint16_t *)rec->data != c->raw_id ||
	    m->tag != c->tag) {
		c->seq.other++;
		return 0;
	}
	bn_seq_add(&c->seq, m->seq);
	return 0;
}

static int count_dat(const char *path, struct result *r, uint32_t tag)
{
	struct dat_ctx c = { .r = r, .tag = tag };
	struct tracecmd_input *h, *b;
	struct tep_event *ev;
	struct stat st;
	int i, n;

	if (stat(path, &st))
		return -1;
	r->file_bytes = st.st_size;
	tracecmd_set_loglevel(TEP_LOG_NONE);
	h = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
	if (!h)
		return -1;
	ev = tep_find_event_by_name(tracecmd_get_tep(h), "ftrace", "raw_data");
	c.raw_id = ev ? ev->id : -1;
	bn_seq_init(&c.seq);
	tracecmd_iterate_events(h, NULL, 0, dat_record, &c);
	n = tracecmd_buffer_instances(h);
	for (i = 0; i < n; i++) {
		b = tracecmd_buffer_instance_handle(h, i);
		if (!b)
			continue;
		tracecmd_iterate_events(b, NULL, 0, dat_record, &c);
		tracecmd_close(b);
	}
	tracecmd_close(h);
	r->delivered = c.seq.delivered;
	r->dups = c.seq.dups;
	r->late = c.seq.late;
	r->other = c.seq.other;
	r->unique = c.seq.delivered - c.seq.dups;
	bn_seq_free(&c.seq);
	return 0;
}

/* ------------------------------------------------------------- one run */

static char *subst(const char *arg, const char *tag, const char *out, const char *rfd)
{
	char buf[1024];
	size_t n = 0;

	while (*arg && n < sizeof(buf) - 1) {
		const char *v = NULL;

		if (arg[0] == '{' && arg[1] && arg[2] == '}') {
			switch (arg[1]) {
			case 'I': v = instance; break;
			case 'T': v = tag; break;
			case 'O': v = out; break;
			case 'R': v = rfd; break;
			}
		}
		if (v) {
			n += snprintf(buf + n, sizeof(buf) - n, "%s", v);
			if (n >= sizeof(buf))
				n = sizeof(buf) - 1;
			arg += 3;
		} else {
			buf[n++] = *arg++;
		}
	}
	buf[n] = '\0';
	return strdup(buf);
}

static uint64_t ru_ns(const struct rusage *ru)
{
	return (uint64_t)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000000000ull +
	       (uint64_t)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) * 1000ull;
}

/* Reap every process of ours; returns their CPU ns (leader included). */
static uint64_t reap_all(void)
{
	struct rusage ru;
	uint64_t sum = 0;
	pid_t p;

	while ((p = wait4(-1, NULL, 0, &ru)) > 0 || (p < 0 && errno == EINTR))
		if (p > 0)
			sum += ru_ns(&ru);
	return sum;
}

static void run(const struct opts *o, struct result *r)
{
	char tag[16], out[512], rfd[16], path[600], line[1024];
	int nr_cpus = bn_nr_cpus(), pipefd[2] = { -1, -1 }, outfd, i, pidfd;
	bool own = !strcmp(o->kind, "own") || !strcmp(o->kind, "self");
	struct bn_load l = { 0 };
	uint64_t t, cpu0 = 0, last, g0, g1, b0, b1, w0, w1;
	struct rusage ru;
	char **argv;
	pid_t pid;
	int argc;

	l.tag = (uint32_t)(getpid() * 2654435761u) ^ (uint32_t)bn_now();
	snprintf(tag, sizeof(tag), "%u", l.tag);
	snprintf(out, sizeof(out), "%s/%s-%llu-%d", o->outdir, o->name,
		 (unsigned long long)o->rate, o->rep);
	if (own && pipe2(pipefd, O_CLOEXEC))
		die("pipe");
	snprintf(rfd, sizeof(rfd), "%d", pipefd[1] >= 0 ? 3 : -1);
	for (argc = 0; o->cmd[argc]; argc++)
		;
	argv = calloc(argc + 1, sizeof(*argv));
	for (i = 0; i < argc; i++)
		argv[i] = subst(o->cmd[i], tag, out, rfd);

	snprintf(path, sizeof(path), "%s.%s", out, own ? "res" : "out");
	outfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (outfd < 0)
		die("cannot create the output file");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		setpgid(0, 0);
		bn_pin(o->reader_cpu);
		dup2(outfd, 1);
		snprintf(path, sizeof(path), "%s.err", out);
		i = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (i >= 0)
			dup2(i, 2);
		if (pipefd[1] == 3)
			fcntl(3, F_SETFD, 0);
		else if (pipefd[1] >= 0)
			dup2(pipefd[1], 3);	/* dup2 clears O_CLOEXEC */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	child_pgid = pid;
	close(outfd);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		die("pidfd_open (Linux >= 5.3) failed");

	/* ready: told by tm-consume, or every CPU file open and tracing on */
	t = bn_now();
	for (;;) {
		struct pollfd p = { .fd = own ? pipefd[0] : pidfd, .events = POLLIN };
		char c;

		if (own) {
			if (poll(&p, 1, 15000) == 1 && read(pipefd[0], &c, 1) == 1)
				break;
			r->error = "consumer-not-ready";
			goto stop;
		}
		if (poll(&p, 1, 5) == 1) {
			r->error = "consumer-exited";
			goto stop;
		}
		if (group_open_cpus(pid, nr_cpus) == nr_cpus &&
		    bn_instance_read(instance, "tracing_on", line, sizeof(line)) > 0 &&
		    line[0] == '1')
			break;
		if (bn_now() - t > 15000000000ull) {
			r->error = "consumer-not-ready";
			goto stop;
		}
	}
	r->ready_ms = (bn_now() - t) / 1e6;
	/*
	 * idle: setup work is done once the group's CPU time stops growing;
	 * bounded at 300 ms for busy pollers, which never stop
	 */
	cpu0 = group_cpu_ns(pid);
	for (i = 0; i < 15; i++) {
		usleep(20000);
		last = cpu0;
		cpu0 = group_cpu_ns(pid);
		if (cpu0 - last < 300000)
			break;
	}

	bn_pin(o->writer_cpu);
	l.fd = bn_load_open(instance);
	if (l.fd < 0)
		die("cannot open trace_marker_raw");
	l.rate = o->rate;
	l.duration_ns = o->duration_ms * 1000000ull;
	g0 = group_cpu_ns(pid);
	b0 = cpus_busy_ns(o);
	getrusage(RUSAGE_THREAD, &ru);
	w0 = ru_ns(&ru);
	bn_load_run(&l);
	getrusage(RUSAGE_THREAD, &ru);
	w1 = ru_ns(&ru);
	b1 = cpus_busy_ns(o);
	g1 = group_cpu_ns(pid);
	close(l.fd);
	r->written = l.written;
	r->failed = l.failed;
	r->achieved = l.written * 1e9 / (double)l.elapsed_ns;
	/* what else ran on the two CPUs meanwhile: other processes, interrupts, steal */
	if (b1 - b0 > (g1 - g0) + (w1 - w0))
		r->other_pct = (double)(b1 - b0 - (g1 - g0) - (w1 - w0)) * 100.0 /
			       (2.0 * (double)l.elapsed_ns);

	/* let it catch up: until nothing is unread or nothing moves for 250 ms (<= 2 s) */
	{
		long long prev = -1, now_sum;
		uint64_t since = bn_now(), start = since;

		for (;;) {
			long long unread = 0;

			now_sum = 0;
			for (i = 0; i < nr_cpus; i++) {
				long long e = bn_cpu_stat(instance, i, "entries");
				long long rd = bn_cpu_stat(instance, i, "read events");

				unread += e > 0 ? e : 0;
				now_sum += (e > 0 ? e : 0) + (rd > 0 ? rd : 0) * 3;
			}
			if (!unread || bn_now() - start > 2000000000ull)
				break;
			if (now_sum != prev) {
				prev = now_sum;
				since = bn_now();
			} else if (bn_now() - since > 250000000ull) {
				break;
			}
			usleep(5000);
		}
	}
	for (i = 0; i < nr_cpus; i++) {
		long long v = bn_cpu_stat(instance, i, "overrun");

		r->kernel_overrun += v > 0 ? v : 0;
		v = bn_cpu_stat(instance, i, "entries");
		r->undrained += v > 0 ? v : 0;
	}

stop:
	/* Ctrl-C: SIGINT to the whole group */
	t = bn_now();
	kill(-pid, SIGINT);
	{
		struct pollfd p = { .fd = pidfd, .events = POLLIN };
		int left = o->stop_timeout_ms;

		r->stopped = false;
		while (left > 0) {
			int n = poll(&p, 1, left);

			if (n == 1) {
				r->stopped = true;
				break;
			}
			if (n == 0 || (n < 0 && errno != EINTR))
				break;
			left = o->stop_timeout_ms - (int)((bn_now() - t) / 1000000);
		}
	}
	r->stop_ms = (bn_now() - t) / 1e6;
	if (!r->stopped)
		kill(-pid, SIGKILL);
	if (wait4(pid, NULL, 0, &ru) == pid)
		r->cpu_ns = ru_ns(&ru);
	/* the rest of the group (orphans come to us, the subreaper) */
	kill(-pid, SIGKILL);
	r->cpu_ns += reap_all();
	if (getenv("BN_DEBUG"))
		fprintf(stderr, "cpu total %llu baseline %llu\n", (unsigned long long)r->cpu_ns,
			(unsigned long long)cpu0);
	r->cpu_ns = r->cpu_ns > cpu0 ? r->cpu_ns - cpu0 : 0;
	child_pgid = 0;
	close(pidfd);

	if (r->error)
		return;
	if (own) {
		FILE *f;

		snprintf(path, sizeof(path), "%s.res", out);
		f = fopen(path, "r");
		if (!f || !fgets(line, sizeof(line), f)) {
			r->error = "no-consumer-result";
		} else {
			parse_own(line, r);
			if (!strcmp(o->kind, "self"))
				r->cpu_ns = r->self_cpu_ns;
		}
		if (f)
			fclose(f);
	} else if (!strcmp(o->kind, "text") || !strcmp(o->kind, "raw")) {
		snprintf(path, sizeof(path), "%s.out", out);
		if (count_text(path, r, !strcmp(o->kind, "raw")))
			r->error = "no-output";
		else if (getenv("BN_KEEP") == NULL)
			unlink(path);
	} else if (!strcmp(o->kind, "dat")) {
		snprintf(path, sizeof(path), "%s.dat", out);
		if (count_dat(path, r, l.tag))
			r->error = "no-trace.dat";
		else if (getenv("BN_KEEP") == NULL)
			unlink(path);
	}
	for (i = 0; argv[i]; i++)
		free(argv[i]);
	free(argv);
}

/*
 * What the platform takes from a CPU that never sleeps: gaps between two
 * consecutive clock reads of a spinning loop (interrupts, host preemption
 * of the vCPU). Both CPUs spin at once, as writer and busy reader do.
 */
struct gaps {
	unsigned long long over100us, over1ms, max_ns, lost_ns;
};

static void spin_gaps(uint64_t ns, struct gaps *g)
{
	uint64_t start = bn_now(), prev = start, now, d;

	memset(g, 0, sizeof(*g));
	while ((now = bn_now()) - start < ns) {
		d = now - prev;
		prev = now;
		if (d > 100000) {
			g->over100us++;
			g->lost_ns += d;
		}
		if (d > 1000000)
			g->over1ms++;
		if (d > g->max_ns)
			g->max_ns = d;
	}
}

static int jitter(const struct opts *o)
{
	struct gaps g[2];
	int fd[2], i;
	pid_t pid;

	if (pipe(fd))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		bn_pin(o->reader_cpu);
		spin_gaps(o->duration_ms * 1000000ull, &g[1]);
		_exit(write(fd[1], &g[1], sizeof(g[1])) != sizeof(g[1]));
	}
	bn_pin(o->writer_cpu);
	spin_gaps(o->duration_ms * 1000000ull, &g[0]);
	if (read(fd[0], &g[1], sizeof(g[1])) != sizeof(g[1]))
		die("the jitter probe on the reader CPU failed");
	waitpid(pid, NULL, 0);
	for (i = 0; i < 2; i++)
		printf("cpu%d: %llu gaps > 100 us (%llu > 1 ms, max %.1f ms, %.1f ms in all) in %llu ms%s",
		       i ? o->reader_cpu : o->writer_cpu, g[i].over100us, g[i].over1ms,
		       g[i].max_ns / 1e6, g[i].lost_ns / 1e6, (unsigned long long)o->duration_ms,
		       i ? "\n" : "; ");
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: tm-bench -n name -r rate -d ms -k own|self|text|raw|dat -o outdir "
		"[-R rep] [-b buffer_kb] [-W writer_cpu] [-C reader_cpu] [-S stop_timeout_ms] "
		"-- command [args...]\n       tm-bench -J [-d ms] [-W writer_cpu] [-C reader_cpu]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	struct opts o = {
		.kind = "own", .duration_ms = 1000, .buffer_kb = 1024, .writer_cpu = 0,
		.reader_cpu = 1, .stop_timeout_ms = 3000, .outdir = "/tmp",
	};
	struct result r = { 0 };
	bool jitter_only = false;
	uint64_t missing;
	int opt;

	while ((opt = getopt(argc, argv, "+Jn:r:d:k:o:R:b:W:C:S:h")) != -1) {
		switch (opt) {
		case 'J': jitter_only = true; break;
		case 'n': o.name = optarg; break;
		case 'r': o.rate = strtoull(optarg, NULL, 0); break;
		case 'd': o.duration_ms = strtoull(optarg, NULL, 0); break;
		case 'k': o.kind = optarg; break;
		case 'o': o.outdir = optarg; break;
		case 'R': o.rep = atoi(optarg); break;
		case 'b': o.buffer_kb = atoi(optarg); break;
		case 'W': o.writer_cpu = atoi(optarg); break;
		case 'C': o.reader_cpu = atoi(optarg); break;
		case 'S': o.stop_timeout_ms = atoi(optarg); break;
		default: usage();
		}
	}
	if (jitter_only)
		return jitter(&o);
	if (!o.name || optind >= argc)
		usage();
	o.cmd = argv + optind;
	clk_tck = sysconf(_SC_CLK_TCK);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1))
		die("cannot become a child subreaper");
	ti_on_signal(kill_group);
	instance = bn_instance_create(o.buffer_kb);
	if (!instance)
		return 1;

	run(&o, &r);
	ti_instance_remove(instance);

	missing = r.written > r.unique ? r.written - r.unique : 0;
	printf("name=%s rate=%llu rep=%d written=%llu achieved=%.0f failed=%llu delivered=%llu "
	       "unique=%llu missing=%llu dups=%llu late=%llu other=%llu noseq=%d "
	       "reported_lost=%llu reported_unknown=%llu kernel_overrun=%llu undrained=%llu "
	       "cpu_ns=%llu self_cpu_ns=%llu cpu_per_ev=%.1f stop_ms=%.1f stopped=%d "
	       "ready_ms=%.1f file_bytes=%llu lat_n=%llu lat_p50_ns=%llu lat_p99_ns=%llu "
	       "lat_max_ns=%llu other_pct=%.1f error=%s\n",
	       o.name, (unsigned long long)o.rate, o.rep, (unsigned long long)r.written,
	       r.achieved, (unsigned long long)r.failed, (unsigned long long)r.delivered,
	       (unsigned long long)r.unique, (unsigned long long)missing,
	       (unsigned long long)r.dups, (unsigned long long)r.late,
	       (unsigned long long)r.other, r.noseq, (unsigned long long)r.reported_lost,
	       (unsigned long long)r.reported_unknown, (unsigned long long)r.kernel_overrun,
	       (unsigned long long)r.undrained, (unsigned long long)r.cpu_ns,
	       (unsigned long long)r.self_cpu_ns,
	       r.unique ? (double)r.cpu_ns / (double)r.unique : 0.0, r.stop_ms, r.stopped,
	       r.ready_ms, (unsigned long long)r.file_bytes, (unsigned long long)r.lat_n,
	       (unsigned long long)r.lat_p50, (unsigned long long)r.lat_p99,
	       (unsigned long long)r.lat_max, r.other_pct, r.error ? r.error : "none");
	return r.error ? 2 : 0;
}
