/* pmcsh._pmc: counter groups for Lua.  Converts between Lua and the pure C
 * counter layer (counter.h); the facade lua/pmcsh/pmc.lua adds the friendly
 * API.  Also the converters of the window the engines use (lpmc.h;
 * window.c), of pmc.run (child.c) and of the calibration probes whose
 * measured work is C inside one C call (calib.c, kernels/probe.c). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lpmc.h"
#include "../kernels/probe.h"
#include "counter.h"
#include "window.h"
#include "child.h"
#include "calib.h"
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define GROUP_MT "pmcsh.group"
#define WINDOW_MT "pmcsh.window"
#define READING_MT "pmcsh.reading"

struct lgroup {
	int closed;
	struct pmc_group g;
	struct pmc_target target;
	struct pmc_event *ev;   /* points into the tail of this userdata */
	struct pmc_sub *sub;
	char rdpmc_why[256];    /* why g:read() uses read() only, when not mapped */
};

static struct lgroup *checkgroup(lua_State *L, int idx)
{
	struct lgroup *lg = luaL_checkudata(L, idx, GROUP_MT);
	if (lg->closed)
		luaL_error(L, "attempt to use a closed group");
	return lg;
}

/* Resolves the event names in the list at `idx` into ev[] (n of them).
 * Argument misuse raises; an unknown event returns -errno with msg. */
static int resolve_list(lua_State *L, int idx, struct pmc_event *ev, int n, char *msg)
{
	for (int i = 0; i < n; i++) {
		lua_geti(L, idx, i + 1);
		if (lua_type(L, -1) != LUA_TSTRING)  /* before lua_tostring converts it */
			luaL_error(L, "bad argument #1 (events): entry %d is not a string", i + 1);
		size_t len;
		const char *name = lua_tolstring(L, -1, &len);
		if (strlen(name) != len)
			luaL_error(L, "bad argument #1 (events): entry %d contains a NUL byte", i + 1);
		int r = pmc_resolve(name, &ev[i], msg, PMC_ERR_MAX);
		lua_pop(L, 1);
		if (r)
			return r;
	}
	return 0;
}

static int list_len(lua_State *L, int idx, const char *what)
{
	luaL_argexpected(L, lua_istable(L, idx), idx, "table of event names");
	int n = (int)luaL_len(L, idx);
	luaL_argcheck(L, n >= 1, idx, "no events given");
	if (n > PMC_MAX_EVENTS)
		luaL_error(L, "bad argument #%d (%s): at most %d events in one group", idx, what, PMC_MAX_EVENTS);
	return n;
}

/* Target options from the table at `idx`: pid, cpus, inherit, pinned. */
static void read_target(lua_State *L, int idx, struct pmc_target *t)
{
	memset(t, 0, sizeof *t);
	if (lua_isnoneornil(L, idx))
		return;
	luaL_checktype(L, idx, LUA_TTABLE);
	static const char *const known[] = {"pid", "cpus", "inherit", "pinned", NULL};
	pmcsh_checkkeys(L, idx, idx, known);
	if (lua_getfield(L, idx, "pid") != LUA_TNIL) {
		lua_Integer pid = luaL_checkinteger(L, -1);
		luaL_argcheck(L, pid >= 0 && pid <= INT_MAX, idx, "pid must be 0 (the calling thread) .. 2^31-1");
		t->pid = (pid_t)pid;
	}
	lua_pop(L, 1);
	if (lua_getfield(L, idx, "cpus") != LUA_TNIL) {
		luaL_argexpected(L, lua_istable(L, -1), idx, "cpus as a list of cpu numbers");
		int n = (int)luaL_len(L, -1);
		luaL_argcheck(L, n >= 1 && n <= PMC_MAX_CPUS, idx, "cpus: give 1 to 256 cpu numbers");
		for (int i = 0; i < n; i++) {
			lua_geti(L, -1, i + 1);
			lua_Integer c = luaL_checkinteger(L, -1);
			luaL_argcheck(L, c >= 0 && c <= 65535, idx, "cpus: cpu numbers are 0 .. 65535");
			t->cpus[i] = (int)c;
			lua_pop(L, 1);
		}
		t->ncpus = n;
		t->pid = -1;
	}
	lua_pop(L, 1);
	lua_getfield(L, idx, "inherit");
	t->inherit = lua_toboolean(L, -1);
	lua_getfield(L, idx, "pinned");
	t->pinned = lua_toboolean(L, -1);
	lua_pop(L, 2);
}

/* Allocates a closed group userdata for n events (left on the stack). */
static struct lgroup *newgroup(lua_State *L, int n)
{
	size_t size = sizeof(struct lgroup) + (size_t)n * (sizeof(struct pmc_event) + sizeof(struct pmc_sub));
	struct lgroup *lg = lua_newuserdatauv(L, size, 1);
	memset(lg, 0, size);
	lg->closed = 1;  /* until every fd is open */
	lg->ev = (struct pmc_event *)(lg + 1);
	lg->sub = (struct pmc_sub *)(lg->ev + n);
	lg->g.ev = lg->ev;
	lg->g.sub = lg->sub;
	lg->g.nev = n;
	luaL_setmetatable(L, GROUP_MT);
	return lg;
}

/* _pmc.open(events, opts) -> group | nil, msg, errno.  The group starts
 * disabled with its baseline at zero. */
/* The position of event ev inside its perf group (0: the leader), -1 if none. */
static int sub_position(const struct pmc_group *g, int ev)
{
	for (int s = 0; s < g->nsub; s++)
		for (int j = 0; j < g->sub[s].n; j++)
			if (g->sub[s].ev[j] == ev)
				return j;
	return -1;
}

static int l_open(lua_State *L)
{
	int n = list_len(L, 1, "events");
	struct pmc_target t;
	read_target(L, 2, &t);
	struct lgroup *lg = newgroup(L, n);
	char msg[PMC_ERR_MAX];
	int r = resolve_list(L, 1, lg->ev, n, msg);
	if (r)
		return pmcsh_fail(L, msg, -r);
	pmc_group_layout(&lg->g);
	int bad;
	r = pmc_group_open(&lg->g, &t, &bad);
	if (r == -EMFILE || r == -ENFILE || r == -ENOMEM) {
		/* groups left to the collector hold descriptors it cannot see:
		 * collect once, and try again */
		lua_gc(L, LUA_GCCOLLECT);
		r = pmc_group_open(&lg->g, &t, &bad);
	}
	if (r) {
		int pos = sub_position(&lg->g, bad);
		if (r == -EINVAL && pos > 0 && lg->ev[bad].needs_cpu_pmu)
			/* the kernel checks at open that a hardware group fits the counters */
			snprintf(msg, sizeof msg, "group cannot be scheduled: the PMU counts %d of its events together, "
				 "not %s as well (fewer counters than events); split it into smaller groups",
				 pos, lg->ev[bad].name);
		else
			pmc_open_strerror(&lg->ev[bad >= 0 ? bad : 0], -r, msg, sizeof msg);
		return pmcsh_fail(L, msg, -r);
	}
	lg->target = t;
	lg->closed = 0;
	pmc_group_map(&lg->g, &t, lg->rdpmc_why, sizeof lg->rdpmc_why);
	return 1;
}

