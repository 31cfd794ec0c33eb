// SPDX-License-Identifier: GPL-2.0-only
/*
 * tracemap flight: keep an overwrite-mode buffer running and write a
 * trace.dat of its latest contents on each trigger (SIGUSR1, a trace_marker
 * line, an event matching a filter, the command failing), never pausing
 * tracing and never consuming.
 *
 * With only the signal trigger the recorder sleeps in read() of a signalfd
 * and touches nothing between dumps. The marker and event triggers follow
 * the buffer through a non-consuming stream and test each event's type id,
 * and only the events of the trigger's type further.
 *
 * Nothing is changed before every argument was checked. Changes are made in
 * this order and undone in the reverse one: the private instance (if no -B),
 * overwrite mode, buffer size, the events, the follower.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>
#include <tracefs.h>

#include "tracemap.h"
#include "tracemap-tool.h"
#include "cmd-stream.h"

#define DEFAULT_HOLDOFF_MS	1000
#define FOLLOW_LATENCY_MS	50

struct flight_opts {
	struct tool_buffer buf;	/* -B, -e (and the -T event), -b, -M, the tracer, the numbers */
	const char *output;	/* -o */
	const char *marker;	/* --marker */
	const char *tevent;	/* -T system:event */
	const char *filter;	/* -F */
	struct tool_tracer tracer;	/* -p, -l, -n, -g, --func-stack */
	int after_ms;
	int holdoff_ms;
	int max_dumps;		/* 0: no limit */
	char **cmd;		/* after -- */
};

/* What the follower tests: the type id first, the rest only on a match. */
struct trigger {
	struct tep_handle *tep;
	struct tep_event_filter *filter;
	const char *marker;
	size_t marker_len;
	int print_id;		/* ftrace:print */
	unsigned int buf_off;	/* its "buf" field */
	int event_id;		/* -T */
	bool armed;		/* false while the buffer's earlier contents go by */
	const char *fired;	/* what fired, until the recorder takes it */
	char marker_what[96];
	char event_what[96];
};

struct recorder {
	struct flight_opts *o;
	const char *iname;
	const char *direct;	/* -o of "-", a FIFO or a terminal: every dump goes there */
	char *pattern;		/* else the output name with %n (and maybe %t) */
	int seq;
	int dumps;
	int failed;		/* triggers whose dump could not be written */
	uint64_t last_dump;	/* CLOCK_MONOTONIC of the last dump */
	uint64_t pending;	/* a trigger waiting for --after-ms, its time */
	char pending_what[96];
	unsigned long ignored;	/* triggers dropped by the hold-off */
};

/* --------------------------------------------------------- file names */

/* -o: a directory (existing or ending in '/') gets trace-%n.dat; a name gets %n added. */
static char *make_pattern(const char *out)
{
	struct stat st;
	const char *dot;
	char *p = NULL;
	size_t len = strlen(out);

	if ((len && out[len - 1] == '/') || (!stat(out, &st) && S_ISDIR(st.st_mode))) {
		if (asprintf(&p, "%s%strace-%%n.dat", out, out[len - 1] == '/' ? "" : "/") < 0)
			return NULL;
		return p;
	}
	if (strstr(out, "%n"))
		return strdup(out);
	dot = strrchr(out, '.');
	if (dot && !strchr(dot, '/')) {
		if (asprintf(&p, "%.*s-%%n%s", (int)(dot - out), out, dot) < 0)
			return NULL;
	} else if (asprintf(&p, "%s-%%n", out) < 0) {
		return NULL;
	}
	return p;
}

/*
 * The dumps' directory must be there before the recorder starts, not found
 * missing at the first trigger: "-o DIR/" creates DIR, any other missing or
 * unwritable directory is an error now.
 */
static int check_out_dir(const char *out, const char *pattern)
{
	size_t len = strlen(out);
	char dir[PATH_MAX];
	const char *slash;

	slash = strrchr(pattern, '/');
	if (!slash) {
		snprintf(dir, sizeof(dir), ".");
	} else {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - pattern), pattern);
		if (!dir[0])
			snprintf(dir, sizeof(dir), "/");
	}
	if (len && out[len - 1] == '/' && access(dir, F_OK) && errno == ENOENT) {
		if (mkdir(dir, 0755)) {
			tool_err("cannot create the dump directory %s: %s: create it or give another -o",
				 dir, strerror(errno));
			return -1;
		}
		fprintf(stderr, "tracemap: created %s for the dumps\n", dir);
		return 0;
	}
	if (access(dir, W_OK | X_OK)) {
		tool_err("cannot write dumps into %s: %s: create it or give another -o", dir,
			 strerror(errno));
		return -1;
	}
	return 0;
}

