/* Machine facts: the cpus this process may run on, the caches, huge pages,
 * memory, the clock and the TSC.  Read where asked (never cached across
 * calls that may see hotplug), Lua-free; the binding is core/lmachine.c,
 * the Lua face lua/pmcsh/machine.lua.  `root` prefixes every sysfs and
 * procfs path (NULL or "" for the real ones), so that a fake tree can be
 * parsed in a spec. */
#ifndef PMCSH_MACHINE_H
#define PMCSH_MACHINE_H
#include <stddef.h>

#define MACHINE_MAX_CACHES 16

struct machine_cache {
	int level;
	char type[16];          /* "Data", "Unified" (instruction caches are left out) */
	size_t size;            /* bytes, 0 unknown */
	int line;               /* coherency line size, 0 unknown */
	char shared[256];       /* shared_cpu_list, "" unknown */
};

/* The data and unified caches of `cpu`, level ascending; returns their
 * count and sets *source to "sysfs", or where sysfs lists none (some VMs,
 * containers) to "sysconf" (glibc, from cpuid on x86) or "none". */
int machine_caches(const char *root, int cpu, struct machine_cache *out, int max, const char **source);
/* The sum of the last-level caches over all cpus, a cache shared by several
 * cpus counted once; *ncaches gets how many.  0 when unknown. */
size_t machine_llc_bytes(const char *root, int *ncaches);

/* The cpus this process may run on (sched_getaffinity): their count, or -errno. */
int machine_allowed_cpus(int *cpus, int max);
/* The online cpu list as sysfs writes it ("0-3,8"), or -errno. */
int machine_online(const char *root, char *buf, size_t len);

/* Where a cpu sits; an id sysfs does not give reads 0. */
struct machine_place { int socket, die, core, node; };
void machine_place(const char *root, int cpu, struct machine_place *p);
/* The physical package alone (where a per-socket count is told apart). */
int machine_socket(const char *root, int cpu);

struct machine_hugepages {
	long kb;                /* page size */
	long nr, free;          /* reserved, and of those free */
};
/* Every huge page size the kernel offers (hugepages-*kB), size ascending. */
int machine_hugepages(const char *root, struct machine_hugepages *out, int max);
/* The transparent huge page mode ("always [madvise] never"), or -errno. */
int machine_thp(const char *root, char *buf, size_t len);
/* MemAvailable in kB, -1 unknown. */
long machine_mem_available_kb(const char *root);

/* Like STREAM's checktick: the smallest step CLOCK_MONOTONIC is seen to
 * take (including the cost of reading it), seconds. */
double machine_clock_tick(void);
/* 1 when the TSC ticks at a constant rate through idle states (cpuinfo
 * flags constant_tsc and nonstop_tsc); 0 elsewhere or off x86. */
int machine_tsc_usable(const char *root);

/* The TSC's rate (Hz) as the stream engine sees it: rdtsc ticks over
 * CLOCK_MONOTONIC, each end the tightest of a few bracketing reads, `ms`
 * milliseconds apart (a sleep: the TSC runs whether or not this task does).
 * 0 when a usable TSC is not there (machine_tsc_usable) or the brackets
 * stayed wide; -EINVAL for ms out of 1..10000. */
int machine_tsc_hz(int ms, double *hz);
/* The cpu's model name from cpuinfo ("unknown" when none is given). */
void machine_model(const char *root, char *buf, size_t len);
/* The hypervisor this runs under, into buf: on x86 without a root, cpuid's
 * signature (leaf 0x40000000: "KVMKVMKVM", "Microsoft Hv"), "" when cpuid's
 * hypervisor bit is clear (bare metal); else /sys/hypervisor/type.  0, or
 * -ENOENT when nothing tells. */
int machine_hypervisor(const char *root, char *buf, size_t len);
/* The machine's architecture as uname(2) says it ("x86_64"): 0 or -errno. */
int machine_arch(char *buf, size_t len);

#endif
