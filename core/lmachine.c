/* pmcsh._machine: the machine facts of core/machine.c as plain tables.
 * Every function takes an optional root last (a fake sysfs/procfs tree;
 * nil: the real one).  The face is lua/pmcsh/machine.lua. */
#include <errno.h>
#include <limits.h>
#include "lpmcsh.h"
#include "machine.h"
#include "sysfs.h"
#include "counter.h"
#include "../kernels/stream.h"
#include <stdio.h>

#define MAX_CPUS 4096
#define MAX_LIST_CPU 65535   /* the largest cpu number a list may name */

static const char *optroot(lua_State *L, int arg) { return pmcsh_optstring(L, arg, NULL); }

/* caches([cpu=0[, root]]) -> {{level=, type=, size=, line=, shared_cpu_list=}...}, source */
static int l_caches(lua_State *L)
{
	struct machine_cache c[MACHINE_MAX_CACHES];
	const char *source;
	lua_Integer cpu = pmcsh_optinteger(L, 1, 0);
	pmcsh_argcheck(L, cpu >= 0 && cpu < MAX_CPUS, 1, "cpu: a cpu number expected");
	int n = machine_caches(optroot(L, 2), (int)cpu, c, MACHINE_MAX_CACHES, &source);
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lua_createtable(L, 0, 6);
		pmcsh_setint(L, "level", c[i].level);
		pmcsh_setstr(L, "type", c[i].type);
		if (c[i].size)
			pmcsh_setint(L, "size", (lua_Integer)c[i].size);
		if (c[i].line)
			pmcsh_setint(L, "line", c[i].line);
		if (c[i].shared[0])
			pmcsh_setstr(L, "shared_cpu_list", c[i].shared);
		pmcsh_setstr(L, "source", source);
		lua_rawseti(L, -2, i + 1);
	}
	lua_pushstring(L, source);
	return 2;
}

/* llc([root]) -> bytes (0 unknown), count */
static int l_llc(lua_State *L)
{
	int n;
	size_t b = machine_llc_bytes(optroot(L, 1), &n);
	lua_pushinteger(L, (lua_Integer)b);
	lua_pushinteger(L, n);
	return 2;
}

/* cpus() -> the cpus this process may run on, or fail, message, errno */
static int l_cpus(lua_State *L)
{
	static int cpus[MAX_CPUS];
	int n = machine_allowed_cpus(cpus, MAX_CPUS);
	if (n < 0)
		return pmcsh_fail(L, "sched_getaffinity failed", -n);
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++)
		lua_pushinteger(L, cpus[i]), lua_rawseti(L, -2, i + 1);
	return 1;
}

/* online([root]) -> "0-3,8", or fail, message, errno */
static int l_online(lua_State *L)
{
	char buf[4096];
	int rc = machine_online(optroot(L, 1), buf, sizeof buf);
	if (rc < 0)
		return pmcsh_fail(L, "cannot read the online cpu list (sysfs)", -rc);
	lua_pushstring(L, buf);
	return 1;
}

/* place(cpu[, root]) -> {cpu=, socket=, die=, core=, node=} */
static int l_place(lua_State *L)
{
	struct machine_place p;
	lua_Integer cpu = pmcsh_checkinteger(L, 1);
	pmcsh_argcheck(L, cpu >= 0 && cpu < MAX_CPUS, 1, "cpu: a cpu number expected");
	machine_place(optroot(L, 2), (int)cpu, &p);
	lua_createtable(L, 0, 5);
	pmcsh_setint(L, "cpu", cpu);
	pmcsh_setint(L, "socket", p.socket);
	pmcsh_setint(L, "die", p.die);
	pmcsh_setint(L, "core", p.core);
	pmcsh_setint(L, "node", p.node);
	return 1;
}

