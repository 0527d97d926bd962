/* libpmcsh-marker: regions of the user's program, counted in the program
 * by counters each thread opens on itself (see include/pmcsh/marker.h for
 * the API, core/marker_abi.h for what pmcsh hands it and reads back).
 *
 * It is a guest in someone else's program: no Lua, no libpfm4 (pmcsh
 * resolved the events), no malloc, no stdio, no signal handlers; errno is
 * kept; a failure is one line on stderr per kind and the calls go quiet.
 * Without PMCSH_MARKER_EVENTS in the environment every call is one branch.
 *
 * A thread's short path (begin_hot, end_hot: leaves, one per count of
 * events so their loops unroll): begin finds the name in a per-thread cache
 * of the caller's pointers (a literal of the main program needs no text
 * compare), pushes a frame and reads the counters last; end reads them
 * first, then books the difference to the region and, as children, to its
 * parent's region.  Counters are read with rdpmc where the kernel grants
 * it (uread.h); everything else (first calls, read() threads, an event off
 * the PMU, misuse) takes the slow path. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "../include/pmcsh/marker.h"
#include "../core/marker_abi.h"
#include "../core/uread.h"
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))
#define HIDDEN __attribute__((visibility("hidden")))
#define NEV PMCSH_MK_MAX_EVENTS
#define CAL_PAIRS 16
#define CAL_BATCHES PMCSH_MK_CAL_BATCHES
/* region 0, the calibration's, never in a user's table nor in the names a
 * user's text finds: one byte, as short as the shortest user name, so a
 * calibration pair costs what a user's pair does */
#define CAL_NAME "\x01"
#define HASH_SLOTS 1024                  /* > 2 * PMCSH_MK_MAX_REGIONS */

struct mk_event {
	uint32_t group;
	struct perf_event_attr attr;
};

/* The process: events from the environment, the file, the names. */
static struct {
	int state;  /* 0: not read yet; 1: on; -1: off */
	int nev;
	struct mk_event ev[NEV];
	int leader[NEV];                 /* per event: the index of its group's leader */
	int ngroups, gfirst[NEV];        /* groups by their leader */
	int order[NEV], gstart[NEV], gcount[NEV];  /* events in opening order, each group's run of them */
	char dir[4096];
	int rank;
	pthread_mutex_t lock;
	struct pmcsh_mk_header *hdr;     /* NULL until the first region (or after a fork) */
	size_t map_len;
	uint32_t hash_id[HASH_SLOTS];    /* region id + 1, 0: empty */
	uint32_t hash_val[HASH_SLOTS];
	uint32_t warned;
	pthread_key_t key;
	int have_key;
	int nro;                         /* the main program's read-only segments */
	struct {
		uintptr_t lo, hi;
	} ro[8];
} mk = {.lock = PTHREAD_MUTEX_INITIALIZER, .rank = -1};

/* An event read in user space: its page, and 64 - its counter's width
 * (the raw value's sign bit shifted to bit 63). */
struct mk_uev {
	const struct perf_event_mmap_page *page;
	uint64_t sh;
};

/* An open region of a thread, in the library's own memory (the file keeps
 * its id): frames[0] is a sentinel, the parent of a region at the top. */
struct mk_frame {
	const char *name;                /* the pointer it was begun with */
	struct pmcsh_mk_counts *k;       /* its counts in the file */
	uint64_t inner;                  /* marker pairs inside it so far */
	uint64_t clock0;                 /* the thread's clock at begin (read_now) */
	struct pmcsh_mk_fev ev[NEV];
};

/* The sentinel's name: no caller's pointer is it. */
static const char top_name[] = "";

/* A thread: its counters and its part of the file. */
struct mk_self {
	struct pmcsh_mk_thread *rec;     /* NULL: off */
	int off;
	int fd[NEV];
	int fast;                        /* every event read in user space while on the PMU */
	struct mk_uev uev[NEV];          /* how, in the order of the events: all mapped (fast), or none */
	int nev;
	uint32_t orphans;                /* regions open at a fork: their ends are ignored */
	uint32_t skipped;                /* begins past PMCSH_MK_MAX_DEPTH: their ends are ignored */
	struct mk_frame *cur;            /* the innermost open region, or the sentinel */
	struct mk_frame frames[PMCSH_MK_MAX_DEPTH + 1];
	struct pmcsh_mk_counts top;      /* what the regions at the top book as their parent's */
	const char *cptr[4];             /* the caller's name pointers seen, their ids, */
	uint32_t cid[4];
	const char *cname[4];            /* the names the ids have in the file, */
	struct pmcsh_mk_counts *ck[4];   /* their counts, */
	int cfixed[4];                   /* and 1 where the pointer is to a literal (read_only) */
	void (*begin)(struct mk_self *s, const char *name);  /* the short paths for this thread's */
	void (*end)(struct mk_self *s, const char *name);    /* count of events */
};

static __thread struct mk_self *self __attribute__((tls_model("initial-exec")));
/* self while begin and end may take their short path (set_hot): counting,
 * every event read in user space, no begin skipped; else NULL */
static __thread struct mk_self *hot __attribute__((tls_model("initial-exec")));

static void set_hot(struct mk_self *s)
{
	hot = s->rec && !s->off && s->fast && !s->skipped ? s : NULL;
}

/* ---- saying things once ---------------------------------------------- */

