/* The group userdata and the conversions lpmc.c (which owns the group)
 * offers the bindings built on groups: lrun.c (pmcsh._run), lcalib.c
 * (pmcsh._calib), lreplay.c (pmcsh._replay) and lregions.c, each a module
 * of its own that calls lpmc.c, never the other way.  The engines use
 * lpmc.h only. */
#ifndef PMCSH_LGROUP_H
#define PMCSH_LGROUP_H
#include "lpmc.h"
#include "counter.h"

#define LGROUP_MAGIC 0x70756f72676d6370ull   /* "pmcgroup": what lpmc_checkgroup checks */

struct lgroup {
	uint64_t magic;
	int closed;
	int measuring;          /* inside g:measure's function: the window is open */
	struct pmc_group g;
	struct pmc_target target;
	struct pmc_event *ev;   /* points into the tail of this userdata */
	struct pmc_sub *sub;
	char rdpmc_why[256];    /* why g:read() uses read() only, when not mapped */
};

/* Argument idx as an open pmcsh.group; raises otherwise. */
struct lgroup *lpmc_checkgroup(lua_State *L, int idx);
/* The same, not inside its own g:measure: what starts, stops or resets
 * the counters (a window of its own) would cut the measured one. */
struct lgroup *lpmc_checkidle(lua_State *L, int idx);
/* Pushes a closed group userdata for n events (its fds not yet open). */
struct lgroup *lpmc_newgroup(lua_State *L, int n);
/* The length of the event list at idx (1 .. PMC_MAX_EVENTS; raises otherwise). */
int lpmc_list_len(lua_State *L, int idx, const char *what);
/* Resolves the event names of the list at idx into ev[0..n-1]: misuse
 * raises, an unknown event returns -errno with msg (PMC_ERR_MAX). */
int lpmc_resolve_list(lua_State *L, int idx, struct pmc_event *ev, int n, char *msg);
/* Target options {pid=, cpus=, inherit=, pinned=} at idx (none: the calling thread). */
void lpmc_read_target(lua_State *L, int idx, struct pmc_target *t);
/* Opens lg (events resolved, layout done) on t, collecting garbage once
 * when out of descriptors; marks it open.  Returns 0, or -errno with msg
 * saying what to do next. */
int lpmc_group_open(lua_State *L, struct lgroup *lg, const struct pmc_target *t, char *msg);
/* Closes lg's fds once (__gc, __close and g:close share it). */
void lpmc_close(struct lgroup *lg);

/* Reads lg's current delta and pushes the reading (or refills the table
 * at stack index `into` when > 0, left on the top);
 * returns 1, or 3 after pushing nil, msg, errno. */
int lpmc_read_push(lua_State *L, struct lgroup *lg, int into);
/* The message for an event that was enabled but never scheduled. */
void lpmc_unsched_msg(const struct pmc_event *ev, char *msg, size_t len);

#endif
