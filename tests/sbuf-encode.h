/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Test encoder of ftrace ring-buffer sub-buffers, written from the kernel's
 * format (kernel/trace/ring_buffer.c; notes: kernel-mmap.md section 2), not
 * from libtracemap's code, so that it can serve as an independent oracle.
 *
 * Layout of a sub-buffer of any size (4 KiB, 8 KiB, 64 KiB...):
 *   u64 time_stamp, long commit (8 bytes), data[subbuf_size - 16]
 * Records are 32-bit words: type_len = w & 31, time_delta = w >> 5.
 *
 * Times: every record's delta is relative to the running time as a reader
 * following libtraceevent's kbuffer sees it (padding deltas are added). The
 * encoder keeps the list of data records it wrote with the exact values a
 * reader must report.
 */
#ifndef _TRACEMAP_SBUF_ENCODE_H
#define _TRACEMAP_SBUF_ENCODE_H

#include <stdint.h>

#include "uapi/trace_mmap.h"

#define SBE_HDR			16
#define SBE_TS_SHIFT		27
#define SBE_TS_MASK		((1ULL << SBE_TS_SHIFT) - 1)
#define SBE_TS_MSB		(0x1fULL << 59)
#define SBE_MAX_SMALL		112	/* RB_MAX_SMALL_DATA: 28 * 4 */
#define SBE_PADDING		29
#define SBE_TIME_EXTEND		30
#define SBE_TIME_STAMP		31
#define SBE_MISSED_EVENTS	(1u << 31)
#define SBE_MISSED_STORED	(1u << 30)

/* what a reader must report for one data record */
struct sbe_rec {
	uint64_t ts;
	uint64_t prev_ts;		/* running time just before the record's own header */
	unsigned int off;		/* record offset in the data area */
	unsigned int payload_off;	/* payload offset in the data area */
	unsigned int size;		/* payload bytes as readers report them (4-aligned) */
	unsigned int len;		/* payload bytes the writer asked for */
};

struct sbe {
	unsigned char *page;		/* the sub-buffer being written */
	unsigned int subbuf_size;	/* including the 16-byte header */
	unsigned int data_size;		/* subbuf_size - 16 */
	unsigned int off;		/* next record offset in the data area */
	unsigned int commit;		/* committed bytes (what finish writes) */
	unsigned int real_end;		/* end before an end-of-page filler, 0 if none */
	uint64_t page_ts;
	uint64_t ts;			/* running time after the last record */
	struct sbe_rec *recs;		/* data records written, in order */
	unsigned int nr;
	unsigned int cap;
	unsigned int *starts;		/* offset of every committed record of any kind */
	unsigned int nr_starts;
	unsigned int cap_starts;
	int missed_stored;		/* result of sbe_finish() */
};

/* sbe_event() flags */
#define SBE_LONG	(1u << 0)	/* type_len 0 even for payloads <= 112 bytes */
#define SBE_ABS		(1u << 1)	/* precede with an absolute TIME_STAMP */
#define SBE_EXTEND	(1u << 2)	/* precede with a TIME_EXTEND even for a small delta */

/* Garbage the encoder leaves beyond commit, like the stale bytes of a recycled page. */
#define SBE_STALE_BYTE	0xeb

/*
 * Start a sub-buffer at @page (@subbuf_size bytes): header time @page_ts,
 * commit 0, data filled with SBE_STALE_BYTE. Returns 0 or -EINVAL.
 */
int sbe_init(struct sbe *e, void *page, unsigned int subbuf_size, uint64_t page_ts);
void sbe_release(struct sbe *e);

/*
 * Data event at absolute time @ts with @len bytes of @payload (NULL: a
 * pattern derived from the record offset). As the kernel: type_len
 * DIV_ROUND_UP(len, 4) (0 bytes count as 1) up to 112 bytes, else type_len 0
 * with array[0] = ALIGN(len, 4) + 4; a TIME_EXTEND first when the delta does
 * not fit 27 bits. Returns the record offset, -ENOSPC when it does not fit,
 * -EINVAL when @ts is before the running time (use SBE_ABS), -ERANGE when an
 * absolute stamp would change the 5 top bits.
 */
int sbe_event(struct sbe *e, uint64_t ts, const void *payload, unsigned int len,
	      unsigned int flags);

/* A TIME_EXTEND record moving the running time to @ts. */
int sbe_time_extend(struct sbe *e, uint64_t ts);
/* An absolute TIME_STAMP record setting the running time to @ts. */
int sbe_time_stamp(struct sbe *e, uint64_t ts);

/*
 * A discarded event of @len payload bytes at time @ts, as rb_event_discard()
 * leaves it: PADDING, delta ts - running (1 when that is 0, as the kernel
 * forces), array[0] = the record size - 4. The reader adds the delta.
 */
