// SPDX-License-Identifier: LGPL-2.1
/*
 * The text formatter: the lines 'trace-cmd report' 3.1.6 prints, byte for
 * byte what libtraceevent's tep_print_event() writes with the same plugins
 * loaded, without parsing a format string or calling vsnprintf per event.
 *
 * Each event type is compiled once, on its first event, from what
 * libtraceevent already parsed (the print format and its argument tree) into
 * a list of operations: literal text, numbers read from fields or computed
 * from them, strings, flags and symbols, hex dumps. Types that use anything
 * the compiler does not know (print helpers, %pI/%pM/%pU, bitmasks, bprint,
 * plugin handlers other than sched's) are formatted by tep_print_event(),
 * and counted.
 *
 * Where libtraceevent reads outside the record (a length or index taken from
 * the data), the compiled program stays inside it and counts the event as
 * clamped: the output differs from libtraceevent's only there.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include "tracemap-local.h"

/* ------------------------------------------------------------ output */

struct obuf {
	char *buf;
	size_t len;
	size_t cap;
	bool oom;
};

static bool ob_reserve(struct obuf *o, size_t n)
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

/* @s (n bytes) in a field of @width, right-aligned unless @left */
static void ob_pad(struct obuf *o, const char *s, size_t n, int width, bool left)
{
	size_t pad = width > 0 && (size_t)width > n ? (size_t)width - n : 0;
	char *q;

	if (!ob_reserve(o, n + pad))
		return;
	q = o->buf + o->len;
	if (!left)
		q = fill(q, ' ', pad);
	memcpy(q, s, n);
	q += n;
	if (left)
		q = fill(q, ' ', pad);
	o->len = q - o->buf;
}

/*
 * Digits of @v in @base into the end of @end; returns the count. Inlined,
 * so that the usual bases divide by a constant (a multiplication) instead
 * of a division instruction per digit.
 */
