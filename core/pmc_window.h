/* The counter window the engines run inside their one C call: a group, and
 * copies of it on the engine's worker threads, enabled right before each
 * repetition's loop and disabled right after it, each repetition's delta
 * kept.  Pure C: never prints, never exits. */
#ifndef PMCSH_PMC_WINDOW_H
#define PMCSH_PMC_WINDOW_H
#include <stdint.h>
#include <sys/types.h>
#include "counter.h"
#include "../kernels/kwindow.h"

struct pmc_window {
	struct pmc_group *g;       /* the group; its owner keeps it alive and open */
	int ncopies;
	struct pmc_group *copies;  /* one per tid, sharing g->ev */
	int nreps, nev, err, err_rep, err_ev;
	uint64_t *raw, *en, *run;  /* [nreps][nev] */
};

/* Prepares `w` (zeroed by the caller) for `nreps` repetitions of group `g`,
 * open on target `t`.  A group on the calling thread (pid 0, no cpus) is
 * copied onto each of the `ntids` threads in `tids`, and all are summed; a
 * cpu-wide or pid group already sees them.  Fills `kw` with the hooks:
 * begin reads the counters (still disabled) then enables them; end
 * disables, reads and keeps the delta of that repetition.  So the window
 * holds only the enable/disable ioctls; end returns -EBUSY when a group was
 * enabled but never scheduled (then w->err, err_rep and err_ev say which).
 * Returns 0, or -errno with msg filled (after pmc_window_close). */
int pmc_window_open(struct pmc_window *w, struct pmc_group *g, const struct pmc_target *t, int nreps,
		    const pid_t *tids, int ntids, struct kwindow *kw, char *msg, size_t len);
/* Closes the copies and frees the window's arrays.  Idempotent. */
void pmc_window_close(struct pmc_window *w);

/* c[nev] = the counts summed over the first `nreps_done` repetitions
 * (clamped to 0..nreps); returns that count. */
int pmc_window_sum(const struct pmc_window *w, int nreps_done, struct pmc_count *c);
/* c[nev] = the counts of repetition `rep` alone. */
void pmc_window_rep(const struct pmc_window *w, int rep, struct pmc_count *c);

#endif
