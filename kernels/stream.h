/* STREAM kernels and the engine that runs them: descriptors, buffers, a pool
 * of pinned threads, timing and validation.  Pure C: functions return 0 or
 * -errno and leave a human-readable detail in a caller's buffer; they never
 * print and never exit.  The Lua binding is core/lstream.c. */
#ifndef PMCSH_STREAM_H
#define PMCSH_STREAM_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "kwindow.h"
#include "pages.h"

/* The three arrays, as masks for a kernel's reads and writes. */
enum { STREAM_A = 1, STREAM_B = 2, STREAM_C = 4 };

/* One part of a kernel: the arrays already offset to the part's first
 * element, `n` elements.  Returns the partial sum for a reduction, 0
 * otherwise. */
typedef double (*stream_fn)(double *restrict a, double *restrict b,
			    double *restrict c, double s, size_t n);

/* A kernel describes itself: the descriptor table (kernels/stream.c, one
 * entry per kernel beside its loop) is the only place that knows a kernel.
 * Per iteration (one element of each array) it loads each array it reads
 * and stores each it writes, 8 bytes each (stream_kernel_bytes and the
 * others below derive the counts); what it leaves in the arrays, which
 * validation expects, is what its own loop leaves in one element. */
struct stream_kernel {
	const char *name;
	const char *description;
	unsigned reads, writes;	/* STREAM_A|B|C */
	int flops;
	int nt;			/* non-temporal stores: no write-allocate read */
	int reduction;		/* returns the sum of what it reads */
	const char *plain;	/* the temporal kernel an nt one mirrors */
	stream_fn fn;		/* this variant's loop; NULL: not in this variant */
	const char *symbol;	/* the loop's name before its _variant suffix */
	stream_fn ref;		/* the textbook loop (kernels/ref_stream.c) */
	const char *ref_symbol;
	stream_fn replay;	/* the loop validation replays over one element (NULL: fn) */
	/* A loop on its own data (a user's, include/pmcsh/loop.h), fn NULL:
	 * own(state, begin, end) over elements [begin, end) of n, with the
	 * state init_part (told the part's [begin, end)), else init, made on
	 * the part's own thread before the windows (neither: a NULL state);
	 * fini after them.  bytes and flops per element
	 * as a user's loop says (0 unknown), where no arrays say them. */
	void (*own)(void *state, size_t begin, size_t end);
	void *(*init)(size_t n, int thread, int nthreads);
	void *(*init_part)(size_t begin, size_t end, size_t n, int thread, int nthreads);
	void (*fini)(void *state);
	double bytes, own_flops;
};

static inline int stream_kernel_loads(const struct stream_kernel *k)
{
	return __builtin_popcount(k->reads);
}

static inline int stream_kernel_stores(const struct stream_kernel *k)
{
	return __builtin_popcount(k->writes);
}

/* STREAM's convention: the bytes the program reads and writes. */
static inline int stream_kernel_bytes(const struct stream_kernel *k)
{
	return 8 * (stream_kernel_loads(k) + stream_kernel_stores(k));
}

/* With the write-allocate read of each temporally stored line. */
static inline int stream_kernel_bytes_wa(const struct stream_kernel *k)
{
	return stream_kernel_bytes(k) + (k->nt ? 0 : 8 * stream_kernel_stores(k));
}

/* One instruction-set variant of the loops (kernels/stream.c built with its
 * flags): "avx512" (x86-64-v4), "avx2" (x86-64-v3), "sse2" (the x86-64
 * baseline), or "generic" (plain C, other architectures).  Each has the
 * whole descriptor table, its own loops in it. */
struct stream_variant {
	const char *name;
	const char *nt_isa;	/* the streaming stores its nt loops use, or NULL */
	const struct stream_kernel *kernels;	/* default (triad) first, ended by a zero entry */
};

/* Kernel `name` of variant v, or NULL. */
const struct stream_kernel *stream_kernel_find(const struct stream_variant *v, const char *name);

/* Variant i (best first) and whether this CPU runs it; NULL past the end. */
const struct stream_variant *stream_variant_at(int i, int *supported);
/* The best variant this CPU runs. */
const struct stream_variant *stream_variant_best(void);
/* The variant named `name` when this CPU runs it; NULL with the reason in
 * why otherwise. */
const struct stream_variant *stream_variant_find(const char *name, char *why, size_t len);
/* 1 when this CPU runs the reference loops (built -march=native on the
 * build machine); 0 with the missing features in why. */
int stream_ref_runnable(char *why, size_t len);

/* Reference loops (kernels/ref_stream.c), written as stream.c writes them. */
extern const char ref_stream_isa[];	/* the features -march=native gave them */
double ref_stream_copy(double *a, double *b, double *c, double s, size_t n);
double ref_stream_scale(double *a, double *b, double *c, double s, size_t n);
double ref_stream_add(double *a, double *b, double *c, double s, size_t n);
double ref_stream_triad(double *a, double *b, double *c, double s, size_t n);
double ref_stream_sum(double *a, double *b, double *c, double s, size_t n);
double ref_stream_fill(double *a, double *b, double *c, double s, size_t n);

/* ---- the engine (kernels/stream_run.c) ---- */

#define STREAM_SCALAR 3.0
#define STREAM_MAX_THREADS 1024

struct stream_opts {
	size_t n;		/* elements per array */
	int threads;		/* parts; part 0 runs on the calling thread */
#define STREAM_DEFAULT_THREADS 1	/* stream.new's and the survey's: one */
	const int *cpus;	/* cpu of each part (threads entries) */
	int pages;		/* enum pages_policy (pages.h) */
	size_t offset;		/* bytes added to each array start (multiple of 8) */
	int touch;		/* first-touch (initialise) now; else at first run */
	int pin;		/* pin threads (calling thread only during calls) */
	long mem_available_kb;	/* MemAvailable, to refuse what cannot fit; <= 0 unknown */
};