static inline int utoa_rev(char *end, unsigned long long v, unsigned int base, bool upper)
{
	const char *dig = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char *p = end;

	if (base == 10) {
		do {
			*--p = '0' + v % 10;
			v /= 10;
		} while (v);
	} else if (base == 16) {
		do {
			*--p = dig[v & 15];
			v >>= 4;
		} while (v);
	} else {
		do {
			*--p = dig[v % base];
			v /= base;
		} while (v);
	}
	return end - p;
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

static void ob_u64(struct obuf *o, unsigned long long v)
{
	if (ob_reserve(o, 20))
		o->len = put_dec(o->buf + o->len, v, 0, 0) - o->buf;
}

static void ob_s64(struct obuf *o, long long v)
{
	char *q;

	if (!ob_reserve(o, 21))
		return;
	q = o->buf + o->len;
	if (v < 0)
		*q++ = '-';
	o->len = put_dec(q, v < 0 ? -(unsigned long long)v : (unsigned long long)v, 0, 0) - o->buf;
}

/* "0x%llx" */
static void ob_hex(struct obuf *o, unsigned long long v)
{
	char b[24];
	int n = utoa_rev(b + sizeof(b), v, 16, false);

	ob_put(o, "0x", 2);
	ob_put(o, b + sizeof(b) - n, n);
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

/*
 * Parse "%[-0#]*[width|*][.prec|*][hh|h|l|ll|L|z|Z]conv" as printf reads it.
 * Returns false for anything else: that type is left to libtraceevent.
 */
static bool spec_parse(const char *f, struct spec *sp)
{
	const char *mod;
	size_t modlen;

	memset(sp, 0, sizeof(*sp));
	sp->width = SPEC_NONE;
	sp->prec = SPEC_NONE;
	if (*f++ != '%')
		return false;
	for (;; f++) {
		if (*f == '-')
			sp->flags |= SPEC_LEFT;
		else if (*f == '0')
			sp->flags |= SPEC_ZERO;
		else if (*f == '#')
			sp->flags |= SPEC_ALT;
		else
			break;
	}
	if (*f == '*') {
		sp->width = SPEC_STAR;
		f++;
	} else if (isdigit((unsigned char)*f)) {
		sp->width = 0;
		while (isdigit((unsigned char)*f))
			sp->width = sp->width * 10 + (*f++ - '0');
	}
	if (*f == '.') {
		f++;
		if (*f == '*') {
			sp->prec = SPEC_STAR;
			f++;
		} else {
			sp->prec = 0;
			while (isdigit((unsigned char)*f))
				sp->prec = sp->prec * 10 + (*f++ - '0');
		}
	}
	mod = f;
	while (*f == 'h' || *f == 'l' || *f == 'L' || *f == 'z' || *f == 'Z')
		f++;
	modlen = f - mod;
	sp->conv = *f;
	if (!sp->conv || f[1])
		return false;
	if (modlen == 0)
		sp->bits = 32;
	else if (modlen == 1 && *mod == 'h')
		sp->bits = 16;
	else if (modlen == 2 && !strncmp(mod, "hh", 2))
		sp->bits = 8;
	else if ((modlen == 1 && strchr("lLzZ", *mod)) || (modlen == 2 && !strncmp(mod, "ll", 2)))
		sp->bits = 64;
	else
		return false;
	switch (sp->conv) {
	case 'd': case 'i': case 'u': case 'x': case 'X': case 'o':
		return true;
	case 's':
		/* printf's %s knows '-', width and precision; the rest is undefined */
		return modlen == 0 && !(sp->flags & (SPEC_ZERO | SPEC_ALT));
	case 'p':
		return modlen == 0 && !sp->flags && sp->width == SPEC_NONE &&
		       sp->prec == SPEC_NONE;
	}
	return false;
}

/* printf of an integer conversion with the width and precision resolved */
static void put_int(struct obuf *o, const struct spec *sp, unsigned long long v, int width,
		    int prec, bool left)
{
	char b[32], *end = b + sizeof(b), *p;
	bool neg = false, is_signed = sp->conv == 'd' || sp->conv == 'i';
	unsigned int base = 10;
	const char *prefix = "";
	int n = 0, zeros = 0, plen, total;

	if (sp->bits < 64) {
		unsigned long long m = (1ULL << sp->bits) - 1;

		v &= m;
		if (is_signed && (v >> (sp->bits - 1)))
			v |= ~m;
	}
	if (is_signed && (long long)v < 0) {
		neg = true;
		v = -v;
	}
	if (sp->conv == 'x' || sp->conv == 'X')
		base = 16;
	else if (sp->conv == 'o')
		base = 8;
	if (!(prec == 0 && v == 0))
		n = utoa_rev(end, v, base, sp->conv == 'X');
	p = end - n;
	if (prec > n)
		zeros = prec - n;
	if (sp->flags & SPEC_ALT) {
		if (base == 16 && v)
			prefix = sp->conv == 'X' ? "0X" : "0x";
		else if (base == 8 && zeros == 0 && (n == 0 || *p != '0'))
			zeros = 1;
	}
	if (neg)
		prefix = "-";
	plen = strlen(prefix);
	total = plen + zeros + n;
	if (width > total && (sp->flags & SPEC_ZERO) && !left && prec < 0) {
		zeros += width - total;
		total = width;
	}
	if (!left && width > total)
		ob_fill(o, ' ', width - total);
	ob_put(o, prefix, plen);
	ob_fill(o, '0', zeros);
	ob_put(o, p, n);
	if (left && width > total)
		ob_fill(o, ' ', width - total);
}

/* printf("%s") of the n bytes at s with the spec's width and precision */
static void put_str(struct obuf *o, const struct spec *sp, const char *s, size_t n, int width,
		    int prec, bool left)
{
	if (prec >= 0 && (size_t)prec < n)
		n = prec;
	ob_pad(o, s, n, width, left);
}

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
	struct func_slot funcs[NR_FUNCS];
};

/* ---------------------------------------------------------- evaluation */

struct ectx {
	struct tracemap_format *f;
	const unsigned char *data;
	int size;
};

static unsigned long long read_num(const void *p, unsigned int size)
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

/*
 * The offset and length of a dynamic array: the low 16 bits of the
 * __data_loc word are the offset, the high 16 the length (a 2-byte word has
 * no length: the rest of the record); __rel_loc offsets start after the word.
 */
static void dyn_loc(const struct ectx *e, const struct dynf *d, unsigned int *offset,
		    unsigned int *len)
{
	unsigned long long v;
	unsigned int o, l;

	if ((int)(d->offset + d->size) > e->size) {
		*offset = 0;
		*len = 0;
		return;
	}
	v = read_num(e->data + d->offset, d->size);
	o = v & 0xffff;
	l = d->size == 2 ? e->size - o : (v >> 16) & 0xffff;
	*offset = o > (unsigned int)e->size ? 0 : o;
	*len = o + l > (unsigned int)e->size ? 0 : l;
	if (d->relative)
		*offset += d->offset + d->size;
}

static unsigned long long eval(struct ectx *e, const struct expr *x)
{
	unsigned long long l, r;
	unsigned int off, len;

	switch (x->kind) {
	case EX_CONST:
		return x->val;
	case EX_FIELD:
		if ((int)(x->offset + x->size) > e->size)
			return 0;
		return read_num(e->data + x->offset, x->size);
	case EX_MASK:
		return eval(e, x->a) & x->val;
	case EX_INDEX:
	case EX_DYN_INDEX:
		r = eval(e, x->a);
		if (x->kind == EX_DYN_INDEX) {
			dyn_loc(e, &x->dyn, &off, &len);
			off += (unsigned int)r;
		} else {
			off = x->offset + (unsigned int)r * x->size;
		}
		/* libtraceevent compares as int, then reads at the unsigned offset */
		if ((long long)(int)off + (int)x->size > e->size)
			return 0;
		if ((unsigned long long)off + x->size > (unsigned int)e->size) {
			e->f->clamped = true;
			return 0;
		}
		return read_num(e->data + off, x->size) & x->val;
	case EX_DYN_LEN:
		dyn_loc(e, &x->dyn, &off, &len);
		return len;
	case EX_DYN_PTR:
		dyn_loc(e, &x->dyn, &off, &len);
		if ((int)off > e->size)
			return (uintptr_t)e->data;
		return (uintptr_t)e->data + off;
	case EX_COND:
		return eval(e, x->c) ? eval(e, x->a) : eval(e, x->b);
	case EX_BIN:
		break;
	}
	l = eval(e, x->a);
	r = eval(e, x->b);
	switch (x->op[0]) {
	case '!':
		return x->op[1] ? l != r : !r;
	case '~':
		return ~r;
	case '|':
		return x->op[1] ? l || r : l | r;
	case '&':
		return x->op[1] ? l && r : l & r;
	case '<':
		/* shift counts as x86 takes them: the low 6 bits */
		return x->op[1] == '<' ? l << (r & 63) : x->op[1] == '=' ? l <= r : l < r;
	case '>':
		return x->op[1] == '>' ? l >> (r & 63) : x->op[1] == '=' ? l >= r : l > r;
	case '=':
		return l == r;
	case '-':
		return l - r;
	case '+':
		return l + r;
	case '*':
		return l * r;
	case '/':
	case '%':
		/* libtraceevent dies of SIGFPE here */
		if (!r) {
			e->f->clamped = true;
			return 0;
		}
		return x->op[0] == '/' ? l / r : l % r;
	}
	return 0;
}

static void run_sarg(struct ectx *e, struct obuf *o, const struct op *op, const struct sarg *s,
		     int width, int prec, bool left);

static void put_sym(struct obuf *o, const struct op *op, const char *s, size_t n, int width,
		    int prec, bool left)
{
	put_str(o, &op->sp, s, n, width, prec, left);
}

static void run_sarg(struct ectx *e, struct obuf *o, const struct op *op, const struct sarg *s,
		     int width, int prec, bool left)
{
	const unsigned char *p;
	unsigned int off, len, i;
	long long val;
	bool printed;
	size_t n;
	int k;

	switch (s->kind) {
	case SA_NONE:
		return;
	case SA_LIT:
		put_sym(o, op, s->str, s->len, width, prec, left);
		return;
	case SA_FIELD:
		len = s->size ? s->size : (unsigned int)(e->size - (int)s->offset);
		if ((int)s->offset > e->size || s->offset + len > (unsigned int)e->size) {
			e->f->clamped = true;
			len = (int)s->offset > e->size ? 0 : e->size - s->offset;
		}
		p = e->data + s->offset;
		put_sym(o, op, (const char *)p, strnlen((const char *)p, len), width, prec, left);
		return;
	case SA_DYNSTR:
		dyn_loc(e, &s->df, &off, &len);
		if (!len)
			return;
		if (off >= (unsigned int)e->size) {
			e->f->clamped = true;
			return;
		}
		p = e->data + off;
		n = strnlen((const char *)p, e->size - off);
		if (n == e->size - off)
			e->f->clamped = true;
		put_sym(o, op, (const char *)p, n, width, prec, left);
		return;
	case SA_FLAGS:
		val = eval(e, s->x);
		printed = false;
		for (k = 0; k < s->nr_syms; k++) {
			long long fv = s->syms[k].val;

			if (!val && fv < 0) {
				put_sym(o, op, s->syms[k].str, s->syms[k].len, width, prec, left);
				break;
			}
			if (fv > 0 && (val & fv) == fv) {
				if (printed && s->str)
					ob_put(o, s->str, s->len);
				put_sym(o, op, s->syms[k].str, s->syms[k].len, width, prec, left);
				printed = true;
				val &= ~fv;
			}
		}
		if (val) {
			if (printed && s->str)
				ob_put(o, s->str, s->len);
			ob_hex(o, val);
		}
		return;
	case SA_SYMBOL:
		val = eval(e, s->x);
		for (k = 0; k < s->nr_syms; k++)
			if (val == s->syms[k].val) {
				put_sym(o, op, s->syms[k].str, s->syms[k].len, width, prec, left);
				return;
			}
		ob_hex(o, val);
		return;
	case SA_HEX:
	case SA_INT_ARRAY: {
		unsigned int count, elsz = 1, limit;

		if (s->dyn)
			dyn_loc(e, &s->df, &off, &len);
		else
			off = s->offset;
		count = eval(e, s->x);
		if (s->kind == SA_INT_ARRAY)
			elsz = (int)eval(e, s->y);
		limit = off < (unsigned int)e->size ? e->size - off : 0;
		p = e->data + off;
		for (i = 0; i < count; i++) {
			unsigned int sz = elsz;
			char b[24];

			if (i && (s->kind == SA_INT_ARRAY || s->hex_space))
				ob_putc(o, ' ');
			if (s->kind == SA_INT_ARRAY && sz != 1 && sz != 2 && sz != 4 && sz != 8)
				sz = 1;
			if (sz > limit) {
				e->f->clamped = true;
				return;
			}
			if (s->kind == SA_HEX) {
				b[0] = "0123456789abcdef"[*p >> 4];
				b[1] = "0123456789abcdef"[*p & 15];
				ob_put(o, b, 2);
			} else if (sz != elsz) {
				ob_put(o, "BAD SIZE:", 9);
				ob_s64(o, (int)elsz);
				ob_put(o, " 0x", 3);
				ob_put(o, b + sizeof(b) - utoa_rev(b + sizeof(b), *p, 16, false),
				       utoa_rev(b + sizeof(b), *p, 16, false));
			} else {
				ob_u64(o, read_num(p, sz));
			}
			p += sz;
			limit -= sz;
		}
		return;
	}
	case SA_COND:
		run_sarg(e, o, op, eval(e, s->cond) ? s->l : s->r, width, prec, left);
		return;
	}
}

/* write_state() of the sched_switch plugin: the state letters of the low bits, or R */
static void put_state(struct obuf *o, int val)
{
	static const char states[] = "SDTtZXxW";
	bool found = false;
	unsigned int i;

	for (i = 0; i < sizeof(states) - 1; i++) {
		if (!(val & (1 << i)))
			continue;
		if (found)
			ob_putc(o, '|');
		found = true;
		ob_putc(o, states[i]);
	}
	if (!found)
		ob_putc(o, 'R');
}

/*
 * "comm:pid" as the sched plugin writes it; like the plugin, teach the comm
 * to libtraceevent so that later lines of the task show it.
 */
static void put_comm_pid(struct ectx *e, struct obuf *o, const struct tep_format_field *comm,
			 unsigned long long pid)
{
	char *buf = e->f->comm_buf;
	size_t n;

	if (comm) {
		n = strnlen((const char *)e->data + comm->offset, comm->size);
		if (n >= sizeof(e->f->comm_buf))
			n = sizeof(e->f->comm_buf) - 1;
		memcpy(buf, e->data + comm->offset, n);
		buf[n] = '\0';
		ob_put(o, buf, n);
		/*
		 * libtraceevent keeps the first comm registered for a pid (EEXIST
		 * after that): a pid registered once needs no second call.
		 */
		if (e->f->registered[(unsigned int)pid % 256] != (int)pid || !pid) {
			/* the name of pid 0 is always "<idle>" */
			if (!tep_register_comm(e->f->tep, buf, (int)pid) && pid)
				tm_comms_changed();
			e->f->registered[(unsigned int)pid % 256] = (int)pid;
		}
		ob_putc(o, ':');
	}
	ob_s64(o, (long long)pid);
}

static unsigned long long fval(struct ectx *e, const struct tep_format_field *fl)
{
	return read_num(e->data + fl->offset, fl->size);
}

static void run_sched(struct ectx *e, struct obuf *o, const struct op *op)
{
	const struct plugin_fields *sf = op->sf;

	put_comm_pid(e, o, sf->comm, fval(e, sf->pid));
	if (op->kind == OP_SCHED_SWITCH) {
		ob_put(o, " [", sf->prio ? 2 : 1);
		if (sf->prio) {
			ob_s64(o, (int)fval(e, sf->prio));
			ob_put(o, "] ", 2);
		}
		if (sf->state)
			put_state(o, (int)fval(e, sf->state));
		ob_put(o, " ==> ", 5);
		put_comm_pid(e, o, sf->ncomm, fval(e, sf->npid));
		if (sf->nprio) {
			ob_put(o, " [", 2);
			ob_s64(o, (int)fval(e, sf->nprio));
			ob_putc(o, ']');
		}
		return;
	}
	if (sf->prio) {
		ob_put(o, " [", 2);
		ob_s64(o, (long long)fval(e, sf->prio));
		ob_putc(o, ']');
	}
	if (sf->success) {
		ob_put(o, " success=", 9);
		ob_s64(o, (long long)fval(e, sf->success));
	}
	if (sf->target) {
		char b[24];
		int n = utoa_rev(b + sizeof(b), fval(e, sf->target), 10, false);

		ob_put(o, " CPU:", 5);
		ob_fill(o, '0', n < 3 ? 3 - n : 0);
		ob_put(o, b + sizeof(b) - n, n);
	}
}

/* "%02x" of every byte value, two characters each */
static const char hex_pairs[] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
	"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
	"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

/* "# <id in hex>" and " %02x" for every byte from buf to the end of the record */
static void run_raw_data(struct ectx *e, struct obuf *o, const struct op *op)
{
	const struct plugin_fields *sf = op->sf;
	const unsigned char *d, *end;
	char b[24], *q;
	int n;

	n = utoa_rev(b + sizeof(b), fval(e, sf->id), 16, false);
	ob_put(o, "# ", 2);
	ob_put(o, b + sizeof(b) - n, n);
	if (e->size <= sf->buf->offset || !ob_reserve(o, 3 * (e->size - sf->buf->offset)))
		return;
	/* locals: a store through q may alias e and o */
	d = e->data + sf->buf->offset;
	end = e->data + e->size;
	q = o->buf + o->len;
	for (; d < end; d++) {
		q[0] = ' ';
		memcpy(q + 1, hex_pairs + 2 * *d, 2);
		q += 3;
	}
	o->len = q - o->buf;
}

/* The function at @addr, looked up once per address (by its hash) */
static const struct func_slot *func_of(struct tracemap_format *f, unsigned long long addr)
{
	struct func_slot *fs = &f->funcs[(addr ^ (addr >> 12)) % NR_FUNCS];

	if (fs->valid && fs->addr == addr)
		return fs;
	fs->addr = addr;
	fs->name = tep_find_function(f->tep, addr);
	fs->start = fs->name ? tep_find_function_address(f->tep, addr) : 0;
	fs->valid = true;
	return fs;
}

static void run_prog(struct tracemap_format *f, const struct prog *pg, const void *data,
		     int size)
{
	struct ectx e = { .f = f, .data = data, .size = size };
	struct obuf *o = &f->out;
	int i;

	for (i = 0; i < pg->nr_ops; i++) {
		const struct op *op = &pg->ops[i];
		int width = op->sp.width, prec = op->sp.prec;
		bool left = op->sp.flags & SPEC_LEFT;

		if (op->star) {
			int v = (int)eval(&e, op->star);

			/* a negative '*' value makes libtraceevent drop the argument */
			if (v < 0) {
				f->clamped = true;
				v = SPEC_NONE;
			}
			if (width == SPEC_STAR)
				width = v;
			else
				prec = v;
		}
		switch (op->kind) {
		case OP_LIT:
			ob_put(o, op->lit, op->len);
			break;
		case OP_NUM:
			put_int(o, &op->sp, eval(&e, op->x), width, prec, left);
			break;
		case OP_STR:
			run_sarg(&e, o, op, op->s, width, prec, left);
			break;
		case OP_PTR: {
			unsigned long long v = eval(&e, op->x);

			if (v)
				ob_hex(o, v);
			else
				ob_put(o, "(nil)", 5);
			break;
		}
		case OP_FUNC: {
			unsigned long long v = eval(&e, op->x);
			const struct func_slot *fs = func_of(f, v);
			const char *fn = fs->name;

			if (fn) {
				ob_put(o, fn, strlen(fn));
				if (op->with_offset) {
					ob_put(o, "+", 1);
					ob_hex(o, v - fs->start);
				}
			} else {
				ob_hex(o, f->long_size == 4 ? (unsigned long long)(long)(int)v : v);
			}
			break;
		}
		case OP_SCHED_SWITCH:
		case OP_SCHED_WAKEUP:
			run_sched(&e, o, op);
			break;
		case OP_RAW_DATA:
			run_raw_data(&e, o, op);
			break;
		}
	}
}

/* ----------------------------------------------------------- compiling */

struct cctx {
	struct tracemap_format *f;
	struct prog *pg;
	struct tep_event *ev;
	const char *reason;
};

static void *cc_alloc(struct cctx *cx, size_t size)
{
	void **na;
	void *p;

	if (cx->reason)
		return NULL;
	p = calloc(1, size);
	na = p ? realloc(cx->pg->allocs, (cx->pg->nr_allocs + 1) * sizeof(void *)) : NULL;
	if (!na) {
		free(p);
		cx->reason = "out of memory";
		return NULL;
	}
	cx->pg->allocs = na;
	na[cx->pg->nr_allocs++] = p;
	return p;
}

static bool cc_fail(struct cctx *cx, const char *why)
{
	if (!cx->reason)
		cx->reason = why;
	return false;
}

static struct tep_format_field *cc_field(struct cctx *cx, struct tep_format_field *fl,
					 const char *name)
{
	if (!fl && name)
		fl = tep_find_any_field(cx->ev, name);
	if (!fl)
		cc_fail(cx, "field not found");
	return fl;
}

static struct expr *ex_new(struct cctx *cx, enum ex_kind kind)
{
	struct expr *x = cc_alloc(cx, sizeof(*x));

	if (x)
		x->kind = kind;
	return x;
}

static struct expr *ex_const(struct cctx *cx, unsigned long long v)
{
	struct expr *x = ex_new(cx, EX_CONST);

	if (x)
		x->val = v;
	return x;
}

/* the mask a typecast to @type applies (libtraceevent ignores signedness) */
static unsigned long long type_mask(const char *type, bool pointer)
{
	size_t len = strlen(type);
	char base[64];

	if (len < 2)
		return ~0ULL;
	if (pointer) {
		if (type[len - 1] != '*' || len - 1 > sizeof(base))
			return ~0ULL;
		memcpy(base, type, len - 2);
		base[len - 2] = '\0';
		return type_mask(base, false);
	}
	if (type[len - 1] == '*' || !strncmp(type, "struct", 6))
		return ~0ULL;
	if (!strcmp(type, "u8") || !strcmp(type, "s8"))
		return 0xff;
	if (!strcmp(type, "u16") || !strcmp(type, "s16"))
		return 0xffff;
	if (!strcmp(type, "u32") || !strcmp(type, "s32"))
		return 0xffffffff;
	if (!strncmp(type, "unsigned ", 9))
		type += 9;
	if (!strcmp(type, "char"))
		return 0xff;
	if (!strcmp(type, "short"))
		return 0xffff;
	if (!strcmp(type, "int"))
		return 0xffffffff;
	return ~0ULL;
}

static bool cc_dynf(struct cctx *cx, struct tep_format_field *fl, struct dynf *d)
{
	if (!fl)
		return cc_fail(cx, "dynamic array without a field");
	d->offset = fl->offset;
	d->size = fl->size;
	d->relative = fl->flags & TEP_FIELD_IS_RELATIVE;
	return true;
}

static struct expr *cc_num(struct cctx *cx, struct tep_print_arg *a)
{
	struct tep_print_arg *larg, *typearg = NULL;
	struct tep_format_field *fl;
	struct expr *x;

	if (cx->reason)
		return NULL;
	if (!a)
		return ex_const(cx, 0);
	switch (a->type) {
	case TEP_PRINT_ATOM: {
		unsigned long long v = strtoull(a->atom.atom, NULL, 0);

		/* a name: libtraceevent looks it up among the kernel's functions */
		if (!v && !isdigit((unsigned char)a->atom.atom[0]))
			return cc_fail(cx, "symbol as a number"), NULL;
		return ex_const(cx, v);
	}
	case TEP_PRINT_FIELD:
		fl = cc_field(cx, a->field.field, a->field.name);
		x = fl ? ex_new(cx, EX_FIELD) : NULL;
		if (x) {
			x->offset = fl->offset;
			x->size = fl->size;
		}
		return x;
	case TEP_PRINT_TYPE:
		x = ex_new(cx, EX_MASK);
		if (x) {
			x->a = cc_num(cx, a->typecast.item);
			x->val = type_mask(a->typecast.type, false);
		}
		return x;
	case TEP_PRINT_FUNC:
		return cc_fail(cx, "print helper function"), NULL;
	case TEP_PRINT_DYNAMIC_ARRAY_LEN:
	case TEP_PRINT_DYNAMIC_ARRAY:
		x = ex_new(cx, a->type == TEP_PRINT_DYNAMIC_ARRAY ? EX_DYN_PTR : EX_DYN_LEN);
		if (x && !cc_dynf(cx, a->dynarray.field, &x->dyn))
			return NULL;
		return x;
	case TEP_PRINT_OP:
		break;
	default:
		/* flags, symbols, arrays, strings, bitmasks: 0 as numbers */
		return ex_const(cx, 0);
	}

	if (!strcmp(a->op.op, "[")) {
		larg = a->op.left;
		while (larg && larg->type == TEP_PRINT_TYPE) {
			if (!typearg)
				typearg = larg;
			larg = larg->typecast.item;
		}
		if (larg && larg->type == TEP_PRINT_DYNAMIC_ARRAY) {
			x = ex_new(cx, EX_DYN_INDEX);
			if (!x || !cc_dynf(cx, larg->dynarray.field, &x->dyn))
				return NULL;
			x->size = larg->dynarray.field->elementsize ? :
				  (unsigned int)cx->f->long_size;
		} else if (larg && larg->type == TEP_PRINT_FIELD) {
			fl = cc_field(cx, larg->field.field, larg->field.name);
			x = fl ? ex_new(cx, EX_INDEX) : NULL;
			if (!x)
				return NULL;
			x->offset = fl->offset;
			x->size = fl->elementsize;
		} else {
			/* libtraceevent: unknown op, 0 */
			return ex_const(cx, 0);
		}
		x->a = cc_num(cx, a->op.right);
		x->val = typearg ? type_mask(typearg->typecast.type, true) : ~0ULL;
		return x;
	}
	if (!strcmp(a->op.op, "?")) {
		if (!a->op.right || a->op.right->type != TEP_PRINT_OP)
			return cc_fail(cx, "malformed ?:"), NULL;
		x = ex_new(cx, EX_COND);
		if (x) {
			x->c = cc_num(cx, a->op.left);
			x->a = cc_num(cx, a->op.right->op.left);
			x->b = cc_num(cx, a->op.right->op.right);
		}
		return x;
	}
	if (strlen(a->op.op) > 2 || !strchr("!~|&<>=-+*/%", a->op.op[0]) ||
	    (a->op.op[0] == '=' && a->op.op[1] != '=') ||
	    (a->op.op[0] == '!' && a->op.op[1] && a->op.op[1] != '='))
		return ex_const(cx, 0);
	x = ex_new(cx, EX_BIN);
	if (x) {
		strcpy(x->op, a->op.op);
		x->a = cc_num(cx, a->op.left);
		x->b = cc_num(cx, a->op.right);
	}
	return x;
}

/* libtraceevent's names for the values of a few flags the kernel leaves unconverted */
static long long flag_value(const char *s)
{
	static const struct { const char *name; long long v; } names[] = {
		{ "HI_SOFTIRQ", 0 }, { "TIMER_SOFTIRQ", 1 }, { "NET_TX_SOFTIRQ", 2 },
		{ "NET_RX_SOFTIRQ", 3 }, { "BLOCK_SOFTIRQ", 4 }, { "IRQ_POLL_SOFTIRQ", 5 },
		{ "TASKLET_SOFTIRQ", 6 }, { "SCHED_SOFTIRQ", 7 }, { "HRTIMER_SOFTIRQ", 8 },
		{ "RCU_SOFTIRQ", 9 }, { "HRTIMER_NORESTART", 0 }, { "HRTIMER_RESTART", 1 },
	};
	size_t i;

	if (isdigit((unsigned char)s[0]))
		return strtoull(s, NULL, 0);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(names[i].name, s))
			return names[i].v;
	return -1;
}

