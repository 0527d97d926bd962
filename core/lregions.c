/* pmcsh._regions: the events handed to the marker library, and its
 * results files read back as plain tables (core/regions.c does both). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lgroup.h"
#include "regions.h"
#include <errno.h>
#include <string.h>

/* _regions.encode(events) -> PMCSH_MARKER_EVENTS's text; nil, msg, errno
 * for an event this machine does not know or the library cannot count. */
static int l_encode(lua_State *L)
{
	int n = lpmc_list_len(L, 1, "events");
	size_t size = (size_t)n * (sizeof(struct pmc_event) + sizeof(struct pmc_sub));
	struct pmc_event *ev = lua_newuserdatauv(L, size, 0);
	memset(ev, 0, size);
	struct pmc_group g = {.nev = n, .ev = ev, .sub = (struct pmc_sub *)(ev + n)};
	char msg[PMC_ERR_MAX];
	int r = lpmc_resolve_list(L, 1, ev, n, msg);
	if (r)
		return pmcsh_fail(L, msg, -r);
	pmc_group_layout(&g);
	char out[sizeof(((struct pmcsh_mk_header *)0)->events)];
	r = pmc_regions_encode(&g, out, sizeof out, msg, sizeof msg);
	if (r)
		return pmcsh_fail(L, msg, -r);
	lua_pushstring(L, out);
	return 1;
}

static void push_counts(lua_State *L, const char *k, const uint64_t *v, unsigned n)
{
	lua_createtable(L, (int)n, 0);
	for (unsigned i = 0; i < n; i++) {
		lua_pushinteger(L, (lua_Integer)v[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	lua_setfield(L, -2, k);
}

static const char *const WARNINGS[PMCSH_MK_NWARN] = {
	"environment", "file", "open", "name", "regions", "threads", "depth", "unbegun", "overlap", "exit_inside",
	"read", "fork",
};
static const char *const STATES[] = {"new", "counting", "ended", "off"};

/* Region id's threads that ended a call of it or counted iterations:
 * {{tid, calls, iterations, inner, overlapped, open, inclusive, exclusive,
 * enabled, running}}, as field "threads" of the table on top. */
static void push_region_threads(lua_State *L, const struct pmc_regions_file *f, unsigned id)
{
	lua_newtable(L);
	for (unsigned t = 0, m = 0; t < f->nthreads; t++) {
		const struct pmcsh_mk_thread *th = pmc_regions_thread(f, t);
		const struct pmcsh_mk_counts *k = &th->regions[id];
		if (!k->calls && !k->iterations)
			continue;
		lua_createtable(L, 0, 10);
		pmcsh_setint(L, "tid", th->tid);
		pmcsh_setint(L, "calls", (lua_Integer)k->calls);
		pmcsh_setint(L, "iterations", (lua_Integer)k->iterations);
		pmcsh_setint(L, "inner", (lua_Integer)k->inner);
		pmcsh_setbool(L, "overlapped", k->flags & 1);
		struct pmc_region_counts rc;
		pmc_regions_counts(f, th, id, &rc);
		pmcsh_setbool(L, "open", rc.open);
		push_counts(L, "inclusive", rc.incl, f->nevents);
		push_counts(L, "exclusive", rc.excl, f->nevents);
		push_counts(L, "enabled", rc.enabled, f->nevents);
		push_counts(L, "running", rc.running, f->nevents);
		lua_rawseti(L, -2, ++m);
	}
	lua_setfield(L, -2, "threads");
}

/* _regions.read(path) -> {pid, ppid, rank?, finished, warned = {kind...},
 * cost = {pairs, ns, outer = {...}, self = {...}}, threads = {{tid, state,
 * user_read, open = {names}}}, regions = {{name, threads = {{tid, calls,
 * iterations, inner, overlapped, open, inclusive, exclusive, enabled,
 * running}}}}}; nil, msg, errno when it is not such a file.  Counts are
 * integers, per event in the order of the encoding; the calibration's
 * region (0) is in cost, not in regions. */
static int l_read(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	struct pmc_regions_file f;
	char msg[PMC_ERR_MAX], name[PMCSH_MK_NAME];
	int r = pmc_regions_map(path, &f, msg, sizeof msg);
	if (r)
		return pmcsh_fail(L, msg, -r);
	const struct pmcsh_mk_header *h = f.h;
	lua_createtable(L, 0, 10);
	pmcsh_setint(L, "pid", h->pid);
	pmcsh_setint(L, "ppid", h->ppid);
	if (h->rank >= 0)
		pmcsh_setint(L, "rank", h->rank);
	pmcsh_setbool(L, "finished", h->finished == 1);
	pmcsh_setint(L, "events", f.nevents);
	lua_newtable(L);
	for (int k = 0, n = 0; k < PMCSH_MK_NWARN; k++)
		if (h->warned & (1u << k)) {
			lua_pushstring(L, WARNINGS[k]);
			lua_rawseti(L, -2, ++n);
		}
	lua_setfield(L, -2, "warned");
	lua_createtable(L, 0, 4);
	pmcsh_setint(L, "pairs", (lua_Integer)h->cal_pairs);
	pmcsh_setint(L, "ns", (lua_Integer)h->cal_ns);
	push_counts(L, "outer", h->cal_outer, f.nevents);
	push_counts(L, "self", h->cal_self, f.nevents);
	lua_setfield(L, -2, "cost");
	lua_createtable(L, (int)f.nthreads, 0);
	for (unsigned t = 0; t < f.nthreads; t++) {
		const struct pmcsh_mk_thread *th = pmc_regions_thread(&f, t);
		lua_createtable(L, 0, 4);
		pmcsh_setint(L, "tid", th->tid);
		pmcsh_setstr(L, "state", STATES[th->state < 4 ? th->state : 0]);
		pmcsh_setbool(L, "user_read", th->user_read == 1);
		unsigned depth = th->depth < PMCSH_MK_MAX_DEPTH ? th->depth : PMCSH_MK_MAX_DEPTH;
		lua_createtable(L, (int)depth, 0);
		for (unsigned d = 0; d < depth; d++) {
			unsigned id = th->stack[d];
			pmc_regions_name(&f, id < f.nregions ? id : 0, name);
			lua_pushstring(L, name);
			lua_rawseti(L, -2, d + 1);
		}
		lua_setfield(L, -2, "open");
		lua_rawseti(L, -2, t + 1);
	}
	lua_setfield(L, -2, "threads");
	lua_createtable(L, (int)f.nregions, 0);
	for (unsigned id = 1, n = 0; id < f.nregions; id++) {
		pmc_regions_name(&f, id, name);
		lua_createtable(L, 0, 2);
		pmcsh_setstr(L, "name", name);
		push_region_threads(L, &f, id);
		lua_rawseti(L, -2, ++n);
	}
	lua_setfield(L, -2, "regions");
	pmc_regions_unmap(&f);
	return 1;
}

static const luaL_Reg funcs[] = {
	{"encode", l_encode},
	{"read", l_read},
	{NULL, NULL},
};

int luaopen_pmcsh__regions(lua_State *L)
{
	luaL_newlib(L, funcs);
	pmcsh_setint(L, "MAX_EVENTS", PMCSH_MK_MAX_EVENTS);
	pmcsh_setint(L, "MAX_REGIONS", PMCSH_MK_MAX_REGIONS - 1);
	pmcsh_setint(L, "CAL_BATCHES", PMCSH_MK_CAL_BATCHES);
	return 1;
}
