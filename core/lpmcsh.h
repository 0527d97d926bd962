/* Shared by the binding files (core/l*.c): the preload table and the few
 * helpers that pass objects between bindings. */
#ifndef PMCSH_LPMCSH_H
#define PMCSH_LPMCSH_H
#include <lua.h>
#include <lauxlib.h>

/* One luaopen per binding file, preloaded as "pmcsh._NAME"; the Lua facades
 * under lua/pmcsh/ wrap them. */
int luaopen_pmcsh_sys(lua_State *L);    /* core/lsys.c    */
int luaopen_pmcsh_pmc(lua_State *L);    /* core/lpmc.c    */
int luaopen_pmcsh_stream(lua_State *L); /* core/lstream.c */
int luaopen_pmcsh_chase(lua_State *L);  /* core/lchase.c  */

/* Creates the metatable `name` of a userdata type: the metamethods `meta`
 * (with "__index" listed as NULL) and the method table `methods` as its
 * __index.  Leaves nothing on the stack. */
void pmcsh_newclass(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods);

/* Registers all of the above in package.preload. */
void pmcsh_preload(lua_State *L);

#endif
