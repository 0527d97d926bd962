/* The STREAM loops pmcsh measures, and their descriptor table.
 * Built -O3 -march=native.  Each loop gets its arrays already offset to the
 * part it owns; `restrict` tells the compiler what STREAM's global arrays
 * told it: no aliasing, so no run-time overlap checks and no versioned
 * loops.  stream.disasm() shows what came out. */
#include <stdint.h>
#include <string.h>
#include "stream.h"

/* Keep each loop a loop: without this gcc turns `c[j] = a[j]` into a call
 * to memcpy (whose large-size path uses its own non-temporal stores), and
 * pmcsh would be measuring libc instead of the STREAM copy. */
#define KERNEL __attribute__((optimize("no-tree-loop-distribute-patterns")))

KERNEL double stream_copy(double *restrict a, double *restrict b, double *restrict c,
		   double s, size_t n)
{
	(void)b; (void)s;
	for (size_t j = 0; j < n; j++)
		c[j] = a[j];
	return 0;
}

KERNEL double stream_scale(double *restrict a, double *restrict b, double *restrict c,
		    double s, size_t n)
{
	(void)a;
	for (size_t j = 0; j < n; j++)
		b[j] = s * c[j];
	return 0;
}

KERNEL double stream_add(double *restrict a, double *restrict b, double *restrict c,
		  double s, size_t n)
{
	(void)s;
	for (size_t j = 0; j < n; j++)
		c[j] = a[j] + b[j];
	return 0;
}

KERNEL double stream_triad(double *restrict a, double *restrict b, double *restrict c,
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
KERNEL double stream_sum(double *restrict a, double *restrict b, double *restrict c,
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

KERNEL double stream_fill(double *restrict a, double *restrict b, double *restrict c,
		   double s, size_t n)
{
	(void)b; (void)c;
	for (size_t j = 0; j < n; j++)
		a[j] = s;
	return 0;
}

/* ---- non-temporal stores ----
 * The widest streaming store this file is compiled for.  The destination
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
#define HAVE_NT 1

/* Elements before `dst` reaches vector alignment (dst is 8-byte aligned). */
static inline size_t nt_head(const double *dst, size_t n)
{
	size_t mis = ((uintptr_t)dst & (NTW * 8 - 1)) / 8;
	size_t h = mis ? NTW - mis : 0;
	return h < n ? h : n;
}

KERNEL double stream_copy_nt(double *restrict a, double *restrict b, double *restrict c,
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

KERNEL double stream_scale_nt(double *restrict a, double *restrict b, double *restrict c,
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

KERNEL double stream_add_nt(double *restrict a, double *restrict b, double *restrict c,
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

KERNEL double stream_triad_nt(double *restrict a, double *restrict b, double *restrict c,
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

KERNEL double stream_fill_nt(double *restrict a, double *restrict b, double *restrict c,
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
#define HAVE_NT 0
#define NT_ISA NULL
#define NT(f) NULL
#endif

#define A STREAM_A
#define B STREAM_B
#define C STREAM_C

/* Default first (triad), as multichase's chases[].  bytes_wa adds one
 * write-allocate read per stored element for temporal stores. */
const struct stream_kernel stream_kernels[] = {
	{"triad", "a = b + s*c (STREAM triad)", "stream_triad",
	 24, 32, 2, 1, 2, B | C, A, 0, NULL, stream_triad, ref_stream_triad},
	{"copy", "c = a (STREAM copy)", "stream_copy",
	 16, 24, 1, 1, 0, A, C, 0, NULL, stream_copy, ref_stream_copy},
	{"scale", "b = s*c (STREAM scale)", "stream_scale",
	 16, 24, 1, 1, 1, C, B, 0, NULL, stream_scale, ref_stream_scale},
	{"add", "c = a + b (STREAM add)", "stream_add",
	 24, 32, 2, 1, 1, A | B, C, 0, NULL, stream_add, ref_stream_add},
	{"sum", "t = sum of a (read-only)", "stream_sum",
	 8, 8, 1, 0, 1, A, 0, 0, NULL, stream_sum, ref_stream_sum},
	{"fill", "a = s (write-only)", "stream_fill",
	 8, 16, 0, 1, 0, 0, A, 0, NULL, stream_fill, ref_stream_fill},
	{"copy_nt", "c = a, non-temporal stores", "stream_copy_nt",
	 16, 16, 1, 1, 0, A, C, 1, "copy", NT(stream_copy_nt), ref_stream_copy},
	{"scale_nt", "b = s*c, non-temporal stores", "stream_scale_nt",
	 16, 16, 1, 1, 1, C, B, 1, "scale", NT(stream_scale_nt), ref_stream_scale},
	{"add_nt", "c = a + b, non-temporal stores", "stream_add_nt",
	 24, 24, 2, 1, 1, A | B, C, 1, "add", NT(stream_add_nt), ref_stream_add},
	{"triad_nt", "a = b + s*c, non-temporal stores", "stream_triad_nt",
	 24, 24, 2, 1, 2, B | C, A, 1, "triad", NT(stream_triad_nt), ref_stream_triad},
	{"fill_nt", "a = s, non-temporal stores", "stream_fill_nt",
	 8, 8, 0, 1, 0, 0, A, 1, "fill", NT(stream_fill_nt), ref_stream_fill},
	{0}
};

const struct stream_kernel *stream_kernel_find(const char *name)
{
	for (const struct stream_kernel *k = stream_kernels; k->name; k++)
		if (strcmp(k->name, name) == 0)
			return k;
	return NULL;
}

const char *stream_nt_isa(void)
{
	return NT_ISA;
}

/* The compiler lets intrinsics through for the build machine's ISA; the
 * run-time check keeps a binary moved to an older CPU from faulting. */
int stream_kernel_available(const struct stream_kernel *k)
{
	if (!k->fn)
		return 0;
	if (!k->nt)
		return 1;
#if HAVE_NT
	__builtin_cpu_init();
#if defined(__AVX512F__)
	return __builtin_cpu_supports("avx512f");
#elif defined(__AVX__)
	return __builtin_cpu_supports("avx");
#else
	return __builtin_cpu_supports("sse2");
#endif
#else
	return 0;
#endif
}
