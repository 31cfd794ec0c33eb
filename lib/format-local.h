/* SPDX-License-Identifier: LGPL-2.1-only */
/*
 * The text formatter's internals, shared by its four files:
 *   format-compile.c  an event type's print format -> a program (struct prog)
 *   format-run.c      a program run over one record into the output buffer
 *   format.c          the API: the formatter, the line prefix, the fallback
 *   format-fgraph.c   function_graph lines as trace-cmd report prints them
 * Nothing here is visible outside the library.
 */
#ifndef TM_FORMAT_LOCAL_H
#define TM_FORMAT_LOCAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include "tracemap-local.h"

/* ------------------------------------------------------------ output */

/* ------------------------------------------------------------ output */

struct obuf {
	char *buf;
	size_t len;
	size_t cap;
	bool oom;
};

static inline bool ob_reserve(struct obuf *o, size_t n)
{
	size_t cap;
	char *nb;

	if (o->len + n + 1 <= o->cap)
		return true;
	cap = o->cap ? o->cap : 256;
	while (cap < o->len + n + 1)
		cap *= 2;
	nb = realloc(o->buf, cap);
	if (!nb) {
		o->oom = true;
		return false;
	}
	o->buf = nb;
	o->cap = cap;
	return true;
}

static inline void ob_put(struct obuf *o, const char *s, size_t n)
{
	if (!ob_reserve(o, n))
		return;
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static inline void ob_putc(struct obuf *o, char c)
{
	if (!ob_reserve(o, 1))
		return;
	o->buf[o->len++] = c;
}

/*
 * The byte loops below write through a local pointer and set len once: a
 * store through o->buf may alias o itself, so writing o->buf[o->len++]
 * reloads both for every byte.
 */
static inline char *fill(char *q, char c, size_t n)
{
	while (n--)
		*q++ = c;
	return q;
}

static inline void ob_fill(struct obuf *o, char c, size_t n)
{
	if (!ob_reserve(o, n))
		return;
	fill(o->buf + o->len, c, n);
	o->len += n;
}


static const char digit_pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* Decimal digits of @v */
static inline int dec_len(unsigned long long v)
{
	int n = 1;

	while (v >= 10000) {
		v /= 10000;
		n += 4;
	}
	return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/*
 * @v in decimal at @q, right-aligned in @width columns filled with @padc:
 * written in place, without a copy. Returns the end.
 */
static inline char *put_dec(char *q, unsigned long long v, int width, char padc)
{
	int n = dec_len(v);
	char *end;

	if (n < width)
		q = fill(q, padc, width - n);
	end = q + n;
	/* two digits per division */
	while (v >= 100) {
		end -= 2;
		memcpy(end, digit_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10)
		memcpy(end - 2, digit_pairs + 2 * v, 2);
	else
		end[-1] = '0' + v;
	return q + n;
}

static inline unsigned long long read_num(const void *p, unsigned int size)
{
	uint16_t v2;
	uint32_t v4;
	uint64_t v8;

	switch (size) {
	case 1:
		return *(const uint8_t *)p;
	case 2:
		memcpy(&v2, p, 2);
		return v2;
	case 4:
		memcpy(&v4, p, 4);
		return v4;
	case 8:
		memcpy(&v8, p, 8);
		return v8;
	}
	return 0;
}

/* ---------------------------------------------------- printf conversions */

#define SPEC_LEFT	(1u << 0)	/* '-' */
#define SPEC_ZERO	(1u << 1)	/* '0' */
#define SPEC_ALT	(1u << 2)	/* '#' */
#define SPEC_NONE	(-1)		/* no width / precision */
#define SPEC_STAR	(-2)		/* taken from an argument */

/* One conversion of a print format: what printf would do with it. */
struct spec {
	int width;
	int prec;
	unsigned char flags;
	char conv;			/* d i u x X o s p */
	unsigned char bits;		/* integer width after the length modifier */
};

/* ------------------------------------------------------------ programs */

enum ex_kind {
	EX_CONST,
	EX_FIELD,		/* number at offset, size */
	EX_MASK,		/* kid & mask (a typecast) */
	EX_INDEX,		/* element of a static array: kid is the index */
	EX_DYN_INDEX,		/* element of a dynamic array */
	EX_DYN_LEN,		/* __get_dynamic_array_len() */
	EX_DYN_PTR,		/* address of a dynamic array */
	EX_BIN,
	EX_COND,
};

struct dynf {
	unsigned int offset;
	unsigned int size;
	bool relative;
};

struct expr {
	enum ex_kind kind;
	char op[3];
	unsigned int offset;
	unsigned int size;
	unsigned long long val;		/* EX_CONST value, EX_MASK / EX_INDEX mask */
	struct dynf dyn;
	struct expr *a, *b, *c;
};

enum op_kind {
	OP_LIT,
	OP_NUM,
	OP_STR,
	OP_PTR,			/* %p */
	OP_FUNC,		/* %ps %pS %pf %pF */
	OP_SCHED_SWITCH,
	OP_SCHED_WAKEUP,
	OP_RAW_DATA,		/* the function plugin's trace_marker_raw handler */
};

enum sa_kind {
	SA_NONE,
	SA_LIT,
	SA_FIELD,		/* char array, size 0: the rest of the record */
	SA_DYNSTR,		/* __get_str() */
	SA_FLAGS,
	SA_SYMBOL,
	SA_HEX,
	SA_INT_ARRAY,
	SA_COND,
};

struct flag_sym {
	long long val;
	const char *str;
	size_t len;
};

/* the source of a string conversion */
struct sarg {
	enum sa_kind kind;
	bool hex_space;			/* SA_HEX: __print_hex, not _str */
	bool dyn;			/* SA_HEX / SA_INT_ARRAY: dynamic array */
	const char *str;		/* SA_LIT, SA_FLAGS delimiter */
	size_t len;
	unsigned int offset, size;	/* SA_FIELD, static arrays */
	struct dynf df;
	struct expr *x, *y, *cond;	/* value / length, element size, condition */
	struct flag_sym *syms;
	int nr_syms;
	struct sarg *l, *r;		/* SA_COND */
};

/* the fields a plugin handler the compiler knows reads */
struct plugin_fields {
	const struct tep_format_field *pid, *comm, *prio, *state, *npid, *ncomm, *nprio;
	const struct tep_format_field *success, *target;
	const struct tep_format_field *id, *buf;	/* ftrace:raw_data */
};

struct op {
	enum op_kind kind;
	struct spec sp;
	const char *lit;
	size_t len;
	struct expr *x;			/* the value */
	struct expr *star;		/* the '*' argument */
	struct sarg *s;
	bool with_offset;		/* OP_FUNC: %pS / %pF */
	struct plugin_fields *sf;	/* OP_SCHED_*, OP_RAW_DATA */
};

/* what a compiled event type is */
/*
 * function_graph (format-fgraph.c): the fields trace-cmd report's
 * funcgraph_entry/funcgraph_exit handlers read, by name
 */
enum { FG_NONE, FG_ENTRY, FG_EXIT };
enum { FG_FUNC, FG_DEPTH, FG_CALLTIME, FG_RETTIME, FG_NR_FIELDS };

struct prog {
	struct tep_event *event;
	struct op *ops;
	int nr_ops;
	bool fallback;
	const char *reason;		/* why it falls back */
	unsigned int pid_offset;
	unsigned int pid_size;
	unsigned int name_len;
	char *head;			/* " <name>: " padded to the column */
	unsigned int head_len;
	unsigned int fields_end;	/* end of the last fixed field: what tep_print_event() reads */
	unsigned char fgraph;		/* FG_ENTRY, FG_EXIT: printed as trace-cmd's function_graph */
	const struct tep_format_field *fg[FG_NR_FIELDS];
	/* compile-time allocations, freed with the program */
	void **allocs;
	int nr_allocs;
};

/*
 * A task name as libtraceevent gave it, copied: kept while no name changed
 * (tm_comms_gen()), so that the events of one task (or of a few, by pid
 * modulo NR_COMMS) look the name up once instead of a binary search each.
 */
#define NR_COMMS	64
struct comm_slot {
	uint64_t gen;			/* tm_comms_gen() + 1 at the lookup; 0: empty */
	int pid;
	unsigned int len;
	char comm[24];
};

/*
 * A kernel address and the function libtraceevent names for it, looked up
 * once: libtraceevent builds its map of functions on the first lookup, and
 * a caller that registers functions after that says so
 * (tracemap_format_forget_names()).
 */
#define NR_FUNCS	64
struct func_slot {
	unsigned long long addr;
	unsigned long long start;	/* of the function */
	const char *name;		/* NULL: no function there */
	bool valid;
};

struct tracemap_format {
	struct tep_handle *tep;
	struct prog **progs;		/* by event type id, compiled on first use */
	int nr_progs;
	struct obuf out;
	struct trace_seq seq;
	bool usecs;
	bool compile;
	int long_size;
	bool clamped;			/* set by the program of the current event */
	struct tracemap_format_stats st;
	char comm_buf[64];
	int registered[256];		/* pids the sched plugin's comms were given for, by pid % 256 */
	struct comm_slot comms[NR_COMMS];
	unsigned char *pad;		/* a short record, zero-padded for tep_print_event() */
	unsigned int pad_cap;
	struct func_slot funcs[NR_FUNCS];
	/* TRACEMAP_FORMAT_FGRAPH: a funcgraph_entry held until the next event says leaf or not */
	bool fgraph;
	bool fg_holding;
	const struct prog *fg_pg;	/* the held entry's program */
	const struct prog *fg_ret_pg;	/* the program of the exit that made it a leaf */
	struct tracemap_event fg_held;	/* its data points to fg_data */
	unsigned char *fg_data;
	unsigned int fg_cap;
};

/* format-compile.c */
struct prog *tm_fmt_compile(struct tracemap_format *f, int type);
void tm_fmt_prog_free(struct prog *pg);
const char *tm_fmt_compile_refusal(void);
const char *tm_fmt_version_refusal(const char *built, const char *loaded, char *buf,
				   size_t size);

/* format-run.c */
void tm_fmt_run(struct tracemap_format *f, const struct prog *pg, const void *data, int size);
const struct func_slot *tm_fmt_func_of(struct tracemap_format *f, unsigned long long addr);

/* format.c: the line of @ev into f->out after what is there; @ret: a leaf's funcgraph_exit */
void tm_fmt_put_line(struct tracemap_format *f, const struct prog *pg,
		     const struct tracemap_event *ev, const struct tracemap_event *ret);

/* format-fgraph.c */
void tm_fgraph_setup(struct prog *pg);
void tm_fgraph_line(struct tracemap_format *f, const struct prog *pg,
		    const struct tracemap_event *ev);
void tm_fgraph_info(struct tracemap_format *f, const struct prog *pg,
		    const struct tracemap_event *ev, const struct tracemap_event *ret);
void tm_fgraph_flush(struct tracemap_format *f);

#endif