static bool cc_syms(struct cctx *cx, struct sarg *s, struct tep_print_flag_sym *list)
{
	struct tep_print_flag_sym *fs;
	int n = 0;

	for (fs = list; fs; fs = fs->next)
		n++;
	s->syms = n ? cc_alloc(cx, n * sizeof(*s->syms)) : NULL;
	if (n && !s->syms)
		return false;
	for (fs = list; fs; fs = fs->next, s->nr_syms++) {
		s->syms[s->nr_syms].val = flag_value(fs->value);
		s->syms[s->nr_syms].str = fs->str;
		s->syms[s->nr_syms].len = strlen(fs->str);
	}
	return true;
}

/* the array a __print_hex()/__print_array() reads: a dynamic array or a field */
static bool cc_array(struct cctx *cx, struct sarg *s, struct tep_print_arg *a)
{
	struct tep_format_field *fl;

	if (!a)
		return cc_fail(cx, "array without a source");
	if (a->type == TEP_PRINT_DYNAMIC_ARRAY) {
		s->dyn = true;
		return cc_dynf(cx, a->dynarray.field, &s->df);
	}
	if (a->type != TEP_PRINT_FIELD)
		return cc_fail(cx, "array of an expression");
	fl = cc_field(cx, a->field.field, a->field.name);
	if (!fl)
		return false;
	s->offset = fl->offset;
	return true;
}