/* %n: the dump number, %t: UTC date and time, %%: '%' */
static void expand(const char *pattern, int seq, char *buf, size_t size)
{
	size_t n = 0;
	struct tm tm;
	time_t now;

	time(&now);
	gmtime_r(&now, &tm);
	for (; *pattern && n + 1 < size; pattern++) {
		if (*pattern != '%' || !pattern[1]) {
			buf[n++] = *pattern;
			continue;
		}
		pattern++;
		if (*pattern == 'n')
			n += snprintf(buf + n, size - n, "%d", seq);
		else if (*pattern == 't')
			n += strftime(buf + n, size - n, "%Y%m%d-%H%M%S", &tm);
		else
			buf[n++] = *pattern;
		if (n >= size)
			n = size - 1;
	}
	buf[n] = '\0';
}

/* The next name that does not exist yet: a dump never overwrites a file. */
static int next_path(struct recorder *r, char *buf, size_t size)
{
	struct stat st;
	int tries;

	for (tries = 0; tries < 100000; tries++) {
		expand(r->pattern, ++r->seq, buf, size);
		/* lstat: a dangling symbolic link is a name that is taken */
		if (lstat(buf, &st) && errno == ENOENT)
			return 0;
	}
	tool_err("no free file name for %s", r->pattern);
	return -1;
}

/* -------------------------------------------------------------- dumps */

static void dump_now(struct recorder *r, uint64_t trigger_ns, const char *what)
{
	char path[PATH_MAX];
	bool out_is_stdout = r->direct && !strcmp(r->direct, "-");

	if (r->direct)
		snprintf(path, sizeof(path), "%s", r->direct);
	if ((!r->direct && next_path(r, path, sizeof(path))) ||
	    tool_dump(r->iname, r->o->buf.cpumask, path, trigger_ns, what,
		      out_is_stdout ? stderr : stdout)) {
		tool_err("%s: no dump written", what);
		r->failed++;
	} else {
		r->dumps++;
	}
	r->last_dump = tracemap_now_ns();
}

/*
 * A trigger: dump now, or arm the --after-ms timer. Triggers within the
 * hold-off after the last dump, or while one waits, are counted and dropped.
 */
static void triggered(struct recorder *r, int tfd, const char *what)
{
	struct itimerspec its = { 0 };
	uint64_t now = tracemap_now_ns();

	if (r->pending ||
	    (r->last_dump && now - r->last_dump < (uint64_t)r->o->holdoff_ms * 1000000ULL)) {
		r->ignored++;
		return;
	}
	if (!r->o->after_ms) {
		dump_now(r, now, what);
		return;
	}
	r->pending = now;
	snprintf(r->pending_what, sizeof(r->pending_what), "%s", what);
	its.it_value.tv_sec = r->o->after_ms / 1000;
	its.it_value.tv_nsec = (long)(r->o->after_ms % 1000) * 1000000;
	if (timerfd_settime(tfd, 0, &its, NULL)) {
		tool_err("timerfd: %s: dumping now", strerror(errno));
		r->pending = 0;
		dump_now(r, now, what);
	}
}

/* ----------------------------------------------------------- triggers */

static int on_event(void *ctx, const struct tracemap_event *ev)
{
	struct trigger *t = ctx;
	struct tep_record rec;
	unsigned short type;
	const char *buf;

	if (!t->armed || t->fired || ev->size < sizeof(type))
		return 0;
	memcpy(&type, ev->data, sizeof(type));
	if (type == t->print_id && t->marker && ev->size > t->buf_off) {
		buf = (const char *)ev->data + t->buf_off;
		if (memmem(buf, ev->size - t->buf_off, t->marker, t->marker_len))
			t->fired = t->marker_what;
	} else if (type == t->event_id) {
		if (!t->filter) {
			t->fired = t->event_what;
		} else {
			tracemap_event_to_record(ev, &rec);
			if (tep_filter_match(t->filter, &rec) == TEP_ERRNO__FILTER_MATCH)
				t->fired = t->event_what;
		}
	}
	return 0;
}

