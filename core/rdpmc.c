/* User-space counter reads (see counter.h): the perf_event_mmap_page
 * seqlock protocol with its pure arithmetic, the rdpmc/rdtsc (x86) and
 * PMU-register (Arm) readers, and the mapping of a group's pages.  Pure C:
 * never prints, never exits. */
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

/* The kernel converts cycles to ns as cyc * mult >> shift.  cyc * mult
 * overflows 64 bits after minutes of TSC, so the high part (cyc >> shift)
 * and the low part (the remainder, < 2^shift) are multiplied separately. */
uint64_t pmc_mmap_time_delta(uint64_t cyc, uint16_t shift, uint32_t mult, uint64_t offset)
{
	if (shift == 0)
		return offset + cyc * mult;
	if (shift >= 64)
		return offset;
	uint64_t quot = cyc >> shift;
	uint64_t rem = cyc & ((1ULL << shift) - 1);
	return offset + quot * mult + ((rem * mult) >> shift);
}

/* Only the low bits the clock really has change since time_cycles. */
uint64_t pmc_mmap_cyc_short(uint64_t cyc, uint64_t time_cycles, uint64_t time_mask)
{
	return time_cycles + ((cyc - time_cycles) & time_mask);
}

/* rdpmc returns the counter's `width` bits; the kernel keeps the counter
 * negative (it starts at -period), so the bits are a signed value. */
int64_t pmc_sign_extend(uint64_t pmc, unsigned width)
{
	if (width == 0 || width >= 64)
		return (int64_t)pmc;
	unsigned sh = 64 - width;
	return (int64_t)(pmc << sh) >> sh;
}

int pmc_mmap_read_ops(const volatile struct perf_event_mmap_page *pc, const struct pmc_mmap_ops *ops,
		      struct pmc_mmap_value *out)
{
	uint32_t seq, idx, mult = 0;
	uint16_t shift = 0, width;
	uint64_t count, enabled, running, cyc = 0, toff = 0;
	int user_time;
	out->retries = 0;
	for (;;) {
		/* lock: a seqcount the kernel bumps around every update of the page */
		seq = pc->lock;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		enabled = pc->time_enabled;   /* as of the last update, ns */
		running = pc->time_running;
		idx = pc->index;              /* counter number + 1; 0: not on the PMU now */
		user_time = pc->cap_user_time;
		if (!pc->cap_user_rdpmc || !idx || !user_time)
			return -EAGAIN;
		count = (uint64_t)pc->offset; /* add to the counter's value */
		width = pc->pmc_width;
		uint64_t raw = ops->rdpmc(ops->ctx, idx - 1);
		cyc = ops->rdtsc(ops->ctx);
		if (pc->cap_user_time_short)
			cyc = pmc_mmap_cyc_short(cyc, pc->time_cycles, pc->time_mask);
		shift = pc->time_shift;
		mult = pc->time_mult;
		toff = pc->time_offset;
		count += (uint64_t)pmc_sign_extend(raw, width);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (pc->lock == seq)
			break;
		if (++out->retries > 1000)
			return -EAGAIN;  /* the kernel keeps rewriting it: give up, use read() */
	}
	/* the event runs (index != 0): both times advanced since the update */
	uint64_t delta = pmc_mmap_time_delta(cyc, shift, mult, toff);
	out->count = count;
	out->enabled = enabled + delta;
	out->running = running + delta;
	return 0;
}

#if defined(__x86_64__) || defined(__i386__)
static uint64_t x86_rdpmc(void *ctx, uint32_t counter)
{
	(void)ctx;
	uint32_t lo, hi;
	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
	return ((uint64_t)hi << 32) | lo;
}

static uint64_t x86_rdtsc(void *ctx)
{
	(void)ctx;
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}
#define HAVE_USER_READ 1
static const struct pmc_mmap_ops user_ops = {x86_rdpmc, x86_rdtsc, NULL};
#elif defined(__aarch64__)
/* Arm: the page's index - 1 is the counter; 31 is the cycle counter, the
 * others are read by selecting them (PMSELR_EL0, which EL0 may write once
 * the kernel granted user access) then reading PMXEVCNTR_EL0.  Time comes
 * from the generic timer, as the page's time fields expect. */
static uint64_t arm_rdpmc(void *ctx, uint32_t counter)
{
	(void)ctx;
	uint64_t v;
	if (counter == 31) {
		__asm__ volatile("mrs %0, pmccntr_el0" : "=r"(v));
		return v;
	}
	__asm__ volatile("msr pmselr_el0, %1\n\tisb\n\tmrs %0, pmxevcntr_el0" : "=r"(v) : "r"((uint64_t)counter));
	return v;
}

static uint64_t arm_cntvct(void *ctx)
{
	(void)ctx;
	uint64_t v;
	__asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v));
	return v;
}
#define HAVE_USER_READ 1
static const struct pmc_mmap_ops user_ops = {arm_rdpmc, arm_cntvct, NULL};
#endif

int pmc_rdpmc_read(const void *page, struct pmc_mmap_value *out)
{
#ifdef HAVE_USER_READ
	return pmc_mmap_read_ops(page, &user_ops, out);
#else
	(void)page;
	(void)out;
	return -EOPNOTSUPP;
#endif
}

int pmc_group_map(struct pmc_group *g, const struct pmc_target *t, char *why, size_t len)
{
	g->mapped = 0;
#ifndef HAVE_USER_READ
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
