/* Pointer-chase engines (see chase.h).  Chains are built once (mmap, shuffle,
 * link) and chased many times; the chase loop is one unrolled loop per k. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "chase.h"
#include "clock.h"
#include "interrupt.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* The default strides.  A line (64) where the next element is anywhere
 * (random) or meant to be prefetched (stride): with one pointer per line the
 * footprint is the size, and the curve steps where the caches end.  256 for
 * the grouped orders (page, tlb), whose next element is in the same page or
 * group: with 64-byte elements it shares a 128-byte pair or a recently
 * streamed page region with the last few, and the adjacent-line and
 * page-local prefetchers fetch it before it is asked for; in a 256-byte
 * slot with the pointer on a random line of it (the mixer) the line next to
 * the one loaded holds no pointer of the cycle, and where the next pointer
 * lies cannot be guessed (multichase's default, for the same reason).  A
 * fixed word in each slot would leave a line-stride pattern, which other
 * prefetchers learn: the mixer stays. */
#define WHY_LINE "one pointer per 64-byte line: the footprint is the size, and the next element " \
	"is anywhere (random) or meant to be prefetched (stride)"
#define WHY_SLOT "the next element is near the last (same page or group): with 64-byte elements " \
	"the adjacent-line and page-local prefetchers fetch it and latency reads low; 256-byte slots with " \
	"each pointer on a random line of its slot (the mixer) leave them nothing to guess (multichase's default)"
const struct chase_order_desc chase_orders[CHASE_NORDERS] = {
	[CHASE_RANDOM] = {"random", "a random permutation of all elements (one cycle)", 1, 0, 64, WHY_LINE},
	[CHASE_STRIDE] = {"stride", "sequential at a fixed stride: prefetchable, for comparison", 0, 0, 64, WHY_LINE},
	[CHASE_PAGEWISE] = {"page", "the elements of each 4 KiB page in scrambled order, pages in random order (par_mem)",
			    1, 1, 256, WHY_SLOT},
	[CHASE_TLB] = {"tlb", "random within groups of tlb_pages 4 KiB pages, groups in random order (multichase)",
		       1, 1, 256, WHY_SLOT},
};

static volatile uintptr_t chase_sink;   /* final pointers end here: no load is dead */

/* Seconds a thread has run on a cpu (clock: CLOCK_THREAD_CPUTIME_ID or
 * pthread_getcpuclockid's), 0 where the clock cannot be read. */
static double cpu_s(clockid_t clock)
{
	struct timespec ts;
	if (clock_gettime(clock, &ts) != 0)
		return 0;
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* splitmix64: small, seedable, good enough to shuffle. */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, bound): multiply-shift, bias below bound / 2^64. */
static uint32_t rng_below(uint64_t *s, uint32_t bound)
{
	return (uint32_t)(((unsigned __int128)rng_next(s) * bound) >> 64);
}

/* Fisher-Yates; a large one stops early on Ctrl-C (the caller checks). */
static void shuffle(uint32_t *a, size_t n, uint64_t *s)
{
	for (size_t i = n; i > 1; i--) {
		uint32_t j = rng_below(s, (uint32_t)i);
		uint32_t t = a[i - 1]; a[i - 1] = a[j]; a[j] = t;
		if (!(i & 0x3ffff) && pmcsh_stop_requested())
			return;
	}
}

