/* Events of another CPU model (libpfm4's forced PMU), asked of a child:
 * libpfm 4.13 cannot be re-initialised for another model in a running
 * process (pfm_terminate + pfm_initialize reads freed memory), so the same
 * binary is run again with LIBPFM_FORCE_PMU set before its only
 * pfm_initialize, and answers over a pipe.  Pure C: never prints, never
 * exits (but in the child). */
#ifndef PMCSH_PFMFORCED_H
#define PMCSH_PFMFORCED_H
#include "counter.h"

/* The hidden first argument that makes pmcsh the child. */
#define PMC_FORCED_ARG "--pfm-forced-child"

/* pmc_list for model `pmu`: fn called for each of its events (idx is the
 * child's, meaningless here).  Returns 0, or -errno with msg filled (an
 * unknown model, the child failed). */
int pmc_forced_list(const char *pmu, pmc_list_fn fn, void *ctx, char *msg, size_t len);
/* pmc_about for model `pmu`. */
int pmc_forced_about(const char *pmu, const char *name, struct pmc_event *ev, int *encoded, char *desc,
		     size_t dlen, pmc_attr_fn fn, void *ctx, char *msg, size_t len);

/* pmc_about for each of n events of model `pmu`, from one child: the
 * answer is asked for at once (pmc_forced_about_all), then read an event
 * at a time, in order (pmc_forced_about_next: each call as
 * pmc_forced_about for the next name), and freed.  A child that cannot run
 * or answer fails the whole batch (-errno, msg); an event it cannot encode
 * fails its own next call only.  Limited by the argument list's size:
 * thousands of names. */
struct pmc_forced_answer {
	char *buf;
	size_t n, at;
};
int pmc_forced_about_all(const char *pmu, const char *const *names, size_t n, struct pmc_forced_answer *a,
			 char *msg, size_t len);
int pmc_forced_about_next(struct pmc_forced_answer *a, struct pmc_event *ev, int *encoded, char *desc, size_t dlen,
			  pmc_attr_fn fn, void *ctx, char *msg, size_t len);
void pmc_forced_answer_free(struct pmc_forced_answer *a);

/* The child: main() calls it when argv[1] is PMC_FORCED_ARG (argv[2] the
 * model, argv[3] "list" or "about", argv[4..] the events).  Writes the answer
 * on stdout; returns the exit status. */
int pmc_forced_child(int argc, char **argv);

#endif
