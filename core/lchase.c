/* pmcsh._chase: the pointer-chase engines (kernels/chase.c) as a Lua
 * userdata "pmcsh.chain".  Options are checked here and results become plain
 * tables here; every timed sample happens inside one call to c:run (the
 * counter window, when a group is given, wraps each sample in C).  The
 * friendly API is lua/pmcsh/chase/engine.lua, behind lua/pmcsh/chase.lua. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "lpmcsh.h"
#include "lpmc.h"
#include "../kernels/chase.h"

#define CHAIN_MT "pmcsh.chain"
#define MAX_SAMPLES 100000
#define MAX_SAMPLE_MS 60000

typedef struct {
	struct chase_chain c;   /* c.mem.map == NULL once closed (and until built) */
	void *cursor;           /* where c:plain() goes on from */
	/* where c:run{k=k} goes on from: pos[k][0..k-1], NULL until the first */
	void *pos[CHASE_MAX_K + 1][CHASE_MAX_K];
	size_t held;            /* bytes told to pmcsh_extern_add */
} LChain;

static LChain *checkchain(lua_State *L)
{
	LChain *lc = luaL_checkudata(L, 1, CHAIN_MT);
	if (!lc->c.mem.map)
		luaL_error(L, "attempt to use a closed chain");
	return lc;
}

/* ---- option tables ---------------------------------------------------- */

static double opt_num(lua_State *L, int idx, int arg, const char *k, double def)
{
	double v = def;
	int t = lua_getfield(L, idx, k);
	if (t != LUA_TNIL) {
		int isnum;
		v = lua_tonumberx(L, -1, &isnum);
		if (!isnum)
			pmcsh_argerror(L, arg, lua_pushfstring(L, "%s: a number expected, got %s", k,
							     luaL_typename(L, -1)));
	}
	lua_pop(L, 1);
	return v;
}

/* ---- module functions --------------------------------------------------- */

/* chase.orders(): list of {name=, description=, stride=, stride_why=},
 * default first; stride is the order's default stride and stride_why says
 * why.  chase.page_policies(): list of {name=, description=}, default first. */