int chase_check(const struct chase_params *p, const char **why)
{
	if (p->order < 0 || p->order >= CHASE_NORDERS) { *why = "unknown order"; return -EINVAL; }
	if (p->pages < 0 || p->pages >= PAGES_N) { *why = "unknown page policy"; return -EINVAL; }
	if (p->stride < sizeof(void *) || p->stride % sizeof(void *)) {
		*why = "stride must be a positive multiple of the pointer size (8 bytes)";
		return -EINVAL;
	}
	if (p->size == 0) { *why = "size must be positive"; return -EINVAL; }
	if (p->size < p->stride) { *why = "size is smaller than one stride"; return -EINVAL; }
	if (p->size / p->stride > CHASE_MAX_ELEMS) {
		*why = "size too large: more than 2^32-1 elements (use a larger stride)";
		return -EINVAL;
	}
	size_t phys = pages_physical();
	if (phys && p->size > phys) {
		*why = "size too large: more than this machine's physical memory";
		return -EINVAL;
	}
	if (p->tlb_pages == 0 || p->tlb_pages > (size_t)CHASE_MAX_TLB_PAGES) {
		*why = "tlb_pages must be in 1..2^30";
		return -EINVAL;
	}
	if (p->ways < 0 || p->ways > CHASE_MAX_K) { *why = "ways must be in 1.." CHASE_STR(CHASE_MAX_K); return -EINVAL; }
	if (p->ways > 1 && p->fixed_word) { *why = "several cycles need mixed offsets (mix=true)"; return -EINVAL; }
	if (p->stride / sizeof(void *) > UINT32_MAX) { *why = "stride too large (at most 32 GiB)"; return -EINVAL; }
	if (p->ways > 1 && (size_t)p->ways > p->stride / sizeof(void *)) {
		*why = "each cycle needs a word of its own in every element: ways <= stride / 8";
		return -EINVAL;
	}
	return 0;
}

void chase_free(struct chase_chain *c)
{
	pages_unmap(&c->mem);
	c->base = NULL;
}

size_t chase_word_of(const struct chase_chain *c, int w, size_t e)
{
	if (c->p.fixed_word)
		return c->word;
	return (size_t)c->mixer[w][e % CHASE_MIXER] * sizeof(void *);
}

size_t chase_word(const struct chase_chain *c, size_t e)
{
	return chase_word_of(c, 0, e);
}

#define ELEMW(c, w, e) ((void **)((c)->base + (size_t)(e) * (c)->p.stride + chase_word_of(c, w, e)))
#define ELEM(c, e) ELEMW(c, 0, e)

/* The mixer.  Cycle 0: entry i takes stretch order[i] of the slot cut into
 * CHASE_MIXER equal stretches (order[] a shuffle of 0..63, so every stretch
 * once) and a random word inside it: balanced over the lines of the slot
 * whatever the stride, each word equally often when the slot has at most 64.
 * Cycles 1..ways-1: for each entry, random words distinct from each other and
 * from cycle 0's (ways <= nw, chase_check), so that no pointer overwrites
 * another; drawn by rejection, at most CHASE_MAX_K of them, so no table of
 * nw words. */
static void mix_words(struct chase_chain *c, size_t nw, int ways, uint64_t *s)
{
	uint32_t order[CHASE_MIXER];
	for (uint32_t i = 0; i < CHASE_MIXER; i++)
		order[i] = i;
	shuffle(order, CHASE_MIXER, s);
	for (int i = 0; i < CHASE_MIXER; i++) {
		size_t lo = order[i] * nw / CHASE_MIXER, hi = (order[i] + 1) * nw / CHASE_MIXER;
		c->mixer[0][i] = (uint32_t)(hi > lo ? lo + rng_below(s, (uint32_t)(hi - lo)) : lo);
		for (int w = 1; w < ways; w++) {
			uint32_t x;
			int taken;
			do {
				x = rng_below(s, (uint32_t)nw);
				taken = 0;
				for (int v = 0; v < w; v++)
					taken |= c->mixer[v][i] == x;
			} while (taken);
			c->mixer[w][i] = x;
		}
	}
}

/* The sequence: blocks of `bs` elements, each shuffled inside (seq), full
 * blocks visited in the order perm[], a partial last block stays last.
 * Position i along the cycle holds element at_pos(i). */
struct layout { uint32_t *seq, *perm; size_t bs, nfull; };

static uint32_t at_pos(const struct layout *l, size_t i)
{
	size_t b = i / l->bs;
	if (b < l->nfull)
		return l->seq[(size_t)l->perm[b] * l->bs + i % l->bs];
	return l->seq[i];
}

