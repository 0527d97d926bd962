-- make install produces a pmcsh that finds its library and recipes by itself.
local h = require("helpers")
local paths = require("pmcsh.paths")

describe("make install", function()
  it("gives a pmcsh that runs a recipe from outside the source tree", function()
    local dest = h.tmpdir()
    local exe = h.exe
    local cmd = string.format("make -s -o %s install BIN=%s DESTDIR=%s PREFIX=/opt/pmcsh >/dev/null 2>&1",
      h.shquote(exe), h.shquote(exe), h.shquote(dest))
    assert.is_true(os.execute(cmd))
    local bin = dest .. "/opt/pmcsh/bin/pmcsh"
    for _, f in ipairs({"share/pmcsh/lua/pmcsh/recipe.lua", "share/pmcsh/scripts/machine.lua",
                        "share/man/man1/pmcsh.1"}) do
      assert.is_truthy(io.open(dest .. "/opt/pmcsh/" .. f), f)
    end
    -- run from / with no variable pointing anywhere
    local p = io.popen("cd / && env -u PMCSH_HOME -u PMCSH_PATH HOME=/nonexistent " .. h.shquote(bin)
      .. " machine 2>&1; echo status=$?")
    local out = p:read("a"); p:close()
    assert.matches("PMUs%s+.*software", out)
    assert.matches("status=0", out)
    p = io.popen("cd / && HOME=/nonexistent " .. h.shquote(bin) .. " --help 2>&1")
    out = p:read("a"); p:close()
    assert.matches("machine%s+what this machine offers.-%[" .. (dest .. "/opt/pmcsh/share/pmcsh/scripts"):gsub("%p", "%%%0") .. "%]", out)
    os.execute("rm -rf " .. h.shquote(dest))
  end)

  it("installs pmcsh/loop.h and its pkg-config file: a loop with a descriptor builds against them alone", function()
    local dest = h.tmpdir()
    local cmd = string.format("make -s -o %s install BIN=%s DESTDIR=%s PREFIX=/opt/pmcsh >/dev/null 2>&1",
      h.shquote(h.exe), h.shquote(h.exe), h.shquote(dest))
    assert.is_true(os.execute(cmd))
    h.write(dest .. "/l.c", [[
#include <pmcsh/loop.h>
static double cp(double *restrict a, double *restrict b, double *restrict c, double s, size_t n)
{
	(void)b; (void)s;
	for (size_t j = 0; j < n; j++) c[j] = a[j];
	return 0;
}
PMCSH_LOOP(cp) = {.version = PMCSH_LOOP_VERSION, .name = "cp", .convention = PMCSH_STREAM, .stream = cp,
	.reads = PMCSH_A, .writes = PMCSH_C};
]])
    local pc = dest .. "/opt/pmcsh/lib/pkgconfig"
    local flags = io.popen(string.format("PKG_CONFIG_PATH=%s PKG_CONFIG_SYSROOT_DIR=%s pkg-config --cflags pmcsh-loop",
      h.shquote(pc), h.shquote(dest))):read("l")
    assert.are.equal("-I" .. dest .. "/opt/pmcsh/include", (flags:gsub("%s+$", "")))
    assert.is_true(os.execute(string.format("cc %s -shared -fPIC -o %s/l.so %s/l.c", flags, h.shquote(dest), h.shquote(dest))))
    local p = io.popen(h.shquote(dest .. "/opt/pmcsh/bin/pmcsh") .. " -e " .. h.shquote(
      'local i = assert(stream.loop("' .. dest .. '/l.so", "cp")):info(); print(i.name, i.bytes, i.described)'))
    local out = p:read("a"); p:close()
    assert.are.equal("cp\t16\ttrue\n", out)
    os.execute("rm -rf " .. h.shquote(dest))
  end)
  it("installs the marker library and pmcsh-marker.pc: a program built with pkg-config alone counts its region exactly", function()
    local dest = h.tmpdir()
    local cmd = string.format("make -s -o %s install BIN=%s PREFIX=%s >/dev/null 2>&1",
      h.shquote(h.exe), h.shquote(h.exe), h.shquote(dest))
    assert.is_true(os.execute(cmd))
    for _, f in ipairs({"include/pmcsh/marker.h", "include/pmcsh/likwid-marker.h", "include/pmcsh/likwid.h",
                        "lib/libpmcsh-marker.so",
                        "lib/libpmcsh-marker.so.0", "lib/libpmcsh-marker.a", "lib/pkgconfig/pmcsh-marker.pc",
                        "lib/pkgconfig/pmcsh-likwid.pc"}) do
      assert.is_truthy(io.open(dest .. "/" .. f), f)
    end
    h.write(dest .. "/app.c", [[
#include <pmcsh/marker.h>
#include <stdio.h>
#include <sys/mman.h>
int main(void)
{
	for (int c = 0; c < 3; c++) {
		char *p = mmap(NULL, 50 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		madvise(p, 50 * 4096, MADV_NOHUGEPAGE);
		pmcsh_region_begin("touch");
		for (int i = 0; i < 50; i++)
			((volatile char *)p)[i * 4096] = 1;
		pmcsh_region_end("touch");
	}
	puts("ok");
	return 0;
}
]])
    local pc = "PKG_CONFIG_PATH=" .. h.shquote(dest .. "/lib/pkgconfig")
    assert.is_true(os.execute(string.format("cc -O2 %s/app.c $(%s pkg-config --cflags --libs pmcsh-marker) -o %s/app",
      h.shquote(dest), pc, h.shquote(dest))))
    local p = io.popen(h.shquote(dest .. "/bin/pmcsh") .. " stat --regions -e page-faults:u -x , -- " ..
      h.shquote(dest .. "/app") .. " 2>&1")
    local out = p:read("a"); p:close()
    assert.matches("ok\n", out)
    assert.matches("\ntouch,all,3,0,150,150,,page%-faults:u,", out)
    -- LIKWID's macros with pmcsh-likwid.pc alone, PREFIX off the default path
    assert.is_true(os.execute(string.format("cc -O2 %s $(%s pkg-config --cflags --libs pmcsh-likwid) -o %s/lk",
      h.shquote(paths.root .. "/spec/fixtures/regions/likwid.c"), pc, h.shquote(dest))))
    p = io.popen(h.shquote(dest .. "/bin/pmcsh") .. " stat --regions -e page-faults:u -x , -- " ..
      h.shquote(dest .. "/lk") .. " 10 3 1 2>&1")
    out = p:read("a"); p:close()
    assert.matches("\ntouch,all,3,0,30,30,,page%-faults:u,", out)
    os.execute("rm -rf " .. h.shquote(dest))
  end)
  it("installs the engines for a plain lua5.4: require 'pmcsh.pmc' opens a group and reads it", function()
    if not h.need(h.have("lua5.4"), "no lua5.4 here") then return end
    local dest = h.tmpdir()
    local cmd = string.format("make -s -o %s install BIN=%s PREFIX=%s >/dev/null 2>&1",
      h.shquote(h.exe), h.shquote(h.exe), h.shquote(dest))
    assert.is_true(os.execute(cmd))
    local env = string.format("cd / && LUA_PATH=%s LUA_CPATH=%s lua5.4 -e ", h.shquote(dest .. "/share/lua/5.4/?.lua;;"),
      h.shquote(dest .. "/lib/lua/5.4/?.so;;"))
    -- 64 pages first-touched between start and stop: the faults physics gives
    local p = io.popen(env .. h.shquote([[
local pmc = require "pmcsh.pmc"
local g = assert(pmc.group{"page-faults:u"})
local buf = require("pmcsh.stream").new{n = 64 * 512, quiet = true, touch = false}
g:start(); assert(buf:run("copy", {reps = 1})); g:stop()
local events = require "pmcsh.events"
print(g:read()[1].value, events.load("software") ~= nil, package.searchpath("pmcsh.pmc", package.path))]]) .. " 2>&1")
    local out = p:read("a"); p:close()
    local faults, loaded, where = out:match("^(%d+)\t(%a+)\t(%S+)\n$")
    assert.is_truthy(faults, out)
    assert.is_true(tonumber(faults) >= 64, out)   -- c's 64 pages at least (a's reads map the zero page)
    assert.are.equal("true", loaded)             -- events/ found from the installed tree
    assert.are.equal(dest .. "/share/lua/5.4/pmcsh/pmc.lua", where)
    os.execute("rm -rf " .. h.shquote(dest))
  end)
end)
