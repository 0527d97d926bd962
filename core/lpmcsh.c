/* The helpers the binding files share: error objects, argument checks,
 * option tables, classes, handles.  It calls no binding; the preload table
 * that calls them all is lpreload.c. */
#include <string.h>
#include <strings.h>

#include "lpmcsh.h"
#include "../kernels/pages.h"

/* __tostring of an error object: where, then luaL_argerror's words for an
 * argument error, the message for any other kind. */
static int error_tostring(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_getfield(L, 1, "where");
	lua_getfield(L, 1, "kind");
	lua_getfield(L, 1, "message");
	const char *where = lua_tostring(L, 2), *kind = lua_tostring(L, 3), *msg = lua_tostring(L, 4);
	if (kind && strcmp(kind, "argument") == 0) {
		lua_getfield(L, 1, "arg");
		lua_getfield(L, 1, "func");
		lua_pushfstring(L, "%sbad argument #%d to '%s' (%s)", where ? where : "", (int)lua_tointeger(L, 5),
				lua_tostring(L, 6) ? lua_tostring(L, 6) : "?", msg ? msg : "");
	} else {
		lua_pushfstring(L, "%s%s", where ? where : "", msg ? msg : "(error object without a message)");
	}
	return 1;
}

int pmcsh_argerror(lua_State *L, int arg, const char *msg)
{
	lua_Debug ar;
	const char *func = "?";
	if (lua_getstack(L, 0, &ar)) {
		lua_getinfo(L, "n", &ar);
		if (ar.namewhat && strcmp(ar.namewhat, "method") == 0)
			arg--;   /* as luaL_argerror counts: the self is not an argument */
		if (ar.name)
			func = ar.name;
	}
	lua_createtable(L, 0, 5);
	pmcsh_setstr(L, "kind", "argument");
	pmcsh_setint(L, "arg", arg);
	pmcsh_setstr(L, "func", func);
	pmcsh_setstr(L, "message", msg);
	luaL_where(L, 1);
	lua_setfield(L, -2, "where");
	pmcsh_errormeta(L);
	lua_setmetatable(L, -2);
	return lua_error(L);
}

void pmcsh_setmethods(lua_State *L, const char *k, const char *name)
{
	luaL_getmetatable(L, name);
	lua_getfield(L, -1, "__index");
	lua_setfield(L, -3, k);
	lua_pop(L, 1);
}

void pmcsh_setnames(lua_State *L, const char *k, const char *const names[])
{
	lua_newtable(L);
	for (int i = 0; names[i]; i++)
		lua_pushstring(L, names[i]), lua_rawseti(L, -2, i + 1);
	lua_setfield(L, -2, k);
}

int pmcsh_typeerror(lua_State *L, int arg, const char *tname)
{
	const char *got;
	if (luaL_getmetafield(L, arg, "__name") == LUA_TSTRING)
		got = lua_tostring(L, -1);
	else if (lua_type(L, arg) == LUA_TLIGHTUSERDATA)
		got = "light userdata";
	else
		got = luaL_typename(L, arg);
	return pmcsh_argerror(L, arg, lua_pushfstring(L, "%s expected, got %s", tname, got));
}

lua_Integer pmcsh_checkinteger(lua_State *L, int arg)
{
	int isnum;
	lua_Integer v = lua_tointegerx(L, arg, &isnum);
	if (!isnum) {
		if (lua_isnumber(L, arg))
			pmcsh_argerror(L, arg, "number has no integer representation");
		else
			pmcsh_typeerror(L, arg, lua_typename(L, LUA_TNUMBER));
	}
	return v;
}

lua_Integer pmcsh_optinteger(lua_State *L, int arg, lua_Integer def)
{
	return lua_isnoneornil(L, arg) ? def : pmcsh_checkinteger(L, arg);
}

lua_Number pmcsh_checknumber(lua_State *L, int arg)
{
	int isnum;
	lua_Number v = lua_tonumberx(L, arg, &isnum);
	if (!isnum)
		pmcsh_typeerror(L, arg, lua_typename(L, LUA_TNUMBER));
	return v;
}

const char *pmcsh_checkstring(lua_State *L, int arg)
{
	size_t len;
	const char *s = lua_tolstring(L, arg, &len);
	if (!s)
		pmcsh_typeerror(L, arg, lua_typename(L, LUA_TSTRING));
	if (strlen(s) != len)  /* C would read it cut at the NUL: refused, not cut */
		pmcsh_argerror(L, arg, "the string holds a NUL byte");
	return s;
}

const char *pmcsh_optstring(lua_State *L, int arg, const char *def)
{
	return lua_isnoneornil(L, arg) ? def : pmcsh_checkstring(L, arg);
}

void pmcsh_checktype(lua_State *L, int arg, int t)
{
	if (lua_type(L, arg) != t)
		pmcsh_typeerror(L, arg, lua_typename(L, t));
}

int pmcsh_checkoption(lua_State *L, int arg, const char *def, const char *const lst[])
{
	const char *name = def ? pmcsh_optstring(L, arg, def) : pmcsh_checkstring(L, arg);
	for (int i = 0; lst[i]; i++)
		if (strcmp(lst[i], name) == 0)
			return i;
	return pmcsh_argerror(L, arg, lua_pushfstring(L, "invalid option '%s'", name));
}

