/* Placeholder until the chase binding lands. */
#include "lpmcsh.h"

int luaopen_pmcsh_chase(lua_State *L)
{
	lua_newtable(L);
	return 1;
}
