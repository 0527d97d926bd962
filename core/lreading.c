/* Readings: what g:read(), g:stop(r), pmc.run and the engines return.  A
 * reading is plain data: the list of entries {name=, value=, unit=?} in the
 * order the events were given, with the group's enabled, running and
 * multiplexed once (pmc_group_sched); r["page-faults:u"] finds an entry
 * through the readings' metatable.  g:read(r) and g:stop(r) write new
 * counts into r's own tables. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lreading.h"
#include <string.h>

#define READING_MT_NAME "pmcsh.reading"

static char reading_mt;   /* its address: the metatable's registry key */

static void push_value(lua_State *L, double v, int exact)
{
	/* integral and below 2^63: an integer (the cast is defined only there) */
	if (exact && v >= -9.2e18 && v <= 9.2e18 && v == (double)(lua_Integer)v)
		lua_pushinteger(L, (lua_Integer)v);
	else
		lua_pushnumber(L, v);
}

/* A reading's __index: r["page-faults:u"] finds the entry of that name. */
static int reading_index(lua_State *L)
{
	if (lua_type(L, 1) != LUA_TTABLE || lua_type(L, 2) != LUA_TSTRING)
		return 0;   /* called by hand on something else: nothing found */
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

/* Sets cpus = {{cpu=, socket=, value=, raw=, enabled=, running=,
 * multiplexed=}...} (in instance order) and sockets = {[socket] = summed
 * value} in the entry on the top of the stack, for event ev of a group
 * counted cpu-wide (a cpu list or an uncore cpumask).  Each cpu is a perf
 * group of its own, so each has its own times. */
static void set_instances(lua_State *L, const struct pmc_group *g, int ev)
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
		pmcsh_setint(L, "cpu", cpu);
		pmcsh_setint(L, "socket", socket);
		push_value(L, c.value, exact && !c.multiplexed);
		lua_setfield(L, -2, "value");
		pmcsh_setint(L, "raw", (lua_Integer)c.raw);
		pmcsh_setint(L, "enabled", (lua_Integer)c.enabled);
		pmcsh_setint(L, "running", (lua_Integer)c.running);
		pmcsh_setbool(L, "multiplexed", c.multiplexed);
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

static int percpu(const struct pmc_group *g)
{
	return g->nsub > 0 && g->sub[0].ninst > 0 && g->sub[0].inst[0].cpu >= 0;
}

/* Sets value of event i in the entry on the top of the stack. */
static void set_value(lua_State *L, const struct pmc_group *g, int i, const struct pmc_count *c)
{
	push_value(L, c[i].value, g->ev[i].scale == 1.0 && !c[i].multiplexed);
	lua_setfield(L, -2, "value");
}

/* Sets the group's enabled, running and multiplexed in the reading on the top. */
static void set_sched(lua_State *L, const struct pmc_group *g, const struct pmc_count *c)
{
	struct pmc_sched s;
	pmc_group_sched(g, c, &s);
	pmcsh_setint(L, "enabled", (lua_Integer)s.enabled);
	pmcsh_setint(L, "running", (lua_Integer)s.running);
	pmcsh_setbool(L, "multiplexed", s.multiplexed);
}

void lreading_push(lua_State *L, const struct pmc_group *g, const struct pmc_count *c, int live)
{
	live = live && percpu(g);
	lua_createtable(L, g->nev, 3);
	lreading_meta(L);
	lua_setmetatable(L, -2);
	for (int i = 0; i < g->nev; i++) {
		lua_createtable(L, 0, live ? 5 : 3);
		pmcsh_setstr(L, "name", g->ev[i].name);
		if (g->ev[i].unit[0])
			pmcsh_setstr(L, "unit", g->ev[i].unit);
		set_value(L, g, i, c);
		if (live)
			set_instances(L, g, i);
		lua_rawseti(L, -2, i + 1);
	}
	set_sched(L, g, c);
}

/* Entry k of r gets event k's counts: r is taken as g:read() made it, its
 * length and entries checked, their names not (reading them would double
 * the cost of a refill). */
void lreading_refill(lua_State *L, int r, const struct pmc_group *g, const struct pmc_count *c)
{
	r = lua_absindex(L, r);
	if (lua_type(L, r) != LUA_TTABLE || lua_rawlen(L, r) != (size_t)g->nev)
		pmcsh_argerror(L, r, "not a reading of this group: pass one from its g:read()");
	int live = percpu(g);
	for (int i = 0; i < g->nev; i++) {
		if (lua_rawgeti(L, r, i + 1) != LUA_TTABLE)
			pmcsh_argerror(L, r, lua_pushfstring(L, "not a reading of this group: entry %d is not a "
							       "table (pass a reading from its g:read())", i + 1));
		set_value(L, g, i, c);
		if (live)
			set_instances(L, g, i);
		lua_pop(L, 1);
	}
	lua_pushvalue(L, r);
	set_sched(L, g, c);
	lua_pop(L, 1);
}

void lreading_meta(lua_State *L)
{
	if (lua_rawgetp(L, LUA_REGISTRYINDEX, &reading_mt) != LUA_TNIL)
		return;
	lua_pop(L, 1);
	lua_createtable(L, 0, 3);
	lua_pushcfunction(L, reading_index);
	lua_setfield(L, -2, "__index");
	lua_pushliteral(L, READING_MT_NAME);
	lua_setfield(L, -2, "__name");
	lua_pushliteral(L, READING_MT_NAME);  /* getmetatable(r) says the kind; no script changes every reading's */
	lua_setfield(L, -2, "__metatable");
	lua_pushvalue(L, -1);
	lua_rawsetp(L, LUA_REGISTRYINDEX, &reading_mt);
}
