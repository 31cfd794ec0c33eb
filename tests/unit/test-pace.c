// SPDX-License-Identifier: GPL-2.0-only
/*
 * The stream's pacing (lib/pace.c) alone, without a kernel: each row of
 * its table probed with the state, event and conditions it names, and
 * long runs of events a stream can produce compared, step by step, with
 * the flag logic stream.c used before the table (drained, stalled,
 * chase_held, budget_held, kicked, ticked, round_ticked and a CPU's
 * chased), so that a changed row shows as a changed decision.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tracemap-local.h"

/* ------------------------------------------------------- the rows, probed */

struct probe {
	int row;			/* 1-based, as in pace.c's table */
	enum tm_pace_state state;
	enum tm_pace_cpu cpu;
	unsigned int facts;
	enum tm_pace_event ev;
	unsigned int cond;
	enum tm_pace_state to;
	enum tm_pace_cpu cpu_to;
	unsigned int facts_to;
	enum tm_pace_action action;
};

#define TICK	TM_PACE_HAS_TICK
#define KFD	TM_PACE_HAS_KICK
#define LIMIT	TM_PACE_CHASE_LIMIT

static const struct probe probes[] = {
	{ 1, TM_PACE_RUN, TM_PACE_CHASED, LIMIT, TM_PACE_ASK, TM_PACE_REGION_DONE,
	  TM_PACE_RUN_CHASE, TM_PACE_CHASED, LIMIT, TM_PACE_HOLD },
	{ 2, TM_PACE_RUN_BUDGET, TM_PACE_CHASED, LIMIT, TM_PACE_ASK, TM_PACE_REGION_DONE,
	  TM_PACE_RUN_BUDGET, TM_PACE_CHASED, LIMIT, TM_PACE_HOLD },
	/* no chase limit (following with a tick): a chased CPU takes on */
	{ 3, TM_PACE_RUN, TM_PACE_CHASED, TICK, TM_PACE_ASK, TM_PACE_REGION_DONE,
	  TM_PACE_RUN, TM_PACE_CHASED, TICK, TM_PACE_TAKE },
	/* its region not walked to the end: it goes on with it */
	{ 3, TM_PACE_RUN, TM_PACE_CHASED, LIMIT, TM_PACE_ASK, 0,
	  TM_PACE_RUN, TM_PACE_CHASED, LIMIT, TM_PACE_TAKE },
	{ 4, TM_PACE_RUN_CHASE, TM_PACE_FREE, LIMIT, TM_PACE_ASK, TM_PACE_SPENT,
	  TM_PACE_RUN_BUDGET, TM_PACE_FREE, LIMIT, TM_PACE_HOLD },
	{ 5, TM_PACE_STALLED_CHASE, TM_PACE_FREE, 0, TM_PACE_ASK, TM_PACE_SPENT,
	  TM_PACE_STALLED, TM_PACE_FREE, 0, TM_PACE_HOLD },
	{ 6, TM_PACE_DRAINED, TM_PACE_FREE, 0, TM_PACE_ASK, TM_PACE_SPENT,
	  TM_PACE_DRAINED, TM_PACE_FREE, 0, TM_PACE_HOLD },
	{ 7, TM_PACE_RUN, TM_PACE_FREE, 0, TM_PACE_REGION, TM_PACE_SAME_PAGE,
	  TM_PACE_RUN, TM_PACE_CHASED, 0, TM_PACE_NONE },
	{ 8, TM_PACE_RUN, TM_PACE_FREE, 0, TM_PACE_REGION,
	  TM_PACE_SAME_PAGE | TM_PACE_WRITER_LEFT, TM_PACE_RUN, TM_PACE_FREE, 0, TM_PACE_NONE },
	{ 9, TM_PACE_RUN, TM_PACE_FREE, KFD, TM_PACE_OPEN, 0,
	  TM_PACE_RUN, TM_PACE_FREE, KFD | TM_PACE_KICKED, TM_PACE_KICK },
	/* no eventfd (a stream of the caller's readers): nothing to kick */
	{ 9, TM_PACE_RUN, TM_PACE_FREE, 0, TM_PACE_OPEN, 0,
	  TM_PACE_RUN, TM_PACE_FREE, 0, TM_PACE_NONE },
	{ 10, TM_PACE_STALLED, TM_PACE_FREE, TICK | TM_PACE_TICKED | TM_PACE_WAITS, TM_PACE_START, 0,
	  TM_PACE_RUN, TM_PACE_FREE, TICK | TM_PACE_ROUND_TICKED, TM_PACE_NONE },
	{ 11, TM_PACE_DRAINED, TM_PACE_FREE, TICK | TM_PACE_ROUND_TICKED | TM_PACE_WAITS,
	  TM_PACE_START, 0, TM_PACE_RUN, TM_PACE_FREE, TICK, TM_PACE_NONE },
	{ 12, TM_PACE_RUN, TM_PACE_CHASED, 0, TM_PACE_NEW_ROUND, 0,
	  TM_PACE_RUN, TM_PACE_FREE, 0, TM_PACE_NONE },
	{ 13, TM_PACE_RUN_CHASE, TM_PACE_FREE, 0, TM_PACE_EMPTY, 0,
	  TM_PACE_DRAINED, TM_PACE_FREE, TM_PACE_WAITS, TM_PACE_NONE },
	{ 14, TM_PACE_STALLED, TM_PACE_FREE, 0, TM_PACE_EMPTY, 0,
	  TM_PACE_STALLED, TM_PACE_FREE, TM_PACE_WAITS, TM_PACE_NONE },
	{ 15, TM_PACE_RUN, TM_PACE_FREE, 0, TM_PACE_STALL, 0,
	  TM_PACE_STALLED, TM_PACE_FREE, 0, TM_PACE_NONE },
	{ 16, TM_PACE_RUN_CHASE, TM_PACE_FREE, 0, TM_PACE_STALL, 0,
	  TM_PACE_STALLED_CHASE, TM_PACE_FREE, 0, TM_PACE_NONE },
	{ 17, TM_PACE_STALLED_CHASE, TM_PACE_FREE, 0, TM_PACE_STALL, 0,
	  TM_PACE_STALLED_CHASE, TM_PACE_FREE, 0, TM_PACE_NONE },
	{ 18, TM_PACE_STALLED_CHASE, TM_PACE_FREE, TICK | KFD | TM_PACE_KICKED, TM_PACE_DONE,
	  TM_PACE_DELIVERED, TM_PACE_STALLED_CHASE, TM_PACE_FREE, TICK | KFD | TM_PACE_WAITS,
	  TM_PACE_UNKICK },
	/* the tick started this round: go on */
	{ 19, TM_PACE_STALLED_CHASE, TM_PACE_FREE, TICK | KFD | TM_PACE_ROUND_TICKED, TM_PACE_DONE,
	  0, TM_PACE_STALLED_CHASE, TM_PACE_FREE,
	  TICK | KFD | TM_PACE_ROUND_TICKED | TM_PACE_KICKED, TM_PACE_KICK },
	{ 19, TM_PACE_STALLED, TM_PACE_FREE, TICK | KFD | TM_PACE_KICKED, TM_PACE_DONE, 0,
	  TM_PACE_STALLED, TM_PACE_FREE, TICK | KFD | TM_PACE_KICKED, TM_PACE_NONE },
	{ 20, TM_PACE_DRAINED, TM_PACE_FREE, KFD | TM_PACE_WAITS, TM_PACE_DONE, TM_PACE_DELIVERED,
	  TM_PACE_DRAINED, TM_PACE_FREE, KFD | TM_PACE_KICKED, TM_PACE_KICK },
	{ 21, TM_PACE_DRAINED, TM_PACE_FREE, TICK | KFD | TM_PACE_WAITS, TM_PACE_DONE,
	  TM_PACE_DELIVERED, TM_PACE_DRAINED, TM_PACE_FREE, TICK | KFD | TM_PACE_WAITS,
	  TM_PACE_NONE },
	{ 21, TM_PACE_DRAINED, TM_PACE_FREE, KFD | TM_PACE_KICKED, TM_PACE_DONE, 0,
	  TM_PACE_DRAINED, TM_PACE_FREE, KFD | TM_PACE_WAITS, TM_PACE_UNKICK },
	{ 22, TM_PACE_DRAINED, TM_PACE_FREE, TICK, TM_PACE_TICK, 0,
	  TM_PACE_DRAINED, TM_PACE_FREE, TICK | TM_PACE_TICKED, TM_PACE_NONE },
	{ 23, TM_PACE_DRAINED, TM_PACE_FREE, KFD | TM_PACE_KICKED | TM_PACE_WAITS, TM_PACE_WOKEN, 0,
	  TM_PACE_DRAINED, TM_PACE_FREE, KFD, TM_PACE_UNKICK },
};

