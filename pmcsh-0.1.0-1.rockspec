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
  license = "MIT",
}
dependencies = {"lua >= 5.4, < 5.5"}
external_dependencies = {PFM = {header = "perfmon/pfmlib.h", library = "pfm"}}
build = {
  type = "make",
  build_target = "all",
  -- the Makefile adds its own flags (-D_GNU_SOURCE, -std=gnu11) to these
  build_variables = {CFLAGS = "$(CFLAGS)"},
  install_target = "install",
  -- the marker library (for the user's programs, not a Lua module) and its
  -- pkg-config files go under marker/lib, out of the lib/ LuaRocks deploys
  install_variables = {PREFIX = "$(PREFIX)", LUA_LIBDIR = "$(LIBDIR)", LUA_SHAREDIR = "$(LUADIR)",
                       MARKER_LIBDIR = "$(PREFIX)/marker/lib"},
}
