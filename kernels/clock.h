/* The monotonic clock, the one reader of it: the kernels, the probes, the
 * window code, machine.c, the host's Ctrl-C timer and Lua's _sys.now.
 * Pure C; clock_gettime is async-signal-safe. */
#ifndef PMCSH_CLOCK_H
#define PMCSH_CLOCK_H
#include <stdint.h>
#include <time.h>

static inline int64_t mono_ns64(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline double mono_ns(void)
{
	return (double)mono_ns64();
}

static inline double mono_s(void)
{
	return (double)mono_ns64() * 1e-9;
}

#endif
