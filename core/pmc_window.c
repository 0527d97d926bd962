/* The engines' counter window (see pmc_window.h).  Pure C: never prints, never
 * exits. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "pmc_window.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

void pmc_window_close(struct pmc_window *w)
{
	if (w->copies) {
		for (int i = 0; i < w->ncopies; i++) {
			pmc_group_close(&w->copies[i]);
			free(w->copies[i].sub);
		}
		free(w->copies);
		w->copies = NULL;
	}
	free(w->raw);
	w->raw = w->en = w->run = NULL;
	w->ncopies = 0;
}

static int w_all(struct pmc_window *w, int (*fn)(struct pmc_group *))
{
	int r = fn(w->g);
	for (int i = 0; i < w->ncopies && !r; i++)
		r = fn(&w->copies[i]);
	return r;
}

/* Before the loop: a new baseline (read only when stale; the counters are
 * disabled, so it is not counted), then enable. */
static int w_begin(void *ctx, int rep)
{
	(void)rep;
	return w_all(ctx, pmc_group_start);
}

static int w_end(void *ctx, int rep)
{
	struct pmc_window *w = ctx;
	int r = w_all(w, pmc_group_disable);
	if (!r)
		r = w_all(w, pmc_group_snapshot);
	if (r || rep < 0 || rep >= w->nreps)
		return r;
	size_t o = (size_t)rep * (size_t)w->nev;
	memset(w->raw + o, 0, sizeof(uint64_t) * (size_t)w->nev);
	memset(w->en + o, 0, sizeof(uint64_t) * (size_t)w->nev);
	memset(w->run + o, 0, sizeof(uint64_t) * (size_t)w->nev);
	pmc_group_accumulate(w->g, w->raw + o, w->en + o, w->run + o);
	for (int i = 0; i < w->ncopies; i++)
		pmc_group_accumulate(&w->copies[i], w->raw + o, w->en + o, w->run + o);
	for (int e = 0; e < w->nev; e++)
		if (w->en[o + e] > 0 && w->run[o + e] == 0 && !w->err) {
			w->err = -EBUSY;
			w->err_rep = rep;
			w->err_ev = e;
			return -EBUSY;
		}
	return 0;
}

int pmc_window_open(struct pmc_window *w, struct pmc_group *g, const struct pmc_target *t, int nreps,
		    const pid_t *tids, int ntids, struct kwindow *kw, char *msg, size_t len)
{
	w->g = g;
	w->nreps = nreps;
	w->nev = g->nev;
	/* copies follow the workers only for a group on the calling thread (pid
	 * 0 or its own id) that does not inherit: a cpu-wide group sees them
	 * already, an inheriting one counts them as its children (copies too
	 * counted them twice), another thread's group is not theirs */
	int own = t->ncpus == 0 && !t->inherit && (t->pid == 0 || t->pid == (pid_t)syscall(SYS_gettid));
	if (!own)
		ntids = 0;
	size_t cells = (size_t)nreps * (size_t)w->nev;
	w->raw = calloc(3 * cells, sizeof(uint64_t));
	w->copies = ntids > 0 ? calloc((size_t)ntids, sizeof *w->copies) : NULL;
	if (!w->raw || (ntids > 0 && !w->copies)) {
		pmc_window_close(w);
		snprintf(msg, len, "out of memory for the counter window");
		return -ENOMEM;
	}
	w->en = w->raw + cells;
	w->run = w->en + cells;
	for (int i = 0; i < ntids; i++) {
		struct pmc_group *c = &w->copies[i];
		c->nev = g->nev;
		c->ev = g->ev;
		c->sub = calloc((size_t)g->nev, sizeof *c->sub);
		w->ncopies = i + 1;
		if (!c->sub) {
			pmc_window_close(w);
			snprintf(msg, len, "out of memory for the counter window");
			return -ENOMEM;
		}
		pmc_group_layout(c);
		struct pmc_target ct = {.pid = tids[i]};
		int bad;
		int r = pmc_group_open(c, &ct, &bad);
		if (r) {
			pmc_open_strerror(&g->ev[bad >= 0 ? bad : 0], &ct, -r, msg, len);
			pmc_window_close(w);
			return r;
		}
	}
	kw->ctx = w;
	kw->begin = w_begin;
	kw->end = w_end;
	return 0;
}

static void counts_from(const struct pmc_window *w, const uint64_t *raw, const uint64_t *en, const uint64_t *run,
			struct pmc_count *c)
{
	for (int e = 0; e < w->nev; e++) {
		c[e].raw = raw[e];
		c[e].enabled = en[e];
		c[e].running = run[e];
		pmc_scale(raw[e], en[e], run[e], w->g->ev[e].scale, &c[e].value, &c[e].multiplexed);
	}
}

int pmc_window_sum(const struct pmc_window *w, int nreps_done, struct pmc_count *c)
{
	if (nreps_done > w->nreps)
		nreps_done = w->nreps;
	if (nreps_done < 0)
		nreps_done = 0;
	uint64_t sraw[PMC_MAX_EVENTS] = {0}, sen[PMC_MAX_EVENTS] = {0}, srun[PMC_MAX_EVENTS] = {0};
	for (int r = 0; r < nreps_done; r++)
		for (int e = 0; e < w->nev; e++) {
			size_t o = (size_t)r * (size_t)w->nev + (size_t)e;
			sraw[e] += w->raw[o];
			sen[e] += w->en[o];
			srun[e] += w->run[o];
		}
	counts_from(w, sraw, sen, srun, c);
	return nreps_done;
}

void pmc_window_rep(const struct pmc_window *w, int rep, struct pmc_count *c)
{
	size_t o = (size_t)rep * (size_t)w->nev;
	counts_from(w, w->raw + o, w->en + o, w->run + o, c);
}
