/* What pmcsh and the marker library agree on: the environment that turns
 * the library on, and the file each process keeps its counts in.  Pure C,
 * shared by marker/marker.c (inside the user's program) and core/regions.c
 * (pmcsh's reader); neither includes more of the other.
 *
 * The environment, set by `pmcsh stat --regions`:
 *   PMCSH_MARKER_EVENTS  the events, ';' between them, each five hex
 *                        fields: group,type,config,config1,config2,flags
 *                        (group: events of one number are one perf group;
 *                        flags: PMCSH_MK_*)
 *   PMCSH_MARKER_DIR     the folder the library makes its file in
 *   PMCSH_MARKER_RANK    optional: the rank pmcsh saw (the library reads
 *                        SLURM_PROCID, PMI_RANK, OMPI_COMM_WORLD_RANK too)
 *
 * The file, DIR/<pid>.regions (or <pid>-<k>.regions after an exec), is
 * mapped shared by the library and written in place: what a crash leaves
 * is every region's counts up to its last end.  All integers are the
 * host's byte order; pmcsh reads it on the machine that wrote it. */
#ifndef PMCSH_MARKER_ABI_H
#define PMCSH_MARKER_ABI_H
#include <stdint.h>

#define PMCSH_MK_MAGIC "PMCSHRG1"
#define PMCSH_MK_VERSION 2
#define PMCSH_MK_MAX_EVENTS 16
#define PMCSH_MK_MAX_REGIONS 256
#define PMCSH_MK_MAX_THREADS 256
#define PMCSH_MK_MAX_DEPTH 32
#define PMCSH_MK_NAME 128         /* a region's name with its NUL */
#define PMCSH_MK_CAL_BATCHES 8    /* the pair's cost: the quickest of these batches */

/* event flags */
#define PMCSH_MK_EXCL_USER 1
#define PMCSH_MK_EXCL_KERNEL 2
#define PMCSH_MK_EXCL_HV 4
#define PMCSH_MK_EXCL_HOST 8
#define PMCSH_MK_EXCL_GUEST 16
#define PMCSH_MK_CPU_PMU 32       /* the cpu PMU's: may be read from user space */

/* warnings, each said once per process (bits of hdr.warned) */
enum {
	PMCSH_MK_W_ENV = 0,       /* the environment's events are not readable: off */
	PMCSH_MK_W_FILE,          /* the results file cannot be made: off */
	PMCSH_MK_W_OPEN,          /* a thread's counters could not be opened: that thread off */
	PMCSH_MK_W_NAME,          /* a name too long, empty or with control characters: ignored */
	PMCSH_MK_W_REGIONS,       /* more region names than the library holds: ignored */
	PMCSH_MK_W_THREADS,       /* more threads than the file holds: ignored */
	PMCSH_MK_W_DEPTH,         /* regions nested deeper than PMCSH_MK_MAX_DEPTH: ignored */
	PMCSH_MK_W_UNBEGUN,       /* an end of a region that is not open: ignored */
	PMCSH_MK_W_OVERLAP,       /* an end of a region that is not the innermost: overlap */
	PMCSH_MK_W_EXIT_INSIDE,   /* a thread ended inside a region */
	PMCSH_MK_W_READ,          /* a read of the counters failed: that thread off */
	PMCSH_MK_W_FORK,          /* a fork inside a region: the child's ends of it ignored */
	PMCSH_MK_NWARN
};

/* An event's state at a region's begin (the library's own frames). */
struct pmcsh_mk_fev {
	uint64_t start;   /* the count */
	uint64_t lost0;   /* ns the event was enabled but not counting */
};

/* One region's counts on one thread, per event: inclusive, what its nested
 * regions counted inclusive (exclusive = incl - children, exact for every
 * ended call while no call of it is open), ns of its time not counting. */
struct pmcsh_mk_cev {
	uint64_t incl, children, lost;
};
struct pmcsh_mk_counts {
	uint64_t calls;       /* ends */
	uint64_t inner;       /* marker pairs inside its inclusive counts */
	uint64_t clock;       /* its time, summed per call, in ticks of the thread's clock */
	uint64_t iterations;  /* pmcsh_region_iterations' sum */
	uint64_t flags;       /* 1: overlapped another region (its exclusive counts are not given) */
	struct pmcsh_mk_cev ev[PMCSH_MK_MAX_EVENTS];
};

/* One thread's part of the file. */
struct pmcsh_mk_thread {
	int32_t tid;
	uint32_t state;       /* 1: counting; 2: ended; 3: off (open or read failed) */
	uint32_t depth;       /* open regions now */
	uint32_t user_read;   /* 1: counters read in user space (rdpmc), else read() */
	/* the clock's ticks to ns, as perf_event_mmap_page's time_mult and
	 * time_shift say (ns = ticks * mult >> shift); 1 and 0: ticks are ns */
	uint32_t time_mult;
	uint32_t time_shift;
	uint32_t stack[PMCSH_MK_MAX_DEPTH];   /* the open regions' ids, outermost first */
	struct pmcsh_mk_counts regions[PMCSH_MK_MAX_REGIONS];
};

struct pmcsh_mk_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size, thread_size;   /* sizeof the structs, checked by the reader */
	uint32_t nevents;
	int32_t pid, ppid;
	int32_t rank;                        /* -1: none */
	uint32_t finished;                   /* 1: the process ran the library's exit */
	uint32_t nregions;                   /* names published */
	uint32_t nthreads;                   /* thread parts taken */
	uint32_t warned;                     /* PMCSH_MK_W_* bits */
	uint32_t pad;
	/* the cost of one begin/end pair, measured at the first thread's open:
	 * the quickest of PMCSH_MK_CAL_BATCHES batches of cal_pairs pairs, what
	 * a region around them counted more (outer), and what they counted
	 * themselves (self) */
	uint64_t cal_pairs, cal_ns;
	uint64_t cal_outer[PMCSH_MK_MAX_EVENTS], cal_self[PMCSH_MK_MAX_EVENTS];
	char events[2048];                   /* PMCSH_MARKER_EVENTS as read */
	char names[PMCSH_MK_MAX_REGIONS][PMCSH_MK_NAME];
};

#endif
