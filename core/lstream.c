/* pmcsh._stream: the STREAM engine (kernels/stream*.c) as a Lua userdata.
 * The only door between Lua and the engine: options are checked here,
 * results become plain tables here; every measured repetition happens
 * inside one call to s:run.  The friendly API is lua/pmcsh/stream.lua. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lpmcsh.h"
#include "lpmc.h"
#include "machine.h"
#include "guard.h"
#include "userloop.h"
#include "../kernels/stream.h"
#include "../include/pmcsh/loop.h"

#define STREAM_MT "pmcsh.stream"
#define LOOP_MT "pmcsh.loop"
#define LOOP_INFO_MT "pmcsh.loop_info"

/* A user's loop (core/userloop.c): its shared object stays loaded while
 * the handle is open; s:run takes it where it takes a kernel's name. */
typedef struct {
	struct userloop u;	/* u.dl NULL once closed */
	char path[4096];
	char who[512];		/* "the loop f of k.so", for the crash guard */
} LLoop;

typedef struct {
	struct stream *s;	/* NULL once closed (and until created) */
	int pages;
	const struct stream_variant *v;	/* the loops s:run runs */
	size_t held;		/* bytes told to pmcsh_extern_add */
} LStream;

static const char *const array_names[] = {"a", "b", "c", NULL};

static LStream *checkstream(lua_State *L)
{
	LStream *ls = luaL_checkudata(L, 1, STREAM_MT);
	if (!ls->s)
		luaL_error(L, "attempt to use a closed stream");
	return ls;
}

/* n: elements per array (default STREAM's rule), checked against memory. */
static size_t opt_n(lua_State *L)
{
	int nllc;
	lua_Integer n = pmcsh_optint(L, 1, 1, "n", (lua_Integer)stream_default_n(machine_llc_bytes(NULL, &nllc)));
	double phys = (double)pages_physical(), total = 3.0 * (double)n * sizeof(double);
	pmcsh_argcheck(L, n > 0, 1, lua_pushfstring(L, "n: must be a positive number of elements, got %I", n));
	pmcsh_argcheck(L, phys == 0 || total <= phys, 1,
		      lua_pushfstring(L, "n: 3 arrays of %I doubles need %f MiB, more than this machine's %f MiB of memory",
				      n, (lua_Number)floor(total / 1048576), (lua_Number)floor(phys / 1048576)));
	return (size_t)n;
}

/* threads and cpus: cpus[] gets the cpu of each part (those given, or the
 * first allowed ones); returns the thread count. */
static int opt_cpus(lua_State *L, const int *allowed, int nallowed, int *cpus)
{
	lua_Integer threads = pmcsh_optint(L, 1, 1, "threads", STREAM_DEFAULT_THREADS);
	pmcsh_argcheck(L, threads >= 1, 1, lua_pushfstring(L, "threads: must be at least 1, got %I", threads));
	int tcpu = lua_getfield(L, 1, "cpus");
	if (tcpu == LUA_TNIL) {
		pmcsh_argcheck(L, threads <= nallowed, 1, lua_pushfstring(L,
			      "threads: %I exceeds the %d cpus this process may run on (sched_getaffinity); "
			      "at most %d, or give cpus= to share cpus", threads, nallowed, nallowed));
		for (int i = 0; i < threads; i++)
			cpus[i] = allowed[i];
		lua_pop(L, 1);
		return (int)threads;
	}
	pmcsh_argcheck(L, tcpu == LUA_TTABLE, 1, "cpus: a list of cpu numbers expected");
	lua_Integer nc = (lua_Integer)lua_rawlen(L, -1);
	pmcsh_argcheck(L, nc >= 1 && nc <= STREAM_MAX_THREADS, 1, "cpus: a non-empty list expected");
	if (lua_getfield(L, 1, "threads") == LUA_TNIL)
		threads = nc;
	lua_pop(L, 1);
	pmcsh_argcheck(L, threads == nc, 1, lua_pushfstring(L, "cpus: %I cpus given for %I threads", nc, threads));
	for (int i = 0; i < nc; i++) {
		lua_rawgeti(L, -1, i + 1);
		int isint, ok = 0;
		lua_Integer c = lua_tointegerx(L, -1, &isint);
		lua_pop(L, 1);
		for (int k = 0; k < nallowed; k++)
			ok |= allowed[k] == c;
		pmcsh_argcheck(L, isint && ok, 1, lua_pushfstring(L,
			      "cpus: entry %d is not a cpu this process may run on (sched_getaffinity)", i + 1));
		cpus[i] = (int)c;
	}
	lua_pop(L, 1);
	return (int)threads;
}