/* A name as it may be printed: control bytes as \xNN, at most 60 bytes. */
static void inert(const char *s, char *out, size_t len)
{
	size_t o = 0;
	for (size_t i = 0; s && s[i] && o + 5 < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (i == 60) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(out + o, len - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	out[o] = 0;
}

static void mk_warn(int kind, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mk_warn(int kind, const char *fmt, ...)
{
	int saved = errno;
	uint32_t bit = 1u << kind;
	uint32_t was = __atomic_fetch_or(&mk.warned, bit, __ATOMIC_RELAXED);
	struct pmcsh_mk_header *h = mk.hdr;
	if (h)
		__atomic_fetch_or(&h->warned, bit, __ATOMIC_RELAXED);
	if (was & bit)
		return;
	char line[512];
	int n = snprintf(line, sizeof line, "pmcsh marker (pid %d): ", (int)getpid());
	va_list ap;
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof line - 2)
		n = (int)sizeof line - 2;
	line[n++] = '\n';
	ssize_t w = write(2, line, (size_t)n);
	(void)w;
	errno = saved;
}

/* ---- the environment ------------------------------------------------- */

/* One hex field of s up to `end` (no prefix, 1 to 16 lower-case digits). */
static const char *hex_field(const char *s, char end, uint64_t *v)
{
	uint64_t x = 0;
	int n = 0;
	for (; *s && *s != end; s++, n++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0' : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;
		if (d < 0 || n >= 16)
			return NULL;
		x = x << 4 | (uint64_t)d;
	}
	if (!n || *s != end)
		return NULL;
	*v = x;
	return s;
}

static int is_clock(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE &&
	       (a->config == PERF_COUNT_SW_TASK_CLOCK || a->config == PERF_COUNT_SW_CPU_CLOCK);
}

/* The perf groups in opening order.  A software clock leads its group: a
 * group's read() brings the leader's clock up to now, not a member's (a
 * member clock reads as of its last update); a second clock of a group
 * is a group of its own. */
static void layout(void)
{
	uint32_t key[NEV];
	for (int i = 0; i < mk.nev; i++) {
		key[i] = mk.ev[i].group;
		if (is_clock(&mk.ev[i].attr))
			for (int j = 0; j < i; j++)
				if (key[j] == key[i] && is_clock(&mk.ev[j].attr))
					key[i] = NEV + (uint32_t)i;  /* alone */
	}
	mk.ngroups = 0;
	int n = 0;
	for (int i = 0; i < mk.nev; i++) {
		int seen = 0;
		for (int j = 0; j < i && !seen; j++)
			seen = key[j] == key[i];
		if (seen)
			continue;
		int lead = i;
		for (int j = i; j < mk.nev; j++)
			if (key[j] == key[i] && is_clock(&mk.ev[j].attr)) {
				lead = j;
				break;
			}
		int g = mk.ngroups++;
		mk.gfirst[g] = lead;
		mk.gstart[g] = n;
		mk.order[n++] = lead;
		for (int j = i; j < mk.nev; j++)
			if (key[j] == key[i] && j != lead)
				mk.order[n++] = j;
		mk.gcount[g] = n - mk.gstart[g];
		for (int k = mk.gstart[g]; k < n; k++)
			mk.leader[mk.order[k]] = lead;
	}
}

/* PMCSH_MARKER_EVENTS (core/marker_abi.h): "g,type,config,config1,config2,flags;...". */
static int parse_events(const char *s)
{
	mk.nev = 0;
	for (;;) {
		const char *item_end = strchr(s, ';');
		if (mk.nev == NEV)
			return -1;
		uint64_t f[6];
		for (int i = 0; i < 6; i++) {
			s = hex_field(s, i < 5 ? ',' : item_end ? ';' : 0, &f[i]);
			if (!s)
				return -1;
			s++;  /* past the separator (or the NUL: not read again) */
		}
		if (f[0] >= NEV || f[1] > UINT32_MAX || f[5] > 63)
			return -1;
		struct mk_event *e = &mk.ev[mk.nev++];
		memset(e, 0, sizeof *e);
		e->group = (uint32_t)f[0];
		struct perf_event_attr *a = &e->attr;
		a->size = sizeof *a;
		a->type = (uint32_t)f[1];
		a->config = f[2];
		a->config1 = f[3];
		a->config2 = f[4];
		a->exclude_user = !!(f[5] & PMCSH_MK_EXCL_USER);
		a->exclude_kernel = !!(f[5] & PMCSH_MK_EXCL_KERNEL);
		a->exclude_hv = !!(f[5] & PMCSH_MK_EXCL_HV);
		a->exclude_host = !!(f[5] & PMCSH_MK_EXCL_HOST);
		a->exclude_guest = !!(f[5] & PMCSH_MK_EXCL_GUEST);
		if (f[5] & PMCSH_MK_CPU_PMU)
			a->config1 |= pmc_user_read_config1();
		a->read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		if (!item_end)
			break;
	}
	layout();
	return 0;
}

static int env_rank(void)
{
	static const char *const vars[] = {"PMCSH_MARKER_RANK", "SLURM_PROCID", "PMI_RANK", "OMPI_COMM_WORLD_RANK",
					   NULL};
	for (int i = 0; vars[i]; i++) {
		const char *v = getenv(vars[i]);
		if (!v || !*v)
			continue;
		char *end;
		long r = strtol(v, &end, 10);
		if (!*end && r >= 0 && r < INT32_MAX)
			return (int)r;
	}
	return -1;
}

static void mk_child(void);
static void thread_gone(void *p);

/* The main program's read-only segments (the first object dl_iterate_phdr
 * visits): a name there is a literal whose text never changes, so a cached
 * pointer to it needs no comparison.  Never unloaded, unlike a library. */
static int ro_main(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	for (int i = 0; i < info->dlpi_phnum && mk.nro < (int)(sizeof mk.ro / sizeof mk.ro[0]); i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && !(ph->p_flags & PF_W)) {
			mk.ro[mk.nro].lo = info->dlpi_addr + ph->p_vaddr;
			mk.ro[mk.nro].hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
			mk.nro++;
		}
	}
	return 1;
}

/* 1 when the len bytes at p are in one of the main program's read-only segments */
static int read_only(const char *p, size_t len)
{
	for (int i = 0; i < mk.nro; i++)
		if ((uintptr_t)p >= mk.ro[i].lo && (uintptr_t)p + len <= mk.ro[i].hi)
			return 1;
	return 0;
}

/* Reads the environment once, before main (or at the first call). */
__attribute__((constructor)) static void mk_setup(void)
{
	if (mk.state)
		return;
	const char *evs = getenv("PMCSH_MARKER_EVENTS");
	const char *dir = getenv("PMCSH_MARKER_DIR");
	if (!evs) {
		mk.state = -1;
		return;
	}
	int saved = errno;
	mk.state = -1;
	if (!dir || !*dir || strlen(dir) >= sizeof mk.dir - 64 || strlen(evs) >= sizeof mk.hdr->events ||
	    parse_events(evs) < 0) {
		char shown[80];
		inert(evs, shown, sizeof shown);
		mk_warn(PMCSH_MK_W_ENV, "PMCSH_MARKER_EVENTS or PMCSH_MARKER_DIR is not what pmcsh writes ('%s'): "
			"regions are not counted", shown);
		errno = saved;
		return;
	}
	strcpy(mk.dir, dir);
	mk.rank = env_rank();
	if (pthread_key_create(&mk.key, thread_gone) == 0)
		mk.have_key = 1;
	pthread_atfork(NULL, NULL, mk_child);
	dl_iterate_phdr(ro_main, NULL);
	mk.state = 1;
	errno = saved;
}

static int name_hash(const char *name, uint32_t *hash);

/* ---- the file -------------------------------------------------------- */

/* Makes DIR/<pid>.regions (DIR/<pid>-<k>.regions when an exec left one)
 * and maps it.  Under mk.lock. */
static int file_open(void)
{
	pid_t pid = getpid();
	size_t len = sizeof(struct pmcsh_mk_header) + (size_t)PMCSH_MK_MAX_THREADS * sizeof(struct pmcsh_mk_thread);
	char path[sizeof mk.dir + 64];
	int fd = -1;
	for (int k = 1; k <= 16 && fd < 0; k++) {
		if (k == 1)
			snprintf(path, sizeof path, "%s/%d.regions", mk.dir, (int)pid);
		else
			snprintf(path, sizeof path, "%s/%d-%d.regions", mk.dir, (int)pid, k);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		mk_warn(PMCSH_MK_W_FILE, "cannot make the results file in %s (%s): regions are not counted", mk.dir,
			strerror(errno));
		return -1;
	}
	void *p = MAP_FAILED;
	if (ftruncate(fd, (off_t)len) == 0)
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		mk_warn(PMCSH_MK_W_FILE, "cannot size or map the results file %s (%s): regions are not counted", path,
			strerror(errno));
		unlink(path);
		close(fd);
		return -1;
	}
	close(fd);
	struct pmcsh_mk_header *h = p;
	for (size_t o = 0; o < sizeof *h; o += 4096)
		((volatile char *)h)[o] = 0;
	h->version = PMCSH_MK_VERSION;
	h->header_size = sizeof *h;
	h->thread_size = sizeof(struct pmcsh_mk_thread);
	h->nevents = (uint32_t)mk.nev;
	h->pid = pid;
	h->ppid = getppid();
	h->rank = mk.rank;
	h->warned = mk.warned;
	strncpy(h->events, getenv("PMCSH_MARKER_EVENTS") ? getenv("PMCSH_MARKER_EVENTS") : "", sizeof h->events - 1);
	/* region 0 is the calibration's (calibrate), outside the hash table:
	 * only its own pointer, in the thread's cache, finds it */
	memset(mk.hash_id, 0, sizeof mk.hash_id);
	memcpy(h->names[0], CAL_NAME, sizeof CAL_NAME);
	h->nregions = 1;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(h->magic, PMCSH_MK_MAGIC, 8);  /* last: a reader sees a whole header or none */
	mk.map_len = len;
	__atomic_store_n(&mk.hdr, h, __ATOMIC_RELEASE);
	return 0;
}

