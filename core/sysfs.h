/* The machine's perf files, as the counter layer's C files share them
 * (sysfs.c); what scripts see is in counter.h.  Pure C. */
#ifndef PMCSH_SYSFS_H
#define PMCSH_SYSFS_H
#include <stddef.h>
#include "counter.h"

#ifndef SYSFS_PMUS	/* make fuzz builds against a fake tree of its own */
#define SYSFS_PMUS "/sys/bus/event_source/devices"
#endif

#ifndef TRACEFS_DIRS	/* the same for tracefs */
#define TRACEFS_DIRS "/sys/kernel/tracing", "/sys/kernel/debug/tracing"
#endif

/* Reads the text file `path` into buf (trailing white space cut); returns
 * its length or -errno. */
int pmc_read_text(const char *path, char *buf, size_t len);

/* A list as sysfs and perf write them ("0-3,8,10-11": cpus, or a format
 * file's bits), s[0..n): its ranges in order into r[0..cap-1], each
 * decimal with min <= lo <= hi <= max.  Spaces around items are allowed
 * unless the rules say words: a user's list (-C, -p), where only digits,
 * '-' and ',' are, without leading zeros (perf reads -C 010 as octal).  No
 * item may be empty.  Returns how many, or -EINVAL (also for an empty
 * list) or -E2BIG (more than cap), with why (may be NULL) saying which
 * item and why, its bytes quoted inert.  The one list parser: format bits,
 * cpumask files, machine.parse_list and the fuzz harness id_list. */
struct pmc_range { int lo, hi; };
struct pmc_list_rules {
	long min, max;  /* every number within */
	int words;      /* typed by a user: nothing but digits, '-' and ',' */
	int single;     /* single numbers only, no N-M (process ids) */
};
int pmc_parse_list(const char *s, size_t n, const struct pmc_list_rules *rules, struct pmc_range *r, int cap,
		   char *why, size_t wlen);

/* Resolves the sysfs form "pmu/terms/" (modifiers ":u" or right after the
 * slash) into ev.  Returns 0, -ENOENT (no such PMU, event or term) or
 * -EINVAL (bad syntax), with msg filled. */
int pmc_resolve_sysfs(const char *name, struct pmc_event *ev, char *msg, size_t len);

/* Tracepoints, perf's SUBSYS:EVENT: the folder tracefs is mounted on
 * (TRACEFS_DIRS, the first with a readable events/), or NULL. */
const char *pmc_tracefs(void);
/* Resolves base "SUBSYS:EVENT" through tracefs's events/SUBSYS/EVENT/id
 * into a PERF_TYPE_TRACEPOINT event with modifiers mods.  Returns 0, or
 * -ENOENT (no such tracepoint, or no tracefs) with msg untouched. */
int pmc_resolve_tracepoint(const char *base, const char *mods, struct pmc_event *ev, char *msg, size_t len);
/* Calls fn for every tracepoint, sorted (pmu "tracepoint"): 0 or fn's. */
int pmc_list_tracepoints(pmc_list_fn fn, void *ctx);

#endif