static void test_rows(void **state)
{
	unsigned int nrules, i, hit[64] = { 0 };
	const struct tm_pace_rule *rules = tm_pace_rules(&nrules);

	assert_true(nrules <= 64);
	for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		const struct probe *pr = &probes[i];
		struct tm_pace p = { pr->state, pr->facts };
		enum tm_pace_cpu cpu = pr->cpu;
		const struct tm_pace_rule *r = tm_pace_rule(&p, &cpu, pr->ev, pr->cond);
		enum tm_pace_action a;

		if (!r || r - rules + 1 != pr->row)
			fail_msg("probe %u: row %ld applies, the table says row %d", i,
				 r ? (long)(r - rules + 1) : 0L, pr->row);
		hit[r - rules] = 1;
		a = tm_pace_step(&p, &cpu, pr->ev, pr->cond);
		if (p.state != pr->to || cpu != pr->cpu_to || p.facts != pr->facts_to || a != pr->action)
			fail_msg("probe %u (row %d): state %d cpu %d facts %#x action %d, expected "
				 "%d %d %#x %d", i, pr->row, p.state, cpu, p.facts, a, pr->to,
				 pr->cpu_to, pr->facts_to, pr->action);
	}
	/* a row added to the table needs its probe here */
	for (i = 0; i < nrules; i++)
		if (!hit[i])
			fail_msg("row %u of pace.c's table has no probe", i + 1);
	assert_int_equal(nrules, 23);
}