/* ---- names ----------------------------------------------------------- */

/* The name's hash and length, or -1 when it is not a name: empty, longer
 * than PMCSH_MK_NAME - 1, or holding control bytes.  Reads at most
 * PMCSH_MK_NAME bytes. */
static int name_hash(const char *name, uint32_t *hash)
{
	uint32_t h = 2166136261u;
	int n = 0;
	for (; n < PMCSH_MK_NAME; n++) {
		unsigned char c = (unsigned char)name[n];
		if (!c)
			break;
		if (c < 0x20 || c == 0x7f)
			return -1;
		h = (h ^ c) * 16777619u;
	}
	if (n == 0 || n == PMCSH_MK_NAME)
		return -1;
	*hash = h;
	return n;
}

static inline int same_name(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

/* The region id of name, registering it when `make`; -1 when it cannot be
 * (said once). */
static int name_id(const char *name, int make)
{
	struct pmcsh_mk_header *h = mk.hdr;
	uint32_t hv;
	int n = name ? name_hash(name, &hv) : -1;
	if (n < 0) {
		char shown[80];
		inert(name ? name : "(null)", shown, sizeof shown);
		mk_warn(PMCSH_MK_W_NAME, "region name '%s' is not a name (1 to %d bytes of printable text): "
			"its calls are ignored", shown, PMCSH_MK_NAME - 1);
		return -1;
	}
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = hv % HASH_SLOTS, k = 0; k < HASH_SLOTS; k++, i = (i + 1) % HASH_SLOTS) {
			uint32_t id1 = __atomic_load_n(&mk.hash_id[i], __ATOMIC_ACQUIRE);
			if (!id1)
				break;
			if (mk.hash_val[i] == hv && same_name(h->names[id1 - 1], name))
				return (int)id1 - 1;
		}
		if (!make || pass)
			return -1;
		/* not there: register under the lock, looked up again there */
		pthread_mutex_lock(&mk.lock);
		int found = -1;
		uint32_t i = hv % HASH_SLOTS;
		for (uint32_t k = 0; k < HASH_SLOTS; k++, i = (i + 1) % HASH_SLOTS) {
			uint32_t id1 = mk.hash_id[i];
			if (!id1)
				break;
			if (mk.hash_val[i] == hv && same_name(h->names[id1 - 1], name)) {
				found = (int)id1 - 1;
				break;
			}
		}
		if (found < 0) {
			uint32_t id = h->nregions;
			if (id >= PMCSH_MK_MAX_REGIONS) {
				pthread_mutex_unlock(&mk.lock);
				char shown[80];
				inert(name, shown, sizeof shown);
				mk_warn(PMCSH_MK_W_REGIONS, "more than %d region names ('%s' is one too many): its calls "
					"are ignored", PMCSH_MK_MAX_REGIONS - 1, shown);
				return -1;
			}
			memcpy(h->names[id], name, (size_t)n + 1);
			mk.hash_val[i] = hv;
			__atomic_store_n(&mk.hash_id[i], id + 1, __ATOMIC_RELEASE);
			__atomic_store_n(&h->nregions, id + 1, __ATOMIC_RELEASE);
			found = (int)id;
		}
		pthread_mutex_unlock(&mk.lock);
		return found;
	}
	return -1;
}