static int g_close(lua_State *L)
{
	struct lgroup *lg = luaL_checkudata(L, 1, GROUP_MT);
	if (!lg->closed) {
		lg->closed = 1;
		pmc_group_close(&lg->g);
	}
	return 0;
}

static void push_value(lua_State *L, double v, int exact)
{
	/* integral and below 2^63: an integer (the cast is defined only there) */
	if (exact && v >= -9.2e18 && v <= 9.2e18 && v == (double)(lua_Integer)v)
		lua_pushinteger(L, (lua_Integer)v);
	else
		lua_pushnumber(L, v);
}

/* Adds to the entry on the top of the stack, for an event counted cpu-wide
 * (a cpu list or an uncore cpumask), cpus = {{cpu=, socket=, value=, raw=,
 * enabled=, running=, multiplexed=}...} in instance order and sockets =
 * {[socket] = summed value}.  Nothing for a task target. */
static void push_instances(lua_State *L, const struct pmc_group *g, int ev)
{
	struct pmc_count c;
	int ninst, cpu = -1, socket = -1;
	if (pmc_inst_delta(g, ev, 0, &c, &ninst, &cpu, &socket) != 0 || cpu < 0)
		return;
	int exact = g->ev[ev].scale == 1.0;
	lua_createtable(L, ninst, 0);   /* cpus */
	lua_createtable(L, 0, 2);       /* sockets */
	for (int k = 0; k < ninst; k++) {
		if (pmc_inst_delta(g, ev, k, &c, &ninst, &cpu, &socket) != 0)
			break;
		lua_createtable(L, 0, 7);
		lua_pushinteger(L, cpu); lua_setfield(L, -2, "cpu");
		lua_pushinteger(L, socket); lua_setfield(L, -2, "socket");
		push_value(L, c.value, exact && !c.multiplexed);
		lua_setfield(L, -2, "value");
		lua_pushinteger(L, (lua_Integer)c.raw); lua_setfield(L, -2, "raw");
		lua_pushinteger(L, (lua_Integer)c.enabled); lua_setfield(L, -2, "enabled");
		lua_pushinteger(L, (lua_Integer)c.running); lua_setfield(L, -2, "running");
		lua_pushboolean(L, c.multiplexed); lua_setfield(L, -2, "multiplexed");
		lua_seti(L, -3, k + 1);
		/* sockets[socket] += value, integer while every part is */
		int prev_int = lua_geti(L, -1, socket) == LUA_TNIL || lua_isinteger(L, -1);
		if (prev_int && exact && !c.multiplexed && c.value == (double)(lua_Integer)c.value)
			lua_pushinteger(L, lua_tointeger(L, -1) + (lua_Integer)c.value);
		else
			lua_pushnumber(L, lua_tonumber(L, -1) + c.value);
		lua_seti(L, -3, socket);
		lua_pop(L, 1);
	}
	lua_setfield(L, -3, "sockets");
	lua_setfield(L, -2, "cpus");
}

