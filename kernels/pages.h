/* Page policy of the buffers the engines measure (STREAM arrays, chase
 * chains): one table, default first, one mapper, one set of huge-page
 * messages.  Pure C: functions return 0 or -errno and leave a sentence
 * saying what to do in a caller's buffer; they never print. */
#ifndef PMCSH_PAGES_H
#define PMCSH_PAGES_H
#include <stddef.h>

enum pages_policy { PAGES_4K, PAGES_THP, PAGES_2M, PAGES_1G, PAGES_N };

struct pages_desc {
	const char *name;         /* "4k", "thp", "2m", "1g" (matched case-insensitively) */
	const char *description;
	size_t align;             /* mapping alignment and length granule */
	long hugetlb_kb;          /* MAP_HUGETLB page size, 0 when not reserved pages */
};
extern const struct pages_desc pages_policies[PAGES_N];

/* The policy named `name` (any case), or -1. */
int pages_find(const char *name);

/* One mapping: `map`/`len` as mmap gave them, `base` the aligned start. */
struct pages_buf { void *map; size_t len; char *base; };

/* Before mapping `nbufs` buffers of `bytes` each with reserved huge pages:
 * 0 when enough are free, else -ENOMEM (too few reserved) or -EOPNOTSUPP
 * (this kernel has none of that size) with what to do in msg.  0 for the
 * other policies. */
int pages_check(int policy, size_t bytes, int nbufs, char *msg, size_t msglen);

/* Maps `bytes` (rounded up to the policy's page) with the policy, base
 * aligned to the policy's page and at least to `align` (0: the policy's).
 * 4k asks for MADV_NOHUGEPAGE, thp for MADV_HUGEPAGE.  0, or -errno with
 * b->map NULL and what to do in msg. */
int pages_map(struct pages_buf *b, size_t bytes, int policy, size_t align, char *msg, size_t msglen);
/* Unmaps; idempotent. */
void pages_unmap(struct pages_buf *b);

/* This machine's physical memory in bytes, 0 when unknown: what no
 * engine's buffers may pass. */
size_t pages_physical(void);

/* The one reader of the huge page counts: file (free_hugepages,
 * nr_hugepages) of the kb-sized pages under root (NULL: /), -1 when the
 * kernel has no such size or the file no number. */
long pages_hugetlb_count(const char *root, long kb, const char *file);

#endif
