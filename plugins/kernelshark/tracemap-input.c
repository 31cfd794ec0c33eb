// SPDX-License-Identifier: GPL-2.0-only
/*
 * KernelShark input plugin of tracemap: opens the live ring buffer of a
 * tracefs instance without consuming it.
 *
 * It claims a tracefs instance directory (/sys/kernel/tracing/instances/NAME),
 * the tracefs mount itself (the top-level buffer), or a descriptor file
 * NAME.tracemap (for File -> Open, whose dialog cannot pick a directory).
 * Opening one copies every CPU's buffer with libtracemap's dump
 * (tracemap_dump_take(), nothing consumed; a refresh takes it again from the
 * last copy, tracemap_dump_retake()), writes it as a trace.dat image
 * into a memory file (tracemap_dump_rewrite(), over an image nobody reads
 * any more) and hands that to KernelShark's own trace.dat input,
 * kshark_tep_init_input(); the stream is then marked "tep data", so event
 * names, the info column, tasks, the sched_events and missed_events plugins,
 * filters and search work exactly as for a trace.dat of the same data. The
 * menu part (tracemap-menu.cpp) refreshes by taking a copy in its own thread
 * (tmks_image_take()) and swapping it into the stream shown.
 *
 * Return values follow KernelShark's input interface: the initializer
 * returns 0 or a negative errno; check returns true for the paths we take.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <event-parse.h>
#include <libkshark.h>
#include <libkshark-plugin.h>
#include <libkshark-tepdata.h>

#include "tracemap.h"
#include "tracemap-ks.h"

#define FORMAT_ID		"tracemap live"	/* <= 14 characters, unique */
#define DESCRIPTOR_SUFFIX	".tracemap"
#define TRACEFS_MAGIC_NR	0x74726163	/* linux/magic.h TRACEFS_MAGIC */

/* What a path names: a buffer (tracefs mount + instance, NULL for the top). */
struct live_src {
	char tracefs[PATH_MAX];
	char instance[NAME_MAX + 1];
	bool top;
	int follow_ms;			/* descriptor's follow-ms, 0 if none */
};

static char *last_source;
static int last_follow_ms;
static struct tmks_counts last_counts;

/*
 * What each CPU's copy held, for telling a copy that holds nothing new:
 * the counts of the copy shown and of the one taken last (under image_lock).
 * New events move a CPU's newest time stamp or its count, overwritten ones
 * its overrun, consumed ones its oldest time stamp: equal counts on every
 * CPU are the same events.
 */
struct copy_sig {
	char *path;			/* the live path it was taken for */
	int nr;
	struct tracemap_dump_cpu_stats *cpu;	/* copy_ns zeroed */
};
static struct copy_sig shown_sig, taken_sig;

void tmks_live_counts(struct tmks_counts *c)
{
	*c = last_counts;
}

const char *tmks_live_source(void)
{
	return last_source;
}

/*
 * A follow period in ms, as tracemap view --follow takes it: a whole number
 * from 1 to 3600000 and nothing after it. Returns it, or -1.
 */
static int parse_follow_ms(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > TMKS_FOLLOW_MS_MAX)
		return -1;
	return v;
}

