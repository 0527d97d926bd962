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

/* Registers all of the above in package.preload. */
void pmcsh_preload(lua_State *L);

#endif
