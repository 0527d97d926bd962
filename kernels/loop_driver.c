/* The plain C driver bench-stream --loop measures pmcsh against: what a
 * hand-written STREAM program does with a STREAM-convention loop of the
 * user's, and nothing more.  Three arrays of n doubles (2 MiB aligned, 4 KiB
 * pages as pmcsh's default), a = 1, b = 2, c = 0 first-touched, the thread
 * pinned to cpu, one warm-up call, then reps timed calls, each between two
 * CLOCK_MONOTONIC reads; prints each call's seconds, one a line.  The loop
 * is SYMBOL's descriptor's function where it has one (pmcsh/loop.h: its
 * function may be static), else SYMBOL itself, as pmcsh finds it.
 *
 *     loop_driver OBJECT SYMBOL N REPS CPU
 *
 * Built by bench-stream when it is needed (not linked into pmcsh). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <pmcsh/loop.h>

typedef pmcsh_stream_fn loop_fn;

static double *array(size_t n)
{
	size_t align = 2ul << 20, bytes = n * sizeof(double);
	char *p = mmap(NULL, bytes + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	char *a = (char *)(((unsigned long)p + align - 1) & ~(align - 1));
	madvise(a, bytes, MADV_NOHUGEPAGE);
	return (double *)a;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: %s OBJECT SYMBOL N REPS CPU\n", argv[0]);
		return 2;
	}
	size_t n = strtoull(argv[3], NULL, 10);
	int reps = atoi(argv[4]), cpu = atoi(argv[5]);
	void *dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	char dname[256];
	snprintf(dname, sizeof dname, "%s_pmcsh_loop", argv[2]);
	const struct pmcsh_loop *d = dlsym(dl, dname);
	loop_fn *f = d && d->convention == PMCSH_STREAM ? d->stream : (loop_fn *)dlsym(dl, argv[2]);
	if (!f) {
		fprintf(stderr, "%s exports no loop %s of STREAM's convention\n", argv[1], argv[2]);
		return 1;
	}
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof set, &set);
	double *a = array(n), *b = array(n), *c = array(n);
	if (!a || !b || !c) {
		perror("mmap");
		return 1;
	}
	for (size_t j = 0; j < n; j++)
		a[j] = 1.0, b[j] = 2.0, c[j] = 0.0;
	double sink = f(a, b, c, 3.0, n);
	for (int r = 0; r < reps; r++) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		sink += f(a, b, c, 3.0, n);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("%.9f\n", (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9);
	}
	return sink == 12345.678 ? 3 : 0;	/* keeps a reduction's sum alive */
}
