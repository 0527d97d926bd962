-- The Lua side's floors, read from luac's listing of every file of lua/
-- and scripts/: pmcsh's own modules are required at the top of a chunk
-- (not inside a function, not under pcall: none of them is optional; and
-- require is only ever called on a literal name, never aliased or passed
-- on, which would hide what it loads), a
-- recipe reaches no C module (pmcsh._sys: lua/pmcsh is its floor), no
-- file touches a global Lua does not define (a dropped require reads nil
-- only when that line runs), the require graph has no cycle, and no
-- module requires one placed above it in README.md's table of Lua floors.
local h = require("helpers")
local requires = require("requires")

describe("the Lua floors", function()
  local root = require("pmcsh.paths").lua:gsub("/lua$", "")
  local r = requires.check(root)

  it("require pmcsh's modules at the top of each file, never under pcall, recipes only lua/pmcsh's, no stray global", function()
    assert.are.same({}, r.problems)
  end)

  it("read the recipes too", function()
    local scripts = 0
    for name in pairs(r.edges) do
      if name:match("^scripts/") then scripts = scripts + 1 end
    end
    assert.is_true(scripts >= 10, scripts .. " recipes read")
    assert.is_true(r.edges["scripts/survey.lua"]["pmcsh.survey"])
  end)

  it("have no cycle in the require graph", function()
    local shown = {}
    for i, c in ipairs(r.cycles) do shown[i] = table.concat(c, " -> ") end
    assert.are.same({}, shown)
  end)

  it("climb no floor of README.md's table of Lua floors, which places every module", function()
    local rank = requires.floors(root .. "/README.md")
    assert.is_true(rank["pmcsh.help"] ~= nil and rank["pmcsh.survey.plan"] ~= nil and rank["pmcsh.names"] ~= nil,
      "README.md's table of Lua floors read")
    assert.are.same({}, requires.climbs(r.edges, rank))
    -- and a climb is seen: the table read with two of its modules swapped
    local swapped = {}
    for k, v in pairs(rank) do swapped[k] = v end
    swapped["pmcsh.help"], swapped["pmcsh.names"] = rank["pmcsh.names"], rank["pmcsh.help"]
    assert.is_true(#requires.climbs(r.edges, swapped) > 0)
  end)

  it("see what they must, in files made to have them: a function's require, a pcall'd one, an aliased or passed-on one, a recipe's C module, a cycle", function()
    local dir = h.tmpdir()
    os.execute("mkdir -p " .. h.shquote(dir .. "/lua/pmcsh") .. " " .. h.shquote(dir .. "/scripts"))
    h.write(dir .. "/lua/pmcsh/a.lua", 'local b = require("pmcsh.b")\nreturn {}\n')
    h.write(dir .. "/lua/pmcsh/b.lua", 'local function f() return require("pmcsh.a") end\n' ..
      'local ok = pcall(require, "pmcsh.c")\nlocal cj = pcall(require, "cjson")\n' ..
      'local x = pcall(require("pmcsh.c").f, 1)\nreturn {f = f}\n')
    h.write(dir .. "/lua/pmcsh/c.lua", 'return {f = function() end}\n')
    h.write(dir .. "/scripts/r.lua", 'local c = require("pmcsh.c")\nlocal s = require("pmcsh._sys")\n' ..
      'return {run = function() local a = require("pmcsh.a"); local cj = require("cjson") end,\n' ..
      '  n = function() return stream_engine.disasm("copy"), string.format("%d", 1) end}\n')
    h.write(dir .. "/lua/pmcsh/d.lua", 'local M = {}\nfunction M.f() errors.argument("f", 1, "x") end\nresult = 1\nreturn M\n')
    -- require that escapes the literal call: an alias called in a function,
    -- xpcall, a name in a variable, _G.require in a function
    h.write(dir .. "/lua/pmcsh/e.lua", 'local r = require\nlocal M = {}\nfunction M.f() return r("pmcsh.a") end\n' ..
      'local ok = xpcall(require, print, "pmcsh.c")\nlocal n = "pmcsh.c"\nlocal ok2 = pcall(require, n)\n' ..
      'function M.g() return _G.require"pmcsh.c" end\nreturn M\n')
    local got = requires.check(dir)
    os.execute("rm -rf " .. h.shquote(dir))
    assert.are.same({
      'lua/pmcsh/b.lua:1: require("pmcsh.a") inside a function: require at the top',
      'lua/pmcsh/b.lua:2: pcall(require, "pmcsh.c"): pmcsh\'s own modules are not optional',
      'lua/pmcsh/d.lua:2: reads global \'errors\'',
      'lua/pmcsh/d.lua:3: writes global \'result\'',
      'lua/pmcsh/e.lua:1: require passed on or aliased: call require("name") itself, at the top',
      'lua/pmcsh/e.lua:4: require passed on or aliased: call require("name") itself, at the top',
      'lua/pmcsh/e.lua:6: require passed on or aliased: call require("name") itself, at the top',
      'lua/pmcsh/e.lua:7: require("pmcsh.c") inside a function: require at the top',
      'scripts/r.lua:2: require("pmcsh._sys"): a recipe uses lua/pmcsh, not the C modules',
      'scripts/r.lua:3: require("pmcsh.a") inside a function: require at the top',
      'scripts/r.lua:4: reads global \'stream_engine\'',
    }, got.problems)
    assert.are.same({{"pmcsh.a", "pmcsh.b", "pmcsh.a"}}, got.cycles)
  end)
end)
