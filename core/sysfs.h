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

/* Resolves the sysfs form "pmu/terms/" (modifiers ":u" or right after the
 * slash) into ev.  Returns 0, -ENOENT (no such PMU, event or term) or
 * -EINVAL (bad syntax), with msg filled. */
int pmc_resolve_sysfs(const char *name, struct pmc_event *ev, char *msg, size_t len);

#endif
