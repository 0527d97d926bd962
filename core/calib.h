/* Calibration around a group: a probe's work measured in one window, and
 * the cost of empty windows (enable, disable, read(), rdpmc).  Pure C:
 * never prints, never exits. */
#ifndef PMCSH_CALIB_H
#define PMCSH_CALIB_H
#include <stdint.h>
#include "counter.h"

/* Runs probe `kind` (kernels/probe.h) with `arg` between an enable and a
 * disable of g, after a new baseline: first touch of `arg` bytes of a fresh
 * anonymous mapping, read() of `arg` bytes of file `path` into one, and so
 * on.  *wall_ns and *cpu_ns (this thread's CPU time) span the window; the
 * counts are read after with pmc_group_snapshot/delta.  Returns 0, or
 * -errno with msg filled (-EINTR: Ctrl-C stopped the work). */
int pmc_probe(struct pmc_group *g, int kind, uint64_t arg, const char *path, double *wall_ns, double *cpu_ns,
	      char *msg, size_t len);

/* *ns = ns per empty window from C (enable, disable, read()) over n
 * windows, the yardstick for the same window driven from Lua.  Returns 0,
 * or -EINTR when Ctrl-C stopped it. */
int pmc_windows_ns(struct pmc_group *g, long n, double *ns);

struct pmc_overhead {
	double window_ns;          /* enable, disable, read() */
	double enable_disable_ns;  /* enable, disable */
	double read_ns;            /* read() */
	int mapped;                /* the rdpmc path exists (g->mapped): */
	double rdpmc_read_ns;      /*   a snapshot while counting */
	uint64_t fast_reads, fallbacks;
	int counted;               /* c holds what the counters saw of one empty window, averaged */
	struct pmc_count c[PMC_MAX_EVENTS];
};
/* Times n iterations of each path on g.  Returns 0, or -EINTR when Ctrl-C
 * stopped it (o is then meaningless). */
int pmc_overhead(struct pmc_group *g, long n, struct pmc_overhead *o);

#endif
