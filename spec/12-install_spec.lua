-- make install produces a pmcsh that finds its library and recipes by itself.
local h = require("helpers")

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
end)
