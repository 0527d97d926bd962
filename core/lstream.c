/* Placeholder until the stream binding lands. */
#include "lpmcsh.h"

int luaopen_pmcsh_stream(lua_State *L)
{
	lua_newtable(L);
	return 1;
}
