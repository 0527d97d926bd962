/* The preload table: every C module of pmcsh, registered once.  Only the
 * hosts call it (lhost.c, the fuzz harness); a plain lua5.4 finds each
 * luaopen in pmcsh.so by its name instead. */
#include "lpmcsh.h"

static const luaL_Reg preloads[] = {
	{"pmcsh._sys", luaopen_pmcsh__sys},
	{"pmcsh._pmc", luaopen_pmcsh__pmc},
	{"pmcsh._events", luaopen_pmcsh__events},
	{"pmcsh._run", luaopen_pmcsh__run},
	{"pmcsh._calib", luaopen_pmcsh__calib},
	{"pmcsh._replay", luaopen_pmcsh__replay},
	{"pmcsh._stream", luaopen_pmcsh__stream},
	{"pmcsh._chase", luaopen_pmcsh__chase},
	{"pmcsh._machine", luaopen_pmcsh__machine},
	{"pmcsh._regions", luaopen_pmcsh__regions},
	{"pmcsh._peak", luaopen_pmcsh__peak},
	{NULL, NULL}
};

void pmcsh_preload(lua_State *L)
{
	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
	for (const luaL_Reg *p = preloads; p->name; p++) {
		lua_pushcfunction(L, p->func);
		lua_setfield(L, -2, p->name);
	}
	lua_pop(L, 1);
}
