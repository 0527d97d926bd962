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
end)
