/* libFuzzer host for the parsers pmcsh writes in Lua.  A Lua state holds
 * pmcsh's modules and its C bindings (make asan's sanitized objects, less
 * the host), and the driver spec/fuzz/DRIVER.lua returns the function each
 * input is given to, as a string.  The driver catches what the parser is
 * meant to answer with (a usage error, nil and a message); any error that
 * escapes it is a finding, and this host aborts with it.
 *
 * libFuzzer sees no coverage inside Debian's Lua library, so a line hook
 * feeds it the Lua lines each input runs instead: a counter per (line,
 * previous line) pair, AFL's edge trick, in libFuzzer's extra counters. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../core/lpmcsh.h"

#ifndef DRIVER
#error "build with -DDRIVER='\"NAME\"' (make fuzz)"
#endif
#ifndef FUZZ_ROOT
#define FUZZ_ROOT "."
#endif

__attribute__((used, section("__libfuzzer_extra_counters"))) static uint8_t edges[1 << 16];
static uintptr_t prev_line;
static lua_State *L;

/* A chunk's source string lives as long as its functions, so its address
 * names the chunk. */
static void on_line(lua_State *S, lua_Debug *ar)
{
	if (!lua_getinfo(S, "S", ar))
		return;
	uintptr_t cur = ((uintptr_t)ar->source >> 4) * 0x9E3779B1u + (uintptr_t)ar->currentline;
	uint8_t *c = &edges[(cur ^ prev_line) % sizeof edges];
	if (*c < 255)
		(*c)++;
	prev_line = cur >> 1;
}

static void die(const char *what)
{
	fprintf(stderr, "fuzz host (%s): %s: %s\n", DRIVER, what, lua_tostring(L, -1));
	abort();
}

/* pmcsh.paths as the host sets it (core/lhost.c), for a tree at FUZZ_ROOT. */
static void set_paths(void)
{
	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
	lua_newtable(L);
	const char *sub[] = {"lua", "scripts", "events"};
	for (int i = 0; i < 3; i++) {
		lua_pushfstring(L, "%s/%s", FUZZ_ROOT, sub[i]);
		lua_setfield(L, -2, sub[i]);
	}
	lua_pushliteral(L, FUZZ_ROOT);
	lua_setfield(L, -2, "root");
	lua_pushliteral(L, FUZZ_ROOT "/pmcsh");
	lua_setfield(L, -2, "exe");
	lua_pushliteral(L, "fuzz");
	lua_setfield(L, -2, "version");
	lua_pushboolean(L, 0);
	lua_setfield(L, -2, "secure");
	lua_pushboolean(L, 1);
	lua_setfield(L, -2, "sanitized");
	lua_setfield(L, -2, "pmcsh.paths");
	lua_pop(L, 1);
	lua_getglobal(L, "package");
	lua_pushliteral(L, FUZZ_ROOT "/lua/?.lua");
	lua_setfield(L, -2, "path");
	lua_pop(L, 1);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	L = luaL_newstate();
	luaL_openlibs(L);
	pmcsh_preload(L);
	set_paths();
	if (luaL_loadfile(L, FUZZ_ROOT "/spec/fuzz/" DRIVER ".lua") != LUA_OK)
		die("load");
	if (lua_pcall(L, 0, 1, 0) != LUA_OK)
		die("start");
	if (!lua_isfunction(L, -1)) {
		lua_pushliteral(L, "the driver returns no function");
		die("start");
	}
	lua_setfield(L, LUA_REGISTRYINDEX, "fuzz.driver");
	return 0;
}

static int traceback(lua_State *S)
{
	luaL_traceback(S, S, luaL_tolstring(S, 1, NULL), 1);
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lua_pushcfunction(L, traceback);
	lua_getfield(L, LUA_REGISTRYINDEX, "fuzz.driver");
	lua_pushlstring(L, (const char *)data, size);
	prev_line = 0;
	lua_sethook(L, on_line, LUA_MASKLINE, 0);
	int status = lua_pcall(L, 1, 0, -3);
	lua_sethook(L, NULL, 0, 0);
	if (status != LUA_OK)
		die("finding");
	lua_pop(L, 1);
	return 0;
}
