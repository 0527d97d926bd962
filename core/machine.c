/* Machine facts (see machine.h): sysfs and procfs under a root, sysconf
 * where sysfs is silent. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "machine.h"
#include "sysfs.h"
#include "../kernels/clock.h"
#include "../kernels/pages.h"
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#define CPU_DIR "/sys/devices/system/cpu"
#define HP_DIR "/sys/kernel/mm/hugepages"

static const char *R(const char *root) { return root ? root : ""; }

/* The text of the one-line file root+path, trailing blanks cut
 * (pmc_read_text): 0 or -errno. */
static int read_line(const char *root, const char *path, char *buf, size_t len)
{
	char full[1024];
	snprintf(full, sizeof full, "%s%s", R(root), path);
	int n = pmc_read_text(full, buf, len);
	return n < 0 ? n : 0;
}

static long read_long(const char *root, const char *path, long def)
{
	char buf[64];
	return read_line(root, path, buf, sizeof buf) == 0 && buf[0] ? atol(buf) : def;
}

/* sysfs sizes: "48K", "2048K", "32M" */
static size_t parse_size(const char *s)
{
	char *end;
	size_t v = strtoull(s, &end, 10);
	switch (*end) {
	case 'K': return v << 10;
	case 'M': return v << 20;
	case 'G': return v << 30;
	}
	return v;
}

/* Cache index i of cpu from sysfs: 1 when it is a data or unified cache,
 * 0 when it is an instruction cache, -1 past the last index. */
static int sysfs_cache(const char *root, int cpu, int i, struct machine_cache *c)
{
	char path[256], buf[256];
#define IDX(file) (snprintf(path, sizeof path, CPU_DIR "/cpu%d/cache/index%d/" file, cpu, i), path)
	if (read_line(root, IDX("level"), buf, sizeof buf) < 0)
		return -1;
	memset(c, 0, sizeof *c);
	c->level = atoi(buf);
	if (read_line(root, IDX("type"), c->type, sizeof c->type) < 0 || !strcmp(c->type, "Instruction"))
		return 0;
	if (read_line(root, IDX("size"), buf, sizeof buf) == 0)
		c->size = parse_size(buf);
	c->line = (int)read_long(root, IDX("coherency_line_size"), 0);
	read_line(root, IDX("shared_cpu_list"), c->shared, sizeof c->shared);
#undef IDX
	return 1;
}

/* glibc's view (cpuid on x86): levels 1 (data) to 4, where it knows them. */
static int sysconf_caches(struct machine_cache *out, int max)
{
	static const int names[][2] = {
		{_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL1_DCACHE_LINESIZE},
		{_SC_LEVEL2_CACHE_SIZE, _SC_LEVEL2_CACHE_LINESIZE},
		{_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL3_CACHE_LINESIZE},
		{_SC_LEVEL4_CACHE_SIZE, _SC_LEVEL4_CACHE_LINESIZE},
	};
	int n = 0;
	for (int l = 0; l < 4 && n < max; l++) {
		long size = sysconf(names[l][0]), line = sysconf(names[l][1]);
		if (size <= 0)
			continue;
		memset(&out[n], 0, sizeof out[n]);
		out[n].level = l + 1;
		snprintf(out[n].type, sizeof out[n].type, "%s", l ? "Unified" : "Data");
		out[n].size = (size_t)size;
		out[n].line = line > 0 ? (int)line : 0;
		n++;
	}
	return n;
}

int machine_caches(const char *root, int cpu, struct machine_cache *out, int max, const char **source)
{
	int n = 0, r;
	struct machine_cache c;
	for (int i = 0; n < max && (r = sysfs_cache(root, cpu, i, &c)) >= 0; i++)
		if (r) {   /* insert by level: sysfs lists them ascending, but says nothing of it */
			int j = n++;
			for (; j > 0 && out[j - 1].level > c.level; j--)
				out[j] = out[j - 1];
			out[j] = c;
		}
	*source = "sysfs";
	if (n == 0) {   /* a fake root stays what it is: no fallback to this host */
		*source = "none";
		if (!R(root)[0] && (n = sysconf_caches(out, max)) > 0)
			*source = "sysconf";
	}
	return n;
}

/* The last-level cache of each cpu is its highest-level data or unified
 * cache; a cache shared by several cpus appears under each of them with the
 * same shared_cpu_list, and counts once. */
