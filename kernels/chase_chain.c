/* Pointer-chase chains (see chase.h): the orders, built once (mmap,
 * shuffle, link), the layout of each element's pointers, the heads.  The
 * chase itself is chase_run.c, loaded latency chase_loaded.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "chase.h"
#include "clock.h"
#include "interrupt.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>


/* The default strides.  A line (64) where the next element is anywhere
 * (random) or meant to be prefetched (stride): with one pointer per line the
 * footprint is the size, and the curve steps where the caches end.  256 for
 * the grouped orders (page, tlb), whose next element is in the same page or
 * group: with 64-byte elements it shares a 128-byte pair or a recently
 * streamed page region with the last few, and the adjacent-line and
 * page-local prefetchers fetch it before it is asked for; in a 256-byte
 * slot with the pointer on a random line of it (the mixer) the line next to
 * the one loaded holds no pointer of the cycle, and where the next pointer
 * lies cannot be guessed (multichase's default, for the same reason).  A
 * fixed word in each slot would leave a line-stride pattern, which other
 * prefetchers learn: the mixer stays. */
#define WHY_LINE "one pointer per 64-byte line: the footprint is the size, and the next element " \
	"is anywhere (random) or meant to be prefetched (stride)"
#define WHY_SLOT "the next element is near the last (same page or group): with 64-byte elements " \
	"the adjacent-line and page-local prefetchers fetch it and latency reads low; 256-byte slots with " \
	"each pointer on a random line of its slot (the mixer) leave them nothing to guess (multichase's default)"
const struct chase_order_desc chase_orders[CHASE_NORDERS] = {
	[CHASE_RANDOM] = {"random", "a random permutation of all elements (one cycle)", 1, 0, 64, WHY_LINE},
	[CHASE_STRIDE] = {"stride", "sequential at a fixed stride: prefetchable, for comparison", 0, 0, 64, WHY_LINE},
	[CHASE_PAGEWISE] = {"page", "the elements of each 4 KiB page in scrambled order, pages in random order (par_mem)",
			    1, 1, 256, WHY_SLOT},
	[CHASE_TLB] = {"tlb", "random within groups of tlb_pages 4 KiB pages, groups in random order (multichase)",
		       1, 1, 256, WHY_SLOT},
};

/* splitmix64: small, seedable, good enough to shuffle. */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, bound): multiply-shift, bias below bound / 2^64. */
static uint32_t rng_below(uint64_t *s, uint32_t bound)
{
	return (uint32_t)(((unsigned __int128)rng_next(s) * bound) >> 64);
}

/* Fisher-Yates; a large one stops early on Ctrl-C (the caller checks). */
static void shuffle(uint32_t *a, size_t n, uint64_t *s)
{
	for (size_t i = n; i > 1; i--) {
		uint32_t j = rng_below(s, (uint32_t)i);
		uint32_t t = a[i - 1]; a[i - 1] = a[j]; a[j] = t;
		if (!(i & 0x3ffff) && pmcsh_stop_requested())
			return;
	}
}

int chase_check(const struct chase_params *p, const char **why)
{
	if (p->order < 0 || p->order >= CHASE_NORDERS) { *why = "unknown order"; return -EINVAL; }
	if (p->pages < 0 || p->pages >= PAGES_N) { *why = "unknown page policy"; return -EINVAL; }
	if (p->stride < sizeof(void *) || p->stride % sizeof(void *)) {
		*why = "stride must be a positive multiple of the pointer size (8 bytes)";
		return -EINVAL;
	}
	if (p->size == 0) { *why = "size must be positive"; return -EINVAL; }
	if (p->size < p->stride) { *why = "size is smaller than one stride"; return -EINVAL; }
	if (p->size / p->stride > CHASE_MAX_ELEMS) {
		*why = "size too large: more than 2^32-1 elements (use a larger stride)";
		return -EINVAL;
	}
	size_t phys = pages_physical();
	if (phys && p->size > phys) {
		*why = "size too large: more than this machine's physical memory";
		return -EINVAL;
	}
	if (p->tlb_pages == 0 || p->tlb_pages > (size_t)CHASE_MAX_TLB_PAGES) {
		*why = "tlb_pages must be in 1..2^30";
		return -EINVAL;
	}
	if (p->ways < 0 || p->ways > CHASE_MAX_K) { *why = "ways must be in 1.." CHASE_STR(CHASE_MAX_K); return -EINVAL; }
	if (p->ways > 1 && p->fixed_word) { *why = "several cycles need mixed offsets (mix=true)"; return -EINVAL; }
	if (p->stride / sizeof(void *) > UINT32_MAX) { *why = "stride too large (at most 32 GiB)"; return -EINVAL; }
	if (p->ways > 1 && (size_t)p->ways > p->stride / sizeof(void *)) {
		*why = "each cycle needs a word of its own in every element: ways <= stride / 8";
		return -EINVAL;
	}
	return 0;
}