static int trigger_init(struct trigger *t, const char *tfs, const struct flight_opts *o)
{
	const char *systems[3] = { "ftrace", NULL, NULL };
	struct tep_format_field *f;
	struct tep_event *e;
	char sys[256], *colon, *fstr = NULL;
	enum tep_errno err;
	char msg[256];

	memset(t, 0, sizeof(*t));
	t->print_id = t->event_id = -1;
	if (!o->marker && !o->tevent)
		return 0;
	sys[0] = '\0';
	if (o->tevent) {
		snprintf(sys, sizeof(sys), "%s", o->tevent);
		colon = strchr(sys, ':');
		if (!colon || !colon[1] || colon == sys) {
			tool_err("-T %s: give the event as system:event", o->tevent);
			return -1;
		}
		*colon = '\0';
		systems[1] = sys;
	}
	t->tep = tracefs_local_events_system(tfs, systems);
	if (!t->tep) {
		tool_err("cannot read the event formats of %s/events: %s", tfs, strerror(errno));
		return -1;
	}
	if (o->marker) {
		e = tep_find_event_by_name(t->tep, "ftrace", "print");
		f = e ? tep_find_field(e, "buf") : NULL;
		if (!f) {
			tool_err("no ftrace:print event with a buf field in %s/events: --marker "
				 "needs trace_marker support", tfs);
			return -1;
		}
		t->print_id = e->id;
		t->buf_off = f->offset;
		t->marker = o->marker;
		t->marker_len = strlen(o->marker);
		snprintf(t->marker_what, sizeof(t->marker_what), "marker '%s'", o->marker);
	}
	if (o->tevent) {
		e = tep_find_event_by_name(t->tep, sys, sys + strlen(sys) + 1);
		if (!e) {
			tool_err("-T %s: no such event (see %s/available_events)", o->tevent, tfs);
			return -1;
		}
		t->event_id = e->id;
		snprintf(t->event_what, sizeof(t->event_what), "event %s", o->tevent);
		if (o->filter) {
			t->filter = tep_filter_alloc(t->tep);
			if (!t->filter ||
			    asprintf(&fstr, "%s/%s: %s", e->system, e->name, o->filter) < 0) {
				tool_err("out of memory");
				return -1;
			}
			err = tep_filter_add_filter_str(t->filter, fstr);
			free(fstr);
			if (err < 0) {
				tep_filter_strerror(t->filter, err, msg, sizeof(msg));
				tool_err("-F '%s': %s", o->filter, msg);
				return -1;
			}
			/* libtraceevent turns an unknown field into FALSE instead of failing */
			fstr = tep_filter_make_string(t->filter, e->id);
			if (!fstr || strstr(fstr, "FALSE")) {
				tool_err("-F '%s': names a field %s does not have (see %s/events/%s/%s/format)",
					 o->filter, o->tevent, tfs, e->system, e->name);
				free(fstr);
				return -1;
			}
			free(fstr);
		}
	}
	return 0;
}

static void trigger_free(struct trigger *t)
{
	if (t->filter)
		tep_filter_free(t->filter);
	if (t->tep)
		tep_free(t->tep);
	t->filter = NULL;
	t->tep = NULL;
}

/* ------------------------------------------------------- --dump [PID] */

/* argv of /proc/@pid/cmdline is "tracemap flight ..." without --dump */
static bool is_recorder(const char *pid)
{
	char path[64], buf[4096], *p, *end;
	bool flight = false;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	end = buf + n;
	for (p = buf, i = 0; p < end; p += strlen(p) + 1, i++) {
		if (i == 0) {
			const char *base = strrchr(p, '/');

			if (strcmp(base ? base + 1 : p, "tracemap"))
				return false;
		} else if (i == 1) {
			flight = !strcmp(p, "flight");
		} else if (!strcmp(p, "--dump")) {
			return false;
		} else if (!strcmp(p, "--")) {
			break;
		}
	}
	return flight;
}

/*
 * --dump [PID]: SIGUSR1 to the recorder PID, or to the one running; with
 * @all to every running recorder (none running is an error).
 */
