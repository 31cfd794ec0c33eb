// SPDX-License-Identifier: GPL-2.0-only
/*
 * The library's kallsyms table (lib/ksyms.c) answers as libtraceevent's own
 * does: a tep handle that loaded the text with tep_parse_kallsyms() and one
 * that resolves through tm_ksyms_attach() give the same name and start
 * (tep_find_function(), tep_find_function_address()) for every address
 * looked up: each symbol's address, one before and one after it, addresses
 * between and beyond them. Over this machine's /proc/kallsyms (when it can
 * be read with addresses: root) and over crafted text: equal addresses
 * (aliases), lines libtraceevent skips ('$' names, absolute symbols), modules,
 * empty lines, lines out of order, and a line it cannot parse (it keeps what
 * came before and stops). Through the formatter too: a %pS and a %ps field
 * print the same with both handles.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "harness.h"
#include "tracemap-local.h"

struct pair {
	struct tep_handle *ref;		/* tep_parse_kallsyms() */
	struct tep_handle *ours;	/* tm_ksyms_attach() */
	struct tm_ksyms *k;
	unsigned long checked;
};

static void pair_load(struct pair *p, const char *text)
{
	size_t len = strlen(text);
	char *copy = malloc(len + 1);

	assert_non_null(copy);
	memcpy(copy, text, len + 1);
	p->ref = tep_alloc();
	p->ours = tep_alloc();
	assert_non_null(p->ref);
	assert_non_null(p->ours);
	tep_parse_kallsyms(p->ref, text);
	p->k = tm_ksyms_parse(copy, len);
	assert_non_null(p->k);
	assert_int_equal(tm_ksyms_attach(p->k, p->ours), 0);
	p->checked = 0;
}

static void pair_free(struct pair *p)
{
	tep_free(p->ref);
	tep_free(p->ours);
	tm_ksyms_free(p->k);
}

static void same(struct pair *p, unsigned long long addr)
{
	const char *a = tep_find_function(p->ref, addr);
	const char *b = tep_find_function(p->ours, addr);
	unsigned long long sa = tep_find_function_address(p->ref, addr);
	unsigned long long sb = tep_find_function_address(p->ours, addr);

	if ((!a) != (!b) || (a && strcmp(a, b)) || sa != sb)
		fail_msg("address %#llx: libtraceevent %s at %#llx, tracemap %s at %#llx", addr,
			 a ? a : "(none)", sa, b ? b : "(none)", sb);
	p->checked++;
}

/* Every address of @text's lines, one before and after, and a spread over the range. */
static void compare(struct pair *p, const char *text)
{
	unsigned long long a, lo = ~0ULL, hi = 0;
	const char *line;
	unsigned int i;

	for (line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (sscanf(line, "%llx", &a) != 1)
			continue;
		same(p, a);
		same(p, a - 1);
		same(p, a + 1);
		lo = a < lo ? a : lo;
		hi = a > hi ? a : hi;
	}
	same(p, 0);
	same(p, ~0ULL);
	if (hi < lo)
		return;
	for (i = 0; i <= 4096; i++)
		same(p, lo + (hi - lo) / 4096 * i);
}

