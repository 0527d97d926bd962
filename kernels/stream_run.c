/* The STREAM engine: arrays with a page policy, a pool of pinned workers
 * that first-touch and stream their static part, timed repetitions with a
 * counter window around each, and STREAM's validation.  Pure C. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "stream.h"
#include "clock.h"
#include "interrupt.h"
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

#define TWO_MIB (2ul << 20)
#define STREAM_EPS 1e-13	/* STREAM's bound for 8-byte reals */
#define SUM_EPS 1e-9		/* reordered summation of n terms */

struct part {
	size_t lo, cnt;
	size_t head;		/* elements of a short window (stream_shape.alternate) */
	size_t off, len;	/* the kernel job's elements: [off, off + len) of the part */
	int cpu;
	pid_t tid;
	pthread_t th;
	int started;
	double *a, *b, *c;	/* arrays offset to lo */
	double result;		/* kernel's partial sum */
	void *state;		/* an own-data loop's, from its init */
	double err[3];		/* validation: sum of |x - expected| */
	size_t bad[3];		/* first element off by more than the bound */
	char pad[64];
};

struct map {
	struct pages_buf buf;
	double *arr;		/* buf.base + offset */
};

enum job { JOB_NONE, JOB_KERNEL, JOB_INIT, JOB_CHECK, JOB_OWN_INIT, JOB_OWN_FINI };

/* Which elements of each part a kernel pass runs over. */
enum span { SPAN_ALL, SPAN_HEAD, SPAN_TAIL };

struct stream {
	size_t n;
	int threads, pages, touched, pin;
	int stoppable;		/* JOB_INIT may stop on Ctrl-C: the stream is being created */
	size_t offset;
	struct map map[3];
	double expect[3];
	struct part *parts;

	/* pool: workers live for one call (a session) and spin on gen inside
	 * it; none is left between calls, where the collector could not see
	 * them (200 dropped streams kept 27 threads) */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int quit;
	int up;			/* the workers are running */
	_Atomic int active;
	_Atomic unsigned gen;
	_Atomic int done;
	enum job job;
	stream_fn kfn;
	const struct stream_kernel *kown;	/* an own-data loop, kfn NULL */