static int send_dump(const char *pidarg, bool all)
{
	long pid = 0, *found = NULL, *more;
	int n = 0, cap = 0, i, ret = 0;
	struct dirent *de;
	char *end;
	DIR *dp;

	if (pidarg) {
		pid = strtol(pidarg, &end, 10);
		if (*end || pid <= 0) {
			tool_err("--dump %s: give the PID of a running 'tracemap flight'", pidarg);
			return 1;
		}
		if (!is_recorder(pidarg)) {
			tool_err("--dump %s: that process is not a running 'tracemap flight'", pidarg);
			return 1;
		}
		if (kill((pid_t)pid, SIGUSR1)) {
			tool_err("cannot signal %ld: %s", pid, strerror(errno));
			return 1;
		}
		return 0;
	}
	dp = opendir("/proc");
	if (!dp) {
		tool_err("cannot read /proc: %s: give the recorder's PID", strerror(errno));
		return 1;
	}
	while ((de = readdir(dp))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
		    atol(de->d_name) == (long)getpid() || !is_recorder(de->d_name))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			more = realloc(found, cap * sizeof(*found));
			if (!more) {
				tool_err("out of memory");
				ret = 1;
				goto out;
			}
			found = more;
		}
		found[n++] = atol(de->d_name);
	}
	if (!n) {
		tool_err("no 'tracemap flight' is running: start one first");
		ret = 1;
		goto out;
	}
	if (n > 1 && !all) {
		fprintf(stderr, "tracemap: several flight recorders run:");
		for (i = 0; i < n; i++)
			fprintf(stderr, " %ld", found[i]);
		fprintf(stderr, ": give one with --dump PID, or dump them all with --dump --all\n");
		ret = 1;
		goto out;
	}
	for (i = 0; i < n; i++) {
		/* one that ended meanwhile is said, the others still dump */
		if (kill((pid_t)found[i], SIGUSR1)) {
			tool_err("cannot signal %ld: %s", found[i], strerror(errno));
			ret = 1;
		} else if (all) {
			fprintf(stderr, "tracemap: dump asked of flight recorder %ld\n", found[i]);
		}
	}
out:
	closedir(dp);
	free(found);
	return ret;
}

/* --------------------------------------------------------------- setup */

enum { OPT_MARKER = 256, OPT_AFTER, OPT_HOLDOFF, OPT_MAX, OPT_DUMP, OPT_ALL };

/* Returns 0, 1 when done (--help, --dump) with *status set, or -1 after a message. */
static int parse_args(int argc, char **argv, struct flight_opts *o, int *status)
{
	static const struct option longopts[] = {
		{ "marker", required_argument, NULL, OPT_MARKER },
		{ "after-ms", required_argument, NULL, OPT_AFTER },
		{ "hold-off-ms", required_argument, NULL, OPT_HOLDOFF },
		{ "max-dumps", required_argument, NULL, OPT_MAX },
		{ "dump", no_argument, NULL, OPT_DUMP },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "func-stack", no_argument, NULL, TOOL_OPT_FUNC_STACK },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct tool_int_opt ints[] = {
		{ OPT_AFTER, "--after-ms", 0, 3600000, &o->after_ms },
		{ OPT_HOLDOFF, "--hold-off-ms", 0, 86400000, &o->holdoff_ms },
		{ OPT_MAX, "--max-dumps", 1, INT_MAX, &o->max_dumps },
		{ 0 },
	};
	bool dump = false, all = false;
	int c;

	o->holdoff_ms = DEFAULT_HOLDOFF_MS;
	o->output = "trace.dat";
	o->buf.tracer = &o->tracer;
	o->buf.ints = ints;
	opterr = 0;
	while ((c = tool_getopt(argc, argv, "+B:e:b:M:o:T:F:p:l:n:g:h", longopts, &o->buf)) != -1) {
		switch (c) {
		case '!':
			return -1;
		case 'o':
			o->output = optarg;
			break;
		case 'T':
			o->tevent = optarg;
			break;
		case 'F':
			o->filter = optarg;
			break;
		case OPT_MARKER:
			if (!*optarg) {
				tool_err("--marker needs a non-empty string");
				return -1;
			}
			o->marker = optarg;
			break;
		case OPT_DUMP:
			dump = true;
			break;
		case OPT_ALL:
			all = true;
			break;
		case 'h':
			tool_usage(stdout);
			*status = 0;
			return 1;
		default:
			return tool_opt_error(argv, "BebMoTFplng", OPT_MARKER, OPT_MAX);
		}
	}
	/* on this function's stack */
	o->buf.ints = NULL;
	if (tool_tracer_check(&o->tracer))
		return -1;
	if (all && !dump) {
		tool_err("--all goes with --dump: 'tracemap flight --dump --all'");
		return -1;
	}
	if (dump) {
		if (optind + 1 < argc || (all && optind < argc)) {
			tool_err("--dump takes a PID or --all, not both and nothing more "
				 "(tracemap --help)");
			return -1;
		}
		*status = send_dump(optind < argc ? argv[optind] : NULL, all);
		return 1;
	}
	if (optind < argc) {
		/* getopt stops at "--" and at the first non-option: both start the command */
		if (!strcmp(argv[optind - 1], "--") || argv[optind][0] != '-')
			o->cmd = argv + optind;
		else {
			tool_err("unexpected argument '%s' (tracemap --help)", argv[optind]);
			return -1;
		}
	}
	if (o->filter && !o->tevent) {
		tool_err("-F needs -T system:event: the event the filter applies to");
		return -1;
	}
	if (o->tevent)
		o->buf.specs[o->buf.nr_specs++] = (struct tracemap_event_spec){ .name = o->tevent };
	if (!*o->output) {
		tool_err("-o needs a file name or a directory");
		return -1;
	}
	return 0;
}

