/* likwid.h for pmcsh: the companions of LIKWID's Marker API that programs
 * written for it call, on libpmcsh-marker (pkg-config pmcsh-likwid): the
 * Marker API itself (likwid-marker.h) and pinning.  LIKWID's own library
 * API (perfmon_*, topology_*) is not here: pmcsh stat is its counterpart.
 *
 *   likwid_pinThread(cpu)    the calling thread onto cpu: 1, or 0 (errno)
 *   likwid_pinProcess(cpu)   the same (threads made later inherit it, as
 *                            LIKWID's, which pins the calling thread too)
 *   likwid_getProcessorId()  the cpu the thread is pinned to, else the one
 *                            it runs on now */
#ifndef PMCSH_LIKWID_H
#define PMCSH_LIKWID_H
#include <likwid-marker.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 0, or -1 with errno (the cpu is not one this thread may run on) */
int pmcsh_pin_thread(int cpu);
/* the cpu of a thread pinned to one, else the cpu it runs on; -1: unknown */
int pmcsh_cpu(void);

static inline int likwid_pinThread(int processorId)
{
	return pmcsh_pin_thread(processorId) == 0;
}
static inline int likwid_pinProcess(int processorId)
{
	return pmcsh_pin_thread(processorId) == 0;
}
static inline int likwid_getProcessorId(void)
{
	return pmcsh_cpu();
}

#ifdef __cplusplus
}
#endif
#endif