/* Elements per block of the order (page, tlb), n for the others. */
static size_t block_size(const struct chase_params *p, size_t n)
{
	size_t bs = n;
	if (p->order == CHASE_PAGEWISE)
		bs = p->stride >= CHASE_PAGE ? 1 : CHASE_PAGE / p->stride;
	else if (p->order == CHASE_TLB) {
		size_t g = p->tlb_pages * CHASE_PAGE;
		bs = p->stride >= g ? 1 : g / p->stride;
	}
	return bs > n ? n : bs;
}

/* Cycle w: the layout l (its seq and perm filled here from the rng s)
 * linked into one ring through word w of every element, and its heads
 * where there are several cycles.  0, or -EINTR on Ctrl-C. */
static int link_cycle(struct chase_chain *c, struct layout *l, int w, int ways, uint64_t *s)
{
	const struct chase_params *p = &c->p;
	size_t n = c->n, bs = l->bs, nfull = l->nfull;
	uint32_t *seq = l->seq, *perm = l->perm;
	for (size_t i = 0; i < n; i++)
		seq[i] = (uint32_t)i;
	for (size_t b = 0; b < nfull; b++)
		perm[b] = (uint32_t)b;
	if (chase_orders[p->order].shuffle_within) {
		for (size_t b = 0; b < nfull; b++)
			shuffle(seq + b * bs, bs, s);
		shuffle(seq + nfull * bs, n - nfull * bs, s);
	}
	if (chase_orders[p->order].shuffle_blocks)
		shuffle(perm, nfull, s);
	if (pmcsh_stop_requested())
		return -EINTR;
	uint32_t first = at_pos(l, 0), prev = first;
	for (size_t i = 1; i < n; i++) {
		uint32_t e = at_pos(l, i);
		*ELEMW(c, w, prev) = ELEMW(c, w, e);
		prev = e;
		if (!(i & 0x3fff) && pmcsh_stop_requested())   /* each step may fault a page in */
			return -EINTR;
	}
	*ELEMW(c, w, prev) = ELEMW(c, w, first);   /* close the ring */
	for (int k = w + 1; ways > 1 && k <= CHASE_MAX_K; k++)
		c->head[k][w] = at_pos(l, (size_t)w * bs / k);
	return 0;
}

/* One cycle's heads for each k: evenly spaced along it, each j/k of a
 * block further in where the order has blocks. */
static void spread_heads(struct chase_chain *c, const struct layout *l)
{
	size_t n = c->n, bs = l->bs;
	for (int k = 1; k <= CHASE_MAX_K; k++)
		for (int j = 0; j < k; j++) {
			size_t at = (size_t)((unsigned __int128)j * n / k);
			if (bs < n)
				at = (at + (size_t)j * bs / k) % n;
			c->head[k][j] = at_pos(l, at);
		}
}

int chase_build(struct chase_chain *c, const struct chase_params *p, char *msg, size_t msglen)
{
	const char *why;
	int err = chase_check(p, &why);
	memset(c, 0, sizeof *c);
	if (err) {
		snprintf(msg, msglen, "%s", why);
		return err;
	}
	c->p = *p;
	c->n = p->size / p->stride;
	if ((err = pages_check(p->pages, c->n * p->stride, 1, msg, msglen)) ||
	    (err = pages_map(&c->mem, c->n * p->stride, p->pages, 0, msg, msglen)))
		return err;
	c->base = c->mem.base;

	uint64_t s = p->seed ^ 0x636861736531ULL;  /* "chase1" */
	size_t nw = p->stride / sizeof(void *);    /* words in a slot (below 2^32: chase_check) */
	c->word = rng_below(&s, (uint32_t)nw) * sizeof(void *);
	int ways = p->ways > 0 ? p->ways : 1;
	mix_words(c, nw, ways, &s);

	size_t n = c->n, bs = block_size(p, n), nfull = n / bs;
	uint32_t *seq = malloc(n * sizeof *seq), *perm = malloc(nfull * sizeof *perm);
	if (!seq || !perm) {
		free(seq); free(perm); chase_free(c);
		snprintf(msg, msglen, "out of memory for the shuffle");
		return -ENOMEM;
	}
	struct layout l = {seq, perm, bs, nfull};
	for (int w = ways - 1; w >= 0 && !err; w--)   /* each cycle its own order; cycle 0 last, for head[] */
		err = link_cycle(c, &l, w, ways, &s);
	if (!err && ways == 1)
		spread_heads(c, &l);
	free(seq);
	free(perm);
	if (err) {   /* Ctrl-C during a large build */
		chase_free(c);
		snprintf(msg, msglen, "interrupted");
	}
	return err;
}