static const char crafted[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000010 T first\n"
	"ffffffff81000010 T first_alias\n"
	"ffffffff81000010 t first_alias2\n"
	"\n"
	"ffffffff81000040 T $a\n"
	"ffffffff81000050 A abs_sym\n"
	"0000000000000100 a percpu_var\n"
	"ffffffff81000060 t local_fn\n"
	"ffffffff81000030 T out_of_order\n"
	"ffffffffc0000000 t mod_fn\t[mymod]\n"
	"ffffffffc0000020 T mod_fn2\t[mymod]\n"
	"ffffffffc0000020 T mod_fn2_alias\t[other]\n"
	"ffffffffc0001000 t bpf_prog_0123456789abcdef_x\t[bpf]\n"
	"ffffffffc0002000 T last\n";

/* @text loaded both ways keeps @kept symbols and answers alike */
static void check_text(const char *text, size_t kept)
{
	struct pair p;

	pair_load(&p, text);
	assert_int_equal(tm_ksyms_count(p.k), kept);
	compare(&p, text);
	pair_free(&p);
}

static void test_crafted(void **state)
{
	(void)state;
	/* _text first first_alias first_alias2 local_fn out_of_order mod_fn mod_fn2 mod_fn2_alias bpf last */
	check_text(crafted, 11);
}

/* libtraceevent stops at a line it cannot parse, keeping what came before */
static void test_bad_line(void **state)
{
	(void)state;
	check_text("ffffffff81000000 T before\n"
		   "ffffffff81000100 T before2\n"
		   "not a symbol line\n"
		   "ffffffff81000200 T after\n", 2);
}

static void test_empty(void **state)
{
	struct pair p;

	(void)state;
	pair_load(&p, "");
	assert_int_equal(tm_ksyms_count(p.k), 0);
	same(&p, 0);
	same(&p, 0xffffffff81000000ULL);
	pair_free(&p);
}

static char *read_all(const char *path, size_t *len)
{
	size_t cap = 1 << 20, n = 0;
	char *buf = malloc(cap + 1), *b;
	FILE *f = fopen(path, "r");
	size_t r;

	if (!f || !buf) {
		if (f)
			fclose(f);
		free(buf);
		return NULL;
	}
	while ((r = fread(buf + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n < cap)
			continue;
		b = realloc(buf, cap * 2 + 1);
		assert_non_null(b);
		buf = b;
		cap *= 2;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* This machine's kernel symbols, every one of them */
static void test_proc_kallsyms(void **state)
{
	struct tm_ksyms *k;
	struct pair p;
	char *text;
	size_t len;

	(void)state;
	text = read_all("/proc/kallsyms", &len);
	if (!text || !len || !strncmp(text, "0000000000000000", 16)) {
		free(text);
		skip();	/* cmocka prints the test as skipped */
	}
	pair_load(&p, text);
	compare(&p, text);
	print_message("%zu symbols kept, %lu addresses looked up\n", tm_ksyms_count(p.k),
		      p.checked);
	assert_true(tm_ksyms_count(p.k) > 1000);
	pair_free(&p);
	/* the loader reads the same */
	k = tm_ksyms_load("/proc/kallsyms");
	assert_non_null(k);
	assert_true(tm_ksyms_count(k) > 1000);
	tm_ksyms_free(k);
	free(text);
}

static void test_load_error(void **state)
{
	(void)state;
	errno = 0;
	assert_null(tm_ksyms_load("/nonexistent/kallsyms"));
	assert_int_equal(errno, ENOENT);
}

/* %pS and %ps fields through tep_print_event() with both handles */
static void test_print(void **state)
{
	static const char fmt[] =
		"name: sym\n"
		"ID: 7\n"
		"format:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
		"\n"
		"\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
		"\n"
		"print fmt: \"%pS %ps\", (void *)REC->ip, (void *)REC->ip\n";
	static const unsigned long long ips[] = {
		0xffffffff81000010ULL, 0xffffffff81000017ULL, 0xffffffffc0000021ULL,
		0xffffffff80000000ULL, 0xffffffffc0002000ULL, 0xffffffffc0002001ULL,
	};
	struct trace_seq sa, sb;
	struct tep_record rec;
	unsigned char data[16];
	struct pair p;
	unsigned int i;

	(void)state;
	pair_load(&p, crafted);
	assert_int_equal(tep_parse_event(p.ref, fmt, sizeof(fmt) - 1, "test"), 0);
	assert_int_equal(tep_parse_event(p.ours, fmt, sizeof(fmt) - 1, "test"), 0);
	for (i = 0; i < sizeof(ips) / sizeof(ips[0]); i++) {
		memset(data, 0, sizeof(data));
		data[0] = 7;
		memcpy(data + 8, &ips[i], 8);
		memset(&rec, 0, sizeof(rec));
		rec.data = data;
		rec.size = sizeof(data);
		trace_seq_init(&sa);
		trace_seq_init(&sb);
		tep_print_event(p.ref, &sa, &rec, "%s", TEP_PRINT_INFO);
		tep_print_event(p.ours, &sb, &rec, "%s", TEP_PRINT_INFO);
		trace_seq_terminate(&sa);
		trace_seq_terminate(&sb);
		if (strcmp(sa.buffer, sb.buffer))
			fail_msg("ip %#llx: libtraceevent \"%s\", tracemap \"%s\"", ips[i],
				 sa.buffer, sb.buffer);
		trace_seq_destroy(&sa);
		trace_seq_destroy(&sb);
	}
	pair_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crafted),
		cmocka_unit_test(test_bad_line),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_print),
		cmocka_unit_test(test_load_error),
		cmocka_unit_test(test_proc_kallsyms),
	};

	tracemap_set_print(NULL, NULL);
	return cmocka_run_group_tests_name("kallsyms table", tests, NULL, NULL);
}
