/* The STREAM loops pmcsh measures, built once per instruction-set variant
 * (the Makefile compiles this file with -DSTREAM_VARIANT=avx512 and
 * -march=x86-64-v4, avx2 and x86-64-v3, sse2 and the baseline; generic
 * elsewhere); kernels/stream_kernels.c chooses one at run time.  Each loop
 * gets its arrays already offset to the part it owns; `restrict` tells the
 * compiler what STREAM's global arrays told it: no aliasing, so no run-time
 * overlap checks and no versioned loops.  stream.disasm() shows what came
 * out. */
#include <stdint.h>
#include "stream.h"

#ifndef STREAM_VARIANT
#error "built once per variant: -DSTREAM_VARIANT=name (see the Makefile)"
#endif
#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define V(f) CAT(f, STREAM_VARIANT)	/* stream_copy -> stream_copy_avx2 */
#define STR_(x) #x
#define STR(x) STR_(x)

/* Keep each loop a loop: without this gcc turns `c[j] = a[j]` into a call
 * to memcpy (whose large-size path uses its own non-temporal stores), and
 * pmcsh would be measuring libc instead of the STREAM copy. */
#if defined(__clang__)	/* clang's name for it (make asan builds with clang) */
#define KERNEL __attribute__((no_builtin))
#else
#define KERNEL __attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif

KERNEL double V(stream_copy)(double *restrict a, double *restrict b, double *restrict c,
		   double s, size_t n)
{
	(void)b; (void)s;
	for (size_t j = 0; j < n; j++)
		c[j] = a[j];
	return 0;
}

KERNEL double V(stream_scale)(double *restrict a, double *restrict b, double *restrict c,
		    double s, size_t n)
{
	(void)a;
	for (size_t j = 0; j < n; j++)
		b[j] = s * c[j];
	return 0;
}

KERNEL double V(stream_add)(double *restrict a, double *restrict b, double *restrict c,
		  double s, size_t n)
{
	(void)s;
	for (size_t j = 0; j < n; j++)
		c[j] = a[j] + b[j];
	return 0;
}

KERNEL double V(stream_triad)(double *restrict a, double *restrict b, double *restrict c,
		    double s, size_t n)
{
	for (size_t j = 0; j < n; j++)
		a[j] = b[j] + s * c[j];
	return 0;
}

/* A plain `t += a[j]` is bound by the latency of one add chain (a few
 * cycles per element), far below memory bandwidth.  Sixteen independent
 * partial sums let the compiler keep several vector accumulators in flight;
 * the order of additions changes, so validation allows a relative error. */
#define SUM_LANES 16
KERNEL double V(stream_sum)(double *restrict a, double *restrict b, double *restrict c,
		  double s, size_t n)
{
	(void)b; (void)c; (void)s;
	double acc[SUM_LANES] = {0};
	size_t j = 0;
	for (; j + SUM_LANES <= n; j += SUM_LANES)
		for (int k = 0; k < SUM_LANES; k++)
			acc[k] += a[j + k];
	double t = 0;
	for (; j < n; j++)
		t += a[j];
	for (int w = SUM_LANES / 2; w > 0; w /= 2)
		for (int k = 0; k < w; k++)
			acc[k] += acc[k + w];
	return acc[0] + t;
}

KERNEL double V(stream_fill)(double *restrict a, double *restrict b, double *restrict c,
		   double s, size_t n)
{
	(void)b; (void)c;
	for (size_t j = 0; j < n; j++)
		a[j] = s;
	return 0;
}

/* ---- non-temporal stores ----
 * The widest streaming store this variant is compiled for.  The destination
 * is aligned to the vector by a scalar head loop; an sfence at the end
 * orders the weakly-ordered stores before the part is reported done. */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#if defined(__AVX512F__)
#define NT_ISA "avx512f"
#define NTW 8
typedef __m512d vec_t;
#define VLOAD(p)	_mm512_loadu_pd(p)
#define VSTREAM(p, v)	_mm512_stream_pd(p, v)
#define VSET1(x)	_mm512_set1_pd(x)
#define VADD(x, y)	_mm512_add_pd(x, y)
#define VMUL(x, y)	_mm512_mul_pd(x, y)
#define VFMA(x, y, z)	_mm512_fmadd_pd(x, y, z)
#elif defined(__AVX__)
#define NT_ISA "avx"
#define NTW 4
typedef __m256d vec_t;
#define VLOAD(p)	_mm256_loadu_pd(p)
#define VSTREAM(p, v)	_mm256_stream_pd(p, v)
#define VSET1(x)	_mm256_set1_pd(x)
#define VADD(x, y)	_mm256_add_pd(x, y)
#define VMUL(x, y)	_mm256_mul_pd(x, y)
#ifdef __FMA__
#define VFMA(x, y, z)	_mm256_fmadd_pd(x, y, z)
#endif
#else
#define NT_ISA "sse2"
#define NTW 2
typedef __m128d vec_t;
#define VLOAD(p)	_mm_loadu_pd(p)
#define VSTREAM(p, v)	_mm_stream_pd(p, v)
#define VSET1(x)	_mm_set1_pd(x)
#define VADD(x, y)	_mm_add_pd(x, y)
#define VMUL(x, y)	_mm_mul_pd(x, y)
#endif
#ifndef VFMA
#define VFMA(x, y, z)	VADD(VMUL(x, y), z)
#endif

/* Elements before `dst` reaches vector alignment (dst is 8-byte aligned). */
static inline size_t nt_head(const double *dst, size_t n)
{
	size_t mis = ((uintptr_t)dst & (NTW * 8 - 1)) / 8;
	size_t h = mis ? NTW - mis : 0;
	return h < n ? h : n;
}

