/* perf's event modifiers (":u", ":k", ":h", ":G", ":H"), one grammar for
 * every form of event name: libpfm4 names, rNNNN and the sysfs pmu/terms/
 * (evname.c, sysfs.c).  Pure C. */
#ifndef PMCSH_EVMODS_H
#define PMCSH_EVMODS_H
#include <errno.h>
#include <string.h>
#include <linux/perf_event.h>

/* Splits a trailing ":mods" made only of u,k,h,G,H (perf modifiers). */
static inline int parse_mods(const char *mods, struct perf_event_attr *a)
{
	int u = 0, k = 0, h = 0;
	for (const char *p = mods; *p; p++) {
		switch (*p) {
		case 'u': u = 1; break;
		case 'k': k = 1; break;
		case 'h': h = 1; break;
		case 'G': a->exclude_host = 1; break;
		case 'H': a->exclude_guest = 1; break;
		default: return -EINVAL;
		}
	}
	if (u || k || h) {
		a->exclude_user = !u;
		a->exclude_kernel = !k;
		a->exclude_hv = !h;
	}
	return 0;
}

static inline int is_modstr(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!strchr("ukhGH", *s))
			return 0;
	return 1;
}

#endif