int tmks_follow_ms(void)
{
	static bool env_said;
	const char *env;
	int ms;

	if (last_follow_ms > 0)
		return last_follow_ms;
	env = getenv("TRACEMAP_FOLLOW_MS");
	if (!env || !*env)
		return 0;
	ms = parse_follow_ms(env);
	if (ms < 0 && !env_said) {
		env_said = true;
		fprintf(stderr, "tracemap: TRACEMAP_FOLLOW_MS=%s is not a period in ms (1 to %d):"
			" not following; fix or unset it\n", env, TMKS_FOLLOW_MS_MAX);
	}
	return ms < 0 ? 0 : ms;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* @dir is a buffer directory of a tracefs mount (it has per_cpu/). */
static bool is_buffer_dir(const char *dir)
{
	char sub[PATH_MAX + 16];
	struct statfs sfs;

	if (statfs(dir, &sfs) || sfs.f_type != TRACEFS_MAGIC_NR)
		return false;
	snprintf(sub, sizeof(sub), "%s/per_cpu", dir);
	return is_dir(sub);
}

/* Split a buffer directory into tracefs mount and instance name. */
static int src_from_dir(const char *path, struct live_src *src)
{
	char real[PATH_MAX], *slash;

	if (!realpath(path, real) || !is_buffer_dir(real)) {
		fprintf(stderr, "tracemap: %s is not a tracefs instance directory or tracefs mount\n",
			path);
		return -ENOENT;
	}
	slash = strrchr(real, '/');
	if (slash && slash - real >= 10 && !strncmp(slash - 10, "/instances", 10)) {
		snprintf(src->instance, sizeof(src->instance), "%s", slash + 1);
		*(slash - 10) = '\0';
		src->top = false;
	} else {
		src->top = true;
	}
	snprintf(src->tracefs, sizeof(src->tracefs), "%s", real);
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/*
 * A descriptor file: "key = value" lines, '#' comments.
 *   instance = NAME       the instance; "/" for the top-level buffer (required)
 *   tracefs = DIR         where tracefs is mounted (default: found by the library)
 *   follow-ms = N         start following, refreshing every N ms
 */
static int src_from_descriptor(const char *path, struct live_src *src)
{
	char line[PATH_MAX + 32], dir[PATH_MAX + NAME_MAX + 16];
	const char *tfs = NULL;
	char tracefs[PATH_MAX] = "";
	int lineno = 0, ret = 0;
	FILE *f;

	f = fopen(path, "r");
	if (!f) {
		ret = -errno;
		fprintf(stderr, "tracemap: cannot read %s: %s\n", path, strerror(errno));
		return ret;
	}
	src->instance[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		char *key, *val, *eq;

		lineno++;
		key = trim(line);
		if (!*key || *key == '#')
			continue;
		eq = strchr(key, '=');
		if (!eq) {
			fprintf(stderr, "tracemap: %s:%d: expected 'key = value'\n", path, lineno);
			ret = -EINVAL;
			break;
		}
		*eq = '\0';
		val = trim(eq + 1);
		key = trim(key);
		if (!strcmp(key, "instance")) {
			/*
			 * one name under instances/ (".." would open the top level), or
			 * TRACEMAP_TOP_LEVEL: the shared buffer only when named
			 */
			if (strcmp(val, TRACEMAP_TOP_LEVEL) &&
			    (!*val || strchr(val, '/') || !strcmp(val, ".") || !strcmp(val, "..") ||
			     strlen(val) >= sizeof(src->instance))) {
				fprintf(stderr, "tracemap: %s:%d: instance '%s' is not an instance"
					" name (one name as under instances/, no '/', not . or ..;"
					" 'instance = %s' for the top-level buffer)\n",
					path, lineno, val, TRACEMAP_TOP_LEVEL);
				ret = -EINVAL;
				break;
			}
			snprintf(src->instance, sizeof(src->instance), "%s", val);
		} else if (!strcmp(key, "tracefs")) {
			snprintf(tracefs, sizeof(tracefs), "%s", val);
		} else if (!strcmp(key, "follow-ms")) {
			src->follow_ms = parse_follow_ms(val);
			if (src->follow_ms < 0) {
				fprintf(stderr, "tracemap: %s:%d: follow-ms '%s' is not a period in"
					" ms: give a whole number from 1 to %d\n", path, lineno,
					val, TMKS_FOLLOW_MS_MAX);
				ret = -EINVAL;
				break;
			}
		} else {
			fprintf(stderr, "tracemap: %s:%d: unknown key '%s' (known: instance, tracefs,"
				" follow-ms)\n", path, lineno, key);
			ret = -EINVAL;
			break;
		}
	}
	fclose(f);
	if (ret)
		return ret;

	if (!src->instance[0]) {
		fprintf(stderr, "tracemap: %s names no buffer: add 'instance = NAME', or "
			"'instance = %s' for the top-level buffer\n", path, TRACEMAP_TOP_LEVEL);
		return -EINVAL;
	}
	tfs = *tracefs ? tracefs : "/sys/kernel/tracing";
	if (strcmp(src->instance, TRACEMAP_TOP_LEVEL))
		snprintf(dir, sizeof(dir), "%s/instances/%s", tfs, src->instance);
	else
		snprintf(dir, sizeof(dir), "%s", tfs);
	ret = src_from_dir(dir, src);
	if (ret)
		fprintf(stderr, "tracemap: %s names %s, which does not exist: create the instance"
			" or fix the descriptor\n", path, dir);
	return ret;
}

static int src_parse(const char *path, struct live_src *src)
{
	memset(src, 0, sizeof(*src));
	if (ends_with(path, DESCRIPTOR_SUFFIX) && !is_dir(path))
		return src_from_descriptor(path, src);
	return src_from_dir(path, src);
}

/*
 * The kernel's function names for the streams this plugin opens. Its images
 * carry no kallsyms (TRACEMAP_DUMP_NO_KALLSYMS): KernelShark would parse
 * megabytes of them again on every refresh, the larger part of opening an
 * image. They are parsed once into a handle of our own, which each
 * stream's handle asks through libtraceevent's function resolver.
 */
static struct tep_handle *functions;
static pthread_once_t functions_once = PTHREAD_ONCE_INIT;

static void functions_load(void)
{
	size_t len = 0, cap = 1 << 20;
	char *text = malloc(cap), *p;
	FILE *f = fopen("/proc/kallsyms", "re");
	size_t n;

	while (f && text && (n = fread(text + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len > 1)
			continue;
		p = realloc(text, cap * 2);
		if (!p)
			break;
		text = p;
		cap *= 2;
	}
	if (f && text && !ferror(f) && len) {
		text[len] = '\0';
		functions = tep_alloc();
		if (functions && tep_parse_kallsyms(functions, text)) {
			tep_free(functions);
			functions = NULL;
		}
		/* the lookup table is built on the first lookup: before threads share it */
		if (functions)
			tep_find_function(functions, 0);
	}
	if (!functions)
		fprintf(stderr, "tracemap: cannot read /proc/kallsyms%s%s: kernel functions show"
			" as addresses\n", f ? "" : ": ", f ? "" : strerror(errno));
	if (f)
		fclose(f);
	free(text);
}

/* libtraceevent's function resolver: the function around *@addrp */
static char *function_at(void *priv, unsigned long long *addrp, char **modp)
{
	const char *name = tep_find_function(priv, *addrp);

	if (!name)
		return NULL;
	*addrp = tep_find_function_address(priv, *addrp);
	*modp = NULL;
	return (char *)name;
}

void tmks_functions_attach(struct tep_handle *tep)
{
	pthread_once(&functions_once, functions_load);
	if (functions && tep)
		tep_set_function_resolver(tep, function_at, functions);
}

/* KernelShark: the unique name of this input's data format. */
const char *KSHARK_INPUT_FORMAT(void)
{
	return FORMAT_ID;
}

/* KernelShark: true for the paths this input opens (see the top of the file). */
bool KSHARK_INPUT_CHECK(const char *file)
{
	char real[PATH_MAX];

	if (ends_with(file, DESCRIPTOR_SUFFIX) && !is_dir(file))
		return true;
	return realpath(file, real) && is_buffer_dir(real);
}

/*
 * The memory files of the images. A refresh writes its image over one that
 * nobody reads any more (tracemap_dump_rewrite()): then the file's pages
 * need not be allocated, zeroed and freed once more. Two, because the menu
 * part takes the next image while the stream still reads the last one.
 */
#define NR_IMAGES	2
static int image_fds[NR_IMAGES] = { -1, -1 };
static pthread_mutex_t image_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * KernelShark 2.2.1's GUI leaves pages of a closed stream's image mapped
 * (three mappings a refresh in /proc/PID/maps, with no descriptor left),
 * each of which would keep a whole image alive if every refresh took a new
 * file. The file must not end before their end (a touch beyond the end of
 * a file is a SIGBUS): it never gets shorter than the largest image it
 * held, in which every mapping of it lies. That needs no look at
 * /proc/self/maps, which grows with every refresh.
 */
static off_t image_high[NR_IMAGES];

/*
 * Whether a stream still reads the image in @fd: KernelShark's trace.dat
 * reader opens its own descriptor of it (/proc/self/fd/N) and keeps that
 * until the stream is closed; a stream added with Append keeps it while a
 * newer image is opened. Errs on "in use".
 */
static bool image_in_use(int fd)
{
	struct stat me, st;
	struct dirent *de;
	bool used = false;
	char path[64];
	DIR *dir;

	if (fstat(fd, &me))
		return true;
	dir = opendir("/proc/self/fd");
	if (!dir)
		return true;
	while (!used && (de = readdir(dir))) {
		if (de->d_name[0] == '.' || atoi(de->d_name) == fd)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		used = !stat(path, &st) && st.st_dev == me.st_dev && st.st_ino == me.st_ino;
	}
	closedir(dir);
	return used;
}

/*
 * A memory file nobody reads: the slot in image_fds[] of one whose image
 * no stream reads (the one shown stays for the next refresh), else of a new
 * one in a free slot, else in place of one a stream still reads (that
 * stream keeps its own descriptor). Returns the slot or -errno. Under
 * image_lock.
 */
static int image_file(void)
{
	int i;

	for (i = 0; i < NR_IMAGES; i++)
		if (image_fds[i] >= 0 && !image_in_use(image_fds[i]))
			return i;
	for (i = 0; i < NR_IMAGES && image_fds[i] >= 0; i++)
		;
	if (i == NR_IMAGES) {
		i = 0;
		close(image_fds[i]);
	}
	image_high[i] = 0;
	image_fds[i] = memfd_create("tracemap-live.dat", MFD_CLOEXEC);
	return image_fds[i] < 0 ? -errno : i;
}

static void sig_free(struct copy_sig *s)
{
	free(s->path);
	free(s->cpu);
	*s = (struct copy_sig){ 0 };
}

/* The counts of every CPU of @d into @s (empty when out of memory). */
static void sig_take(struct copy_sig *s, const struct tracemap_dump *d, const char *path)
{
	int i, nr = tracemap_dump_nr_cpus(d);

	sig_free(s);
	if (nr <= 0)
		return;
	s->cpu = calloc(nr, sizeof(*s->cpu));
	s->path = strdup(path);
	if (!s->cpu || !s->path) {
		sig_free(s);
		return;
	}
	for (i = 0; i < nr; i++)
		if (tracemap_dump_stats(d, tracemap_dump_cpu(d, i), &s->cpu[i], sizeof(*s->cpu)))
			memset(&s->cpu[i], 0, sizeof(*s->cpu));
	s->nr = nr;
}

static bool sig_equal(const struct copy_sig *a, const struct copy_sig *b)
{
	const struct tracemap_dump_cpu_stats *x, *y;
	int i;

	if (!a->nr || a->nr != b->nr || strcmp(a->path, b->path))
		return false;
	for (i = 0; i < a->nr; i++) {
		x = &a->cpu[i];
		y = &b->cpu[i];
		if (x->cpu != y->cpu || x->events != y->events || x->bytes != y->bytes ||
		    x->pages != y->pages || x->first_ts != y->first_ts ||
		    x->last_ts != y->last_ts || x->lost != y->lost ||
		    x->lost_gaps != y->lost_gaps || x->overrun != y->overrun)
			return false;
	}
	return true;
}

static void sig_copy(struct copy_sig *dst, const struct copy_sig *src)
{
	sig_free(dst);
	if (!src->nr)
		return;
	dst->cpu = malloc(src->nr * sizeof(*src->cpu));
	dst->path = strdup(src->path);
	if (!dst->cpu || !dst->path) {
		sig_free(dst);
		return;
	}
	memcpy(dst->cpu, src->cpu, src->nr * sizeof(*src->cpu));
	dst->nr = src->nr;
}

/*
 * The last copy, kept for the next refresh of the same buffer, which is
 * taken from it (tracemap_dump_retake()): only the pages the writer changed
 * since are copied. A dump holds no descriptor, so keeping it does not keep
 * the instance from being removed. Taken out while a copy is made.
 */
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tracemap_dump *kept_dump;
static char *kept_key;			/* the buffer it is of: "tracefs/instance" */

/* A copy of @src's buffer: from the copy kept of it, else a new one. NULL + errno */
static struct tracemap_dump *copy_buffer(const struct live_src *src,
					 const struct tracemap_dump_opts *opts, const char *key)
{
	struct tracemap_dump *prev;
	char *prev_key;

	pthread_mutex_lock(&kept_lock);
	prev = kept_dump;
	prev_key = kept_key;
	kept_dump = NULL;
	kept_key = NULL;
	pthread_mutex_unlock(&kept_lock);
	if (prev && strcmp(prev_key, key)) {
		tracemap_dump_free(prev);
		prev = NULL;
	}
	free(prev_key);
	if (prev)
		return tracemap_dump_retake(prev);
	return tracemap_dump_take(src->top ? TRACEMAP_TOP_LEVEL : src->instance, opts);
}

/* Keep @d, the copy of @key's buffer, for the next refresh (or free it). */
static void keep_copy(struct tracemap_dump *d, const char *key)
{
	char *k = strdup(key);

	pthread_mutex_lock(&kept_lock);
	if (k && !kept_dump) {
		kept_dump = d;
		kept_key = k;
		d = NULL;
		k = NULL;
	}
	pthread_mutex_unlock(&kept_lock);
	free(k);
	tracemap_dump_free(d);
}

/* Forget @fd as an image file (it is closed by the caller). */
static void image_drop(int fd)
{
	int i;

	for (i = 0; i < NR_IMAGES; i++)
		if (image_fds[i] == fd)
			image_fds[i] = -1;
}

/*
 * Copy the live buffer of @path and write it as a trace.dat image into a
 * memory file; the counts of the copy go to @counts. Returns the file's
 * descriptor (one of image_fds[]), or -errno. With @same, a copy that holds
 * what the copy shown holds is not written: *@same is then true and the
 * return 0.
 */
static int snapshot_image(const struct live_src *src, const char *path,
			  struct tmks_counts *counts, bool *same)
{
	struct tracemap_dump_cpu_stats st = { 0 };
	struct tracemap_dump_opts opts = {
		.sz = sizeof(opts),
		.tracefs_dir = src->tracefs,
		/*
		 * one stream, named below, rather than an empty top level plus the
		 * instance; function names come from tmks_functions_attach()
		 */
		.flags = TRACEMAP_DUMP_AS_TOP | TRACEMAP_DUMP_NO_KALLSYMS,
	};
	char key[PATH_MAX + NAME_MAX + 2];
	struct tracemap_dump *d;
	int fd, ret, slot;
	struct stat fst;

	snprintf(key, sizeof(key), "%s/%s", src->tracefs, src->top ? "" : src->instance);
	d = copy_buffer(src, &opts, key);
	if (!d) {
		ret = -errno;
		fprintf(stderr, "tracemap: cannot copy the ring buffer of %s%s: %s\n",
			src->top ? "the top-level buffer in " : "instance ",
			src->top ? src->tracefs : src->instance, strerror(errno));
		return ret;
	}
	memset(counts, 0, sizeof(*counts));
	if (!tracemap_dump_stats(d, -1, &st, sizeof(st))) {
		counts->events = st.events;
		counts->lost = st.lost;
		counts->lost_gaps = st.lost_gaps;
		counts->first_ts = st.first_ts;
		counts->last_ts = st.last_ts;
	}
	pthread_mutex_lock(&image_lock);
	sig_take(&taken_sig, d, path);
	if (same) {
		*same = sig_equal(&taken_sig, &shown_sig);
		/* nothing new: KernelShark keeps what it shows, no image, no reload */
		if (*same) {
			ret = 0;
			goto out;
		}
	}
	slot = image_file();
	if (slot < 0) {
		ret = slot;
		fprintf(stderr, "tracemap: memfd_create: %s\n", strerror(-ret));
		goto out;
	}
	fd = image_fds[slot];
	ret = tracemap_dump_rewrite(d, fd);
	/* pages still mapped stay inside the file (image_high); readers ignore what follows */
	if (!ret && fstat(fd, &fst))
		ret = -errno;
	if (!ret && fst.st_size < image_high[slot] && ftruncate(fd, image_high[slot]))
		ret = -errno;
	if (!ret && fst.st_size > image_high[slot])
		image_high[slot] = fst.st_size;
	if (ret < 0) {
		fprintf(stderr, "tracemap: writing the trace.dat image failed: %s\n", strerror(-ret));
		image_drop(fd);
		close(fd);
		goto out;
	}
	ret = fd;
out:
	pthread_mutex_unlock(&image_lock);
	keep_copy(d, key);
	return ret;
}

int tmks_image_take(const char *path, struct tmks_image *img)
{
	char dir[PATH_MAX + NAME_MAX + 16];
	struct live_src src;
	int ret;

	img->fd = -1;
	ret = src_parse(path, &src);
	/* a descriptor names its instance even when the instance is gone */
	snprintf(img->name, sizeof(img->name), "%s", src.top ? "top" : src.instance);
	if (ret)
		return ret;
	img->same = false;
	ret = snapshot_image(&src, path, &img->counts, &img->same);
	if (ret < 0) {
		/* removed while it was copied */
		snprintf(dir, sizeof(dir), "%s/instances/%s", src.tracefs, src.instance);
		return !src.top && !is_dir(dir) ? -ENOENT : ret;
	}
	img->fd = img->same ? -1 : ret;
	snprintf(img->path, sizeof(img->path), "%s", path);
	return 0;
}

void tmks_image_shown(const struct tmks_image *img)
{
	last_counts = img->counts;
	pthread_mutex_lock(&image_lock);
	sig_copy(&shown_sig, &taken_sig);
	pthread_mutex_unlock(&image_lock);
}

/*
 * KernelShark: open stream->file. The trace.dat reader is given the memory
 * file by its /proc/self/fd name (it opens its own descriptor, which
 * image_in_use() finds); the stream keeps the live path so that reopening it
 * refreshes.
 */
int KSHARK_INPUT_INITIALIZER(struct kshark_data_stream *stream)
{
	char image[64], *live = stream->file, *copy;
	struct tmks_counts counts;
	struct live_src src;
	int fd, ret;

	ret = src_parse(live, &src);
	if (ret)
		return ret;
	copy = strdup(live);
	if (!copy)
		return -ENOMEM;
	fd = snapshot_image(&src, live, &counts, NULL);
	if (fd < 0) {
		free(copy);
		return fd;
	}
	snprintf(image, sizeof(image), "/proc/self/fd/%d", fd);
	stream->file = image;
	ret = kshark_tep_init_input(stream);
	stream->file = live;
	if (ret < 0) {
		fprintf(stderr, "tracemap: KernelShark could not read the image of %s (%d)\n",
			live, ret);
		free(copy);
		return ret;
	}
	tmks_functions_attach(kshark_get_tep(stream));
	kshark_set_data_format(stream->data_format, TEP_DATA_FORMAT_IDENTIFIER);
	free(stream->name);
	stream->name = strdup(src.top ? "top" : src.instance);

	free(last_source);
	last_source = copy;
	last_follow_ms = src.follow_ms;
	last_counts = counts;
	pthread_mutex_lock(&image_lock);
	sig_copy(&shown_sig, &taken_sig);
	pthread_mutex_unlock(&image_lock);
	tmks_opened();
	return 0;
}

/*
 * KernelShark: close. Not called for streams this input opened (they are
 * "tep data" then and KernelShark's trace.dat input closes them).
 */
int KSHARK_INPUT_DEINITIALIZER(struct kshark_data_stream *stream)
{
	return 0;
}