/*
 * Every event ends in a row for any state and CPU state: the table is
 * total, and each event's rows are where pace.c looks for them.
 */
static void test_total(void **state)
{
	unsigned int s, c, e, cond;

	for (s = 0; s < TM_PACE_NR_STATES; s++)
		for (c = 0; c < TM_PACE_NR_CPU_STATES; c++)
			for (e = 0; e < TM_PACE_NR_EVENTS; e++)
				for (cond = 0; cond < (1u << 12); cond++) {
					struct tm_pace p = { s, cond & TM_PACE_FACTS };
					enum tm_pace_cpu cpu = c;

					const struct tm_pace_rule *r = tm_pace_rule(&p, &cpu, e, cond);

					/* and pace.c finds it among the rows of that event */
					assert_non_null(r);
					assert_int_equal(r->event, e);
				}
}

/* tm_pace_ask()'s shortcut answers as the table does, in every state. */
static void test_ask_shortcut(void **state)
{
	unsigned int s, c, cond;

	for (s = 0; s < TM_PACE_NR_STATES; s++)
		for (c = 0; c < TM_PACE_NR_CPU_STATES; c++)
			for (cond = 0; cond < (1u << 12); cond++) {
				struct tm_pace p = { s, cond & TM_PACE_FACTS }, q = p;
				enum tm_pace_cpu cp = c, cq = c;

				assert_int_equal(tm_pace_ask(&p, &cp, cond),
						 tm_pace_step(&q, &cq, TM_PACE_ASK, cond));
				assert_int_equal(p.state, q.state);
				assert_int_equal(p.facts, q.facts);
				assert_int_equal(cp, cq);
			}
}

/* ------------------------------------------------- against the old flags */

/* stream.c's pacing before the table, flag for flag */
struct old {
	bool tick, kickfd, limit;
	bool drained, stalled, chase_held, budget_held, kicked, ticked, round_ticked;
	bool chased[2];
};

static enum tm_pace_action old_kick(struct old *o)
{
	if (o->kicked || !o->kickfd)
		return TM_PACE_NONE;
	o->kicked = true;
	return TM_PACE_KICK;
}

static enum tm_pace_action old_unkick(struct old *o)
{
	if (!o->kicked)
		return TM_PACE_NONE;
	o->kicked = false;
	return TM_PACE_UNKICK;
}

static bool old_round_waits(const struct old *o, bool delivered)
{
	bool stall_waits = o->tick && !o->round_ticked && o->chase_held && !o->budget_held;

	if (o->stalled && !stall_waits)
		return false;
	return o->tick || !delivered;
}

static enum tm_pace_action old_ask(struct old *o, int cpu, bool region_done, bool spent)
{
	if (o->chased[cpu] && o->limit && region_done) {
		o->chase_held = true;
		return TM_PACE_HOLD;
	}
	if (!spent)
		return TM_PACE_TAKE;
	o->budget_held = true;
	return TM_PACE_HOLD;
}

static void old_start(struct old *o)
{
	o->drained = o->stalled = o->chase_held = o->budget_held = false;
	o->round_ticked = o->ticked;
	o->ticked = false;
	o->chased[0] = o->chased[1] = false;
}

static unsigned int rnd(unsigned int *seed, unsigned int n)
{
	*seed = *seed * 1103515245u + 12345u;
	return (*seed >> 16) % n;
}

static void check_same(const struct old *o, const struct tm_pace *p, const enum tm_pace_cpu *cpu,
		       unsigned int step)
{
	if (o->drained != tm_pace_waits(p) ||
	    (o->ticked || o->kicked) != tm_pace_own_wakeup(p) ||
	    o->chased[0] != (cpu[0] == TM_PACE_CHASED) || o->chased[1] != (cpu[1] == TM_PACE_CHASED))
		fail_msg("step %u: waits %d/%d, own wakeup %d/%d, chased %d %d/%d %d (old/table)",
			 step, o->drained, tm_pace_waits(p), o->ticked || o->kicked,
			 tm_pace_own_wakeup(p), o->chased[0], o->chased[1], cpu[0], cpu[1]);
}

