// SPDX-License-Identifier: LGPL-2.1-only
/*
 * The formatter's compiler: an event type's print format, as libtraceevent
 * parsed it (the format string and its struct tep_print_arg tree), or the
 * handler of a libtraceevent plugin it knows, turned into a list of
 * operations (struct prog) that format-run.c executes per event. A type
 * that uses anything it does not know is marked as a fallback, with the
 * reason, and printed by tep_print_event().
 */
#include <ctype.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>

#include "format-local.h"

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

/* ------------------------------------------------ what it was verified with */

/*
 * The libtraceevent releases whose tep_print_event() quirks the compiler
 * reproduces (tests/kernel/test-format, tests/unit/test-format-stored).
 * Another release may print differently: its events all go through
 * tep_print_event(), as with TRACEMAP_FORMAT_NO_COMPILE.
 */
static const char *const verified_tep[] = { "1.7.1" };

#ifndef TM_TEP_BUILD_VERSION
#define TM_TEP_BUILD_VERSION	""	/* built without pkg-config's modversion */
#endif

static bool tep_verified(const char *version)
{
	size_t i;

	for (i = 0; i < sizeof(verified_tep) / sizeof(verified_tep[0]); i++)
		if (!strcmp(version, verified_tep[i]))
			return true;
	return false;
}

/**
 * tm_fmt_version_refusal - why the compiler is off for these libtraceevent versions
 * @built: the version pkg-config gave at build time ("" unknown)
 * @loaded: the version of the library loaded now, NULL when it cannot be told
 *	(linked statically): then the build's version stands for it
 *
 * Returns NULL when both are verified, otherwise the reason, in @buf.
 */
const char *tm_fmt_version_refusal(const char *built, const char *loaded, char *buf,
				   size_t size)
{
	if (!tep_verified(built))
		snprintf(buf, size, "built against libtraceevent %s", *built ? built : "of unknown version");
	else if (loaded && !tep_verified(loaded))
		snprintf(buf, size, "libtraceevent %s loaded", loaded);
	else
		return NULL;
	return buf;
}

static struct {
	pthread_once_t once;
	const char *refusal;		/* NULL: compile */
	char why[96];
	char plugins[PATH_MAX];		/* the loaded libtraceevent's plugin directory; "" unknown */
} gate = { .once = PTHREAD_ONCE_INIT };

/*
 * The loaded libtraceevent's version from its file name (libtraceevent.so.X.Y.Z,
 * the symlinks resolved), into @ver; its plugin directory, as Debian and
 * libtraceevent's own install place it, into gate.plugins. False when the
 * library is not a shared object of that name.
 */
static bool tep_loaded(char *ver, size_t size)
{
	static const char prefix[] = "libtraceevent.so.";
	char path[PATH_MAX], *base;
	Dl_info info;

	if (!dladdr((void *)tep_print_event, &info) || !info.dli_fname ||
	    !realpath(info.dli_fname, path))
		return false;
	base = strrchr(path, '/');
	if (!base || strncmp(base + 1, prefix, sizeof(prefix) - 1))
		return false;
	snprintf(ver, size, "%s", base + sizeof(prefix));
	*base = '\0';
	snprintf(gate.plugins, sizeof(gate.plugins), "%s/traceevent/plugins", path);
	return true;
}

static void gate_init(void)
{
	char loaded[32];
	bool known = tep_loaded(loaded, sizeof(loaded));

	gate.refusal = tm_fmt_version_refusal(TM_TEP_BUILD_VERSION, known ? loaded : NULL,
					      gate.why, sizeof(gate.why));
	if (gate.refusal)
		tm_log(TRACEMAP_LOG_WARN,
		       "tracemap_format: %s, but verified only with %s: every event is formatted by "
		       "tep_print_event() (as with TRACEMAP_FORMAT_NO_COMPILE)",
		       gate.refusal, verified_tep[0]);
}

/* NULL when the compiler may run in this process, otherwise why not (said once) */
const char *tm_fmt_compile_refusal(void)
{
	pthread_once(&gate.once, gate_init);
	return gate.refusal;
}

/*
 * Whether @ev's handler is @plugin of the loaded libtraceevent's own plugin
 * directory: the compiler reproduces those handlers only, not a plugin of the
 * same name from TRACEEVENT_PLUGIN_DIR, ~/.local or another release.
 */
static bool handler_in(struct tep_event *ev, const char *plugin)
{
	char path[PATH_MAX], want[PATH_MAX + 64];
	Dl_info info;

	tm_fmt_compile_refusal();
	if (!gate.plugins[0] || !dladdr((void *)ev->handler, &info) || !info.dli_fname ||
	    !realpath(info.dli_fname, path))
		return false;
	snprintf(want, sizeof(want), "%s/%s.so", gate.plugins, plugin);
	return !strcmp(path, want);
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

void tm_fmt_prog_free(struct prog *pg)
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

static unsigned int fields_end(const struct tep_event *ev)
{
	const struct tep_format_field *fl;
	unsigned int end = 0;

	for (fl = ev->format.common_fields; fl; fl = fl->next)
		if ((unsigned int)(fl->offset + fl->size) > end)
			end = fl->offset + fl->size;
	for (fl = ev->format.fields; fl; fl = fl->next)
		if ((unsigned int)(fl->offset + fl->size) > end)
			end = fl->offset + fl->size;
	return end;
}

struct prog *tm_fmt_compile(struct tracemap_format *f, int type)
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
		cx.reason = tm_fmt_compile_refusal() ? "libtraceevent version not verified" :
			    "compiling disabled";
		goto out;
	}
	cx.pg->fields_end = fields_end(ev);
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
