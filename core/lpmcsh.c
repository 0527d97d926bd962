/* The preload table: every C module of pmcsh, registered once. */
#include "lpmcsh.h"

static const luaL_Reg preloads[] = {
	{"pmcsh._sys", luaopen_pmcsh_sys},
	{"pmcsh._pmc", luaopen_pmcsh_pmc},
	{"pmcsh._stream", luaopen_pmcsh_stream},
	{"pmcsh._chase", luaopen_pmcsh_chase},
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

void pmcsh_newclass(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods)
{
	luaL_newmetatable(L, name);
	luaL_setfuncs(L, meta, 0);
	lua_newtable(L);
	luaL_setfuncs(L, methods, 0);
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
}
