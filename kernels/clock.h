/* The monotonic clock in ns, as the probes and the window code read it.
 * Pure C. */
#ifndef PMCSH_CLOCK_H
#define PMCSH_CLOCK_H
#include <time.h>

static inline double mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

#endif
