/* The chase (see chase.h): one unrolled runner per k, the warm-up, the
 * timed samples in a window, the thread pinned where it starts. */
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


static volatile uintptr_t chase_sink;   /* final pointers end here: no load is dead */

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
int chase_pin_here(int me, cpu_set_t *old)
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
	int restore = chase_pin_here(sched_getcpu(), &old);
	int r = run_samples(c, k, pos, samples, sample_s, warmup_s, w, ns, res);
	if (restore)
		sched_setaffinity(0, sizeof old, &old);
	return r;
}

double chase_plain(const struct chase_chain *c, uint64_t loads, void **cursor)
{
	void **p = *cursor;
	if (!p)
		chase_heads(c, 1, (void **)&p);   /* the head of the one chain */
	double t0 = mono_s();
	for (uint64_t i = 0; i < loads; i++)
		p = (void **)*p;
	double t1 = mono_s();
	chase_sink = (uintptr_t)p;
	*cursor = p;
	return loads ? (t1 - t0) * 1e9 / loads : 0;
}
