/* Readings: what g:read(), g:stop(r), pmc.run and the engines return.  A
 * reading is a list of entries, one per event in the order given, and
 * r["page-faults:u"] finds an entry by name.  An entry's name, unit and
 * per-cpu instances are its own fields; its counts (value, raw, enabled,
 * running, multiplexed) live in C, in one block per reading, and the entry
 * reads them through its metatable.  So g:read(r) refills a reading with
 * one copy however many events it has, where five table stores cost ~900
 * user instructions per entry (the arm64 lab; the window itself ~500). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lgroup.h"
#include <string.h>

#define READING_MT_NAME "pmcsh.reading"
#define ENTRY_MT_NAME "pmcsh.reading_entry"

#define LREADING_MAGIC 0x676e696461657270ull   /* "preading" */

struct lreading {
	uint64_t magic;        /* what to_block checks: the hidden keys are a table's fields */
	unsigned long owner;   /* the group whose reads may refill it; 0: none */
	int n;
	unsigned char exact[PMC_MAX_EVENTS];   /* scale 1: an integral value is an integer */
	struct pmc_count c[];
};

static const char *const count_keys[] = {"value", "raw", "enabled", "running", "multiplexed"};
enum { NCOUNT = 5 };
/* Light userdata keys: an entry's block and its position in it (fields
 * pairs skips), and the two metatables in the registry. */
static char block_key, index_key, reading_mt, entry_mt;

static int count_field(lua_State *L, int idx)
{
	if (lua_type(L, idx) != LUA_TSTRING)
		return -1;
	const char *k = lua_tostring(L, idx);
	for (int f = 0; f < NCOUNT; f++)
		if (strcmp(k, count_keys[f]) == 0)
			return f;
	return -1;
}

static void push_value(lua_State *L, double v, int exact)
{
	/* integral and below 2^63: an integer (the cast is defined only there) */
	if (exact && v >= -9.2e18 && v <= 9.2e18 && v == (double)(lua_Integer)v)
		lua_pushinteger(L, (lua_Integer)v);
	else
		lua_pushnumber(L, v);
}

/* Pushes count field f of entry i. */
static void push_count(lua_State *L, const struct lreading *b, int i, int f)
{
	const struct pmc_count *c = &b->c[i];
	switch (f) {
	case 0: push_value(L, c->value, b->exact[i] && !c->multiplexed); break;
	case 1: lua_pushinteger(L, (lua_Integer)c->raw); break;
	case 2: lua_pushinteger(L, (lua_Integer)c->enabled); break;
	case 3: lua_pushinteger(L, (lua_Integer)c->running); break;
	default: lua_pushboolean(L, c->multiplexed); break;
	}
}

/* The block at idx, or NULL: a full userdata of a block's size with the
 * magic first (a script can put anything under an entry's hidden key). */
static struct lreading *to_block(lua_State *L, int idx)
{
	struct lreading *b = lua_touserdata(L, idx);
	size_t len = lua_rawlen(L, idx);
	if (!b || len < sizeof *b || b->magic != LREADING_MAGIC || b->n < 0 || b->n > PMC_MAX_EVENTS ||
	    len < sizeof *b + (size_t)b->n * sizeof b->c[0])
		return NULL;
	return b;
}

/* The block of the entry at idx and the entry's index in it, or NULL. */
static struct lreading *entry_block(lua_State *L, int idx, int *i)
{
	idx = lua_absindex(L, idx);
	lua_rawgetp(L, idx, &block_key);
	struct lreading *b = to_block(L, -1);
	lua_rawgetp(L, idx, &index_key);
	int isnum;
	lua_Integer k = lua_tointegerx(L, -1, &isnum);
	lua_pop(L, 2);
	if (!b || !isnum || k < 0 || k >= b->n)
		return NULL;
	*i = (int)k;
	return b;
}

/* Pushes count field f of the entry at stack index 1. */
static void push_entry_count(lua_State *L, int f)
{
	int i;
	const struct lreading *b = entry_block(L, 1, &i);
	if (!b)
		luaL_error(L, "a reading's entry lost its counts (its hidden fields were changed)");
	push_count(L, b, i, f);
}

/* The entries' metamethods. */
static int entry_index(lua_State *L)
{
	int f = count_field(L, 2);
	if (f < 0)
		return 0;
	push_entry_count(L, f);
	return 1;
}

/* next() over an entry: its own fields, then the counts. */
static int entry_next(lua_State *L)
{
	lua_settop(L, 2);
	int f = count_field(L, 2);
	if (f < 0) {
		while (lua_next(L, 1)) {
			void *k = lua_touserdata(L, -2);
			if (k != &index_key && k != &block_key)
				return 2;
			lua_pop(L, 1);
		}
		f = -1;
	}
	if (++f == NCOUNT)
		return 0;
	lua_pushstring(L, count_keys[f]);
	push_entry_count(L, f);
	return 2;
}

static int entry_pairs(lua_State *L)
{
	lua_pushcfunction(L, entry_next);
	lua_pushvalue(L, 1);
	lua_pushnil(L);
	return 3;
}

/* The counts are the counter's: a script keeps a copy, it does not write them. */
static int entry_newindex(lua_State *L)
{
	int f = count_field(L, 2);
	if (f >= 0)
		return luaL_error(L, "a reading's %s is the counter's, refilled by g:read(r) and g:stop(r): "
				  "copy it out (local v = e.%s) or copy the reading (pmc.copy(r))",
				  count_keys[f], count_keys[f]);
	lua_rawset(L, 1);
	return 0;
}