void chase_free(struct chase_chain *c)
{
	pages_unmap(&c->mem);
	c->base = NULL;
}

size_t chase_word_of(const struct chase_chain *c, int w, size_t e)
{
	if (c->p.fixed_word)
		return c->word;
	return (size_t)c->mixer[w][e % CHASE_MIXER] * sizeof(void *);
}

size_t chase_word(const struct chase_chain *c, size_t e)
{
	return chase_word_of(c, 0, e);
}

#define ELEMW(c, w, e) ((void **)((c)->base + (size_t)(e) * (c)->p.stride + chase_word_of(c, w, e)))
#define ELEM(c, e) ELEMW(c, 0, e)

/* The mixer.  Cycle 0: entry i takes stretch order[i] of the slot cut into
 * CHASE_MIXER equal stretches (order[] a shuffle of 0..63, so every stretch
 * once) and a random word inside it: balanced over the lines of the slot
 * whatever the stride, each word equally often when the slot has at most 64.
 * Cycles 1..ways-1: for each entry, random words distinct from each other and
 * from cycle 0's (ways <= nw, chase_check), so that no pointer overwrites
 * another; drawn by rejection, at most CHASE_MAX_K of them, so no table of
 * nw words. */
static void mix_words(struct chase_chain *c, size_t nw, int ways, uint64_t *s)
{
	uint32_t order[CHASE_MIXER];
	for (uint32_t i = 0; i < CHASE_MIXER; i++)
		order[i] = i;
	shuffle(order, CHASE_MIXER, s);
	for (int i = 0; i < CHASE_MIXER; i++) {
		size_t lo = order[i] * nw / CHASE_MIXER, hi = (order[i] + 1) * nw / CHASE_MIXER;
		c->mixer[0][i] = (uint32_t)(hi > lo ? lo + rng_below(s, (uint32_t)(hi - lo)) : lo);
		for (int w = 1; w < ways; w++) {
			uint32_t x;
			int taken;
			do {
				x = rng_below(s, (uint32_t)nw);
				taken = 0;
				for (int v = 0; v < w; v++)
					taken |= c->mixer[v][i] == x;
			} while (taken);
			c->mixer[w][i] = x;
		}
	}
}

/* The sequence: blocks of `bs` elements, each shuffled inside (seq), full
 * blocks visited in the order perm[], a partial last block stays last.
 * Position i along the cycle holds element at_pos(i). */
struct layout { uint32_t *seq, *perm; size_t bs, nfull; };

static uint32_t at_pos(const struct layout *l, size_t i)
{
	size_t b = i / l->bs;
	if (b < l->nfull)
		return l->seq[(size_t)l->perm[b] * l->bs + i % l->bs];
	return l->seq[i];
}

/* Elements per block of the order (page, tlb), n for the others. */
static size_t block_size(const struct chase_params *p, size_t n)
{
	size_t bs = n;
	if (p->order == CHASE_PAGEWISE)
		bs = p->stride >= CHASE_PAGE ? 1 : CHASE_PAGE / p->stride;
	else if (p->order == CHASE_TLB) {
		size_t g = p->tlb_pages * CHASE_PAGE;
		bs = p->stride >= g ? 1 : g / p->stride;
	}
	return bs > n ? n : bs;
}

/* Cycle w: the layout l (its seq and perm filled here from the rng s)
 * linked into one ring through word w of every element, and its heads
 * where there are several cycles.  0, or -EINTR on Ctrl-C. */