/* isa: the variant of the loops (default the best this cpu runs). */
static const struct stream_variant *opt_isa(lua_State *L)
{
	char why[256];
	const struct stream_variant *v = stream_variant_best();
	if (lua_getfield(L, 1, "isa") != LUA_TNIL) {
		const char *name = lua_tostring(L, -1);
		pmcsh_argcheck(L, name, 1, "isa: a variant name expected (stream.machine().variants)");
		v = stream_variant_find(name, why, sizeof why);
		pmcsh_argcheck(L, v, 1, lua_pushfstring(L, "isa: %s", why));
	}
	lua_pop(L, 1);
	return v;
}

/* stream.new{n=, threads=, cpus=, pages=, offset=, touch=, pin=, isa=}
 * Leaves the new pmcsh.stream userdata, or fail, message, errno when the
 * machine cannot give the memory, huge pages or threads. */
/* The one list of stream.new's options; quiet is the facade's (no warnings). */
static const char *const new_keys[] = {"n", "threads", "cpus", "pages", "offset", "touch", "pin", "isa", "quiet", NULL};

/* Reads and checks the options of the table at 1 into *o (cpus[] holds
 * the cpus o->cpus points to) and *v; bad options raise, naming the
 * option.  Returns 0, or -errno when the affinity cannot be read. */
static int stream_opts(lua_State *L, struct stream_opts *o, int *cpus, const struct stream_variant **v)
{
	int allowed[STREAM_MAX_THREADS];
	if (lua_isnoneornil(L, 1))
		lua_newtable(L), lua_replace(L, 1);
	pmcsh_checktype(L, 1, LUA_TTABLE);
	pmcsh_checkkeys(L, 1, 1, new_keys);
	int nallowed = machine_allowed_cpus(allowed, STREAM_MAX_THREADS);
	if (nallowed < 0)
		return nallowed;
	o->n = opt_n(L);
	o->threads = opt_cpus(L, allowed, nallowed, cpus);
	o->cpus = cpus;
	o->pages = pmcsh_optpages(L, 1, 1);
	lua_Integer off = pmcsh_optint(L, 1, 1, "offset", 0);
	pmcsh_argcheck(L, off >= 0 && off < 4096 && off % 8 == 0, 1,
		      "offset: bytes added to each array start, a multiple of 8 below 4096");
	o->offset = (size_t)off;
	o->touch = pmcsh_optbool(L, 1, "touch", 1);
	o->pin = pmcsh_optbool(L, 1, "pin", 1);
	o->mem_available_kb = machine_mem_available_kb(NULL);
	*v = opt_isa(L);
	return 0;
}

/* stream.check{...}: stream.new's options checked as new checks them (bad
 * ones raise, naming the option), and the memory they ask for looked for,
 * allocating nothing: true, or fail, message, errno (no huge pages). */
static int stream_check_opts(lua_State *L)
{
	int cpus[STREAM_MAX_THREADS];
	struct stream_opts o = {0};
	const struct stream_variant *v;
	char msg[512];
	int rc = stream_opts(L, &o, cpus, &v);
	if (rc < 0)
		return luaL_fileresult(L, 0, "sched_getaffinity");
	if ((rc = stream_check(&o, msg, sizeof msg)) < 0)
		return pmcsh_fail(L, msg, -rc);
	lua_pushboolean(L, 1);
	return 1;
}

static int stream_new(lua_State *L)
{
	int cpus[STREAM_MAX_THREADS];
	struct stream_opts o = {0};
	const struct stream_variant *v;
	char msg[512];

	if (stream_opts(L, &o, cpus, &v) < 0)
		return luaL_fileresult(L, 0, "sched_getaffinity");

	/* The handle exists, closed, before anything is acquired. */
	LStream *ls = pmcsh_newhandle(L, sizeof *ls, 0, STREAM_MT);
	ls->pages = o.pages;
	ls->v = v;
	ls->held = pmcsh_extern_add(L, 3 * (o.offset + o.n * sizeof(double)));
	int rc = stream_create(&ls->s, &o, msg, sizeof msg);
	if (rc == -ENOMEM || rc == -EAGAIN) {
		/* streams left to the collector hold memory and threads it cannot
		 * see: collect once, and try again */
		lua_gc(L, LUA_GCCOLLECT);
		rc = stream_create(&ls->s, &o, msg, sizeof msg);
	}
	if (rc < 0)
		return pmcsh_fail(L, msg, -rc);
	return 1;
}

static int stream_close(lua_State *L)
{
	LStream *ls = luaL_checkudata(L, 1, STREAM_MT);
	struct stream *s = ls->s;
	ls->s = NULL;
	stream_destroy(s);
	pmcsh_extern_drop(ls->held);
	ls->held = 0;
	return 0;
}

static int stream_tostring(lua_State *L)
{
	LStream *ls = luaL_checkudata(L, 1, STREAM_MT);
	if (!ls->s)
		lua_pushliteral(L, "stream (closed)");
	else
		lua_pushfstring(L, "stream (n=%I, threads=%d, pages=%s, isa=%s): %p", (lua_Integer)stream_n(ls->s),
				stream_threads(ls->s), pages_policies[ls->pages].name, ls->v->name, (void *)ls);
	return 1;
}