/*
 * Rounds as stream.c runs them: a start, asks and regions of two CPUs and
 * ticks, an end (stalled only on a CPU held back), then the push model's
 * decision (DONE) or the pull model's question, with a wakeup, or a round
 * resumed after a timeout between.
 */
static void run_against_old(unsigned int facts, unsigned int seed, unsigned int rounds)
{
	struct old o = { .tick = facts & TICK, .kickfd = facts & KFD, .limit = facts & LIMIT };
	enum tm_pace_cpu cpu[2] = { TM_PACE_FREE, TM_PACE_FREE };
	enum tm_pace_action a, b;
	unsigned int i, k, n, step = 0, cond;
	bool held, stall, delivered, waits;
	struct tm_pace p;
	int c;

	tm_pace_init(&p, facts);
	assert_int_equal(tm_pace_step(&p, NULL, TM_PACE_OPEN, 0), old_kick(&o));
	for (i = 0; i < rounds; i++) {
		tm_pace_step(&p, NULL, TM_PACE_START, 0);
		for (c = 0; c < 2; c++)
			tm_pace_step(&p, &cpu[c], TM_PACE_NEW_ROUND, 0);
		old_start(&o);
		check_same(&o, &p, cpu, ++step);
		held = false;
		n = rnd(&seed, 12);
		for (k = 0; k < n; k++) {
			c = (int)rnd(&seed, 2);
			switch (rnd(&seed, 4)) {
			case 0:
			case 1:
				cond = (rnd(&seed, 2) ? TM_PACE_REGION_DONE : 0) |
				       (rnd(&seed, 4) ? 0 : TM_PACE_SPENT);
				a = tm_pace_ask(&p, &cpu[c], cond);
				b = old_ask(&o, c, cond & TM_PACE_REGION_DONE, cond & TM_PACE_SPENT);
				if (a != b)
					fail_msg("step %u: ask %d, old %d", step, a, b);
				held |= a == TM_PACE_HOLD;
				break;
			case 2:
				cond = (rnd(&seed, 2) ? TM_PACE_SAME_PAGE : 0) |
				       (rnd(&seed, 2) ? TM_PACE_WRITER_LEFT : 0);
				tm_pace_step(&p, &cpu[c], TM_PACE_REGION, cond);
				if ((cond & TM_PACE_SAME_PAGE) && !(cond & TM_PACE_WRITER_LEFT))
					o.chased[c] = true;
				break;
			default:
				if (o.tick) {
					tm_pace_step(&p, NULL, TM_PACE_TICK, 0);
					o.ticked = true;
				}
				break;
			}
			check_same(&o, &p, cpu, ++step);
		}
		/* the end, and (pull model, after a timeout) the same end again */
		stall = held && rnd(&seed, 3);
		for (k = 0; k < 1 + rnd(&seed, 2); k++) {
			if (stall) {
				tm_pace_step(&p, NULL, TM_PACE_STALL, 0);
				o.stalled = true;
			} else {
				tm_pace_step(&p, NULL, TM_PACE_EMPTY, 0);
				o.drained = true;
			}
			check_same(&o, &p, cpu, ++step);
		}
		delivered = rnd(&seed, 2);
		cond = delivered ? TM_PACE_DELIVERED : 0;
		waits = tm_pace_rule(&p, NULL, TM_PACE_DONE, cond)->set & TM_PACE_WAITS;
		if (waits != old_round_waits(&o, delivered))
			fail_msg("step %u: the next round waits %d, old %d", step, waits,
				 old_round_waits(&o, delivered));
		if (rnd(&seed, 2)) {
			/* push model: run_round() decides and kicks */
			a = tm_pace_step(&p, NULL, TM_PACE_DONE, cond);
			o.drained = old_round_waits(&o, delivered);
			b = o.drained ? old_unkick(&o) : old_kick(&o);
			if (a != b)
				fail_msg("step %u: done %d, old %d", step, a, b);
		}
		check_same(&o, &p, cpu, ++step);
		if (o.tick && rnd(&seed, 2)) {
			tm_pace_step(&p, NULL, TM_PACE_TICK, 0);
			o.ticked = true;
		}
		if (rnd(&seed, 2)) {
			a = tm_pace_step(&p, NULL, TM_PACE_WOKEN, 0);
			b = old_unkick(&o);
			o.drained = false;
			if (a != b)
				fail_msg("step %u: woken %d, old %d", step, a, b);
		}
		check_same(&o, &p, cpu, ++step);
	}
}

static void test_same_as_flags(void **state)
{
	unsigned int facts;

	for (facts = 0; facts < 8; facts++)
		run_against_old(facts, 1000 + facts, 20000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_total),
		cmocka_unit_test(test_ask_shortcut),
		cmocka_unit_test(test_same_as_flags),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
