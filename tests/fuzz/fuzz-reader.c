// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the per-CPU reader (consume, snapshot and follow, the
 * event iterator and the page builder) over a synthetic mapping that lies:
 * a meta page and sub-buffers taken from the input, then changed between
 * calls by the input's operations (reader ids and positions out of range,
 * read past the end, commit words and time stamps that change between
 * reads, pages recycled under a cursor). Nothing may read outside the
 * mapping or the reader's own buffers (ASan), and what comes back must stay
 * inside its sub-buffer.
 *
 * With bit 2 of the first byte, two such readers are merged by a stream
 * (ordered, or fill-priority with bit 3) whose callback sometimes stops it.
 *
 * With bit 4 (and not bit 2), one 8 KiB sub-buffer is recycled in the
 * middle of every copy, as a writer overtaking the reader does: its second
 * memory page is protected, and the fault of a copy reaching it changes the
 * header (time stamp, commit) or data as the input's bytes say, then lets
 * the copy go on; the header's next read re-arms the trap (test-dump's
 * trick, driven by the input).
 *
 * Input: mode and flags, sub-buffer count, sub-buffer size, then the bytes
 * of the meta page and sub-buffers (missing ones are zero; a stream takes
 * two mappings), the rest are 4-byte operations: [op, offset low, offset
 * high, value].
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>

#include "fuzz.h"
#include "tracemap-local.h"

#define META_SIZE	((unsigned int)sizeof(struct trace_buffer_meta))

struct fake {
	unsigned char *map;
	size_t len;
	unsigned int get_readers;
};

/* The sub-buffer recycled under the copy (bit 4), and what the writer does then. */
static struct {
	unsigned char *hdr;		/* its first memory page: header and data */
	unsigned char *data;		/* its second: the rest of the data */
	const uint8_t *tape;		/* what the writer does at each fault, in turn */
	size_t len, pos;
	struct sigaction old;
} tear;

static void tear_arm(void)
{
	mprotect(tear.hdr, 4096, PROT_READ);
	mprotect(tear.data, 4096, PROT_NONE);
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	unsigned char *a = si->si_addr;
	unsigned int b = tear.len ? tear.tape[tear.pos++ % tear.len] : 0;
	uint64_t v;

	if (tear.hdr && a >= tear.data && a < tear.data + 4096) {
		/* the copy reached the second half: the writer recycles the page */
		mprotect(tear.hdr, 8192, PROT_READ | PROT_WRITE);
		switch (b % 4) {
		case 1:
			memcpy(&v, tear.hdr, 8);
			v += b;
			memcpy(tear.hdr, &v, 8);
			break;
		case 2:
			memcpy(tear.hdr + 8, (uint32_t[]){ b * 16 }, 4);
			break;
		case 3:
			memset(tear.data, b, 64);
			break;
		}
		mprotect(tear.hdr, 4096, PROT_NONE);
		mprotect(tear.data, 4096, PROT_READ);
	} else if (tear.hdr && a >= tear.hdr && a < tear.hdr + 4096) {
		/* the header is read again: re-arm for the next copy */
		tear_arm();
	} else if (tear.old.sa_flags & SA_SIGINFO) {
		/* a real fault: ASan's (or libFuzzer's) handler reports it */
		tear.old.sa_sigaction(sig, si, uc);
	} else {
		sigaction(sig, &tear.old, NULL);
	}
}

/* The fuzzer's own change of the mapping: the trap is lifted for it. */
static void poke(struct fake *f, size_t off, const void *v, size_t n)
{
	if (off + n > f->len)
		return;
	if (tear.hdr)
		mprotect(tear.hdr, 8192, PROT_READ | PROT_WRITE);
	memcpy(f->map + off, v, n);
	if (tear.hdr)
		tear_arm();
}

/* GET_READER: the kernel would update the meta page; the input's writes do */
static int get_reader(void *ctx)
{
	struct fake *f = ctx;

	f->get_readers++;
	return 0;
}

static void check_region(const struct tracemap_region *r, unsigned int subbuf_size,
			 unsigned char *page)
{
	struct tm_walk w;
	struct tm_rec rec;

	if (r->start > r->end || r->end > subbuf_size - TM_SUBBUF_HDR)
		abort();
	if (!r->data)
		return;
	/* the page builder takes any region the reader hands out */
	if (tracemap_region_write_subbuf(r, page, subbuf_size) != (int)subbuf_size) {
		if (getenv("FUZZ_DEBUG"))
			fprintf(stderr, "region start %u end %u size %u lost %lld data %p\n", r->start,
				r->end, r->subbuf_size, r->lost, (const void *)r->data);
		abort();
	}
	w = (struct tm_walk){ r->data, r->start, r->end, r->base_ts };
	while (tm_walk_next(&w, &rec) > 0)
		if (rec.off + rec.size > r->end)
			abort();
}

struct merge {
	unsigned int subbuf_size;
	unsigned int stop_every;	/* the callback stops the delivery every N events */
	unsigned int n;
};

static int on_event(void *ctx, const struct tracemap_event *ev)
{
	struct merge *m = ctx;

	if (ev->size > m->subbuf_size || (ev->cpu != 0 && ev->cpu != 1))
		abort();
	return m->stop_every && ++m->n % m->stop_every == 0 ? -1 : 0;
}

static int on_lost(void *ctx, int cpu, long long lost)
{
	if ((cpu != 0 && cpu != 1) || (lost <= 0 && lost != TRACEMAP_LOST_UNKNOWN))
		abort();
	return 0;
}

