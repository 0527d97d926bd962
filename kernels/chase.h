/* Pointer-chase engines: dependent-load chains for memory latency and
 * memory-level parallelism (lmbench lat_mem_rd / par_mem, multichase).
 * Building a chain is separate from chasing it.  Pure C: functions return 0
 * or -errno, never print, never exit. */
#ifndef PMCSH_CHASE_H
#define PMCSH_CHASE_H
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include "kwindow.h"
#include "pages.h"

/* The most chains interleaved in one loop.  Not the registers: past them
 * (about 14 on x86-64) each chain's pointer lives on the stack, and its
 * step is a reload, the chased load and a store.  The out-of-order window:
 * k misses overlap only while one round of k steps fits in it, and a round
 * of 64 is ~190 micro-ops, 60% of a 320-entry reorder buffer, while a
 * core's L1 tracks about 16 to 24 misses (its fill or miss buffers).
 * Beyond 64 the engine would measure its own window, not the memory:
 * CHASE_MAX_K_WHY, the words the refusals and the reports use. */
#define CHASE_MAX_K 64
#define CHASE_STR_(x) #x
#define CHASE_STR(x) CHASE_STR_(x)
#define CHASE_MAX_K_WHY "more chains would measure the engine, not the memory: past the registers each chain's " \
	"step is a reload, the load and a store, and one round of " CHASE_STR(CHASE_MAX_K) " (~190 instructions) " \
	"already fills much of an out-of-order window, while a core tracks a few tens of misses at once"
#define CHASE_UNROLL 100    /* steps of every chain per loop trip, k <= 16 (wider: ceil(100 / k)) */
#define CHASE_PAGE 4096     /* the unit of the page and tlb orders */
#define CHASE_MAX_ELEMS 0xffffffffu
#define CHASE_MIXER 64      /* the mixer's period: element e uses entry e % CHASE_MIXER */

/* Visiting orders, one descriptor table, default first (multichase style).
 * Every order is a single cycle through all elements: the elements are cut
 * into blocks of `block(c)` consecutive elements, the elements of each block
 * are shuffled, the blocks are shuffled, and the result is linked in a ring. */
enum chase_order { CHASE_RANDOM, CHASE_STRIDE, CHASE_PAGEWISE, CHASE_TLB, CHASE_NORDERS };

struct chase_order_desc {
	const char *name;
	const char *description;
	int shuffle_within;   /* shuffle the elements of a block */
	int shuffle_blocks;   /* shuffle the blocks */
	size_t stride;        /* the default stride, bytes */
	const char *stride_why;   /* why that default measures latency, not a prefetcher */
};
extern const struct chase_order_desc chase_orders[CHASE_NORDERS];

struct chase_params {
	size_t size;          /* bytes the chain spans (rounded down to stride) */
	size_t stride;        /* bytes per element, a multiple of sizeof(void *) */
	int order;            /* enum chase_order */
	int pages;            /* enum pages_policy (pages.h) */
	size_t tlb_pages;     /* tlb order: pages (CHASE_PAGE) per group */
	uint64_t seed;
	int fixed_word;       /* every pointer at one offset (the old layout); else mixed */
	int ways;             /* independent cycles over the same elements, 1..CHASE_MAX_K (0: 1) */
};

struct chase_chain {
	struct chase_params p;
	struct pages_buf mem; /* the mapping; mem.map NULL when closed */
	char *base;           /* first element (mem.base) */
	size_t n;             /* elements */
	size_t word;          /* fixed_word: byte offset of the pointer in every element */
	/* else: element e's pointer of cycle w is at word mixer[w][e % CHASE_MIXER];
	 * the cycles of one element use different words where the slot has them */
	uint32_t mixer[CHASE_MAX_K][CHASE_MIXER];
	/* head[k][j]: where chain j of k starts (chase_heads), kept from the
	 * build so the sequence itself need not be. */
	uint32_t head[CHASE_MAX_K + 1][CHASE_MAX_K];
};

/* Checks parameters without allocating: 0, or -EINVAL with *why set. */
int chase_check(const struct chase_params *p, const char **why);

/* Maps the memory and links the cycle.  0 or -errno (-ENOMEM with no huge
 * pages reserved, -EINVAL for bad parameters, -EINTR on Ctrl-C), with what
 * to do in msg.  On error the chain is left closed (chase_free is still
 * safe). */
int chase_build(struct chase_chain *c, const struct chase_params *p, char *msg, size_t msglen);
void chase_free(struct chase_chain *c);

/* Byte offset of element e's pointer inside its stride: words drawn for 64
 * consecutive elements (a table indexed by e % 64, drawn from the seed),
 * repeating (multichase's "mixer" layout).  The 64 entries cut the slot into
 * 64 equal stretches, each stretch once in a shuffled order, a random word
 * inside it; where the slot has fewer than 64 words that is each word
 * equally often.  So the elements of a page or tlb group use every line of
 * their slots alike and no prefetcher (adjacent line, page-local stream)
 * can guess where the next pointer is. */
