/* The events handed to the marker library and the files it leaves (see
 * regions.h, core/marker_abi.h).  Pure C: never prints, never exits. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "regions.h"
#include "uread.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int pmc_regions_encode(const struct pmc_group *g, char *out, size_t len, char *msg, size_t mlen)
{
	if (g->nev > PMCSH_MK_MAX_EVENTS) {
		snprintf(msg, mlen, "%d events: the marker library counts at most %d", g->nev, PMCSH_MK_MAX_EVENTS);
		return -E2BIG;
	}
	size_t o = 0;
	out[0] = 0;
	for (int i = 0; i < g->nev; i++) {
		const struct pmc_event *e = &g->ev[i];
		if (e->ncpumask > 0) {
			snprintf(msg, mlen, "%s counts per socket, not per thread: a region's threads cannot count it",
				 e->name);
			return -EINVAL;
		}
		int grp = 0;
		for (int s = 0; s < g->nsub; s++)
			for (int j = 0; j < g->sub[s].n; j++)
				if (g->sub[s].ev[j] == i)
					grp = s;
		const struct perf_event_attr *a = &e->attr;
		unsigned flags = (a->exclude_user ? PMCSH_MK_EXCL_USER : 0) |
				 (a->exclude_kernel ? PMCSH_MK_EXCL_KERNEL : 0) | (a->exclude_hv ? PMCSH_MK_EXCL_HV : 0) |
				 (a->exclude_host ? PMCSH_MK_EXCL_HOST : 0) |
				 (a->exclude_guest ? PMCSH_MK_EXCL_GUEST : 0) | (e->needs_cpu_pmu ? PMCSH_MK_CPU_PMU : 0);
		int n = snprintf(out + o, len - o, "%s%x,%x,%llx,%llx,%llx,%x", i ? ";" : "", grp, a->type,
				 (unsigned long long)a->config, (unsigned long long)a->config1,
				 (unsigned long long)a->config2, flags);
		if (n < 0 || (size_t)n >= len - o) {
			snprintf(msg, mlen, "the events' encodings do not fit the marker library's %zu bytes", len);
			return -E2BIG;
		}
		o += (size_t)n;
	}
	return 0;
}

int pmc_regions_map(const char *path, struct pmc_regions_file *f, char *msg, size_t mlen)
{
	memset(f, 0, sizeof *f);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;
		snprintf(msg, mlen, "%s: %s", path, strerror(e));
		return -e;
	}
	struct stat st;
	const size_t hs = sizeof(struct pmcsh_mk_header), ts = sizeof(struct pmcsh_mk_thread);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (size_t)st.st_size < hs) {
		close(fd);
		snprintf(msg, mlen, "%s: not a marker results file of this user", path);
		return -EINVAL;
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	int e = errno;
	close(fd);
	if (p == MAP_FAILED) {
		snprintf(msg, mlen, "%s: %s", path, strerror(e));
		return -e;
	}
	const struct pmcsh_mk_header *h = p;
	if (memcmp(h->magic, PMCSH_MK_MAGIC, 8) || h->version != PMCSH_MK_VERSION || h->header_size != hs ||
	    h->thread_size != ts || h->nevents < 1 || h->nevents > PMCSH_MK_MAX_EVENTS) {
		munmap(p, (size_t)st.st_size);
		snprintf(msg, mlen, "%s: not a marker results file of this version (a library of another pmcsh?)", path);
		return -EINVAL;
	}
	f->h = h;
	f->len = (size_t)st.st_size;
	f->nevents = h->nevents;
	f->nregions = h->nregions < PMCSH_MK_MAX_REGIONS ? h->nregions : PMCSH_MK_MAX_REGIONS;
	unsigned nt = h->nthreads < PMCSH_MK_MAX_THREADS ? h->nthreads : PMCSH_MK_MAX_THREADS;
	size_t fits = (f->len - hs) / ts;
	f->nthreads = nt < fits ? nt : (unsigned)fits;
	return 0;
}

void pmc_regions_unmap(struct pmc_regions_file *f)
{
	if (f->h)
		munmap((void *)f->h, f->len);
	f->h = NULL;
}

const struct pmcsh_mk_thread *pmc_regions_thread(const struct pmc_regions_file *f, unsigned k)
{
	return (const void *)((const char *)f->h + sizeof *f->h + (size_t)k * sizeof(struct pmcsh_mk_thread));
}

void pmc_regions_name(const struct pmc_regions_file *f, unsigned id, char *out)
{
	memcpy(out, f->h->names[id], PMCSH_MK_NAME);
	out[PMCSH_MK_NAME - 1] = 0;
}

void pmc_regions_counts(const struct pmc_regions_file *f, const struct pmcsh_mk_thread *th, unsigned id,
			struct pmc_region_counts *out)
{
	const struct pmcsh_mk_counts *k = &th->regions[id];
	uint64_t ns = th->time_mult ? pmc_mmap_time_delta(k->clock, (uint16_t)th->time_shift, th->time_mult, 0) : 0;
	for (unsigned i = 0; i < f->nevents; i++) {
		out->incl[i] = k->ev[i].incl;
		out->excl[i] = k->ev[i].incl - k->ev[i].children;
		out->enabled[i] = ns;
		out->running[i] = k->ev[i].lost < ns ? ns - k->ev[i].lost : 0;
	}
	unsigned depth = th->depth < PMCSH_MK_MAX_DEPTH ? th->depth : PMCSH_MK_MAX_DEPTH;
	out->open = 0;
	for (unsigned d = 0; d < depth; d++)
		out->open |= th->stack[d] == id;
}