static int link_cycle(struct chase_chain *c, struct layout *l, int w, int ways, uint64_t *s)
{
	const struct chase_params *p = &c->p;
	size_t n = c->n, bs = l->bs, nfull = l->nfull;
	uint32_t *seq = l->seq, *perm = l->perm;
	for (size_t i = 0; i < n; i++)
		seq[i] = (uint32_t)i;
	for (size_t b = 0; b < nfull; b++)
		perm[b] = (uint32_t)b;
	if (chase_orders[p->order].shuffle_within) {
		for (size_t b = 0; b < nfull; b++)
			shuffle(seq + b * bs, bs, s);
		shuffle(seq + nfull * bs, n - nfull * bs, s);
	}
	if (chase_orders[p->order].shuffle_blocks)
		shuffle(perm, nfull, s);
	if (pmcsh_stop_requested())
		return -EINTR;
	uint32_t first = at_pos(l, 0), prev = first;
	for (size_t i = 1; i < n; i++) {
		uint32_t e = at_pos(l, i);
		*ELEMW(c, w, prev) = ELEMW(c, w, e);
		prev = e;
		if (!(i & 0x3fff) && pmcsh_stop_requested())   /* each step may fault a page in */
			return -EINTR;
	}
	*ELEMW(c, w, prev) = ELEMW(c, w, first);   /* close the ring */
	for (int k = w + 1; ways > 1 && k <= CHASE_MAX_K; k++)
		c->head[k][w] = at_pos(l, (size_t)w * bs / k);
	return 0;
}

/* One cycle's heads for each k: evenly spaced along it, each j/k of a
 * block further in where the order has blocks. */
static void spread_heads(struct chase_chain *c, const struct layout *l)
{
	size_t n = c->n, bs = l->bs;
	for (int k = 1; k <= CHASE_MAX_K; k++)
		for (int j = 0; j < k; j++) {
			size_t at = (size_t)((unsigned __int128)j * n / k);
			if (bs < n)
				at = (at + (size_t)j * bs / k) % n;
			c->head[k][j] = at_pos(l, at);
		}
}

int chase_build(struct chase_chain *c, const struct chase_params *p, char *msg, size_t msglen)
{
	const char *why;
	int err = chase_check(p, &why);
	memset(c, 0, sizeof *c);
	if (err) {
		snprintf(msg, msglen, "%s", why);
		return err;
	}
	c->p = *p;
	c->n = p->size / p->stride;
	if ((err = pages_check(p->pages, c->n * p->stride, 1, msg, msglen)) ||
	    (err = pages_map(&c->mem, c->n * p->stride, p->pages, 0, msg, msglen)))
		return err;
	c->base = c->mem.base;

	uint64_t s = p->seed ^ 0x636861736531ULL;  /* "chase1" */
	size_t nw = p->stride / sizeof(void *);    /* words in a slot (below 2^32: chase_check) */
	c->word = rng_below(&s, (uint32_t)nw) * sizeof(void *);
	int ways = p->ways > 0 ? p->ways : 1;
	mix_words(c, nw, ways, &s);

	size_t n = c->n, bs = block_size(p, n), nfull = n / bs;
	uint32_t *seq = malloc(n * sizeof *seq), *perm = malloc(nfull * sizeof *perm);
	if (!seq || !perm) {
		free(seq); free(perm); chase_free(c);
		snprintf(msg, msglen, "out of memory for the shuffle");
		return -ENOMEM;
	}
	struct layout l = {seq, perm, bs, nfull};
	for (int w = ways - 1; w >= 0 && !err; w--)   /* each cycle its own order; cycle 0 last, for head[] */
		err = link_cycle(c, &l, w, ways, &s);
	if (!err && ways == 1)
		spread_heads(c, &l);
	free(seq);
	free(perm);
	if (err) {   /* Ctrl-C during a large build */
		chase_free(c);
		snprintf(msg, msglen, "interrupted");
	}
	return err;
}

size_t chase_elem(const struct chase_chain *c, const void *q)
{
	return (size_t)((const char *)q - c->base) / c->p.stride;   /* the offset is below the stride */
}

size_t chase_next(const struct chase_chain *c, int w, size_t e)
{
	return chase_elem(c, *ELEMW(c, w, e));
}

void chase_heads(const struct chase_chain *c, int k, void **heads)
{
	for (int j = 0; j < k; j++)
		heads[j] = ELEMW(c, c->p.ways > 1 ? j : 0, c->head[k][j]);
}