static struct sarg *cc_str(struct cctx *cx, struct tep_print_arg *a)
{
	struct sarg *s = cc_alloc(cx, sizeof(*s));
	struct tep_format_field *fl;

	if (!s)
		return NULL;
	switch (a ? a->type : TEP_PRINT_NULL) {
	case TEP_PRINT_ATOM:
		s->kind = SA_LIT;
		s->str = a->atom.atom;
		s->len = strlen(s->str);
		break;
	case TEP_PRINT_BSTRING:
		s->kind = SA_LIT;
		s->str = a->string.string;
		s->len = strlen(s->str);
		break;
	case TEP_PRINT_FIELD:
		fl = cc_field(cx, a->field.field, a->field.name);
		if (!fl)
			return NULL;
		/* libtraceevent prints a pointer-sized field through printk_formats */
		if (!(fl->flags & TEP_FIELD_IS_ARRAY) && fl->size == cx->f->long_size)
			return cc_fail(cx, "pointer printed as a string"), NULL;
		s->kind = SA_FIELD;
		s->offset = fl->offset;
		s->size = fl->size;
		break;
	case TEP_PRINT_STRING:
		fl = a->string.field ? : tep_find_any_field(cx->ev, a->string.string);
		if (!fl)
			break;	/* prints nothing */
		s->kind = SA_DYNSTR;
		cc_dynf(cx, fl, &s->df);
		break;
	case TEP_PRINT_FLAGS:
	case TEP_PRINT_SYMBOL:
		s->kind = a->type == TEP_PRINT_FLAGS ? SA_FLAGS : SA_SYMBOL;
		s->x = cc_num(cx, a->type == TEP_PRINT_FLAGS ? a->flags.field : a->symbol.field);
		if (a->type == TEP_PRINT_FLAGS && a->flags.delim) {
			s->str = a->flags.delim;
			s->len = strlen(s->str);
		}
		cc_syms(cx, s, a->type == TEP_PRINT_FLAGS ? a->flags.flags : a->symbol.symbols);
		break;
	case TEP_PRINT_HEX:
	case TEP_PRINT_HEX_STR:
		s->kind = SA_HEX;
		s->hex_space = a->type == TEP_PRINT_HEX;
		cc_array(cx, s, a->hex.field);
		s->x = cc_num(cx, a->hex.size);
		break;
	case TEP_PRINT_INT_ARRAY:
		s->kind = SA_INT_ARRAY;
		cc_array(cx, s, a->int_array.field);
		s->x = cc_num(cx, a->int_array.count);
		s->y = cc_num(cx, a->int_array.el_size);
		break;
	case TEP_PRINT_OP:
		/* only ?: gives a string */
		if (a->op.op[0] != '?')
			break;
		if (!a->op.right || a->op.right->type != TEP_PRINT_OP)
			return cc_fail(cx, "malformed ?:"), NULL;
		s->kind = SA_COND;
		s->cond = cc_num(cx, a->op.left);
		s->l = cc_str(cx, a->op.right->op.left);
		s->r = cc_str(cx, a->op.right->op.right);
		break;
	case TEP_PRINT_BITMASK:
	case TEP_PRINT_CPUMASK:
		return cc_fail(cx, "bitmask"), NULL;
	case TEP_PRINT_FUNC:
		return cc_fail(cx, "print helper function"), NULL;
	default:
		/* typecasts, dynamic arrays, NULL: libtraceevent prints nothing */
		break;
	}
	return cx->reason ? NULL : s;
}

