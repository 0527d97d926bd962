/* The counter layer: event names to perf_event_attr (libpfm4, sysfs PMUs,
 * raw rNNNN), perf groups (one per PMU) on a set of targets, snapshots and
 * scaled deltas.  Pure C: no Lua, no printing; functions return 0 or -errno
 * and write human messages into caller buffers. */
#ifndef PMCSH_COUNTER_H
#define PMCSH_COUNTER_H
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#define PMC_NAME_MAX 256
#define PMC_MAX_EVENTS 64  /* events in one pmc group */
#define PMC_MAX_CPUS 256   /* cpus of one cpu-wide target / cpumask */
#define PMC_ERR_MAX 512

/* A resolved event: everything needed to open it and report it. */
struct pmc_event {
	char name[PMC_NAME_MAX];  /* as the user wrote it */
	char canon[PMC_NAME_MAX]; /* fully qualified (libpfm fstr or pmu/terms/) */
	char pmu[64];             /* PMU name: libpfm "perf", "skl", or sysfs dir */
	char unit[32];            /* sysfs .unit, "" if none */
	double scale;             /* sysfs .scale, 1.0 if none */
	int source;               /* PMC_SRC_* */
	int pfm_idx;              /* libpfm event index, -1 if not libpfm */
	int needs_cpu_pmu;        /* hardware/raw: only a cpu PMU counts it */
	int ncpumask;             /* >0: PMU counts per socket on these cpus */
	int cpumask[8];
	struct perf_event_attr attr;
};

enum { PMC_SRC_PFM = 1, PMC_SRC_SYSFS, PMC_SRC_RAW, PMC_SRC_ALIAS };

/* libpfm4: initialise once (force = NULL: the host's PMUs, or a libpfm PMU
 * name as LIBPFM_FORCE_PMU). Returns 0 or -EINVAL with msg filled. */
int pmc_pfm_init(const char *force, char *msg, size_t len);
/* The PMU name libpfm is currently forced to, or NULL. */
const char *pmc_pfm_forced(void);

/* Resolves `name` into `ev`.  Returns 0, or -ENOENT (unknown event; msg has
 * up to three close suggestions) or -EINVAL (bad syntax). */
int pmc_resolve(const char *name, struct pmc_event *ev, char *msg, size_t len);

/* True when a cpu (core) PMU is exposed in /sys/bus/event_source/devices. */
int pmc_have_cpu_pmu(void);
/* kernel.perf_event_paranoid, or -100 when unreadable. */
int pmc_paranoid(void);

/* The message for a failed perf_event_open of `ev` (err > 0 is errno). */
void pmc_open_strerror(const struct pmc_event *ev, int err, char *msg, size_t len);

/* Values of one counter: a delta between two snapshots. */
struct pmc_count {
	double value;       /* raw * scale, extrapolated by enabled/running */
	uint64_t raw, enabled, running;
	int multiplexed;    /* running < enabled on some instance */
};

/* The multiplex arithmetic: value = raw * scale * enabled / running.
 * Returns 0, or -EBUSY when enabled > 0 and running == 0 (never scheduled). */
int pmc_scale(uint64_t raw, uint64_t enabled, uint64_t running, double scale,
	      double *value, int *multiplexed);

/* One perf group (events of one PMU) on one target (pid, cpu). */
struct pmc_inst {
	pid_t pid;
	int cpu;
	int fd[PMC_MAX_EVENTS];        /* per event of the sub group, -1 when closed */
	uint64_t id[PMC_MAX_EVENTS];
	uint64_t base_en, base_run, base_raw[PMC_MAX_EVENTS];  /* baseline snapshot */
	uint64_t cur_en, cur_run, cur_raw[PMC_MAX_EVENTS];     /* last snapshot */
};

struct pmc_sub {
	int n;                  /* events in this perf group */
	int ev[PMC_MAX_EVENTS]; /* their indices in pmc_group.ev */
	int ninst;
	struct pmc_inst *inst;
};

