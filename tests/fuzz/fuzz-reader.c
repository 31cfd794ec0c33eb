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
 * Input: mode, sub-buffer count, sub-buffer size, then the bytes of the
 * meta page and sub-buffers (missing ones are zero), the rest are 4-byte
 * operations: [op, offset low, offset high, value].
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* the reader explains corrupt records: silence, the fuzzer checks what it returns */
static void quiet(void *ctx, enum tracemap_log_level level, const char *msg)
{
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
	unsigned char *page;
	size_t take;

	if (size < 3)
		return 0;
	mode = (enum tracemap_mode)(data[0] % 3);
	nr = 2 + data[1] % 7;
	subbuf_size = sizes[data[2] % 4];
	data += 3;
	size -= 3;
	f.len = META_SIZE + (size_t)nr * subbuf_size;
	f.map = calloc(1, f.len);
	page = malloc(subbuf_size);
	if (!f.map || !page)
		abort();
	take = size < f.len ? size : f.len;
	memcpy(f.map, data, take);
	data += take;
	size -= take;

	tracemap_set_print(quiet, NULL);
	c = tm_cpu_open_memory(mode, f.map, f.map + META_SIZE, subbuf_size, nr, get_reader, &f);
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
