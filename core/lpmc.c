/* Placeholder until the pmc binding lands. */
#include "lpmcsh.h"

int luaopen_pmcsh_pmc(lua_State *L)
{
	lua_newtable(L);
	return 1;
}
