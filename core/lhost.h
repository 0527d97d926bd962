/* Between the host (lhost.c) and the REPL (lrepl.c). */
#ifndef PMCSH_LHOST_H
#define PMCSH_LHOST_H
#include <lua.h>

int host_docall(lua_State *L, int narg, int nres);
int host_report(lua_State *L, int status);
void host_message(const char *msg);
void host_install_sigint(void);
int repl_run(lua_State *L);

#endif