size_t machine_llc_bytes(const char *root, int *ncaches)
{
	char pat[512];
	glob_t g;
	size_t total = 0;
	int nseen = 0;
	*ncaches = 0;
	snprintf(pat, sizeof pat, "%s" CPU_DIR "/cpu[0-9]*", R(root));
	if (glob(pat, 0, NULL, &g) != 0)
		return 0;
	struct machine_cache *seen = calloc(g.gl_pathc + 1, sizeof *seen);
	for (size_t i = 0; seen && i < g.gl_pathc; i++) {
		struct machine_cache c[MACHINE_MAX_CACHES];
		int cpu = atoi(strrchr(g.gl_pathv[i], 'u') + 1);   /* ".../cpuN" */
		int n = 0, r;
		for (int k = 0; n < MACHINE_MAX_CACHES && (r = sysfs_cache(root, cpu, k, &c[n])) >= 0; k++)
			n += r;
		if (n == 0)
			continue;
		struct machine_cache *llc = &c[0];
		for (int k = 1; k < n; k++)
			if (c[k].level > llc->level)
				llc = &c[k];
		if (!llc->shared[0])
			snprintf(llc->shared, sizeof llc->shared, "cpu%d", cpu);
		int dup = 0;
		for (int k = 0; k < nseen; k++)
			dup |= seen[k].level == llc->level && !strcmp(seen[k].shared, llc->shared);
		if (dup)
			continue;
		seen[nseen++] = *llc;
		total += llc->size;
	}
	free(seen);
	globfree(&g);
	*ncaches = nseen;
	return total;
}

int machine_allowed_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int k = 0;
	if (sched_getaffinity(0, sizeof set, &set) < 0)
		return -errno;
	for (int c = 0; c < CPU_SETSIZE && k < max; c++)
		if (CPU_ISSET(c, &set))
			cpus[k++] = c;
	return k;
}

int machine_online(const char *root, char *buf, size_t len)
{
	return read_line(root, CPU_DIR "/online", buf, len);
}

void machine_place(const char *root, int cpu, struct machine_place *p)
{
	char path[512];
	static const char *const ids[] = {"die_id", "core_id"};
	int *out[] = {&p->die, &p->core};
	p->socket = machine_socket(root, cpu);
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof path, CPU_DIR "/cpu%d/topology/%s", cpu, ids[i]);
		long v = read_long(root, path, 0);
		*out[i] = v < 0 ? 0 : (int)v;
	}
	p->node = 0;   /* the cpu's directory holds a nodeN link */
	snprintf(path, sizeof path, "%s" CPU_DIR "/cpu%d", R(root), cpu);
	DIR *d = opendir(path);
	for (struct dirent *e; d && (e = readdir(d));)
		if (sscanf(e->d_name, "node%d", &p->node) == 1)
			break;
	if (d)
		closedir(d);
}

int machine_socket(const char *root, int cpu)
{
	char path[128];
	snprintf(path, sizeof path, CPU_DIR "/cpu%d/topology/physical_package_id", cpu);
	long v = read_long(root, path, 0);
	return v < 0 ? 0 : (int)v;
}

int machine_hugepages(const char *root, struct machine_hugepages *out, int max)
{
	char dir[512];
	int n = 0;
	snprintf(dir, sizeof dir, "%s" HP_DIR, R(root));
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d)) && n < max;) {
		long kb;
		if (sscanf(e->d_name, "hugepages-%ldkB", &kb) != 1)
			continue;
		struct machine_hugepages h = {kb, 0, 0};
		h.nr = pages_hugetlb_count(root, kb, "nr_hugepages");
		h.free = pages_hugetlb_count(root, kb, "free_hugepages");
		h.nr = h.nr < 0 ? 0 : h.nr;
		h.free = h.free < 0 ? 0 : h.free;
		int j = n++;
		for (; j > 0 && out[j - 1].kb > kb; j--)
			out[j] = out[j - 1];
		out[j] = h;
	}
	closedir(d);
	return n;
}

int machine_thp(const char *root, char *buf, size_t len)
{
	return read_line(root, "/sys/kernel/mm/transparent_hugepage/enabled", buf, len);
}

