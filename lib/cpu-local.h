/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * The per-CPU reader, shared by its files only. struct tracemap_cpu holds
 * what is common (the fd, the mapping, the statistics) and one sub-struct
 * per owner; a file writes only its own sub-struct and reaches another
 * owner's state through that owner's tm_* calls. cpu.c allocates and frees
 * the owners' buffers with the reader. See lib/README.
 *
 *   cpu.c           open/close, getters, dispatch, the event iterator, stats
 *   cpu-consume.c   .consume: GET_READER through the mapping
 *   cpu-read.c      .rd:      read() of trace_pipe_raw (no mapping)
 *   cpu-snapshot.c  .snap:    validated copies of every sub-buffer, by time
 *   cpu-follow.c    .follow:  the live pages after the snapshot
 *   subbuf-pages.c  .pages:   the page builder of tracemap_cpu_read_page()
 *   wake.c          .wake:    tracemap_cpu_wait(), the wake-up policy
 */
#ifndef _TRACEMAP_CPU_LOCAL_H
#define _TRACEMAP_CPU_LOCAL_H

#include <limits.h>

#include "tracemap-local.h"

#define TM_NO_ID	UINT_MAX

/* The events the kernel has reported lost, shared by both consuming sources. */
struct tm_loss {
	uint64_t accounted;	/* overrun as of the last loss report */
	uint64_t seen_read;	/* events read since the reset, as last seen */
	uint64_t stolen_told;	/* stats.stolen when the last warning went out */
	uint64_t stolen_warn_ns;	/* ... and when */
};

/* cpu-consume.c: the position on the reader page and the time known at walk_off */
struct tm_consume {
	unsigned int id;
	unsigned int off;
	unsigned int walk_off;
	uint64_t walk_ts;
	bool walk_bad;
	uint64_t seen_entries;
	uint64_t gated_since;	/* tm_now_ns() of the first call worth_get_reader() turned down */
	uint64_t scanned_ns;	/* ... and of its last look at the whole ring */
	/*
	 * The ring's order as our GET_READER swaps left it (cpu-consume.c,
	 * "the ring's order"): the sub-buffer after and before each one, and
	 * the head, where the writer goes when it leaves the reader page.
	 * ring_next holds nr_subbufs of each (ring_prev()); NULL while the
	 * order is not known.
	 */
	unsigned int *ring_next;
	unsigned int head;
	uint64_t head_overrun;	/* meta page overrun at the last swap: the head moves as it grows */
	bool cleared_pending;	/* a reset's gap waits for the next region */
	/* the second-consumer check of region id, done when the iterator has walked it */
	bool check_pending;
	uint64_t check_prev_read;
	uint64_t check_nread;
};

/* cpu-read.c: one page copy */
struct tm_readsrc {
	unsigned char *buf;
	unsigned int seq;
	uint64_t skipped;	/* events the kernel skipped and still counts unread, reported */
	uint64_t seen_entries;	/* its events written since the reset, as last seen */
	uint64_t expect_read;	/* the kernel's read count as our own reads make it */
	uint64_t looked_ns;	/* the last look at the counters for a reset */
	uint64_t backlog;	/* events still to come after the last page, as then counted */
	bool cleared_pending;	/* a reset's gap waits for the next page */
	int unpinned_err;	/* the thread could not be moved back: errno, told once */
	bool no_move;		/* ... and is never moved again */
	bool after_page;	/* the last read() returned a page: an EAGAIN ends a drain */
};

struct tm_snap_page {
	uint64_t ts;
	unsigned int id;
	unsigned int start;
	unsigned int size;
};

#define TM_SLOT_IDS	8

/* cpu-snapshot.c: what is known of the copy in one slot of the copies */
struct tm_snap_slot {
	/* the records of the whole page, as the dump counted them (counted) */
	uint64_t events;
	uint64_t bytes;
	uint64_t first_ts;
	uint64_t last_ts;
	uint64_t end_ts;		/* the time after the last record */
	uint16_t ids[TM_SLOT_IDS];	/* the event ids among them */
	unsigned char nr_ids;
	bool counted;
	bool changed;			/* rewritten unlike the kernel's page: never seeds */
};

