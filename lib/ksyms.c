// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Kernel symbols for libtraceevent: /proc/kallsyms read into one buffer,
 * its names terminated in place and indexed by one sorted array, handed to
 * a tep handle as its function resolver (tep_set_function_resolver()).
 *
 * tep_parse_kallsyms() makes three allocations per symbol (a list item, the
 * name, the module) and sscanf()s every line, and its free falls in the
 * stop of every stream (bench/README.md). Here loading is a pass over the
 * text and one sort, and freeing is three free() calls.
 *
 * The answers are libtraceevent's own (tests/unit/test-ksyms compares them
 * over this machine's kallsyms and crafted text): the same lines kept
 * (tep_parse_kallsyms(): not '$' names, not types 'A' or 'a'; up to the
 * first line it cannot parse), the same order (by address; of equal
 * addresses the later line first: its list is built backwards and sorted
 * with glibc's stable qsort()), and the same search (glibc's bsearch()
 * probing, with libtraceevent's comparison: an address matches an entry it
 * equals or one it lies after and before the next entry's address; the end
 * mark's address is 0). The only difference: tep_find_function_info()
 * reports size 0 for a resolver.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "tracemap-local.h"

#define NO_MOD		UINT32_MAX

struct ksym {
	uint64_t addr;
	uint32_t name;		/* offset of the name in the text */
	uint32_t mod;		/* offset of the module, NO_MOD: none */
	uint32_t line;		/* the line's number: the order of equal addresses */
};

struct tm_ksyms {
	char *text;
	struct ksym *syms;	/* nr sorted entries and the end mark */
	size_t nr;
};

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * One line as tep_parse_kallsyms() reads it ("%16llx %c %n%*s%n%*1[\t][%n%*s%n"):
 * false when it could not (it then stops); *keep false for a line it skips.
 */
static bool parse_line(char *line, struct ksym *s, char *text, bool *keep)
{
	char *p = line, *name, *name_end, *mod = NULL, *mod_end;
	uint64_t addr = 0;
	int digits = 0, v;
	char type;

	while (isspace((unsigned char)*p))
		p++;
	while (digits < 16 && (v = hexval((unsigned char)*p)) >= 0) {
		addr = addr << 4 | (uint64_t)v;
		p++;
		digits++;
	}
	if (!digits)
		return false;
	while (isspace((unsigned char)*p))
		p++;
	if (!*p)
		return false;
	type = *p++;
	while (isspace((unsigned char)*p))
		p++;
	name = p;
	while (*p && !isspace((unsigned char)*p))
		p++;
	if (p == name)
		return false;
	name_end = p;
	if (p[0] == '\t' && p[1] == '[') {
		/* %*s skips white space before the module as well */
		mod = p + 2;
		for (mod_end = mod; isspace((unsigned char)*mod_end); mod_end++)
			;
		if (!*mod_end) {
			mod = NULL;
		} else {
			while (*mod_end && !isspace((unsigned char)*mod_end))
				mod_end++;
			mod_end[-1] = '\0';	/* the ']' */
		}
	}
	*keep = name[0] != '$' && type != 'A' && type != 'a';
	*name_end = '\0';
	s->addr = addr;
	s->name = (uint32_t)(name - text);
	s->mod = mod ? (uint32_t)(mod - text) : NO_MOD;
	return true;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* equal addresses: the later line first */
	return x->line > y->line ? -1 : x->line < y->line;
}

struct tm_ksyms *tm_ksyms_parse(char *text, size_t len)
{
	struct tm_ksyms *k = calloc(1, sizeof(*k));
	size_t cap = 0, lines = 0;
	char *line, *end;
	bool keep;

	if (!k || len >= NO_MOD) {
		free(k);
		free(text);
		errno = k ? EFBIG : ENOMEM;
		return NULL;
	}
	k->text = text;
	text[len] = '\0';
	for (line = text; *line; line = end) {
		end = strchr(line, '\n');
		end = end ? end : line + strlen(line);
		if (*end)
			*end++ = '\0';
		if (!*line)
			continue;
		if (k->nr + 1 >= cap) {
			struct ksym *n;

			cap = cap ? cap * 2 : 4096;
			n = realloc(k->syms, cap * sizeof(*n));
			if (!n) {
				tm_ksyms_free(k);
				errno = ENOMEM;
				return NULL;
			}
			k->syms = n;
		}
		if (!parse_line(line, &k->syms[k->nr], text, &keep))
			break;
		k->syms[k->nr].line = (uint32_t)lines++;
		k->nr += keep;
	}
	if (!k->syms && !(k->syms = malloc(sizeof(*k->syms)))) {
		tm_ksyms_free(k);
		errno = ENOMEM;
		return NULL;
	}
	qsort(k->syms, k->nr, sizeof(*k->syms), cmp_ksym);
	k->syms[k->nr] = (struct ksym){ .addr = 0, .mod = NO_MOD };
	return k;
}

struct tm_ksyms *tm_ksyms_load(const char *path)
{
	size_t len;
	char *text = tm_read_whole(path, &len), *fit;

	if (!text)
		return NULL;
	/* read in growing steps: give back what the text does not use */
	fit = realloc(text, len + 1);
	return tm_ksyms_parse(fit ? fit : text, len);
}

void tm_ksyms_free(struct tm_ksyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->text);
	free(k);
}

const char *tm_ksyms_find(const struct tm_ksyms *k, uint64_t addr, uint64_t *start,
			  const char **mod)
{
	size_t l = 0, u = k->nr, i;
	const struct ksym *s;

	/* glibc's bsearch(), with libtraceevent's func_bcmp() */
	while (l < u) {
		i = (l + u) / 2;
		s = &k->syms[i];
		if (addr == s->addr || (addr > s->addr && addr < s[1].addr)) {
			if (start)
				*start = s->addr;
			if (mod)
				*mod = s->mod == NO_MOD ? NULL : k->text + s->mod;
			return k->text + s->name;
		}
		if (addr < s->addr)
			u = i;
		else
			l = i + 1;
	}
	return NULL;
}

size_t tm_ksyms_count(const struct tm_ksyms *k)
{
	return k->nr;
}

static char *resolve(void *priv, unsigned long long *addrp, char **modp)
{
	uint64_t start;
	const char *mod, *name = tm_ksyms_find(priv, *addrp, &start, &mod);

	if (!name)
		return NULL;
	*addrp = start;
	*modp = (char *)mod;
	return (char *)name;
}

int tm_ksyms_attach(struct tm_ksyms *k, struct tep_handle *tep)
{
	return tep_set_function_resolver(tep, resolve, k) ? -ENOMEM : 0;
}
