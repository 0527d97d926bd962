/* pmcsh's side of the marker library (core/marker_abi.h): the events handed
 * to it, and the files it leaves read back.  Pure C. */
#ifndef PMCSH_REGIONS_H
#define PMCSH_REGIONS_H
#include <stddef.h>
#include "counter.h"
#include "marker_abi.h"

/* PMCSH_MARKER_EVENTS for g's events, laid out (pmc_group_layout): one
 * perf group per sub group, as pmc.group would open them.  Returns 0, or
 * -E2BIG (too many events, or the text does not fit len) / -EINVAL (an
 * event counted per cpu, not per thread: uncore) with msg. */
int pmc_regions_encode(const struct pmc_group *g, char *out, size_t len, char *msg, size_t mlen);

/* A results file mapped read-only, its header checked. */
struct pmc_regions_file {
	const struct pmcsh_mk_header *h;
	size_t len;
	unsigned nthreads, nregions, nevents;   /* clamped to what the file holds */
};
/* Maps path (a regular file of this user, no link): 0, or -errno with msg. */
int pmc_regions_map(const char *path, struct pmc_regions_file *f, char *msg, size_t mlen);
void pmc_regions_unmap(struct pmc_regions_file *f);
/* Thread part k < f->nthreads. */
const struct pmcsh_mk_thread *pmc_regions_thread(const struct pmc_regions_file *f, unsigned k);
/* Region id's name, NUL-terminated into out (PMCSH_MK_NAME). */
void pmc_regions_name(const struct pmc_regions_file *f, unsigned id, char *out);
/* Region id's counts on thread th, as a user reads them: per event (the
 * file's nevents) inclusive, exclusive, enabled and running ns; open when
 * a call of it was open on th at the read (its exclusive counts then hold
 * that call's ended children: not given). */
struct pmc_region_counts {
	uint64_t incl[PMCSH_MK_MAX_EVENTS], excl[PMCSH_MK_MAX_EVENTS];
	uint64_t enabled[PMCSH_MK_MAX_EVENTS], running[PMCSH_MK_MAX_EVENTS];
	int open;
};
void pmc_regions_counts(const struct pmc_regions_file *f, const struct pmcsh_mk_thread *th, unsigned id,
			struct pmc_region_counts *out);

#endif