/*
 * cpu-snapshot.c: the copies of a closed snapshot reader, kept by a dump,
 * that seed the first scan of the next reader of the same buffer: a page
 * found there with the same time stamp and size is not copied again.
 */
struct tm_snap_keep {
	unsigned char *copies;
	struct tm_snap_page *byid;
	unsigned int *slot;
	struct tm_snap_slot *slots;
	unsigned int subbuf_size;
	unsigned int nr_subbufs;
};

/* cpu-snapshot.c: validated copies of every sub-buffer */
struct tm_snapshot {
	unsigned char *copies;		/* nr_subbufs slots */
	struct tm_snap_page *byid;	/* the copy of each sub-buffer */
	unsigned int *slot;		/* the slot each sub-buffer's copy is in */
	struct tm_snap_slot *slots;
	struct tm_snap_page *order;	/* what the snapshot hands out, oldest first */
	struct tm_snap_keep *seed;	/* for the first scan, or NULL */
	unsigned int nr_order;
	unsigned int next_order;
	bool scanned;
	bool unsure;
};

/* cpu-follow.c: the cursor on the live page after what was handed out */
struct tm_follow {
	struct {
		bool valid;
		bool complete;
		unsigned int id;
		unsigned int off;
		uint64_t ts;
		uint64_t walk_ts;
		/* when complete: the page that came next then, and its time stamp */
		bool next_valid;
		unsigned int next_id;
		uint64_t next_ts;
	} cur;
	long long pending_lost;
	unsigned char *buf;
};

/* cpu.c: tracemap_cpu_next_event() over the current region */
struct tm_iter {
	struct tracemap_region region;
	struct tm_walk walk;
	long long missed;
	unsigned int recs;		/* records handed out of the region so far */
	bool have_region;
};

/* subbuf-pages.c: the page tracemap_cpu_read_page() is building */
struct tm_pages {
	unsigned char *stage;
	bool staged;
	bool complete;
	unsigned int id;
	unsigned int start;
	unsigned int end;
	uint64_t base;
	long long lost;
	uint64_t since;
};

struct tracemap_cpu {
	int fd;
	int cpu;
	int owner;			/* the process that opened it (tm_in_child()) */
	bool child_told;		/* tm_child_refused() said so */
	enum tracemap_mode mode;
	enum tracemap_backend backend;
	unsigned int subbuf_size;
	unsigned int nr_subbufs;

	/* the mapping (BACKEND_MMAP) */
	void *map;
	size_t map_len;
	const struct trace_buffer_meta *meta;
	const unsigned char *subbufs;
	/* per_cpu/cpuN/stats: the counters when the meta page does not have them */
	char *stats_path;
	/* tm_cpu_open_read_fd(): the counters of a stand-in (unit tests); NULL: the file */
	int (*stats)(void *ctx, struct tracemap_cpu_stats *k);
	void *stats_ctx;
	/* tm_cpu_open_memory(): GET_READER of a synthetic mapping (fuzzing); NULL: ioctl */
	int (*get_reader)(void *ctx);
	void *get_reader_ctx;

	struct tm_loss loss;
	struct tm_consume consume;
	struct tm_readsrc rd;
	struct tm_snapshot snap;
	struct tm_follow follow;
	struct tm_iter it;
	struct tm_pages pages;
	struct tm_wake wake;		/* tracemap_cpu_wait(), wake.c */
	struct tm_tally *tally;		/* a dump's counts of the regions handed out, or NULL */

	struct tracemap_cpu_stats st;
	bool held_by_stream;		/* tm_cpu_hold(): the last event waits in a stream */
};

static inline const unsigned char *tm_subbuf_at(const struct tracemap_cpu *c, unsigned int id)
{
	return c->subbufs + (size_t)id * c->subbuf_size;
}

/* cpu.c: what every source uses */
/* The kernel's counters of the read() backend: per_cpu/cpuN/stats or the stand-in */
int tm_cpu_kernel_stats(const struct tracemap_cpu *c, struct tracemap_cpu_stats *k);
void tm_region_init(const struct tracemap_cpu *c, struct tracemap_region *r,
		    const unsigned char *sb, unsigned int id);
/*
 * A loss flagged on a page: the stored count, or what overrun grew by since
 * the last one; @overrun TM_OVERRUN_UNKNOWN when the caller did not read it.
 */