static struct op *cc_op(struct cctx *cx, enum op_kind kind)
{
	struct prog *pg = cx->pg;
	struct op *ops;

	if (cx->reason)
		return NULL;
	ops = realloc(pg->ops, (pg->nr_ops + 1) * sizeof(*ops));
	if (!ops) {
		cc_fail(cx, "out of memory");
		return NULL;
	}
	pg->ops = ops;
	memset(&ops[pg->nr_ops], 0, sizeof(*ops));
	ops[pg->nr_ops].kind = kind;
	return &ops[pg->nr_ops++];
}

static void cc_lit(struct cctx *cx, const char *s, size_t n)
{
	struct op *op;
	char *copy;

	if (!n)
		return;
	/* join with the literal before */
	if (cx->pg->nr_ops && cx->pg->ops[cx->pg->nr_ops - 1].kind == OP_LIT) {
		op = &cx->pg->ops[cx->pg->nr_ops - 1];
		copy = cc_alloc(cx, op->len + n + 1);
		if (!copy)
			return;
		memcpy(copy, op->lit, op->len);
		memcpy(copy + op->len, s, n);
		op->lit = copy;
		op->len += n;
		return;
	}
	copy = cc_alloc(cx, n + 1);
	op = copy ? cc_op(cx, OP_LIT) : NULL;
	if (!op)
		return;
	memcpy(copy, s, n);
	op->lit = copy;
	op->len = n;
}

/*
 * Text up to the next conversion, with libtraceevent's escapes (\n \t \r
 * \\ and \c for any other c) and %%. Returns the bytes consumed.
 */
static size_t cc_text(struct cctx *cx, const char *f)
{
	const char *start = f;
	char *buf = cc_alloc(cx, strlen(f) + 1);
	size_t n = 0;

	if (!buf)
		return strlen(f);
	for (; *f; f++) {
		if (*f == '\\') {
			f++;
			switch (*f) {
			case 'n':
				buf[n++] = '\n';
				break;
			case 't':
				buf[n++] = '\t';
				break;
			case 'r':
				buf[n++] = '\r';
				break;
			default:
				buf[n++] = *f;
				break;
			}
			if (!*f) {
				n--;
				break;
			}
		} else if (*f == '%') {
			if (f[1] != '%')
				break;
			buf[n++] = '%';
			f++;
		} else {
			buf[n++] = *f;
		}
	}
	cc_lit(cx, buf, n);
	return f - start;
}

/*
 * A %p conversion (the @len bytes at @conv, up to the 'p') of @arg: a
 * string argument is printed as it is, a number as %p or, with @ext (one
 * of FfSs), as the kernel function it points into.
 */
