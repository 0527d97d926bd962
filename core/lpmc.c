/* pmcsh._pmc: counter groups for Lua.  Converts between Lua and the pure C
 * counter layer (counter.h); the facade lua/pmcsh/pmc.lua adds the friendly
 * API.  Also the converters of the window the engines use (lpmc.h;
 * pmc_window.c).  The bindings built on groups (lrun.c, lcalib.c,
 * lreplay.c, lregions.c) use lgroup.h and are modules of their own; this
 * file calls only below it: readings (lreading.c), encodings (levents.c). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lgroup.h"
#include "levents.h"
#include "lreading.h"
#include "pmc_window.h"
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define GROUP_MT "pmcsh.group"
#define WINDOW_MT "pmcsh.window"

/* The shared conversions are described in lgroup.h. */

static struct lgroup *open_group(lua_State *L, struct lgroup *lg)
{
	if (lg->closed)
		luaL_error(L, "attempt to use a closed group");
	return lg;
}

/* The group userdata at idx: at least an lgroup's size, the magic first.
 * luaL_checkudata's registry lookup by name cost ~360 of the ~800 user
 * instructions of a window method (the arm64 lab); this costs ~40. */
static struct lgroup *to_group(lua_State *L, int idx)
{
	struct lgroup *lg = lua_touserdata(L, idx);
	if (!lg || lua_rawlen(L, idx) < sizeof *lg || lg->magic != LGROUP_MAGIC)
		pmcsh_typeerror(L, idx, GROUP_MT);
	return lg;
}

struct lgroup *lpmc_checkgroup(lua_State *L, int idx)
{
	return open_group(L, to_group(L, idx));
}

struct lgroup *lpmc_checkidle(lua_State *L, int idx)
{
	struct lgroup *lg = lpmc_checkgroup(L, idx);
	if (lg->measuring)
		luaL_error(L, "the group is measuring: inside g:measure's function it can be read, "
			   "not started, stopped, reset or measured with again");
	return lg;
}

int lpmc_resolve_list(lua_State *L, int idx, struct pmc_event *ev, int n, char *msg)
{
	for (int i = 0; i < n; i++) {
		lua_geti(L, idx, i + 1);
		if (lua_type(L, -1) != LUA_TSTRING)  /* before lua_tostring converts it */
			pmcsh_argerror(L, 1, lua_pushfstring(L, "events: entry %d is not a string", i + 1));
		size_t len;
		const char *name = lua_tolstring(L, -1, &len);
		if (strlen(name) != len)
			pmcsh_argerror(L, 1, lua_pushfstring(L, "events: entry %d contains a NUL byte", i + 1));
		int r = pmc_resolve(name, &ev[i], msg, PMC_ERR_MAX);
		lua_pop(L, 1);
		if (r)
			return r;
	}
	return 0;
}

int lpmc_list_len(lua_State *L, int idx, const char *what)
{
	pmcsh_argexpected(L, lua_istable(L, idx), idx, "table of event names");
	int n = (int)luaL_len(L, idx);
	pmcsh_argcheck(L, n >= 1, idx, "no events given");
	if (n > PMC_MAX_EVENTS)
		pmcsh_argerror(L, idx, lua_pushfstring(L, "%s: at most %d events in one group", what, PMC_MAX_EVENTS));
	return n;
}

static const char *const target_keys[] = {"pid", "cpus", "inherit", "pinned", NULL};

void lpmc_read_target(lua_State *L, int idx, struct pmc_target *t)
{
	memset(t, 0, sizeof *t);
	if (lua_isnoneornil(L, idx))
		return;
	pmcsh_checktype(L, idx, LUA_TTABLE);
	pmcsh_checkkeys(L, idx, idx, target_keys);
	lua_Integer pid = pmcsh_optint(L, idx, idx, "pid", 0);
	pmcsh_argcheck(L, pid >= 0 && pid <= INT_MAX, idx, "pid must be 0 (the calling thread) .. 2^31-1");
	t->pid = (pid_t)pid;
	if (lua_getfield(L, idx, "cpus") != LUA_TNIL) {
		pmcsh_argexpected(L, lua_istable(L, -1), idx, "cpus as a list of cpu numbers");
		int n = (int)luaL_len(L, -1);
		pmcsh_argcheck(L, n >= 1 && n <= PMC_MAX_CPUS, idx, "cpus: give 1 to 256 cpu numbers");
		/* each cpu once, in the order first given: a cpu named twice
		 * would be counted twice into the sum (cpus = {0, 0}) */
		for (int i = 0; i < n; i++) {
			int isint, type = lua_geti(L, -1, i + 1);
			lua_Integer c = lua_tointegerx(L, -1, &isint);
			if (!isint)
				pmcsh_argerror(L, idx, lua_pushfstring(L, "cpus[%d]: a cpu number expected, got %s", i + 1,
					      type == LUA_TNUMBER ? "a fraction" : luaL_typename(L, -1)));
			pmcsh_argcheck(L, c >= 0 && c <= 65535, idx, "cpus: cpu numbers are 0 .. 65535");
			int seen = 0;
			for (int k = 0; k < t->ncpus && !seen; k++)
				seen = t->cpus[k] == (int)c;
			if (!seen)
				t->cpus[t->ncpus++] = (int)c;
			lua_pop(L, 1);
		}
		t->pid = -1;
	}
	lua_pop(L, 1);
	lua_getfield(L, idx, "inherit");
	t->inherit = lua_toboolean(L, -1);
	lua_getfield(L, idx, "pinned");
	t->pinned = lua_toboolean(L, -1);
	lua_pop(L, 2);
}