static LLoop *checkloop(lua_State *L, int arg)
{
	LLoop *l = luaL_checkudata(L, arg, LOOP_MT);
	if (!l->u.dl)
		luaL_error(L, "attempt to use a closed loop");
	return l;
}

/* Kernel `arg` of variant v's table, or a user's loop (*loop set). */
static const struct stream_kernel *checkkernel(lua_State *L, int arg, const struct stream_variant *v, LLoop **loop)
{
	*loop = NULL;
	if (luaL_testudata(L, arg, LOOP_MT)) {
		*loop = checkloop(L, arg);
		return &(*loop)->u.k;
	}
	const char *name = pmcsh_checkstring(L, arg);
	const struct stream_kernel *k = stream_kernel_find(v, name);
	if (!k) {
		luaL_Buffer b;
		luaL_buffinit(L, &b);
		for (const struct stream_kernel *d = v->kernels; d->name; d++) {
			if (d != v->kernels)
				luaL_addstring(&b, ", ");
			luaL_addstring(&b, d->name);
		}
		luaL_pushresult(&b);
		pmcsh_argerror(L, arg, lua_pushfstring(L, "unknown kernel '%s' (kernels: %s)", name, lua_tostring(L, -1)));
	}
	return k;
}

struct run_opts {
	const struct stream_kernel *k;
	LLoop *loop;		/* k is this user's loop */
	lua_Integer reps;
	int warmup, ref;
	struct stream_shape shape;
};

/* The one list of s:run's options (the facade passes them through). */
static const char *const run_keys[] = {"reps", "warmup", "group", "reference", "passes", "alternate", "slice", NULL};

/* Reads the kernel (arg 2) and the option table (arg 3, made when absent)
 * into *o; leaves the stack as 1 stream, 2 kernel, 3 options, 4 the group
 * or nil.  Bad options raise, naming the option. */
static void run_opts(lua_State *L, const LStream *ls, struct run_opts *o)
{
	o->k = checkkernel(L, 2, ls->v, &o->loop);
	if (lua_isnoneornil(L, 3))
		lua_settop(L, 2), lua_newtable(L);
	pmcsh_checktype(L, 3, LUA_TTABLE);
	lua_settop(L, 3);
	pmcsh_checkkeys(L, 3, 3, run_keys);
	o->reps = pmcsh_optint(L, 3, 3, "reps", 10);
	pmcsh_argcheck(L, o->reps >= 1 && o->reps <= 1000000, 3, "reps: between 1 and 1000000");
	if (lua_getfield(L, 3, "warmup") == LUA_TNUMBER) {
		o->warmup = (int)lua_tointeger(L, -1);
		pmcsh_argcheck(L, o->warmup >= 0 && o->warmup <= 1000, 3, "warmup: true, false or 0..1000 repetitions");
	} else {
		o->warmup = lua_isnil(L, -1) ? 1 : lua_toboolean(L, -1);
	}
	lua_pop(L, 1);
	o->ref = pmcsh_optbool(L, 3, "reference", 0);
	lua_Integer passes = pmcsh_optint(L, 3, 3, "passes", 1);
	pmcsh_argcheck(L, passes >= 1 && passes <= 1000, 3, "passes: between 1 and 1000");
	o->shape.passes = (int)passes;
	/* alternate: true (the odd windows twice as long), or "passes" (twice the passes) */
	if (lua_getfield(L, 3, "alternate") == LUA_TSTRING) {
		pmcsh_argcheck(L, strcmp(lua_tostring(L, -1), "passes") == 0, 3,
			       "alternate: true, false or \"passes\"");
		o->shape.alternate = ALTERNATE_PASSES;
	} else {
		o->shape.alternate = lua_toboolean(L, -1) ? ALTERNATE_LENGTH : ALTERNATE_NONE;
	}
	lua_pop(L, 1);
	lua_Integer slice = pmcsh_optint(L, 3, 3, "slice", 0);
	pmcsh_argcheck(L, slice >= 0, 3, "slice: elements per thread in a window, at least 1 (0: whole parts)");
	o->shape.slice = (size_t)slice;
	pmcsh_argcheck(L, o->shape.alternate != ALTERNATE_PASSES || slice > 0, 3,
		       "alternate: \"passes\" needs slice=");
	if (lua_getfield(L, 3, "group") != LUA_TNIL)
		pmcsh_argcheck(L, luaL_testudata(L, 4, "pmcsh.group"), 3, lua_pushfstring(L,
			 "group: a pmcsh.group expected (pmc.group{...}), got %s", luaL_typename(L, 4)));
}

/* Leaves the raw result of `done` timed repetitions: what ran, the times
 * (s) and TSC ticks per repetition, and the descriptor's bytes; the
 * statistics (min, median, mbps, ...) are the facade's (pmcsh.stream). */