size_t chase_elem(const struct chase_chain *c, const void *q)
{
	return (size_t)((const char *)q - c->base) / c->p.stride;   /* the offset is below the stride */
}

size_t chase_next(const struct chase_chain *c, int w, size_t e)
{
	return chase_elem(c, *ELEMW(c, w, e));
}

void chase_heads(const struct chase_chain *c, int k, void **heads)
{
	for (int j = 0; j < k; j++)
		heads[j] = ELEMW(c, c->p.ways > 1 ? j : 0, c->head[k][j]);
}

/* One runner per k: k pointers, `unroll` dependent steps of each per trip,
 * interleaved so the k loads of a step are independent.  Two empty asm
 * statements keep the compiler honest: the volatile one with a memory
 * clobber after each round of k loads stops it from regrouping the loads
 * chain by chain (it would: they are independent, and 100 loads of one chain
 * in a row put the other chains out of the out-of-order window); the "+r"
 * one makes each pointer opaque so the loads are not vectorised into
 * gathers.  The pointers go back to p[] (the next sample continues where
 * this one ended) and into a volatile sink.  Past the registers (about 14
 * on x86-64, 28 on arm64) the compiler keeps the other pointers on the
 * stack: their steps are a reload, the chased load and a store
 * (CHASE_MAX_K says what that bounds).  k <= 16 take CHASE_UNROLL steps a
 * trip; wider runners ceil(CHASE_UNROLL / k), a trip still at least
 * CHASE_UNROLL loads, so that their code stays small (1-4 KB each). */
#define R2(x) x x
#define R3(x) x x x
#define R4(x) x x x x
#define R5(x) x x x x x
#define R6(x) x x x x x x
#define R10(x) x x x x x x x x x x
#define R100(x) R10(R10(x))
#define S1(j) if (j < kk) { q##j = *(void **)q##j; __asm__("" : "+r"(q##j)); }
#define Q_IN(j) void *q##j = p[j < kk ? j : 0];
#define Q_OUT(j) if (j < kk) { p[j] = q##j; x ^= (uintptr_t)q##j; }
#define ALL16(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10)    \
	M(11) M(12) M(13) M(14) M(15)
#define ALL64(M) \
	M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(12) M(13) M(14) M(15) \
	M(16) M(17) M(18) M(19) M(20) M(21) M(22) M(23) M(24) M(25) M(26) M(27) M(28) M(29) \
	M(30) M(31) M(32) M(33) M(34) M(35) M(36) M(37) M(38) M(39) M(40) M(41) M(42) M(43) \
	M(44) M(45) M(46) M(47) M(48) M(49) M(50) M(51) M(52) M(53) M(54) M(55) M(56) M(57) \
	M(58) M(59) M(60) M(61) M(62) M(63)