static inline unsigned cache_slot(const char *name)
{
	return ((uintptr_t)name >> 3) & 3;
}

/* The id of name for this thread: its cache of the caller's pointers
 * first (a pointer's text is compared: a reused buffer is no stale hit). */
static inline int cached_id(struct mk_self *s, const char *name, int make)
{
	unsigned c = cache_slot(name);
	if (s->cptr[c] == name && name && same_name(s->cname[c], name))
		return (int)s->cid[c];
	int id = name_id(name, make);
	if (id >= 0) {
		s->cptr[c] = name;
		s->cid[c] = (uint32_t)id;
		s->cname[c] = mk.hdr->names[id];
		s->ck[c] = &s->rec->regions[id];
		s->cfixed[c] = read_only(name, strlen(name) + 1);
	}
	return id;
}

/* ---- counters -------------------------------------------------------- */

/* read() of every group, per the kernel ABI with PERF_FORMAT_GROUP:
 * u64 nr, time_enabled, time_running, value[nr] in opening order.  c gets
 * the counts, lost the ns each was enabled but not counting.  -errno when
 * a read failed (errno itself as it was). */
static int read_groups(struct mk_self *s, uint64_t *c, uint64_t *lost)
{
	for (int g = 0; g < mk.ngroups; g++) {
		int l = mk.gfirst[g];
		uint64_t buf[3 + NEV];
		int saved = errno;
		ssize_t r = read(s->fd[l], buf, sizeof buf);
		if (r < (ssize_t)(3 * sizeof(uint64_t)) || r < (ssize_t)((3 + buf[0]) * sizeof(uint64_t))) {
			int e = r < 0 ? errno : EIO;
			errno = saved;
			return -e;
		}
		for (int k = 0; k < mk.gcount[g] && k < (int)buf[0]; k++) {
			int i = mk.order[mk.gstart[g] + k];
			c[i] = buf[3 + k];
			lost[i] = buf[1] - buf[2];
		}
	}
	return 0;
}

#ifdef PMC_HAVE_USER_READ
/* Every event, by uread.h's lean read.  -1 when one is off the PMU now. */
static inline __attribute__((always_inline)) int read_fast(const struct mk_self *s, uint64_t *c, uint64_t *lost)
{
	for (int i = 0; i < s->nev; i++)
		if (!pmc_mmap_read_lean(s->uev[i].page, s->uev[i].sh, &c[i], &lost[i]))
			return -1;
	return 0;
}
#endif

/* The counters now: counts c, lost (see read_groups), and the wall clock
 * (*clock: ticks of the user-space clock for a fast thread, else
 * CLOCK_MONOTONIC's ns: a task's enabled time stops while it sleeps).
 * -errno when a read() failed. */
static inline __attribute__((always_inline)) int read_now(struct mk_self *s, uint64_t *c, uint64_t *lost,
							  uint64_t *clock)
{
#ifdef PMC_HAVE_USER_READ
	if (s->fast) {
		int r = read_fast(s, c, lost);
		*clock = pmc_user_clock(0);
		return __builtin_expect(r == 0, 1) ? 0 : read_groups(s, c, lost);
	}
#endif
	struct timespec t;  /* first: a page the call touches faults outside a begin's counts */
	clock_gettime(CLOCK_MONOTONIC, &t);
	*clock = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
	return read_groups(s, c, lost);
}

static void self_close(struct mk_self *s)
{
	long psz = sysconf(_SC_PAGESIZE);
	for (int i = 0; i < mk.nev; i++) {
		if (s->uev[i].page)
			munmap((void *)s->uev[i].page, (size_t)psz);
		s->uev[i].page = NULL;
		if (s->fd[i] >= 0)
			close(s->fd[i]);
		s->fd[i] = -1;
	}
}

