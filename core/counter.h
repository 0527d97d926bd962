/* The counter layer: event names to perf_event_attr (libpfm4, sysfs PMUs,
 * raw rNNNN), perf groups (one per PMU) on a set of targets, snapshots and
 * scaled deltas.  Pure C: no Lua, no printing; functions return 0 or -errno
 * and write human messages into caller buffers.  One header over its files:
 * evname.c (naming, suggestions, listing), sysfs.c (the machine's perf
 * files, the pmu/terms/ grammar), group.c (groups), rdpmc.c (user reads). */
#ifndef PMCSH_COUNTER_H
#define PMCSH_COUNTER_H
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/perf_event.h>
#include "uread.h"

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
	int precise_max;          /* :P: the open lowers attr.precise_ip until it opens */
	int precise_guest;        /* p set exclude_guest itself: the open drops it where refused */
	int ncpumask;             /* >0: PMU counts per socket on these cpus */
	int cpumask[8];
	struct perf_event_attr attr;
};

enum { PMC_SRC_PFM = 1, PMC_SRC_SYSFS, PMC_SRC_RAW, PMC_SRC_ALIAS, PMC_SRC_TRACEPOINT };

/* libpfm4: initialised once per process, never again (libpfm 4.13 reads
 * freed memory when re-initialised).  force = NULL: the host's PMUs (or the
 * user's LIBPFM_FORCE_PMU); a libpfm PMU name: this process is that model
 * for good (a child of pfmforced.c).  Returns 0, -EINVAL with msg filled,
 * or -EBUSY when already initialised for another model. */
int pmc_pfm_init(const char *force, char *msg, size_t len);
/* The PMU name libpfm is forced to in this process, or NULL. */
const char *pmc_pfm_forced(void);

/* Resolves `name` into `ev`.  Returns 0, or -ENOENT (unknown event; msg has
 * up to three close suggestions) or -EINVAL (bad syntax). */
int pmc_resolve(const char *name, struct pmc_event *ev, char *msg, size_t len);

/* An event name's syntax, perf's grammar (parse-events.y) for the forms
 * pmcsh opens: NAME[:MODS] (generic, rNNNN, libpfm4 PMU::EV:ATTR),
 * PMU/TERMS/[MODS] (also PMU/TERMS/:MODS) and the group {A,B,...}[:MODS],
 * whose modifiers apply to each member.  MODS: letters of u, k, h, G, H,
 * p (up to three) and P (evmods.h), one string per name. */
enum { PMC_FORM_NAME = 1, PMC_FORM_SYSFS, PMC_FORM_GROUP };
struct pmc_name {
	int form;
	char base[PMC_NAME_MAX];  /* without the modifiers ("msr/tsc/"); a group: its body "a,b" */
	char pmu[64];             /* the sysfs form's PMU, "" otherwise */
	char mods[16];            /* the modifier letters as written, "" none */
	char priv[4];             /* its u, k and h letters, in that order */
	int weak;                 /* a group's :W (perf's weak group: split where it cannot count together) */
};
/* Parses `name` into n: 0, or -EINVAL with msg saying what is wrong. */
int pmc_name_parse(const char *name, struct pmc_name *n, char *msg, size_t len);
/* The name of n with the modifier string `mods` in its form's place
 * (cycles:u, msr/tsc/u, {a,b}:u; "" none): 0, or -ENAMETOOLONG. */
int pmc_name_compose(const struct pmc_name *n, const char *mods, char *out, size_t len);
/* The one list splitter: calls fn(ctx, item, n) for each item of s (its
 * n bytes), split at the commas outside a sysfs event's slashes
 * (pmu/a=1,b=2/ stays whole) and a group's braces, spaces around an item
 * cut, empty items left out unless keep_empty.  Returns 0 or fn's non-zero. */
int pmc_split_list(const char *s, int keep_empty, int (*fn)(void *ctx, const char *item, size_t n), void *ctx);
/* perf's generic event names: the i-th, NULL past the last. */
const char *pmc_generic_name(int i);

/* True when a cpu (core) PMU is exposed in /sys/bus/event_source/devices. */
int pmc_have_cpu_pmu(void);
/* kernel.perf_event_paranoid, or -100 when unreadable. */
int pmc_paranoid(void);

/* The message for a failed perf_event_open of `ev` on target t (NULL: the
 * calling thread); err > 0 is errno.  A refusal (EACCES, EPERM) names
 * what the kernel refused here: another user's process, the kernel or
 * whole cpus at this perf_event_paranoid, or a security module. */
