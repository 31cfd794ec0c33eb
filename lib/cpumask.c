// SPDX-License-Identifier: LGPL-2.1-only
/*
 * Which CPUs a stream or a dump reads: a caller's hex mask as
 * tracing_cpumask prints it, or else the online CPUs
 * (/sys/devices/system/cpu/online), or else every CPU with a buffer in the
 * instance. Used by stream.c and dump.c through tm_select_cpus().
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracemap-local.h"

/* "0-3,5" as in /sys/devices/system/cpu/online */
static int parse_cpu_list(const char *str, bool *set, int max)
{
	const char *p = str;
	long a, b;
	char *end;

	while (*p && !isspace((unsigned char)*p)) {
		a = strtol(p, &end, 10);
		if (end == p || a < 0)
			return tm_err(EINVAL);
		b = a;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || b < a)
				return tm_err(EINVAL);
		}
		for (; a <= b && a < max; a++)
			set[a] = true;
		p = *end == ',' ? end + 1 : end;
	}
	return 0;
}

/*
 * A hex mask as tracing_cpumask prints it: "3", "ff,ffffffff", with an
 * optional 0x. Bit n selects CPU n.
 */
static int parse_cpumask(const char *str, bool *set, int max)
{
	const char *s = str, *e;
	bool any = false;
	int bit = 0, v, i;

	while (isspace((unsigned char)*s))
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		e--;
	if (e == s)
		goto bad;
	while (e > s) {
		e--;
		if (*e == ',')
			continue;
		if (!isxdigit((unsigned char)*e))
			goto bad;
		v = isdigit((unsigned char)*e) ? *e - '0' : (tolower((unsigned char)*e) - 'a' + 10);
		for (i = 0; i < 4; i++, bit++) {
			if (!(v & (1 << i)))
				continue;
			if (bit >= max) {
				tm_log(TRACEMAP_LOG_ERROR, "CPU mask '%s' selects CPU %d: no such CPU "
				       "(see /sys/devices/system/cpu/possible)", str, bit);
				return tm_err(ENXIO);
			}
			set[bit] = true;
			any = true;
		}
	}
	if (!any) {
		tm_log(TRACEMAP_LOG_ERROR, "CPU mask '%s' selects no CPU: set at least one bit "
		       "(3 = CPUs 0 and 1)", str);
		return tm_err(EINVAL);
	}
	return 0;
bad:
	tm_log(TRACEMAP_LOG_ERROR, "invalid CPU mask '%s': give a hexadecimal mask as in "
	       "tracing_cpumask, e.g. 3 for CPUs 0 and 1", str);
	return tm_err(EINVAL);
}

static int select_set(const char *mask, const char *idir, bool *set, int max)
{
	char buf[4096], path[4200];
	int cpu;

	if (mask)
		return parse_cpumask(mask, set, max);
	if (tm_read_file("/sys/devices/system/cpu/online", buf, sizeof(buf)) > 0 &&
	    !parse_cpu_list(buf, set, max))
		return 0;
	/* no sysfs: every CPU that has a buffer */
	for (cpu = 0; cpu < max; cpu++) {
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d", idir, cpu);
		if (access(path, F_OK))
			break;
		set[cpu] = true;
	}
	if (cpu)
		return 0;
	tm_log(TRACEMAP_LOG_ERROR, "no CPU found in /sys/devices/system/cpu/online nor in "
	       "%s/per_cpu: give a CPU mask", idir);
	return tm_err(ENXIO);
}

int tm_select_cpus(const char *mask, const char *idir, bool *set, int max)
{
	int ret, i, n = 0;

	ret = select_set(mask, idir, set, max);
	if (ret)
		return ret;
	for (i = 0; i < max; i++)
		n += set[i];
	if (!n) {
		tm_log(TRACEMAP_LOG_ERROR, "no online CPU found in /sys/devices/system/cpu/online: "
		       "give a CPU mask");
		return tm_err(ENXIO);
	}
	return n;
}