static long perf_open(struct perf_event_attr *a, int group_fd)
{
	return syscall(SYS_perf_event_open, a, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
}

static void calibrate(struct mk_self *s);
#ifdef PMC_HAVE_USER_READ
static void set_paths(struct mk_self *s);
#endif

/* Writes a zero to every page of [p, p + len): a region's count never
 * includes a fault on the library's own file. */
static void prefault(void *p, size_t len)
{
	long psz = sysconf(_SC_PAGESIZE);
	for (size_t o = 0; o < len; o += (size_t)psz)
		__atomic_store_n((char *)p + o, *((volatile char *)p + o), __ATOMIC_RELAXED);
	__atomic_store_n((char *)p + len - 1, *((volatile char *)p + len - 1), __ATOMIC_RELAXED);
}

/* The calling thread's state, mapped at its first call (no malloc in a
 * guest); NULL when the mapping fails. */
static struct mk_self *self_alloc(void)
{
	void *p = mmap(NULL, sizeof(struct mk_self), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	struct mk_self *s = p;
	for (int i = 0; i < NEV; i++)
		s->fd[i] = -1;
	self = s;
	if (mk.have_key)
		pthread_setspecific(mk.key, s);
	return s;
}

/* Opens the events on the calling thread, group by group, and enables
 * them.  0; or -1, said once, the thread's counters closed and s off. */
static int self_counters(struct mk_self *s)
{
	for (int k = 0; k < mk.nev; k++) {
		int i = mk.order[k];
		struct perf_event_attr a = mk.ev[i].attr;
		/* a leader starts disabled: a member added to a running group
		 * would wait for the next schedule to count */
		a.disabled = mk.leader[i] == i;
		long fd = perf_open(&a, mk.leader[i] == i ? -1 : s->fd[mk.leader[i]]);
		if (fd < 0) {
			int e = errno;
			self_close(s);
			mk_warn(PMCSH_MK_W_OPEN, "cannot open event %d (type %u, config 0x%llx) on thread %ld (%s): "
				"that thread's regions are not counted", i + 1, a.type, (unsigned long long)a.config,
				(long)syscall(SYS_gettid), strerror(e));
			s->off = 1;
			return -1;
		}
		s->fd[i] = (int)fd;
	}
	for (int g = 0; g < mk.ngroups; g++)
		if (ioctl(s->fd[mk.gfirst[g]], PERF_EVENT_IOC_ENABLE, 0) < 0) {
			int e = errno;
			self_close(s);
			mk_warn(PMCSH_MK_W_OPEN, "cannot enable the counters of thread %ld (%s): its regions are not "
				"counted", (long)syscall(SYS_gettid), strerror(e));
			s->off = 1;
			return -1;
		}
	return 0;
}

/* User-space reads: every event of a group mapped and granted (rdpmc and
 * the time fields), or none of it; s->fast when every event is. */
static void self_map(struct mk_self *s)
{
	long psz = sysconf(_SC_PAGESIZE);
	int user_read = 0;
	for (int g = 0; g < mk.ngroups; g++) {
		int ok = 1;
		for (int k = mk.gstart[g]; k < mk.gstart[g] + mk.gcount[g] && ok; k++) {
			int i = mk.order[k];
			ok = 0;
			if (!(mk.ev[i].attr.type == PERF_TYPE_HARDWARE || mk.ev[i].attr.type == PERF_TYPE_RAW ||
			      mk.ev[i].attr.type == PERF_TYPE_HW_CACHE || mk.ev[i].attr.type > PERF_TYPE_BREAKPOINT))
				break;
			void *p = mmap(NULL, (size_t)psz, PROT_READ, MAP_SHARED, s->fd[i], 0);
			if (p == MAP_FAILED)
				break;
			const struct perf_event_mmap_page *pc = p;
			/* the grant and the width are the event's for its life (the
			 * enabled event is on the PMU now: its page is written) */
			ok = pc->cap_user_rdpmc && pc->cap_user_time && pc->pmc_width >= 1 && pc->pmc_width <= 64;
			s->uev[i].page = pc;
			s->uev[i].sh = (64u - pc->pmc_width) & 63;
		}
		if (!ok)
			for (int k = mk.gstart[g]; k < mk.gstart[g] + mk.gcount[g]; k++)
				if (s->uev[mk.order[k]].page) {
					munmap((void *)s->uev[mk.order[k]].page, (size_t)psz);
					s->uev[mk.order[k]].page = NULL;
				}
		user_read |= ok;
	}
	s->nev = mk.nev;
	s->fast = user_read && mk.ngroups > 0;
	for (int i = 0; i < mk.nev; i++)
		s->fast = s->fast && s->uev[i].page;
}

/* The calling thread's counters and part of the file, made at its first
 * call (after a fork, again).  NULL: this thread does not count. */
static struct mk_self *self_open(void)
{
	struct mk_self *s = self;
	if (s && (s->off || s->rec))
		return s->off ? NULL : s;
	int first = 0;
	pthread_mutex_lock(&mk.lock);
	if (!mk.hdr && mk.state == 1) {
		if (file_open() < 0)
			mk.state = -1;
		else
			first = 1;
	}
	pthread_mutex_unlock(&mk.lock);
	if (mk.state != 1)
		return NULL;
	if (!s && !(s = self_alloc()))
		return NULL;
	uint32_t t = __atomic_fetch_add(&mk.hdr->nthreads, 1, __ATOMIC_RELAXED);
	if (t >= PMCSH_MK_MAX_THREADS) {
		mk_warn(PMCSH_MK_W_THREADS, "more than %d threads counted regions: thread %ld's are ignored",
			PMCSH_MK_MAX_THREADS, (long)syscall(SYS_gettid));
		s->off = 1;
		return NULL;
	}
	if (self_counters(s) < 0)
		return NULL;
	self_map(s);
	struct pmcsh_mk_thread *rec = (void *)((char *)mk.hdr + sizeof *mk.hdr + (size_t)t * sizeof *rec);
	prefault(rec, sizeof *rec);
	rec->tid = (int32_t)syscall(SYS_gettid);
	rec->user_read = (uint32_t)s->fast;
	rec->time_mult = s->fast ? s->uev[0].page->time_mult : 1;
	rec->time_shift = s->fast ? s->uev[0].page->time_shift : 0;
	rec->state = 1;
	s->rec = rec;
	s->frames[0].name = top_name;
	s->frames[0].k = &s->top;
	s->cur = &s->frames[0];
#ifdef PMC_HAVE_USER_READ
	set_paths(s);
#endif
	set_hot(s);
	if (first)
		calibrate(s);
	return s;
}

/* ---- begin and end --------------------------------------------------- */

static void too_deep(struct mk_self *s)
{
	s->skipped++;
	hot = NULL;
	mk_warn(PMCSH_MK_W_DEPTH, "regions nested deeper than %d: the deeper ones are ignored", PMCSH_MK_MAX_DEPTH);
}

static void read_failed(struct mk_self *s, int err)
{
	mk_warn(PMCSH_MK_W_READ, "a read of the counters failed on thread %ld (%s): that thread's regions are no "
		"longer counted", (long)syscall(SYS_gettid), strerror(-err));
	s->rec->state = 3;
	int saved = errno;
	self_close(s);
	s->off = 1;
	hot = NULL;
	errno = saved;
}

static inline __attribute__((always_inline)) void begin_id(struct mk_self *s, int id, const char *name)
{
	struct pmcsh_mk_thread *r = s->rec;
	uint32_t d = r->depth;
	if (__builtin_expect(d >= PMCSH_MK_MAX_DEPTH, 0)) {
		too_deep(s);
		return;
	}
	struct mk_frame *f = &s->frames[d + 1];
	uint64_t c[NEV], lost[NEV];
	f->name = name;
	f->k = &r->regions[id];
	f->inner = 0;
	r->stack[d] = (uint32_t)id;
	int e = read_now(s, c, lost, &f->clock0);
	if (__builtin_expect(e < 0, 0)) {
		read_failed(s, e);
		return;
	}
	for (int i = 0; i < s->nev; i++) {
		f->ev[i].start = c[i];
		f->ev[i].lost0 = lost[i];
	}
	s->cur = f;
	r->depth = d + 1;
}

/* The end of region id's frame at depth at (1-based) of d: its counts
 * booked, its parent's children and inner pairs grown. */
static void end_overlap(struct mk_self *s, int id, uint32_t at, uint32_t d)
{
	struct pmcsh_mk_thread *r = s->rec;
	mk_warn(PMCSH_MK_W_OVERLAP, "region '%s' ended inside '%s' on thread %ld: they overlap, and their exclusive "
		"counts are not given", mk.hdr->names[id], mk.hdr->names[r->stack[d - 1]],
		(long)syscall(SYS_gettid));
	r->regions[id].flags |= 1;
	for (uint32_t j = at; j < d; j++)
		r->regions[r->stack[j]].flags |= 1;
}

static void end_unbegun(struct mk_self *s, int id)
{
	if (s->orphans) {
		s->orphans--;
		return;
	}
	mk_warn(PMCSH_MK_W_UNBEGUN, "region '%s' ended but not begun on thread %ld: the end is ignored",
		mk.hdr->names[id], (long)syscall(SYS_gettid));
}

static inline __attribute__((always_inline)) void end_id(struct mk_self *s, int id)
{
	uint64_t c[NEV], lost[NEV], clock;
	if (__builtin_expect(s->skipped, 0)) {
		s->skipped--;
		set_hot(s);
		return;
	}
	int e = read_now(s, c, lost, &clock);
	if (__builtin_expect(e < 0, 0)) {
		read_failed(s, e);
		return;
	}
	struct pmcsh_mk_thread *r = s->rec;
	uint32_t d = r->depth, at = d;
	while (at > 0 && r->stack[at - 1] != (uint32_t)id)
		at--;
	if (__builtin_expect(at != d, 0)) {
		if (at == 0) {
			end_unbegun(s, id);
			return;
		}
		end_overlap(s, id, at, d);
	}
	struct mk_frame *f = &s->frames[at], *parent = f - 1;
	for (int i = 0; i < s->nev; i++) {
		uint64_t delta = c[i] - f->ev[i].start;
		f->k->ev[i].incl += delta;
		f->k->ev[i].lost += lost[i] - f->ev[i].lost0;
		parent->k->ev[i].children += delta;
	}
	parent->inner += f->inner + 1;
	f->k->clock += clock - f->clock0;
	f->k->inner += f->inner;
	f->k->calls++;
	if (__builtin_expect(at != d, 0)) {  /* the frames above it move down */
		memmove(f, f + 1, sizeof *f * (d - at));
		memmove(&r->stack[at - 1], &r->stack[at], sizeof r->stack[0] * (d - at));
	}
	s->cur = &s->frames[d - 1];
	r->depth = d - 1;
}

/* The pair's cost, before the user's first region: what CAL_PAIRS empty
 * regions count (self, region 0's counts) and what they add to a region
 * around them (outer), through the same calls a user makes; the batch of
 * the CAL_BATCHES that took least time (the first ones meet cold caches). */
static void calibrate(struct mk_self *s)
{
	uint64_t c0[NEV], c1[NEV], self0[NEV], lost[NEV], clock;
	uint64_t best = UINT64_MAX;
	struct pmcsh_mk_header *h = mk.hdr;
	unsigned slot = cache_slot(CAL_NAME);
	s->cptr[slot] = CAL_NAME;
	s->cid[slot] = 0;
	s->cname[slot] = h->names[0];
	s->ck[slot] = &s->rec->regions[0];
	s->cfixed[slot] = 1;  /* the library's own literal */
	for (int b = 0; b < CAL_BATCHES; b++) {
		struct timespec t0, t1;
		for (int i = 0; i < mk.nev; i++)
			self0[i] = s->rec->regions[0].ev[i].incl;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (read_now(s, c0, lost, &clock) < 0)
			return;
		for (int i = 0; i < CAL_PAIRS; i++) {
			pmcsh_region_begin(CAL_NAME);
			pmcsh_region_end(CAL_NAME);
		}
		if (read_now(s, c1, lost, &clock) < 0)
			return;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		uint64_t ns = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec));
		if (ns >= best)
			continue;
		best = ns;
		for (int i = 0; i < mk.nev; i++) {
			h->cal_outer[i] = c1[i] - c0[i];
			h->cal_self[i] = s->rec->regions[0].ev[i].incl - self0[i];
		}
		h->cal_ns = ns;
		h->cal_pairs = CAL_PAIRS;
	}
}

