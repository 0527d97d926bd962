/* Runs the peak kernels: one variant's table chosen with the stream
 * variants' check, threads started together on their cpus, and the clock's
 * dependent chain. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include "clock.h"
#include "peak.h"
#include "stream.h"

#if defined(__x86_64__)
extern const struct peak_variant peak_variant_avx512, peak_variant_avx2, peak_variant_sse2;
static const struct peak_variant *const variants[] = {&peak_variant_avx512, &peak_variant_avx2, &peak_variant_sse2};
#else
extern const struct peak_variant peak_variant_generic;
static const struct peak_variant *const variants[] = {&peak_variant_generic};
#endif

const struct peak_variant *peak_variant_best(void)
{
	const char *best = stream_variant_best()->name;
	for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
		if (strcmp(variants[i]->name, best) == 0)
			return variants[i];
	return variants[sizeof variants / sizeof variants[0] - 1];
}

struct part {
	const struct peak_kernel *k;
	uint64_t iters;
	int cpu, err;
	int *ready, *go;	/* shared: threads ready; 1 run, -1 give up */
	int64_t t0, t1;
	volatile double sink;
};

static void run_part(struct part *p)
{
	p->t0 = mono_ns64();
	p->sink = p->k->fn(p->iters);
	p->t1 = mono_ns64();
}

static void *worker(void *arg)
{
	struct part *p = arg;
	if (p->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(p->cpu, &set);
		if (pthread_setaffinity_np(pthread_self(), sizeof set, &set))
			p->err = EINVAL;
	}
	__atomic_add_fetch(p->ready, 1, __ATOMIC_RELEASE);
	int go;
	while ((go = __atomic_load_n(p->go, __ATOMIC_ACQUIRE)) == 0)
		sched_yield();
	if (go > 0)
		run_part(p);
	return NULL;
}

static int pin_self(int cpu, cpu_set_t *saved)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof *saved, saved))
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof set, &set) == 0;
}

int peak_run(const struct peak_kernel *k, uint64_t iters, int threads, const int *cpus,
	     double *seconds, double *flops)
{
	if (threads < 1 || threads > STREAM_MAX_THREADS)
		return -EINVAL;
	struct part *parts = calloc((size_t)threads, sizeof *parts);
	pthread_t *tid = calloc((size_t)threads, sizeof *tid);
	if (!parts || !tid) {
		free(parts);
		free(tid);
		return -ENOMEM;
	}
	int ready = 0, go = 0, started = 1, r = 0;
	for (int i = 0; i < threads; i++)
		parts[i] = (struct part){.k = k, .iters = iters, .cpu = cpus ? cpus[i] : -1, .ready = &ready, .go = &go};
	cpu_set_t saved;
	int restore = cpus && pin_self(cpus[0], &saved);
	for (; started < threads; started++)
		if (pthread_create(&tid[started], NULL, worker, &parts[started])) {
			r = -EAGAIN;
			break;
		}
	while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) < started - 1)
		sched_yield();
	__atomic_store_n(&go, r ? -1 : 1, __ATOMIC_RELEASE);
	if (!r)
		run_part(&parts[0]);
	for (int i = 1; i < started; i++)
		pthread_join(tid[i], NULL);
	if (restore)
		sched_setaffinity(0, sizeof saved, &saved);
	int64_t t0 = parts[0].t0, t1 = parts[0].t1;
	for (int i = 1; i < threads && !r; i++) {
		if (parts[i].t0 < t0) t0 = parts[i].t0;
		if (parts[i].t1 > t1) t1 = parts[i].t1;
		if (parts[i].err) r = -parts[i].err;
	}
	free(parts);
	free(tid);
	if (r)
		return r;
	*seconds = (double)(t1 - t0) * 1e-9;
	*flops = (double)threads * (double)iters * k->flops_per_trip;
	return 0;
}

double peak_chain_seconds(uint64_t adds)
{
	uint64_t trips = adds / 16 ? adds / 16 : 1, x = 1;
	int64_t t0 = mono_ns64();
#if defined(__x86_64__)
	__asm__ volatile(
		"1:\n\t"
		".rept 16\n\tadd %0, %0\n\t.endr\n\t"
		"dec %1\n\tjnz 1b"
		: "+r"(x), "+r"(trips) : : "cc");
#elif defined(__aarch64__)
	__asm__ volatile(
		"1:\n\t"
		".rept 16\n\tadd %0, %0, %0\n\t.endr\n\t"
		"subs %1, %1, #1\n\tb.ne 1b"
		: "+r"(x), "+r"(trips) : : "cc");
#else
	for (; trips; trips--)
		for (int i = 0; i < 16; i++)
			__asm__ volatile("" : "+r"(x));
#endif
	return (double)(mono_ns64() - t0) * 1e-9;
}
