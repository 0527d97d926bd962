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

  it("documents every method of the objects the engines hand out: groups, streams, chains", function()
    local g <close> = assert(pmc.group{"task-clock"})
    local s <close> = assert(stream.new{n = 1024, quiet = true})
    local c <close> = assert(chase.chain{size = 4096})
    local missing, walked = {}, 0
    for what, obj in pairs{g = g, s = s, c = c} do
      for name, f in pairs(debug.getmetatable(obj).__index) do
        walked = walked + 1
        if not help.text(f) then missing[#missing + 1] = what .. ":" .. name end
      end
    end
    table.sort(missing)
    assert.is_true(walked >= 25, "walked only " .. walked .. " methods")
    assert.are.equal("", table.concat(missing, ", "))
    assert.matches("^g:read%(%[r%]%)", help.text(g.read))
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

describe("every exported function", function()
  it("given an argument of the wrong kind raises a bad argument at its caller, never an error inside pmcsh", function()
    -- chase.sweep{} and chase.loaded{} are whole default runs (seconds):
    -- they take {} as every option's default, so {} is no wrong kind there
    local r = h.run({"-e", [=[
local list = {}
for g in pairs(require("pmcsh.names").globals) do
  local v = _G[g]
  if type(v) == "function" then list[#list + 1] = {g, v}
  elseif type(v) == "table" then
    for k, f in pairs(v) do if type(f) == "function" then list[#list + 1] = {g .. "." .. k, f} end end
  end
end
table.sort(list, function(a, b) return a[1] < b[1] end)
local defaults_run = {["chase.sweep"] = true, ["chase.loaded"] = true}
local bad, calls = {}, 0
for _, e in ipairs(list) do
  for _, arg in ipairs{true, "x", 1, {}} do
    if not (defaults_run[e[1]] and type(arg) == "table") then
      calls = calls + 1
      local ok, err = pcall(e[2], arg)
      local text = not ok and tostring(err) or ""
      if text:find("lua/pmcsh/", 1, true) or text:find("attempt to", 1, true) then
        bad[#bad + 1] = e[1] .. "(" .. (type(arg) == "table" and "{}" or string.format("%q", arg)) .. "): " .. text
      end
    end
  end
end
io.stderr:write("\nRESULT ", #list, " ", calls, "\n", table.concat(bad, "\n"), "\n")]=]})
    assert.are.equal(0, r.code, r.err)
    local functions, calls, bad = r.err:match("\nRESULT (%d+) (%d+)\n(.*)$")
    assert.is_truthy(functions, r.err)
    assert.is_true(tonumber(functions) > 80, "walked only " .. functions .. " functions")
    assert.are.equal("", (bad:gsub("%s+$", "")))
    -- the position is the caller's line, the function the one it called
    r = h.run({"-e", "machine.threads()"})
    assert.are.equal(1, r.code)
    assert.matches("%(command line%):1: bad argument #1 to 'threads' %(a process id", r.err)
    r = h.run({"-e", "local s <close> = stream.new{n = 1000}\ns:run({})"})
    assert.matches("%(command line%):2: bad argument #1 to 'run' %(string expected, got table%)", r.err)
    r = h.run({"-e", "chase.latency{size = 65536, samples = 0}"})
    assert.matches("%(command line%):1: bad argument #1 to 'latency' %(samples: must be in 1%.%.100000%)", r.err)
  end)
end)