KERNEL double V(stream_copy_nt)(double *restrict a, double *restrict b, double *restrict c,
		      double s, size_t n)
{
	(void)b; (void)s;
	size_t j = 0, h = nt_head(c, n);
	for (; j < h; j++)
		c[j] = a[j];
	for (; j + NTW <= n; j += NTW)
		VSTREAM(c + j, VLOAD(a + j));
	for (; j < n; j++)
		c[j] = a[j];
	_mm_sfence();
	return 0;
}

KERNEL double V(stream_scale_nt)(double *restrict a, double *restrict b, double *restrict c,
		       double s, size_t n)
{
	(void)a;
	size_t j = 0, h = nt_head(b, n);
	vec_t vs = VSET1(s);
	for (; j < h; j++)
		b[j] = s * c[j];
	for (; j + NTW <= n; j += NTW)
		VSTREAM(b + j, VMUL(vs, VLOAD(c + j)));
	for (; j < n; j++)
		b[j] = s * c[j];
	_mm_sfence();
	return 0;
}

KERNEL double V(stream_add_nt)(double *restrict a, double *restrict b, double *restrict c,
		     double s, size_t n)
{
	(void)s;
	size_t j = 0, h = nt_head(c, n);
	for (; j < h; j++)
		c[j] = a[j] + b[j];
	for (; j + NTW <= n; j += NTW)
		VSTREAM(c + j, VADD(VLOAD(a + j), VLOAD(b + j)));
	for (; j < n; j++)
		c[j] = a[j] + b[j];
	_mm_sfence();
	return 0;
}

KERNEL double V(stream_triad_nt)(double *restrict a, double *restrict b, double *restrict c,
		       double s, size_t n)
{
	size_t j = 0, h = nt_head(a, n);
	vec_t vs = VSET1(s);
	for (; j < h; j++)
		a[j] = b[j] + s * c[j];
	for (; j + NTW <= n; j += NTW)
		VSTREAM(a + j, VFMA(vs, VLOAD(c + j), VLOAD(b + j)));
	for (; j < n; j++)
		a[j] = b[j] + s * c[j];
	_mm_sfence();
	return 0;
}

KERNEL double V(stream_fill_nt)(double *restrict a, double *restrict b, double *restrict c,
		      double s, size_t n)
{
	(void)b; (void)c;
	size_t j = 0, h = nt_head(a, n);
	vec_t vs = VSET1(s);
	for (; j < h; j++)
		a[j] = s;
	for (; j + NTW <= n; j += NTW)
		VSTREAM(a + j, vs);
	for (; j < n; j++)
		a[j] = s;
	_mm_sfence();
	return 0;
}
#define NT(f) f
#else
#define NT_ISA NULL
#define NT(f) NULL
#endif

/* ---- the descriptor table ----
 * One entry per kernel, default first (as multichase's chases[]); the
 * table is built into every variant, each entry holding that variant's
 * loop.  Adding a kernel is its loop above and its entry here (and, for
 * bench-stream's yardstick, its textbook loop in ref_stream.c). */
#define A STREAM_A
#define B STREAM_B
#define C STREAM_C
/* The loop f of this variant and its name; NT_LOOP, a loop with streaming
 * stores: NULL where the variant has none. */
#define LOOP(f) .fn = V(f), .symbol = #f
#define NT_LOOP(f) .fn = NT(V(f)), .symbol = #f, .nt = 1
#define REF(f) .ref = ref_##f, .ref_symbol = "ref_" #f

static const struct stream_kernel kernels[] = {
	{.name = "triad", .description = "a = b + s*c (STREAM triad)",
	 .reads = B | C, .writes = A, .flops = 2, LOOP(stream_triad), REF(stream_triad)},
	{.name = "copy", .description = "c = a (STREAM copy)",
	 .reads = A, .writes = C, LOOP(stream_copy), REF(stream_copy)},
	{.name = "scale", .description = "b = s*c (STREAM scale)",
	 .reads = C, .writes = B, .flops = 1, LOOP(stream_scale), REF(stream_scale)},
	{.name = "add", .description = "c = a + b (STREAM add)",
	 .reads = A | B, .writes = C, .flops = 1, LOOP(stream_add), REF(stream_add)},
	{.name = "sum", .description = "t = sum of a (read-only)",
	 .reads = A, .flops = 1, .reduction = 1, LOOP(stream_sum), REF(stream_sum)},
	{.name = "fill", .description = "a = s (write-only)",
	 .writes = A, LOOP(stream_fill), REF(stream_fill)},
	{.name = "copy_nt", .description = "c = a, non-temporal stores", .plain = "copy",
	 .reads = A, .writes = C, NT_LOOP(stream_copy_nt), REF(stream_copy)},
	{.name = "scale_nt", .description = "b = s*c, non-temporal stores", .plain = "scale",
	 .reads = C, .writes = B, .flops = 1, NT_LOOP(stream_scale_nt), REF(stream_scale)},
	{.name = "add_nt", .description = "c = a + b, non-temporal stores", .plain = "add",
	 .reads = A | B, .writes = C, .flops = 1, NT_LOOP(stream_add_nt), REF(stream_add)},
	{.name = "triad_nt", .description = "a = b + s*c, non-temporal stores", .plain = "triad",
	 .reads = B | C, .writes = A, .flops = 2, NT_LOOP(stream_triad_nt), REF(stream_triad)},
	{.name = "fill_nt", .description = "a = s, non-temporal stores", .plain = "fill",
	 .writes = A, NT_LOOP(stream_fill_nt), REF(stream_fill)},
	{0}
};

const struct stream_variant V(stream_variant) = {
	.name = STR(STREAM_VARIANT),
	.nt_isa = NT_ISA,
	.kernels = kernels,
};
