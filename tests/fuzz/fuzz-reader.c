// SPDX-License-Identifier: LGPL-2.1
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
#include <string.h>

#include "fuzz.h"
#include "tracemap-local.h"

#define META_SIZE	((unsigned int)sizeof(struct trace_buffer_meta))

struct fake {
	unsigned char *map;
	size_t len;
	unsigned int get_readers;
};

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
	unsigned int subbuf_size, nr, off, i;
	struct tracemap_region r;
	struct tracemap_event ev;
	struct tracemap_cpu *c;
	struct fake f = { 0 };
	enum tracemap_mode mode;
	bool stream, unordered;
	unsigned char *page;
	size_t take;

	if (size < 3)
		return 0;
	mode = (enum tracemap_mode)(data[0] % 3);
	stream = data[0] & 4;
	unordered = data[0] & 8;
	nr = 2 + data[1] % 7;
	subbuf_size = sizes[data[2] % 4];
	data += 3;
	size -= 3;
	f.len = (META_SIZE + (size_t)nr * subbuf_size) * (stream ? 2 : 1);
	f.map = calloc(1, f.len);
	page = malloc(subbuf_size);
	if (!f.map || !page)
		abort();
	take = size < f.len ? size : f.len;
	memcpy(f.map, data, take);
	data += take;
	size -= take;

	/* the reader explains corrupt records: silence, the fuzzer checks what it returns */
	tracemap_set_print(fuzz_print, NULL);
	if (stream) {
		fuzz_stream(&f, nr, subbuf_size, mode, unordered, data, size);
		goto out;
	}
	c = tm_cpu_open_memory(0, mode, f.map, f.map + META_SIZE, subbuf_size, nr, get_reader, &f);
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
			f.map[off] = op[3];
			break;
		case 3:
			/* a whole 32-bit word: ids, positions, commit sizes, flags */
			if (off + 4 <= f.len)
				memcpy(f.map + off, (uint32_t[]){ op[3] * 0x01010101u }, 4);
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
	free(page);
	free(f.map);
	return 0;
}
