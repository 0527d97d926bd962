/* User-space counter reads: the perf_event_mmap_page seqlock protocol
 * (perf_event_open(2)), its pure arithmetic, and the instructions that read
 * a counter and the clock (rdpmc/rdtsc on x86, PMU registers on Arm).  Pure
 * C with no other pmcsh file beneath it: the counter layer (rdpmc.c,
 * group.c) and the marker library (marker/) share it.  The read is inline,
 * so a caller's constant readers are called directly. */
#ifndef PMCSH_UREAD_H
#define PMCSH_UREAD_H
#include <errno.h>
#include <stdint.h>
#include <linux/perf_event.h>

/* ns since the page's last update from cycles: the kernel's cyc -> ns
 * conversion (cyc * mult >> shift, split so it cannot overflow) + offset.
 * cyc * mult overflows 64 bits after minutes of TSC, so the high part
 * (cyc >> shift) and the low part (the remainder, < 2^shift) are
 * multiplied separately. */
static inline uint64_t pmc_mmap_time_delta(uint64_t cyc, uint16_t shift, uint32_t mult, uint64_t offset)
{
	if (shift == 0)
		return offset + cyc * mult;
	if (shift >= 64)
		return offset;
	uint64_t quot = cyc >> shift;
	uint64_t rem = cyc & ((1ULL << shift) - 1);
	return offset + quot * mult + ((rem * mult) >> shift);
}

/* cap_user_time_short: a counter narrower than 64 bits, widened from the
 * page's last time_cycles (only the low bits the clock has change). */
static inline uint64_t pmc_mmap_cyc_short(uint64_t cyc, uint64_t time_cycles, uint64_t time_mask)
{
	return time_cycles + ((cyc - time_cycles) & time_mask);
}

/* The low `width` bits of a counter read, sign-extended (width 1..64):
 * the kernel keeps the counter negative (it starts at -period). */
static inline int64_t pmc_sign_extend(uint64_t pmc, unsigned width)
{
	if (width == 0 || width >= 64)
		return (int64_t)pmc;
	unsigned sh = 64 - width;
	return (int64_t)(pmc << sh) >> sh;
}

/* One read of a page: count as read() would return it, time enabled and
 * running now (ns); retries = times the seqlock made the loop go again. */
struct pmc_mmap_value {
	uint64_t count, enabled, running;
	unsigned retries;
};
/* The instruction readers, replaceable for specs: rdpmc(ctx, index - 1)
 * and the timestamp counter. */
struct pmc_mmap_ops {
	uint64_t (*rdpmc)(void *ctx, uint32_t counter);
	uint64_t (*rdtsc)(void *ctx);
	void *ctx;
};

/* The seqlock read protocol on `pc` with `ops`.  Returns 0, or -EAGAIN
 * when the event is not on the PMU now (index 0, or no user rdpmc/time):
 * the caller reads with read() instead. */
static inline int pmc_mmap_read_ops(const volatile struct perf_event_mmap_page *pc, const struct pmc_mmap_ops *ops,
				    struct pmc_mmap_value *out)
{
	uint32_t seq, idx, mult = 0;
	uint16_t shift = 0, width;
	uint64_t count, enabled, running, cyc = 0, toff = 0;
	out->retries = 0;
	for (;;) {
		/* lock: a seqcount the kernel bumps around every update of the page */
		seq = pc->lock;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		enabled = pc->time_enabled;   /* as of the last update, ns */
		running = pc->time_running;
		idx = pc->index;              /* counter number + 1; 0: not on the PMU now */
		if (!pc->cap_user_rdpmc || !idx || !pc->cap_user_time)
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
#define PMC_HAVE_USER_READ 1
static inline uint64_t pmc_user_rdpmc(void *ctx, uint32_t counter)
{
	(void)ctx;
	uint32_t lo, hi;
	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t pmc_user_clock(void *ctx)
{
	(void)ctx;
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}
#elif defined(__aarch64__)
#define PMC_HAVE_USER_READ 1
/* Arm: the page's index - 1 is the counter; 31 is the cycle counter, the
 * others are read by selecting them (PMSELR_EL0, which EL0 may write once
 * the kernel granted user access) then reading PMXEVCNTR_EL0.  Time comes
 * from the generic timer, as the page's time fields expect. */
static inline uint64_t pmc_user_rdpmc(void *ctx, uint32_t counter)
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

static inline uint64_t pmc_user_clock(void *ctx)
{
	(void)ctx;
	uint64_t v;
	__asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v));
	return v;
}
#endif

#ifdef PMC_HAVE_USER_READ
/* The protocol, lean, for a reader that keeps its own clock (the marker
 * library): *c the count, *lost the page's time_enabled - time_running
 * (it changes only while the event is off the PMU, so it is read raw), sh
 * 64 - the counter's width (constant for an event's life, read once).  0
 * when the event is off the PMU now.  The kernel writes the page from this
 * thread's cpu, between two of its instructions: plain loads between
 * compiler barriers (so adjacent fields load in pairs) see what the lock
 * says they do. */
static inline __attribute__((always_inline)) int pmc_mmap_read_lean(const struct perf_event_mmap_page *pc,
								    unsigned sh, uint64_t *c, uint64_t *lost)
{
	uint32_t seq, idx;
	uint64_t off, gap, raw;
	do {
		__asm__ volatile("" ::: "memory");
		seq = pc->lock;
		idx = pc->index;
		if (__builtin_expect(!idx, 0))
			return 0;
		off = (uint64_t)pc->offset;
		gap = pc->time_enabled - pc->time_running;
		__asm__ volatile("" ::: "memory");
		raw = pmc_user_rdpmc(0, idx - 1);
		__asm__ volatile("" ::: "memory");
	} while (__builtin_expect(pc->lock != seq, 0));
	*c = off + (uint64_t)((int64_t)(raw << sh) >> sh);
	*lost = gap;
	return 1;
}
#endif

/* The same with the real instructions (-EOPNOTSUPP where pmcsh has none). */
static inline int pmc_rdpmc_read(const void *page, struct pmc_mmap_value *out)
{
#ifdef PMC_HAVE_USER_READ
	static const struct pmc_mmap_ops ops = {pmc_user_rdpmc, pmc_user_clock, 0};
	return pmc_mmap_read_ops(page, &ops, out);
#else
	(void)page;
	(void)out;
	return -EOPNOTSUPP;
#endif
}

/* The attribute bits that let user space read an event of the cpu PMU
 * opened on the calling thread alone: on Arm the PMU's format term
 * rdpmc = config1:1, granted while kernel.perf_user_access is 1 (read at each
 * call); nothing elsewhere (x86 grants it through the page). */
uint64_t pmc_user_read_config1(void);

#endif
