// SPDX-License-Identifier: GPL-2.0-only
/*
 * Seed corpora generated at build time (no binary blobs in the tree):
 *
 *   gen-seeds DIR          fuzz-subbuf: kernel-like pages of 4, 8, 16 and 64
 *                          KiB from the test encoder, with every record kind
 *                          and every lost-events form
 *   gen-seeds -d DIR       fuzz-pages and fuzz-tracedat: descriptions of
 *                          sub-buffers (sizes, record kinds, losses) and of
 *                          read schedules, from a fixed random sequence
 *   gen-seeds -r DIR       fuzz-reader: mappings of full 8 KiB sub-buffers
 *                          in each mode, one of them recycled under the copy
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbuf-encode.h"

static const char *dir;
static int nr_seeds;

static int save(const char *what, const void *page, unsigned int size)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%02d-%s-%u", dir, nr_seeds++, what, size);
	f = fopen(path, "w");
	if (!f || fwrite(page, 1, size, f) != size || fclose(f)) {
		fprintf(stderr, "gen-seeds: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* one page with each record kind written by hand */
static int all_kinds(unsigned char *page, unsigned int size, long long lost)
{
	const uint64_t t0 = 987654321;
	struct sbe e;
	int ret = 0;

	sbe_init(&e, page, size, t0);
	ret |= sbe_event(&e, t0, NULL, 0, 0) < 0;
	ret |= sbe_event(&e, t0 + 3, NULL, 112, 0) < 0;
	ret |= sbe_event(&e, t0 + 4, NULL, 113, 0) < 0;
	ret |= sbe_event(&e, t0 + 4, NULL, 6, SBE_LONG) < 0;
	ret |= sbe_discard(&e, t0 + 4, 24) < 0;
	ret |= sbe_discard(&e, t0 + 40, 200) < 0;
	ret |= sbe_event(&e, t0 + (1ULL << 28), NULL, 16, 0) < 0;
	ret |= sbe_time_extend(&e, t0 + (1ULL << 40)) < 0;
	ret |= sbe_event(&e, t0 + (1ULL << 40) + 2, NULL, 16, SBE_EXTEND) < 0;
	ret |= sbe_event(&e, t0 + 100, NULL, 48, SBE_ABS) < 0;
	ret |= sbe_time_stamp(&e, t0 + 50) < 0;
	ret |= sbe_event(&e, t0 + 51, NULL, 1000, 0) < 0;
	sbe_end_page(&e);
	sbe_finish(&e, lost);
	sbe_release(&e);
	return ret ? -1 : 0;
}

/*
 * Descriptions as fuzz-pages and fuzz-tracedat read them (a mode byte, a
 * size byte, a count, then per page a loss and records): every mode and
 * size, pages with and without losses, then random read schedules.
 */
static int descriptions(void)
{
	unsigned char in[1024];
	uint64_t seed = 11;
	unsigned int i, j, n, r;
	int ret = 0;

	for (i = 0; i < 32; i++) {
		n = 0;
		in[n++] = i;			/* mode and flags */
		in[n++] = i / 2;		/* sub-buffer size */
		in[n++] = 1 + i % 7;		/* pages, CPUs */
		while (n < 200 + 20 * i && n < sizeof(in)) {
			/* loss kind and count, records (kind, length, delta), end of page */
			r = 3 + sbe_rand(&seed) % 12;
			if (n + 4 + 3 * r > sizeof(in))
				break;
			in[n++] = i % 3 ? 0 : sbe_rand(&seed);
			in[n++] = sbe_rand(&seed);
			in[n++] = r;
			for (j = 0; j < r; j++) {
				in[n++] = sbe_rand(&seed) % 8;
				in[n++] = sbe_rand(&seed);
				in[n++] = sbe_rand(&seed) % 16;
			}
			in[n++] = sbe_rand(&seed) & 1;
		}
		ret |= save("desc", in, n);
	}
	return ret;
}

/*
 * fuzz-reader inputs in its torn layout: [flags] [count] [size], a meta
 * page of 4096 bytes (reader page 0, nothing read), full 8 KiB sub-buffers,
 * then operations (read region, next event, read page) in turn.
 */