static void cc_pointer(struct cctx *cx, const char *conv, size_t len, struct tep_print_arg *arg,
		       char ext)
{
	struct op *op = cc_op(cx, ext ? OP_FUNC : OP_PTR);
	char buf[32];

	if (!op)
		return;
	if (arg->type == TEP_PRINT_BSTRING) {
		op->kind = OP_LIT;
		op->lit = arg->string.string;
		op->len = strlen(op->lit);
		return;
	}
	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, conv, len);
	buf[len] = '\0';
	if (!spec_parse(buf, &op->sp))
		cc_fail(cx, "unusual %p conversion");
	op->with_offset = ext == 'F' || ext == 'S';
	op->x = cc_num(cx, arg);
}

/*
 * One conversion starting at f ('%'), consuming arguments from *arg the way
 * libtraceevent's format cache does. Returns the bytes consumed.
 */
static size_t cc_conv(struct cctx *cx, const char *f, struct tep_print_arg **arg)
{
	struct tep_print_arg *star = NULL;
	const char *start = f;
	char conv[32];
	struct op *op;
	size_t len;

	for (f++; *f; f++) {
		switch (*f) {
		case '#': case 'h': case 'l': case 'L': case 'z': case 'Z':
		case '.': case '-':
		case '0': case '1': case '2': case '3': case '4':
		case '5': case '6': case '7': case '8': case '9':
			continue;
		case '*':
			if (!*arg || star)
				return cc_fail(cx, "no argument for *"), strlen(start);
			star = *arg;
			*arg = (*arg)->next;
			continue;
		case 'p':
			if (!*arg)
				return cc_fail(cx, "no argument"), strlen(start);
			if (f[1] && strchr("MmIiUh", f[1]))
				return cc_fail(cx, "%p extension"), strlen(start);
			if (star)
				return cc_fail(cx, "%p with *"), strlen(start);
			/* %ps %pS %pf %pF: a function name; %p followed by anything else is %p */
			len = f + 1 - start;
			cc_pointer(cx, start, len, *arg, f[1] && strchr("FfSs", f[1]) ? f[1] : 0);
			*arg = (*arg)->next;
			return f[1] && strchr("FfSs", f[1]) ? len + 1 : len;
		case 'd': case 'u': case 'i': case 'x': case 'X': case 'o':
		case 's':
			if (!*arg)
				return cc_fail(cx, "no argument"), strlen(start);
			len = f + 1 - start;
			if (len > 30)
				return cc_fail(cx, "conversion too long"), strlen(start);
			memcpy(conv, start, len);
			conv[len] = '\0';
			op = cc_op(cx, *f == 's' ? OP_STR : OP_NUM);
			if (!op)
				return len;
			if (!spec_parse(conv, &op->sp)) {
				cc_fail(cx, "unusual conversion");
				return len;
			}
			if ((op->sp.width == SPEC_STAR || op->sp.prec == SPEC_STAR) != !!star) {
				cc_fail(cx, "* in an unusual place");
				return len;
			}
			if (star)
				op->star = cc_num(cx, star);
			if (*f == 's')
				op->s = cc_str(cx, *arg);
			else
				op->x = cc_num(cx, *arg);
			*arg = (*arg)->next;
			return len;
		default:
			/* libtraceevent prints an unknown conversion c as ">c<" */
			conv[0] = '>';
			conv[1] = *f;
			conv[2] = '<';
			cc_lit(cx, conv, 3);
			return f + 1 - start;
		}
	}
	return f - start;
}

static const struct tep_format_field *sched_field(struct cctx *cx, const char *name, bool need)
{
	const struct tep_format_field *fl = tep_find_field(cx->ev, name);

	if (fl && fl->size != 1 && fl->size != 2 && fl->size != 4 && fl->size != 8)
		fl = NULL;
	if (!fl && need)
		cc_fail(cx, "sched plugin field missing");
	return fl;
}

/* The handlers of libtraceevent's sched_switch plugin, as operations. */
static void cc_sched(struct cctx *cx, bool sw)
{
	struct plugin_fields *sf = cc_alloc(cx, sizeof(*sf));
	struct op *op;

	if (!sf)
		return;
	if (sw) {
		sf->pid = sched_field(cx, "prev_pid", true);
		sf->comm = tep_find_any_field(cx->ev, "prev_comm");
		sf->prio = sched_field(cx, "prev_prio", true);
		sf->state = sched_field(cx, "prev_state", true);
		sf->npid = sched_field(cx, "next_pid", true);
		sf->ncomm = tep_find_any_field(cx->ev, "next_comm");
		sf->nprio = sched_field(cx, "next_prio", true);
	} else {
		sf->pid = sched_field(cx, "pid", true);
		sf->comm = tep_find_any_field(cx->ev, "comm");
		sf->prio = sched_field(cx, "prio", true);
		sf->success = sched_field(cx, "success", false);
		sf->target = sched_field(cx, "target_cpu", false);
	}
	op = cc_op(cx, sw ? OP_SCHED_SWITCH : OP_SCHED_WAKEUP);
	if (op)
		op->sf = sf;
}

/* The raw_data handler of libtraceevent's function plugin, as an operation. */
static void cc_raw_data(struct cctx *cx)
{
	struct plugin_fields *sf = cc_alloc(cx, sizeof(*sf));
	struct op *op;

	if (!sf)
		return;
	/* the plugin steps by long_size but prints sizeof(long) bytes a step */
	if (cx->f->long_size != (int)sizeof(long))
		cc_fail(cx, "foreign long size");
	sf->id = sched_field(cx, "id", true);
	sf->buf = tep_find_any_field(cx->ev, "buf");
	if (!sf->buf)
		cc_fail(cx, "raw_data without buf");
	op = cc_op(cx, OP_RAW_DATA);
	if (op)
		op->sf = sf;
}

enum handler { H_NONE, H_SCHED_SWITCH, H_SCHED_WAKEUP, H_RAW_DATA };

static bool handler_in(struct tep_event *ev, const char *plugin)
{
	Dl_info info;

	return dladdr((void *)ev->handler, &info) && info.dli_fname &&
	       strstr(info.dli_fname, plugin);
}

/* the handler the event prints through, if it is one the compiler knows */
static enum handler known_handler(struct tep_event *ev)
{
	if (!strcmp(ev->system, "sched") && handler_in(ev, "plugin_sched_switch")) {
		if (!strcmp(ev->name, "sched_switch"))
			return H_SCHED_SWITCH;
		if (!strcmp(ev->name, "sched_wakeup") || !strcmp(ev->name, "sched_wakeup_new"))
			return H_SCHED_WAKEUP;
	}
	if (!strcmp(ev->system, "ftrace") && !strcmp(ev->name, "raw_data") &&
	    handler_in(ev, "plugin_function"))
		return H_RAW_DATA;
	return H_NONE;
}

static void prog_free(struct prog *pg)
{
	int i;

	if (!pg)
		return;
	for (i = 0; i < pg->nr_allocs; i++)
		free(pg->allocs[i]);
	free(pg->allocs);
	free(pg->ops);
	free(pg->head);
	free(pg);
}

static bool prog_head(struct prog *pg)
{
	const char *name = pg->event ? pg->event->name : "(NULL)";
	size_t len = strlen(name), n = 0;

	/* " name: " padded to 20 columns (trace_show_data() of trace-cmd report) */
	pg->head = malloc(len + 24);
	if (!pg->head)
		return false;
	pg->head[n++] = ' ';
	memcpy(pg->head + n, name, len);
	n += len;
	pg->head[n++] = ':';
	pg->head[n++] = ' ';
	if (len < 20) {
		memset(pg->head + n, ' ', 20 - len);
		n += 20 - len;
	}
	pg->head_len = n;
	return true;
}

