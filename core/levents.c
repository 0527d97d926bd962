/* pmcsh._pmc's event names: what one name encodes to (pmc.info), the list
 * of events this host (or a forced PMU model) knows, the counting
 * environment, and the suggestions' edit distance.  The naming is
 * evname.c; another model is asked of a child (pfmforced.c). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lgroup.h"
#include "pfmforced.h"
#include <errno.h>
#include <string.h>

static int attr_cb(void *ctx, const struct pmc_attr *a)
{
	lua_State *L = ctx;
	lua_createtable(L, 0, 5);
	pmcsh_setstr(L, "name", a->name);
	pmcsh_setstr(L, "description", a->desc);
	pmcsh_setstr(L, "kind", a->type == 1 ? "umask" : a->type == 2 ? "bool" : a->type == 3 ? "integer" : "other");
	if (a->type == 1)
		pmcsh_setint(L, "code", (lua_Integer)a->code);
	pmcsh_setbool(L, "default", a->is_dfl);
	lua_seti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
	return 0;
}

/* _pmc.info(name[, force_pmu]) -> table | nil, msg, errno.  Another
 * model's encoding comes from a child (pfmforced.c). */
int l_info(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	const char *force = luaL_optstring(L, 2, NULL);
	char msg[PMC_ERR_MAX], desc[PMC_DESC_MAX];
	struct pmc_event *ev = lua_newuserdatauv(L, sizeof *ev, 0);
	int encoded;
	lua_newtable(L);  /* the attributes, filled by attr_cb */
	int r = force ? pmc_forced_about(force, name, ev, &encoded, desc, sizeof desc, attr_cb, L, msg, sizeof msg)
		      : pmc_about(name, ev, &encoded, desc, sizeof desc, attr_cb, L, msg, sizeof msg);
	if (r)
		return pmcsh_fail(L, msg, -r);
	if (!encoded) {
		/* a bare event that needs a umask: its umasks, no encoding */
		lua_createtable(L, 0, 10);
		pmcsh_setstr(L, "name", ev->name);
		pmcsh_setstr(L, "canonical", ev->canon);
		pmcsh_setstr(L, "pmu", ev->pmu);
		pmcsh_setstr(L, "reason", msg);
	} else {
		lpmc_push_encoding(L, ev);
	}
	pmcsh_setbool(L, "encoded", encoded);
	lua_rotate(L, -2, 1);
	lua_setfield(L, -2, "attributes");
	pmcsh_setstr(L, "description", desc);
	pmcsh_setstr(L, "model", force ? force : "host");
	pmcsh_setbool(L, "opens", force || !encoded ? 0 : pmc_try_open(ev));
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
	pmcsh_setstr(L, "name", e->name);
	pmcsh_setstr(L, "pmu", e->pmu);
	pmcsh_setstr(L, "description", e->desc);
	if (c->probe >= 0) {  /* 1: try opening it; 0: another model, never opens here */
		struct pmc_event ev;
		char msg[PMC_ERR_MAX];
		int ok = c->probe && pmc_resolve(e->name, &ev, msg, sizeof msg) == 0 && pmc_try_open(&ev);
		pmcsh_setbool(L, "opens", ok);
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
	const char *force = luaL_optstring(L, 2, NULL);
	char msg[PMC_ERR_MAX] = "libpfm4 failed to initialise";
	c.probe = lua_toboolean(L, 3) ? -1 : !force;
	lua_newtable(L);
	int r = force ? pmc_forced_list(force, list_cb, &c, msg, sizeof msg) : pmc_list(list_cb, &c);
	if (r)
		return pmcsh_fail(L, msg, -r);
	return 1;
}

static int model_cb(void *ctx, const struct pmc_model *m)
{
	lua_State *L = ctx;
	lua_createtable(L, 0, 4);
	pmcsh_setstr(L, "name", m->name);
	pmcsh_setstr(L, "description", m->desc);
	pmcsh_setbool(L, "present", m->present);
	pmcsh_setint(L, "events", m->nevents);
	lua_seti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
	return 0;
}

/* _pmc.models() -> {{name, description, present, events}, ...}: every PMU
 * model of this libpfm4 | nil, msg, errno */
int l_models(lua_State *L)
{
	lua_newtable(L);
	int r = pmc_models(model_cb, L);
	if (r)
		return pmcsh_fail(L, "libpfm4 failed to initialise", -r > 0 ? -r : EINVAL);
	return 1;
}

/* _pmc.environment() -> {cpu_pmu=, paranoid=, forced=} */
int l_environment(lua_State *L)
{
	lua_createtable(L, 0, 3);
	pmcsh_setbool(L, "cpu_pmu", pmc_have_cpu_pmu());
	pmcsh_setint(L, "paranoid", pmc_paranoid());
	const char *f = pmc_pfm_forced();
	if (f)
		pmcsh_setstr(L, "forced", f);
	return 1;
}

/* _pmc.distance(a, b) -> edit distance, case-insensitive (the suggestions'). */
int l_distance(lua_State *L)
{
	lua_pushinteger(L, pmc_edit_distance(luaL_checkstring(L, 1), luaL_checkstring(L, 2)));
	return 1;
}
