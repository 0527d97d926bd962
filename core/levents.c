/* pmcsh._events: what one name encodes to (pmc.info), the list of events
 * this host (or a forced PMU model) knows, an event name's syntax, the
 * counting environment, and the suggestions' edit distance.  The naming
 * is evname.c; another model is asked of a child (pfmforced.c).  An
 * encoding pushed here is also what g:events() returns (lpmc.c). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "levents.h"
#include "pfmforced.h"
#include "sysfs.h"
#include <errno.h>
#include <string.h>

void levents_push_encoding(lua_State *L, const struct pmc_event *e)
{
	lua_createtable(L, 0, 12);
	pmcsh_setstr(L, "name", e->name);
	pmcsh_setstr(L, "canonical", e->canon);
	pmcsh_setstr(L, "pmu", e->pmu);
	pmcsh_setint(L, "type", e->attr.type);
	pmcsh_setint(L, "config", (lua_Integer)e->attr.config);
	pmcsh_setint(L, "config1", (lua_Integer)e->attr.config1);
	pmcsh_setint(L, "config2", (lua_Integer)e->attr.config2);
	pmcsh_setbool(L, "exclude_user", e->attr.exclude_user);
	pmcsh_setbool(L, "exclude_kernel", e->attr.exclude_kernel);
	pmcsh_setbool(L, "exclude_hv", e->attr.exclude_hv);
	if (e->attr.precise_ip)
		pmcsh_setint(L, "precise_ip", e->attr.precise_ip);
	pmcsh_setnum(L, "scale", e->scale);
	if (e->unit[0])
		pmcsh_setstr(L, "unit", e->unit);
	pmcsh_setbool(L, "hardware", e->needs_cpu_pmu);
	if (e->ncpumask) {
		lua_createtable(L, e->ncpumask, 0);
		for (int i = 0; i < e->ncpumask; i++) {
			lua_pushinteger(L, e->cpumask[i]);
			lua_seti(L, -2, i + 1);
		}
		lua_setfield(L, -2, "cpumask");
	}
}

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

/* Replaces the attributes table on top of the stack by pmc.info's table
 * for an answer (r == 0): the encoding, or for a bare event that needs a
 * umask its name and why, with the attributes, description and model. */
static void push_info(lua_State *L, const struct pmc_event *ev, int encoded, const char *desc, const char *msg,
		      const char *force)
{
	if (!encoded) {
		/* a bare event that needs a umask: its umasks, no encoding */
		lua_createtable(L, 0, 10);
		pmcsh_setstr(L, "name", ev->name);
		pmcsh_setstr(L, "canonical", ev->canon);
		pmcsh_setstr(L, "pmu", ev->pmu);
		pmcsh_setstr(L, "reason", msg);
	} else {
		levents_push_encoding(L, ev);
	}
	pmcsh_setbool(L, "encoded", encoded);
	lua_rotate(L, -2, 1);
	lua_setfield(L, -2, "attributes");
	pmcsh_setstr(L, "description", desc);
	pmcsh_setstr(L, "model", force ? force : "host");
	pmcsh_setbool(L, "opens", force || !encoded ? 0 : pmc_try_open(ev));
}

/* _events.info(name[, force_pmu]) -> table | nil, msg, errno.  Another
 * model's encoding comes from a child (pfmforced.c). */
static int l_info(lua_State *L)
{
	const char *name = pmcsh_checkstring(L, 1);
	const char *force = pmcsh_optstring(L, 2, NULL);
	char msg[PMC_ERR_MAX], desc[PMC_DESC_MAX];
	struct pmc_event *ev = lua_newuserdatauv(L, sizeof *ev, 0);
	int encoded;
	lua_newtable(L);  /* the attributes, filled by attr_cb */
	int r = force ? pmc_forced_about(force, name, ev, &encoded, desc, sizeof desc, attr_cb, L, msg, sizeof msg)
		      : pmc_about(name, ev, &encoded, desc, sizeof desc, attr_cb, L, msg, sizeof msg);
	if (r)
		return pmcsh_fail(L, msg, -r);
	push_info(L, ev, encoded, desc, msg, force);
	return 1;
}

/* _events.info_all(names, force_pmu) -> infos, whys | nil, msg, errno: model
 * force_pmu's pmc.info for each name of the list, from one child; infos[i]
 * is false where names[i] does not encode, whys[i] its message.  The
 * answer is owned by a userdata on the stack until it is read. */
