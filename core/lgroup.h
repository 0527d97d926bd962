/* Inside the pmcsh._pmc binding: the group userdata and the conversions
 * its files share.  lpmc.c owns the group, its readings and the module's
 * one registration table; lrun.c (pmc.run), lcalib.c (probes, overhead),
 * lreplay.c (pure functions on recorded data) and levents.c (event names)
 * add functions to it.  The engines use lpmc.h only. */
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

/* Pushes a reading (lreading.c) of g's events with counts c: the list of
 * entries {name, unit?, value} in the order the events were given,
 * with the group's enabled, running and multiplexed; lookup by event
 * string through its metatable.  live: c is g's delta now, so an event
 * counted cpu-wide gets its cpus and sockets too. */
void lpmc_push_reading(lua_State *L, const struct pmc_group *g, const struct pmc_count *c, int live);
/* Makes the readings' metatable (once, at the module's open), also the
 * module's field reading_meta, where the facade adds its __tostring. */
void lpmc_reading_open(lua_State *L);
/* Writes g's delta now, counts c, into the reading at stack index r, one
 * of g's events in their order (as g:read() made it): entry k gets event
 * k's value.  Raises (bad argument r) on a table of another length or
 * with an entry that is not a table. */
void lpmc_refill_reading(lua_State *L, int r, const struct pmc_group *g, const struct pmc_count *c);
/* Reads lg's current delta and pushes the reading (or refills the table
 * at stack index `into` when > 0, left on the top);
 * returns 1, or 3 after pushing nil, msg, errno. */
int lpmc_read_push(lua_State *L, struct lgroup *lg, int into);
/* Pushes {name, canonical, pmu, type, config, ...}: how event e is encoded. */
void lpmc_push_encoding(lua_State *L, const struct pmc_event *e);
/* The message for an event that was enabled but never scheduled. */
void lpmc_unsched_msg(const struct pmc_event *ev, char *msg, size_t len);

/* The functions of pmcsh._pmc defined outside lpmc.c (registered there). */
int l_run(lua_State *L);                                    /* lrun.c    */
int l_probe(lua_State *L), l_windows(lua_State *L), l_overhead(lua_State *L);  /* lcalib.c */
int l_scale(lua_State *L), l_replay(lua_State *L), l_mmap_time(lua_State *L),
    l_sign_extend(lua_State *L), l_mmap_replay(lua_State *L);             /* lreplay.c */
int l_info(lua_State *L), l_info_all(lua_State *L), l_list(lua_State *L), l_environment(lua_State *L),
    l_distance(lua_State *L), l_models(lua_State *L), l_parse_name(lua_State *L),
    l_modified(lua_State *L);                                               /* levents.c */
void levents_open(lua_State *L);

#endif