size_t chase_word(const struct chase_chain *c, size_t e);
/* The same for cycle w of a chain built with ways > 1. */
size_t chase_word_of(const struct chase_chain *c, int w, size_t e);
/* Element index of a pointer into the chain (any word of the element). */
size_t chase_elem(const struct chase_chain *c, const void *q);
/* Element index the pointer of element e leads to in cycle w. */
size_t chase_next(const struct chase_chain *c, int w, size_t e);
/* The k heads, as addresses in heads[]: with one cycle, evenly spaced along
 * it (par_mem: the element at position floor(j*n/k)); with ways > 1, one
 * chain on each of cycles 0..k-1 (multichase's parallel chases; k <= ways).
 * Where the order has blocks (page, tlb groups of bs elements), chain j
 * also starts floor(j*bs/k) positions into its block, so the k chains,
 * which advance in step, cross block boundaries at different loads, as
 * multichase's (at random phases) do, rather than all on the same one. */
void chase_heads(const struct chase_chain *c, int k, void **heads);

struct chase_result {
	int samples_done;     /* timed samples completed */
	uint64_t loads;       /* dependent loads per timed sample, all chains */
	uint64_t warmup_loads;   /* loads of the warm-up, all chains (k chains: k * steps) */
	double warmup_ns;     /* ns per load of the warm-up sample */
	double warmup_s;      /* seconds spent warming up */
};

/* Chases k interleaved chains (one unrolled loop, CHASE_UNROLL steps of each
 * chain per trip; ceil(CHASE_UNROLL / k) for k > 16) from pos[0..k-1]: the k heads when pos is NULL or pos[0]
 * is NULL; pos is left where the chase stopped, so that successive runs go
 * on along the cycle instead of re-walking a stretch the caches and TLBs
 * still hold.  First a warm-up (one full pass of the chain, or at most
 * warmup_s, by default (<= 0) max(200 ms, 4 * sample_s), in chunks) that
 * sizes the samples to about sample_s seconds, then `samples` timed
 * samples, each wrapped by `w` (may be NULL), recorded in ns[] as ns per
 * load.  Stops between samples when Ctrl-C was pressed (-EINTR;
 * res->samples_done says how many are valid). */
int chase_run(const struct chase_chain *c, int k, void **pos, int samples, double sample_s,
	      double warmup_s, const struct kwindow *w, double *ns, struct chase_result *res);

/* The reference: the plain C loop anyone would write, `p = *p` `loads` times
 * from *cursor (the head when NULL), no unrolling, no window; *cursor is
 * left where it stopped so that repeated calls continue along the cycle.
 * Returns ns per load. */
double chase_plain(const struct chase_chain *c, uint64_t loads, void **cursor);

/* Pins the calling thread to cpu me (me < 0: leaves it) after saving its
 * mask in old: 1 when old holds the mask to give back (sched_setaffinity). */
int chase_pin_here(int me, cpu_set_t *old);

/* Loaded latency: `threads` bandwidth threads read their own buffer of
 * bw_size bytes (THP pages when possible), one 64-byte line then an
 * injection delay of `delay` iterations of an empty loop (about one cycle
 * each), while the calling thread chases (k = 1); threads = 0: no loaders,
 * the idle latency measured alike.  Per delay: warm-up, then `samples`
 * samples: rows[d].ns[0..samples-1] get ns per load and mbps_s[] the MB/s
 * (1e6 bytes) the loaders read during each (the caller owns both, samples
 * entries per row), rows[d].mbps the MB/s over all timed samples, which
 * took timed_s seconds.  chaser_ran is the fraction of that time the
 * chasing thread ran on its cpu, loaders_ran the loaders' mean fraction:
 * below 1, other work took their cpus (a busy machine).  The loaders
 * publish their bytes every 4 KiB: a sample's bytes are short of the truth
 * by less than 4 KiB per loader. */
struct chase_loaded_row {
	long delay;
	double mbps, timed_s, chaser_ran, loaders_ran;
	double *ns, *mbps_s;
};
/* The largest injection delay: 10^7 empty iterations (a few ms) after each
 * 64-byte line is a load of a few KB/s, idle for any memory; the loaders
 * poll the stop and interrupt flags inside the delay, so Ctrl-C is served
 * within CHASE_DELAY_POLL iterations whatever the delay. */
#define CHASE_MAX_DELAY 10000000L
#define CHASE_DELAY_POLL 65536L
/* The largest tlb_pages: a group of 2^30 4 KiB pages (4 TiB); more would
 * overflow the group's bytes (tlb_pages * 4096) on the way. */
#define CHASE_MAX_TLB_PAGES (1L << 30)
int chase_loaded(const struct chase_chain *c, const long *delays, int ndelays,
		 int threads, size_t bw_size, int samples, double sample_s,
		 struct chase_loaded_row *rows, int *rows_done);

#endif