static int l_info_all(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	const char *force = pmcsh_checkstring(L, 2);
	size_t n = (size_t)lua_rawlen(L, 1);
	const char **names = lua_newuserdatauv(L, (n ? n : 1) * sizeof *names, 0);  /* kept by the stack */
	for (size_t i = 0; i < n; i++) {
		lua_rawgeti(L, 1, (lua_Integer)i + 1);
		luaL_argcheck(L, lua_type(L, -1) == LUA_TSTRING, 1, "a list of event names expected");
		names[i] = lua_tostring(L, -1);
		lua_pop(L, 1);  /* the string stays alive in the list */
	}
	char msg[PMC_ERR_MAX], desc[PMC_DESC_MAX];
	struct pmc_forced_answer a;
	int r = pmc_forced_about_all(force, names, n, &a, msg, sizeof msg);
	if (r)
		return pmcsh_fail(L, msg, -r);
	lua_createtable(L, (int)n, 0);  /* infos */
	lua_createtable(L, 0, 0);       /* whys */
	for (size_t i = 0; i < n; i++) {
		struct pmc_event *ev = lua_newuserdatauv(L, sizeof *ev, 0);
		int encoded;
		lua_newtable(L);
		r = pmc_forced_about_next(&a, ev, &encoded, desc, sizeof desc, attr_cb, L, msg, sizeof msg);
		if (r == -EIO) {
			pmc_forced_answer_free(&a);
			return pmcsh_fail(L, msg, EIO);
		}
		if (r) {
			lua_pop(L, 2);
			lua_pushboolean(L, 0);
			lua_seti(L, -3, (lua_Integer)i + 1);
			lua_pushstring(L, msg);
			lua_seti(L, -2, (lua_Integer)i + 1);
			continue;
		}
		push_info(L, ev, encoded, desc, msg, force);
		lua_remove(L, -2);  /* the event's userdata */
		lua_seti(L, -3, (lua_Integer)i + 1);
	}
	pmc_forced_answer_free(&a);
	return 2;
}

struct list_ctx {
	lua_State *L;
	const char *pattern;
	int probe;
	int tp_opens;  /* the first tracepoint's answer, -1 before: one open costs ms */
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
		int tp = !strcmp(e->pmu, "tracepoint"), ok = tp ? c->tp_opens : -1;
		if (ok < 0)
			ok = c->probe && pmc_resolve(e->name, &ev, msg, sizeof msg) == 0 && pmc_try_open(&ev);
		if (tp)
			c->tp_opens = ok;
		pmcsh_setbool(L, "opens", ok);
	}
	lua_seti(L, -2, ++c->n);
	return 0;
}