struct pmc_target;
void pmc_open_strerror(const struct pmc_event *ev, const struct pmc_target *t, int err, char *msg, size_t len);

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
	int socket;                    /* physical package of cpu, -1 for a task target */
	int fd[PMC_MAX_EVENTS];        /* per event of the sub group, -1 when closed */
	uint64_t id[PMC_MAX_EVENTS];
	uint64_t base_en, base_run, base_raw[PMC_MAX_EVENTS];  /* baseline snapshot */
	uint64_t cur_en, cur_run, cur_raw[PMC_MAX_EVENTS];     /* last snapshot */
	void *page[PMC_MAX_EVENTS];    /* mmap'd perf_event_mmap_page per fd (rdpmc), or NULL */
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
	int mapped;          /* some instance has rdpmc pages (pmc_group_map) */
	int current;         /* cur_* are the counts now: disabled since the last snapshot */
	int exec_enabled;    /* enable_on_exec: the kernel enables it, so never current */
	uint64_t fast_reads, slow_reads;  /* snapshots of mapped instances: rdpmc / read() */
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
/* New baseline, then enable: the window's start.  Reads the counters only
 * when the last snapshot may be stale (g->current). */
int pmc_group_start(struct pmc_group *g);
/* Reads every instance into its cur_* snapshot (rdpmc for mapped instances
 * while enabled and on the PMU, read() otherwise). -EBUSY: a pinned group in
 * error state (0 bytes read). */
int pmc_group_snapshot(struct pmc_group *g);
/* base_* = cur_* for every instance. */
void pmc_group_rebase(struct pmc_group *g);
/* out[i] (nev entries) = cur - base, summed over instances and scaled.
 * Returns 0 or -EBUSY (an enabled group never ran); *bad = the event. */
int pmc_group_delta(const struct pmc_group *g, struct pmc_count *out, int *bad);
/* How a reading's counts c (nev entries, each summed over its instances)
 * were scheduled, once for the group: a perf group is enabled and scheduled
 * as a unit, so its first event's times are every member's.  Where g's
 * events span several perf groups (one per PMU), the times of the one that
 * ran the smallest share of its enabled time; multiplexed when any event
 * was scaled. */
struct pmc_sched {
	uint64_t enabled, running;
	int multiplexed;
};
void pmc_group_sched(const struct pmc_group *g, const struct pmc_count *c, struct pmc_sched *out);
/* The delta of instance k (0 <= k < *ninst) of event `ev` alone, scaled;
 * *cpu and *socket say where it counted (-1 for a task target).  Returns 0,
 * -ENOENT (no such instance) or -EBUSY (never scheduled). */
int pmc_inst_delta(const struct pmc_group *g, int ev, int k, struct pmc_count *out, int *ninst, int *cpu,
		   int *socket);
/* Accumulates cur - base of every instance into raw/en/run arrays
 * (per event), used by windows that sum repetitions. */
void pmc_group_accumulate(const struct pmc_group *g, uint64_t *raw, uint64_t *en, uint64_t *run);
/* Number of open fds. */
int pmc_group_nfds(const struct pmc_group *g);

/* Maps the page of every fd of the hardware sub groups, when the target
 * allows self-monitoring reads (the calling thread, no inherit) and the
 * kernel sets cap_user_rdpmc.  Returns 1 (g->mapped; pmc_group_snapshot then
 * reads running instances with rdpmc), or 0 with the reason in why.
 * Pages are unmapped by pmc_group_close. */
int pmc_group_map(struct pmc_group *g, const struct pmc_target *t, char *why, size_t len);

/* Listing: calls fn for every event of the present (or forced) PMUs. */
struct pmc_listed {
	const char *name, *pmu, *desc;
	int idx;     /* libpfm event index, -1 for sysfs */
};
typedef int (*pmc_list_fn)(void *ctx, const struct pmc_listed *e);
int pmc_list(pmc_list_fn fn, void *ctx);
/* Every PMU model libpfm4 was built with, present here or not: its name,
 * description ("Intel Skylake"), whether it is present (or forced) and its
 * number of events.  Returns 0 or a negative libpfm4 error. */
struct pmc_model {
	const char *name, *desc;
	int present, nevents;
};
typedef int (*pmc_model_fn)(void *ctx, const struct pmc_model *m);
int pmc_models(pmc_model_fn fn, void *ctx);
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

/* Everything pmc.info tells of `name`: ev filled, *encoded 1, or 0 for a
 * bare libpfm event that needs a umask (msg says why); its description
 * into desc; fn called for each attribute.  Returns 0 or -errno with msg
 * (an unknown event: -ENOENT and suggestions). */
#define PMC_DESC_MAX 2048
int pmc_about(const char *name, struct pmc_event *ev, int *encoded, char *desc, size_t dlen, pmc_attr_fn fn,
	      void *ctx, char *msg, size_t len);

/* Finds the libpfm event named by a bare `name` ("EVENT" or "pmu::EVENT",
 * no attributes) without encoding it, for events that cannot be encoded
 * without a umask: fills name, canon, pmu and pfm_idx.  Returns 0 or
 * -ENOENT. */
int pmc_pfm_lookup(const char *name, struct pmc_event *ev);

/* Edit distance on lower-cased strings (suggestions). */
int pmc_edit_distance(const char *a, const char *b);

#endif