/* ALL: the pointers declared (ALL16 or ALL64), K chains, U steps a trip */
#define DEFINE_RUNNER(ALL, K, U)                                            \
static void run_##K(void **p, uint64_t trips)                              \
{                                                                          \
	const int kk = K;                                                  \
	ALL(Q_IN)                                                          \
	while (trips--) {                                                  \
		R##U(ALL(S1) __asm__ __volatile__("" ::: "memory");)      \
	}                                                                  \
	uintptr_t x = 0;                                                   \
	ALL(Q_OUT)                                                         \
	chase_sink = x;                                                    \
}
#define NARROW_RUNNER(K, U) DEFINE_RUNNER(ALL16, K, U)
#define WIDE_RUNNER(K, U) DEFINE_RUNNER(ALL64, K, U)
/* k and its steps per trip: CHASE_UNROLL to 16, ceil(CHASE_UNROLL / k) beyond */
#define NARROW(X) \
	X(1, 100) X(2, 100) X(3, 100) X(4, 100) X(5, 100) X(6, 100) X(7, 100) X(8, 100) \
	X(9, 100) X(10, 100) X(11, 100) X(12, 100) X(13, 100) X(14, 100) X(15, 100) X(16, 100)
#define WIDE(X) \
	X(17, 6) X(18, 6) X(19, 6) X(20, 5) X(21, 5) X(22, 5) X(23, 5) X(24, 5) X(25, 4) \
	X(26, 4) X(27, 4) X(28, 4) X(29, 4) X(30, 4) X(31, 4) X(32, 4) X(33, 4) X(34, 3) \
	X(35, 3) X(36, 3) X(37, 3) X(38, 3) X(39, 3) X(40, 3) X(41, 3) X(42, 3) X(43, 3) \
	X(44, 3) X(45, 3) X(46, 3) X(47, 3) X(48, 3) X(49, 3) X(50, 2) X(51, 2) X(52, 2) \
	X(53, 2) X(54, 2) X(55, 2) X(56, 2) X(57, 2) X(58, 2) X(59, 2) X(60, 2) X(61, 2) \
	X(62, 2) X(63, 2) X(64, 2)
NARROW(NARROW_RUNNER)
WIDE(WIDE_RUNNER)

struct runner {
	void (*run)(void **, uint64_t);
	int unroll;   /* steps of every chain per trip */
};
#define RUNNER_ENTRY(K, U) [K] = {run_##K, U},
static const struct runner runners[] = {NARROW(RUNNER_ENTRY) WIDE(RUNNER_ENTRY)};
_Static_assert(sizeof runners / sizeof *runners == CHASE_MAX_K + 1, "one runner for every k in 1..CHASE_MAX_K");

/* Warm-up: chunks of doubling length until one full pass of the cycle is
 * done or `cap` seconds passed.  Returns trips per second of the last chunk
 * (the steady state), 0 on Ctrl-C; *trips the trips it ran. */
static double warm_up(void (*run)(void **, uint64_t), void **q, uint64_t pass_trips,
		      double cap, double *ns_per_trip, double *spent, uint64_t *trips)
{
	double t_start = mono_s(), rate = 0;
	uint64_t done = 0, chunk = 1;
	for (;;) {
		if (pmcsh_stop_requested())
			return 0;
		uint64_t t = chunk;
		if (done < pass_trips && t > pass_trips - done)
			t = pass_trips - done;
		double t0 = mono_s();
		run(q, t);
		double t1 = mono_s();
		done += t;
		if (t1 > t0)
			rate = t / (t1 - t0);
		*ns_per_trip = (t1 - t0) * 1e9 / t;
		if ((done >= pass_trips && t1 - t0 > 2e-3) || t1 - t_start > cap)
			break;
		if (t1 - t0 < 0.05)
			chunk *= 2;
	}
	*spent = mono_s() - t_start;
	*trips = done;
	return rate;
}

