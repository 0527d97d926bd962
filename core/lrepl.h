/* The REPL (lrepl.c) as the host (lhost.c) starts it.  The host hands in
 * how it runs a chunk and reports a failure, so the arrow runs one way:
 * the host calls the REPL, the REPL calls nothing of the host's. */
#ifndef PMCSH_LREPL_H
#define PMCSH_LREPL_H
#include <lua.h>

struct repl_host {
	/* lua.c's docall: runs the function below narg arguments with the
	 * message handler and Ctrl-C armed; returns a Lua status */
	int (*docall)(lua_State *L, int narg, int nres);
	/* prints the error on top of the stack for a failed status; returns
	 * the exit status */
	int (*report)(lua_State *L, int status);
};

/* Runs the REPL until end of input; returns the exit status. */
int repl_run(lua_State *L, const struct repl_host *host);

#endif