/* What smaps says about one array's mapping. */
struct stream_pageinfo {
	long kernel_page_kb;	/* KernelPageSize */
	long rss_kb;		/* Rss */
	long anon_huge_kb;	/* AnonHugePages (THP) */
	long hugetlb_kb;	/* Private/Shared_Hugetlb */
};

struct stream;

/* Allocates the arrays and, with touch, initialises each part from the
 * thread that owns it (a=1, b=2, c=0).  The threads-1 pinned workers live
 * for one call: none is left running between calls.  On failure returns -errno, *out NULL, and a sentence
 * saying what to do in msg. */
int stream_create(struct stream **out, const struct stream_opts *o,
		  char *msg, size_t msglen);
/* Whether the memory stream_create would map is there (huge pages reserved,
 * memory available), allocating nothing: 0, or -errno and msg. */
int stream_check(const struct stream_opts *o, char *msg, size_t msglen);
/* Joins the workers and unmaps; NULL is fine. */
void stream_destroy(struct stream *s);

size_t stream_n(const struct stream *s);
int stream_threads(const struct stream *s);
/* Thread ids of the workers (parts 1..threads-1), started for the call
 * that follows (which ends them); returns their count, or -errno (tids
 * zeroed). */
int stream_worker_tids(struct stream *s, pid_t *tids, int max);
/* Part `i`: first element, count, cpu. */
void stream_part(const struct stream *s, int i, size_t *lo, size_t *cnt, int *cpu);
double *stream_array(const struct stream *s, int which); /* 0,1,2 = a,b,c */
size_t stream_offset(const struct stream *s);
int stream_touched(const struct stream *s);
/* The value every element of array `which` should hold now. */
double stream_expected(const struct stream *s, int which);

/* Reads /proc/self/smaps for the mapping holding array `which`. */
int stream_pageinfo(const struct stream *s, int which, struct stream_pageinfo *pi);

/* The work inside each timed window: the loop runs `passes` times over
 * all n elements; with `alternate`, even windows (0, 2, ...) run only each
 * part's head (its first cnt - d elements, d a multiple of 512 near half
 * of cnt) and finish the rest right after the window closes, odd windows
 * the whole part: two neighbouring windows differ only in the elements
 * counted, with the same call, set-up and tail code. */
enum stream_alternate { ALTERNATE_NONE, ALTERNATE_LENGTH, ALTERNATE_PASSES };

/* With `slice` (elements), window r runs each part's [cursor, cursor + len)
 * only, the cursor moving on from window to window, so short windows over
 * arrays of STREAM's size still take their data from memory.  len is slice,
 * or 2 * slice in the odd windows of ALTERNATE_LENGTH; the odd windows of
 * ALTERNATE_PASSES run 2 passes over slice (the arrays must be untouched:
 * first touch in every window, the cursor never wraps: -ENOSPC).  Length
 * windows run each element once a round: where the next window does not fit
 * the rest of the round runs outside the windows and the cursor starts over,
 * and the call ends by finishing its round (validation holds for any loop). */
struct stream_shape {
	int passes;		/* >= 1 */
	int alternate;		/* enum stream_alternate */
	size_t slice;		/* 0: each window over whole parts */
};

/* Runs `k` (its variant's loop, or the reference loop with ref; a loop on
 * its own data between its init and fini, each once a call) `warmup`
 * untimed then `reps` timed repetitions shaped by `shape` (NULL: one
 * pass), all threads started together per pass; the window `w` (may be
 * NULL) is opened right around each timed repetition's loop.
 * Fills times[r] (seconds, CLOCK_MONOTONIC), work[r] (the iterations
 * inside window r) and, when tsc is non-NULL (the caller's word that the
 * TSC is constant), tsc[r] (ticks).  *sum gets a reduction's last timed sum.
 * Between repetitions checks the interrupt flag: returns -EINTR with
 * *done the timed reps completed; -EINVAL when alternate finds parts too
 * short to shorten (under 1024 elements) or a slice longer than a part;
 * -EBUSY for ALTERNATE_PASSES slices on touched arrays, -ENOSPC when their
 * untouched elements run out; -EOPNOTSUPP when the loop is not there.
 * The expected array values advance for every pass (every round of slices)
 * that ran, by the same loop run over one element of each. */
int stream_run(struct stream *s, const struct stream_kernel *k, int ref,
	       int reps, int warmup, const struct stream_shape *shape, const struct kwindow *w,
	       double *times, uint64_t *work, uint64_t *tsc, double *sum, int *done);

/* What validation found: the value every element of a, b, c should hold,
 * STREAM's average relative error of each against it, and, after a
 * reduction, its sum against n times the one-element sum. */
struct stream_validation {
	double expected[3], error[3];
	double bound;			/* STREAM's for 8-byte reals: 1e-13 */
	int has_sum;
	double sum_expected, sum_error, sum_bound;
};

/* Checks every array against its expected value as STREAM does (average
 * relative error against 1e-13) and, when `last` is a reduction, `sum`;
 * fills *v (may be NULL).  0 when good, else -EDOM with the detail in msg.
 * After a failure the arrays are re-initialised. */
int stream_validate(struct stream *s, const struct stream_kernel *last, double sum,
		    struct stream_validation *v, char *msg, size_t msglen);
/* Re-initialises a=1, b=2, c=0 from the owning threads. */
int stream_reset(struct stream *s);

/* STREAM's rule for n: each array 4x the last-level caches (llc_bytes, the
 * sum over the machine; 0 unknown: STREAM's 10 million). */
size_t stream_default_n(size_t llc_bytes);

#endif