static int reader_seeds(void)
{
	const unsigned int nr = 4, size = 3 + 4096 + nr * 8192 + 64;
	unsigned char *in = calloc(1, size);
	uint64_t seed = 7;
	unsigned int mode, i;
	struct sbe e;
	int ret = 0;

	if (!in)
		return -1;
	for (mode = 0; mode < 3; mode++) {
		struct trace_buffer_meta_seed {
			uint32_t meta_page_size, meta_struct_len, subbuf_size, nr_subbufs;
		} m = { 4096, 64, 8192, nr };

		memset(in, 0, size);
		in[0] = 0x10 | mode;		/* torn, mode */
		in[1] = (nr - 2) + 7 * (mode + 1);	/* count, and which one is torn */
		memcpy(in + 3, &m, sizeof(m));
		/* reader.read (offset 28): consume mode hands out that much of page 0 */
		if (mode == 0)
			memcpy(in + 3 + 28, &(uint32_t){ 4000 }, 4);
		for (i = 0; i < nr; i++) {
			ret |= sbe_fill_random(&e, in + 3 + 4096 + i * 8192, 8192,
					       1000000000ULL * (i + 1), &seed, 1, 0) < 0;
			sbe_release(&e);
		}
		for (i = 0; i < 64; i += 4) {
			in[3 + 4096 + nr * 8192 + i] = 4 + i / 4 % 3;	/* next event, region, page */
			in[3 + 4096 + nr * 8192 + i + 3] = i;		/* what the writer does */
		}
		ret |= save("torn", in, size);
	}
	free(in);
	return ret;
}

int main(int argc, char **argv)
{
	static const unsigned int sizes[] = { 4096, 4096, 4096, 4096, 8192, 8192, 16384, 65536 };
	static const long long losts[] = { 0, 792, -1 };
	unsigned char *page = malloc(65536);
	uint64_t seed = 2024;
	struct sbe e;
	unsigned int i;
	int ret = 0;

	if (argc == 3 && (!strcmp(argv[1], "-d") || !strcmp(argv[1], "-r"))) {
		dir = argv[2];
		free(page);
		return (argv[1][1] == 'd' ? descriptions() : reader_seeds()) ? 1 : 0;
	}
	if (argc != 2 || !page) {
		fprintf(stderr, "usage: gen-seeds DIR | gen-seeds -d DIR | gen-seeds -r DIR\n");
		return 1;
	}
	dir = argv[1];

	for (i = 0; i < 24; i++) {
		unsigned int size = sizes[i % 8];
		uint64_t t0 = (i % 5 == 4) ? (0x15ULL << 59) + i : 1000000000ULL * (i + 1);

		if (sbe_fill_random(&e, page, size, t0, &seed, i & 1, losts[i % 3]) < 0)
			ret = -1;
		sbe_release(&e);
		ret |= save("random", page, size);
	}
	for (i = 0; i < 3; i++) {
		ret |= all_kinds(page, 4096, losts[i]);
		ret |= save("kinds", page, 4096);
	}

	/* an empty page, a full page flagged without room, a null padding in commit */
	sbe_init(&e, page, 4096, 5);
	sbe_finish(&e, 0);
	ret |= save("empty", page, 4096);
	sbe_init(&e, page, 4096, 5);
	for (i = 0; i < 51; i++)
		ret |= sbe_event(&e, 5 + i, NULL, 76, 0) < 0;
	sbe_finish(&e, 7);
	sbe_release(&e);
	ret |= save("full", page, 4096);
	sbe_init(&e, page, 8192, 5);
	ret |= sbe_event(&e, 5, NULL, 20, 0) < 0;
	ret |= sbe_null_pad(&e, 1) < 0;
	sbe_finish(&e, 0);
	sbe_release(&e);
	ret |= save("nullpad", page, 8192);

	free(page);
	if (ret)
		fprintf(stderr, "gen-seeds: failed\n");
	return ret ? 1 : 0;
}