/* hugepages([root]) -> {{size=bytes, nr=, free=}...}, size ascending */
static int l_hugepages(lua_State *L)
{
	struct machine_hugepages h[16];
	int n = machine_hugepages(optroot(L, 1), h, 16);
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lua_createtable(L, 0, 3);
		pmcsh_setint(L, "size", (lua_Integer)h[i].kb * 1024);
		pmcsh_setint(L, "nr", h[i].nr);
		pmcsh_setint(L, "free", h[i].free);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

/* thp([root]) -> "always [madvise] never", or nil when the kernel has none */
static int l_thp(lua_State *L)
{
	char buf[256];
	if (machine_thp(optroot(L, 1), buf, sizeof buf) < 0)
		return 0;
	lua_pushstring(L, buf);
	return 1;
}

/* mem_available([root]) -> bytes, or nil when unknown */
static int l_mem_available(lua_State *L)
{
	long kb = machine_mem_available_kb(optroot(L, 1));
	if (kb < 0)
		return 0;
	lua_pushinteger(L, (lua_Integer)kb * 1024);
	return 1;
}

static int l_clock_tick(lua_State *L)
{
	lua_pushnumber(L, machine_clock_tick());
	return 1;
}

static int l_tsc(lua_State *L)
{
	lua_pushboolean(L, machine_tsc_usable(optroot(L, 1)));
	return 1;
}

/* machine.tsc_hz([ms]) -> Hz, or nil where no usable TSC answers. */
static int l_tsc_hz(lua_State *L)
{
	lua_Integer ms = pmcsh_optinteger(L, 1, 50);
	double hz;
	pmcsh_argcheck(L, ms >= 1 && ms <= 10000, 1, "ms: between 1 and 10000");
	machine_tsc_hz((int)ms, &hz);
	if (hz > 0)
		lua_pushnumber(L, hz);
	else
		lua_pushnil(L);
	return 1;
}

static int l_model(lua_State *L)
{
	char buf[256];
	machine_model(optroot(L, 1), buf, sizeof buf);
	lua_pushstring(L, buf);
	return 1;
}

/* hypervisor([root]) -> "KVMKVMKVM", "" on bare metal, or nil when nothing tells */
static int l_hypervisor(lua_State *L)
{
	char buf[64];
	if (machine_hypervisor(optroot(L, 1), buf, sizeof buf) < 0)
		return 0;
	lua_pushstring(L, buf);
	return 1;
}

/* arch() -> "x86_64" (uname), or fail, message, errno */
static int l_arch(lua_State *L)
{
	char buf[64];
	int rc = machine_arch(buf, sizeof buf);
	if (rc < 0)
		return pmcsh_fail(L, "uname failed", -rc);
	lua_pushstring(L, buf);
	return 1;
}

/* parse_list(s[, kind]) -> a list of numbers, or nil, why, EINVAL.  kind
 * nil: a list as sysfs writes it ("0-3,8\n", spaces around items), the
 * cpus sorted, each once; "cpus": one a user typed (-C: decimal N and N-M
 * only), sorted, each once; "ids": process or thread ids a user typed
 * (-p, -t: decimal numbers from 1), in the order given (pmc_parse_list). */
#define MAX_LIST_ID INT_MAX  /* a pid_t: one above pid_max is no process, the environment's answer */
static int l_parse_list(lua_State *L)
{
	size_t len;
	pmcsh_checktype(L, 1, LUA_TSTRING);
	const char *s = lua_tolstring(L, 1, &len);
	static const char *const kinds[] = {"sysfs", "cpus", "ids", NULL};
	int kind = pmcsh_checkoption(L, 2, "sysfs", kinds);
	struct pmc_list_rules ru = {.min = kind == 2, .max = kind == 2 ? MAX_LIST_ID : MAX_LIST_CPU, .words = kind > 0,
				    .single = kind == 2};
	int cap = 1;
	for (size_t k = 0; k < len; k++)
		cap += s[k] == ',';
	struct pmc_range *r = lua_newuserdatauv(L, (size_t)cap * sizeof *r, 0);
	char why[PMC_ERR_MAX];
	int n = pmc_parse_list(s, len, &ru, r, cap, why, sizeof why);
	if (n < 0) {
		if (kind == 0) {
			char q[PMC_ERR_MAX + 96];
			snprintf(q, sizeof q, "bad cpu list (%s; give N or N-M, comma-separated, cpus 0 to %d)", why,
				 MAX_LIST_CPU);
			return pmcsh_fail(L, q, -n);
		}
		return pmcsh_fail(L, why, -n);
	}
	lua_newtable(L);
	if (kind == 2) {
		for (int k = 0; k < n; k++) {
			lua_pushinteger(L, r[k].lo);
			lua_rawseti(L, -2, k + 1);
		}
		return 1;
	}
	unsigned char seen[MAX_LIST_CPU / 8 + 1] = {0};
	int top = 0;
	for (int k = 0; k < n; k++) {
		for (int c = r[k].lo; c <= r[k].hi; c++)
			seen[c / 8] |= (unsigned char)(1u << (c % 8));
		if (r[k].hi > top)
			top = r[k].hi;
	}
	lua_Integer i = 0;
	for (int c = 0; c <= top; c++)
		if (seen[c / 8] & (1u << (c % 8))) {
			lua_pushinteger(L, c);
			lua_rawseti(L, -2, ++i);
		}
	return 1;
}

/* cpu_pmu() -> whether the kernel exposes a hardware (cpu) PMU (sysfs.c) */
static int l_cpu_pmu(lua_State *L)
{
	lua_pushboolean(L, pmc_have_cpu_pmu());
	return 1;
}

/* loops_isa() -> the variant of the STREAM loops this cpu runs best
 * (kernels/stream_kernels.c): the fingerprint's isa. */
static int l_loops_isa(lua_State *L)
{
	lua_pushstring(L, stream_variant_best()->name);
	return 1;
}

static const luaL_Reg funcs[] = {
	{"parse_list", l_parse_list},
	{"caches", l_caches},
	{"llc", l_llc},
	{"cpus", l_cpus},
	{"online", l_online},
	{"place", l_place},
	{"hugepages", l_hugepages},
	{"thp", l_thp},
	{"mem_available", l_mem_available},
	{"clock_tick", l_clock_tick},
	{"tsc", l_tsc},
	{"tsc_hz", l_tsc_hz},
	{"model", l_model},
	{"hypervisor", l_hypervisor},
	{"arch", l_arch},
	{"cpu_pmu", l_cpu_pmu},
	{"loops_isa", l_loops_isa},
	{NULL, NULL}
};

int luaopen_pmcsh__machine(lua_State *L)
{
	luaL_newlib(L, funcs);
	pmcsh_setstr(L, "sysfs_pmus", SYSFS_PMUS);   /* the kernel's PMUs' folder */
	return 1;
}
