/* Loops of a user's, cross-built for the arm64 lab by spec/lab/lab.sh (with
 * their disassembly beside them: the guest has no objdump): one in each
 * convention of include/pmcsh/loop.h. */
#include <stdlib.h>
#include <pmcsh/loop.h>

/* STREAM's convention, bare: pmcsh finds its arrays by running it */
double triad_lab(double *restrict a, double *restrict b, double *restrict c, double s, size_t n)
{
	for (size_t j = 0; j < n; j++)
		a[j] = b[j] + s * c[j];
	return 0;
}

/* Its own data, described: one element a trip (built without vectorizing) */
struct own { double *x; size_t lo; };

static void *own_lab_init(size_t n, int thread, int nthreads)
{
	struct own *o = malloc(sizeof *o);
	size_t lo = n / nthreads * thread, hi = thread + 1 == nthreads ? n : n / nthreads * (thread + 1);
	o->lo = lo;
	o->x = calloc(hi - lo, sizeof(double));
	return o;
}

static void own_lab_fini(void *p)
{
	struct own *o = p;
	free(o->x);
	free(o);
}

static void own_lab(void *p, size_t begin, size_t end)
{
	struct own *o = p;
	double *x = o->x - o->lo;
	for (size_t j = begin; j < end; j++)
		x[j] = x[j] * 0.5 + 1.0;
}

PMCSH_LOOP(own_lab) = {.version = PMCSH_LOOP_VERSION, .name = "own_lab", .convention = PMCSH_OWN,
	.own = own_lab, .init = own_lab_init, .fini = own_lab_fini, .bytes = 16, .flops = 2,
	.elements_per_trip = 1};