struct lgroup *lpmc_newgroup(lua_State *L, int n)
{
	size_t size = sizeof(struct lgroup) + (size_t)n * (sizeof(struct pmc_event) + sizeof(struct pmc_sub));
	struct lgroup *lg = pmcsh_newhandle(L, size, 0, GROUP_MT);
	lg->magic = LGROUP_MAGIC;
	lg->closed = 1;  /* until every fd is open */
	lg->ev = (struct pmc_event *)(lg + 1);
	lg->sub = (struct pmc_sub *)(lg->ev + n);
	lg->g.ev = lg->ev;
	lg->g.sub = lg->sub;
	lg->g.nev = n;
	return lg;
}

/* The position of event ev inside its perf group (0: the leader), -1 if none. */
static int sub_position(const struct pmc_group *g, int ev)
{
	for (int s = 0; s < g->nsub; s++)
		for (int j = 0; j < g->sub[s].n; j++)
			if (g->sub[s].ev[j] == ev)
				return j;
	return -1;
}

int lpmc_group_open(lua_State *L, struct lgroup *lg, const struct pmc_target *t, char *msg)
{
	int bad;
	int r = pmc_group_open(&lg->g, t, &bad);
	if (r == -EMFILE || r == -ENFILE || r == -ENOMEM) {
		/* groups left to the collector hold descriptors it cannot see:
		 * collect once, and try again */
		lua_gc(L, LUA_GCCOLLECT);
		r = pmc_group_open(&lg->g, t, &bad);
	}
	if (r) {
		int pos = sub_position(&lg->g, bad);
		if (r == -EINVAL && pos > 0 && lg->ev[bad].needs_cpu_pmu)
			/* the kernel checks at open that a hardware group fits the counters */
			snprintf(msg, PMC_ERR_MAX, "group cannot be scheduled: the PMU counts %d of its events together, "
				 "not %s as well (fewer counters than events); split it into smaller groups",
				 pos, lg->ev[bad].name);
		else
			pmc_open_strerror(&lg->ev[bad >= 0 ? bad : 0], t, -r, msg, PMC_ERR_MAX);
		return r;
	}
	lg->target = *t;
	lg->closed = 0;  /* from here __gc closes the fds */
	return 0;
}

/* _pmc.group(events, opts) -> group | nil, msg, errno.  The group starts
 * disabled with its baseline at zero. */
static int l_open(lua_State *L)
{
	int n = lpmc_list_len(L, 1, "events");
	struct pmc_target t;
	lpmc_read_target(L, 2, &t);
	struct lgroup *lg = lpmc_newgroup(L, n);
	char msg[PMC_ERR_MAX];
	int r = lpmc_resolve_list(L, 1, lg->ev, n, msg);
	if (r)
		return pmcsh_fail(L, msg, -r);
	pmc_group_layout(&lg->g);
	r = lpmc_group_open(L, lg, &t, msg);
	if (r)
		return pmcsh_fail(L, msg, -r);
	pmc_group_map(&lg->g, &t, lg->rdpmc_why, sizeof lg->rdpmc_why);
	return 1;
}

void lpmc_close(struct lgroup *lg)
{
	if (!lg->closed) {
		lg->closed = 1;
		pmc_group_close(&lg->g);
	}
}

static int g_close(lua_State *L)
{
	lpmc_close(to_group(L, 1));
	return 0;
}

void lpmc_unsched_msg(const struct pmc_event *ev, char *msg, size_t len)
{
	snprintf(msg, len, "group cannot be scheduled: %s was enabled but never ran on the PMU (more events than "
		 "counters, or a pinned group evicted by another user); split it into smaller groups "
		 "(pmc.group with fewer events, or one pmc.group per event)", ev->name);
}