#define TM_OVERRUN_UNKNOWN	UINT64_MAX
long long tm_loss_flagged(struct tracemap_cpu *c, long long stored, uint64_t overrun);
/*
 * @n events another consumer of the buffer took (GET_READER of another
 * mapper, a read() of trace_pipe_raw): counted in stats.stolen, warned about
 * at most once a second.
 */
void tm_loss_stolen(struct tracemap_cpu *c, uint64_t n);

/* cpu-consume.c */
void tm_consume_init(struct tracemap_cpu *c);
/* cpu-consume.c: free what tm_consume_init() allocated */
void tm_consume_free(struct tracemap_cpu *c);
/*
 * The next region; @walked: the event iterator walks all of it and reports
 * its records to tm_consume_walked(), which then does the second-consumer
 * check (else the region is counted here, in a walk of its own).
 */
int tm_consume_region(struct tracemap_cpu *c, struct tracemap_region *r, bool walked);
/*
 * The iterator walked region @id to @w (@bad: a corrupt record), @recs
 * records in all: the walk continues there.
 */
void tm_consume_walked(struct tracemap_cpu *c, unsigned int id, const struct tm_walk *w,
		       bool bad, unsigned int recs);
/* Whether the mapping shows the writer past the reader page (false: cannot tell). */
bool tm_consume_writer_left(struct tracemap_cpu *c);

/* cpu-read.c */
void tm_read_init(struct tracemap_cpu *c);
int tm_read_region(struct tracemap_cpu *c, struct tracemap_region *r);
/* Events the kernel stepped past that it still counts unread, reported lost so far */
uint64_t tm_read_skipped(const struct tracemap_cpu *c);
uint64_t tm_read_backlog(const struct tracemap_cpu *c);

/* cpu-snapshot.c */
/* Copy every sub-buffer and order them; the follow source starts after them. */
void tm_snapshot_scan(struct tracemap_cpu *c);
int tm_snapshot_region(struct tracemap_cpu *c, struct tracemap_region *r);
/* Scanned and every page of the scan handed out. */
bool tm_snapshot_done(const struct tracemap_cpu *c);
/* Scan again on the next region. */
void tm_snapshot_rewind(struct tracemap_cpu *c);
/* Seed the first scan with @k (NULL: none); the reader owns @k from here on. */
void tm_snapshot_seed(struct tracemap_cpu *c, struct tm_snap_keep *k);
/* The copy at @page was rewritten unlike the kernel's page (no-op when not a copy) */
void tm_snapshot_changed(struct tracemap_cpu *c, const unsigned char *page);
/* @page is a copy not rewritten unlike the kernel's page (tm_cpu_copy_clean()) */
bool tm_snapshot_clean(const struct tracemap_cpu *c, const unsigned char *page);
/* The copies taken out of @c (tm_cpu_keep_copies()) */
struct tm_snap_keep *tm_snapshot_keep(struct tracemap_cpu *c);
/* Fill @r from a validated copy @sb, with the time at @start and (in @end_ts) at @end. */
int tm_copy_region(struct tracemap_cpu *c, struct tracemap_region *r, const unsigned char *sb,
		   unsigned int id, unsigned int start, unsigned int end, uint64_t base_ts,
		   uint64_t *end_ts);

/* cpu-follow.c */
/*
 * Where following continues: on sub-buffer @id (TM_NO_ID: none) with time
 * stamp @ts, from @off with the time @walk_ts there (UINT64_MAX: walk from
 * 0) when @valid, else on the first page newer than @ts. Clears any gap.
 */
void tm_follow_from(struct tracemap_cpu *c, bool valid, unsigned int id, unsigned int off,
		    uint64_t ts, uint64_t walk_ts);
int tm_follow_region(struct tracemap_cpu *c, struct tracemap_region *r);

/* subbuf-pages.c: the page builder */
int tm_pages_read(struct tracemap_cpu *c, void *buf, const unsigned char **page,
		  unsigned int flags);
uint64_t tm_pages_pending_since(const struct tracemap_cpu *c);
void tm_pages_drop(struct tracemap_cpu *c);

#endif /* _TRACEMAP_CPU_LOCAL_H */