static void push_raw(lua_State *L, LStream *ls, const struct run_opts *o, int done,
		     const double *times, const uint64_t *work, const uint64_t *tsc, double sum)
{
	const struct stream_kernel *k = o->k;
	size_t n = stream_n(ls->s);
	lua_createtable(L, 0, 20);
	pmcsh_setstr(L, "kernel", k->name);
	pmcsh_setbool(L, "reference", o->ref);
	/* which loop ran: a variant, or the reference built -march=native; a
	 * user's loop is its own code (the facade reads its isa from it) */
	if (!o->loop)
		pmcsh_setstr(L, "isa", o->ref ? "native" : ls->v->name);
	if (o->loop) {
		pmcsh_setstr(L, "symbol", k->symbol);
		pmcsh_setstr(L, "path", o->loop->path);
		pmcsh_setbool(L, "loop", 1);
	} else if (!o->ref) {
		char sym[96];
		snprintf(sym, sizeof sym, "%s_%s", k->symbol, ls->v->name);
		pmcsh_setstr(L, "symbol", sym);
	}
	pmcsh_setint(L, "n", (lua_Integer)n);
	pmcsh_setint(L, "threads", stream_threads(ls->s));
	pmcsh_setstr(L, "pages", pages_policies[ls->pages].name);
	pmcsh_setint(L, "reps", done);
	pmcsh_setint(L, "warmup", o->warmup);
	lua_createtable(L, done, 0);
	for (int r = 0; r < done; r++)
		lua_pushnumber(L, times[r]), lua_rawseti(L, -2, r + 1);
	lua_setfield(L, -2, "times");
	if (tsc) {
		lua_createtable(L, done, 0);
		for (int r = 0; r < done; r++)
			lua_pushinteger(L, (lua_Integer)tsc[r]), lua_rawseti(L, -2, r + 1);
		lua_setfield(L, -2, "tsc");
	}
	lua_Integer iterations = 0;
	lua_createtable(L, done, 0);
	for (int r = 0; r < done; r++) {
		iterations += (lua_Integer)work[r];
		lua_pushinteger(L, (lua_Integer)work[r]), lua_rawseti(L, -2, r + 1);
	}
	lua_setfield(L, -2, "work");
	pmcsh_setint(L, "passes", o->shape.passes);
	if (o->shape.alternate == ALTERNATE_PASSES)
		pmcsh_setstr(L, "alternate", "passes");
	else
		pmcsh_setbool(L, "alternate", o->shape.alternate);
	if (o->shape.slice)
		pmcsh_setint(L, "slice", (lua_Integer)o->shape.slice);
	if (k->own) {	/* the loop's own word, where no arrays say it */
		if (k->bytes > 0)
			pmcsh_setnum(L, "bytes_per_iter", k->bytes);
	} else {
		pmcsh_setint(L, "bytes_per_iter", stream_kernel_bytes(k));
		pmcsh_setint(L, "bytes_per_iter_wa", stream_kernel_bytes_wa(k));
	}
	pmcsh_setint(L, "iterations", iterations);
	if (k->reduction)
		pmcsh_setnum(L, "sum", sum);
	pmcsh_setstr(L, "clock", "CLOCK_MONOTONIC");
	pmcsh_setnum(L, "tick", machine_clock_tick());
}

/* Leaves {a=, b=, c= (STREAM's average relative error of each array),
 * bound=, expected={a=, b=, c=}, sum=, sum_bound= (after a reduction)}. */
static void push_validation(lua_State *L, const struct stream_validation *v)
{
	lua_createtable(L, 0, 7);
	for (int k = 0; k < 3; k++)
		pmcsh_setnum(L, array_names[k], v->error[k]);
	pmcsh_setnum(L, "bound", v->bound);
	lua_createtable(L, 0, 3);
	for (int k = 0; k < 3; k++)
		pmcsh_setnum(L, array_names[k], v->expected[k]);
	lua_setfield(L, -2, "expected");
	if (v->has_sum) {
		pmcsh_setnum(L, "sum", v->sum_error);
		pmcsh_setnum(L, "sum_bound", v->sum_bound);
	}
}

/* Raises a failed validation: an error object of kind "validation"
 * (kernel= when a run's, message=), with no position: what failed is the
 * loop, not a line of the script, and a caller (the survey) decides on the
 * kind. */
static int validation_error(lua_State *L, const char *msg, const char *kernel, int ref)
{
	lua_createtable(L, 0, 3);
	pmcsh_setstr(L, "kind", "validation");
	if (kernel) {
		pmcsh_setstr(L, "kernel", kernel);
		lua_pushfstring(L, "%s (kernel %s%s)", msg, kernel, ref ? ", reference loop" : "");
	} else {
		lua_pushstring(L, msg);
	}
	lua_setfield(L, -2, "message");
	pmcsh_errormeta(L);
	lua_setmetatable(L, -2);
	return lua_error(L);
}

