// SPDX-License-Identifier: LGPL-2.1-only
/*
 * The formatter's runner: a compiled program (format-compile.c) executed
 * over one record, appending the text tep_print_event() would write to the
 * formatter's output buffer. Lengths and indexes read from the record are
 * kept inside it (the event is counted as clamped where libtraceevent would
 * read outside).
 */
#include "format-local.h"

/* ------------------------------------------------------------ output */

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

/* ---------------------------------------------------------- evaluation */

struct ectx {
	struct tracemap_format *f;
	const unsigned char *data;
	int size;
};

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
		/* a record cut short: the part of the array it holds */
		if (comm->offset + comm->size > e->size) {
			e->f->clamped = true;
			n = comm->offset < e->size ? e->size - comm->offset : 0;
		} else {
			n = comm->size;
		}
		n = strnlen((const char *)e->data + comm->offset, n);
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

/* field @fl of the record; 0 (and clamped) past a record cut short */
static unsigned long long fval(struct ectx *e, const struct tep_format_field *fl)
{
	if (fl->offset + fl->size > e->size) {
		e->f->clamped = true;
		return 0;
	}
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
const struct func_slot *tm_fmt_func_of(struct tracemap_format *f, unsigned long long addr)
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

void tm_fmt_run(struct tracemap_format *f, const struct prog *pg, const void *data, int size)
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
			const struct func_slot *fs = tm_fmt_func_of(f, v);
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