/* Two readers merged by a stream, their mappings changed between rounds. */
static void fuzz_stream(struct fake *f, unsigned int nr, unsigned int subbuf_size,
			enum tracemap_mode mode, bool unordered, const uint8_t *ops, size_t size)
{
	struct merge m = { .subbuf_size = subbuf_size };
	struct tracemap_stream_opts o = {
		.sz = sizeof(o), .mode = mode, .on_event = on_event, .on_lost = on_lost, .ctx = &m,
		.flags = unordered ? TRACEMAP_STREAM_UNORDERED : 0,
	};
	size_t half = f->len / 2, off, i;
	struct tracemap_cpu *c[2];
	struct tracemap_stream *s;
	struct tracemap_event ev;

	for (i = 0; i < 2; i++) {
		unsigned char *base = f->map + i * half;

		c[i] = tm_cpu_open_memory(i, mode, base, base + META_SIZE, subbuf_size, nr,
					  get_reader, f);
		if (!c[i]) {
			if (i)
				tracemap_cpu_close(c[0]);
			return;
		}
	}
	s = tm_stream_open_readers(c, 2, &o);
	if (!s) {
		tracemap_cpu_close(c[0]);
		tracemap_cpu_close(c[1]);
		return;
	}
	for (i = 0; i + 4 <= size; i += 4) {
		const uint8_t *op = ops + i;

		off = (op[1] | op[2] << 8) % f->len;
		switch (op[0] % 6) {
		case 0:
		case 1:
			f->map[off] = op[3];
			break;
		case 2:
			if (off + 4 <= f->len)
				memcpy(f->map + off, (uint32_t[]){ op[3] * 0x01010101u }, 4);
			break;
		case 3:
			m.stop_every = op[3] % 8;
			tracemap_stream_consume(s);
			break;
		case 4:
			/* pull: nothing to wait on, so only what is there */
			if (tracemap_stream_next_event(s, &ev, 0) > 0 && ev.size > subbuf_size)
				abort();
			break;
		default:
			tracemap_cpu_rewind(tracemap_stream_cpu(s, op[3] & 1));
			break;
		}
	}
	tracemap_stream_close(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned int sizes[] = { 64, 128, 256, 4096 };
	unsigned int subbuf_size, nr, off, i, pick, meta_size = META_SIZE;
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO };
	struct tracemap_region r;
	struct tracemap_event ev;
	struct tracemap_cpu *c;
	struct fake f = { 0 };
	enum tracemap_mode mode;
	bool stream, unordered, torn;
	unsigned char *page;
	size_t take;

	if (size < 3)
		return 0;
	mode = (enum tracemap_mode)(data[0] % 3);
	stream = data[0] & 4;
	unordered = data[0] & 8;
	torn = (data[0] & 0x14) == 0x10;
	nr = 2 + data[1] % 7;
	pick = data[1] / 7;
	subbuf_size = torn ? 8192 : sizes[data[2] % 4];
	/* torn: the sub-buffers page-aligned after a meta page of their own */
	meta_size = torn ? 4096 : META_SIZE;
	data += 3;
	size -= 3;
	f.len = (meta_size + (size_t)nr * subbuf_size) * (stream ? 2 : 1);
	f.map = mmap(NULL, f.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	page = malloc(subbuf_size);
	if (f.map == MAP_FAILED || !page)
		abort();
	take = size < f.len ? size : f.len;
	memcpy(f.map, data, take);
	data += take;
	size -= take;
	if (torn) {
		tear.hdr = f.map + meta_size + (size_t)(pick % nr) * 8192;
		tear.data = tear.hdr + 4096;
		tear.tape = data;
		tear.len = size;
		tear.pos = 0;
		check(!sigaction(SIGSEGV, &sa, &tear.old));
		tear_arm();
	}

	/* the reader explains corrupt records: silence, the fuzzer checks what it returns */
	tracemap_set_print(fuzz_print, NULL);
	if (stream) {
		fuzz_stream(&f, nr, subbuf_size, mode, unordered, data, size);
		goto out;
	}
	c = tm_cpu_open_memory(0, mode, f.map, f.map + meta_size, subbuf_size, nr, get_reader, &f);
	if (!c)
		goto out;
	for (i = 0; i + 4 <= size; i += 4) {
		const uint8_t *op = data + i;

		off = (op[1] | op[2] << 8) % f.len;
		switch (op[0] % 8) {
		case 0:
		case 1:
		case 2:
			/* the kernel (or a liar) changes a byte between two calls */
			poke(&f, off, &op[3], 1);
			break;
		case 3:
			/* a whole 32-bit word: ids, positions, commit sizes, flags */
			poke(&f, off, (uint32_t[]){ op[3] * 0x01010101u }, 4);
			break;
		case 4:
			if (tracemap_cpu_next_event(c, &ev) > 0 && ev.size > subbuf_size)
				abort();
			break;
		case 5:
			if (tracemap_cpu_read_region(c, &r) > 0)
				check_region(&r, subbuf_size, page);
			break;
		case 6:
			tracemap_cpu_read_page(c, page, subbuf_size, op[3] & 1 ? TRACEMAP_PAGE_FLUSH : 0);
			break;
		default:
			tracemap_cpu_rewind(c);
			break;
		}
	}
	tracemap_cpu_close(c);
out:
	if (tear.hdr) {
		sigaction(SIGSEGV, &tear.old, NULL);
		tear.hdr = tear.data = NULL;
	}
	free(page);
	munmap(f.map, f.len);
	return 0;
}