/* s:measure(kernel, {reps=, warmup=, group=, reference=})
 * All repetitions in this one call; the group's window is opened only
 * around each timed repetition's loop.  Leaves the raw result (push_raw,
 * with counts and per_rep under a group), or fail, message, errno when the
 * environment refuses (the counter window, a missing variant) or Ctrl-C
 * stopped it ("interrupted", EINTR).  A failed validation raises. */
static int stream_measure(lua_State *L)
{
	char msg[512];
	struct run_opts o;
	LStream *ls = checkstream(L);
	run_opts(L, ls, &o);
	if (o.loop && o.ref)
		return pmcsh_fail(L, lua_pushfstring(L, "%s has no reference loop (reference=true is the built-ins')",
						     o.loop->who), EOPNOTSUPP);
	if (!o.k->fn && !o.loop)
		return pmcsh_fail(L, lua_pushfstring(L, "kernel '%s' needs non-temporal stores, which the %s variant "
				  "lacks on this architecture: use '%s'", o.k->name, ls->v->name,
				  o.k->plain ? o.k->plain : "triad"), EOPNOTSUPP);
	if (o.ref && !stream_ref_runnable(msg, sizeof msg))
		return pmcsh_fail(L, msg, EOPNOTSUPP);

	struct kwindow kw = {0};
	struct pmc_window *w = NULL;
	if (!lua_isnil(L, 4)) {
		pid_t tids[STREAM_MAX_THREADS];
		int ntids = stream_worker_tids(ls->s, tids, STREAM_MAX_THREADS);
		w = lpmc_window_new(L, 4, (int)o.reps, tids, ntids, &kw);
		if (!w)
			return 3;
	}
	/* stack 5 (with a group): the window; then scratch for the times */
	double *times = lua_newuserdatauv(L, (size_t)o.reps * (sizeof(double) + 2 * sizeof(uint64_t)), 0);
	uint64_t *work = (uint64_t *)(times + o.reps);
	uint64_t *tsc = machine_tsc_usable(NULL) ? work + o.reps : NULL;
	double sum = 0;
	int done = 0;
	if (o.loop)
		guard_arm(o.loop->who);
	int rc = stream_run(ls->s, o.k, o.ref, (int)o.reps, o.warmup, &o.shape, w ? &kw : NULL,
			    times, work, tsc, &sum, &done);
	struct stream_validation val;
	/* an own-data loop leaves the arrays as they were: nothing to check */
	int vrc = o.k->own ? 0 : stream_validate(ls->s, o.k, sum, &val, msg, sizeof msg);
	if (o.loop)
		guard_disarm();
	if (rc == -EINTR)
		return pmcsh_fail(L, "interrupted", EINTR);
	if (rc == -EINVAL && o.shape.slice)
		return luaL_error(L, "slice=%d: a window must fit each thread's part of n (n = %d, %d threads)",
				  (int)o.shape.slice, (int)stream_n(ls->s), stream_threads(ls->s));
	if (rc == -EINVAL)
		return luaL_error(L, "alternate windows need at least 1024 elements per thread (n = %d, %d threads)",
				  (int)stream_n(ls->s), stream_threads(ls->s));
	if (rc == -EBUSY)
		return luaL_error(L, "alternate=\"passes\" slices need untouched arrays (stream.new{touch=false}, "
				  "no run before)");
	if (rc == -ENOSPC)
		return luaL_error(L, "reps=%d: the untouched elements ran out after %d windows of slice=%d; "
				  "fewer reps, a smaller slice or new arrays", (int)o.reps, done, (int)o.shape.slice);
	if (rc < 0)
		return pmcsh_fail(L, lua_pushfstring(L, "counter window failed during %s: %s", o.k->name,
						     strerror(-rc)), -rc);
	if (vrc < 0)
		return validation_error(L, msg, o.k->name, o.ref);
	push_raw(L, ls, &o, done, times, work, tsc, sum);
	if (!o.k->own) {
		push_validation(L, &val);
		lua_setfield(L, -2, "validation");
	}
	if (w) {
		lpmc_window_push(L, w, done);
		lua_setfield(L, -3, "per_rep");
		lua_setfield(L, -2, "counts");
	}
	return 1;
}

/* s:parts() -> {{first=, count=, cpu=, tid=}, ...}: the static partition
 * (first is 1-based, as Lua indexes). */
