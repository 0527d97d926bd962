/* pmcsh/loop.h: a loop of your own, measured in pmcsh's window as its
 * STREAM loops are (pmcsh survey --loop FILE[:SYMBOL], stream.loop(FILE,
 * SYMBOL) in Lua; SYMBOL defaults to "loop").  FILE is a shared object, or
 * a .c/.s file pmcsh builds with $CC -O3 -march=native -shared -fPIC and
 * -I for this header's folder (--cflags adds flags to these).  Nothing here
 * is linked: a loop needs no pmcsh library, only these declarations.
 *
 * Two calling conventions:
 *
 *   STREAM's: element-wise over pmcsh's arrays of n doubles, a = 1, b = 2,
 *   c = 0 at first, s = 3.0; each thread gets its part, the arrays offset to
 *   its first element.  Threads, pinning, page policies, --fresh and
 *   validation work as for the built-ins: what one call leaves in one
 *   element is what it leaves in every element (a stencil over interior
 *   points is not: give it a reference, or put it on its own data).
 *
 *       double f(double *restrict a, double *restrict b,
 *                double *restrict c, double s, size_t n);
 *
 *   The loop's own data: elements [begin, end) of the survey's n, with the
 *   state made for this thread (on the thread, pinned, so its first touch
 *   places the pages); the init and f_fini run outside every window, and
 *   nothing validates the loop.  f_init_part is told the thread's part,
 *   [begin, end), exactly the elements f is given on that thread, so it can
 *   allocate and first-touch only those; f_init (version 1) is told n alone.
 *
 *       void f(void *state, size_t begin, size_t end);
 *       void *f_init_part(size_t begin, size_t end, size_t n,
 *                         int thread, int nthreads);     (optional)
 *       void *f_init(size_t n, int thread, int nthreads); (optional)
 *       void f_fini(void *state);                         (optional)
 *
 * A bare symbol is STREAM's convention unless the object exports f_init_part
 * or f_init (f_init_part taken when both are).  A loop may describe itself:
 * export `PMCSH_LOOP(f) = {...}` (below); the report computes MB/s and
 * flop rates from it, the disassembly check takes its elements per trip,
 * and validation replays its reference (a plain loop that computes the
 * same) over one element to know what every element must hold.
 * Descriptors of version 1 (no init_part) are read as before. */
#ifndef PMCSH_LOOP_H
#define PMCSH_LOOP_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PMCSH_LOOP_VERSION 2	/* 1: without init_part, still read */

typedef double pmcsh_stream_fn(double *__restrict a, double *__restrict b, double *__restrict c,
			       double s, size_t n);
typedef void pmcsh_own_fn(void *state, size_t begin, size_t end);
typedef void *pmcsh_init_fn(size_t n, int thread, int nthreads);
typedef void *pmcsh_init_part_fn(size_t begin, size_t end, size_t n, int thread, int nthreads);
typedef void pmcsh_fini_fn(void *state);

enum pmcsh_convention { PMCSH_STREAM = 1, PMCSH_OWN = 2 };
enum { PMCSH_A = 1, PMCSH_B = 2, PMCSH_C = 4 };	/* the arrays, as masks */

struct pmcsh_loop {
	int version;			/* PMCSH_LOOP_VERSION */
	const char *name;		/* the column's name (default: the symbol) */
	const char *description;
	int convention;			/* PMCSH_STREAM or PMCSH_OWN */
	pmcsh_stream_fn *stream;	/* STREAM's convention */
	pmcsh_own_fn *own;		/* the loop's own data */
	pmcsh_init_fn *init;		/* own data: told n (init_part: its part) */
	pmcsh_fini_fn *fini;
	unsigned reads, writes;		/* STREAM's: the arrays read and written (PMCSH_A | ...) */
	int reduction;			/* STREAM's: returns the sum of what it reads */
	double bytes;			/* own data: bytes moved per element (STREAM's way: 0 unknown) */
	double flops;			/* per element */
	double elements_per_trip;	/* elements one trip of the loop's body handles (0: found) */
	pmcsh_stream_fn *reference;	/* STREAM's: the plain loop validation replays (NULL: the loop itself) */
	/* version 2 */
	pmcsh_init_part_fn *init_part;	/* own data: told its thread's part (taken over init) */
};

/* The descriptor of loop f: PMCSH_LOOP(f) = {.version = PMCSH_LOOP_VERSION, ...}; */
#define PMCSH_LOOP(f) const struct pmcsh_loop f##_pmcsh_loop

#ifdef __cplusplus
}
#endif
#endif