static int run_samples(const struct chase_chain *c, int k, void **pos, int samples, double sample_s,
		       double warmup_s, const struct kwindow *w, double *ns, struct chase_result *res)
{
	void *own[CHASE_MAX_K], **q = pos ? pos : own;
	memset(res, 0, sizeof *res);
	if (!c->mem.map || k < 1 || k > CHASE_MAX_K || (size_t)k > c->n || samples < 0)
		return -EINVAL;
	if (c->p.ways > 1 && k > c->p.ways)
		return -EINVAL;
	void (*run)(void **, uint64_t) = runners[k].run;
	uint64_t per_trip = (uint64_t)runners[k].unroll * (uint64_t)k, warm_trips = 0;
	if (!pos || !pos[0])
		chase_heads(c, k, q);

	uint64_t unroll = (uint64_t)runners[k].unroll, pass = (c->n / k + unroll - 1) / unroll;
	double cap = warmup_s > 0 ? warmup_s : 4 * sample_s > 0.2 ? 4 * sample_s : 0.2, ns_trip = 0;
	double rate = warm_up(run, q, pass ? pass : 1, cap, &ns_trip, &res->warmup_s, &warm_trips);
	if (rate <= 0)
		return -EINTR;
	res->warmup_ns = ns_trip / (double)per_trip;
	res->warmup_loads = warm_trips * per_trip;
	uint64_t trips = (uint64_t)(rate * sample_s);
	if (trips < 1)
		trips = 1;
	res->loads = trips * per_trip;

	for (int s = 0; s < samples; s++) {
		if (pmcsh_stop_requested())
			return -EINTR;
		int err = kwindow_begin(w, s);
		if (err)
			return err;
		double t0 = mono_s();
		run(q, trips);
		double t1 = mono_s();
		if ((err = kwindow_end(w, s)))
			return err;
		ns[s] = (t1 - t0) * 1e9 / (double)res->loads;
		res->samples_done = s + 1;
	}
	return 0;
}

/* The chase stays on the cpu it starts on, as multichase pins its
 * threads: a migration mid-sample restarts it with cold TLBs and private
 * caches (a 256 MiB tlb chain read 150-159 ns unpinned, 147-153 pinned,
 * multichase 145-147).  The caller's mask comes back afterwards. */
static int pin_here(int me, cpu_set_t *old)   /* 1: old holds the mask to give back */
{
	if (sched_getaffinity(0, sizeof *old, old) != 0)
		return 0;
	if (me >= 0) {
		cpu_set_t only;
		CPU_ZERO(&only);
		CPU_SET(me, &only);
		sched_setaffinity(0, sizeof only, &only);
	}
	return 1;
}

int chase_run(const struct chase_chain *c, int k, void **pos, int samples, double sample_s,
	      double warmup_s, const struct kwindow *w, double *ns, struct chase_result *res)
{
	cpu_set_t old;
	int restore = pin_here(sched_getcpu(), &old);
	int r = run_samples(c, k, pos, samples, sample_s, warmup_s, w, ns, res);
	if (restore)
		sched_setaffinity(0, sizeof old, &old);
	return r;
}

double chase_plain(const struct chase_chain *c, uint64_t loads, void **cursor)
{
	void **p = *cursor ? *cursor : ELEM(c, c->head[1][0]);
	double t0 = mono_s();
	for (uint64_t i = 0; i < loads; i++)
		p = (void **)*p;
	double t1 = mono_s();
	chase_sink = (uintptr_t)p;
	*cursor = p;
	return loads ? (t1 - t0) * 1e9 / loads : 0;
}

/* Loaded latency.  Each bandwidth thread reads its buffer one 64-byte line at
 * a time (one load per line: the line is what memory moves) and spins
 * `delay` iterations of an empty loop after each line, publishing the bytes
 * it read every 4 KiB. */
#define BW_LINE 64
#define BW_CHUNK 4096

struct bw_thread {
	pthread_t th;
	clockid_t clock;      /* the thread's cpu-time clock */
	char *buf;
	size_t len;
	long delay;
	int cpu;              /* -1: not pinned */
	_Atomic uint64_t bytes;
	atomic_int *stop;
};