static pid_t start_command(char **cmd, const sigset_t *sigs)
{
	pid_t pid = fork();

	if (pid < 0) {
		tool_err("fork: %s", strerror(errno));
		return -1;
	}
	if (!pid) {
		sigprocmask(SIG_UNBLOCK, sigs, NULL);
		execvp(cmd[0], cmd);
		fprintf(stderr, "tracemap: cannot run %s: %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

static int epoll_add(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

int cmd_flight(int argc, char **argv)
{
	struct tracemap_stream_opts so = { .sz = sizeof(so) };
	char what[96], idir[4096];
	struct tracemap_instance *inst = NULL;
	struct tracemap_tracer_opts to;
	struct tracemap_stream *s = NULL;
	int sfd = -1, tfd = -1, epfd = -1, ret = 1, status = 0, n, i;
	struct flight_opts o = { 0 };
	struct tracemap_events *events = NULL;
	struct recorder r = { 0 };
	struct trigger t = { 0 };
	struct epoll_event evs[4];
	struct signalfd_siginfo si;
	bool private = false, stop = false;
	struct stat ost;
	pid_t child = -1;
	const char *tfs;
	sigset_t sigs;
	uint64_t v;

	/* held from here on, read through a signalfd: setup and restore are never cut short */
	tool_hold_signals(&sigs, true);

	o.buf.specs = calloc(argc + 1, sizeof(*o.buf.specs));
	if (!o.buf.specs) {
		tool_err("out of memory");
		return 1;
	}
	n = parse_args(argc, argv, &o, &status);
	if (n) {
		ret = n > 0 ? status : 1;
		goto out;
	}
	r.o = &o;
	tfs = tool_tracefs();
	if (!tfs)
		goto out;
	if (tool_instance_dir(o.buf.instance, idir, sizeof(idir))) {
		if (o.buf.instance && *o.buf.instance)
			tool_err("(without -B, tracemap flight records in a private instance)");
		goto out;
	}
	if (trigger_init(&t, tfs, &o))
		goto out;

	/*
	 * The library makes the private instance, sets -b and -p (before any
	 * reader: the kernel changes no tracer under one) and writes each
	 * change in its crash record first, for tracemap reset after a kill.
	 */
	inst = tool_instance_open(tfs, o.buf.instance, "tracemap-flight", o.buf.buffer_kb,
				  tool_tracer_opts(&o.tracer, tfs, &to), &r.iname, &private);
	if (!inst)
		goto out;
	/* dumps are snapshots: refuse a kernel without the mapping now, not at the first dump */
	if (tool_check_mappable(r.iname))
		goto out;
	/*
	 * After the checks that need nothing made: a wrong -B or a kernel
	 * without the mapping leaves no directory behind. "-", a FIFO or a
	 * terminal take every dump as it is; a directory (also through a link) gets numbered files, as does a
	 * file name; anything else is refused, and no name is made beside it.
	 */
	if (stat(o.output, &ost) || !S_ISDIR(ost.st_mode)) {
		n = tool_out_kind(o.output, "-o", false);
		if (n < 0)
			goto out;
		if (n == TOOL_OUT_DIRECT)
			r.direct = o.output;
	}
	if (!r.direct) {
		r.pattern = make_pattern(o.output);
		if (!r.pattern || check_out_dir(o.output, r.pattern))
			goto out;
	}
	tool_warn_tracing_off(tfs, r.iname);

	/* a flight recorder keeps the newest events: overwrite mode, put back at the end */
	if (tracemap_instance_set(inst, "options/overwrite", "1"))
		goto out;
	/* a failure is explained by the library (libtracemap-print(3)) */
	events = tracemap_events_enable(r.iname, o.buf.specs, o.buf.nr_specs, tfs);
	if (!events)
		goto out;

	sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || tfd < 0 || epfd < 0 || epoll_add(epfd, sfd) || epoll_add(epfd, tfd)) {
		tool_err("cannot set up the wait: %s", strerror(errno));
		goto out;
	}
	if (t.tep) {
		/* follow without consuming; every event goes by the type-id test */
		so.mode = TRACEMAP_MODE_FOLLOW;
		so.flags = TRACEMAP_STREAM_UNORDERED;
		so.cpumask = o.buf.cpumask;
		so.latency_ms = FOLLOW_LATENCY_MS;
		so.watermark = -1;
		so.on_event = on_event;
		so.ctx = &t;
		so.tracefs_dir = tfs;
		/* a failure is explained by the library (libtracemap-print(3)) */
		s = tracemap_stream_open(r.iname, &so);
		if (!s)
			goto out;
		/* what was there before we started triggers nothing */
		while (tracemap_stream_consume(s) > 0)
			;
		t.armed = true;
		if (epoll_add(epfd, tracemap_stream_epoll_fd(s))) {
			tool_err("epoll: %s", strerror(errno));
			goto out;
		}
	}
	fprintf(stderr, "tracemap: flight recorder on %s%s; dump with 'tracemap flight --dump' "
		"or 'kill -USR1 %d'; Ctrl-C stops\n", private ? "the private instance " : "",
		r.iname, (int)getpid());
	if (o.cmd) {
		child = start_command(o.cmd, &sigs);
		if (child < 0)
			goto out;
	}

	ret = 0;
	while (!stop) {
		n = epoll_wait(epfd, evs, 4, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			tool_err("epoll_wait: %s", strerror(errno));
			ret = 1;
			break;
		}
		for (i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == sfd) {
				while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
					if (si.ssi_signo == SIGUSR1) {
						triggered(&r, tfd, "SIGUSR1");
					} else if (si.ssi_signo == SIGCHLD) {
						while (child > 0 && waitpid(child, &status, WNOHANG) == child) {
							child = -1;
							stop = true;
							if (WIFEXITED(status) && !WEXITSTATUS(status))
								continue;
							snprintf(what, sizeof(what), "command %s %d",
								 WIFEXITED(status) ? "exited" : "killed by signal",
								 WIFEXITED(status) ? WEXITSTATUS(status) :
								 WTERMSIG(status));
							/* the failure is the last thing: no hold-off, no wait */
							r.last_dump = 0;
							r.pending = 0;
							dump_now(&r, tracemap_now_ns(), what);
						}
					} else {
						stop = true;
					}
				}
			} else if (fd == tfd) {
				if (read(tfd, &v, sizeof(v)) == sizeof(v) && r.pending) {
					uint64_t when = r.pending;

					r.pending = 0;
					dump_now(&r, when, r.pending_what);
				}
			} else if (s) {
				if (tracemap_stream_consume(s) < 0) {
					tool_err("following %s failed: %s", r.iname, strerror(errno));
					ret = 1;
					stop = true;
				}
				if (t.fired) {
					triggered(&r, tfd, t.fired);
					t.fired = NULL;
				}
			}
		}
		if (o.max_dumps && r.dumps >= o.max_dumps)
			stop = true;
	}
	if (r.failed) {
		tool_err("%d of %d dumps could not be written", r.failed, r.failed + r.dumps);
		ret = 1;
	}
	if (r.ignored)
		fprintf(stderr, "tracemap: %lu triggers fell in the hold-off (--hold-off-ms %d) "
			"and were not dumped\n", r.ignored, o.holdoff_ms);
	if (child > 0) {
		kill(child, SIGTERM);
		waitpid(child, NULL, 0);
	}
out:
	/* reverse order of the setup; the library puts back what the instance was given */
	if (tracemap_stream_close(s))
		ret = 1;
	tracemap_events_restore(events);
	if (tracemap_instance_close(inst))
		ret = 1;
	trigger_free(&t);
	if (sfd >= 0)
		close(sfd);
	if (tfd >= 0)
		close(tfd);
	if (epfd >= 0)
		close(epfd);
	free(r.pattern);
	free(o.buf.specs);
	tool_tracer_free(&o.tracer);
	return ret;
}