/* The library at a call: on (the environment read, 1) or off. */
static inline __attribute__((always_inline)) int on(void)
{
	if (__builtin_expect(mk.state > 0, 0))
		return 1;
	if (mk.state < 0)
		return 0;
	mk_setup();  /* a call before the constructors ran */
	return mk.state > 0;
}

/* The calling thread, counting: opened at its first call; NULL when off. */
static inline __attribute__((always_inline)) struct mk_self *counting(void)
{
	struct mk_self *s = self;
	if (__builtin_expect(!s || !s->rec, 0)) {
		int saved = errno;
		s = self_open();
		errno = saved;
	}
	return s && !s->off ? s : NULL;
}

/* Every begin the short path does not take: the first of a thread, a name
 * not in its cache, too deep, counters read with read() or off the PMU. */
static __attribute__((noinline)) void begin_slow(const char *name)
{
	struct mk_self *s;
	if (!on() || !(s = counting()))
		return;
	int id = cached_id(s, name, 1);
	if (id < 0)
		return;
#ifdef PMC_HAVE_USER_READ
	/* now in the cache: the short path reads the counters as every other
	 * begin does, so a region's fixed cost is one whatever its begin met */
	if (hot == s && s->cur < &s->frames[PMCSH_MK_MAX_DEPTH])
		return s->begin(s, name);
#endif
	begin_id(s, id, name);
}

