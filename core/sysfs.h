/* The machine's perf files, as the counter layer's C files share them
 * (sysfs.c); what scripts see is in counter.h.  Pure C. */
#ifndef PMCSH_SYSFS_H
#define PMCSH_SYSFS_H
#include <stddef.h>
#include "counter.h"

#ifndef SYSFS_PMUS	/* make fuzz builds against a fake tree of its own */
#define SYSFS_PMUS "/sys/bus/event_source/devices"
#endif

/* Reads the text file `path` into buf (trailing white space cut); returns
 * its length or -errno. */
int pmc_read_text(const char *path, char *buf, size_t len);

/* A list as sysfs and perf write them ("0-3,8,10-11": cpus, or a format
 * file's bits), spaces around items allowed: its ranges in order into
 * r[0..cap-1], each decimal with lo <= hi <= max.  Returns how many, or
 * -EINVAL (also for an empty list) or -E2BIG (more than cap, or longer
 * than 1023 characters).  The one list parser: format bits, cpumask files
 * and machine.parse_list. */
struct pmc_range { int lo, hi; };
int pmc_parse_list(const char *s, long max, struct pmc_range *r, int cap);

/* Resolves the sysfs form "pmu/terms/" (modifiers ":u" or right after the
 * slash) into ev.  Returns 0, -ENOENT (no such PMU, event or term) or
 * -EINVAL (bad syntax), with msg filled. */
int pmc_resolve_sysfs(const char *name, struct pmc_event *ev, char *msg, size_t len);

#endif