static int l_orders(lua_State *L)
{
	lua_createtable(L, CHASE_NORDERS, 0);
	for (int i = 0; i < CHASE_NORDERS; i++) {
		lua_createtable(L, 0, 4);
		pmcsh_setstr(L, "name", chase_orders[i].name);
		pmcsh_setstr(L, "description", chase_orders[i].description);
		pmcsh_setint(L, "stride", (lua_Integer)chase_orders[i].stride);
		pmcsh_setstr(L, "stride_why", chase_orders[i].stride_why);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

static int l_pages(lua_State *L)
{
	lua_createtable(L, PAGES_N, 0);
	for (int i = 0; i < PAGES_N; i++) {
		lua_createtable(L, 0, 2);
		pmcsh_setstr(L, "name", pages_policies[i].name);
		pmcsh_setstr(L, "description", pages_policies[i].description);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

static const char *const chain_keys[] = {"size", "stride", "order", "pages", "tlb_pages", "seed", "mix", "ways",
					 NULL};

/* Reads the chain options in the table at idx into *p; malformed ones
 * raise, naming the option.  Returns NULL, or why chase_check refuses
 * them together (a size too large for its stride or for this machine). */
static const char *chain_params(lua_State *L, int idx, struct chase_params *p)
{
	const char *order_names[CHASE_NORDERS];
	for (int i = 0; i < CHASE_NORDERS; i++)
		order_names[i] = chase_orders[i].name;
	pmcsh_checktype(L, idx, LUA_TTABLE);
	pmcsh_checkkeys(L, idx, 1, chain_keys);

	int order = pmcsh_optname(L, idx, 1, "order", order_names, CHASE_NORDERS);
	lua_Integer size = pmcsh_optint(L, idx, 1, "size", -1);
	lua_Integer stride = pmcsh_optint(L, idx, 1, "stride", (lua_Integer)chase_orders[order].stride);
	lua_Integer tlbp = pmcsh_optint(L, idx, 1, "tlb_pages", 64);
	lua_Integer seed = pmcsh_optint(L, idx, 1, "seed", 1);
	if (lua_getfield(L, idx, "size") == LUA_TNIL)
		pmcsh_argerror(L, 1, "size: required (bytes the chain spans)");
	lua_pop(L, 1);
	if (size <= 0)
		pmcsh_argerror(L, 1, lua_pushfstring(L, "size: must be positive, got %I", size));
	if (stride <= 0 || stride % (lua_Integer)sizeof(void *))
		pmcsh_argerror(L, 1, lua_pushfstring(L, "stride: must be a positive multiple of the pointer size "
						     "(%d bytes), got %I", (int)sizeof(void *), stride));
	if (tlbp <= 0 || tlbp > CHASE_MAX_TLB_PAGES)
		pmcsh_argerror(L, 1, lua_pushfstring(L, "tlb_pages: must be in 1..%I (groups of 4 KiB pages), got %I",
						     (lua_Integer)CHASE_MAX_TLB_PAGES, tlbp));
	*p = (struct chase_params){
		.size = (size_t)size, .stride = (size_t)stride,
		.order = order,
		.pages = pmcsh_optpages(L, idx, 1),
		.tlb_pages = (size_t)tlbp, .seed = (uint64_t)seed,
	};
	if (lua_getfield(L, idx, "mix") != LUA_TNIL)
		p->fixed_word = !lua_toboolean(L, -1);
	lua_pop(L, 1);
	lua_Integer ways = pmcsh_optint(L, idx, 1, "ways", 1);
	if (ways < 1 || ways > CHASE_MAX_K)
		pmcsh_argerror(L, 1, lua_pushfstring(L, "ways: independent cycles must be in 1..%d, got %I (%s)", CHASE_MAX_K,
						     ways, CHASE_MAX_K_WHY));
	p->ways = (int)ways;
	const char *why;
	return chase_check(p, &why) ? why : NULL;
}

/* Reads the chain options as chain_params, and raises where chase_check
 * refuses them. */
static void chain_checked(lua_State *L, int idx, struct chase_params *p)
{
	const char *why = chain_params(L, idx, p);
	if (why)
		pmcsh_argerror(L, 1, lua_pushfstring(L, "size %I, stride %I: %s", (lua_Integer)p->size,
						     (lua_Integer)p->stride, why));
}

/* Why k chains cannot run on a chain of n elements (pushed), or NULL. */
static const char *k_why(lua_State *L, lua_Integer k, size_t n)
{
	if (k < 1)
		return lua_pushfstring(L, "k: the number of chains must be in 1..%d, got %I", CHASE_MAX_K, k);
	if (k > CHASE_MAX_K)
		return lua_pushfstring(L, "k: the number of chains must be in 1..%d, got %I (%s)", CHASE_MAX_K, k,
				       CHASE_MAX_K_WHY);
	if ((size_t)k > n)
		return lua_pushfstring(L, "k: %I chains need at least %I elements, the chain has %I", k, k, (lua_Integer)n);
	return NULL;
}

/* check{size=, stride=, ...}[, k] -> true, or nil and why: the options
 * chain{} would accept, and k chains on them, checked without building
 * anything.  Malformed options raise as chain does. */
static int l_check(lua_State *L)
{
	struct chase_params p;
	lua_Integer k = pmcsh_optinteger(L, 2, 1);
	const char *why = chain_params(L, 1, &p);
	if (!why)
		why = k_why(L, k, p.size / p.stride);
	if (!why) {
		lua_pushboolean(L, 1);
		return 1;
	}
	lua_pushnil(L);
	lua_pushstring(L, why);
	return 2;
}

/* chain{size=, stride=, order="random", pages="4k", tlb_pages=64, seed=1, mix=true}
 * -> chain userdata (owns the mapping), or fail, message, errno when the
 * memory cannot be had.  Bad options raise, naming the option. */
static int l_chain(lua_State *L)
{
	struct chase_params p;
	chain_checked(L, 1, &p);
	char msg[512];

	LChain *lc = pmcsh_newhandle(L, sizeof *lc, 0, CHAIN_MT);   /* closed until built */
	lc->held = pmcsh_extern_add(L, p.size);
	int err = chase_build(&lc->c, &p, msg, sizeof msg);
	if (err == -ENOMEM) {
		/* chains left to the collector hold memory it cannot see:
		 * collect once, and try again */
		lua_gc(L, LUA_GCCOLLECT);
		err = chase_build(&lc->c, &p, msg, sizeof msg);
	}
	if (err)
		return pmcsh_fail(L, msg, -err);
	return 1;
}

/* ---- chain methods ------------------------------------------------------ */

/* c:info() -> {size=, n=, stride=, order=, pages=, mix=, ways=, word=?,
 * mixer=?, tlb_pages=, seed=}; size is what the chain spans (n * stride);
 * mix: each element's pointer at its own offset (c:word(e)), and mixer =
 * {period=64, lines=, slot_lines=}: the offsets repeat every 64 elements
 * and land on `lines` of the slot's `slot_lines` lines; else all at word. */
static int c_info(lua_State *L)
{
	struct chase_chain *c = &checkchain(L)->c;
	lua_createtable(L, 0, 11);
	pmcsh_setint(L, "size", (lua_Integer)(c->n * c->p.stride));
	pmcsh_setint(L, "n", (lua_Integer)c->n);
	pmcsh_setint(L, "stride", (lua_Integer)c->p.stride);
	pmcsh_setstr(L, "order", chase_orders[c->p.order].name);
	pmcsh_setstr(L, "pages", pages_policies[c->p.pages].name);
	pmcsh_setbool(L, "mix", !c->p.fixed_word);
	pmcsh_setint(L, "ways", c->p.ways > 0 ? c->p.ways : 1);
	if (c->p.fixed_word)
		pmcsh_setint(L, "word", (lua_Integer)c->word);
	else {   /* the mixer: its period, and how many lines of a slot cycle 0's pointers use */
		size_t slot_lines = (c->p.stride + 63) / 64, used = 0;
		uint64_t seen[CHASE_MIXER] = {0};   /* at most 64 lines in use: their numbers, 0 for none */
		for (int i = 0; i < CHASE_MIXER; i++) {
			uint64_t line = chase_word_of(c, 0, (size_t)i) / 64 + 1;
			size_t j = 0;
			while (j < used && seen[j] != line)
				j++;
			if (j == used)
				seen[used++] = line;
		}
		lua_createtable(L, 0, 3);
		pmcsh_setint(L, "period", CHASE_MIXER);
		pmcsh_setint(L, "lines", (lua_Integer)used);
		pmcsh_setint(L, "slot_lines", (lua_Integer)slot_lines);
		lua_setfield(L, -2, "mixer");
	}
	pmcsh_setint(L, "tlb_pages", (lua_Integer)c->p.tlb_pages);
	pmcsh_setint(L, "seed", (lua_Integer)c->p.seed);
	return 1;
}

static int check_way(lua_State *L, const struct chase_chain *c, int arg)
{
	lua_Integer w = pmcsh_optinteger(L, arg, 0);
	pmcsh_argcheck(L, w >= 0 && w < (c->p.ways > 0 ? c->p.ways : 1), arg, "cycle index out of range (0 .. ways-1)");
	return (int)w;
}

/* c:next(e[, w]) -> the element (0-based) that element e points to (in
 * cycle w): read from the chain itself, so a walk in Lua checks what the
 * engine chases. */
static int c_next(lua_State *L)
{
	struct chase_chain *c = &checkchain(L)->c;
	lua_Integer e = pmcsh_checkinteger(L, 2);
	pmcsh_argcheck(L, e >= 0 && (size_t)e < c->n, 2, "element index out of range (0 .. n-1)");
	lua_pushinteger(L, (lua_Integer)chase_next(c, check_way(L, c, 3), (size_t)e));
	return 1;
}

/* c:word(e[, w]) -> byte offset of element e's pointer (in cycle w) inside
 * its stride. */
static int c_word(lua_State *L)
{
	struct chase_chain *c = &checkchain(L)->c;
	lua_Integer e = pmcsh_checkinteger(L, 2);
	pmcsh_argcheck(L, e >= 0 && (size_t)e < c->n, 2, "element index out of range (0 .. n-1)");
	lua_pushinteger(L, (lua_Integer)chase_word_of(c, check_way(L, c, 3), (size_t)e));
	return 1;
}

static int check_k(lua_State *L, const struct chase_chain *c, lua_Integer k, int arg)
{
	const char *why = k_why(L, k, c->n);
	if (why)
		pmcsh_argerror(L, arg, why);
	if (c->p.ways > 1 && k > c->p.ways)
		pmcsh_argerror(L, arg, lua_pushfstring(L, "k: %I chains, but the chain was built with %d cycles (ways)",
						     k, c->p.ways));
	return (int)k;
}

/* c:heads(k) -> list of the k starting elements (0-based), chain j's on
 * cycle j when the chain has ways (chase_heads says where). */
static int c_heads(lua_State *L)
{
	struct chase_chain *c = &checkchain(L)->c;
	int k = check_k(L, c, pmcsh_checkinteger(L, 2), 2);
	lua_createtable(L, k, 0);
	for (int j = 0; j < k; j++) {
		lua_pushinteger(L, c->head[k][j]);
		lua_rawseti(L, -2, j + 1);
	}
	return 1;
}

static const char *const run_keys[] = {"k", "samples", "sample_ms", "warmup_ms", "group", NULL};

/* c:run{k=1, samples=5, sample_ms=20, warmup_ms=, group=} -> {samples={ns per load...},
 * loads=, loads_per_sample=, k=, warmup_ns=, warmup_s=, warmup_loads=, ends=, counts=,
 * per_rep=}, or fail, message, errno (EINTR when Ctrl-C stopped it).  One C
 * call: warm-up, then each timed sample inside the optional counter window.
 * loads is over all timed samples, as counts is summed over them; ends the
 * k elements (0-based) where the chains stopped, the next run's start. */
static int c_run(lua_State *L)
{
	LChain *lc = checkchain(L);
	struct chase_chain *c = &lc->c;
	if (lua_isnoneornil(L, 2)) {
		lua_settop(L, 1);
		lua_newtable(L);
	}
	pmcsh_checktype(L, 2, LUA_TTABLE);
	lua_settop(L, 2);
	pmcsh_checkkeys(L, 2, 2, run_keys);
	int k = check_k(L, c, pmcsh_optint(L, 2, 2, "k", 1), 2);
	lua_Integer samples = pmcsh_optint(L, 2, 2, "samples", 5);
	double ms = opt_num(L, 2, 2, "sample_ms", 20);
	pmcsh_argcheck(L, samples >= 1 && samples <= MAX_SAMPLES, 2, "samples: must be in 1..100000");
	double wms = opt_num(L, 2, 2, "warmup_ms", 0);
	pmcsh_argcheck(L, ms > 0 && ms <= MAX_SAMPLE_MS, 2, "sample_ms: must be in (0, 60000]");
	pmcsh_argcheck(L, wms >= 0 && wms <= 600000, 2, "warmup_ms: must be in [0, 600000] (0: the default)");

	int gtype = lua_getfield(L, 2, "group");   /* stack 3: the group or nil */
	struct kwindow kw = {0};
	struct pmc_window *w = NULL;
	if (gtype != LUA_TNIL) {
		w = lpmc_window_new(L, 3, (int)samples, NULL, 0, &kw);   /* stack 4 */
		if (!w)
			return 3;
	}
	double *ns = lua_newuserdatauv(L, (size_t)samples * sizeof *ns, 0);
	struct chase_result res;
	int err = chase_run(c, k, lc->pos[k], (int)samples, ms * 1e-3, wms * 1e-3, w ? &kw : NULL, ns, &res);
	if (err == -EINTR)
		return pmcsh_fail(L, "interrupted", EINTR);
	if (err)
		return pmcsh_fail(L, lua_pushfstring(L, "chase failed: %s", strerror(-err)), -err);

	lua_createtable(L, 0, 11);
	lua_createtable(L, res.samples_done, 0);
	for (int s = 0; s < res.samples_done; s++) {
		lua_pushnumber(L, ns[s]);
		lua_rawseti(L, -2, s + 1);
	}
	lua_setfield(L, -2, "samples");
	pmcsh_setint(L, "k", k);
	pmcsh_setint(L, "loads", (lua_Integer)(res.loads * (uint64_t)res.samples_done));
	pmcsh_setint(L, "loads_per_sample", (lua_Integer)res.loads);
	pmcsh_setnum(L, "warmup_ns", res.warmup_ns);
	pmcsh_setnum(L, "warmup_s", res.warmup_s);
	pmcsh_setint(L, "warmup_loads", (lua_Integer)res.warmup_loads);
	lua_createtable(L, k, 0);
	for (int j = 0; j < k; j++) {   /* where each chain stopped */
		lua_pushinteger(L, (lua_Integer)chase_elem(c, lc->pos[k][j]));
		lua_rawseti(L, -2, j + 1);
	}
	lua_setfield(L, -2, "ends");
	if (w) {
		lpmc_window_push(L, w, res.samples_done);
		lua_setfield(L, -3, "per_rep");
		lua_setfield(L, -2, "counts");
	}
	return 1;
}

/* c:plain(loads) -> ns per load of the plain reference loop (p = *p), going
 * on from where the previous c:plain stopped. */
static int c_plain(lua_State *L)
{
	LChain *lc = checkchain(L);
	lua_Integer loads = pmcsh_checkinteger(L, 2);
	pmcsh_argcheck(L, loads >= 1, 2, "loads must be positive");
	lua_pushnumber(L, chase_plain(&lc->c, (uint64_t)loads, &lc->cursor));
	return 1;
}

static const char *const loaded_keys[] = {"delays", "threads", "bw_size", "samples", "sample_ms", NULL};

/* c:loaded{delays={...}, threads=1, bw_size=, samples=5, sample_ms=20}
 * -> list of {delay=, mbps=, timed_s=, samples={ns per load...}, mbps_samples={...},
 * chaser_ran=, loaders_ran=}, or fail, message, errno (EINTR:
 * "interrupted").  threads=0: no loaders (the idle latency). */
static int c_loaded(lua_State *L)
{
	struct chase_chain *c = &checkchain(L)->c;
	pmcsh_checktype(L, 2, LUA_TTABLE);
	lua_settop(L, 2);
	pmcsh_checkkeys(L, 2, 2, loaded_keys);
	lua_Integer threads = pmcsh_optint(L, 2, 2, "threads", 1);
	lua_Integer bw = pmcsh_optint(L, 2, 2, "bw_size", 256 << 20);
	lua_Integer samples = pmcsh_optint(L, 2, 2, "samples", 5);
	double ms = opt_num(L, 2, 2, "sample_ms", 20);
	pmcsh_argcheck(L, threads >= 0 && threads <= 1024, 2, "threads: must be in 0..1024");
	pmcsh_argcheck(L, bw >= 4096, 2, "bw_size: must be at least 4096 bytes");
	double phys = (double)pages_physical(), need = (double)threads * (double)bw + (double)c->n * c->p.stride;
	pmcsh_argcheck(L, phys == 0 || need <= phys, 2,
		      lua_pushfstring(L, "bw_size: %I loader%s of %I bytes and the chain need %f MiB, more than this "
				      "machine's %f MiB of memory", threads, threads == 1 ? "" : "s", bw,
				      (lua_Number)floor(need / 1048576),
				      (lua_Number)floor(phys / 1048576)));
	pmcsh_argcheck(L, samples >= 1 && samples <= MAX_SAMPLES, 2, "samples: must be in 1..100000");
	pmcsh_argcheck(L, ms > 0 && ms <= MAX_SAMPLE_MS, 2, "sample_ms: must be in (0, 60000]");
	if (lua_getfield(L, 2, "delays") != LUA_TTABLE)
		pmcsh_argerror(L, 2, "delays: a list of injection delays expected");
	int nd = (int)luaL_len(L, 3);
	pmcsh_argcheck(L, nd >= 1 && nd <= 1000, 2, "delays: 1 to 1000 entries");
	/* rows, then the delays, then each row's ns and mbps_s, samples each */
	struct chase_loaded_row *rows = lua_newuserdatauv(L, nd * (sizeof(struct chase_loaded_row) + sizeof(long) +
								  2 * (size_t)samples * sizeof(double)), 0);
	long *delays = (long *)(rows + nd);
	for (int i = 0; i < nd; i++) {
		rows[i].ns = (double *)(delays + nd) + 2 * (size_t)i * samples;
		rows[i].mbps_s = rows[i].ns + samples;
	}
	for (int i = 0; i < nd; i++) {
		int isint;
		lua_rawgeti(L, 3, i + 1);
		lua_Integer d = lua_tointegerx(L, -1, &isint);
		if (!isint || d < 0 || d > CHASE_MAX_DELAY)
			pmcsh_argerror(L, 2, lua_pushfstring(L, "delays[%d]: an integer in 0..%I expected", i + 1,
							     (lua_Integer)CHASE_MAX_DELAY));
		delays[i] = (long)d;
		lua_pop(L, 1);
	}
	int done;
	int err = chase_loaded(c, delays, nd, (int)threads, (size_t)bw, (int)samples, ms * 1e-3, rows, &done);
	if (err == -EINTR)
		return pmcsh_fail(L, "interrupted", EINTR);
	if (err)
		return pmcsh_fail(L, lua_pushfstring(L, "loaded latency failed: %s", strerror(-err)), -err);
	lua_createtable(L, done, 0);
	for (int i = 0; i < done; i++) {
		lua_createtable(L, 0, 7);
		pmcsh_setint(L, "delay", rows[i].delay);
		pmcsh_setnum(L, "mbps", rows[i].mbps);
		pmcsh_setnum(L, "timed_s", rows[i].timed_s);
		pmcsh_setnum(L, "chaser_ran", rows[i].chaser_ran);
		pmcsh_setnum(L, "loaders_ran", rows[i].loaders_ran);
		lua_createtable(L, (int)samples, 0);
		for (int k = 0; k < samples; k++)
			lua_pushnumber(L, rows[i].ns[k]), lua_rawseti(L, -2, k + 1);
		lua_setfield(L, -2, "samples");
		lua_createtable(L, (int)samples, 0);
		for (int k = 0; k < samples; k++)
			lua_pushnumber(L, rows[i].mbps_s[k]), lua_rawseti(L, -2, k + 1);
		lua_setfield(L, -2, "mbps_samples");
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

/* The one close for c:close(), __gc and __close: idempotent. */
static int c_close(lua_State *L)
{
	LChain *lc = luaL_checkudata(L, 1, CHAIN_MT);
	chase_free(&lc->c);
	lc->cursor = NULL;
	memset(lc->pos, 0, sizeof lc->pos);
	pmcsh_extern_drop(lc->held);
	lc->held = 0;
	return 0;
}

static int c_tostring(lua_State *L)
{
	LChain *lc = luaL_checkudata(L, 1, CHAIN_MT);
	if (!lc->c.mem.map)
		lua_pushliteral(L, "chain (closed)");
	else
		lua_pushfstring(L, "chain (%s, %I bytes, stride %I, %s pages)", chase_orders[lc->c.p.order].name,
				(lua_Integer)(lc->c.n * lc->c.p.stride), (lua_Integer)lc->c.p.stride,
				pages_policies[lc->c.p.pages].name);
	return 1;
}

static const luaL_Reg funcs[] = {
	{"chain", l_chain},
	{"check", l_check},
	{"orders", l_orders},
	{"page_policies", l_pages},
	{NULL, NULL}
};

static const luaL_Reg methods[] = {
	{"info", c_info},
	{"next", c_next},
	{"word", c_word},
	{"heads", c_heads},
	{"run", c_run},
	{"plain", c_plain},
	{"loaded", c_loaded},
	{"close", c_close},
	{NULL, NULL}
};

static const luaL_Reg metamethods[] = {
	{"__index", NULL},
	{"__gc", c_close},
	{"__close", c_close},
	{"__tostring", c_tostring},
	{NULL, NULL}
};

int luaopen_pmcsh__chase(lua_State *L)
{
	luaL_newlib(L, funcs);
	pmcsh_newclass(L, CHAIN_MT, metamethods, methods);
	pmcsh_setmethods(L, "methods", CHAIN_MT);
	lua_pushinteger(L, CHASE_MAX_K);
	lua_setfield(L, -2, "max_k");
	lua_pushliteral(L, CHASE_MAX_K_WHY);
	lua_setfield(L, -2, "max_k_why");
	/* the engine's bounds, for the recipes' option declarations */
	lua_pushinteger(L, CHASE_MAX_DELAY);
	lua_setfield(L, -2, "max_delay");
	lua_pushinteger(L, MAX_SAMPLES);
	lua_setfield(L, -2, "max_samples");
	lua_pushinteger(L, MAX_SAMPLE_MS);
	lua_setfield(L, -2, "max_sample_ms");
	pmcsh_setnames(L, "chain_options", chain_keys);   /* the one list of chain{}'s options, for the facade */
	pmcsh_setnames(L, "run_options", run_keys);
	pmcsh_setnames(L, "loaded_options", loaded_keys);
	return 1;
}