void pmcsh_errormeta(lua_State *L)
{
	if (luaL_newmetatable(L, PMCSH_ERROR_MT)) {
		lua_pushcfunction(L, error_tostring);
		lua_setfield(L, -2, "__tostring");
	}
}

void pmcsh_newclass(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods)
{
	luaL_newmetatable(L, name);
	luaL_setfuncs(L, meta, 0);
	lua_pushstring(L, name);   /* getmetatable(handle) says the class, and gives no metamethod to call */
	lua_setfield(L, -2, "__metatable");
	lua_newtable(L);
	luaL_setfuncs(L, methods, 0);
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
}

int pmcsh_fail(lua_State *L, const char *msg, int err)
{
	luaL_pushfail(L);
	lua_pushstring(L, msg);
	lua_pushinteger(L, err);
	return 3;
}

void pmcsh_checkkeys(lua_State *L, int idx, int arg, const char *const known[])
{
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		int ok = 0;
		if (lua_type(L, -2) == LUA_TSTRING)
			for (int i = 0; known[i]; i++)
				ok |= strcmp(known[i], lua_tostring(L, -2)) == 0;
		if (!ok) {
			lua_pushvalue(L, -2);
			pmcsh_argerror(L, arg, lua_pushfstring(L, "unknown option '%s'", luaL_tolstring(L, -1, NULL)));
		}
		lua_pop(L, 1);
	}
}

lua_Integer pmcsh_optint(lua_State *L, int idx, int arg, const char *k, lua_Integer def)
{
	lua_Integer v = def;
	int t = lua_getfield(L, idx, k);
	if (t != LUA_TNIL) {
		int isint;
		v = lua_tointegerx(L, -1, &isint);
		if (!isint)
			pmcsh_argerror(L, arg, lua_pushfstring(L, "%s: an integer expected, got %s", k,
				      t == LUA_TNUMBER ? "a fraction" : luaL_typename(L, -1)));
	}
	lua_pop(L, 1);
	return v;
}

int pmcsh_optbool(lua_State *L, int idx, const char *k, int def)
{
	int t = lua_getfield(L, idx, k), v = t == LUA_TNIL ? def : lua_toboolean(L, -1);
	lua_pop(L, 1);
	return v;
}

int pmcsh_optname(lua_State *L, int idx, int arg, const char *k, const char *const *names, int n)
{
	int t = lua_getfield(L, idx, k), r = -1;
	if (t == LUA_TNIL)
		r = 0;
	else if (t == LUA_TSTRING)
		for (int i = 0; i < n; i++)
			if (strcasecmp(names[i], lua_tostring(L, -1)) == 0)
				r = i;
	if (r < 0) {
		luaL_Buffer b;
		luaL_buffinit(L, &b);
		for (int i = 0; i < n; i++) {
			if (i)
				luaL_addstring(&b, ", ");
			luaL_addstring(&b, names[i]);
		}
		luaL_pushresult(&b);
		const char *list = lua_tostring(L, -1);   /* before tolstring pushes above it */
		pmcsh_argerror(L, arg, lua_pushfstring(L, "%s: unknown value '%s' (one of %s)", k,
						     luaL_tolstring(L, -2, NULL), list));
	}
	lua_pop(L, 1);
	return r;
}

int pmcsh_optpages(lua_State *L, int idx, int arg)
{
	const char *names[PAGES_N];
	for (int i = 0; i < PAGES_N; i++)
		names[i] = pages_policies[i].name;
	return pmcsh_optname(L, idx, arg, "pages", names, PAGES_N);
}

static int closing;

void pmcsh_closing(void)
{
	closing = 1;
}

void *pmcsh_newhandle(lua_State *L, size_t size, int nuv, const char *mt)
{
	if (closing)
		luaL_error(L, "pmcsh is exiting: no %s can be made in a finalizer now", mt);
	void *h = lua_newuserdatauv(L, size, nuv);
	memset(h, 0, size);
	luaL_setmetatable(L, mt);
	return h;
}

/* ---- memory outside Lua's heap ------------------------------------------ */

/* Lua 5.4's collector paces itself by what its allocator hands out, and a
 * stream's arrays or a chain are mmap'd: a 100-byte userdata holding
 * 384 MiB, which the collector would let pile up (20 dropped default
 * streams held 6 GiB).  Lua offers no way to declare such bytes, so the
 * bindings count them here with Lua's own rule: a full collection once
 * the bytes made since the last one exceed those live after it (a pause
 * of 200%), past a floor. */
#define EXTERN_FLOOR ((size_t)64 << 20)
static size_t extern_live, extern_made, extern_kept;

size_t pmcsh_extern_add(lua_State *L, size_t bytes)
{
	if (extern_made + bytes > (extern_kept > EXTERN_FLOOR ? extern_kept : EXTERN_FLOOR)) {
		lua_gc(L, LUA_GCCOLLECT);
		extern_made = 0;
		extern_kept = extern_live;  /* what survived: the __gc of the rest ran */
	}
	extern_made += bytes;
	extern_live += bytes;
	return bytes;
}

void pmcsh_extern_drop(size_t bytes)
{
	extern_live -= bytes < extern_live ? bytes : extern_live;
}
