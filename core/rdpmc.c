/* The mapping of a group's perf pages for user-space reads (the read
 * itself is uread.h's).  Pure C: never prints, never exits. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "counter.h"
#include "sysfs.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int pmc_group_map(struct pmc_group *g, const struct pmc_target *t, char *why, size_t len)
{
	g->mapped = 0;
#ifndef PMC_HAVE_USER_READ
	(void)t;
	snprintf(why, len, "unavailable: no user-space counter read on this architecture; this build reads with read()");
	return 0;
#else
	if (!pmc_have_cpu_pmu()) {
		snprintf(why, len, "unavailable: no hardware PMU is exposed on this machine (%s has no cpu PMU), "
			 "and rdpmc reads hardware counters only", SYSFS_PMUS);
		return 0;
	}
	if (t->pid != 0 || t->ncpus > 0 || t->inherit) {
		snprintf(why, len, "unavailable: rdpmc reads the calling thread's own counters only "
			 "(this group counts %s)", t->ncpus > 0 ? "cpus" : t->inherit ? "children too" : "another task");
		return 0;
	}
	long psz = sysconf(_SC_PAGESIZE);
	int any = 0;
	for (int s = 0; s < g->nsub; s++) {
		struct pmc_sub *sb = &g->sub[s];
		if (!g->ev[sb->ev[0]].needs_cpu_pmu)
			continue;  /* software, msr, uncore: read() */
		for (int k = 0; k < sb->ninst; k++)
			for (int j = 0; j < sb->n; j++) {
				void *p = mmap(NULL, (size_t)psz, PROT_READ, MAP_SHARED, sb->inst[k].fd[j], 0);
				if (p == MAP_FAILED) {
					snprintf(why, len, "unavailable: mmap of the perf page failed (%s)", strerror(errno));
					goto undo;
				}
				sb->inst[k].page[j] = p;
				const struct perf_event_mmap_page *pc = p;
				if (!pc->cap_user_rdpmc || !pc->cap_user_time) {
					char mode[16] = "?";
#if defined(__aarch64__)
					pmc_read_text("/proc/sys/kernel/perf_user_access", mode, sizeof mode);
					snprintf(why, len, "unavailable: the kernel does not allow user-space counter reads for %s "
						 "(cap_user_rdpmc=%d, cap_user_time=%d, kernel.perf_user_access=%s; 1 allows it)",
						 g->ev[sb->ev[j]].name, (int)pc->cap_user_rdpmc, (int)pc->cap_user_time, mode);
					goto undo;
#endif
					pmc_read_text(SYSFS_PMUS "/cpu/rdpmc", mode, sizeof mode);
					snprintf(why, len, "unavailable: the kernel does not allow user-space rdpmc for %s "
						 "(cap_user_rdpmc=%d, cap_user_time=%d, %s/cpu/rdpmc=%s; 2 allows it "
						 "everywhere)", g->ev[sb->ev[j]].name, (int)pc->cap_user_rdpmc,
						 (int)pc->cap_user_time, SYSFS_PMUS, mode);
					goto undo;
				}
				any = 1;
			}
	}
	if (!any) {
		snprintf(why, len, "unavailable: no hardware event in this group (rdpmc reads hardware counters only)");
		return 0;
	}
	g->mapped = 1;
	return 1;
undo:
	for (int s = 0; s < g->nsub; s++)
		for (int k = 0; k < g->sub[s].ninst; k++)
			for (int j = 0; j < g->sub[s].n; j++)
				if (g->sub[s].inst[k].page[j]) {
					munmap(g->sub[s].inst[k].page[j], (size_t)psz);
					g->sub[s].inst[k].page[j] = NULL;
				}
	return 0;
#endif
}
