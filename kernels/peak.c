/* The peak kernels, built once per variant as kernels/stream.c is
 * (-DPEAK_VARIANT=avx512 with -march=x86-64-v4, …).  Each keeps ACC
 * independent accumulators of one register width and updates each once a
 * trip with acc = acc + acc * m: a fused multiply-add where the variant
 * has FMA (gcc's default -ffp-contract=fast fuses it; clang is told to),
 * a multiply and an add where it has not; in place, as both x86's
 * vfmadd231 and Arm's fmla accumulate.  m = -1e-9 shrinks acc by e^-1 in
 * 1e9 trips: the engine takes at most 2^32, far from denormals.  The empty asm on each accumulator pins
 * it to a register of its own type, so that no vectoriser merges the scalar
 * chains into one wider register. */
#include <string.h>
#include "peak.h"

#ifndef PEAK_VARIANT
#error "built once per variant: -DPEAK_VARIANT=name (see the Makefile)"
#endif
#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define V(f) CAT(f, PEAK_VARIANT)
#define STR_(x) #x
#define STR(x) STR_(x)

#if defined(__clang__)
#pragma clang fp contract(fast)
#endif

#if defined(__x86_64__)
#define REG "+v"	/* any xmm/ymm/zmm the encoding reaches */
#elif defined(__aarch64__)
#define REG "+w"
#else
#define REG "+r"
#endif

/* Latency x ports: 4 cycles x 2 pipes on the cores known, 8 chains; 12
 * leave room, and fit 16 registers with m and a beside them. */
#if defined(__AVX512F__) || defined(__aarch64__)
#define ACC 16
#else
#define ACC 12
#endif

#if defined(__FMA__) || defined(__aarch64__)
#define HAS_FMA 1
#else
#define HAS_FMA 0
#endif

#define PIN(x) __asm__ volatile("" : REG(x))

/* One kernel: type T (a scalar or a vector of it), its zero-lane
 * element type E, its name suffix. */
/* The accumulators are named variables, not an array, so that each lives
 * in a register from the start (an array is scalarised only after the
 * loop is unrolled, too late). */
#if ACC == 16
#define EACH(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)
#else
#define EACH(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#endif
#define DECL(i) vt acc##i = zero + (et)(1 + i / 64.0);
#define STEP(i) acc##i = acc##i + acc##i * m; PIN(acc##i);
#define SUM(i) t += acc##i;

#define PEAK_KERNEL(NAME, T, E)							\
	__attribute__((noinline)) double V(NAME)(uint64_t iters)		\
	{									\
		typedef T vt;							\
		typedef E et;							\
		const vt zero = (vt){0};					\
		vt m = zero + (et)-1e-9;					\
		EACH(DECL)							\
		for (uint64_t k = 0; k < iters; k++) {				\
			EACH(STEP)						\
		}								\
		vt t = zero;							\
		EACH(SUM)							\
		E lane[sizeof(T) / sizeof(E)];					\
		memcpy(lane, &t, sizeof lane);					\
		double s = 0;							\
		for (unsigned l = 0; l < sizeof lane / sizeof lane[0]; l++)	\
			s += (double)lane[l];					\
		return s;							\
	}

typedef double f64x2 __attribute__((vector_size(16)));
typedef float f32x4 __attribute__((vector_size(16)));
PEAK_KERNEL(peak_scalar_double, double, double)
PEAK_KERNEL(peak_scalar_single, float, float)
PEAK_KERNEL(peak_128_double, f64x2, double)
PEAK_KERNEL(peak_128_single, f32x4, float)
#if defined(__AVX__)
typedef double f64x4 __attribute__((vector_size(32)));
typedef float f32x8 __attribute__((vector_size(32)));
PEAK_KERNEL(peak_256_double, f64x4, double)
PEAK_KERNEL(peak_256_single, f32x8, float)
#endif
#if defined(__AVX512F__)
typedef double f64x8 __attribute__((vector_size(64)));
typedef float f32x16 __attribute__((vector_size(64)));
PEAK_KERNEL(peak_512_double, f64x8, double)
PEAK_KERNEL(peak_512_single, f32x16, float)
#endif

#if defined(__x86_64__)
#define ISA128 "sse2"
#else
#define ISA128 "neon"
#endif

#define ENTRY(FN, ISA, BITS, SINGLE, E, PREC)					\
	{ISA "-" PREC, ISA, BITS, SINGLE,						\
	 BITS / (8 * (int)sizeof(E)) ? BITS / (8 * (int)sizeof(E)) : 1, HAS_FMA, ACC,	\
	 ACC * (BITS / (8 * (int)sizeof(E)) ? BITS / (8 * (int)sizeof(E)) : 1) * 2,	\
	 STR(V(FN)), V(FN)}

static const struct peak_kernel kernels[] = {
	ENTRY(peak_scalar_double, "scalar", 64, 0, double, "double"),
	ENTRY(peak_scalar_single, "scalar", 32, 1, float, "single"),
	ENTRY(peak_128_double, ISA128, 128, 0, double, "double"),
	ENTRY(peak_128_single, ISA128, 128, 1, float, "single"),
#if defined(__AVX__)
	ENTRY(peak_256_double, "avx", 256, 0, double, "double"),
	ENTRY(peak_256_single, "avx", 256, 1, float, "single"),
#endif
#if defined(__AVX512F__)
	ENTRY(peak_512_double, "avx512", 512, 0, double, "double"),
	ENTRY(peak_512_single, "avx512", 512, 1, float, "single"),
#endif
	{0},
};

const struct peak_variant V(peak_variant) = {STR(PEAK_VARIANT), kernels};
