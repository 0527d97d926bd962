/* The textbook STREAM loops, the yardstick of `pmcsh bench-stream`.
 * Written as stream.c (McCalpin) writes them: plain pointers (no restrict,
 * so the compiler adds its own overlap checks, as it must for pointers), a
 * signed index, one statement per loop, a plain running sum.  Built with the
 * -O3 -march=native, the yardstick each kernel variant must match; run on
 * the same arrays, threads and pinning by the same engine, so the only
 * difference is the loop.  Only called after stream_ref_runnable(). */
#include <sys/types.h>
#include "stream.h"

/* What -march=native enabled here, for stream_ref_runnable; space-padded
 * tokens.  Data only: reading it runs no instruction of this file. */
const char ref_stream_isa[] = " "
#ifdef __AVX512F__
	"avx512f "
#endif
#ifdef __AVX512VL__
	"avx512vl "
#endif
#ifdef __AVX512BW__
	"avx512bw "
#endif
#ifdef __AVX512DQ__
	"avx512dq "
#endif
#ifdef __AVX2__
	"avx2 "
#endif
#ifdef __FMA__
	"fma "
#endif
#ifdef __AVX__
	"avx "
#endif
#ifdef __BMI2__
	"bmi2 "
#endif
	;

double ref_stream_copy(double *a, double *b, double *c, double s, size_t n)
{
	(void)b; (void)s;
	for (ssize_t j = 0; j < (ssize_t)n; j++)
		c[j] = a[j];
	return 0;
}

double ref_stream_scale(double *a, double *b, double *c, double s, size_t n)
{
	(void)a;
	for (ssize_t j = 0; j < (ssize_t)n; j++)
		b[j] = s * c[j];
	return 0;
}

double ref_stream_add(double *a, double *b, double *c, double s, size_t n)
{
	(void)s;
	for (ssize_t j = 0; j < (ssize_t)n; j++)
		c[j] = a[j] + b[j];
	return 0;
}

double ref_stream_triad(double *a, double *b, double *c, double s, size_t n)
{
	for (ssize_t j = 0; j < (ssize_t)n; j++)
		a[j] = b[j] + s * c[j];
	return 0;
}

double ref_stream_sum(double *a, double *b, double *c, double s, size_t n)
{
	(void)b; (void)c; (void)s;
	double t = 0;
	for (ssize_t j = 0; j < (ssize_t)n; j++)
		t += a[j];
	return t;
}

double ref_stream_fill(double *a, double *b, double *c, double s, size_t n)
{
	(void)b; (void)c;
	for (ssize_t j = 0; j < (ssize_t)n; j++)
		a[j] = s;
	return 0;
}
