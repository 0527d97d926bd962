/* Readings (lreading.c): a group's counts made plain Lua data, for every
 * binding that returns counts (lpmc.c, lcalib.c, lreplay.c and the
 * engines' windows).  It calls none of them. */
#ifndef PMCSH_LREADING_H
#define PMCSH_LREADING_H
#include "lpmcsh.h"
#include "counter.h"

/* Pushes a reading of g's events with counts c: the list of entries
 * {name, unit?, value} in the order the events were given, with the
 * group's enabled, running and multiplexed; lookup by event string through
 * its metatable.  live: c is g's delta now, so an event counted cpu-wide
 * gets its cpus and sockets too. */
void lreading_push(lua_State *L, const struct pmc_group *g, const struct pmc_count *c, int live);
/* Writes g's delta now, counts c, into the reading at stack index r, one
 * of g's events in their order (as g:read() made it): entry k gets event
 * k's value.  Raises (bad argument r) on a table of another length or
 * with an entry that is not a table. */
void lreading_refill(lua_State *L, int r, const struct pmc_group *g, const struct pmc_count *c);
/* Pushes the readings' metatable, made on its first use (also _pmc's
 * reading_meta, where the facade adds its __tostring). */
void lreading_meta(lua_State *L);

#endif
