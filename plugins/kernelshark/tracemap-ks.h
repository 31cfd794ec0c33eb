/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * KernelShark plugin of tracemap: what the input part (tracemap-input.c, C)
 * tells the menu part (tracemap-menu.cpp, C++/Qt5). Both live in one
 * plugin-tracemap.so; nothing here is exported from it.
 */
#ifndef _TRACEMAP_KS_H
#define _TRACEMAP_KS_H

#ifdef __cplusplus
extern "C" {
#endif

#define TMKS_HIDDEN __attribute__((visibility("hidden")))

#include <limits.h>
#include <stdbool.h>

#define TMKS_FOLLOW_MS_MAX	3600000	/* as tracemap view --follow */

/* What a copy of the live buffer holds (tracemap_dump_cpu_stats, all CPUs). */
struct tmks_counts {
	unsigned long long events;
	unsigned long long lost;	/* events marked lost with their count */
	unsigned long long lost_gaps;	/* places marked lost without a count */
	unsigned long long first_ts, last_ts;	/* oldest and newest event, trace clock ns */
};

/* A copy of a live buffer written as a trace.dat image into a memory file. */
struct tmks_image {
	int fd;				/* -1: none */
	bool same;			/* holds what the copy shown holds: no image */
	struct tmks_counts counts;
	char path[PATH_MAX];		/* the live path it was taken for */
	char name[NAME_MAX + 1];	/* the buffer it names: an instance, "top" or "" */
	long long copy_ns;		/* time the copy and the image took */
	long long open_ns;		/* time KernelShark's reader took to open it */
};

/*
 * The path (instance directory, tracefs mount or descriptor file) of the
 * live buffer opened last, or NULL when none was: what a refresh reopens.
 */
TMKS_HIDDEN const char *tmks_live_source(void);

/* The counts of the copy opened last. */
TMKS_HIDDEN void tmks_live_counts(struct tmks_counts *c);

/*
 * The follow period in ms asked for by the descriptor file opened last or,
 * failing that, by TRACEMAP_FOLLOW_MS in the environment (an invalid value
 * is said once and ignored); 0 when neither.
 */
TMKS_HIDDEN int tmks_follow_ms(void);

/*
 * Copy the live buffer @path names into an image (any thread; one at a
 * time). A copy that holds the same events, losses and overruns on every
 * CPU as the copy shown last is not written: img->same, img->fd -1.
 * Returns 0, or -errno with the reason printed: -ENOENT when the buffer is
 * gone (img->name says which).
 */
TMKS_HIDDEN int tmks_image_take(const char *path, struct tmks_image *img);

/*
 * The stream of img->path shows the copy taken last, @img, now
 * (tmks_live_counts() says so; the next copy is compared with it).
 */
TMKS_HIDDEN void tmks_image_shown(const struct tmks_image *img);

struct tep_handle;

/*
 * Give @tep, of an image of this plugin, the kernel's function names (the
 * images carry none): /proc/kallsyms parsed once, through libtraceevent's
 * function resolver. Any thread.
 */
TMKS_HIDDEN void tmks_functions_attach(struct tep_handle *tep);

/*
 * The input part opened a live buffer (from any thread: KernelShark loads in
 * a worker): the menu part, when loaded, starts following if asked to.
 */
TMKS_HIDDEN void tmks_opened(void);

#ifdef __cplusplus
}
#endif

#endif /* _TRACEMAP_KS_H */
