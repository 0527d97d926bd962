-- One shape per thing, kept by checks (the sizes: spec/09-sizes): compare
-- reads typed metric records and decodes no recipe's own fields; the
-- survey's renderers read its records, never the runs, and make no
-- workload.
local h = require("helpers")
local cjson = require("cjson")

local root = require("pmcsh.paths").lua:gsub("/lua$", "")

-- The Lua files of lua/ and scripts/, relative to the root.
local function lua_files()
  local p = assert(io.popen("cd " .. h.shquote(root) .. " && find lua scripts -name '*.lua' | sort"))
  local out = {}
  for l in p:lines() do out[#out + 1] = l end
  p:close()
  return out
end

-- luac's listing of a file (a failure to list is an error, never a pass).
local function listing(rel)
  local p = assert(io.popen("luac5.4 -l -l -p " .. h.shquote(root .. "/" .. rel) .. " 2>&1"))
  local out = p:read("a")
  assert(p:close(), "luac5.4 -l -l " .. rel .. ": " .. out)
  return out
end

describe("pmcsh compare", function()
  local compare = require("pmcsh.compare")
  local dir = h.tmpdir()
  teardown(function() os.execute("rm -rf " .. h.shquote(dir)) end)

  -- a file of one set: the recipe's fingerprint line, then the records
  local function file(name, recipe, recs)
    local lines = {cjson.encode({recipe = recipe, fingerprint = {host = "x"}})}
    for _, r in ipairs(recs) do lines[#lines + 1] = cjson.encode(r) end
    return h.write(dir .. "/" .. name, table.concat(lines, "\n") .. "\n")
  end
  -- every field a recipe's own records carry (those compare once decoded per recipe)
  local OWN = {size = 1048576, ns = 80, mbps = 1000, delay = 100, kernel = "triad", threads = 2, mlp = 9, kind = "event",
    name = "page-faults", value = 0.5, unit = "events", mbps_no_counters = 900, samples = {1, 2}}
  local RECIPES = {"survey", "health", "latency", "parallelism", "loaded", "bench-stream", "bench-chase", "stat",
    "list", "no-such-recipe"}

  it("reads a metric record alike under any recipe's name, and nothing of a record that is not one", function()
    local typed = {type = "metric", name = "triad MB/s", unit = "MB/s", value = 1000, better = "higher",
      samples = {990, 1000}, context = {threads = 2}}
    for _, recipe in ipairs(RECIPES) do
      local sets = assert(compare.read(file(recipe .. ".jsonl", recipe, {OWN, typed})))
      assert.are.equal(1, #sets[1].metrics, recipe)
      local m = sets[1].metrics[1]
      assert.are.same({"triad MB/s", 1000, "MB/s", "higher", {990, 1000}}, {m.name, m.value, m.unit, m.better, m.samples})
      assert.are.equal(2, sets[1].settings.threads, recipe)
    end
  end)

  it("names no recipe in its source but the survey's, whose results file it reads through the survey", function()
    local recipes = {}
    for _, rel in ipairs(lua_files()) do
      local name = rel:match("^scripts/(.-)%.lua$")
      -- "list" is also results.check's word for a list ({list = "number"})
      if name and name ~= "survey" and name ~= "list" then recipes[name] = true end
    end
    assert.is_true(recipes.latency and recipes["bench-stream"] and recipes.health)
    local named = {}
    for _, rel in ipairs(lua_files()) do
      if rel == "lua/pmcsh/compare.lua" or rel:match("^lua/pmcsh/compare/") then
        for k in listing(rel):gmatch('"([^"\n]*)"') do
          if recipes[k] then named[#named + 1] = rel .. ": " .. k end
        end
      end
    end
    assert.are.same({}, named)
  end)
end)

describe("the survey's renderers", function()
  local survey = require("pmcsh.survey")
  local records = require("pmcsh.survey.records")
  local workloads = require("pmcsh.survey.workloads")
  local heatmap = require("pmcsh.survey.heatmap")

  it("read its records and header alone: the runs hidden and no workload made, they render the same", function()
    local st = assert(survey.load("spec/fixtures/hostile/survey-n1.jsonl"))
    assert.is_true(#st.runs > 0)
    local function all(s)
      return {survey.report(s, {}), survey.report(s, {stat = "median", all = true}), survey.csv(s, {}),
        survey.json(s, {}), (heatmap.script(s, {all = true}))}
    end
    local want = all(st)
    -- the state as a renderer may see it: what the runs hold raises
    local hidden = setmetatable({}, {__index = function(_, k) error("a renderer read the runs' " .. tostring(k), 2) end})
    local bare = {header = st.header, unopened = st.unopened, done = st.done, runs = hidden, cells = hidden,
      baseline = hidden, baseline2 = hidden}
    local of, wof = records.of, workloads.of
    records.of = function(s, o) return of(s == bare and st or s, o) end
    workloads.of = function() error("a renderer made the workloads", 2) end
    local ok, got = pcall(all, bare)
    records.of, workloads.of = of, wof
    assert.is_true(ok, tostring(got))
    assert.are.same(want, got)
    -- and the guard is seen: the records themselves read the runs
    assert.has_error(function() of(bare, {}) end)
  end)
end)
