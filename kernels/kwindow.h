/* A measurement window as the engines see it: two hooks called right around
 * the timed loop, inside the engine's one C call. The engine knows nothing of
 * counters; the binding fills the hooks (see core/counter.h).  Pure C. */
#ifndef PMCSH_KWINDOW_H
#define PMCSH_KWINDOW_H

struct kwindow {
	void *ctx;
	/* Last thing before the loop of repetition `rep` (0-based, timed reps only). */
	int (*begin)(void *ctx, int rep);
	/* First thing after it. Returns 0 or -errno; an error aborts the run. */
	int (*end)(void *ctx, int rep);
};

static inline int kwindow_begin(const struct kwindow *w, int rep)
{
	return w && w->begin ? w->begin(w->ctx, rep) : 0;
}

static inline int kwindow_end(const struct kwindow *w, int rep)
{
	return w && w->end ? w->end(w->ctx, rep) : 0;
}

#endif