static struct prog *compile(struct tracemap_format *f, int type)
{
	struct tep_event *ev = tep_find_event(f->tep, type);
	struct tep_format_field *pidf;
	struct tep_print_arg *arg;
	struct cctx cx = { .f = f };
	const char *fmt;

	cx.pg = calloc(1, sizeof(*cx.pg));
	if (!cx.pg)
		return NULL;
	cx.ev = ev;
	cx.pg->event = ev;
	if (!prog_head(cx.pg)) {
		free(cx.pg);
		return NULL;
	}
	if (!ev) {
		cx.reason = "unknown event type";
		goto out;
	}
	if (!f->compile) {
		cx.reason = "compiling disabled";
		goto out;
	}
	pidf = tep_find_common_field(ev, "common_pid");
	if (!pidf || (pidf->size != 4 && pidf->size != 2))
		cc_fail(&cx, "no common_pid");
	else {
		cx.pg->pid_offset = pidf->offset;
		cx.pg->pid_size = pidf->size;
	}
	if (tep_is_file_bigendian(f->tep) != tep_is_local_bigendian(f->tep))
		cc_fail(&cx, "foreign byte order");
	if (ev->flags & TEP_EVENT_FL_FAILED)
		cc_fail(&cx, "format libtraceevent could not parse");
	if (ev->flags & (TEP_EVENT_FL_ISBPRINT | TEP_EVENT_FL_PRINTRAW))
		cc_fail(&cx, "bprint or raw event");
	if (cx.reason)
		goto out;
	if (ev->handler && !(ev->flags & TEP_EVENT_FL_NOHANDLE)) {
		switch (known_handler(ev)) {
		case H_SCHED_SWITCH:
			cc_sched(&cx, true);
			break;
		case H_SCHED_WAKEUP:
			cc_sched(&cx, false);
			break;
		case H_RAW_DATA:
			cc_raw_data(&cx);
			break;
		case H_NONE:
			cc_fail(&cx, "plugin handler");
			break;
		}
		goto out;
	}
	fmt = ev->print_fmt.format;
	arg = ev->print_fmt.args;
	if (!fmt) {
		cc_fail(&cx, "no print format");
		goto out;
	}
	while (*fmt && !cx.reason) {
		if (fmt[0] == '%' && fmt[1] != '%')
			fmt += cc_conv(&cx, fmt, &arg);
		else
			fmt += cc_text(&cx, fmt);
	}
out:
	if (cx.reason) {
		/* keep the head: the line prefix is still ours */
		free(cx.pg->ops);
		cx.pg->ops = NULL;
		cx.pg->nr_ops = 0;
		cx.pg->fallback = true;
		cx.pg->reason = cx.reason;
		f->st.types_fallback++;
	} else {
		f->st.types_compiled++;
	}
	return cx.pg;
}

static struct prog *prog_of(struct tracemap_format *f, int type)
{
	struct prog **np;
	int n;

	if (type < f->nr_progs && f->progs[type]) {
		/* a type libtraceevent did not know may have been parsed since */
		if (f->progs[type]->event || !tep_find_event(f->tep, type))
			return f->progs[type];
		if (f->progs[type]->fallback)
			f->st.types_fallback--;
		prog_free(f->progs[type]);
		f->progs[type] = NULL;
	}
	if (type >= f->nr_progs) {
		n = type + 64;
		np = realloc(f->progs, n * sizeof(*np));
		if (!np)
			return NULL;
		memset(np + f->nr_progs, 0, (n - f->nr_progs) * sizeof(*np));
		f->progs = np;
		f->nr_progs = n;
	}
	f->progs[type] = compile(f, type);
	return f->progs[type];
}

/* ---------------------------------------------------------- the API */

/**
 * tracemap_format_new - a text formatter of events
 * @tep: the event formats (and plugins, kallsyms, comms) to print with; the
 *	caller keeps it alive and frees it after tracemap_format_free()
 * @opts: NULL, or options (sz = sizeof(struct tracemap_format_opts))
 *
 * Returns the formatter, or NULL with errno set (EINVAL: no @tep or unknown
 * options, ENOMEM).
 */
