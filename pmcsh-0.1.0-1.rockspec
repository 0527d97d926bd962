-- LuaRocks: pmcsh's engines as Lua 5.4 modules (pmcsh.pmc, pmcsh.stream,
-- pmcsh.chase, ...), with the pmcsh binary, its recipes and events/.
-- Needs Debian's libpfm4-dev (or libpfm4 built from source) and Linux.
package = "pmcsh"
version = "0.1.0-1"
source = {url = "git+file://."}
description = {
  summary = "perf_event counters, STREAM and pointer-chase engines for Lua",
  detailed = "Counter groups through perf_event_open and libpfm4, the STREAM kernels, " ..
    "lmbench/multichase-style latency and parallelism engines, as Lua modules.",
}
dependencies = {"lua >= 5.4, < 5.5"}
external_dependencies = {PFM = {header = "perfmon/pfmlib.h", library = "pfm"}}
build = {
  type = "make",
  build_target = "all",
  build_variables = {CFLAGS = "$(CFLAGS)"},
  install_target = "install",
  install_variables = {PREFIX = "$(PREFIX)", LUA_LIBDIR = "$(LIBDIR)", LUA_SHAREDIR = "$(LUADIR)"},
}
