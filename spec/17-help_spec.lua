-- help(x) documents every global and every function reachable from one, and
-- the man page and `pmcsh --help` name every global.
local h = require("helpers")
local help = require("pmcsh.help")
local names = require("pmcsh.names").globals

-- The globals every chunk sees, sorted: names.globals is their one list.
local function globals()
  local out = {}
  for name in pairs(names) do out[#out + 1] = name end
  table.sort(out)
  return out
end

describe("help", function()
  it("documents every global and every function of a global module", function()
    local missing, walked = {}, 0
    for _, g in ipairs(globals()) do
      local v = _G[g]
      walked = walked + 1
      if not help.text(v) then missing[#missing + 1] = g end
      if type(v) == "table" then
        for k, f in pairs(v) do
          if type(f) == "function" then
            walked = walked + 1
            if not help.text(f) then missing[#missing + 1] = g .. "." .. k end
          end
        end
      end
    end
    table.sort(missing)
    assert.is_true(walked > 50, "walked only " .. walked .. " globals and functions")
    assert.are.equal("", table.concat(missing, ", "))
  end)

  it("prints show's documentation, and a function's under its own name", function()
    local r = h.run({"-e", "help(show)"})
    assert.are.equal(0, r.code)
    assert.not_matches("no documentation", r.out)
    assert.matches("show%(", r.out)
    r = h.run({"-e", "help(metrics.per_iteration)"})
    assert.matches("metrics%.per_iteration%(count, iterations%)", r.out)
    r = h.run({"-e", "help 'recipe.parse'"})
    assert.matches("recipe%.parse%(", r.out)
  end)

  it("is named, with every global, in the man page and in pmcsh --help", function()
    local man = h.slurp(require("pmcsh.paths").root .. "/pmcsh.1")
    local sentence = man:match("see the same globals, set\n(.-)%.")
    assert.is_truthy(sentence, "the man page's LUA API sentence on the globals is gone")
    local usage = h.run({"--help"}).out:match("Globals (.-) are set as pmcsh starts")
    assert.is_truthy(usage, "pmcsh --help names no globals")
    for _, g in ipairs(globals()) do
      assert.matches("\\fB" .. g .. "\\fR", sentence, 1, true)
      assert.matches("%f[%w]" .. g .. "%f[^%w]", usage)
    end
  end)
end)
