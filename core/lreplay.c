/* pmcsh._replay: pure functions, for specs and the facade: the scaling of
 * a multiplexed count, recorded snapshots through g:read()'s delta code,
 * and the rdpmc arithmetic on recorded mmap pages. */
#include "lgroup.h"
#include "lreading.h"
#include <errno.h>
#include <string.h>

/* _replay.scale(raw, enabled, running[, scale]) -> value, multiplexed | nil, msg, EBUSY */
static int l_scale(lua_State *L)
{
	lua_Integer raw = luaL_checkinteger(L, 1), en = luaL_checkinteger(L, 2), run = luaL_checkinteger(L, 3);
	double scale = luaL_optnumber(L, 4, 1.0);
	luaL_argcheck(L, raw >= 0, 1, "must be >= 0");
	luaL_argcheck(L, en >= 0, 2, "must be >= 0");
	luaL_argcheck(L, run >= 0 && run <= en, 3, "must be between 0 and enabled");
	double v;
	int mux;
	if (pmc_scale((uint64_t)raw, (uint64_t)en, (uint64_t)run, scale, &v, &mux))
		return pmcsh_fail(L, "group cannot be scheduled: enabled but never running", EBUSY);
	lua_pushnumber(L, v);
	lua_pushboolean(L, mux);
	return 2;
}

static uint64_t field_u64(lua_State *L, int t, const char *k)
{
	lua_getfield(L, t, k);
	lua_Integer v = luaL_optinteger(L, -1, 0);
	lua_pop(L, 1);
	return (uint64_t)v;
}

static int field_bool(lua_State *L, int t, const char *k)
{
	lua_getfield(L, t, k);
	int v = lua_toboolean(L, -1);
	lua_pop(L, 1);
	return v;
}

/* Reads snapshot `name` ({enabled=, running=, raw={...}}) of the table at
 * t into an instance's base or cur fields. */
static void replay_snap(lua_State *L, int t, const char *name, int n, struct pmc_inst *in)
{
	int cur = name[0] == 'c';
	lua_getfield(L, t, name);
	int st = lua_gettop(L);
	luaL_argexpected(L, lua_istable(L, st), 1, "base and cur snapshots");
	uint64_t *rawp = cur ? in->cur_raw : in->base_raw;
	*(cur ? &in->cur_en : &in->base_en) = field_u64(L, st, "enabled");
	*(cur ? &in->cur_run : &in->base_run) = field_u64(L, st, "running");
	lua_getfield(L, st, "raw");
	for (int i = 0; i < n; i++) {
		lua_geti(L, -1, i + 1);
		rawp[i] = (uint64_t)luaL_optinteger(L, -1, 0);
		lua_pop(L, 1);
	}
	lua_pop(L, 2);
}

/* _replay.replay{events=, base={enabled=,running=,raw={}}, cur={...}} or
 * _replay.replay{events=, instances={{cpu=, socket=, base=, cur=}...}} ->
 * reading | nil, msg, errno: recorded snapshots through the same delta and
 * reading code as g:read() (one perf group; with instances, counted
 * cpu-wide on those cpus, so the reading has cpus and sockets). */
static int l_replay(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_getfield(L, 1, "events");
	int evidx = lua_gettop(L);
	int n = lpmc_list_len(L, evidx, "events");
	int has_inst = lua_getfield(L, 1, "instances") != LUA_TNIL;
	int iidx = lua_gettop(L);
	int ninst = 1;
	if (has_inst) {
		luaL_argexpected(L, lua_istable(L, iidx), 1, "instances as a list of {cpu=, socket=, base=, cur=}");
		ninst = (int)luaL_len(L, iidx);
		luaL_argcheck(L, ninst >= 1 && ninst <= PMC_MAX_CPUS, 1, "instances: 1 to 256 of them");
	}
	/* owned by the Lua stack: an argument error cannot leak it */
	struct pmc_inst *in = lua_newuserdatauv(L, sizeof *in * (size_t)ninst, 0);
	memset(in, 0, sizeof *in * (size_t)ninst);
	for (int k = 0; k < ninst; k++) {
		if (has_inst) {
			lua_geti(L, iidx, k + 1);
			int t = lua_gettop(L);
			luaL_argexpected(L, lua_istable(L, t), 1, "instances as a list of {cpu=, socket=, base=, cur=}");
			in[k].pid = -1;
			in[k].cpu = (int)field_u64(L, t, "cpu");
			in[k].socket = (int)field_u64(L, t, "socket");
			replay_snap(L, t, "base", n, &in[k]);
			replay_snap(L, t, "cur", n, &in[k]);
			lua_pop(L, 1);
		} else {
			in[k].cpu = in[k].socket = -1;
			replay_snap(L, 1, "base", n, &in[k]);
			replay_snap(L, 1, "cur", n, &in[k]);
		}
	}
	struct lgroup *lg = lpmc_newgroup(L, n);
	char msg[PMC_ERR_MAX];
	int r = lpmc_resolve_list(L, evidx, lg->ev, n, msg);
	if (r)
		return pmcsh_fail(L, msg, -r);
	lg->g.nsub = 1;
	lg->sub[0].n = n;
	for (int i = 0; i < n; i++)
		lg->sub[0].ev[i] = i;
	lg->sub[0].ninst = ninst;
	lg->sub[0].inst = in;
	struct pmc_count c[PMC_MAX_EVENTS];
	int bad;
	r = pmc_group_delta(&lg->g, c, &bad);
	if (r) {
		lg->sub[0].inst = NULL;
		lpmc_unsched_msg(&lg->ev[bad], msg, sizeof msg);
		return pmcsh_fail(L, msg, EBUSY);
	}
	lreading_push(L, &lg->g, c, 1);
	lg->sub[0].inst = NULL;  /* the instances belong to their userdata */
	lg->sub[0].ninst = 0;
	return 1;
}

