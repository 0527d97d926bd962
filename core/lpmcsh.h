/* Shared by the binding files (core/l*.c): each module's luaopen, and the
 * few helpers every binding calls (lpmcsh.c, which calls none of them). */
#ifndef PMCSH_LPMCSH_H
#define PMCSH_LPMCSH_H
#include <lua.h>
#include <lauxlib.h>

/* One luaopen per binding file, preloaded as "pmcsh._NAME" by lpreload.c
 * and named as a plain lua5.4 looks for it in pmcsh.so (make lua-module:
 * Lua's all-in-one searcher finds luaopen_pmcsh__pmc for "pmcsh._pmc").
 * The Lua facades under lua/pmcsh/ wrap them. */
int luaopen_pmcsh__sys(lua_State *L);     /* core/lsys.c: files, clock, terminal, errnos */
int luaopen_pmcsh__pmc(lua_State *L);     /* core/lpmc.c: counter groups */
int luaopen_pmcsh__events(lua_State *L);  /* core/levents.c: event names, encodings, lists */
int luaopen_pmcsh__run(lua_State *L);     /* core/lrun.c: a command counted */
int luaopen_pmcsh__calib(lua_State *L);   /* core/lcalib.c: probes, a window's cost */
int luaopen_pmcsh__replay(lua_State *L);  /* core/lreplay.c: recorded counts read again */
int luaopen_pmcsh__stream(lua_State *L);  /* core/lstream.c */
int luaopen_pmcsh__chase(lua_State *L);   /* core/lchase.c */
int luaopen_pmcsh__machine(lua_State *L); /* core/lmachine.c */
int luaopen_pmcsh__regions(lua_State *L); /* core/lregions.c */
int luaopen_pmcsh__peak(lua_State *L);    /* core/lpeak.c: peak FLOP/s, the clock */

/* Creates the metatable `name` of a userdata type: the metamethods `meta`
 * (with "__index" listed as NULL) and the method table `methods` as its
 * __index.  Leaves nothing on the stack. */
void pmcsh_newclass(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods);

/* Pushes fail, message, errno (the environment tier of errors); returns 3. */
int pmcsh_fail(lua_State *L, const char *msg, int err);

/* Errors that say their kind: a table {kind=, message=, where=, ...} under
 * the metatable PMCSH_ERROR_MT (_sys.error_mt), whose __tostring gives the
 * text; pmcsh_errormeta pushes it, made on its first use.  pmcsh_argerror raises kind "argument"
 * with arg= and func= as luaL_argerror would word them, so that a facade
 * can move it to its own caller and a host can tell it from a failure. */
#define PMCSH_ERROR_MT "pmcsh.error"
int pmcsh_argerror(lua_State *L, int arg, const char *msg);
void pmcsh_errormeta(lua_State *L);

/* lauxlib's argument checks, worded as theirs, raising kind "argument"
 * through pmcsh_argerror: the engines check their arguments with these.
 * pmcsh_checkstring also refuses a string with a NUL byte inside, which C
 * would read cut short (a path, a name, a command word). */
int pmcsh_typeerror(lua_State *L, int arg, const char *tname);
lua_Integer pmcsh_checkinteger(lua_State *L, int arg);
lua_Integer pmcsh_optinteger(lua_State *L, int arg, lua_Integer def);
lua_Number pmcsh_checknumber(lua_State *L, int arg);
const char *pmcsh_checkstring(lua_State *L, int arg);
const char *pmcsh_optstring(lua_State *L, int arg, const char *def);
void pmcsh_checktype(lua_State *L, int arg, int t);
int pmcsh_checkoption(lua_State *L, int arg, const char *def, const char *const lst[]);
#define pmcsh_argcheck(L, cond, arg, msg) ((void)((cond) || pmcsh_argerror(L, (arg), (msg))))
#define pmcsh_argexpected(L, cond, arg, tname) ((void)((cond) || pmcsh_typeerror(L, (arg), (tname))))

/* Option tables: raises (argument `arg`) on a key of the table at idx not
 * in the NULL-terminated `known`; reads integer field k (def when absent,
 * an argument error when not an integer). */
void pmcsh_checkkeys(lua_State *L, int idx, int arg, const char *const known[]);
lua_Integer pmcsh_optint(lua_State *L, int idx, int arg, const char *k, lua_Integer def);
/* Boolean field k: def when absent, else Lua's truth of the value. */
int pmcsh_optbool(lua_State *L, int idx, const char *k, int def);
/* The index of field k's string among names[0..n-1], ignoring case; 0 (the
 * default, first) when absent; an argument error listing them otherwise. */
int pmcsh_optname(lua_State *L, int idx, int arg, const char *k, const char *const *names, int n);
/* Field "pages": a page policy (kernels/pages.h), default 4k. */
int pmcsh_optpages(lua_State *L, int idx, int arg);

/* Sets field k of the table on top to the method table of class `name`
 * (pmcsh_newclass's): the facade documents the methods and adds its own. */
void pmcsh_setmethods(lua_State *L, const char *k, const char *name);

/* Sets field k of the table on top to the list of the NULL-terminated
 * names: an engine's option keys, for its facade's completion. */
void pmcsh_setnames(lua_State *L, const char *k, const char *const names[]);

/* Sets field k of the table on top. */
static inline void pmcsh_setint(lua_State *L, const char *k, lua_Integer v)
{
	lua_pushinteger(L, v);
	lua_setfield(L, -2, k);
}

static inline void pmcsh_setnum(lua_State *L, const char *k, double v)
{
	lua_pushnumber(L, v);
	lua_setfield(L, -2, k);
}

static inline void pmcsh_setstr(lua_State *L, const char *k, const char *v)
{
	lua_pushstring(L, v);
	lua_setfield(L, -2, k);
}

static inline void pmcsh_setbool(lua_State *L, const char *k, int v)
{
	lua_pushboolean(L, v);
	lua_setfield(L, -2, k);
}

/* Memory a userdata holds outside Lua's heap (mmap'd arrays, chains):
 * counted before it is acquired, which may run a full collection first so
 * that dropped holders are freed at the pace new ones are made; returns
 * `bytes`, for the userdata to give back with pmcsh_extern_drop when it
 * closes. */
size_t pmcsh_extern_add(lua_State *L, size_t bytes);
void pmcsh_extern_drop(size_t bytes);

/* A new handle: a userdata of `size` zeroed bytes with metatable `mt`,
 * which the caller then marks closed until it acquires anything.  Refused
 * (an error) once the host is closing its state: a finalizer that runs at
 * exit may make no handle, since Lua finalizes none made then and what it
 * held would leak. */
void *pmcsh_newhandle(lua_State *L, size_t size, int nuv, const char *mt);
/* The host is about to close its state (lua_close). */
void pmcsh_closing(void);

/* Registers every luaopen above in package.preload (lpreload.c). */
void pmcsh_preload(lua_State *L);

#endif
