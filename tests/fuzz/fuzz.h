/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the fuzz targets share: the check that aborts (libFuzzer reports it
 * as a crash with the input), the input read byte by byte, and the print
 * sink that keeps the library quiet unless FUZZ_DEBUG is set.
 */
#ifndef _TRACEMAP_FUZZ_H
#define _TRACEMAP_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tracemap.h"

#define check(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: check failed: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			abort();					\
		}							\
	} while (0)

/* The input, taken a byte at a time; 0 once it is used up. */
struct fuzz_in {
	const uint8_t *p;
	size_t left;
};

static inline unsigned int take(struct fuzz_in *in)
{
	if (!in->left)
		return 0;
	in->left--;
	return *in->p++;
}

/* The library explains what it refuses: silent, or on stderr with FUZZ_DEBUG=1. */
static inline void fuzz_print(void *ctx, enum tracemap_log_level level, const char *msg)
{
	(void)ctx;
	(void)level;
	if (getenv("FUZZ_DEBUG"))
		fprintf(stderr, "libtracemap: %s\n", msg);
}

#endif
