/* pmcsh._pmc's event names: what one name encodes to (pmc.info), the list
 * of events this host (or a forced PMU model) knows, the counting
 * environment, and the suggestions' edit distance.  The naming is
 * evname.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lgroup.h"
#include <errno.h>
#include <string.h>

static int force_begin(lua_State *L, int idx, char *msg)
{
	const char *force = luaL_optstring(L, idx, NULL);
	if (!force)
		return 0;
	return pmc_pfm_init(force, msg, PMC_ERR_MAX);
}

static void force_end(int forced)
{
	if (forced)
		pmc_pfm_init(NULL, NULL, 0);
}

static int attr_cb(void *ctx, const struct pmc_attr *a)
{
	lua_State *L = ctx;
	lua_createtable(L, 0, 5);
	lua_pushstring(L, a->name); lua_setfield(L, -2, "name");
	lua_pushstring(L, a->desc); lua_setfield(L, -2, "description");
	lua_pushstring(L, a->type == 1 ? "umask" : a->type == 2 ? "bool" : a->type == 3 ? "integer" : "other");
	lua_setfield(L, -2, "kind");
	if (a->type == 1) {
		lua_pushinteger(L, (lua_Integer)a->code);
		lua_setfield(L, -2, "code");
	}
	lua_pushboolean(L, a->is_dfl); lua_setfield(L, -2, "default");
	lua_seti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
	return 0;
}

/* _pmc.info(name[, force_pmu]) -> table | nil, msg, errno */
int l_info(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	char msg[PMC_ERR_MAX];
	int forced = !lua_isnoneornil(L, 2);
	if (force_begin(L, 2, msg))
		return pmcsh_fail(L, msg, EINVAL);
	struct pmc_event *ev = lua_newuserdatauv(L, sizeof *ev, 0);
	int r = pmc_resolve(name, ev, msg, sizeof msg);
	int encoded = r == 0;
	if (r == -EINVAL && pmc_pfm_lookup(name, ev) == 0) {
		/* a bare event that needs a umask: its umasks, no encoding */
		lua_createtable(L, 0, 10);
		lua_pushstring(L, ev->name); lua_setfield(L, -2, "name");
		lua_pushstring(L, ev->canon); lua_setfield(L, -2, "canonical");
		lua_pushstring(L, ev->pmu); lua_setfield(L, -2, "pmu");
		lua_pushstring(L, msg); lua_setfield(L, -2, "reason");
	} else if (r) {
		force_end(forced);
		return pmcsh_fail(L, msg, -r);
	} else {
		lpmc_push_encoding(L, ev);
	}
	lua_pushboolean(L, encoded);
	lua_setfield(L, -2, "encoded");
	const char *desc = NULL;
	lua_newtable(L);
	pmc_event_attrs(ev, &desc, attr_cb, L);
	lua_setfield(L, -2, "attributes");
	if (!desc && ev->source == PMC_SRC_SYSFS)
		desc = "sysfs PMU event";
	lua_pushstring(L, desc ? desc : "");
	lua_setfield(L, -2, "description");
	lua_pushstring(L, forced ? lua_tostring(L, 2) : "host");
	lua_setfield(L, -2, "model");
	lua_pushboolean(L, forced || !encoded ? 0 : pmc_try_open(ev));
	lua_setfield(L, -2, "opens");
	force_end(forced);
	return 1;
}

struct list_ctx {
	lua_State *L;
	const char *pattern;
	int probe;
	lua_Integer n;
};

static int list_cb(void *ctx, const struct pmc_listed *e)
{
	struct list_ctx *c = ctx;
	lua_State *L = c->L;
	if (c->pattern && !strcasestr(e->name, c->pattern) && !strcasestr(e->desc, c->pattern))
		return 0;
	lua_createtable(L, 0, 4);
	lua_pushstring(L, e->name); lua_setfield(L, -2, "name");
	lua_pushstring(L, e->pmu); lua_setfield(L, -2, "pmu");
	lua_pushstring(L, e->desc); lua_setfield(L, -2, "description");
	if (c->probe >= 0) {  /* 1: try opening it; 0: another model, never opens here */
		struct pmc_event ev;
		char msg[PMC_ERR_MAX];
		int ok = c->probe && pmc_resolve(e->name, &ev, msg, sizeof msg) == 0 && pmc_try_open(&ev);
		lua_pushboolean(L, ok);
		lua_setfield(L, -2, "opens");
	}
	lua_seti(L, -2, ++c->n);
	return 0;
}

/* _pmc.list([substring[, force_pmu[, noprobe]]]) -> array of {name, pmu, description, opens} */
int l_list(lua_State *L)
{
	struct list_ctx c = {L, luaL_optstring(L, 1, NULL), 1, 0};
	if (c.pattern && !*c.pattern)
		c.pattern = NULL;
	char msg[PMC_ERR_MAX];
	int forced = !lua_isnoneornil(L, 2);
	if (force_begin(L, 2, msg))
		return pmcsh_fail(L, msg, EINVAL);
	c.probe = lua_toboolean(L, 3) ? -1 : !forced;
	lua_newtable(L);
	int r = pmc_list(list_cb, &c);
	force_end(forced);
	if (r)
		return pmcsh_fail(L, "libpfm4 failed to initialise", -r);
	return 1;
}

/* _pmc.environment() -> {cpu_pmu=, paranoid=, forced=} */
int l_environment(lua_State *L)
{
	lua_createtable(L, 0, 3);
	lua_pushboolean(L, pmc_have_cpu_pmu());
	lua_setfield(L, -2, "cpu_pmu");
	lua_pushinteger(L, pmc_paranoid());
	lua_setfield(L, -2, "paranoid");
	const char *f = pmc_pfm_forced();
	if (f) {
		lua_pushstring(L, f);
		lua_setfield(L, -2, "forced");
	}
	return 1;
}

/* _pmc.distance(a, b) -> edit distance, case-insensitive (the suggestions'). */
int l_distance(lua_State *L)
{
	lua_pushinteger(L, pmc_edit_distance(luaL_checkstring(L, 1), luaL_checkstring(L, 2)));
	return 1;
}
