/* The textbook STREAM loops, the yardstick of `pmcsh bench-stream`.
 * Written as stream.c (McCalpin) writes them: plain pointers (no restrict,
 * so the compiler adds its own overlap checks, as it must for pointers), a
 * signed index, one statement per loop, a plain running sum.  Built with the
 * same -O3 -march=native as the kernels; run on the same arrays, threads and
 * pinning by the same engine, so the only difference is the loop. */
#include <sys/types.h>
#include "stream.h"

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