long machine_mem_available_kb(const char *root)
{
	char path[512], line[256];
	long kb = -1;
	snprintf(path, sizeof path, "%s/proc/meminfo", R(root));
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "MemAvailable: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

double machine_clock_tick(void)
{
	int64_t best = INT64_MAX;
	for (int i = 0; i < 64; i++) {
		int64_t t0 = mono_ns64(), t1;
		while ((t1 = mono_ns64()) == t0)
			;
		if (t1 - t0 < best)
			best = t1 - t0;
	}
	struct timespec res;
	if (clock_getres(CLOCK_MONOTONIC, &res) == 0) {
		int64_t r = (int64_t)res.tv_sec * 1000000000 + res.tv_nsec;
		if (r > best)
			best = r;
	}
	return best * 1e-9;
}

/* The value of the first cpuinfo line starting with `key`, into buf. */
static int cpuinfo(const char *root, const char *key, char *buf, size_t len)
{
	char path[512], line[8192];
	int found = 0;
	snprintf(path, sizeof path, "%s/proc/cpuinfo", R(root));
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof line, f)) {
		char *colon = strchr(line, ':');
		if (strncmp(line, key, strlen(key)) || !colon)
			continue;
		snprintf(buf, len, "%s", colon + 1 + (colon[1] == ' '));
		buf[strcspn(buf, "\n")] = 0;
		found = 1;
	}
	fclose(f);
	return found;
}

#if defined(__x86_64__) || defined(__i386__)
/* One end: the rdtsc read between two clock reads closest together, of
 * 16 tries; its time is their midpoint.  Returns the bracket's width (ns). */
static int64_t tsc_end(uint64_t *ticks, double *ns)
{
	int64_t best = INT64_MAX;
	for (int i = 0; i < 16; i++) {
		int64_t a = mono_ns64();
		uint64_t c = __rdtsc();
		int64_t b = mono_ns64();
		if (b - a < best) {
			best = b - a;
			*ticks = c;
			*ns = 0.5 * ((double)a + (double)b);
		}
	}
	return best;
}
#endif

int machine_tsc_hz(int ms, double *hz)
{
	*hz = 0;
	if (ms < 1 || ms > 10000)
		return -EINVAL;
#if defined(__x86_64__) || defined(__i386__)
	if (!machine_tsc_usable(NULL))
		return 0;
	uint64_t c0, c1;
	double t0, t1;
	int64_t w0 = tsc_end(&c0, &t0);
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	int64_t w1 = tsc_end(&c1, &t1);
	/* each end known to its bracket: within 0.1% of the interval, or no answer */
	if (t1 <= t0 || (double)(w0 + w1) > 1e-3 * (t1 - t0))
		return 0;
	*hz = (double)(c1 - c0) / ((t1 - t0) * 1e-9);
#endif
	return 0;
}

int machine_tsc_usable(const char *root)
{
#if defined(__x86_64__) || defined(__i386__)
	char flags[8192] = " ";
	if (!cpuinfo(root, "flags", flags + 1, sizeof flags - 2))
		return 0;
	strcat(flags, " ");
	return strstr(flags, " constant_tsc ") && strstr(flags, " nonstop_tsc ");
#else
	(void)root;
	return 0;
#endif
}

void machine_model(const char *root, char *buf, size_t len)
{
	if (!cpuinfo(root, "model name", buf, len))
		snprintf(buf, len, "unknown");
}

int machine_hypervisor(const char *root, char *buf, size_t len)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	if (!root && __get_cpuid(1, &a, &b, &c, &d)) {
		buf[0] = 0;
		if (!(c & (1u << 31)))      /* ecx bit 31: running under a hypervisor */
			return 0;
		/* leaf 0x40000000: the vendor's 12 bytes in ebx, ecx, edx */
		char sig[13] = {0};
		__cpuid(0x40000000, a, b, c, d);
		memcpy(sig, &b, 4), memcpy(sig + 4, &c, 4), memcpy(sig + 8, &d, 4);
		size_t n = strlen(sig);
		while (n > 0 && sig[n - 1] == ' ')
			sig[--n] = 0;
		snprintf(buf, len, "%s", sig[0] ? sig : "unknown");
		return 0;
	}
#endif
	if (read_line(root, "/sys/hypervisor/type", buf, len) == 0 && buf[0])
		return 0;
	return -ENOENT;
}

int machine_arch(char *buf, size_t len)
{
	struct utsname u;
	if (uname(&u) < 0)
		return -errno;
	snprintf(buf, len, "%s", u.machine);
	return 0;
}
