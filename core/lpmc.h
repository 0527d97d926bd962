/* What the engine bindings (lstream.c, lchase.c) use of the pmc binding:
 * a counter window around their loop, inside their one C call. */
#ifndef PMCSH_LPMC_H
#define PMCSH_LPMC_H
#include <sys/types.h>
#include "lpmcsh.h"
#include "../kernels/kwindow.h"

struct pmc_window;

/* Checks that argument `idx` is an open pmcsh.group (a Lua error otherwise)
 * and prepares a window for `nreps` repetitions (pmc_window_open, pmc_window.h).  The group keeps counting
 * its own target (the calling thread); each of the `ntids` threads in `tids`
 * is counted too, by a copy of the group opened on it, and all are summed.
 * Fills `kw` with hooks that, per repetition, snapshot the counters, enable,
 * and after the loop disable and snapshot again, keeping the delta.
 * Pushes a userdata that owns the window (and the per-thread copies): keep it
 * on the stack while the window is in use.  On an environment failure
 * (opening a copy) returns NULL and pushes nil, message, errno (as
 * luaL_fileresult does): the caller returns those 3 values.
 * Hooks: begin reads the counters (still disabled) then enables them; end
 * disables, reads and keeps the delta of that repetition.  So the window
 * holds only the enable/disable ioctls.  end returns -EBUSY when a group
 * was enabled but never scheduled (see lpmc_window_push). */
struct pmc_window *lpmc_window_new(lua_State *L, int idx, int nreps,
				   const pid_t *tids, int ntids, struct kwindow *kw);

/* Pushes two values: the reading summed over the first `nreps_done`
 * repetitions (same shape as group:read()) and the array of per-repetition
 * readings; or nil and the message when a repetition could not be
 * scheduled (never zeros). */
void lpmc_window_push(lua_State *L, struct pmc_window *w, int nreps_done);

#endif