/* A reading's metatable: r["page-faults:u"] finds the entry of that name. */
static int reading_index(lua_State *L)
{
	if (lua_type(L, 2) != LUA_TSTRING)
		return 0;
	lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
	for (lua_Integer i = 1; i <= n; i++) {
		if (lua_rawgeti(L, 1, i) == LUA_TTABLE) {
			lua_getfield(L, -1, "name");
			if (lua_rawequal(L, -1, 2)) {
				lua_pop(L, 1);
				return 1;
			}
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
	}
	return 0;
}

/* Pushes a reading: the list of entries {name, value, raw, enabled,
 * running, multiplexed, unit?} in the order the events were given, plus
 * cpus/sockets per instance (push_instances) when g is given; lookup by
 * event string through its metatable (READING_MT). */
static void push_reading(lua_State *L, const struct pmc_event *ev, int n, const struct pmc_count *c,
			 const struct pmc_group *g)
{
	lua_createtable(L, n, 0);
	luaL_setmetatable(L, READING_MT);
	for (int i = 0; i < n; i++) {
		lua_createtable(L, 0, 9);
		lua_pushstring(L, ev[i].name);
		lua_setfield(L, -2, "name");
		push_value(L, c[i].value, !c[i].multiplexed && ev[i].scale == 1.0);
		lua_setfield(L, -2, "value");
		lua_pushinteger(L, (lua_Integer)c[i].raw);
		lua_setfield(L, -2, "raw");
		lua_pushinteger(L, (lua_Integer)c[i].enabled);
		lua_setfield(L, -2, "enabled");
		lua_pushinteger(L, (lua_Integer)c[i].running);
		lua_setfield(L, -2, "running");
		lua_pushboolean(L, c[i].multiplexed);
		lua_setfield(L, -2, "multiplexed");
		if (ev[i].unit[0]) {
			lua_pushstring(L, ev[i].unit);
			lua_setfield(L, -2, "unit");
		}
		if (g)
			push_instances(L, g, i);
		lua_rawseti(L, -2, i + 1);
	}
}

/* The fields fill_reading rewrites, interned once: g:read's upvalue 1 holds
 * them as a list, so a refill hashes no string. */
static const char *const fill_keys[] = {"value", "raw", "enabled", "running", "multiplexed"};

/* Writes the counts into the entries of `r` (a reading of the same events,
 * at stack index r), so a window read in a loop allocates nothing.  Needs
 * g:read's upvalue. */
static void fill_reading(lua_State *L, int r, int n, const struct pmc_count *c, const struct pmc_group *g)
{
	int percpu = g->nsub > 0 && g->sub[0].ninst > 0 && g->sub[0].inst[0].cpu >= 0;
	int k = lua_gettop(L) + 1;   /* the keys, k .. k+4 */
	for (int j = 1; j <= 5; j++)
		lua_rawgeti(L, lua_upvalueindex(1), j);
	for (int i = 0; i < n; i++) {
		if (lua_rawgeti(L, r, i + 1) != LUA_TTABLE)
			luaL_error(L, "bad argument #1 to 'read' (entry %d of the reading is not a table)", i + 1);
		lua_pushvalue(L, k);
		push_value(L, c[i].value, !c[i].multiplexed && g->ev[i].scale == 1.0);
		lua_rawset(L, -3);
		lua_pushvalue(L, k + 1);
		lua_pushinteger(L, (lua_Integer)c[i].raw);
		lua_rawset(L, -3);
		lua_pushvalue(L, k + 2);
		lua_pushinteger(L, (lua_Integer)c[i].enabled);
		lua_rawset(L, -3);
		lua_pushvalue(L, k + 3);
		lua_pushinteger(L, (lua_Integer)c[i].running);
		lua_rawset(L, -3);
		lua_pushvalue(L, k + 4);
		lua_pushboolean(L, c[i].multiplexed);
		lua_rawset(L, -3);
		if (percpu)
			push_instances(L, g, i);
		lua_pop(L, 1);
	}
	lua_settop(L, r);
}

static void unsched_msg(const struct pmc_event *ev, const struct pmc_count *c, char *msg, size_t len)
{
	(void)c;
	snprintf(msg, len, "group cannot be scheduled: %s was enabled but never ran on the PMU (more events than "
		 "counters, or a pinned group evicted by another user); split it into smaller groups "
		 "(pmc.group with fewer events, or one pmc.group per event)", ev->name);
}

/* Reads the current delta; pushes the reading (into the table at `into`
 * when into > 0), or nil, msg, errno. */
static int read_push(lua_State *L, struct lgroup *lg, int into)
{
	struct pmc_count c[PMC_MAX_EVENTS];
	char msg[PMC_ERR_MAX];
	int bad = 0;
	int r = pmc_group_snapshot(&lg->g);
	if (r == 0)
		r = pmc_group_delta(&lg->g, c, &bad);
	if (r == -EBUSY) {
		unsched_msg(&lg->ev[bad >= 0 ? bad : 0], c, msg, sizeof msg);
		return pmcsh_fail(L, msg, EBUSY);
	}
	if (r)
		return pmcsh_fail(L, strerror(-r), -r);
	if (into)
		fill_reading(L, into, lg->g.nev, c, &lg->g);
	else
		push_reading(L, lg->ev, lg->g.nev, c, &lg->g);
	return 1;
}

/* g:start(): new baseline, then enable.  Returns g. */
static int g_start(lua_State *L)
{
	struct lgroup *lg = checkgroup(L, 1);
	int r = pmc_group_start(&lg->g);
	if (r)
		return pmcsh_fail(L, r == -EBUSY ? "group cannot be scheduled (a pinned group in error state)" : strerror(-r),
			    -r);
	lua_settop(L, 1);
	return 1;
}

static int g_stop(lua_State *L)
{
	struct lgroup *lg = checkgroup(L, 1);
	int r = pmc_group_disable(&lg->g);
	if (r)
		return pmcsh_fail(L, strerror(-r), -r);
	lua_settop(L, 1);
	return 1;
}

static int g_reset(lua_State *L)
{
	struct lgroup *lg = checkgroup(L, 1);
	int r = pmc_group_snapshot(&lg->g);
	if (r)
		return pmcsh_fail(L, strerror(-r), -r);
	pmc_group_rebase(&lg->g);
	lua_settop(L, 1);
	return 1;
}

/* g:read([r]): a new reading, or the reading r (from this group) refilled. */
static int g_read(lua_State *L)
{
	struct lgroup *lg = checkgroup(L, 1);
	if (lua_isnoneornil(L, 2))
		return read_push(L, lg, 0);
	luaL_checktype(L, 2, LUA_TTABLE);
	luaL_argcheck(L, luaL_len(L, 2) == lg->g.nev, 2, "not a reading of this group (wrong number of entries)");
	lua_settop(L, 2);
	return read_push(L, lg, 2);
}

/* g:measure(fn, ...) -> reading, fn's results.  For Lua code: the window
 * holds the interpreter's own work too.  An error in fn is re-raised after
 * the counters are stopped. */
static int g_measure(lua_State *L)
{
	struct lgroup *lg = checkgroup(L, 1);
	luaL_checktype(L, 2, LUA_TFUNCTION);
	int nargs = lua_gettop(L) - 2;
	int r = pmc_group_start(&lg->g);
	if (r)
		return pmcsh_fail(L, strerror(-r), -r);
	int st = lua_pcall(L, nargs, LUA_MULTRET, 0);
	if (st == LUA_OK && lg->closed)
		return luaL_error(L, "the group was closed inside g:measure's function");
	pmc_group_disable(&lg->g);
	if (st != LUA_OK)
		return lua_error(L);
	int nres = lua_gettop(L) - 1;
	int got = read_push(L, lg, 0);
	if (got != 1)
		return got;
	lua_insert(L, 2);
	return nres + 1;
}

/* g:readpath() -> {rdpmc=, reason=?, fast_reads=, fallback_reads=}: whether
 * g:read() of a counting group can use rdpmc, and how often it did. */
static int g_readpath(lua_State *L)
{
	struct lgroup *lg = checkgroup(L, 1);
	lua_createtable(L, 0, 4);
	lua_pushboolean(L, lg->g.mapped);
	lua_setfield(L, -2, "rdpmc");
	if (!lg->g.mapped) {
		lua_pushstring(L, lg->rdpmc_why);
		lua_setfield(L, -2, "reason");
	}
	lua_pushinteger(L, (lua_Integer)lg->g.fast_reads);
	lua_setfield(L, -2, "fast_reads");
	lua_pushinteger(L, (lua_Integer)lg->g.slow_reads);
	lua_setfield(L, -2, "fallback_reads");
	return 1;
}

static int g_nfds(lua_State *L)
{
	struct lgroup *lg = luaL_checkudata(L, 1, GROUP_MT);
	lua_pushinteger(L, lg->closed ? 0 : pmc_group_nfds(&lg->g));
	return 1;
}

/* g:events() -> list of {name, canon, pmu, type, config, ...}. */
static void push_encoding(lua_State *L, const struct pmc_event *e)
{
	lua_createtable(L, 0, 12);
	lua_pushstring(L, e->name); lua_setfield(L, -2, "name");
	lua_pushstring(L, e->canon); lua_setfield(L, -2, "canonical");
	lua_pushstring(L, e->pmu); lua_setfield(L, -2, "pmu");
	lua_pushinteger(L, e->attr.type); lua_setfield(L, -2, "type");
	lua_pushinteger(L, (lua_Integer)e->attr.config); lua_setfield(L, -2, "config");
	lua_pushinteger(L, (lua_Integer)e->attr.config1); lua_setfield(L, -2, "config1");
	lua_pushinteger(L, (lua_Integer)e->attr.config2); lua_setfield(L, -2, "config2");
	lua_pushboolean(L, e->attr.exclude_user); lua_setfield(L, -2, "exclude_user");
	lua_pushboolean(L, e->attr.exclude_kernel); lua_setfield(L, -2, "exclude_kernel");
	lua_pushboolean(L, e->attr.exclude_hv); lua_setfield(L, -2, "exclude_hv");
	lua_pushnumber(L, e->scale); lua_setfield(L, -2, "scale");
	if (e->unit[0]) { lua_pushstring(L, e->unit); lua_setfield(L, -2, "unit"); }
	lua_pushboolean(L, e->needs_cpu_pmu); lua_setfield(L, -2, "hardware");
	if (e->ncpumask) {
		lua_createtable(L, e->ncpumask, 0);
		for (int i = 0; i < e->ncpumask; i++) {
			lua_pushinteger(L, e->cpumask[i]);
			lua_seti(L, -2, i + 1);
		}
		lua_setfield(L, -2, "cpumask");
	}
}

static int g_events(lua_State *L)
{
	struct lgroup *lg = checkgroup(L, 1);
	lua_createtable(L, lg->g.nev, 0);
	for (int i = 0; i < lg->g.nev; i++) {
		push_encoding(L, &lg->ev[i]);
		lua_seti(L, -2, i + 1);
	}
	lua_pushinteger(L, lg->g.nsub);
	return 2;
}

static int g_tostring(lua_State *L)
{
	struct lgroup *lg = luaL_checkudata(L, 1, GROUP_MT);
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

/* ---- the engines' window (lpmc.h; the logic in window.c) ----------------- */

static int w_gc(lua_State *L)
{
	pmc_window_close(luaL_checkudata(L, 1, WINDOW_MT));
	return 0;
}

struct pmc_window *lpmc_window_new(lua_State *L, int idx, int nreps, const pid_t *tids, int ntids,
				   struct kwindow *kw)
{
	idx = lua_absindex(L, idx);
	struct lgroup *lg = checkgroup(L, idx);
	luaL_argcheck(L, nreps >= 1, idx, "window needs at least one repetition");
	struct pmc_window *w = lua_newuserdatauv(L, sizeof *w, 1);
	memset(w, 0, sizeof *w);
	luaL_setmetatable(L, WINDOW_MT);
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
		unsched_msg(&w->g->ev[w->err_ev], NULL, msg, sizeof msg);
		lua_pushnil(L);
		lua_pushstring(L, msg);
		return;
	}
	struct pmc_count c[PMC_MAX_EVENTS];
	nreps_done = pmc_window_sum(w, nreps_done, c);
	push_reading(L, w->g->ev, w->nev, c, NULL);
	lua_createtable(L, nreps_done, 0);
	for (int r = 0; r < nreps_done; r++) {
		pmc_window_rep(w, r, c);
		push_reading(L, w->g->ev, w->nev, c, NULL);
		lua_seti(L, -2, r + 1);
	}
}

/* ---- calibration probes: measured work in C, one call (calib.c) --------- */

/* _pmc.probe(g, kind, arg[, path]) -> reading, wall_ns, thread_cpu_ns.  kind: "touch" (first touch
 * of `arg` bytes of a fresh anonymous mapping), "read" (read() `arg` bytes of
 * file `path` (default /dev/zero) into a fresh, untouched mapping: faults
 * taken in the kernel),
 * "spin" (busy loop for `arg` ns), "sleep" (nanosleep `arg` ns), "empty",
 * "loop", "syscalls" (kernels/probe.h). */
static int l_probe(lua_State *L)
{
	struct lgroup *lg = checkgroup(L, 1);
	int kind = luaL_checkoption(L, 2, NULL, probe_kinds);
	lua_Integer arg = luaL_optinteger(L, 3, 0);
	luaL_argcheck(L, arg >= 0, 3, "must be >= 0");
	const char *path = luaL_optstring(L, 4, "/dev/zero");
	char msg[PMC_ERR_MAX];
	double wall, cpu;
	int r = pmc_probe(&lg->g, kind, (uint64_t)arg, path, &wall, &cpu, msg, sizeof msg);
	if (r)
		return pmcsh_fail(L, msg, -r);
	int got = read_push(L, lg, 0);
	if (got != 1)
		return got;
	lua_pushnumber(L, wall);
	lua_pushnumber(L, cpu);
	return 3;
}

/* ---- child command (the protocol in child.c) ------------------------------ */

/* Pushes the cumulative readings of l_run: the child's group (gtab == 0),
 * or the list of the targets' groups in the table at gtab.  Returns 1, or
 * what pmcsh_fail pushed (3). */
static int run_readings(lua_State *L, int gtab, struct lgroup *child)
{
	if (!gtab)
		return read_push(L, child, 0);
	int n = (int)lua_rawlen(L, gtab);
	lua_createtable(L, n, 0);
	for (int i = 1; i <= n; i++) {
		lua_rawgeti(L, gtab, i);
		struct lgroup *lg = lua_touserdata(L, -1);
		lua_pop(L, 1);
		int r = read_push(L, lg, 0);
		if (r != 1)
			return r;
		lua_rawseti(L, -2, i);
	}
	return 1;
}

/* pmc_child_wait's tick for l_run: on_interval(reading(s), seconds); an
 * error in it stops the count and is raised once the command is gone (its
 * message left on the stack). */
struct run_tick {
	lua_State *L;
	int cb, gtab;
	struct lgroup *lg;
	int failed;
};

static int run_tick(void *ctx, double seconds)
{
	struct run_tick *t = ctx;
	lua_State *L = t->L;
	lua_pushvalue(L, t->cb);
	if (run_readings(L, t->gtab, t->lg) != 1) {
		lua_pop(L, 4);  /* a failed read (nil, msg, errno): no tick */
		return 0;
	}
	lua_pushnumber(L, seconds);
	if (lua_pcall(L, 2, 0, 0) != LUA_OK) {
		t->failed = 1;
		return 1;
	}
	return 0;
}

/* _pmc.run(events, argv, opts) -> reading, {status=, signal=, elapsed=,
 * user=, sys=, stopped_by=?} | nil, msg, errno.
 * Without opts.targets the child is counted: it waits on a pipe until the
 * group is opened on it (inherit, enable_on_exec), so counting starts at
 * exec and includes its children; the parent's own work is not counted.
 * opts.targets = {{pid=}|{cpus=}, ...}: these are counted instead, enabled
 * just before the child's exec (perf stat -a/-C/-p/-t), and the first
 * result is the list of their readings; argv may then be empty: counting
 * lasts until Ctrl-C/SIGTERM, or until opts.until_pid exits.
 * opts.interval_ms with opts.on_interval: every interval, on_interval(r,
 * seconds since exec) gets the cumulative reading(s) (perf stat -I); it
 * runs while the command does, so it should only print.
 * elapsed runs from the exec (perf's span), not from the fork. */
static int l_run(lua_State *L)
{
	int n = list_len(L, 1, "events");
	int argc = 0;
	if (!lua_isnoneornil(L, 2)) {
		luaL_checktype(L, 2, LUA_TTABLE);
		argc = (int)luaL_len(L, 2);
	}
	lua_Integer interval_ms = 0, until_pid = 0;
	int gtab = 0, cb = 0;
	if (!lua_isnoneornil(L, 3)) {
		luaL_checktype(L, 3, LUA_TTABLE);
		static const char *const known[] = {"targets", "interval_ms", "on_interval", "until_pid", NULL};
		pmcsh_checkkeys(L, 3, 3, known);
		lua_getfield(L, 3, "interval_ms");
		interval_ms = luaL_optinteger(L, -1, 0);
		luaL_argcheck(L, interval_ms >= 0, 3, "interval_ms must be >= 0");
		lua_getfield(L, 3, "until_pid");
		until_pid = luaL_optinteger(L, -1, 0);
		lua_pop(L, 2);
		if (lua_getfield(L, 3, "on_interval") != LUA_TNIL) {
			luaL_argexpected(L, lua_isfunction(L, -1), 3, "on_interval as a function");
			cb = lua_gettop(L);
		} else
			lua_pop(L, 1);
		if (lua_getfield(L, 3, "targets") != LUA_TNIL) {
			luaL_argexpected(L, lua_istable(L, -1), 3, "targets as a list of {pid=} or {cpus=} tables");
			luaL_argcheck(L, luaL_len(L, -1) >= 1, 3, "targets: give at least one");
			gtab = lua_gettop(L);
		} else
			lua_pop(L, 1);
	}
	luaL_argcheck(L, argc >= 1 || gtab, 2, "empty command");
	const char **argv = lua_newuserdatauv(L, sizeof(char *) * (size_t)(argc + 1), 0);
	for (int i = 0; i < argc; i++) {
		lua_geti(L, 2, i + 1);
		luaL_argcheck(L, lua_type(L, -1) == LUA_TSTRING, 2, "command words must be strings");
		argv[i] = lua_tostring(L, -1);
		lua_pop(L, 1);  /* still referenced by the table */
	}
	argv[argc] = NULL;
	char msg[PMC_ERR_MAX];
	int r, bad;
	struct lgroup *lg = NULL;
	if (gtab) {  /* one group per target, opened disabled; the list replaces targets */
		int nt = (int)luaL_len(L, gtab);
		lua_createtable(L, nt, 0);
		for (int i = 1; i <= nt; i++) {
			struct pmc_target t;
			lua_rawgeti(L, gtab, i);
			read_target(L, lua_gettop(L), &t);
			lua_pop(L, 1);
			struct lgroup *g = newgroup(L, n);
			r = resolve_list(L, 1, g->ev, n, msg);
			if (r)
				return pmcsh_fail(L, msg, -r);
			pmc_group_layout(&g->g);
			r = pmc_group_open(&g->g, &t, &bad);
			if (r) {
				pmc_open_strerror(&g->ev[bad >= 0 ? bad : 0], -r, msg, sizeof msg);
				return pmcsh_fail(L, msg, -r);
			}
			g->target = t;
			g->closed = 0;
			lua_rawseti(L, -2, i);
		}
		gtab = lua_gettop(L);
	} else {
		lg = newgroup(L, n);
		r = resolve_list(L, 1, lg->ev, n, msg);
		if (r)
			return pmcsh_fail(L, msg, -r);
		pmc_group_layout(&lg->g);
	}

	struct pmc_child child = {0};
	if (argc) {
		r = pmc_child_spawn(&child, (char *const *)argv, msg, sizeof msg);
		if (r)
			return pmcsh_fail(L, msg, -r);
	}
	if (lg) {
		struct pmc_target t = {.pid = child.pid, .inherit = 1, .enable_on_exec = 1};
		r = pmc_group_open(&lg->g, &t, &bad);
		if (r) {
			pmc_child_abandon(&child);
			pmc_open_strerror(&lg->ev[bad >= 0 ? bad : 0], -r, msg, sizeof msg);
			return pmcsh_fail(L, msg, -r);
		}
		lg->closed = 0;  /* from here the userdata's __gc closes the fds */
	} else {
		for (int i = 1; i <= (int)lua_rawlen(L, gtab); i++) {
			lua_rawgeti(L, gtab, i);
			pmc_group_start(&((struct lgroup *)lua_touserdata(L, -1))->g);
			lua_pop(L, 1);
		}
	}
	struct run_tick tk = {L, cb, gtab, lg, 0};
	struct pmc_child_wait_opts o = {.until_pid = (pid_t)until_pid, .interval_ms = (long)interval_ms,
					.tick = cb ? run_tick : NULL, .ctx = &tk};
	struct pmc_child_status st;
	pmc_child_wait(&child, &o, &st);
	if (st.interrupted)  /* no "interrupted!" from the Lua hook */
		lua_sethook(L, NULL, 0, 0);
	if (tk.failed)
		return lua_error(L);  /* the callback's error, after the child is gone */
	if (st.exec_errno) {
		snprintf(msg, sizeof msg, "cannot run '%s': %s", argv[0], strerror(st.exec_errno));
		return pmcsh_fail(L, msg, st.exec_errno);
	}
	if (gtab)
		for (int i = 1; i <= (int)lua_rawlen(L, gtab); i++) {
			lua_rawgeti(L, gtab, i);
			pmc_group_disable(&((struct lgroup *)lua_touserdata(L, -1))->g);
			lua_pop(L, 1);
		}
	int nres = run_readings(L, gtab, lg);  /* baseline is zero: counts since exec */
	if (lg) {
		lg->closed = 1;
		pmc_group_close(&lg->g);
	}
	if (nres != 1)
		return nres;
	lua_createtable(L, 0, 3);
	if (!argc) {
	} else if (WIFEXITED(st.status)) {
		lua_pushinteger(L, WEXITSTATUS(st.status));
		lua_setfield(L, -2, "status");
	} else if (WIFSIGNALED(st.status)) {
		lua_pushinteger(L, WTERMSIG(st.status));
		lua_setfield(L, -2, "signal");
		lua_pushinteger(L, 128 + WTERMSIG(st.status));
		lua_setfield(L, -2, "status");
	}
	lua_pushnumber(L, st.elapsed_ns / 1e9);
	lua_setfield(L, -2, "elapsed");
	/* the command's CPU time, its waited-for children included (perf's
	 * "seconds user" / "seconds sys") */
	lua_pushnumber(L, st.ru.ru_utime.tv_sec + st.ru.ru_utime.tv_usec / 1e6);
	lua_setfield(L, -2, "user");
	lua_pushnumber(L, st.ru.ru_stime.tv_sec + st.ru.ru_stime.tv_usec / 1e6);
	lua_setfield(L, -2, "sys");
	if (st.forwarded) {
		lua_pushinteger(L, st.forwarded);
		lua_setfield(L, -2, "stopped_by");
	}
	return 2;
}

/* ---- pure functions for specs and the facade ------------------------------ */

/* _pmc.scale(raw, enabled, running[, scale]) -> value, multiplexed | nil, msg, EBUSY */
static int l_scale(lua_State *L)
{
	lua_Integer raw = luaL_checkinteger(L, 1), en = luaL_checkinteger(L, 2), run = luaL_checkinteger(L, 3);
	double scale = luaL_optnumber(L, 4, 1.0);
	luaL_argcheck(L, raw >= 0, 1, "must be >= 0");
	luaL_argcheck(L, en >= 0, 2, "must be >= 0");
	luaL_argcheck(L, run >= 0 && run <= en, 3, "must be between 0 and enabled");
	double v;
	int mux;
	if (pmc_scale((uint64_t)raw, (uint64_t)en, (uint64_t)run, scale, &v, &mux))
		return pmcsh_fail(L, "group cannot be scheduled: enabled but never running", EBUSY);
	lua_pushnumber(L, v);
	lua_pushboolean(L, mux);
	return 2;
}

static uint64_t field_u64(lua_State *L, int t, const char *k)
{
	lua_getfield(L, t, k);
	lua_Integer v = luaL_optinteger(L, -1, 0);
	lua_pop(L, 1);
	return (uint64_t)v;
}

/* Reads snapshot `name` ({enabled=, running=, raw={...}}) of the table at
 * t into an instance's base or cur fields. */
static void replay_snap(lua_State *L, int t, const char *name, int n, struct pmc_inst *in)
{
	int cur = name[0] == 'c';
	lua_getfield(L, t, name);
	int st = lua_gettop(L);
	luaL_argexpected(L, lua_istable(L, st), 1, "base and cur snapshots");
	uint64_t *rawp = cur ? in->cur_raw : in->base_raw;
	*(cur ? &in->cur_en : &in->base_en) = field_u64(L, st, "enabled");
	*(cur ? &in->cur_run : &in->base_run) = field_u64(L, st, "running");
	lua_getfield(L, st, "raw");
	for (int i = 0; i < n; i++) {
		lua_geti(L, -1, i + 1);
		rawp[i] = (uint64_t)luaL_optinteger(L, -1, 0);
		lua_pop(L, 1);
	}
	lua_pop(L, 2);
}

/* _pmc.replay{events=, base={enabled=,running=,raw={}}, cur={...}} or
 * _pmc.replay{events=, instances={{cpu=, socket=, base=, cur=}...}} ->
 * reading | nil, msg, errno: recorded snapshots through the same delta and
 * reading code as g:read() (one perf group; with instances, counted
 * cpu-wide on those cpus, so the reading has cpus and sockets). */
static int l_replay(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_getfield(L, 1, "events");
	int evidx = lua_gettop(L);
	int n = list_len(L, evidx, "events");
	int has_inst = lua_getfield(L, 1, "instances") != LUA_TNIL;
	int iidx = lua_gettop(L);
	int ninst = 1;
	if (has_inst) {
		luaL_argexpected(L, lua_istable(L, iidx), 1, "instances as a list of {cpu=, socket=, base=, cur=}");
		ninst = (int)luaL_len(L, iidx);
		luaL_argcheck(L, ninst >= 1 && ninst <= PMC_MAX_CPUS, 1, "instances: 1 to 256 of them");
	}
	/* owned by the Lua stack: an argument error cannot leak it */
	struct pmc_inst *in = lua_newuserdatauv(L, sizeof *in * (size_t)ninst, 0);
	memset(in, 0, sizeof *in * (size_t)ninst);
	for (int k = 0; k < ninst; k++) {
		if (has_inst) {
			lua_geti(L, iidx, k + 1);
			int t = lua_gettop(L);
			luaL_argexpected(L, lua_istable(L, t), 1, "instances as a list of {cpu=, socket=, base=, cur=}");
			in[k].pid = -1;
			in[k].cpu = (int)field_u64(L, t, "cpu");
			in[k].socket = (int)field_u64(L, t, "socket");
			replay_snap(L, t, "base", n, &in[k]);
			replay_snap(L, t, "cur", n, &in[k]);
			lua_pop(L, 1);
		} else {
			in[k].cpu = in[k].socket = -1;
			replay_snap(L, 1, "base", n, &in[k]);
			replay_snap(L, 1, "cur", n, &in[k]);
		}
	}
	struct lgroup *lg = newgroup(L, n);
	char msg[PMC_ERR_MAX];
	int r = resolve_list(L, evidx, lg->ev, n, msg);
	if (r)
		return pmcsh_fail(L, msg, -r);
	lg->g.nsub = 1;
	lg->sub[0].n = n;
	for (int i = 0; i < n; i++)
		lg->sub[0].ev[i] = i;
	lg->sub[0].ninst = ninst;
	lg->sub[0].inst = in;
	struct pmc_count c[PMC_MAX_EVENTS];
	int bad;
	r = pmc_group_delta(&lg->g, c, &bad);
	if (r) {
		lg->sub[0].inst = NULL;
		unsched_msg(&lg->ev[bad], c, msg, sizeof msg);
		return pmcsh_fail(L, msg, EBUSY);
	}
	push_reading(L, lg->ev, n, c, &lg->g);
	lg->sub[0].inst = NULL;  /* the instances belong to their userdata */
	lg->sub[0].ninst = 0;
	return 1;
}

/* ---- the rdpmc arithmetic, for specs on recorded pages ------------------ */

/* _pmc.mmap_time(cyc, shift, mult, offset) -> ns */
static int l_mmap_time(lua_State *L)
{
	lua_Integer cyc = luaL_checkinteger(L, 1), shift = luaL_checkinteger(L, 2);
	lua_Integer mult = luaL_checkinteger(L, 3), off = luaL_optinteger(L, 4, 0);
	luaL_argcheck(L, shift >= 0 && shift < 64, 2, "time_shift is 0..63");
	luaL_argcheck(L, mult >= 0 && mult <= 0xffffffff, 3, "time_mult is a u32");
	lua_pushinteger(L, (lua_Integer)pmc_mmap_time_delta((uint64_t)cyc, (uint16_t)shift, (uint32_t)mult,
							   (uint64_t)off));
	return 1;
}

/* _pmc.sign_extend(value, width) -> integer */
static int l_sign_extend(lua_State *L)
{
	lua_Integer v = luaL_checkinteger(L, 1), w = luaL_checkinteger(L, 2);
	luaL_argcheck(L, w >= 1 && w <= 64, 2, "width is 1..64");
	lua_pushinteger(L, (lua_Integer)pmc_sign_extend((uint64_t)v, (unsigned)w));
	return 1;
}

/* A recorded page and what the instructions returned: rdpmc gives pmc
 * (for any counter; the requested counter is kept), rdtsc gives tsc; the
 * first `bump` rdpmc calls change the lock, as a kernel update would. */
struct replay_ctx {
	struct perf_event_mmap_page *pc;
	uint64_t pmc, tsc;
	int bump;
	int64_t counter;
};

static uint64_t replay_rdpmc(void *ctx, uint32_t counter)
{
	struct replay_ctx *r = ctx;
	r->counter = counter;
	if (r->bump > 0) {
		r->bump--;
		r->pc->lock += 2;
	}
	return r->pmc;
}

static uint64_t replay_rdtsc(void *ctx)
{
	return ((struct replay_ctx *)ctx)->tsc;
}

/* _pmc.mmap_replay{lock=, index=, offset=, time_enabled=, time_running=,
 * cap_user_rdpmc=, cap_user_time=, cap_user_time_short=, pmc_width=,
 * time_shift=, time_mult=, time_offset=, time_cycles=, time_mask=, pmc=,
 * tsc=, bump=} -> {count=, enabled=, running=, retries=, counter=} |
 * nil, msg, EAGAIN: the read protocol of g:read() on a recorded page. */
static int l_mmap_replay(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	struct perf_event_mmap_page *pc = lua_newuserdatauv(L, sizeof *pc, 0);
	memset(pc, 0, sizeof *pc);
	pc->lock = (uint32_t)field_u64(L, 1, "lock");
	pc->index = (uint32_t)field_u64(L, 1, "index");
	pc->offset = (int64_t)field_u64(L, 1, "offset");
	pc->time_enabled = field_u64(L, 1, "time_enabled");
	pc->time_running = field_u64(L, 1, "time_running");
	lua_getfield(L, 1, "cap_user_rdpmc");
	pc->cap_user_rdpmc = lua_toboolean(L, -1);
	lua_getfield(L, 1, "cap_user_time");
	pc->cap_user_time = lua_toboolean(L, -1);
	lua_getfield(L, 1, "cap_user_time_short");
	pc->cap_user_time_short = lua_toboolean(L, -1);
	lua_pop(L, 3);
	pc->pmc_width = (uint16_t)field_u64(L, 1, "pmc_width");
	pc->time_shift = (uint16_t)field_u64(L, 1, "time_shift");
	pc->time_mult = (uint32_t)field_u64(L, 1, "time_mult");
	pc->time_offset = field_u64(L, 1, "time_offset");
	pc->time_cycles = field_u64(L, 1, "time_cycles");
	pc->time_mask = field_u64(L, 1, "time_mask");
	struct replay_ctx rc = {pc, field_u64(L, 1, "pmc"), field_u64(L, 1, "tsc"), (int)field_u64(L, 1, "bump"), -1};
	struct pmc_mmap_ops ops = {replay_rdpmc, replay_rdtsc, &rc};
	struct pmc_mmap_value v;
	if (pmc_mmap_read_ops(pc, &ops, &v))
		return pmcsh_fail(L, "off the PMU (index 0, or no user rdpmc/time): read() instead", EAGAIN);
	lua_createtable(L, 0, 5);
	lua_pushinteger(L, (lua_Integer)v.count); lua_setfield(L, -2, "count");
	lua_pushinteger(L, (lua_Integer)v.enabled); lua_setfield(L, -2, "enabled");
	lua_pushinteger(L, (lua_Integer)v.running); lua_setfield(L, -2, "running");
	lua_pushinteger(L, v.retries); lua_setfield(L, -2, "retries");
	lua_pushinteger(L, rc.counter); lua_setfield(L, -2, "counter");
	return 1;
}

/* ---- info and list --------------------------------------------------------- */

static int force_begin(lua_State *L, int idx, char *msg)
{
	const char *force = luaL_optstring(L, idx, NULL);
	if (!force)
		return 0;
	return pmc_pfm_init(force, msg, PMC_ERR_MAX);
}

static void force_end(int forced)
{
	if (forced)
		pmc_pfm_init(NULL, NULL, 0);
}

static int attr_cb(void *ctx, const struct pmc_attr *a)
{
	lua_State *L = ctx;
	lua_createtable(L, 0, 5);
	lua_pushstring(L, a->name); lua_setfield(L, -2, "name");
	lua_pushstring(L, a->desc); lua_setfield(L, -2, "description");
	lua_pushstring(L, a->type == 1 ? "umask" : a->type == 2 ? "bool" : a->type == 3 ? "integer" : "other");
	lua_setfield(L, -2, "kind");
	if (a->type == 1) {
		lua_pushinteger(L, (lua_Integer)a->code);
		lua_setfield(L, -2, "code");
	}
	lua_pushboolean(L, a->is_dfl); lua_setfield(L, -2, "default");
	lua_seti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
	return 0;
}

/* _pmc.info(name[, force_pmu]) -> table | nil, msg, errno */
static int l_info(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	char msg[PMC_ERR_MAX];
	int forced = !lua_isnoneornil(L, 2);
	if (force_begin(L, 2, msg))
		return pmcsh_fail(L, msg, EINVAL);
	struct pmc_event *ev = lua_newuserdatauv(L, sizeof *ev, 0);
	int r = pmc_resolve(name, ev, msg, sizeof msg);
	int encoded = r == 0;
	if (r == -EINVAL && pmc_pfm_lookup(name, ev) == 0) {
		/* a bare event that needs a umask: its umasks, no encoding */
		lua_createtable(L, 0, 10);
		lua_pushstring(L, ev->name); lua_setfield(L, -2, "name");
		lua_pushstring(L, ev->canon); lua_setfield(L, -2, "canonical");
		lua_pushstring(L, ev->pmu); lua_setfield(L, -2, "pmu");
		lua_pushstring(L, msg); lua_setfield(L, -2, "reason");
	} else if (r) {
		force_end(forced);
		return pmcsh_fail(L, msg, -r);
	} else {
		push_encoding(L, ev);
	}
	lua_pushboolean(L, encoded);
	lua_setfield(L, -2, "encoded");
	const char *desc = NULL;
	lua_newtable(L);
	pmc_event_attrs(ev, &desc, attr_cb, L);
	lua_setfield(L, -2, "attributes");
	if (!desc && ev->source == PMC_SRC_SYSFS)
		desc = "sysfs PMU event";
	lua_pushstring(L, desc ? desc : "");
	lua_setfield(L, -2, "description");
	lua_pushstring(L, forced ? lua_tostring(L, 2) : "host");
	lua_setfield(L, -2, "model");
	lua_pushboolean(L, forced || !encoded ? 0 : pmc_try_open(ev));
	lua_setfield(L, -2, "opens");
	force_end(forced);
	return 1;
}

struct list_ctx {
	lua_State *L;
	const char *pattern;
	int probe;
	lua_Integer n;
};

static int list_cb(void *ctx, const struct pmc_listed *e)
{
	struct list_ctx *c = ctx;
	lua_State *L = c->L;
	if (c->pattern && !strcasestr(e->name, c->pattern) && !strcasestr(e->desc, c->pattern))
		return 0;
	lua_createtable(L, 0, 4);
	lua_pushstring(L, e->name); lua_setfield(L, -2, "name");
	lua_pushstring(L, e->pmu); lua_setfield(L, -2, "pmu");
	lua_pushstring(L, e->desc); lua_setfield(L, -2, "description");
	if (c->probe >= 0) {  /* 1: try opening it; 0: another model, never opens here */
		struct pmc_event ev;
		char msg[PMC_ERR_MAX];
		int ok = c->probe && pmc_resolve(e->name, &ev, msg, sizeof msg) == 0 && pmc_try_open(&ev);
		lua_pushboolean(L, ok);
		lua_setfield(L, -2, "opens");
	}
	lua_seti(L, -2, ++c->n);
	return 0;
}

/* _pmc.list([substring[, force_pmu[, noprobe]]]) -> array of {name, pmu, description, opens} */
static int l_list(lua_State *L)
{
	struct list_ctx c = {L, luaL_optstring(L, 1, NULL), 1, 0};
	if (c.pattern && !*c.pattern)
		c.pattern = NULL;
	char msg[PMC_ERR_MAX];
	int forced = !lua_isnoneornil(L, 2);
	if (force_begin(L, 2, msg))
		return pmcsh_fail(L, msg, EINVAL);
	c.probe = lua_toboolean(L, 3) ? -1 : !forced;
	lua_newtable(L);
	int r = pmc_list(list_cb, &c);
	force_end(forced);
	if (r)
		return pmcsh_fail(L, "libpfm4 failed to initialise", -r);
	return 1;
}

/* _pmc.environment() -> {cpu_pmu=, paranoid=, forced=} */
static int l_environment(lua_State *L)
{
	lua_createtable(L, 0, 3);
	lua_pushboolean(L, pmc_have_cpu_pmu());
	lua_setfield(L, -2, "cpu_pmu");
	lua_pushinteger(L, pmc_paranoid());
	lua_setfield(L, -2, "paranoid");
	const char *f = pmc_pfm_forced();
	if (f) {
		lua_pushstring(L, f);
		lua_setfield(L, -2, "forced");
	}
	return 1;
}

/* ---- overhead ---------------------------------------------------------------- */

/* _pmc.distance(a, b) -> edit distance, case-insensitive (the suggestions'). */
static int l_distance(lua_State *L)
{
	lua_pushinteger(L, pmc_edit_distance(luaL_checkstring(L, 1), luaL_checkstring(L, 2)));
	return 1;
}

/* _pmc.windows(g, n) -> ns per empty window from C (enable, disable,
 * read()), the yardstick for the same window driven from Lua. */
static int l_windows(lua_State *L)
{
	struct pmc_group *g = &checkgroup(L, 1)->g;
	lua_Integer n = luaL_checkinteger(L, 2);
	luaL_argcheck(L, n >= 1, 2, "at least 1 window");
	lua_pushnumber(L, pmc_windows_ns(g, (long)n));
	return 1;
}

/* _pmc.overhead(g, n) -> {window_ns=, enable_disable_ns=, read_ns=,
 * rdpmc = {available=, reason=|read_ns=}, counted = reading of one empty
 * window averaged} */
static int l_overhead(lua_State *L)
{
	struct lgroup *lg = checkgroup(L, 1);
	lua_Integer n = luaL_optinteger(L, 2, 10000);
	luaL_argcheck(L, n >= 10, 2, "at least 10 iterations");
	struct pmc_overhead o;
	pmc_overhead(&lg->g, (long)n, &o);
	lua_createtable(L, 0, 6);
	lua_pushnumber(L, o.window_ns);
	lua_setfield(L, -2, "window_ns");
	lua_pushnumber(L, o.enable_disable_ns);
	lua_setfield(L, -2, "enable_disable_ns");
	lua_pushnumber(L, o.read_ns);
	lua_setfield(L, -2, "read_ns");
	lua_pushinteger(L, n);
	lua_setfield(L, -2, "iterations");
	lua_createtable(L, 0, 3);
	lua_pushboolean(L, o.mapped);
	lua_setfield(L, -2, "available");
	if (o.mapped) {
		lua_pushnumber(L, o.rdpmc_read_ns);
		lua_setfield(L, -2, "read_ns");
		lua_pushinteger(L, (lua_Integer)o.fast_reads);
		lua_setfield(L, -2, "fast_reads");
		lua_pushinteger(L, (lua_Integer)o.fallbacks);
		lua_setfield(L, -2, "fallbacks");
	} else {
		lua_pushstring(L, lg->rdpmc_why);
		lua_setfield(L, -2, "reason");
	}
	lua_setfield(L, -2, "rdpmc");
	if (o.counted) {
		push_reading(L, lg->ev, lg->g.nev, o.c, NULL);
		lua_setfield(L, -2, "counted_per_window");
	}
	return 1;
}

/* ---- registration ---------------------------------------------------------------- */

static const luaL_Reg funcs[] = {
	{"open", l_open},
	{"run", l_run},
	{"probe", l_probe},
	{"scale", l_scale},
	{"replay", l_replay},
	{"info", l_info},
	{"list", l_list},
	{"environment", l_environment},
	{"overhead", l_overhead},
	{"windows", l_windows},
	{"distance", l_distance},
	{"mmap_time", l_mmap_time},
	{"sign_extend", l_sign_extend},
	{"mmap_replay", l_mmap_replay},
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
	luaL_getmetatable(L, GROUP_MT);
	lua_getfield(L, -1, "__index");
	lua_createtable(L, 5, 0);
	for (int i = 0; i < 5; i++) {
		lua_pushstring(L, fill_keys[i]);
		lua_rawseti(L, -2, i + 1);
	}
	lua_pushcclosure(L, g_read, 1);
	lua_setfield(L, -2, "read");
	lua_pop(L, 2);
	luaL_newmetatable(L, READING_MT);
	lua_pushcfunction(L, reading_index);
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
	luaL_newmetatable(L, WINDOW_MT);
	lua_pushcfunction(L, w_gc);
	lua_setfield(L, -2, "__gc");
	lua_pushcfunction(L, w_gc);
	lua_setfield(L, -2, "__close");
	lua_pop(L, 1);
}

int luaopen_pmcsh_pmc(lua_State *L)
{
	createmeta(L);
	luaL_newlib(L, funcs);
	lua_pushinteger(L, PROBE_LOOP_INSNS);
	lua_setfield(L, -2, "probe_loop_insns");
	return 1;
}
