/* pmcsh/marker.h: regions of your own program, counted by
 * `pmcsh stat --regions -e EVENTS -- ./app`.
 *
 *     #include <pmcsh/marker.h>
 *     pmcsh_region_begin("solve");
 *     ... the work ...
 *     pmcsh_region_end("solve");
 *     pmcsh_region_iterations("solve", n);   (optional: per-iteration rows)
 *
 * Build:  cc app.c $(pkg-config --cflags --libs pmcsh-marker)
 *
 * Each thread counts its own regions, on counters it opens at its first
 * region; regions nest (a per-thread stack), and a region's exclusive
 * count is its inclusive count less its nested regions'.  Under pmcsh the
 * events are the ones `stat -e` named; without it every call returns at
 * once and nothing is opened, printed or written.  Compiled with
 * -DPMCSH_NO_MARKERS the calls are gone.  A name is at most 127 bytes of
 * printable text; a call with a bad one is ignored, said once on stderr.
 * An end given the very pointer the innermost region was begun with ends
 * that region (its text is not compared again).
 * No call changes errno or the program's output. */
#ifndef PMCSH_MARKER_H
#define PMCSH_MARKER_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef PMCSH_NO_MARKERS
void pmcsh_region_begin(const char *name);
void pmcsh_region_end(const char *name);
/* Adds n to the calling thread's iterations of the region: its counts are
 * also given per iteration, divided by this sum. */
void pmcsh_region_iterations(const char *name, uint64_t n);
/* Optional: opens the calling thread's counters now (else at its first
 * region), so that first region's begin is as cheap as the others. */
void pmcsh_thread_init(void);
/* Optional: declares a region now, so its first begin finds its name. */
void pmcsh_region_register(const char *name);
/* The calling thread's counts of a region so far: calls made, up to *n
 * inclusive counts in order of the events (*n becomes the number of
 * events).  Returns 0, or -1 when nothing is counted (off, or unknown). */
int pmcsh_region_get(const char *name, uint64_t *counts, int *n, uint64_t *calls);
/* The calling thread's time inside a region so far, in seconds (wall
 * clock, summed over its calls); 0 when nothing is counted. */
double pmcsh_region_seconds(const char *name);
/* Forgets the calling thread's counts of a region. */
void pmcsh_region_reset(const char *name);
#else
#define pmcsh_region_begin(name) ((void)0)
#define pmcsh_region_end(name) ((void)0)
#define pmcsh_region_iterations(name, n) ((void)0)
#define pmcsh_thread_init() ((void)0)
#define pmcsh_region_register(name) ((void)0)
#define pmcsh_region_get(name, counts, n, calls) (-1)
#define pmcsh_region_seconds(name) (0.0)
#define pmcsh_region_reset(name) ((void)0)
#endif

#ifdef __cplusplus
}
#endif
#endif