/* _events.list([substring[, force_pmu[, noprobe]]]) -> array of {name, pmu, description, opens} */
static int l_list(lua_State *L)
{
	struct list_ctx c = {L, pmcsh_optstring(L, 1, NULL), 1, -1, 0};
	if (c.pattern && !*c.pattern)
		c.pattern = NULL;
	const char *force = pmcsh_optstring(L, 2, NULL);
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

/* _events.models() -> {{name, description, present, events}, ...}: every PMU
 * model of this libpfm4 | nil, msg, errno */
static int l_models(lua_State *L)
{
	lua_newtable(L);
	int r = pmc_models(model_cb, L);
	if (r)
		return pmcsh_fail(L, "libpfm4 failed to initialise", -r > 0 ? -r : EINVAL);
	return 1;
}

/* _events.environment() -> {cpu_pmu=, paranoid=, forced=} */
static int l_environment(lua_State *L)
{
	lua_createtable(L, 0, 3);
	pmcsh_setbool(L, "cpu_pmu", pmc_have_cpu_pmu());
	pmcsh_setint(L, "paranoid", pmc_paranoid());
	const char *f = pmc_pfm_forced();
	if (f)
		pmcsh_setstr(L, "forced", f);
	return 1;
}

/* _events.distance(a, b) -> edit distance, case-insensitive (the suggestions'). */
static int l_distance(lua_State *L)
{
	lua_pushinteger(L, pmc_edit_distance(pmcsh_checkstring(L, 1), pmcsh_checkstring(L, 2)));
	return 1;
}

/* ---- the name's syntax (pmc_name_parse) ---------------------------------- */

static const char *const forms[] = {NULL, "name", "sysfs", "group"};

static void push_composed(lua_State *L, const struct pmc_name *n, const char *mods)
{
	char out[PMC_NAME_MAX + 16];
	if (pmc_name_compose(n, mods, out, sizeof out))
		pmcsh_argerror(L, 1, "the name with its modifiers is over 255 characters");
	lua_pushstring(L, out);
}

static void check_name(lua_State *L, int idx, struct pmc_name *n)
{
	char msg[PMC_ERR_MAX];
	if (pmc_name_parse(pmcsh_checkstring(L, idx), n, msg, sizeof msg))
		pmcsh_argerror(L, idx, msg);
}

/* The name without its u, k, h letters (its other modifiers kept). */
static void push_plain(lua_State *L, const struct pmc_name *n)
{
	char rest[sizeof n->mods];
	int k = 0;
	for (const char *p = n->mods; *p; p++)
		if (!strchr("ukh", *p))
			rest[k++] = *p;
	rest[k] = 0;
	push_composed(L, n, rest);
}

static int member_push(void *ctx, const char *item, size_t len)
{
	lua_State *L = ctx;
	const struct pmc_name *g = lua_touserdata(L, -2);
	struct pmc_name e;
	char m[PMC_NAME_MAX], mods[2 * sizeof e.mods], msg[PMC_ERR_MAX];
	snprintf(m, sizeof m, "%.*s", (int)len, item);  /* parsed whole by pmc_name_parse already */
	if (pmc_name_parse(m, &e, msg, sizeof msg))
		pmcsh_argerror(L, 1, msg);
	snprintf(mods, sizeof mods, "%s%s", e.mods, g->mods);
	push_composed(L, &e, mods);
	lua_seti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
	return 0;
}

/* _events.parse_name(name) -> {name, form, base, pmu?, modifiers, privilege?,
 * plain, members?}; a bad name raises (kind "argument"). */
static int l_parse_name(lua_State *L)
{
	struct pmc_name *n = lua_newuserdatauv(L, sizeof *n, 0);
	check_name(L, 1, n);
	lua_createtable(L, 0, 8);
	lua_pushvalue(L, 1);
	lua_setfield(L, -2, "name");
	pmcsh_setstr(L, "form", forms[n->form]);
	pmcsh_setstr(L, "base", n->base);
	if (n->pmu[0])
		pmcsh_setstr(L, "pmu", n->pmu);
	pmcsh_setstr(L, "modifiers", n->mods);
	if (n->priv[0])
		pmcsh_setstr(L, "privilege", n->priv);
	push_plain(L, n);
	lua_setfield(L, -2, "plain");
	if (n->form == PMC_FORM_GROUP) {
		lua_pushvalue(L, -2);  /* the group, for member_push */
		lua_newtable(L);
		pmc_split_list(n->base, 0, member_push, L);
		lua_setfield(L, -3, "members");
		lua_pop(L, 1);
		if (n->weak) {
			lua_pushboolean(L, 1);
			lua_setfield(L, -2, "weak");
		}
	}
	return 1;
}

/* _events.modified(name, priv) -> name with the privilege letters priv (u, k,
 * h) in its form's place; a name that has one already raises. */
static int l_modified(lua_State *L)
{
	struct pmc_name n;
	check_name(L, 1, &n);
	const char *priv = pmcsh_checkstring(L, 2);
	pmcsh_argcheck(L, *priv && strspn(priv, "ukh") == strlen(priv) && strlen(priv) <= 3, 2,
		      "privilege letters expected (u, k or h)");
	if (n.priv[0])
		pmcsh_argerror(L, 1, lua_pushfstring(L, "'%s' already has a privilege modifier (%s); give the plain name",
						     lua_tostring(L, 1), n.priv));
	char mods[sizeof n.mods + 4];
	snprintf(mods, sizeof mods, "%s%s", n.mods, priv);
	push_composed(L, &n, mods);
	return 1;
}

static const luaL_Reg funcs[] = {
	{"info", l_info},
	{"info_all", l_info_all},
	{"list", l_list},
	{"models", l_models},
	{"environment", l_environment},
	{"distance", l_distance},
	{"parse_name", l_parse_name},
	{"modified", l_modified},
	{NULL, NULL}
};

/* The module, with generic_names (perf's generic event names) and
 * sysfs_pmus (the folder of the kernel's PMUs). */
int luaopen_pmcsh__events(lua_State *L)
{
	luaL_newlib(L, funcs);
	lua_newtable(L);
	for (int i = 0; pmc_generic_name(i); i++) {
		lua_pushstring(L, pmc_generic_name(i));
		lua_seti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "generic_names");
	pmcsh_setstr(L, "sysfs_pmus", SYSFS_PMUS);
	return 1;
}
