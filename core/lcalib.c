/* pmcsh._calib: probes whose measured work is C inside one call (calib.c,
 * kernels/probe.c), and the cost of an empty window, on groups of lpmc.c
 * (lgroup.h). */
#include "lgroup.h"
#include "lreading.h"
#include "calib.h"
#include "../kernels/probe.h"
#include <errno.h>

/* _calib.probe(g, kind, arg[, path]) -> reading, wall_ns, thread_cpu_ns.  kind: "touch" (first touch
 * of `arg` bytes of a fresh anonymous mapping), "read" (read() `arg` bytes of
 * file `path` (default /dev/zero) into a fresh, untouched mapping: faults
 * taken in the kernel),
 * "spin" (busy loop for `arg` ns), "sleep" (nanosleep `arg` ns), "empty",
 * "loop", "syscalls" (kernels/probe.h). */
static int l_probe(lua_State *L)
{
	struct lgroup *lg = lpmc_checkidle(L, 1);
	int kind = pmcsh_checkoption(L, 2, NULL, probe_kinds);
	lua_Integer arg = pmcsh_optinteger(L, 3, 0);
	pmcsh_argcheck(L, arg >= 0, 3, "must be >= 0");
	const char *path = pmcsh_optstring(L, 4, "/dev/zero");
	char msg[PMC_ERR_MAX];
	double wall, cpu;
	int r = pmc_probe(&lg->g, kind, (uint64_t)arg, path, &wall, &cpu, msg, sizeof msg);
	if (r)
		return pmcsh_fail(L, msg, -r);
	int got = lpmc_read_push(L, lg, 0);
	if (got != 1)
		return got;
	lua_pushnumber(L, wall);
	lua_pushnumber(L, cpu);
	return 3;
}

/* _calib.windows(g, n) -> ns per empty window from C (enable, disable,
 * read()), the yardstick for the same window driven from Lua. */
static int l_windows(lua_State *L)
{
	struct pmc_group *g = &lpmc_checkidle(L, 1)->g;
	lua_Integer n = pmcsh_checkinteger(L, 2);
	pmcsh_argcheck(L, n >= 1, 2, "at least 1 window");
	double ns;
	if (pmc_windows_ns(g, (long)n, &ns))
		return pmcsh_fail(L, "interrupted", EINTR);
	lua_pushnumber(L, ns);
	return 1;
}

/* _calib.overhead(g, n) -> {window_ns=, enable_disable_ns=, read_ns=,
 * rdpmc = {available=, reason=|read_ns=}, counted = reading of one empty
 * window averaged} */
static int l_overhead(lua_State *L)
{
	struct lgroup *lg = lpmc_checkidle(L, 1);
	lua_Integer n = pmcsh_optinteger(L, 2, 10000);
	pmcsh_argcheck(L, n >= 10, 2, "at least 10 iterations");
	struct pmc_overhead o;
	if (pmc_overhead(&lg->g, (long)n, &o))
		return pmcsh_fail(L, "interrupted", EINTR);
	lua_createtable(L, 0, 6);
	pmcsh_setnum(L, "window_ns", o.window_ns);
	pmcsh_setnum(L, "enable_disable_ns", o.enable_disable_ns);
	pmcsh_setnum(L, "read_ns", o.read_ns);
	pmcsh_setint(L, "iterations", n);
	lua_createtable(L, 0, 3);
	pmcsh_setbool(L, "available", o.mapped);
	if (o.mapped) {
		pmcsh_setnum(L, "read_ns", o.rdpmc_read_ns);
		pmcsh_setint(L, "fast_reads", (lua_Integer)o.fast_reads);
		pmcsh_setint(L, "fallbacks", (lua_Integer)o.fallbacks);
	} else {
		pmcsh_setstr(L, "reason", lg->rdpmc_why);
	}
	lua_setfield(L, -2, "rdpmc");
	if (o.counted) {
		lreading_push(L, &lg->g, o.c, 0);
		lua_setfield(L, -2, "counted_per_window");
	}
	return 1;
}

static const luaL_Reg funcs[] = {
	{"probe", l_probe},
	{"windows", l_windows},
	{"overhead", l_overhead},
	{NULL, NULL}
};

int luaopen_pmcsh__calib(lua_State *L)
{
	luaL_newlib(L, funcs);
	pmcsh_setint(L, "probe_loop_insns", PROBE_LOOP_INSNS);
	return 1;
}
