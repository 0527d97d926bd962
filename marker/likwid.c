/* What LIKWID's programs call beside the region macros: pinning
 * (include/pmcsh/likwid.h) and the Fortran module's procedures (marker/
 * likwid.f90 declares them; gfortran passes a character argument as its
 * address and, after the others, its length). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "../include/pmcsh/marker.h"
#include "../core/marker_abi.h"
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>

#define API __attribute__((visibility("default")))

API int pmcsh_pin_thread(int cpu)
{
	cpu_set_t set;
	if (cpu < 0 || cpu >= CPU_SETSIZE) {
		errno = EINVAL;
		return -1;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof set, &set);
}

API int pmcsh_cpu(void)
{
	cpu_set_t set;
	int saved = errno;
	if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) == 1)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				return c;
	int c = sched_getcpu();
	errno = saved;
	return c;
}

/* A Fortran name (blank-padded, no NUL) as C text in out: its trailing
 * blanks dropped; one too long keeps PMCSH_MK_NAME bytes, so the library
 * refuses it as it refuses a long C name. */
static const char *c_name(const char *tag, size_t len, char out[PMCSH_MK_NAME + 1])
{
	while (len > 0 && tag[len - 1] == ' ')
		len--;
	if (len > PMCSH_MK_NAME)
		len = PMCSH_MK_NAME;
	memcpy(out, tag, len);
	out[len] = 0;
	return out;
}

API void likwid_markerinit_(void) {}
API void likwid_markerclose_(void) {}
API void likwid_markernextgroup_(void) {}
API void likwid_markerthreadinit_(void) { pmcsh_thread_init(); }

API void likwid_markerregisterregion_(const char *tag, size_t len)
{
	char n[PMCSH_MK_NAME + 1];
	pmcsh_region_register(c_name(tag, len, n));
}

API void likwid_markerstartregion_(const char *tag, size_t len)
{
	char n[PMCSH_MK_NAME + 1];
	pmcsh_region_begin(c_name(tag, len, n));
}

API void likwid_markerstopregion_(const char *tag, size_t len)
{
	char n[PMCSH_MK_NAME + 1];
	pmcsh_region_end(c_name(tag, len, n));
}

API void likwid_markerresetregion_(const char *tag, size_t len)
{
	char n[PMCSH_MK_NAME + 1];
	pmcsh_region_reset(c_name(tag, len, n));
}

/* events(1:nr_events) the inclusive counts in -e's order, nr_events how
 * many, time the seconds inside, count the calls: the C macro's. */
API void likwid_markergetregion_(const char *tag, int *nr_events, double *events, double *time, int *count,
				 size_t len)
{
	char n[PMCSH_MK_NAME + 1];
	uint64_t c[PMCSH_MK_MAX_EVENTS], calls = 0;
	int want = *nr_events < PMCSH_MK_MAX_EVENTS ? *nr_events : PMCSH_MK_MAX_EVENTS, have = want;
	c_name(tag, len, n);
	if (want < 0 || pmcsh_region_get(n, c, &have, &calls) < 0)
		have = 0;
	if (have > want)
		have = want;
	for (int i = 0; i < have; i++)
		events[i] = (double)c[i];
	*nr_events = have;
	*time = have > 0 ? pmcsh_region_seconds(n) : 0.0;
	*count = (int)calls;
}