	cpu_set_t saved;	/* the caller's affinity during a call */
	int saved_ok;
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static inline uint64_t tsc_now(void)
{
#if HAVE_TSC
	return __rdtsc();
#else
	return 0;
#endif
}

#define INIT_CHUNK ((size_t)1 << 20)	/* elements of each array */

/* One part's share of a job (the kernel job is run inline by callers). */
static void part_work(struct stream *s, int i)
{
	struct part *p = &s->parts[i];
	switch (s->job) {
	case JOB_KERNEL:	/* one path for whole, head and tail passes: they differ in data only */
		if (s->kfn)
			p->result = s->kfn(p->a + p->off, p->b + p->off, p->c + p->off, STREAM_SCALAR, p->len);
		else
			s->kown->own(p->state, p->lo + p->off, p->lo + p->off + p->len);
		break;
	case JOB_OWN_INIT:	/* on the part's own thread: its first touch places the pages */
		p->state = s->kown->init_part ? s->kown->init_part(p->lo, p->lo + p->cnt, s->n, i, s->threads) :
			   s->kown->init ? s->kown->init(s->n, i, s->threads) : NULL;
		break;
	case JOB_OWN_FINI:
		if (s->kown->fini)
			s->kown->fini(p->state);
		p->state = NULL;
		break;
	case JOB_INIT:
		/* in chunks of 24 MiB (first touch: milliseconds) between looks
		 * at Ctrl-C, when the caller can give up (stream_create) */
		for (size_t lo = 0; lo < p->cnt; lo += INIT_CHUNK) {
			if (s->stoppable && pmcsh_stop_requested())
				break;
			size_t hi = p->cnt - lo < INIT_CHUNK ? p->cnt : lo + INIT_CHUNK;
			for (size_t j = lo; j < hi; j++) {
				p->a[j] = 1.0;
				p->b[j] = 2.0;
				p->c[j] = 0.0;
			}
		}
		break;
	case JOB_CHECK: {
		double *x[3] = {p->a, p->b, p->c};
		for (int k = 0; k < 3; k++) {
			double e = s->expect[k], lim = STREAM_EPS * (e != 0 ? fabs(e) : 1);
			const double *v = x[k];
			size_t j = 0, bad = (size_t)-1;
			/* four sums, so the adds do not wait on each other: memory's pace */
			double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
			for (; j + 4 <= p->cnt; j += 4) {
				s0 += fabs(v[j] - e);
				s1 += fabs(v[j + 1] - e);
				s2 += fabs(v[j + 2] - e);
				s3 += fabs(v[j + 3] - e);
			}
			for (; j < p->cnt; j++)
				s0 += fabs(v[j] - e);
			double sum = (s0 + s1) + (s2 + s3);
			/* no element is off by more than the sum: look for the first only then */
			for (j = 0; sum > lim && j < p->cnt; j++)
				if (fabs(v[j] - e) > lim) {
					bad = p->lo + j;
					break;
				}
			p->err[k] = sum;
			p->bad[k] = bad;
		}
		break;
	}
	case JOB_NONE:
		break;
	}
}

/* Worker main: the stream, part index and the generation already seen
 * (no dispatch runs while workers start) travel in a small struct. */
struct wstart {
	struct stream *s;
	int i;
	unsigned seen;
};

/* A worker's faults unblocked and its own alternate signal stack: a fault
 * handler installed with SA_ONSTACK (core/guard.c's, around a user's loop)
 * then runs, and says the crash, even where the loop overflowed this
 * thread's stack. */
enum { WORKER_ALTSTACK = 64 * 1024 };

static void *altstack_on(void)
{
	/* the faults a loop makes come to the thread that makes them: blocked
	 * (the workers are started with every signal blocked), the kernel
	 * would end the process without running any handler */
	sigset_t faults;
	sigemptyset(&faults);
	sigaddset(&faults, SIGSEGV);
	sigaddset(&faults, SIGBUS);
	sigaddset(&faults, SIGFPE);
	sigaddset(&faults, SIGILL);
	pthread_sigmask(SIG_UNBLOCK, &faults, NULL);
	void *mem = malloc(WORKER_ALTSTACK);
	stack_t st = {.ss_sp = mem, .ss_size = WORKER_ALTSTACK};
	if (mem && sigaltstack(&st, NULL) != 0) {
		free(mem);
		mem = NULL;
	}
	return mem;
}

static void altstack_off(void *mem)
{
	if (!mem)
		return;
	stack_t st = {.ss_flags = SS_DISABLE};
	sigaltstack(&st, NULL);
	free(mem);
}

static void *worker_main(void *arg)
{
	struct wstart ws = *(struct wstart *)arg;
	struct stream *s = ws.s;
	struct part *p = &s->parts[ws.i];
	unsigned seen = ws.seen;
	void *alt = altstack_on();
	free(arg);
	__atomic_store_n(&p->tid, gettid(), __ATOMIC_RELEASE);
	for (;;) {
		pthread_mutex_lock(&s->mu);
		while (!atomic_load(&s->active) && !s->quit)
			pthread_cond_wait(&s->cv, &s->mu);
		int quit = s->quit;
		pthread_mutex_unlock(&s->mu);
		if (quit)
			break;
		for (;;) {
			unsigned g = atomic_load_explicit(&s->gen, memory_order_acquire);
			if (g != seen) {
				seen = g;
				part_work(s, ws.i);
				atomic_fetch_add_explicit(&s->done, 1, memory_order_release);
				continue;
			}
			if (!atomic_load_explicit(&s->active, memory_order_acquire))
				break;
			cpu_relax();
		}
	}
	altstack_off(alt);
	return NULL;
}

static int workers_up(struct stream *s, char *msg, size_t msglen);
static void workers_down(struct stream *s);

/* A call: workers start (if not already for stream_worker_tids) and spin,
 * the caller moves to its cpu. */
static int session_begin(struct stream *s)
{
	char msg[160];
	int rc = workers_up(s, msg, sizeof msg);
	if (rc < 0)
		return rc;
	if (s->pin) {
		cpu_set_t set;
		s->saved_ok = pthread_getaffinity_np(pthread_self(), sizeof s->saved, &s->saved) == 0;
		CPU_ZERO(&set);
		CPU_SET(s->parts[0].cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	}
	if (s->threads > 1) {
		pthread_mutex_lock(&s->mu);
		atomic_store(&s->active, 1);
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
	}
	return 0;
}

static void session_end(struct stream *s)
{
	atomic_store(&s->active, 0);
	workers_down(s);
	if (s->pin && s->saved_ok)
		pthread_setaffinity_np(pthread_self(), sizeof s->saved, &s->saved);
}

/* Starts the workers on the current job and does part 0; returns when all
 * parts are done (the workers' writes visible). */
static inline void dispatch(struct stream *s)
{
	if (s->threads > 1) {
		atomic_store_explicit(&s->done, 0, memory_order_relaxed);
		atomic_fetch_add_explicit(&s->gen, 1, memory_order_release);
	}
	part_work(s, 0);
	if (s->threads > 1)
		while (atomic_load_explicit(&s->done, memory_order_acquire) < s->threads - 1)
			cpu_relax();
}

static int run_job(struct stream *s, enum job j)
{
	int rc = session_begin(s);
	if (rc < 0)
		return rc;
	s->job = j;
	dispatch(s);
	session_end(s);
	return 0;
}

/* STREAM's rule: each array at least 4x the sum of the last-level caches.
 * Without them, STREAM's own default of 10 million. */
size_t stream_default_n(size_t llc_bytes)
{
	if (!llc_bytes)
		return 10000000;
	size_t n = (4 * llc_bytes + 7) / 8;
	return (n + 1023) & ~(size_t)1023;
}

/* ---- create / destroy ---- */

/* Each array starts 2 MiB-aligned (plus the offset) whatever the policy, so
 * that THP can back it from its first byte and the arrays alias alike. */
static int map_array(struct stream *s, int k, char *msg, size_t msglen)
{
	struct map *m = &s->map[k];
	int rc = pages_map(&m->buf, s->offset + s->n * sizeof(double), s->pages, TWO_MIB, msg, msglen);
	if (rc == 0)
		m->arr = (double *)(m->buf.base + s->offset);
	return rc;
}

int stream_check(const struct stream_opts *o, char *msg, size_t msglen)
{
	size_t bytes = 3 * (o->offset + o->n * sizeof(double));
	if (pages_policies[o->pages].hugetlb_kb)
		return pages_check(o->pages, o->offset + o->n * sizeof(double), 3, msg, msglen);
	long avail = o->mem_available_kb;
	if (avail > 0 && bytes / 1024 > (size_t)avail) {
		snprintf(msg, msglen, "3 arrays of %zu MiB need %zu MiB but only %ld MiB are available: use a smaller n",
			 (o->n * sizeof(double)) >> 20, bytes >> 20, avail >> 10);
		return -ENOMEM;
	}
	return 0;
}

/* Starts the workers (parts 1..threads-1), pinned, and waits until each
 * has published its tid.  0 or -errno with msg filled (none left). */
static int workers_up(struct stream *s, char *msg, size_t msglen)
{
	if (s->threads == 1 || s->up)
		return 0;
	sigset_t all, old;
	int rc = 0;
	/* Workers never take the host's Ctrl-C; the caller polls the flag. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int i = 1; i < s->threads; i++) {
		pthread_attr_t attr;
		struct wstart *ws = malloc(sizeof *ws);
		if (!ws) {
			snprintf(msg, msglen, "out of memory starting worker thread %d", i);
			rc = -ENOMEM;
			break;
		}
		ws->s = s;
		ws->i = i;
		ws->seen = atomic_load(&s->gen);
		s->parts[i].tid = 0;
		pthread_attr_init(&attr);
		if (s->pin) {
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET(s->parts[i].cpu, &set);
			pthread_attr_setaffinity_np(&attr, sizeof set, &set);
		}
		int e = pthread_create(&s->parts[i].th, &attr, worker_main, ws);
		pthread_attr_destroy(&attr);
		if (e) {
			free(ws);
			snprintf(msg, msglen, "cannot start worker thread %d on cpu %d (%s)", i, s->parts[i].cpu, strerror(e));
			rc = -e;
			break;
		}
		s->parts[i].started = 1;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	s->up = 1;
	if (rc < 0) {
		workers_down(s);
		return rc;
	}
	for (int i = 1; i < s->threads; i++)
		while (!__atomic_load_n(&s->parts[i].tid, __ATOMIC_ACQUIRE))
			sched_yield();
	return 0;
}

/* Ends and joins the workers; the next call starts new ones. */
static void workers_down(struct stream *s)
{
	if (!s->up)
		return;
	pthread_mutex_lock(&s->mu);
	s->quit = 1;
	atomic_store(&s->active, 0);
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	for (int i = 1; i < s->threads; i++)
		if (s->parts[i].started)
			pthread_join(s->parts[i].th, NULL);
	for (int i = 1; i < s->threads; i++) {
		s->parts[i].started = 0;
		s->parts[i].tid = 0;
	}
	s->quit = 0;
	s->up = 0;
}

int stream_create(struct stream **out, const struct stream_opts *o, char *msg, size_t msglen)
{
	struct stream *s;
	int rc;
	*out = NULL;
	msg[0] = 0;
	if (o->n == 0 || o->threads < 1 || o->threads > STREAM_MAX_THREADS || o->offset % 8) {
		snprintf(msg, msglen, "invalid stream options");
		return -EINVAL;
	}
	if ((rc = stream_check(o, msg, msglen)) < 0)
		return rc;
	s = calloc(1, sizeof *s);
	if (!s)
		return -ENOMEM;
	s->n = o->n;
	s->threads = o->threads;
	s->pages = o->pages;
	s->offset = o->offset;
	s->pin = o->pin;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->parts = aligned_alloc(64, ((sizeof *s->parts * o->threads) + 63) & ~(size_t)63);
	if (!s->parts) {
		rc = -ENOMEM;
		goto error;
	}
	memset(s->parts, 0, sizeof *s->parts * o->threads);
	for (int k = 0; k < 3; k++)
		if ((rc = map_array(s, k, msg, msglen)) < 0)
			goto error;
	/* Static partition; inner boundaries on multiples of 8 elements so no
	 * two threads write one cache line (with offset 0). */
	for (int i = 0; i < s->threads; i++) {
		size_t lo = i ? (s->n / s->threads * i + s->n % s->threads * i / s->threads) & ~(size_t)7 : 0;
		size_t hi = i + 1 < s->threads ?
			(s->n / s->threads * (i + 1) + s->n % s->threads * (i + 1) / s->threads) & ~(size_t)7 : s->n;
		struct part *p = &s->parts[i];
		p->lo = lo;
		p->cnt = hi > lo ? hi - lo : 0;
		p->cpu = o->cpus ? o->cpus[i] : -1;
		p->a = s->map[0].arr + lo;
		p->b = s->map[1].arr + lo;
		p->c = s->map[2].arr + lo;
	}
	if (!o->cpus)
		s->pin = 0;
	s->parts[0].tid = gettid();
	if ((rc = workers_up(s, msg, msglen)) < 0)  /* fail here, not in a later call */
		goto error;
	s->stoppable = 1;
	rc = o->touch ? stream_reset(s) : run_job(s, JOB_NONE);
	s->stoppable = 0;
	if (rc == 0 && pmcsh_stop_requested()) {
		snprintf(msg, msglen, "interrupted");  /* the arrays may be half initialised: none is kept */
		rc = -EINTR;
	}
	if (rc < 0)
		goto error;
	*out = s;
	return 0;
error:
	if (!msg[0])
		snprintf(msg, msglen, "%s", strerror(-rc));
	stream_destroy(s);
	return rc;
}

void stream_destroy(struct stream *s)
{
	if (!s)
		return;
	if (s->parts)
		workers_down(s);
	for (int k = 0; k < 3; k++)
		pages_unmap(&s->map[k].buf);
	free(s->parts);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
}

size_t stream_n(const struct stream *s) { return s->n; }
int stream_threads(const struct stream *s) { return s->threads; }
size_t stream_offset(const struct stream *s) { return s->offset; }
int stream_touched(const struct stream *s) { return s->touched; }
double *stream_array(const struct stream *s, int which) { return s->map[which].arr; }
double stream_expected(const struct stream *s, int which) { return s->expect[which]; }

int stream_worker_tids(struct stream *s, pid_t *tids, int max)
{
	char msg[160];
	int rc = workers_up(s, msg, sizeof msg);  /* down again at the next call's end */
	if (rc < 0) {
		memset(tids, 0, sizeof *tids * (size_t)max);
		return rc;
	}
	int k = 0;
	for (int i = 1; i < s->threads && k < max; i++)
		tids[k++] = s->parts[i].tid;
	return k;
}

void stream_part(const struct stream *s, int i, size_t *lo, size_t *cnt, int *cpu)
{
	*lo = s->parts[i].lo;
	*cnt = s->parts[i].cnt;
	*cpu = s->parts[i].cpu;
}

/* smaps: the entry whose range holds the array's first byte. */
int stream_pageinfo(const struct stream *s, int which, struct stream_pageinfo *pi)
{
	uintptr_t addr = (uintptr_t)s->map[which].arr;
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int in = 0, found = 0;
	memset(pi, 0, sizeof *pi);
	if (!f)
		return -errno;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		long v;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			if (found && in)
				break;
			in = addr >= lo && addr < hi;
			found |= in;
			continue;
		}
		if (!in)
			continue;
		if (sscanf(line, "KernelPageSize: %ld kB", &v) == 1) pi->kernel_page_kb = v;
		else if (sscanf(line, "Rss: %ld kB", &v) == 1) pi->rss_kb = v;
		else if (sscanf(line, "AnonHugePages: %ld kB", &v) == 1) pi->anon_huge_kb = v;
		else if (sscanf(line, "Private_Hugetlb: %ld kB", &v) == 1) pi->hugetlb_kb += v;
		else if (sscanf(line, "Shared_Hugetlb: %ld kB", &v) == 1) pi->hugetlb_kb += v;
	}
	fclose(f);
	return found ? 0 : -ENOENT;
}

/* ---- run / validate ---- */

/* What a pass of fn leaves in every element is what it leaves in one:
 * the expected values advance by the loop itself run over one element of
 * each (its scalar path; the arrays are checked element by element). */
static void advance(struct stream *s, stream_fn fn)
{
	double *e = s->expect;
	fn(&e[0], &e[1], &e[2], STREAM_SCALAR, 1);
}

/* Sets every part's span for the next kernel pass. */
static void set_span(struct stream *s, enum span sp)
{
	for (int i = 0; i < s->threads; i++) {
		struct part *p = &s->parts[i];
		p->off = sp == SPAN_TAIL ? p->head : 0;
		p->len = sp == SPAN_ALL ? p->cnt : sp == SPAN_HEAD ? p->head : p->cnt - p->head;
	}
}

/* One kernel pass over every part's span; returns the kernel's sum over
 * the parts.  One thread calls the loop itself: exactly the plain loop. */
static inline double pass(struct stream *s)
{
	if (s->threads == 1) {
		part_work(s, 0);
		return s->parts[0].result;
	}
	dispatch(s);
	double t = 0;
	for (int i = 0; i < s->threads; i++)
		t += s->parts[i].result;
	return t;
}

/* Sets each part's head for alternate windows; returns the elements a long
 * window counts beyond a short one, 0 when no part is long enough. */
static size_t set_heads(struct stream *s)
{
	size_t d = 0;
	for (int i = 0; i < s->threads; i++) {
		struct part *p = &s->parts[i];
		size_t di = (p->cnt / 2) & ~(size_t)511;
		p->head = p->cnt - di;
		d += di;
	}
	return d;
}

/* Sets every part's span to [at, at + len) of it, clipped to the part. */
static void set_slice(struct stream *s, size_t at, size_t len)
{
	for (int i = 0; i < s->threads; i++) {
		struct part *p = &s->parts[i];
		p->off = at < p->cnt ? at : p->cnt;
		p->len = p->cnt - p->off < len ? p->cnt - p->off : len;
	}
}

/* The shortest part: slices must fit every part. */
static size_t shortest_part(const struct stream *s)
{
	size_t m = s->parts[0].cnt;
	for (int i = 1; i < s->threads; i++)
		if (s->parts[i].cnt < m)
			m = s->parts[i].cnt;
	return m;
}

/* The rest of a round of length slices, from `at` to each part's end,
 * outside every window: each element has then run once more.  Returns the
 * kernel's sum over it. */
static double finish_round(struct stream *s, size_t at, stream_fn fn, const struct stream_kernel *k, int ref)
{
	double t = 0;
	for (int i = 0; i < s->threads; i++) {
		struct part *p = &s->parts[i];
		p->off = at < p->cnt ? at : p->cnt;
		p->len = p->cnt - p->off;
	}
	t = pass(s);
	if (fn)
		advance(s, !ref && k->replay ? k->replay : fn);
	return t;
}

/* Where the windows of a call are: its shape, the slices' cursor and the
 * sum of the round of slices run so far (a reduction's is a whole round). */
struct placing {
	int passes, alternate;
	size_t slice, cursor;
	double round_sum;
};

/* Sets the spans of timed window r (r < 0: a warm-up, over all n) and
 * returns the passes it runs; *len the slice's length (0: whole parts).
 * Where the next slice does not fit, the round is finished first (length
 * slices) or -ENOSPC returned (untouched slices). */
static int place(struct stream *s, struct placing *pl, int r, size_t *len, stream_fn fn,
		 const struct stream_kernel *k, int ref, double *sum)
{
	int odd = r >= 0 && r % 2 == 1;
	*len = 0;
	if (!pl->slice || r < 0) {
		set_span(s, !pl->slice && pl->alternate && r >= 0 && !odd ? SPAN_HEAD : SPAN_ALL);
		return pl->passes;
	}
	*len = pl->alternate == ALTERNATE_LENGTH && odd ? 2 * pl->slice : pl->slice;
	if (pl->cursor + *len > shortest_part(s)) {
		if (pl->alternate == ALTERNATE_PASSES)
			return -ENOSPC;
		*sum = pl->round_sum + finish_round(s, pl->cursor, fn, k, ref);
		pl->round_sum = 0;
		pl->cursor = 0;
	}
	set_slice(s, pl->cursor, *len);
	return pl->alternate == ALTERNATE_PASSES && odd ? 2 : pl->passes;
}

/* After timed window r: the iterations it counted; a head window's tail
 * (whole parts, alternate) runs now, outside it, adding to *t. */
static size_t placed(struct stream *s, struct placing *pl, int r, size_t len, double *t)
{
	size_t in = 0;
	if (pl->slice) {
		for (int i = 0; i < s->threads; i++)
			in += s->parts[i].len;
		pl->cursor += len;
		pl->round_sum += *t;
		return in;
	}
	if (!pl->alternate || r % 2 == 1)
		return s->n;
	for (int i = 0; i < s->threads; i++)
		in += s->parts[i].head;
	set_span(s, SPAN_TAIL);
	for (int p = 0; p < pl->passes; p++)
		*t += pass(s);
	return in;
}

int stream_run(struct stream *s, const struct stream_kernel *k, int ref,
	       int reps, int warmup, const struct stream_shape *shape, const struct kwindow *w,
	       double *times, uint64_t *work, uint64_t *tsc, double *sum, int *done)
{
	stream_fn fn = ref ? k->ref : k->fn;
	int own = !ref && !fn && k->own;
	int rc = 0, timed = 0;
	struct placing pl = {shape && shape->passes > 1 ? shape->passes : 1, shape ? shape->alternate : ALTERNATE_NONE,
			     shape ? shape->slice : 0, 0, 0};
	*done = 0;
	*sum = 0;
	if (!fn && !own)
		return -EOPNOTSUPP;
	if (pl.slice) {
		if ((pl.alternate == ALTERNATE_LENGTH ? 2 * pl.slice : pl.slice) > shortest_part(s))
			return -EINVAL;
		if (pl.alternate == ALTERNATE_PASSES && s->touched)
			return -EBUSY;
	} else if (pl.alternate && set_heads(s) == 0) {
		return -EINVAL;
	}
	if ((rc = session_begin(s)) < 0)
		return rc;
	s->kfn = fn;
	s->kown = own ? k : NULL;
	if (own) {		/* the loop's data, made outside every window */
		s->job = JOB_OWN_INIT;
		dispatch(s);
	} else {
		s->touched = 1;	/* from here on the arrays hold kernel results */
	}
	s->job = JOB_KERNEL;
	for (int r = -(warmup > 0 ? warmup : 0); r < reps && rc >= 0; r++) {
		size_t len;
		int np = pmcsh_stop_requested() ? -EINTR : place(s, &pl, r, &len, fn, k, ref, sum);
		if (np < 0) {
			rc = np;
			break;
		}
		/* the clocks outside the counters: a vDSO clock read retries
		 * while the kernel updates its time, user instructions that
		 * would count in one window and not the next */
		int64_t t0 = mono_ns64();
		uint64_t c0 = tsc_now();
		if (r >= 0 && (rc = kwindow_begin(w, r)) < 0)
			break;
		double t = 0;
		for (int p = 0; p < np; p++)
			t = pass(s);
		if (r >= 0)
			rc = kwindow_end(w, r);
		uint64_t c1 = tsc_now();
		int64_t t1 = mono_ns64();
		if (r >= 0) {
			times[r] = (t1 - t0) * 1e-9;
			if (tsc)
				tsc[r] = c1 - c0;
			size_t in = placed(s, &pl, r, len, &t);
			if (work)
				work[r] = (uint64_t)in * np;
			if (!pl.slice)
				*sum = t;
			timed++;
		}
		/* slices advance the values once a round (finish_round), not a window */
		for (int p = 0; p < pl.passes && fn && !(pl.slice && r >= 0); p++)
			advance(s, !ref && k->replay ? k->replay : fn);
	}
	/* the round finished: every element has run as often as every other */
	if (pl.slice && pl.alternate != ALTERNATE_PASSES && timed > 0)
		*sum = pl.round_sum + finish_round(s, pl.cursor, fn, k, ref);
	if (own) {
		s->job = JOB_OWN_FINI;
		dispatch(s);
	}
	session_end(s);
	*done = timed;
	return rc;
}

int stream_reset(struct stream *s)
{
	int rc = run_job(s, JOB_INIT);
	if (rc < 0)
		return rc;
	s->expect[0] = 1.0;
	s->expect[1] = 2.0;
	s->expect[2] = 0.0;
	s->touched = 1;
	return 0;
}

int stream_validate(struct stream *s, const struct stream_kernel *last, double sum,
		    struct stream_validation *v, char *msg, size_t msglen)
{
	static const char names[] = "abc";
	struct stream_validation own;
	if (!v)
		v = &own;
	memset(v, 0, sizeof *v);
	v->bound = STREAM_EPS;
	int rc = run_job(s, JOB_CHECK);
	if (rc < 0) {
		snprintf(msg, msglen, "cannot start the worker threads to validate: %s", strerror(-rc));
		return rc;
	}
	for (int k = 0; k < 3; k++) {
		double err = 0, e = s->expect[k];
		size_t bad = (size_t)-1;
		for (int i = 0; i < s->threads; i++) {
			err += s->parts[i].err[k];
			if (bad == (size_t)-1)
				bad = s->parts[i].bad[k];
		}
		v->expected[k] = e;
		v->error[k] = err / s->n / (e != 0 ? fabs(e) : 1);
		if (v->error[k] > STREAM_EPS && !rc) {
			double *x = s->map[k].arr;
			snprintf(msg, msglen, "validation failed: array %c has average relative error %.3g "
				 "(bound %g); every element should be %.17g, element %zu is %.17g "
				 "(arrays re-initialised)", names[k], v->error[k], STREAM_EPS, e,
				 bad == (size_t)-1 ? 1 : bad + 1, x[bad == (size_t)-1 ? 0 : bad]);
			rc = -EDOM;
		}
	}
	if (last && last->reduction && last->fn) {
		/* every element holds its expected value: n times the loop's sum of one */
		double one[3] = {s->expect[0], s->expect[1], s->expect[2]};
		stream_fn f = last->replay ? last->replay : last->fn;
		double want = s->n * f(&one[0], &one[1], &one[2], STREAM_SCALAR, 1);
		v->has_sum = 1;
		v->sum_expected = want;
		v->sum_error = fabs(sum - want) / (want != 0 ? fabs(want) : 1);
		v->sum_bound = SUM_EPS;
		if (v->sum_error > SUM_EPS && !rc) {
			snprintf(msg, msglen, "validation failed: the sum is %.17g, expected %.17g "
				 "(relative bound %g; arrays re-initialised)", sum, want, SUM_EPS);
			rc = -EDOM;
		}
	}
	/* A failure leaves unknown values; repeated kernels can also grow the
	 * values towards overflow: start again from a=1, b=2, c=0. */
	if (rc || fabs(s->expect[0]) > 1e150 || fabs(s->expect[1]) > 1e150 || fabs(s->expect[2]) > 1e150)
		stream_reset(s);
	return rc;
}
