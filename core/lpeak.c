/* pmcsh._peak: the peak-FLOP kernels and the clock's dependent chain of
 * kernels/peak.h as plain numbers.  The face is lua/pmcsh/peak.lua. */
#include <errno.h>
#include <string.h>
#include "lpmcsh.h"
#include "../kernels/peak.h"
#include "../kernels/stream.h"

static const struct peak_kernel *find(const char *name)
{
	for (const struct peak_kernel *k = peak_variant_best()->kernels; k->name; k++)
		if (strcmp(k->name, name) == 0)
			return k;
	return NULL;
}

/* kernels() -> {{name=, isa=, bits=, precision=, lanes=, fma=,
 * accumulators=, flops_per_trip=, symbol=}...}, variant: this CPU's best
 * variant's kernels, narrowest first. */
static int l_kernels(lua_State *L)
{
	const struct peak_variant *v = peak_variant_best();
	lua_newtable(L);
	int i = 0;
	for (const struct peak_kernel *k = v->kernels; k->name; k++) {
		lua_createtable(L, 0, 9);
		pmcsh_setstr(L, "name", k->name);
		pmcsh_setstr(L, "isa", k->isa);
		pmcsh_setint(L, "bits", k->bits);
		pmcsh_setstr(L, "precision", k->single ? "single" : "double");
		pmcsh_setint(L, "lanes", k->lanes);
		pmcsh_setbool(L, "fma", k->fma);
		pmcsh_setint(L, "accumulators", k->accumulators);
		pmcsh_setint(L, "flops_per_trip", k->flops_per_trip);
		pmcsh_setstr(L, "symbol", k->symbol);
		lua_rawseti(L, -2, ++i);
	}
	lua_pushstring(L, v->name);
	return 2;
}

/* run(name, trips[, cpus]) -> seconds, flops: the kernel on #cpus threads
 * at once, each pinned to its cpu (no cpus: one thread, unpinned). */
static int l_run(lua_State *L)
{
	const char *name = pmcsh_checkstring(L, 1);
	const struct peak_kernel *k = find(name);
	pmcsh_argcheck(L, k != NULL, 1, "no such kernel here (see kernels())");
	lua_Integer trips = pmcsh_checkinteger(L, 2);
	pmcsh_argcheck(L, trips >= 1 && trips <= (lua_Integer)1 << 32, 2, "trips: 1 to 2^32");
	int threads = 1, *cpus = NULL;
	if (!lua_isnoneornil(L, 3)) {
		pmcsh_checktype(L, 3, LUA_TTABLE);
		lua_Integer n = luaL_len(L, 3);
		pmcsh_argcheck(L, n >= 1 && n <= STREAM_MAX_THREADS, 3, "cpus: 1 to 1024 cpu numbers");
		threads = (int)n;
		cpus = lua_newuserdatauv(L, sizeof *cpus * (size_t)n, 0);
		for (int i = 0; i < threads; i++) {
			lua_rawgeti(L, 3, i + 1);
			int isnum;
			lua_Integer c = lua_tointegerx(L, -1, &isnum);
			lua_pop(L, 1);
			pmcsh_argcheck(L, isnum && c >= 0 && c < 65536, 3, "cpus: cpu numbers expected");
			cpus[i] = (int)c;
		}
	}
	double seconds, flops;
	int r = peak_run(k, (uint64_t)trips, threads, cpus, &seconds, &flops);
	if (r)
		return pmcsh_fail(L, r == -EINVAL ? "a cpu this process may not run on" : "cannot start the threads", -r);
	lua_pushnumber(L, seconds);
	lua_pushnumber(L, flops);
	return 2;
}

/* chain(adds) -> seconds: adds dependent integer adds on this thread. */
static int l_chain(lua_State *L)
{
	lua_Integer adds = pmcsh_checkinteger(L, 1);
	pmcsh_argcheck(L, adds >= 16 && adds <= (lua_Integer)1 << 44, 1, "adds: 16 to 2^44");
	lua_pushnumber(L, peak_chain_seconds((uint64_t)adds));
	return 1;
}

static const luaL_Reg funcs[] = {
	{"kernels", l_kernels},
	{"run", l_run},
	{"chain", l_chain},
	{NULL, NULL}
};

int luaopen_pmcsh__peak(lua_State *L)
{
	luaL_newlib(L, funcs);
	return 1;
}