/* A reading's __index: r["page-faults:u"] finds the entry of that name. */
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
	return g && g->nsub > 0 && g->sub[0].ninst > 0 && g->sub[0].inst[0].cpu >= 0;
}

void lpmc_push_reading(lua_State *L, const struct lgroup *owner, const struct pmc_event *ev, int n,
		       const struct pmc_count *c)
{
	const struct pmc_group *g = owner ? &owner->g : NULL;
	lua_createtable(L, n, 0);
	lua_rawgetp(L, LUA_REGISTRYINDEX, &reading_mt);
	lua_setmetatable(L, -2);
	struct lreading *b = lua_newuserdatauv(L, sizeof *b + (size_t)n * sizeof *c, 0);
	b->magic = LREADING_MAGIC;
	b->owner = owner ? owner->serial : 0;
	b->n = n;
	for (int i = 0; i < n; i++) {
		b->exact[i] = ev[i].scale == 1.0;
		b->c[i] = c[i];
	}
	lua_rawgetp(L, LUA_REGISTRYINDEX, &entry_mt);
	/* stack: reading, block, entry metatable */
	for (int i = 0; i < n; i++) {
		lua_createtable(L, 0, 4);
		pmcsh_setstr(L, "name", ev[i].name);
		if (ev[i].unit[0])
			pmcsh_setstr(L, "unit", ev[i].unit);
		lua_pushvalue(L, -3);
		lua_rawsetp(L, -2, &block_key);
		lua_pushinteger(L, i);
		lua_rawsetp(L, -2, &index_key);
		if (percpu(g))
			push_instances(L, g, i);
		lua_pushvalue(L, -2);
		lua_setmetatable(L, -2);
		lua_rawseti(L, -4, i + 1);
	}
	lua_pop(L, 2);
}

/* The block of the reading at r, when lg's reads made it; raises otherwise. */
/* The block of the reading at r, when lg's reads made it: the block of its
 * first entry that has one, pushed.  Raises otherwise. */
static struct lreading *reading_block(lua_State *L, int r, const struct lgroup *lg)
{
	struct lreading *b = NULL;
	if (lua_type(L, r) == LUA_TTABLE)
		for (lua_Integer k = 1; !b && k <= (lua_Integer)lua_rawlen(L, r); k++) {
			int i;
			if (lua_rawgeti(L, r, k) == LUA_TTABLE && (b = entry_block(L, -1, &i)))
				lua_rawgetp(L, -1, &block_key);
			else
				lua_pushnil(L);
			lua_remove(L, -2);
			if (!b)
				lua_pop(L, 1);
		}
	if (!b || b->owner != lg->serial || b->n != lg->g.nev)
		luaL_argerror(L, r, "not a reading of this group: pass one from its g:read()");
	return b;
}

/* Rebuilds cpus/sockets of each entry of r in b (wherever it sits in r). */
static void refill_instances(lua_State *L, int r, const struct lreading *b, const struct pmc_group *g)
{
	for (lua_Integer k = 1; k <= (lua_Integer)lua_rawlen(L, r); k++) {
		int i;
		if (lua_rawgeti(L, r, k) == LUA_TTABLE && entry_block(L, -1, &i) == b)
			push_instances(L, g, i);
		lua_pop(L, 1);
	}
}

void lpmc_refill_reading(lua_State *L, int gidx, int r, struct lgroup *lg, const struct pmc_count *c)
{
	/* The reading refilled last and its block are the group's user values 1
	 * and 2 (kept alive there), the reading's address in lg: a loop refilling
	 * one reading finds its block by one compare and one user-value read,
	 * where the search through its entries costs ~300 instructions
	 * (callgrind).  The block is checked each time: debug.setuservalue can
	 * swap it.  Counts are read through each entry's own block and index, so
	 * a reading sorted or cut short still shows the right ones. */
	struct lreading *b = NULL;
	if (lua_topointer(L, r) == lg->refill_reading) {
		lua_getiuservalue(L, gidx, 2);
		b = to_block(L, -1);
		lua_pop(L, 1);
	}
	if (!b || b->owner != lg->serial) {
		b = reading_block(L, r, lg);
		lua_setiuservalue(L, gidx, 2);
		lua_pushvalue(L, r);
		lua_setiuservalue(L, gidx, 1);
		lg->refill_reading = lua_topointer(L, r);
	}
	memcpy(b->c, c, (size_t)b->n * sizeof *c);
	if (percpu(&lg->g))
		refill_instances(L, r, b, &lg->g);
}

void lpmc_reading_open(lua_State *L)
{
	lua_createtable(L, 0, 2);
	lua_pushcfunction(L, reading_index);
	lua_setfield(L, -2, "__index");
	lua_pushliteral(L, READING_MT_NAME);
	lua_setfield(L, -2, "__name");
	lua_pushvalue(L, -1);
	lua_setfield(L, -3, "reading_mt");   /* for pmc.copy's plain readings */
	lua_rawsetp(L, LUA_REGISTRYINDEX, &reading_mt);
	static const luaL_Reg entry_meta[] = {
		{"__index", entry_index}, {"__pairs", entry_pairs}, {"__newindex", entry_newindex}, {NULL, NULL}};
	lua_createtable(L, 0, 4);
	luaL_setfuncs(L, entry_meta, 0);
	lua_pushliteral(L, ENTRY_MT_NAME);
	lua_setfield(L, -2, "__name");
	lua_rawsetp(L, LUA_REGISTRYINDEX, &entry_mt);
}
