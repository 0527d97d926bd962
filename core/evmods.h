/* perf's event modifiers, one grammar for every form of event name:
 * libpfm4 names, rNNNN, tracepoints and the sysfs pmu/terms/ (evname.c,
 * sysfs.c).  The letters are those of perf's parse-events.l that set the
 * attr: u, k, h (privilege), G, H (guest, host), p up to three times
 * (precise_ip) and P (the highest precise_ip the PMU takes: the open falls
 * back level by level, group.c).  Pure C. */
#ifndef PMCSH_EVMODS_H
#define PMCSH_EVMODS_H
#include <errno.h>
#include <string.h>
#include <linux/perf_event.h>

#define PMC_MOD_LETTERS "ukhGHpP"

/* Sets a's fields from a modifier string of PMC_MOD_LETTERS (checked by
 * pmc_name_parse).  As perf does, p without G or H excludes the guest. */
static inline int parse_mods(const char *mods, struct perf_event_attr *a)
{
	int u = 0, k = 0, h = 0, gh = 0, p = 0, pmax = 0;
	for (const char *s = mods; *s; s++) {
		switch (*s) {
		case 'u': u = 1; break;
		case 'k': k = 1; break;
		case 'h': h = 1; break;
		case 'G': a->exclude_host = 1; gh = 1; break;
		case 'H': a->exclude_guest = 1; gh = 1; break;
		case 'p': p++; break;
		case 'P': pmax = 1; break;
		default: return -EINVAL;
		}
	}
	if (u || k || h) {
		a->exclude_user = !u;
		a->exclude_kernel = !k;
		a->exclude_hv = !h;
	}
	if (p > 3)
		return -EINVAL;
	if (pmax) {
		a->precise_ip = 3;
	} else if (p) {
		a->precise_ip = (unsigned)p;
		if (!gh)
			a->exclude_guest = 1;
	}
	return 0;
}

static inline int is_modstr(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!strchr(PMC_MOD_LETTERS, *s))
			return 0;
	return 1;
}

#endif