/* Targets: pid 0 = the calling thread, >0 a thread/process; cpus: list for
 * cpu-wide counting (pid must be -1). */
struct pmc_target {
	pid_t pid;
	int ncpus;
	int cpus[PMC_MAX_CPUS];
	int inherit;         /* count children created after opening */
	int enable_on_exec;  /* start counting at exec (pmc.run) */
	int pinned;          /* pinned leaders: an evicted group reads 0 bytes */
};

struct pmc_group {
	int nev;
	struct pmc_event *ev;   /* nev entries, owned by the caller */
	int nsub;
	struct pmc_sub *sub;    /* room for nev entries, owned by the caller */
	int open;            /* fds are open */
	int enabled;
};

/* Groups `g->ev` by PMU into sub groups (call after filling ev/nev). */
void pmc_group_layout(struct pmc_group *g);
/* Opens every sub group on the target (disabled).  On failure everything
 * opened is closed, returns -errno, *bad = index of the failing event. */
int pmc_group_open(struct pmc_group *g, const struct pmc_target *t, int *bad);
/* Idempotent. */
void pmc_group_close(struct pmc_group *g);
/* Enable / disable all leaders (two ioctls per sub group instance). */
int pmc_group_enable(struct pmc_group *g);
int pmc_group_disable(struct pmc_group *g);
/* Reads every instance into its cur_* snapshot. -EBUSY: a pinned group in
 * error state (0 bytes read). */
int pmc_group_snapshot(struct pmc_group *g);
/* base_* = cur_* for every instance. */
void pmc_group_rebase(struct pmc_group *g);
/* out[i] (nev entries) = cur - base, summed over instances and scaled.
 * Returns 0 or -EBUSY (an enabled group never ran); *bad = the event. */
int pmc_group_delta(const struct pmc_group *g, struct pmc_count *out, int *bad);
/* Accumulates cur - base of every instance into raw/en/run arrays
 * (per event), used by windows that sum repetitions. */
void pmc_group_accumulate(const struct pmc_group *g, uint64_t *raw, uint64_t *en, uint64_t *run);
/* Number of open fds. */
int pmc_group_nfds(const struct pmc_group *g);

/* Fast read path: whether the first event's mmap page allows rdpmc.
 * Returns 1 with nothing in why, or 0 with the reason in why. */
int pmc_rdpmc_probe(int fd, char *why, size_t len);
/* Reads a counter through its mmap page with rdpmc (page from
 * pmc_rdpmc_map).  Returns 0 or -EAGAIN when the event is off the PMU. */
void *pmc_rdpmc_map(int fd);
void pmc_rdpmc_unmap(void *page);
int pmc_rdpmc_read(void *page, uint64_t *value);

/* Listing: calls fn for every event of the present (or forced) PMUs. */
struct pmc_listed {
	const char *name, *pmu, *desc;
	int idx;     /* libpfm event index, -1 for sysfs */
};
typedef int (*pmc_list_fn)(void *ctx, const struct pmc_listed *e);
int pmc_list(pmc_list_fn fn, void *ctx);
/* Whether `ev` opens on this machine for the calling thread. */
int pmc_try_open(const struct pmc_event *ev);

/* Attributes (umasks, modifiers) of a libpfm event. */
struct pmc_attr {
	const char *name, *desc;
	int type;    /* PFM_ATTR_UMASK, PFM_ATTR_MOD_BOOL, PFM_ATTR_MOD_INTEGER */
	uint64_t code;
	int is_dfl;
};
typedef int (*pmc_attr_fn)(void *ctx, const struct pmc_attr *a);
/* Looks up the libpfm event of `ev` and reports its description and
 * attributes.  Returns 0 or -ENOENT (not a libpfm event). */
int pmc_event_attrs(const struct pmc_event *ev, const char **desc, pmc_attr_fn fn, void *ctx);

/* Edit distance on lower-cased strings (suggestions). */
int pmc_edit_distance(const char *a, const char *b);

#endif