static void *bw_main(void *arg)
{
	struct bw_thread *t = arg;
	uint64_t acc = 0, bytes = 0;
	if (t->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(t->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	}
	while (!atomic_load_explicit(t->stop, memory_order_relaxed)) {
		for (size_t off = 0; off + BW_CHUNK <= t->len; off += BW_CHUNK) {
			for (size_t l = 0; l < BW_CHUNK; l += BW_LINE) {
				acc += *(const uint64_t *)(t->buf + off + l);
				/* the delay, polling the flags every CHASE_DELAY_POLL
				 * iterations: a long delay never holds up a join */
				for (long d = t->delay; d > 0; d -= CHASE_DELAY_POLL) {
					for (long i = d < CHASE_DELAY_POLL ? d : CHASE_DELAY_POLL; i > 0; i--)
						__asm__ __volatile__("");
					if (d > CHASE_DELAY_POLL &&
					    (atomic_load_explicit(t->stop, memory_order_relaxed) || pmcsh_stop_requested()))
						goto stopped;
				}
			}
			bytes += BW_CHUNK;
			atomic_store_explicit(&t->bytes, bytes, memory_order_relaxed);
			if (atomic_load_explicit(t->stop, memory_order_relaxed))
				break;
		}
	}
stopped:
	chase_sink = (uintptr_t)acc;
	return NULL;
}

/* The window of the loaded chase, over the timed samples only (not the
 * warm-up): the bandwidth threads' bytes and the time, in all and per
 * sample (row->mbps_s), and how long the chaser (the thread calling the
 * hooks) and the loaders ran on a cpu meanwhile.  The cpu clocks are read
 * outside the bytes and the time, which are taken nearest the sample; the
 * cpu times are shares of their own span (span), from before the first
 * cpu clock read to after the last: the chaser preempted between those
 * reads leaves the loaders running on a longer window than secs. */
struct bw_window {
	struct bw_thread *t;
	int n;
	struct chase_loaded_row *row;
	uint64_t b0, bytes;
	double t0, secs, s0, span, c0, l0, chaser, loaders;
};

static uint64_t bw_bytes(struct bw_window *w)
{
	uint64_t b = 0;
	for (int i = 0; i < w->n; i++)
		b += atomic_load_explicit(&w->t[i].bytes, memory_order_relaxed);
	return b;
}

static double bw_loaders_cpu(struct bw_window *w)
{
	double s = 0;
	for (int i = 0; i < w->n; i++)
		s += cpu_s(w->t[i].clock);
	return s;
}

static int bw_begin(void *ctx, int rep)
{
	struct bw_window *w = ctx;
	(void)rep;
	w->s0 = mono_s();
	w->l0 = bw_loaders_cpu(w);
	w->c0 = cpu_s(CLOCK_THREAD_CPUTIME_ID);
	w->b0 = bw_bytes(w);
	w->t0 = mono_s();
	return 0;
}

static int bw_end(void *ctx, int rep)
{
	struct bw_window *w = ctx;
	double dt = mono_s() - w->t0;
	uint64_t db = bw_bytes(w) - w->b0;
	w->chaser += cpu_s(CLOCK_THREAD_CPUTIME_ID) - w->c0;
	w->loaders += bw_loaders_cpu(w) - w->l0;
	w->span += mono_s() - w->s0;
	w->secs += dt;
	w->bytes += db;
	w->row->mbps_s[rep] = dt > 0 ? db / dt / 1e6 : 0;
	return 0;
}

/* The loaders' buffers, each mapped (THP) and touched, and their cpus:
 * the cpus of old (when have_mask) but me, in turn.  0 or -errno; the
 * buffers mapped so far are the caller's to unmap. */
static int loaders_map(struct bw_thread *t, int threads, size_t bw_size, const cpu_set_t *old, int have_mask,
		       int me, atomic_int *stop)
{
	int cpus[CPU_SETSIZE], ncpus = 0;
	for (int i = 0; have_mask && i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, old) && i != me)
			cpus[ncpus++] = i;
	for (int i = 0; i < threads; i++) {
		t[i].len = bw_size;
		t[i].buf = mmap(NULL, bw_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (t[i].buf == MAP_FAILED) {
			t[i].buf = NULL;
			return -errno;
		}
		madvise(t[i].buf, bw_size, MADV_HUGEPAGE);
		memset(t[i].buf, 1, bw_size);
		t[i].cpu = ncpus ? cpus[i % ncpus] : -1;
		t[i].stop = stop;
	}
	return 0;
}

/* One row: the loaders started with this delay and streaming, then the
 * chase's timed samples (going on from pos), the loaders stopped and
 * joined, row filled.  0 or -errno. */
static int loaded_row(const struct chase_chain *c, struct bw_thread *t, int threads, long delay, atomic_int *stop,
		      void **pos, int samples, double sample_s, struct chase_loaded_row *row)
{
	struct bw_window bw = {.t = t, .row = row};
	struct kwindow kw = {&bw, bw_begin, bw_end};
	struct chase_result res;
	int started = 0, err = 0;
	atomic_store(stop, 0);
	for (int i = 0; i < threads; i++) {
		t[i].delay = delay;
		atomic_store(&t[i].bytes, 0);
		if ((err = -pthread_create(&t[i].th, NULL, bw_main, &t[i])))
			break;
		if (pthread_getcpuclockid(t[i].th, &t[i].clock) != 0)
			t[i].clock = -1;   /* no clock: cpu_s reads 0 */
		started++;
		bw.n = started;
	}
	if (!err) {
		/* every loader streaming before the ramp: on a busy machine
		 * a loader not yet run read 0 MB/s through a whole row */
		struct timespec tick = {0, 1000 * 1000}, ramp = {0, 20 * 1000 * 1000};
		for (int ms = 0, all = 0; !all && ms < 1000 && !pmcsh_stop_requested(); ms++) {
			all = 1;
			for (int i = 0; i < threads; i++)
				all &= atomic_load_explicit(&t[i].bytes, memory_order_relaxed) > 0;
			if (!all)
				nanosleep(&tick, NULL);
		}
		nanosleep(&ramp, NULL);
		err = chase_run(c, 1, pos, samples, sample_s, 0, &kw, row->ns, &res);
	}
	atomic_store(stop, 1);
	for (int i = 0; i < started; i++)
		pthread_join(t[i].th, NULL);
	if (err)
		return err;
	row->delay = delay;
	row->mbps = bw.secs > 0 ? bw.bytes / bw.secs / 1e6 : 0;
	row->timed_s = bw.secs;
	row->chaser_ran = bw.span > 0 ? bw.chaser / bw.span : 0;
	row->loaders_ran = bw.span > 0 && threads > 0 ? bw.loaders / (bw.span * threads) : 0;
	return 0;
}

int chase_loaded(const struct chase_chain *c, const long *delays, int ndelays,
		 int threads, size_t bw_size, int samples, double sample_s,
		 struct chase_loaded_row *rows, int *rows_done)
{
	int err = 0, me = sched_getcpu(), have_mask = 0;
	void *pos[CHASE_MAX_K] = {NULL};   /* the chase goes on from delay to delay */
	cpu_set_t old;
	*rows_done = 0;
	if (!c->mem.map || threads < 0 || threads > 1024 || bw_size < BW_CHUNK || samples < 1)
		return -EINVAL;
	for (int d = 0; d < ndelays; d++)
		if (delays[d] < 0 || delays[d] > CHASE_MAX_DELAY)
			return -EINVAL;
	bw_size = bw_size / BW_CHUNK * BW_CHUNK;
	struct bw_thread *t = calloc(threads ? threads : 1, sizeof *t);
	atomic_int stop;
	if (!t)
		return -ENOMEM;
	/* Pin the chase where it runs and the bandwidth threads elsewhere. */
	have_mask = pin_here(me, &old);
	err = loaders_map(t, threads, bw_size, &old, have_mask, me, &stop);
	for (int d = 0; d < ndelays && !err; d++) {
		err = loaded_row(c, t, threads, delays[d], &stop, pos, samples, sample_s, &rows[d]);
		if (!err)
			*rows_done = d + 1;
	}
	for (int i = 0; i < threads; i++)
		if (t[i].buf)
			munmap(t[i].buf, bw_size);
	if (have_mask)
		sched_setaffinity(0, sizeof old, &old);
	free(t);
	return err;
}
