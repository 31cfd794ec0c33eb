// SPDX-License-Identifier: LGPL-2.1-only
/*
 * A stream's pacing: how its rounds end and how the next one starts, as
 * one table. stream.c reports what happens (the events below) and does
 * what the rows say (kick, unkick, take a region or hold the CPU back);
 * wake.c spaces the rounds and backs off after empty wakeups.
 *
 * A round (stream.c, run_round() and the pull loop of next_event())
 * takes regions from the CPUs until every CPU is found empty (DRAINED) or
 * held back (STALLED): by its budget of regions for the round, or by the
 * chase limit, when the writer is on the reader page and every further
 * GET_READER would hand out the few events written meanwhile. How it
 * ended decides whether the next one starts at once, kicked (the kick
 * eventfd stays readable, a level), or waits for the kernel's wakeup, the
 * tick or the caller's deadline (WAITS).
 *
 * States (enum tm_pace_state; a CPU's: enum tm_pace_cpu):
 *   RUN, RUN_CHASE, RUN_BUDGET   a round runs; a CPU was held back by...
 *   DRAINED, STALLED_CHASE,      it ended: every CPU empty; held back by the
 *   STALLED                      chase limit only; by a budget
 *   FREE, CHASED                 a CPU may take regions; its writer is on
 *                                its reader page (the rest of the region)
 *
 * The rows, first match wins ("-": any or unchanged; facts and
 * conditions: tracemap-local.h). lib/README "Pacing" is the same table.
 *
 *  #  event     state           CPU     when / unless              next state     sets / clears      action
 *  1  ASK       RUN             CHASED  CHASE_LIMIT REGION_DONE    RUN_CHASE      -                  HOLD
 *  2  ASK       -               CHASED  CHASE_LIMIT REGION_DONE    -              -                  HOLD
 *  3  ASK       -               -       / SPENT                    -              -                  TAKE
 *  4  ASK       RUN RUN_CHASE   -       -                          RUN_BUDGET     -                  HOLD
 *  5  ASK       STALLED_CHASE   -       -                          STALLED        -                  HOLD
 *  6  ASK       -               -       -                          -              -                  HOLD
 *  7  REGION    -               -       SAME_PAGE / WRITER_LEFT    CPU: CHASED    -                  -
 *  8  REGION    -               -       -                          -              -                  -
 *  9  OPEN      -               -       -                          -              -                  KICK
 * 10  START     -               -       TICKED                     RUN            +ROUND_TICKED      -
 *                                                                                 -TICKED -WAITS
 * 11  START     -               -       -                          RUN            -ROUND_TICKED      -
 *                                                                                 -WAITS
 * 12  NEW_ROUND -               -       -                          CPU: FREE      -                  -
 * 13  EMPTY     RUN RUN_CHASE   -       -                          DRAINED        +WAITS             -
 *               RUN_BUDGET
 * 14  EMPTY     -               -       -                          -              +WAITS             -
 * 15  STALL     RUN RUN_BUDGET  -       -                          STALLED        -                  -
 * 16  STALL     RUN_CHASE       -       -                          STALLED_CHASE  -                  -
 * 17  STALL     -               -       -                          -              -                  -
 * 18  DONE      STALLED_CHASE   -       HAS_TICK / ROUND_TICKED    -              +WAITS             UNKICK
 * 19  DONE      STALLED_CHASE   -       -                          -              -WAITS             KICK
 *               STALLED
 * 20  DONE      -               -       DELIVERED / HAS_TICK       -              -WAITS             KICK
 * 21  DONE      -               -       -                          -              +WAITS             UNKICK
 * 22  TICK      -               -       -                          -              +TICKED            -
 * 23  WOKEN     -               -       -                          -              -WAITS             UNKICK
 *
 * Why, row by row:
 *  1-2   a chased CPU would be handed one to three events per GET_READER:
 *        it finishes its region and waits for the next round. Only in
 *        consume mode or without a tick (CHASE_LIMIT): following drains up
 *        to the writer.
 *  3-6   MIN_ROUND_REGIONS (or a ring's worth) per CPU and round, so that
 *        a busy CPU cannot keep the others' events waiting; a budget hold
 *        makes any stall a budget one (4-5).
 *  7     the same sub-buffer again, and the mapping shows no data past it:
 *        the writer is on the reader page.
 *  9     whatever the buffers hold already is work for the first round.
 * 10-11  below the watermark the tick is the only wakeup; a round it
 *        started must not make the next one wait for a second tick.
 * 13-17  the merge ends the round: every CPU empty, or one held back (by
 *        the chase limit alone: STALLED_CHASE). A round that next_event()
 *        resumes after its timeout ends as it did (14, 17).
 * 18     a tick (watermark > 0 or follow) will come: no chasing a writer
 *        as fast as the reader, two calls for every few events.
 * 19     work left over never waits.
 * 20     watermark 0 and events flowing: the next round looks through the
 *        mapping one interval later (wake.c) instead of sleeping twice.
 * 21     nothing came, or a tick will: the kernel's wakeup, the tick or the
 *        deadline starts the next round.
 * 22-23  the tick and the kick are the stream's own wakeups (wake.c does
 *        not count them as empty); after a wakeup the next round runs.
 */
