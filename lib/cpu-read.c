// SPDX-License-Identifier: LGPL-2.1
/*
 * Consuming through read() of trace_pipe_raw, for a buffer that cannot be
 * mapped: one page copy per call, the kernel's counters from
 * per_cpu/cpuN/stats. Owns struct tm_readsrc.
 */
#include <string.h>
#include <unistd.h>

#include "cpu-local.h"

/* The loss accounting starts from the kernel's counters as of the open. */
void tm_read_init(struct tracemap_cpu *c)
{
	struct tracemap_cpu_stats k = { 0 };

	if (tm_cpu_stats_file(c->stats_path, &k))
		k.kernel_overrun = k.kernel_read = 0;
	c->loss.accounted = k.kernel_read ? k.kernel_overrun : 0;
	c->loss.seen_read = k.kernel_read;
}

int tm_read_region(struct tracemap_cpu *c, struct tracemap_region *r)
{
	unsigned char *page = c->rd.buf;
	unsigned int size;
	uint64_t commit;
	ssize_t n;

	n = read(c->fd, page, c->subbuf_size);
	c->st.reads++;
	if (n < 0)
		return errno == EAGAIN ? 0 : tm_err(errno);
	if (n == 0)
		return 0;
	if (n < TM_SUBBUF_HDR)
		return tm_err(EPROTO);
	memcpy(&commit, page + 8, sizeof(commit));
	size = TM_COMMIT_SIZE(commit);
	if (size > (unsigned int)n - TM_SUBBUF_HDR) {
		c->st.corrupt++;
		tm_log(TRACEMAP_LOG_WARN, "cpu%d: read() page commit %u beyond %zd bytes",
		       c->cpu, size, n);
		return tm_err(EBADMSG);
	}
	tm_region_init(c, r, page, c->rd.seq++);
	r->end = size;
	r->base_ts = r->page_ts;
	r->lost = tm_subbuf_lost(page, c->subbuf_size);
	if (r->lost) {
		struct tracemap_cpu_stats k = { .kernel_overrun = TM_OVERRUN_UNKNOWN };

		/* a full page has no room for the count: the stats file has the counter */
		if (r->lost == TRACEMAP_LOST_UNKNOWN && !tm_cpu_stats_file(c->stats_path, &k)) {
			/* events read since the reset, this page's included: fewer means a reset */
			if (k.kernel_read < c->loss.seen_read)
				c->loss.accounted = 0;
			c->loss.seen_read = k.kernel_read;
		}
		r->lost = tm_loss_flagged(c, r->lost, k.kernel_overrun);
	}
	r->flags = TRACEMAP_REGION_COMPLETE;
	return 1;
}