int sbe_discard(struct sbe *e, uint64_t ts, unsigned int len);

/*
 * End the page as rb_reset_tail() does when the next event does not fit: with
 * 8 bytes or more left, a PADDING of delta 1 reaching the end of the page,
 * included in commit; with 4 left, a null padding (delta 0) beyond commit.
 * Remembers real_end for sbe_finish(). Returns 0.
 */
int sbe_end_page(struct sbe *e);

/*
 * A null padding (PADDING, delta 0) at the current offset whose array[0]
 * covers the rest of the page. @in_commit: count it in commit (the kernel
 * never does; readers must stop there either way).
 */
int sbe_null_pad(struct sbe *e, int in_commit);

/*
 * Write the header: time stamp and commit. @lost: 0 no flags; > 0 MISSED
 * and, when 8 bytes fit after the data, the count stored as a long after it
 * with MISSED_STORED; < 0 MISSED only. As ring_buffer_map_get_reader(), a
 * lost count makes commit fall back to real_end (before an end-of-page
 * filler), and the flags are added as ints to the long commit, so a flagged
 * commit reads 0xffffffffc0000xxx / 0xffffffff80000xxx.
 */
void sbe_finish(struct sbe *e, long long lost);

/* The 64-bit commit word the kernel would leave for @size and the flags. */
uint64_t sbe_commit_word(unsigned int size, int missed, int stored);

/* Deterministic generator for the tests: xorshift64*. */
uint64_t sbe_rand(uint64_t *state);

/*
 * Fill a page with a pseudo-random mix of every record kind (small and long
 * events, TIME_EXTEND, absolute stamps, discarded events), ending it with
 * sbe_end_page() when @end_page, and finish it with @lost. The page timestamp
 * is @page_ts. Returns the number of data records.
 */
int sbe_fill_random(struct sbe *e, void *page, unsigned int subbuf_size, uint64_t page_ts,
		    uint64_t *seed, int end_page, long long lost);

/*
 * One CPU's ring as the kernel maps it, for tm_cpu_open_memory(): a meta
 * page and nr_subbufs sub-buffers. Sub-buffer 0 is the (empty) reader page;
 * the writer fills 1, 2, ... in turn, ending a page as rb_reset_tail() does
 * when the next event does not fit, and publishes each event's commit at
 * once. Nothing is recycled: size the ring for all the data.
 * sbe_ring_get_reader() is GET_READER as ring_buffer_map_get_reader() does
 * it: the rest of the reader page when the writer added to it, else the
 * next written sub-buffer swapped in and handed out whole, with the meta
 * page's entries and read counts (no loss, no overrun).
 */
struct sbe_ring {
	struct trace_buffer_meta *meta;	/* a page of its own, zero beyond the struct */
	unsigned char *subbufs;
	unsigned int subbuf_size;
	unsigned int nr_subbufs;
	unsigned int wid;		/* sub-buffer being written (0: none yet) */
	struct sbe w;			/* its encoder */
	unsigned int *recs;		/* data records committed on each sub-buffer */
	unsigned int handed;		/* records of the reader page handed out */
	uint64_t entries;		/* data records written */
};

/* A ring of @nr_subbufs sub-buffers of @subbuf_size bytes. Returns 0, -EINVAL or -ENOMEM. */
int sbe_ring_init(struct sbe_ring *r, unsigned int subbuf_size, unsigned int nr_subbufs);
void sbe_ring_free(struct sbe_ring *r);
/*
 * The writer: a data event at time @ts (not before the last one) of @len
 * bytes of @payload. Returns 0, or -ENOSPC when the ring is full.
 */
int sbe_ring_event(struct sbe_ring *r, uint64_t ts, const void *payload, unsigned int len);
/* GET_READER (the get_reader callback of tm_cpu_open_memory(), @ring the sbe_ring). */
int sbe_ring_get_reader(void *ring);

/* Where event @seq of a sequence goes: returns its ring, its time stamp in *@ts. */
typedef int (*sbe_place_fn)(uint64_t seq, uint64_t *ts);

/*
 * Events @from to @to - 1 of a sequence, each into the ring of @rings that
 * @place says: @len bytes, zero but for the sequence number as a u32 at
 * @seq_off; @counts[ring] (NULL: none) counts them. Returns 0, or -ENOSPC
 * with *@full (NULL: not told) the event that did not fit.
 */
int sbe_rings_write(struct sbe_ring *rings, sbe_place_fn place, uint64_t from, uint64_t to,
		    unsigned int len, unsigned int seq_off, uint64_t *counts, uint64_t *full);

#endif
