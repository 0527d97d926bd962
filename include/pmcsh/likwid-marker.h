/* likwid-marker.h for pmcsh: a program instrumented with LIKWID's Marker
 * API, built against this header and libpmcsh-marker instead of LIKWID's,
 * runs unchanged under `pmcsh stat --regions -e EVENTS -- ./app`:
 *
 *     cc -DLIKWID_PERFMON app.c $(pkg-config --cflags --libs pmcsh-likwid)
 *
 * START/STOP are pmcsh's region begin/end (regions nest: exclusive counts
 * come with the inclusive ones), REGISTER and THREADINIT open early what
 * the first START would, GET returns the calling thread's inclusive counts
 * in the order of stat's -e, its time inside the region in seconds (wall
 * clock, as LIKWID's RDTSC runtime) and its calls; RESET forgets them.  The
 * events are stat's -e, one set for the run: SWITCH does nothing.  INIT,
 * CLOSE and WRITE_FILE have nothing to do: the counts are written to
 * pmcsh's file as they are made, and pmcsh stat prints them.  <likwid.h>
 * brings the pinning functions; a Fortran program's `use likwid` finds
 * likwid.mod beside this header (installed where gfortran is).  Without
 * LIKWID_PERFMON every macro is empty, as LIKWID's are. */
#ifndef PMCSH_LIKWID_MARKER_H
#define PMCSH_LIKWID_MARKER_H

#ifdef LIKWID_PERFMON
#include <pmcsh/marker.h>
#include <stdint.h>

static inline void likwid_markerInit(void) {}
static inline void likwid_markerThreadInit(void) { pmcsh_thread_init(); }
static inline void likwid_markerNextGroup(void) {}
static inline void likwid_markerClose(void) {}
static inline int likwid_markerWriteFile(const char *markerfile)
{
	(void)markerfile;
	return 0;
}
static inline int likwid_markerRegisterRegion(const char *tag)
{
	pmcsh_region_register(tag);
	return 0;
}
static inline int likwid_markerStartRegion(const char *tag)
{
	pmcsh_region_begin(tag);
	return 0;
}
static inline int likwid_markerStopRegion(const char *tag)
{
	pmcsh_region_end(tag);
	return 0;
}
static inline int likwid_markerResetRegion(const char *tag)
{
	pmcsh_region_reset(tag);
	return 0;
}
static inline void likwid_markerGetRegion(const char *tag, int *nr_events, double *events, double *time, int *count)
{
	uint64_t c[16], calls = 0;
	int n = nr_events && *nr_events < 16 ? *nr_events : 16;
	int have = n;
	if (pmcsh_region_get(tag, c, &have, &calls) < 0)
		have = 0;
	if (have < n)
		n = have;
	for (int i = 0; events && i < n; i++)
		events[i] = (double)c[i];
	if (nr_events)
		*nr_events = n;
	if (time)
		*time = have > 0 ? pmcsh_region_seconds(tag) : 0.0;
	if (count)
		*count = (int)calls;
}

#define LIKWID_MARKER_INIT likwid_markerInit()
#define LIKWID_MARKER_THREADINIT likwid_markerThreadInit()
#define LIKWID_MARKER_SWITCH likwid_markerNextGroup()
#define LIKWID_MARKER_REGISTER(regionTag) likwid_markerRegisterRegion(regionTag)
#define LIKWID_MARKER_START(regionTag) likwid_markerStartRegion(regionTag)
#define LIKWID_MARKER_STOP(regionTag) likwid_markerStopRegion(regionTag)
#define LIKWID_MARKER_CLOSE likwid_markerClose()
#define LIKWID_MARKER_WRITE_FILE(markerfile) likwid_markerWriteFile(markerfile)
#define LIKWID_MARKER_RESET(regionTag) likwid_markerResetRegion(regionTag)
#define LIKWID_MARKER_GET(regionTag, nevents, events, time, count) \
	likwid_markerGetRegion(regionTag, nevents, events, time, count)
#else
#define LIKWID_MARKER_INIT
#define LIKWID_MARKER_THREADINIT
#define LIKWID_MARKER_SWITCH
#define LIKWID_MARKER_REGISTER(regionTag)
#define LIKWID_MARKER_START(regionTag)
#define LIKWID_MARKER_STOP(regionTag)
#define LIKWID_MARKER_CLOSE
#define LIKWID_MARKER_WRITE_FILE(markerfile)
#define LIKWID_MARKER_GET(regionTag, nevents, events, time, count)
#define LIKWID_MARKER_RESET(regionTag)
#endif

#endif