#include "tracemap-local.h"

#define S(x)		(1u << TM_PACE_##x)
#define RUNNING		(S(RUN) | S(RUN_CHASE) | S(RUN_BUDGET))
#define SAME		-1

static const struct tm_pace_rule rules[] = {
	/* event, from, cpu_from, when, unless, to, cpu_to, set, clear, action */
	{ TM_PACE_ASK, S(RUN), S(CHASED), TM_PACE_CHASE_LIMIT | TM_PACE_REGION_DONE, 0,
	  TM_PACE_RUN_CHASE, SAME, 0, 0, TM_PACE_HOLD },
	{ TM_PACE_ASK, 0, S(CHASED), TM_PACE_CHASE_LIMIT | TM_PACE_REGION_DONE, 0,
	  SAME, SAME, 0, 0, TM_PACE_HOLD },
	{ TM_PACE_ASK, 0, 0, 0, TM_PACE_SPENT, SAME, SAME, 0, 0, TM_PACE_TAKE },
	{ TM_PACE_ASK, S(RUN) | S(RUN_CHASE), 0, 0, 0, TM_PACE_RUN_BUDGET, SAME, 0, 0, TM_PACE_HOLD },
	{ TM_PACE_ASK, S(STALLED_CHASE), 0, 0, 0, TM_PACE_STALLED, SAME, 0, 0, TM_PACE_HOLD },
	{ TM_PACE_ASK, 0, 0, 0, 0, SAME, SAME, 0, 0, TM_PACE_HOLD },

	{ TM_PACE_REGION, 0, 0, TM_PACE_SAME_PAGE, TM_PACE_WRITER_LEFT,
	  SAME, TM_PACE_CHASED, 0, 0, TM_PACE_NONE },
	{ TM_PACE_REGION, 0, 0, 0, 0, SAME, SAME, 0, 0, TM_PACE_NONE },

	{ TM_PACE_OPEN, 0, 0, 0, 0, SAME, SAME, 0, 0, TM_PACE_KICK },

	{ TM_PACE_START, 0, 0, TM_PACE_TICKED, 0, TM_PACE_RUN, SAME, TM_PACE_ROUND_TICKED,
	  TM_PACE_TICKED | TM_PACE_WAITS, TM_PACE_NONE },
	{ TM_PACE_START, 0, 0, 0, 0, TM_PACE_RUN, SAME, 0, TM_PACE_ROUND_TICKED | TM_PACE_WAITS,
	  TM_PACE_NONE },
	{ TM_PACE_NEW_ROUND, 0, 0, 0, 0, SAME, TM_PACE_FREE, 0, 0, TM_PACE_NONE },

	{ TM_PACE_EMPTY, RUNNING, 0, 0, 0, TM_PACE_DRAINED, SAME, TM_PACE_WAITS, 0, TM_PACE_NONE },
	{ TM_PACE_EMPTY, 0, 0, 0, 0, SAME, SAME, TM_PACE_WAITS, 0, TM_PACE_NONE },
	{ TM_PACE_STALL, S(RUN) | S(RUN_BUDGET), 0, 0, 0, TM_PACE_STALLED, SAME, 0, 0, TM_PACE_NONE },
	{ TM_PACE_STALL, S(RUN_CHASE), 0, 0, 0, TM_PACE_STALLED_CHASE, SAME, 0, 0, TM_PACE_NONE },
	{ TM_PACE_STALL, 0, 0, 0, 0, SAME, SAME, 0, 0, TM_PACE_NONE },

	{ TM_PACE_DONE, S(STALLED_CHASE), 0, TM_PACE_HAS_TICK, TM_PACE_ROUND_TICKED,
	  SAME, SAME, TM_PACE_WAITS, 0, TM_PACE_UNKICK },
	{ TM_PACE_DONE, S(STALLED_CHASE) | S(STALLED), 0, 0, 0, SAME, SAME, 0, TM_PACE_WAITS,
	  TM_PACE_KICK },
	{ TM_PACE_DONE, 0, 0, TM_PACE_DELIVERED, TM_PACE_HAS_TICK, SAME, SAME, 0, TM_PACE_WAITS,
	  TM_PACE_KICK },
	{ TM_PACE_DONE, 0, 0, 0, 0, SAME, SAME, TM_PACE_WAITS, 0, TM_PACE_UNKICK },

	{ TM_PACE_TICK, 0, 0, 0, 0, SAME, SAME, TM_PACE_TICKED, 0, TM_PACE_NONE },
	{ TM_PACE_WOKEN, 0, 0, 0, 0, SAME, SAME, 0, TM_PACE_WAITS, TM_PACE_UNKICK },
};