/* ---- the rdpmc arithmetic, for specs on recorded pages ------------------ */

/* _replay.mmap_time(cyc, shift, mult, offset) -> ns */
static int l_mmap_time(lua_State *L)
{
	lua_Integer cyc = luaL_checkinteger(L, 1), shift = luaL_checkinteger(L, 2);
	lua_Integer mult = luaL_checkinteger(L, 3), off = luaL_optinteger(L, 4, 0);
	luaL_argcheck(L, shift >= 0 && shift < 64, 2, "time_shift is 0..63");
	luaL_argcheck(L, mult >= 0 && mult <= 0xffffffff, 3, "time_mult is a u32");
	lua_pushinteger(L, (lua_Integer)pmc_mmap_time_delta((uint64_t)cyc, (uint16_t)shift, (uint32_t)mult,
							   (uint64_t)off));
	return 1;
}

/* _replay.sign_extend(value, width) -> integer */
static int l_sign_extend(lua_State *L)
{
	lua_Integer v = luaL_checkinteger(L, 1), w = luaL_checkinteger(L, 2);
	luaL_argcheck(L, w >= 1 && w <= 64, 2, "width is 1..64");
	lua_pushinteger(L, (lua_Integer)pmc_sign_extend((uint64_t)v, (unsigned)w));
	return 1;
}

/* A recorded page and what the instructions returned: rdpmc gives pmc
 * (for any counter; the requested counter is kept), rdtsc gives tsc; the
 * first `bump` rdpmc calls change the lock, as a kernel update would. */
struct replay_ctx {
	struct perf_event_mmap_page *pc;
	uint64_t pmc, tsc;
	int bump;
	int64_t counter;
};

static uint64_t replay_rdpmc(void *ctx, uint32_t counter)
{
	struct replay_ctx *r = ctx;
	r->counter = counter;
	if (r->bump > 0) {
		r->bump--;
		r->pc->lock += 2;
	}
	return r->pmc;
}

static uint64_t replay_rdtsc(void *ctx)
{
	return ((struct replay_ctx *)ctx)->tsc;
}

/* _replay.mmap_replay{lock=, index=, offset=, time_enabled=, time_running=,
 * cap_user_rdpmc=, cap_user_time=, cap_user_time_short=, pmc_width=,
 * time_shift=, time_mult=, time_offset=, time_cycles=, time_mask=, pmc=,
 * tsc=, bump=} -> {count=, enabled=, running=, retries=, counter=} |
 * nil, msg, EAGAIN: the read protocol of g:read() on a recorded page. */
static int l_mmap_replay(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	struct perf_event_mmap_page *pc = lua_newuserdatauv(L, sizeof *pc, 0);
	memset(pc, 0, sizeof *pc);
	pc->lock = (uint32_t)field_u64(L, 1, "lock");
	pc->index = (uint32_t)field_u64(L, 1, "index");
	pc->offset = (int64_t)field_u64(L, 1, "offset");
	pc->time_enabled = field_u64(L, 1, "time_enabled");
	pc->time_running = field_u64(L, 1, "time_running");
	pc->cap_user_rdpmc = field_bool(L, 1, "cap_user_rdpmc");
	pc->cap_user_time = field_bool(L, 1, "cap_user_time");
	pc->cap_user_time_short = field_bool(L, 1, "cap_user_time_short");
	pc->pmc_width = (uint16_t)field_u64(L, 1, "pmc_width");
	pc->time_shift = (uint16_t)field_u64(L, 1, "time_shift");
	pc->time_mult = (uint32_t)field_u64(L, 1, "time_mult");
	pc->time_offset = field_u64(L, 1, "time_offset");
	pc->time_cycles = field_u64(L, 1, "time_cycles");
	pc->time_mask = field_u64(L, 1, "time_mask");
	struct replay_ctx rc = {pc, field_u64(L, 1, "pmc"), field_u64(L, 1, "tsc"), (int)field_u64(L, 1, "bump"), -1};
	struct pmc_mmap_ops ops = {replay_rdpmc, replay_rdtsc, &rc};
	struct pmc_mmap_value v;
	if (pmc_mmap_read_ops(pc, &ops, &v))
		return pmcsh_fail(L, "off the PMU (index 0, or no user rdpmc/time): read() instead", EAGAIN);
	lua_createtable(L, 0, 5);
	pmcsh_setint(L, "count", (lua_Integer)v.count);
	pmcsh_setint(L, "enabled", (lua_Integer)v.enabled);
	pmcsh_setint(L, "running", (lua_Integer)v.running);
	pmcsh_setint(L, "retries", v.retries);
	pmcsh_setint(L, "counter", rc.counter);
	return 1;
}

static const luaL_Reg funcs[] = {
	{"scale", l_scale},
	{"replay", l_replay},
	{"mmap_time", l_mmap_time},
	{"sign_extend", l_sign_extend},
	{"mmap_replay", l_mmap_replay},
	{NULL, NULL}
};

int luaopen_pmcsh__replay(lua_State *L)
{
	luaL_newlib(L, funcs);
	return 1;
}