struct tracemap_format *tracemap_format_new(struct tep_handle *tep,
					   const struct tracemap_format_opts *opts)
{
	static const char *const usecs[] = { "local", "global", "uptime", "perf", "tai" };
	struct tracemap_format_opts o = { 0 };
	struct tracemap_format *f;
	size_t i;

	if (!tep) {
		errno = EINVAL;
		return NULL;
	}
	if (tm_opts_copy(&o, sizeof(o), opts, TM_FORMAT_OPTS_MIN_SZ, "tracemap_format_opts"))
		return NULL;
	if (o.flags & ~TRACEMAP_FORMAT_NO_COMPILE) {
		tm_log(TRACEMAP_LOG_ERROR, "tracemap_format_new: unknown flags 0x%x", o.flags);
		errno = EINVAL;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->tep = tep;
	f->compile = !(o.flags & TRACEMAP_FORMAT_NO_COMPILE);
	f->long_size = tep_get_long_size(tep) ? : (int)sizeof(long);
	/* trace-cmd report shows microseconds for these clocks, the raw count for the others */
	f->usecs = !o.clock || !strncmp(o.clock, "mono", 4);
	for (i = 0; !f->usecs && i < sizeof(usecs) / sizeof(usecs[0]); i++)
		f->usecs = !strcmp(o.clock, usecs[i]);
	trace_seq_init(&f->seq);
	/*
	 * libtraceevent collects comms in a list until its first lookup, and
	 * only the sorted table it then builds ignores a second comm of a pid:
	 * build it now, so that registered[] above says what a call would do.
	 */
	tep_is_pid_registered(tep, 1);
	memset(f->registered, 0, sizeof(f->registered));
	return f;
}

/**
 * tracemap_format_free - free a formatter and its compiled programs (NULL-safe)
 * @f: the formatter
 */
void tracemap_format_free(struct tracemap_format *f)
{
	int i;

	if (!f)
		return;
	for (i = 0; i < f->nr_progs; i++)
		prog_free(f->progs[i]);
	free(f->progs);
	free(f->out.buf);
	trace_seq_destroy(&f->seq);
	free(f);
}

/* the info part through libtraceevent */
static void info_tep(struct tracemap_format *f, const struct tracemap_event *ev)
{
	struct tep_record rec;

	tracemap_event_to_record(ev, &rec);
	trace_seq_reset(&f->seq);
	tep_print_event(f->tep, &f->seq, &rec, "%s", TEP_PRINT_INFO);
	ob_put(&f->out, f->seq.buffer, f->seq.len);
	f->st.fallback_events++;
}

static void info(struct tracemap_format *f, const struct prog *pg, const struct tracemap_event *ev)
{
	if (pg->fallback) {
		info_tep(f, ev);
		return;
	}
	f->clamped = false;
	run_prog(f, pg, ev->data, ev->size);
	if (f->clamped)
		f->st.clamped++;
}

static int finish(struct tracemap_format *f, const char **out)
{
	if (!ob_reserve(&f->out, 0) || f->out.oom) {
		f->out.oom = false;
		*out = NULL;
		return tm_err(ENOMEM);
	}
	f->out.buf[f->out.len] = '\0';
	*out = f->out.buf;
	return f->out.len;
}

/**
 * tracemap_format_info - the event's own text, as tep_print_event("%s", TEP_PRINT_INFO)
 * @f: the formatter
 * @ev: the event (its payload starts with the common fields)
 * @out: set to the NUL-terminated text, owned by @f and valid until its next call
 *
 * Returns the length of the text, or -errno (EINVAL, ENOMEM).
 */
int tracemap_format_info(struct tracemap_format *f, const struct tracemap_event *ev,
			 const char **out)
{
	struct prog *pg;

	if (!f || !ev || !out || ev->size < 2)
		return tm_err(EINVAL);
	f->out.len = 0;
	f->st.events++;
	pg = prog_of(f, read_num(ev->data, 2));
	if (!pg)
		return tm_err(ENOMEM);
	info(f, pg, ev);
	return finish(f, out);
}

/* the 3.1.6 line of an event libtraceevent does not know: its own three calls */
static void line_unknown(struct tracemap_format *f, const struct tracemap_event *ev)
{
	const char *tfmt = f->usecs ? " %6.1000d:" : "%12d:";
	struct trace_seq *s = &f->seq;
	struct tep_record rec;

	tracemap_event_to_record(ev, &rec);
	trace_seq_reset(s);
	tep_print_event(f->tep, s, &rec, "%16s-%-5d [%03d]", TEP_PRINT_COMM, TEP_PRINT_PID,
			TEP_PRINT_CPU);
	tep_print_event(f->tep, s, &rec, tfmt, TEP_PRINT_TIME);
	trace_seq_puts(s, " (NULL): ");
	trace_seq_printf(s, "%.*s", 20 - 6, "                    ");
	tep_print_event(f->tep, s, &rec, "%s", TEP_PRINT_INFO);
	ob_put(&f->out, s->buffer, s->len);
	f->st.fallback_events++;
}

/* The name of task @pid, as tep_data_comm_from_pid() says; *@len its length. */
static const char *comm_of(struct tracemap_format *f, int pid, size_t *len)
{
	struct comm_slot *c = &f->comms[(unsigned int)pid % NR_COMMS];
	uint64_t gen = tm_comms_gen() + 1;
	const char *comm;
	size_t n;

	if (c->gen == gen && c->pid == pid) {
		*len = c->len;
		return c->comm;
	}
	comm = tep_data_comm_from_pid(f->tep, pid);
	n = strlen(comm);
	*len = n;
	if (n >= sizeof(c->comm))
		return comm;
	memcpy(c->comm, comm, n + 1);
	c->len = n;
	c->pid = pid;
	c->gen = gen;
	return c->comm;
}

/**
 * tracemap_format_forget_names - look task and function names up again
 * @f: the formatter
 *
 * tracemap_format_line() looks the name of a task up in its tep once and
 * keeps it until the library changes a name (a stream learning one, an
 * exec, the sched plugin's comms); it looks a kernel address up once too.
 * A program that changes the tep's names itself (tep_register_comm(),
 * tep_override_comm(), tracefs_load_cmdlines(), tep_register_function())
 * calls this before its next line.
 *
 * Returns 0, or -EINVAL for a NULL formatter.
 */
int tracemap_format_forget_names(struct tracemap_format *f)
{
	if (!f)
		return tm_err(EINVAL);
	memset(f->comms, 0, sizeof(f->comms));
	memset(f->funcs, 0, sizeof(f->funcs));
	return 0;
}

/**
 * tracemap_format_line - the line 'trace-cmd report' 3.1.6 prints for an event
 * @f: the formatter
 * @ev: the event
 * @out: set to the NUL-terminated line, ending in '\n', owned by @f and valid
 *	until its next call
 *
 * "comm-pid [cpu] time: name: info": comm right-aligned in 16 columns, the
 * pid left-aligned in 5, the CPU in 3 digits, the time in seconds with
 * microseconds (or the raw count for counter clocks), the name padded to 20.
 * The task's name is looked up once, then kept while the library changes
 * no name (see tracemap_format_forget_names()).
 *
 * Returns the length of the line, or -errno (EINVAL, ENOMEM).
 */
int tracemap_format_line(struct tracemap_format *f, const struct tracemap_event *ev,
			 const char **out)
{
	struct obuf *o = &f->out;
	const char *comm;
	struct prog *pg;
	size_t comm_len;
	char *q, *p;
	int pid;

	if (!f || !ev || !out || ev->size < 2)
		return tm_err(EINVAL);
	o->len = 0;
	f->st.events++;
	pg = prog_of(f, read_num(ev->data, 2));
	if (!pg)
		return tm_err(ENOMEM);
	if (!pg->event || !pg->pid_size ||
	    pg->pid_offset + pg->pid_size > ev->size) {
		line_unknown(f, ev);
		goto end;
	}
	pid = (int)read_num((const unsigned char *)ev->data + pg->pid_offset, pg->pid_size);
	comm = comm_of(f, pid, &comm_len);
	/* the prefix and the name in one piece: the comm and at most 72 bytes more */
	if (!ob_reserve(o, comm_len + 80 + pg->head_len))
		goto end;
	q = o->buf + o->len;
	/* "%16s-%-5d [%03d]" */
	q = fill(q, ' ', comm_len < 16 ? 16 - comm_len : 0);
	memcpy(q, comm, comm_len);
	q += comm_len;
	*q++ = '-';
	p = q;
	if (pid < 0)
		*q++ = '-';
	q = put_dec(q, pid < 0 ? -(long long)pid : pid, 0, 0);
	q = fill(q, ' ', q - p < 5 ? 5 - (q - p) : 0);
	*q++ = ' ';
	*q++ = '[';
	if (ev->cpu < 0) {
		/* never for a real event; keep printf's sign */
		*q++ = '-';
		q = put_dec(q, -(unsigned long long)ev->cpu, 2, '0');
	} else {
		q = put_dec(q, (unsigned int)ev->cpu, 3, '0');
	}
	*q++ = ']';
	if (f->usecs) {
		/* " %6.1000d:" of tep_print_event: rounded microseconds as s.us */
		unsigned long long t = (ev->ts + 500) / 1000;

		*q++ = ' ';
		q = put_dec(q, t / 1000000, 5, ' ');
		*q++ = '.';
		q = put_dec(q, t % 1000000, 6, '0');
	} else {
		/* "%12d:": libtraceevent's 10^12 divisor overflows to none */
		q = put_dec(q, ev->ts, 12, ' ');
	}
	*q++ = ':';
	memcpy(q, pg->head, pg->head_len);
	o->len = q + pg->head_len - o->buf;
	info(f, pg, ev);
end:
	if (o->len && o->buf[o->len - 1] == '\n')
		o->len--;
	ob_putc(o, '\n');
	return finish(f, out);
}

/**
 * tracemap_format_stats - what the formatter did so far
 * @f: the formatter
 * @st: filled with min(@sz, sizeof) bytes of the statistics
 * @sz: sizeof(struct tracemap_format_stats)
 *
 * Returns 0 or -EINVAL.
 */
int tracemap_format_stats(const struct tracemap_format *f, struct tracemap_format_stats *st,
			  size_t sz)
{
	if (!f || !st)
		return tm_err(EINVAL);
	memcpy(st, &f->st, sz < sizeof(f->st) ? sz : sizeof(f->st));
	return 0;
}

/**
 * tracemap_format_fallback - why an event type is formatted by libtraceevent
 * @f: the formatter
 * @type: the event type id (common_type)
 *
 * Compiles the type if it was not yet. Returns NULL when the type is compiled,
 * otherwise a short reason ("plugin handler", "%p extension", ...).
 */
const char *tracemap_format_fallback(struct tracemap_format *f, int type)
{
	struct prog *pg;

	if (!f || type < 0 || type > 0xffff)
		return "invalid type";
	pg = prog_of(f, type);
	if (!pg)
		return "out of memory";
	return pg->fallback ? pg->reason : NULL;
}
