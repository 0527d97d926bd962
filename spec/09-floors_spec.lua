-- The Lua side's floors, read from luac's listing of every file: pmcsh's
-- own modules are required at the top of a chunk (not inside a function,
-- not under pcall: none of them is optional), and the require graph has
-- no cycle.
local h = require("helpers")
local requires = require("requires")

describe("the Lua floors", function()
  local root = require("pmcsh.paths").lua:gsub("/lua$", "")
  local r = requires.check(root)

  it("require pmcsh's modules at the top of each file, never under pcall", function()
    local lua_only = {}
    for _, p in ipairs(r.problems) do
      if p:match("^lua/") then lua_only[#lua_only + 1] = p end
    end
    assert.are.same({}, lua_only)
  end)

  it("have no cycle in the require graph", function()
    local shown = {}
    for i, c in ipairs(r.cycles) do shown[i] = table.concat(c, " -> ") end
    assert.are.same({}, shown)
  end)

  it("see what they must: a function's require, a pcall'd one and a cycle, in files made to have them", function()
    local dir = h.tmpdir()
    os.execute("mkdir -p " .. h.shquote(dir .. "/lua/pmcsh") .. " " .. h.shquote(dir .. "/scripts"))
    h.write(dir .. "/lua/pmcsh/a.lua", 'local b = require("pmcsh.b")\nreturn {}\n')
    h.write(dir .. "/lua/pmcsh/b.lua", 'local function f() return require("pmcsh.a") end\n' ..
      'local ok = pcall(require, "pmcsh.c")\nlocal cj = pcall(require, "cjson")\n' ..
      'local x = pcall(require("pmcsh.c").f, 1)\nreturn {f = f}\n')
    h.write(dir .. "/lua/pmcsh/c.lua", 'return {f = function() end}\n')
    local got = requires.check(dir)
    os.execute("rm -rf " .. h.shquote(dir))
    assert.are.same({
      'lua/pmcsh/b.lua:1: require("pmcsh.a") inside a function: require at the top',
      'lua/pmcsh/b.lua:2: pcall(require, "pmcsh.c"): pmcsh\'s own modules are not optional',
    }, got.problems)
    assert.are.same({{"pmcsh.a", "pmcsh.b", "pmcsh.a"}}, got.cycles)
  end)
end)
