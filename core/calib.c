/* Calibration around a group (see calib.h).  Pure C: never prints, never
 * exits. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "calib.h"
#include "../kernels/clock.h"
#include "../kernels/probe.h"
#include "../kernels/interrupt.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

int pmc_probe(struct pmc_group *g, int kind, uint64_t arg, const char *path, double *wall_ns, double *cpu_ns,
	      char *msg, size_t len)
{
	struct probe_args a = {.kind = kind, .arg = arg, .bytes = (size_t)arg, .fd = -1};
	if ((kind == PROBE_TOUCH || kind == PROBE_READ) && a.bytes) {
		a.buf = mmap(NULL, a.bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (a.buf == MAP_FAILED) {
			int e = errno;
			snprintf(msg, len, "mmap failed for the probe buffer");
			return -e;
		}
		madvise(a.buf, a.bytes, MADV_NOHUGEPAGE);  /* the prediction assumes 4 KiB pages */
	}
	if (kind == PROBE_READ && (a.fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		int e = errno;
		if (a.buf)
			munmap(a.buf, a.bytes);
		snprintf(msg, len, "cannot open %s: %s", path, strerror(e));
		return -e;
	}
	a.page = (size_t)sysconf(_SC_PAGESIZE);
	/* An empty pass of the window's code first: its first run faults its
	 * own text pages in (1025 faults for 1024 pages touched, one run in
	 * two), and the baseline below leaves these counts out. */
	struct probe_args warm = {.kind = kind, .fd = -1, .page = a.page};
	probe_work(&warm);
	pmc_group_enable(g);
	pmc_group_disable(g);
	struct timespec c0, c1;
	int r = pmc_group_snapshot(g);
	if (r == 0)
		pmc_group_rebase(g);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	double t0 = mono_ns();
	pmc_group_enable(g);
	/* ---- window ---- */
	probe_work(&a);
	pmc_group_disable(g);
	/* ---- end of window ---- */
	*wall_ns = mono_ns() - t0;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	*cpu_ns = (double)(c1.tv_sec - c0.tv_sec) * 1e9 + (double)(c1.tv_nsec - c0.tv_nsec);
	if (a.fd >= 0)
		close(a.fd);
	if (a.buf)
		munmap(a.buf, a.bytes);
	if (r == 0 && pmcsh_stop_requested())
		r = -EINTR;  /* the work stopped early: no reading of it */
	if (r)
		snprintf(msg, len, "%s", r == -EINTR ? "interrupted" : strerror(-r));
	return r;
}

int pmc_windows_ns(struct pmc_group *g, long n, double *ns)
{
	double t0 = mono_ns();
	for (long i = 0; i < n; i++) {
		if (pmcsh_stop_requested())
			return -EINTR;
		pmc_group_start(g);
		pmc_group_disable(g);
		pmc_group_snapshot(g);
	}
	*ns = (mono_ns() - t0) / (double)n;
	return 0;
}

/* The empty-window loops below look at the interrupt flag each time round:
 * one load and branch beside two or three system calls. */
int pmc_overhead(struct pmc_group *g, long n, struct pmc_overhead *o)
{
	memset(o, 0, sizeof *o);
	/* 1: full empty window via the read() path: enable, disable, read */
	double t0 = mono_ns();
	for (long i = 0; i < n && !pmcsh_stop_requested(); i++) {
		pmc_group_enable(g);
		pmc_group_disable(g);
		pmc_group_snapshot(g);
	}
	double t1 = mono_ns();
	for (long i = 0; i < n && !pmcsh_stop_requested(); i++) {
		pmc_group_enable(g);
		pmc_group_disable(g);
	}
	double t2 = mono_ns();
	for (long i = 0; i < n && !pmcsh_stop_requested(); i++)
		pmc_group_snapshot(g);
	double t3 = mono_ns();
	o->window_ns = (t1 - t0) / (double)n;
	o->enable_disable_ns = (t2 - t1) / (double)n;
	o->read_ns = (t3 - t2) / (double)n;
	/* rdpmc path: the same snapshot while counting, through the pages */
	o->mapped = g->mapped;
	if (g->mapped) {
		uint64_t fast0 = g->fast_reads, slow0 = g->slow_reads;
		pmc_group_enable(g);
		double r0 = mono_ns();
		for (long i = 0; i < n && !pmcsh_stop_requested(); i++)
			pmc_group_snapshot(g);
		double r1 = mono_ns();
		pmc_group_disable(g);
		o->rdpmc_read_ns = (r1 - r0) / (double)n;
		o->fast_reads = g->fast_reads - fast0;
		o->fallbacks = g->slow_reads - slow0;
	}
	/* what the counters themselves see of one empty window */
	int r = pmc_group_snapshot(g);
	if (r == 0) {
		pmc_group_rebase(g);
		for (long i = 0; i < n && !pmcsh_stop_requested(); i++) {
			pmc_group_enable(g);
			pmc_group_disable(g);
		}
		int bad;
		pmc_group_snapshot(g);
		if (pmc_group_delta(g, o->c, &bad) == 0) {
			for (int i = 0; i < g->nev; i++) {
				o->c[i].value /= (double)n;
				o->c[i].multiplexed = 0;
			}
			o->counted = 1;
		}
	}
	return pmcsh_stop_requested() ? -EINTR : 0;
}