int lpmc_read_push(lua_State *L, struct lgroup *lg, int into)
{
	struct pmc_count c[PMC_MAX_EVENTS];
	char msg[PMC_ERR_MAX];
	int bad = 0;
	int r = pmc_group_snapshot(&lg->g);
	if (r == 0)
		r = pmc_group_delta(&lg->g, c, &bad);
	if (r == -EBUSY) {
		lpmc_unsched_msg(&lg->ev[bad >= 0 ? bad : 0], msg, sizeof msg);
		return pmcsh_fail(L, msg, EBUSY);
	}
	if (r)
		return pmcsh_fail(L, strerror(-r), -r);
	if (into)
		lreading_refill(L, into, &lg->g, c);   /* leaves the stack as it found it: r on top */
	else
		lreading_push(L, &lg->g, c, 1);
	return 1;
}

/* What g:start(), g:stop() and g:reset() return: g (for chaining), or
 * nil, message, errno when r is -errno. */
static int self_or_fail(lua_State *L, int r)
{
	if (r)
		return pmcsh_fail(L, r == -EBUSY ? "group cannot be scheduled (a pinned group in error state)" : strerror(-r),
				  -r);
	lua_settop(L, 1);
	return 1;
}

/* g:start(): new baseline, then enable. */
static int g_start(lua_State *L)
{
	return self_or_fail(L, pmc_group_start(&lpmc_checkidle(L, 1)->g));
}

/* g:stop([r]): disable; with r, read into it too (PAPI_stop's way): one
 * call where a window from Lua pays for three. */
static int g_stop(lua_State *L)
{
	struct lgroup *lg = lpmc_checkidle(L, 1);
	int r = pmc_group_disable(&lg->g);
	if (r || lua_isnoneornil(L, 2))
		return self_or_fail(L, r);
	lua_settop(L, 2);
	return lpmc_read_push(L, lg, 2);
}

/* g:reset(): the counts so far become the baseline (the counters run on). */
static int g_reset(lua_State *L)
{
	struct lgroup *lg = lpmc_checkidle(L, 1);
	int r = pmc_group_snapshot(&lg->g);
	if (!r)
		pmc_group_rebase(&lg->g);
	return self_or_fail(L, r);
}

/* g:read([r]): a new reading, or the reading r (from this group) refilled. */
static int g_read(lua_State *L)
{
	struct lgroup *lg = lpmc_checkgroup(L, 1);
	if (lua_isnoneornil(L, 2))
		return lpmc_read_push(L, lg, 0);
	lua_settop(L, 2);
	return lpmc_read_push(L, lg, 2);
}

/* g:measure(fn, ...) -> reading, fn's results.  For Lua code: the window
 * holds the interpreter's own work too.  An error in fn is re-raised after
 * the counters are stopped. */
static int g_measure(lua_State *L)
{
	struct lgroup *lg = lpmc_checkidle(L, 1);
	pmcsh_checktype(L, 2, LUA_TFUNCTION);
	int nargs = lua_gettop(L) - 2;
	int r = pmc_group_start(&lg->g);
	if (r)
		return pmcsh_fail(L, strerror(-r), -r);
	lg->measuring = 1;
	int st = lua_pcall(L, nargs, LUA_MULTRET, 0);
	lg->measuring = 0;
	if (st == LUA_OK && lg->closed)
		return luaL_error(L, "the group was closed inside g:measure's function");
	pmc_group_disable(&lg->g);
	if (st != LUA_OK)
		return lua_error(L);
	int nres = lua_gettop(L) - 1;
	int got = lpmc_read_push(L, lg, 0);
	if (got != 1)
		return got;
	lua_insert(L, 2);
	return nres + 1;
}

/* g:readpath() -> {rdpmc=, reason=?, fast_reads=, fallback_reads=}: whether
 * g:read() of a counting group can use rdpmc, and how often it did. */
static int g_readpath(lua_State *L)
{
	struct lgroup *lg = lpmc_checkgroup(L, 1);
	lua_createtable(L, 0, 4);
	pmcsh_setbool(L, "rdpmc", lg->g.mapped);
	if (!lg->g.mapped)
		pmcsh_setstr(L, "reason", lg->rdpmc_why);
	pmcsh_setint(L, "fast_reads", (lua_Integer)lg->g.fast_reads);
	pmcsh_setint(L, "fallback_reads", (lua_Integer)lg->g.slow_reads);
	return 1;
}

static int g_nfds(lua_State *L)
{
	struct lgroup *lg = to_group(L, 1);
	lua_pushinteger(L, lg->closed ? 0 : pmc_group_nfds(&lg->g));
	return 1;
}