static int stream_parts(lua_State *L)
{
	struct stream *s = checkstream(L)->s;
	int nt = stream_threads(s);
	pid_t tids[STREAM_MAX_THREADS];
	stream_worker_tids(s, tids, STREAM_MAX_THREADS);
	lua_createtable(L, nt, 0);
	for (int i = 0; i < nt; i++) {
		size_t lo, cnt;
		int cpu;
		stream_part(s, i, &lo, &cnt, &cpu);
		lua_createtable(L, 0, 4);
		pmcsh_setint(L, "first", (lua_Integer)lo + 1);
		pmcsh_setint(L, "count", (lua_Integer)cnt);
		if (cpu >= 0)
			pmcsh_setint(L, "cpu", cpu);
		pmcsh_setint(L, "tid", i ? tids[i - 1] : gettid());
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

/* s:pages() -> {policy=, a={kernel_page=, rss=, thp=, hugetlb=}, b=, c=,
 * page_size=} in bytes, from /proc/self/smaps (what the kernel gave).
 * page_size is the page size backing most of the resident arrays. */
static int stream_pagesm(lua_State *L)
{
	LStream *ls = checkstream(L);
	double rss = 0, thp = 0, kps = 0;
	lua_createtable(L, 0, 6);
	pmcsh_setstr(L, "policy", pages_policies[ls->pages].name);
	for (int k = 0; k < 3; k++) {
		struct stream_pageinfo pi;
		int rc = stream_pageinfo(ls->s, k, &pi);
		if (rc < 0)
			return luaL_fileresult(L, 0, "/proc/self/smaps");
		lua_createtable(L, 0, 4);
		pmcsh_setint(L, "kernel_page", pi.kernel_page_kb * 1024);
		pmcsh_setint(L, "rss", pi.rss_kb * 1024);
		pmcsh_setint(L, "thp", pi.anon_huge_kb * 1024);
		pmcsh_setint(L, "hugetlb", pi.hugetlb_kb * 1024);
		lua_setfield(L, -2, array_names[k]);
		rss += pi.rss_kb;
		thp += pi.anon_huge_kb;
		kps = pi.kernel_page_kb;
	}
	pmcsh_setint(L, "page_size", (lua_Integer)(kps > 4 ? kps * 1024 : (rss > 0 && thp * 2 > rss ? 2097152 : kps * 1024)));
	pmcsh_setnum(L, "thp_fraction", rss > 0 ? thp / rss : 0);
	return 1;
}

static int checkarray(lua_State *L, int arg)
{
	return pmcsh_checkoption(L, arg, NULL, array_names);
}

static size_t checkindex(lua_State *L, struct stream *s, int arg)
{
	lua_Integer i = pmcsh_checkinteger(L, arg);
	pmcsh_argcheck(L, i >= 1 && (size_t)i <= stream_n(s), arg, "index out of 1..n");
	return (size_t)i - 1;
}

/* s:poke(array, i, value): overwrite one element (to show validation at
 * work); s:peek(array, i) reads one. */
static int stream_poke(lua_State *L)
{
	struct stream *s = checkstream(L)->s;
	int a = checkarray(L, 2);
	size_t i = checkindex(L, s, 3);
	stream_array(s, a)[i] = pmcsh_checknumber(L, 4);
	return 0;
}

static int stream_peek(lua_State *L)
{
	struct stream *s = checkstream(L)->s;
	int a = checkarray(L, 2);
	size_t i = checkindex(L, s, 3);
	lua_pushnumber(L, stream_array(s, a)[i]);
	return 1;
}

static int stream_resetm(lua_State *L)
{
	stream_reset(checkstream(L)->s);
	return 0;
}

/* s:validate() -> the validation (push_validation), or raises with what
 * is wrong. */
static int stream_validatem(lua_State *L)
{
	char msg[512];
	struct stream_validation v;
	if (stream_validate(checkstream(L)->s, NULL, 0, &v, msg, sizeof msg) < 0)
		return validation_error(L, msg, NULL, 0);
	push_validation(L, &v);
	return 1;
}

/* s:info() -> {n=, threads=, pages=, offset=, touched=, bytes=, expected={a,b,c}} */
static int stream_info(lua_State *L)
{
	LStream *ls = checkstream(L);
	struct stream *s = ls->s;
	lua_createtable(L, 0, 8);
	pmcsh_setint(L, "n", (lua_Integer)stream_n(s));
	pmcsh_setint(L, "threads", stream_threads(s));
	pmcsh_setstr(L, "pages", pages_policies[ls->pages].name);
	pmcsh_setint(L, "offset", (lua_Integer)stream_offset(s));
	pmcsh_setbool(L, "touched", stream_touched(s));
	pmcsh_setint(L, "array_bytes", (lua_Integer)(stream_n(s) * sizeof(double)));
	lua_createtable(L, 0, 3);
	for (int k = 0; k < 3; k++)
		pmcsh_setnum(L, array_names[k], stream_expected(s, k));
	lua_setfield(L, -2, "expected");
	return 1;
}

/* stream.kernels() -> the descriptor table of the best variant, default
 * first, with the counts the descriptor implies. */
static int stream_kernels_l(lua_State *L)
{
	lua_newtable(L);
	int i = 0;
	for (const struct stream_kernel *k = stream_variant_best()->kernels; k->name; k++) {
		lua_createtable(L, 0, 16);
		pmcsh_setstr(L, "name", k->name);
		pmcsh_setstr(L, "description", k->description);
		pmcsh_setstr(L, "symbol", k->symbol);
		pmcsh_setstr(L, "ref_symbol", k->ref_symbol);
		pmcsh_setint(L, "bytes", stream_kernel_bytes(k));
		pmcsh_setint(L, "bytes_wa", stream_kernel_bytes_wa(k));
		pmcsh_setint(L, "loads", stream_kernel_loads(k));
		pmcsh_setint(L, "stores", stream_kernel_stores(k));
		pmcsh_setint(L, "flops", k->flops);
		lua_createtable(L, 3, 0);
		for (int a = 0, j = 0; a < 3; a++)
			if (k->reads & (1u << a))
				lua_pushstring(L, array_names[a]), lua_rawseti(L, -2, ++j);
		lua_setfield(L, -2, "reads");
		lua_createtable(L, 3, 0);
		for (int a = 0, j = 0; a < 3; a++)
			if (k->writes & (1u << a))
				lua_pushstring(L, array_names[a]), lua_rawseti(L, -2, ++j);
		lua_setfield(L, -2, "writes");
		pmcsh_setbool(L, "nt", k->nt);
		if (k->plain)
			pmcsh_setstr(L, "plain", k->plain);
		pmcsh_setbool(L, "reduction", k->reduction);
		pmcsh_setbool(L, "available", k->fn != NULL);
		lua_rawseti(L, -2, ++i);
	}
	return 1;
}

/* stream.engine() -> {default_n=, isa=, nt_isa=, variants={{name=, runs=,
 * nt_isa=}...}, reference_runs=, scalar=}: what the engine offers here; the
 * facade's stream.machine() adds the machine facts (pmcsh.machine). */
static int stream_engine(lua_State *L)
{
	int ncache;
	lua_createtable(L, 0, 6);
	pmcsh_setint(L, "default_n", (lua_Integer)stream_default_n(machine_llc_bytes(NULL, &ncache)));
	const struct stream_variant *best = stream_variant_best();
	pmcsh_setstr(L, "isa", best->name);
	if (best->nt_isa)
		pmcsh_setstr(L, "nt_isa", best->nt_isa);
	lua_newtable(L);
	int ok;
	const struct stream_variant *v;
	for (int i = 0; (v = stream_variant_at(i, &ok)); i++) {
		lua_createtable(L, 0, 3);
		pmcsh_setstr(L, "name", v->name);
		pmcsh_setbool(L, "runs", ok);
		if (v->nt_isa)
			pmcsh_setstr(L, "nt_isa", v->nt_isa);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "variants");
	char why[256];
	pmcsh_setbool(L, "reference_runs", stream_ref_runnable(why, sizeof why));
	pmcsh_setnum(L, "scalar", STREAM_SCALAR);
	return 1;
}

/* ---- user loops ---------------------------------------------------------- */

/* stream.loop(path, symbol[, shown]) -> a pmcsh.loop (shown: the file as
 * messages name it, the source it was built from), or fail, message, errno (no
 * such file or symbol: ENOENT; not a shared object of this machine:
 * ENOEXEC; a descriptor pmcsh cannot use: EINVAL).  Loading runs the
 * object's constructors and, for a bare STREAM-convention loop, the loop on
 * one element (what it reads and writes): under the crash guard. */
static int loop_open(lua_State *L)
{
	const char *path = pmcsh_checkstring(L, 1);
	const char *symbol = luaL_optstring(L, 2, NULL);
	const char *shown = luaL_optstring(L, 3, path);
	char msg[512];
	LLoop *l = pmcsh_newhandle(L, sizeof *l, 0, LOOP_MT);
	snprintf(l->path, sizeof l->path, "%s", path);
	/* loading is said as loading: no loop has run yet */
	snprintf(l->who, sizeof l->who, "%s, while being loaded for the loop %s,", shown, symbol ? symbol : "loop");
	guard_arm(l->who);
	int rc = userloop_open(&l->u, path, symbol, shown, msg, sizeof msg);
	guard_disarm();
	if (rc < 0)
		return pmcsh_fail(L, msg, -rc);
	snprintf(l->who, sizeof l->who, "the loop %s of %s", l->u.symbol, shown);
	return 1;
}

static int loop_close(lua_State *L)
{
	LLoop *l = luaL_checkudata(L, 1, LOOP_MT);
	userloop_close(&l->u);
	return 0;
}

static void push_arrays(lua_State *L, unsigned mask, const char *field)
{
	lua_createtable(L, 3, 0);
	for (int a = 0, j = 0; a < 3; a++)
		if (mask & (1u << a))
			lua_pushstring(L, array_names[a]), lua_rawseti(L, -2, ++j);
	lua_setfield(L, -2, field);
}

/* l:info() -> {name=, symbol=, path=, convention="stream"|"own",
 * description=, described=, probed=, reads=, writes=, reduction=, bytes=,
 * bytes_wa=, flops=, elements_per_trip=, init=, init_part=, fini=}: the loop as the
 * engine sees it (bytes from the arrays for STREAM's convention, the
 * descriptor's for its own data; absent where unknown). */
static int loop_info(lua_State *L)
{
	LLoop *l = checkloop(L, 1);
	const struct stream_kernel *k = &l->u.k;
	lua_createtable(L, 0, 16);
	pmcsh_setstr(L, "name", k->name);
	pmcsh_setstr(L, "symbol", k->symbol);
	pmcsh_setstr(L, "path", l->path);
	pmcsh_setstr(L, "description", k->description);
	pmcsh_setstr(L, "convention", l->u.convention == PMCSH_OWN ? "own" : "stream");
	pmcsh_setbool(L, "described", l->u.described);
	pmcsh_setbool(L, "probed", l->u.probed);
	if (k->own) {
		pmcsh_setbool(L, "init", k->init != NULL || k->init_part != NULL);
		pmcsh_setbool(L, "init_part", k->init_part != NULL);
		pmcsh_setbool(L, "fini", k->fini != NULL);
		if (k->bytes > 0)
			pmcsh_setnum(L, "bytes", k->bytes);
		if (k->own_flops > 0)
			pmcsh_setnum(L, "flops", k->own_flops);
	} else {
		push_arrays(L, k->reads, "reads");
		push_arrays(L, k->writes, "writes");
		pmcsh_setbool(L, "reduction", k->reduction);
		pmcsh_setint(L, "loads", stream_kernel_loads(k));
		pmcsh_setint(L, "stores", stream_kernel_stores(k));
		if (k->reads | k->writes) {
			pmcsh_setint(L, "bytes", stream_kernel_bytes(k));
			pmcsh_setint(L, "bytes_wa", stream_kernel_bytes_wa(k));
		}
		if (l->u.described)
			pmcsh_setnum(L, "flops", k->own_flops);
		pmcsh_setbool(L, "reference", k->replay != NULL);
	}
	if (l->u.elements_per_trip > 0)
		pmcsh_setnum(L, "elements_per_trip", l->u.elements_per_trip);
	luaL_setmetatable(L, LOOP_INFO_MT);  /* plain data; the kind names how it prints */
	return 1;
}

static int loop_tostring(lua_State *L)
{
	LLoop *l = luaL_checkudata(L, 1, LOOP_MT);
	if (!l->u.dl)
		lua_pushliteral(L, "loop (closed)");
	else
		lua_pushfstring(L, "loop %s of %s: %p", l->u.symbol, l->path, (void *)l);
	return 1;
}

static const luaL_Reg loop_methods[] = {
	{"info", loop_info},
	{"close", loop_close},
	{NULL, NULL}
};

static const luaL_Reg loop_meta[] = {
	{"__gc", loop_close},
	{"__close", loop_close},
	{"__tostring", loop_tostring},
	{"__index", NULL},
	{NULL, NULL}
};

/* _stream.crash_note(text): what the crash guard adds to a loop's crash
 * line (the survey's run and how to resume it). */
static int stream_crash_note(lua_State *L)
{
	guard_note(luaL_optstring(L, 1, ""));
	return 0;
}

static const luaL_Reg funcs[] = {
	{"new", stream_new},
	{"loop", loop_open},
	{"crash_note", stream_crash_note},
	{"check", stream_check_opts},
	{"kernels", stream_kernels_l},
	{"engine", stream_engine},
	{NULL, NULL}
};

static const luaL_Reg methods[] = {
	{"measure", stream_measure},
	{"parts", stream_parts},
	{"pages", stream_pagesm},
	{"poke", stream_poke},
	{"peek", stream_peek},
	{"reset", stream_resetm},
	{"validate", stream_validatem},
	{"info", stream_info},
	{"close", stream_close},
	{NULL, NULL}
};

static const luaL_Reg metamethods[] = {
	{"__gc", stream_close},
	{"__close", stream_close},
	{"__tostring", stream_tostring},
	{"__index", NULL},
	{NULL, NULL}
};

/* The module table; `methods` is the shared method table of every stream,
 * so the Lua facade adds its own methods (s:run, over s:measure) once for
 * all. */
int luaopen_pmcsh__stream(lua_State *L)
{
	luaL_newlib(L, funcs);
	pmcsh_newclass(L, STREAM_MT, metamethods, methods);
	pmcsh_setmethods(L, "methods", STREAM_MT);
	pmcsh_newclass(L, LOOP_MT, loop_meta, loop_methods);
	pmcsh_setmethods(L, "loop_methods", LOOP_MT);
	luaL_newmetatable(L, LOOP_INFO_MT);  /* l:info()'s kind, for the facade's __tostring */
	lua_setfield(L, -2, "loop_info_meta");
	pmcsh_setnames(L, "new_options", new_keys);   /* for the facade's completion */
	pmcsh_setnames(L, "run_options", run_keys);
	return 1;
}
