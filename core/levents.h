/* What other bindings use of levents.c: an event's encoding as Lua data
 * (pmc.info's core, and g:events() in lpmc.c). */
#ifndef PMCSH_LEVENTS_H
#define PMCSH_LEVENTS_H
#include "lpmcsh.h"
#include "counter.h"

/* Pushes {name, canonical, pmu, type, config, ...}: how event e is encoded. */
void levents_push_encoding(lua_State *L, const struct pmc_event *e);

#endif
