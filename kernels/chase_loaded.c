/* Loaded latency (see chase.h): bandwidth threads reading their own
 * buffers at an injection delay while the calling thread chases. */
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


static volatile uintptr_t chase_sink;   /* what the loaders read ends here: no load is dead */

/* Seconds a thread has run on a cpu (clock: CLOCK_THREAD_CPUTIME_ID or
 * pthread_getcpuclockid's), 0 where the clock cannot be read. */
static double cpu_s(clockid_t clock)
{
	struct timespec ts;
	if (clock_gettime(clock, &ts) != 0)
		return 0;
	return ts.tv_sec + ts.tv_nsec * 1e-9;
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
	have_mask = chase_pin_here(me, &old);
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