/* g:events() -> list of {name, canonical, pmu, type, config, ...}, number of perf groups. */
static int g_events(lua_State *L)
{
	struct lgroup *lg = lpmc_checkgroup(L, 1);
	lua_createtable(L, lg->g.nev, 0);
	for (int i = 0; i < lg->g.nev; i++) {
		levents_push_encoding(L, &lg->ev[i]);
		lua_seti(L, -2, i + 1);
	}
	lua_pushinteger(L, lg->g.nsub);
	return 2;
}

static int g_tostring(lua_State *L)
{
	struct lgroup *lg = to_group(L, 1);
	if (lg->closed) {
		lua_pushstring(L, "pmc.group (closed)");
		return 1;
	}
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	luaL_addstring(&b, "pmc.group{");
	for (int i = 0; i < lg->g.nev; i++) {
		if (i)
			luaL_addstring(&b, ", ");
		luaL_addstring(&b, lg->ev[i].name);
	}
	lua_pushfstring(L, "} (%d perf group%s%s)", lg->g.nsub, lg->g.nsub > 1 ? "s" : "",
			lg->g.enabled ? ", counting" : "");
	luaL_addvalue(&b);
	luaL_pushresult(&b);
	return 1;
}

/* ---- the engines' window (lpmc.h; the logic in pmc_window.c) ------------- */

static int w_gc(lua_State *L)
{
	pmc_window_close(luaL_checkudata(L, 1, WINDOW_MT));
	return 0;
}

struct pmc_window *lpmc_window_new(lua_State *L, int idx, int nreps, const pid_t *tids, int ntids,
				   struct kwindow *kw)
{
	idx = lua_absindex(L, idx);
	struct lgroup *lg = lpmc_checkidle(L, idx);
	pmcsh_argcheck(L, nreps >= 1, idx, "window needs at least one repetition");
	struct pmc_window *w = pmcsh_newhandle(L, sizeof *w, 1, WINDOW_MT);
	lua_pushvalue(L, idx);  /* keeps the group alive while the window is */
	lua_setiuservalue(L, -2, 1);
	char msg[PMC_ERR_MAX];
	int r = pmc_window_open(w, &lg->g, &lg->target, nreps, tids, ntids, kw, msg, sizeof msg);
	if (r) {
		lua_pop(L, 1);
		pmcsh_fail(L, msg, -r);
		return NULL;
	}
	return w;
}

void lpmc_window_push(lua_State *L, struct pmc_window *w, int nreps_done)
{
	if (w->err == -EBUSY) {
		char msg[PMC_ERR_MAX];
		lpmc_unsched_msg(&w->g->ev[w->err_ev], msg, sizeof msg);
		lua_pushnil(L);
		lua_pushstring(L, msg);
		return;
	}
	struct pmc_count c[PMC_MAX_EVENTS];
	nreps_done = pmc_window_sum(w, nreps_done, c);
	lreading_push(L, w->g, c, 0);
	lua_createtable(L, nreps_done, 0);
	for (int r = 0; r < nreps_done; r++) {
		pmc_window_rep(w, r, c);
		lreading_push(L, w->g, c, 0);
		lua_seti(L, -2, r + 1);
	}
}

/* ---- registration ---------------------------------------------------------------- */

static const luaL_Reg funcs[] = {
	{"group", l_open},
	{NULL, NULL}
};

static const luaL_Reg group_methods[] = {
	{"start", g_start},
	{"stop", g_stop},
	{"reset", g_reset},
	{"read", g_read},
	{"measure", g_measure},
	{"close", g_close},
	{"nfds", g_nfds},
	{"readpath", g_readpath},
	{"events", g_events},
	{NULL, NULL}
};

static const luaL_Reg group_meta[] = {
	{"__gc", g_close},
	{"__close", g_close},
	{"__tostring", g_tostring},
	{"__index", NULL},
	{NULL, NULL}
};

static void createmeta(lua_State *L)
{
	pmcsh_newclass(L, GROUP_MT, group_meta, group_methods);
	luaL_newmetatable(L, WINDOW_MT);
	lua_pushcfunction(L, w_gc);
	lua_setfield(L, -2, "__gc");
	lua_pushcfunction(L, w_gc);
	lua_setfield(L, -2, "__close");
	lua_pop(L, 1);
}

int luaopen_pmcsh__pmc(lua_State *L)
{
	createmeta(L);
	luaL_newlib(L, funcs);
	pmcsh_setmethods(L, "group_methods", GROUP_MT);
	pmcsh_setnames(L, "group_options", target_keys);   /* for the facade's completion */
	lreading_meta(L);
	lua_setfield(L, -2, "reading_meta");   /* for the facade's __tostring */
	return 1;
}
