/* Page policy (see pages.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "pages.h"
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#define MiB2 (2UL << 20)
#define GiB1 (1UL << 30)

const struct pages_desc pages_policies[PAGES_N] = {
	[PAGES_4K] = {"4k", "4 KiB pages (MADV_NOHUGEPAGE)", 4096, 0},
	[PAGES_THP] = {"thp", "transparent huge pages (MADV_HUGEPAGE, 2 MiB aligned)", MiB2, 0},
	[PAGES_2M] = {"2m", "reserved 2 MiB huge pages (MAP_HUGETLB)", MiB2, 2048},
	[PAGES_1G] = {"1g", "reserved 1 GiB huge pages (MAP_HUGETLB)", GiB1, 1048576},
};

int pages_find(const char *name)
{
	for (int i = 0; name && i < PAGES_N; i++)
		if (!strcasecmp(name, pages_policies[i].name))
			return i;
	return -1;
}

static const char *hp_words(long kb) { return kb == 2048 ? "2 MiB" : "1 GiB"; }

long pages_hugetlb_count(const char *root, long kb, const char *file)
{
	char path[512];
	long n = -1;
	snprintf(path, sizeof path, "%s/sys/kernel/mm/hugepages/hugepages-%ldkB/%s", root ? root : "", kb, file);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

size_t pages_physical(void)
{
	long pg = sysconf(_SC_PAGESIZE), np = sysconf(_SC_PHYS_PAGES);
	return pg > 0 && np > 0 ? (size_t)pg * (size_t)np : 0;
}

int pages_check(int policy, size_t bytes, int nbufs, char *msg, size_t msglen)
{
	const struct pages_desc *d = &pages_policies[policy];
	if (!d->hugetlb_kb)
		return 0;
	long need = nbufs * (long)((bytes + d->align - 1) / d->align), have = pages_hugetlb_count(NULL, d->hugetlb_kb, "free_hugepages");
	if (have < 0) {
		snprintf(msg, msglen, "this kernel offers no %s huge pages (no "
			 "/sys/kernel/mm/hugepages/hugepages-%ldkB): use pages thp or 4k",
			 hp_words(d->hugetlb_kb), d->hugetlb_kb);
		return -EOPNOTSUPP;
	}
	if (have < need) {
		snprintf(msg, msglen, "pages %s need %ld free %s huge pages, %ld are reserved and free: "
			 "echo %ld > /sys/kernel/mm/hugepages/hugepages-%ldkB/nr_hugepages (or use pages thp)",
			 d->name, need, hp_words(d->hugetlb_kb), have, need, d->hugetlb_kb);
		return -ENOMEM;
	}
	return 0;
}

void pages_unmap(struct pages_buf *b)
{
	if (b->map)
		munmap(b->map, b->len);
	b->map = NULL;
	b->base = NULL;
	b->len = 0;
}

int pages_map(struct pages_buf *b, size_t bytes, int policy, size_t align, char *msg, size_t msglen)
{
	const struct pages_desc *d = &pages_policies[policy];
	size_t len = (bytes + d->align - 1) / d->align * d->align, extra = 0;
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	if (align < d->align)
		align = d->align;
	memset(b, 0, sizeof *b);
	if (d->hugetlb_kb)   /* hugetlb mappings come aligned to their page */
		flags |= MAP_HUGETLB | ((d->hugetlb_kb == 2048 ? 21 : 30) << MAP_HUGE_SHIFT);
	else if (align > 4096)
		extra = align;   /* over-map, then start at the boundary */
	void *m = mmap(NULL, len + extra, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (m == MAP_FAILED) {
		int e = errno;
		if (d->hugetlb_kb)
			snprintf(msg, msglen, "cannot map %zu MiB of %s huge pages (%s): too few reserved "
				 "(see /sys/kernel/mm/hugepages/hugepages-%ldkB/nr_hugepages, or use pages=\"thp\")",
				 len >> 20, hp_words(d->hugetlb_kb), strerror(e), d->hugetlb_kb);
		else
			snprintf(msg, msglen, "mmap of %zu MiB failed (%s): use a smaller size", (len + extra) >> 20,
				 strerror(e));
		return -e;
	}
	b->map = m;
	b->len = len + extra;
	b->base = (char *)(((uintptr_t)m + align - 1) & ~(uintptr_t)(align - 1));
	/* The advice covers [base, base+len) only: neighbouring buffers then
	 * stay separate entries in smaps.  4k fails only without THP, where 4
	 * KiB pages are all there is. */
	if (policy == PAGES_4K)
		madvise(b->base, len, MADV_NOHUGEPAGE);
	else if (policy == PAGES_THP && madvise(b->base, len, MADV_HUGEPAGE) < 0) {
		int e = errno;
		snprintf(msg, msglen, "madvise(MADV_HUGEPAGE) failed (%s): %s", strerror(e),
			 e == EINVAL ? "this kernel has no transparent huge pages; use pages=\"4k\"" :
			 "check /sys/kernel/mm/transparent_hugepage");
		pages_unmap(b);
		return -e;
	}
	return 0;
}
