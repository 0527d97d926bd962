/* Peak floating-point throughput: per instruction-set variant, kernels of
 * independent multiply-adds (FMA where the variant has it) on registers of
 * one width, no memory traffic; and a dependent chain of integer adds, one
 * cycle each, that gives the core clock in time.  Pure C, no printing.
 * The Lua binding is core/lpeak.c; kernels/peak.c is built once per
 * variant, as kernels/stream.c is. */
#ifndef PMCSH_PEAK_H
#define PMCSH_PEAK_H
#include <stddef.h>
#include <stdint.h>

/* iters trips of the kernel's body; returns a sum of its accumulators, so
 * that no compiler drops the work. */
typedef double (*peak_fn)(uint64_t iters);

/* A kernel describes itself: its register width, precision and how many
 * floating-point operations one trip of its body does. */
struct peak_kernel {
	const char *name;	/* "avx-double", "scalar-single", … */
	const char *isa;	/* the instruction set its width needs: scalar, sse2, avx, avx512, neon */
	int bits;		/* register width: 64 (scalar), 128, 256, 512 */
	int single;		/* 1: float, 0: double */
	int lanes;		/* elements per register */
	int fma;		/* 1: fused multiply-add; 0: a multiply and an add */
	int accumulators;	/* independent chains */
	int flops_per_trip;	/* accumulators x lanes x 2 */
	const char *symbol;	/* its function, for stream.disasm */
	peak_fn fn;
};

struct peak_variant {
	const char *name;	/* the stream variant it is built with */
	const struct peak_kernel *kernels;	/* ended by a zero entry */
};

/* The best variant this CPU runs (the stream variants' choice). */
const struct peak_variant *peak_variant_best(void);

/* Runs k for iters trips on each of `threads` threads at once (cpus[i] the
 * cpu of thread i, or NULL: unpinned), started together.  *seconds is the
 * span from the first start to the last end; *flops what they did in all.
 * Returns 0 or -errno. */
int peak_run(const struct peak_kernel *k, uint64_t iters, int threads, const int *cpus,
	     double *seconds, double *flops);

/* The core clock of the calling thread: adds integer adds each of which
 * waits for the last (one cycle each on every core pmcsh knows), timed;
 * returns the seconds they took, so adds / seconds is the clock. */
double peak_chain_seconds(uint64_t adds);

#endif