/* The first row of each event, and the end of the last: the rows are in event order. */
static const unsigned char first[TM_PACE_NR_EVENTS + 1] = {
	[TM_PACE_ASK] = 0, [TM_PACE_REGION] = 6, [TM_PACE_OPEN] = 8, [TM_PACE_START] = 9,
	[TM_PACE_NEW_ROUND] = 11, [TM_PACE_EMPTY] = 12, [TM_PACE_STALL] = 14,
	[TM_PACE_DONE] = 17, [TM_PACE_TICK] = 21, [TM_PACE_WOKEN] = 22,
	[TM_PACE_NR_EVENTS] = sizeof(rules) / sizeof(rules[0]),
};

void tm_pace_init(struct tm_pace *p, unsigned int facts)
{
	p->state = TM_PACE_RUN;
	p->facts = facts & (TM_PACE_HAS_TICK | TM_PACE_HAS_KICK | TM_PACE_CHASE_LIMIT);
}

const struct tm_pace_rule *tm_pace_rules(unsigned int *n)
{
	*n = sizeof(rules) / sizeof(rules[0]);
	return rules;
}

const struct tm_pace_rule *tm_pace_rule(const struct tm_pace *p, const enum tm_pace_cpu *cpu,
					enum tm_pace_event ev, unsigned int cond)
{
	const struct tm_pace_rule *r, *end;

	if ((unsigned int)ev >= TM_PACE_NR_EVENTS)
		return NULL;
	end = rules + first[ev + 1];
	cond = (cond & ~TM_PACE_FACTS) | p->facts;
	for (r = rules + first[ev]; r < end; r++) {
		if ((r->from && !(r->from & (1u << p->state))) ||
		    (r->cpu_from && (!cpu || !(r->cpu_from & (1u << *cpu)))) ||
		    (cond & r->when) != r->when || (cond & r->unless))
			continue;
		return r;
	}
	/* every event ends in a row for any state: not reached */
	return NULL;
}

enum tm_pace_action tm_pace_step(struct tm_pace *p, enum tm_pace_cpu *cpu,
				 enum tm_pace_event ev, unsigned int cond)
{
	const struct tm_pace_rule *r = tm_pace_rule(p, cpu, ev, cond);

	if (!r)
		return TM_PACE_NONE;
	if (r->to != SAME)
		p->state = r->to;
	if (r->cpu_to != SAME && cpu)
		*cpu = r->cpu_to;
	p->facts = (p->facts & ~r->clear) | r->set;
	/* the kick is a level: only a change of it is an action */
	switch (r->action) {
	case TM_PACE_KICK:
		if ((p->facts & (TM_PACE_HAS_KICK | TM_PACE_KICKED)) != TM_PACE_HAS_KICK)
			return TM_PACE_NONE;
		p->facts |= TM_PACE_KICKED;
		return TM_PACE_KICK;
	case TM_PACE_UNKICK:
		if (!(p->facts & TM_PACE_KICKED))
			return TM_PACE_NONE;
		p->facts &= ~TM_PACE_KICKED;
		return TM_PACE_UNKICK;
	default:
		return r->action;
	}
}