static void end_slow(const char *name);

#ifdef PMC_HAVE_USER_READ
/* The short paths, for n events (a constant where begin and end dispatch on
 * the thread's count, so the loops unroll): leaves, no call, no saved
 * register. */
static inline __attribute__((always_inline)) void begin_hot(struct mk_self *s, const char *name, int n)
{
	unsigned c = cache_slot(name);
	struct mk_frame *f = s->cur + 1;
	if (__builtin_expect(s->cptr[c] != name || f > &s->frames[PMCSH_MK_MAX_DEPTH] ||
			     (!s->cfixed[c] && !same_name(s->cname[c], name)), 0))
		return begin_slow(name);
	struct pmcsh_mk_thread *r = s->rec;
	uint32_t d = r->depth;
	f->name = name;
	f->k = s->ck[c];
	f->inner = 0;
	r->stack[d] = s->cid[c];
#pragma GCC unroll 4
	for (int i = 0; i < n; i++)
		if (__builtin_expect(!pmc_mmap_read_lean(s->uev[i].page, s->uev[i].sh, &f->ev[i].start, &f->ev[i].lost0), 0))
			return begin_slow(name);
	f->clock0 = pmc_user_clock(0);
	s->cur = f;
	r->depth = d + 1;
}

/* The innermost region ended by the pointer it was begun with: the
 * counters read first, then booked to it and to its parent's children
 * (end_id's arithmetic). */
static inline __attribute__((always_inline)) void end_hot(struct mk_self *s, const char *name, int n)
{
	struct mk_frame *f = s->cur;
	if (__builtin_expect(f->name != name, 0))
		return end_slow(name);
	struct pmcsh_mk_fev now[NEV];
#pragma GCC unroll 4
	for (int i = 0; i < n; i++)
		if (__builtin_expect(!pmc_mmap_read_lean(s->uev[i].page, s->uev[i].sh, &now[i].start, &now[i].lost0), 0))
			return end_slow(name);
	uint64_t clock = pmc_user_clock(0);
	struct mk_frame *parent = f - 1;
	struct pmcsh_mk_counts *k = f->k, *kp = parent->k;
#pragma GCC unroll 4
	for (int i = 0; i < n; i++) {
		uint64_t delta = now[i].start - f->ev[i].start;
		k->ev[i].incl += delta;
		k->ev[i].lost += now[i].lost0 - f->ev[i].lost0;
		kp->ev[i].children += delta;
	}
	parent->inner += f->inner + 1;
	k->clock += clock - f->clock0;
	k->inner += f->inner;
	k->calls++;
	s->cur = parent;
	s->rec->depth--;
}

#define HOT(n)                                                         \
	static void begin_##n(struct mk_self *s, const char *name)     \
	{                                                              \
		begin_hot(s, name, n);                                 \
	}                                                              \
	static void end_##n(struct mk_self *s, const char *name)       \
	{                                                              \
		end_hot(s, name, n);                                   \
	}
HOT(1)
HOT(2)
HOT(3)
HOT(4)
static void begin_any(struct mk_self *s, const char *name)
{
	begin_hot(s, name, s->nev);
}
static void end_any(struct mk_self *s, const char *name)
{
	end_hot(s, name, s->nev);
}
#undef HOT

/* The thread's short paths, by its count of events. */
static void set_paths(struct mk_self *s)
{
	static void (*const b[])(struct mk_self *, const char *) = {begin_any, begin_1, begin_2, begin_3, begin_4};
	static void (*const e[])(struct mk_self *, const char *) = {end_any, end_1, end_2, end_3, end_4};
	int k = s->nev <= 4 ? s->nev : 0;
	s->begin = b[k];
	s->end = e[k];
}
#endif

/* A name the thread's cache holds, its frame pushed, the counters read
 * last.  Off, hot is NULL and begin_slow says why. */
API void pmcsh_region_begin(const char *name)
{
#ifdef PMC_HAVE_USER_READ
	struct mk_self *s = hot;
	if (__builtin_expect(!s, 0))
		return begin_slow(name);
	s->begin(s, name);
#else
	begin_slow(name);
#endif
}

/* An end the thread cannot book: a region never begun here, or a name
 * that is none (said once each). */
static void end_unknown(const char *name)
{
	if (mk.hdr && mk.hdr->nregions >= PMCSH_MK_MAX_REGIONS)
		return;  /* its begin was refused, and said so */
	if (name && name_hash(name, &(uint32_t){0}) > 0) {
		char shown[80];
		inert(name, shown, sizeof shown);
		mk_warn(PMCSH_MK_W_UNBEGUN, "region '%s' ended but never begun: the end is ignored", shown);
	} else {
		name_id(name, 0);  /* says why it is not a name */
	}
}

/* Every end the short path does not take (pmcsh_region_end's). */
static __attribute__((noinline)) void end_slow(const char *name)
{
	if (mk.state <= 0)
		return;
	struct mk_self *s = self;
	if (__builtin_expect(!s || !s->rec || s->off, 0)) {
		if (s && s->orphans)
			s->orphans--;
		else if (!s || !s->off)
			end_unknown(name);
		return;
	}
	/* the pointer the innermost region was begun with ends it, whatever
	 * the text there now: an end costs the same for every name */
	uint32_t d = s->rec->depth;
	int id = d && name == s->cur->name ? (int)s->rec->stack[d - 1] : cached_id(s, name, 0);
	if (__builtin_expect(id >= 0, 1))
		end_id(s, id);
	else if (s->orphans)
		s->orphans--;
	else
		end_unknown(name);
}

API void pmcsh_region_end(const char *name)
{
#ifdef PMC_HAVE_USER_READ
	struct mk_self *s = hot;
	if (__builtin_expect(!s, 0))
		return end_slow(name);
	s->end(s, name);
#else
	end_slow(name);
#endif
}

API void pmcsh_region_iterations(const char *name, uint64_t n)
{
	struct mk_self *s;
	if (!on() || !(s = counting()))
		return;
	int id = cached_id(s, name, 1);
	if (id >= 0)
		s->rec->regions[id].iterations += n;
}

API void pmcsh_thread_init(void)
{
	if (on())
		counting();
}

API void pmcsh_region_register(const char *name)
{
	struct mk_self *s;
	if (on() && (s = counting()))
		cached_id(s, name, 1);
}

API int pmcsh_region_get(const char *name, uint64_t *counts, int *n, uint64_t *calls)
{
	if (mk.state <= 0)
		return -1;
	int saved = errno, rc = -1;
	struct mk_self *s = self;
	if (s && s->rec && !s->off) {
		int id = cached_id(s, name, 0);
		if (id >= 0) {
			struct pmcsh_mk_counts *k = &s->rec->regions[id];
			int m = n && *n < mk.nev ? *n : mk.nev;
			for (int i = 0; counts && i < m; i++)
				counts[i] = k->ev[i].incl;
			if (n)
				*n = mk.nev;
			if (calls)
				*calls = k->calls;
			rc = 0;
		}
	}
	errno = saved;
	return rc;
}

API double pmcsh_region_seconds(const char *name)
{
	if (mk.state <= 0)
		return 0.0;
	int saved = errno;
	double t = 0.0;
	struct mk_self *s = self;
	if (s && s->rec && !s->off) {
		int id = cached_id(s, name, 0);
		if (id >= 0) {
			const struct pmcsh_mk_thread *r = s->rec;
			t = (double)pmc_mmap_time_delta(r->regions[id].clock, (uint16_t)r->time_shift, r->time_mult, 0) /
			    1e9;
		}
	}
	errno = saved;
	return t;
}

API void pmcsh_region_reset(const char *name)
{
	if (mk.state <= 0)
		return;
	int saved = errno;
	struct mk_self *s = self;
	if (s && s->rec && !s->off) {
		int id = cached_id(s, name, 0);
		if (id >= 0)
			memset(&s->rec->regions[id], 0, sizeof s->rec->regions[id]);
	}
	errno = saved;
}

/* ---- threads, forks, exit --------------------------------------------- */

/* A thread ends (pthread_exit or its function returned): its counters go. */
static void thread_gone(void *p)
{
	struct mk_self *s = p;
	int saved = errno;
	if (s->rec && !s->off) {
		if (s->rec->depth)
			mk_warn(PMCSH_MK_W_EXIT_INSIDE, "thread %ld ended inside region '%s': that call is not counted",
				(long)syscall(SYS_gettid), mk.hdr->names[s->rec->stack[s->rec->depth - 1]]);
		s->rec->state = 2;
	}
	self_close(s);
	if (self == s)
		self = NULL;
	hot = NULL;
	munmap(s, sizeof *s);
	errno = saved;
}

/* In a forked child: the parent's counters and file are not its own.  It
 * starts again at its next region, in a file of its own; the regions open
 * at the fork end unseen. */
static void mk_child(void)
{
	struct mk_self *s = self;
	uint32_t open = s && s->rec && !s->off ? s->rec->depth : 0;  /* before the file goes */
	if (mk.hdr)
		munmap(mk.hdr, mk.map_len);
	mk.hdr = NULL;
	mk.warned = 0;
	pthread_mutex_init(&mk.lock, NULL);
	hot = NULL;
	if (s) {
		self_close(s);
		memset(s, 0, sizeof *s);
		for (int i = 0; i < NEV; i++)
			s->fd[i] = -1;
		s->orphans = open;
	}
}

__attribute__((destructor)) static void mk_finish(void)
{
	struct pmcsh_mk_header *h = mk.hdr;
	if (h)
		__atomic_store_n(&h->finished, 1, __ATOMIC_RELEASE);
}
