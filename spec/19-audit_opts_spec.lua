-- The options audit (issue 23), each finding at its cause: a results file
-- loses no line unseen; what the engines refuse is refused before a file
-- is written; every count and size is bounded where it is declared; a
-- header read back is checked as the command line is; no Lua location of
-- pmcsh's own code reaches a user; a recipe's exit status is one; only
-- regular files are recipes; and every recipe's every numeric option,
-- fuzzed, ends in a result or a usage error naming it.
local h = require("helpers")
local cjson = require("cjson")
local recipe = require("pmcsh.recipe")
local paths = require("pmcsh.paths")
local machine = require("pmcsh.machine")

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() return true end
  return false
end

-- What a user must never see: a traceback, or a location in pmcsh's Lua.
local function assert_clean(err)
  assert.not_matches("stack traceback", err)
  assert.not_matches("lua/pmcsh/", err)
  assert.not_matches("%.lua:%d+:", err)
end

local HEADER = {type = "header", format = "pmcsh-survey/1", kernels = {"copy"}, n = 4096, reps = 1, threads = 1,
  pages = "4k", baseline = false, units = {{labels = {"task-clock"}, keys = {"task-clock"}, kind = "single"}},
  rows = {{key = "task-clock"}}}

local function copy(t)
  local o = {}
  for k, v in pairs(t) do o[k] = type(v) == "table" and copy(v) or v end
  return o
end

local function run_line(kernel, key)
  return cjson.encode({type = "run", kernel = kernel, group = 1, cells = {{key = key, value = 1.5}}})
end

describe("a survey results file", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. h.shquote(dir)) end)

  it("refuses a garbage line between records, naming file:line, for --report and --resume", function()
    local hdr = copy(HEADER)
    hdr.kernels = {"copy", "add"}
    local file = dir .. "/mid.jsonl"
    h.write(file, cjson.encode(hdr) .. "\n" .. run_line("copy", "task-clock") .. "\n{garbage\n" ..
      run_line("add", "task-clock") .. "\n")
    for _, mode in ipairs({"--report", "--resume"}) do
      local r = h.run({"survey", mode, file})
      assert.are.equal(1, r.code, mode .. ": " .. r.err)
      assert.matches("mid%.jsonl:3: not a JSON record", r.err)
      assert_clean(r.err)
    end
  end)

  it("skips a torn last line alone, and a resume cuts it off before appending", function()
    local file = dir .. "/torn.jsonl"
    h.write(file, cjson.encode(HEADER) .. "\n" .. '{"type":"run","kernel":"co')
    local r = h.run({"survey", "--report", file})
    assert.are.equal(1, r.code, r.err)   -- nothing counted yet: status 1, but a report
    assert.matches("incomplete survey", r.out)
    assert_clean(r.err)
    r = h.run({"survey", "--resume", file})
    assert.are.equal(0, r.code, r.err)
    for line in h.slurp(file):gmatch("[^\n]+") do
      assert.is_true(pcall(cjson.decode, line), "a torn line was left inside the file: " .. line)
    end
    assert.matches('"type":"done"', h.slurp(file))
  end)
end)

describe("survey options the engines refuse", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. h.shquote(dir)) end)
  local small = {"-e", "task-clock", "-k", "copy", "--n", "4096", "-r", "1", "--no-baseline"}
  local function with(extra)
    local t = {"survey"}
    for _, a in ipairs(small) do t[#t + 1] = a end
    for _, a in ipairs(extra) do t[#t + 1] = a end
    return t
  end

  it("are refused before the file is made (exit 2, the option as typed), and the retry runs", function()
    local cpus = #machine.cpus()
    local file = dir .. "/t.jsonl"
    local cases = {
      {{"-t", tostring(cpus + 1)}, "%-t " .. (cpus + 1)},
      {{"--n=1T"}, "%-%-n=1T"},
    }
    for _, c in ipairs(cases) do
      local r = h.run(with({c[1][1], c[1][2], "--out", file}))
      assert.are.equal(2, r.code, r.err)
      assert.matches(c[2], r.err)
      assert.not_matches("finished runs are kept", r.err)
      assert.not_matches("resume", r.err)
      assert_clean(r.err)
      assert.is_false(exists(file), "a results file was left by a refused command")
    end
    local r = h.run(with({"--out", file}))
    assert.are.equal(0, r.code, r.err)
  end)

  it("leave no file when the 1 GiB huge pages asked for are missing", function()
    local free = tonumber(h.slurp("/sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages"):match("%d+") or "0")
    if not h.need(free < 3, "this machine has 1 GiB huge pages reserved") then return end
    local file = dir .. "/g.jsonl"
    local r = h.run(with({"--pages", "1g", "--out", file}))
    assert.are.equal(2, r.code, r.err)
    assert.matches("%-%-pages 1g", r.err)
    assert.not_matches("finished runs are kept", r.err)
    assert.is_false(exists(file))
  end)
end)

describe("sizes and counts", function()
  it("are bounded where declared: parallelism's ladder ends, or is refused", function()
    for _, args in ipairs({{"--from", "0"}, {"--per-octave", "9223372036854775807"}, {"--to", "9223372036854775807k"}}) do
      local r = h.run({"parallelism", args[1], args[2]}, {env = "timeout 10"})
      assert.are.equal(2, r.code, table.concat(args, " ") .. ": " .. r.err)
      assert.matches(args[1], r.err, 1, true)
      assert_clean(r.err)
    end
    local chase = require("pmcsh.chase")
    assert.has_error(function() chase.sizes(0, 4096, 4, 64) end)
    assert.has_error(function() chase.sizes(4096, 8192, math.maxinteger, 64) end)
    assert.are.same({4096, 8192}, chase.sizes(4096, 8192, 1, 64))
  end)

  it("bound loaded's delays by the engine's documented maximum", function()
    local chase = require("pmcsh.chase")
    assert.is_true(math.type(chase.MAX_DELAY) == "integer" and chase.MAX_DELAY > 0)
    local r = h.run({"loaded", "--delays", "100000000000"}, {env = "timeout 10"})
    assert.are.equal(2, r.code, r.err)
    assert.matches("%-%-delays", r.err)
    assert.matches(tostring(chase.MAX_DELAY), h.run({"loaded", "--help"}).out, 1, true)
    local c <close> = assert(chase.chain{size = 65536})
    assert.has_error(function() c:loaded{delays = {chase.MAX_DELAY + 1}, threads = 1, bw_size = 65536} end)
  end)

  it("refuse a tlb_pages whose bytes overflow, naming it", function()
    local chase = require("pmcsh.chase")
    local ok, err = pcall(chase.latency, {size = 65536, order = "tlb", tlb_pages = 2^52 + 1, samples = 1, sample_ms = 1})
    assert.is_false(ok)
    assert.matches("tlb_pages", tostring(err))
  end)
end)

describe("a header read back", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. h.shquote(dir)) end)

  local labels = {}
  for i = 1, 65 do labels[i] = "task-clock" .. i end
  local bad = {
    {"65 labels in a unit", function(hd) hd.units = {{labels = labels, keys = labels, kind = "single"}} end},
    {"labels and keys apart", function(hd) hd.units[1].keys = {"a", "b"} end},
    {"a fractional sample_ms", function(hd) hd.kernels = {"chase"}; hd.chase = {size = 65536, stride = 64,
      order = "random"}; hd.sample_ms = 2.5 end},
    {"negative reps", function(hd) hd.reps = -1 end},
    {"negative n", function(hd) hd.n = -5 end},
    {"negative threads", function(hd) hd.threads = -2 end},
    {"pages ../../etc", function(hd) hd.pages = "../../etc" end},
  }
  for _, c in ipairs(bad) do
    it("is refused with " .. c[1] .. " (--report and --resume, exit 1, no traceback)", function()
      local hd = copy(HEADER)
      c[2](hd)
      local file = dir .. "/h.jsonl"
      h.write(file, cjson.encode(hd) .. "\n")
      for _, mode in ipairs({"--report", "--resume"}) do
        local r = h.run({"survey", mode, file}, {env = "timeout 20"})
        assert.are.equal(1, r.code, c[1] .. " " .. mode .. ": " .. r.err)
        assert.matches("h%.jsonl:1 %(header%)", r.err)
        assert_clean(r.err)
      end
    end)
  end

  it("with an unknown kernel cannot be resumed", function()
    local hd = copy(HEADER)
    hd.kernels = {"nosuch"}
    local file = dir .. "/k.jsonl"
    h.write(file, cjson.encode(hd) .. "\n")
    local r = h.run({"survey", "--resume", file})
    assert.are.equal(1, r.code, r.err)
    assert.matches("unknown kernel \"nosuch\"", r.err)
    assert_clean(r.err)
  end)
end)

describe("a user recipe", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. h.shquote(dir)) end)

  it("returns an exit status, or is told so with its file", function()
    for name, ret in pairs({tab = "{run = 5}", big = "2^40", str = "'five'"}) do
      h.write(dir .. "/" .. name .. ".lua", "return {description = 'x', run = function() return " .. ret .. " end}\n")
      local r = h.run({name}, {env = "PMCSH_PATH=" .. h.shquote(dir)})
      assert.are.equal(1, r.code, name .. ": " .. r.err)
      assert.matches(name .. "%.lua: run returned", r.err)
      assert.matches("not an exit status", r.err)
    end
    h.write(dir .. "/three.lua", "return {description = 'x', run = function() return 3 end}\n")
    assert.are.equal(3, h.run({"three"}, {env = "PMCSH_PATH=" .. h.shquote(dir)}).code)
  end)

  it("folder's FIFO is no recipe: --help does not wait on it", function()
    if not h.need(os.execute("mkfifo " .. h.shquote(dir .. "/fifo.lua")), "mkfifo failed") then return end
    local r = h.run({"--help"}, {env = "PMCSH_PATH=" .. h.shquote(dir) .. " timeout 10"})
    assert.are.equal(0, r.code, r.err)
    assert.not_matches("fifo", r.out)
  end)
end)

-- Every shipped recipe, each numeric option set to values at and beyond its
-- edges.  Values accepted lead to a real, small measurement: the companion
-- options keep it short.  The verdict: a usage error naming the option
-- (exit 2), or a result (0, or 1 from this environment); never a hang, a
-- signal, a traceback or a location in pmcsh's own Lua.
local COMPANIONS = {
  survey = {events = "task-clock", kernels = "copy", n = "4096", reps = "1", ["no-baseline"] = true,
    sample_ms = "1", chase = "random:64K"},
  latency = {from = "4K", to = "8K", samples = "1", sample_ms = "1"},
  parallelism = {from = "64K", to = "64K", max = "2", samples = "1", sample_ms = "1"},
  loaded = {size = "64K", bw_size = "64K", delays = "0", threads = "1", samples = "1", sample_ms = "1"},
  ["bench-chase"] = {size = "64K", pairs = "1", sample_ms = "1", samples = "1", from = "4K", to = "8K",
    rounds = "1"},
  ["bench-stream"] = {n = "4096", reps = "1", rounds = "1", threads = "1", kernels = "copy"},
  bandwidth = {seconds = "0.01", n = "4096", reps = "1"},
  stat = {["repeat"] = "1", events = "task-clock", ["--"] = {"true"}},
  health = {n = "64K", chain = "64K", reps = "2", ["mlp-max"] = "2"},
  compare = {["--"] = {paths.root .. "/spec/fixtures/health-n1.jsonl"}},
}
local VALUES = {"0", "-1", "1e300", "9223372036854775807", "nan", "inf", "0.5"}
local NUMERIC = {int = true, number = true, size = true}

describe("every recipe's numeric options, fuzzed", function()
  it("end in a usage error naming the option or a result, never a hang or a traceback", function()
    local shipped = {}
    for _, r in ipairs(recipe.list()) do
      if r.dir == paths.scripts then shipped[#shipped + 1] = r.name end
    end
    assert.is_true(#shipped >= 10, "pmcsh --help lists the shipped recipes")
    local t0, runs = os.time(), 0
    for _, name in ipairs(shipped) do
      local r = recipe.load(name)
      for _, o in ipairs(r.options) do
        if NUMERIC[o.type] then
          local flag = "--" .. o.name:gsub("_", "-")
          for _, v in ipairs(VALUES) do
            local args = {name, flag .. "=" .. v}
            local tail
            for k, cv in pairs(COMPANIONS[name] or {}) do
              if k == "--" then tail = cv
              elseif k ~= o.name then
                args[#args + 1] = "--" .. k:gsub("_", "-")
                if cv ~= true then args[#args + 1] = cv end
              end
            end
            if tail then args[#args + 1] = "--"; for _, a in ipairs(tail) do args[#args + 1] = a end end
            local res = h.run(args, {env = "HOME=/nonexistent timeout 10"})
            runs = runs + 1
            local what = table.concat(args, " ") .. " -> " .. tostring(res.code) .. ": " .. res.err
            assert.are_not.equal(124, res.code, "hung: " .. what)
            assert.is_true(res.code == 0 or res.code == 1 or res.code == 2, "died: " .. what)
            assert_clean(res.err)
            if res.code == 2 then
              assert.is_truthy(res.err:find(flag, 1, true) or (o.short and res.err:find("-" .. o.short, 1, true)),
                "a usage error that does not name " .. flag .. ": " .. what)
            end
          end
        end
      end
    end
    assert.is_true(runs > 50, runs .. " runs")
    assert.is_true(os.time() - t0 < 60, "the fuzz took " .. (os.time() - t0) .. " s")
  end)

  it("words refusals in the user's options, usage 2, a missing input 1", function()
    -- an empty item of a list is a typo, as perf's parser says
    local r = h.run({"stat", "-e", "task-clock,,", "--", "true"})
    assert.are.equal(2, r.code, r.err)
    assert.matches("^pmcsh stat: option %-%-events: an empty item in 'task%-clock,,'", r.err)
    -- the chain's size against its stride, in the recipe's options
    r = h.run({"latency", "--from", "4K", "--to", "4K", "--stride", "8192"})
    assert.are.equal(2, r.code, r.err)
    assert.are.equal("pmcsh latency: --from 4K is smaller than one element of --stride 8K\n", r.err)
    -- a results file that is not there is the environment's, as stat -p of no process
    r = h.run({"compare", "/nonexistent/results.jsonl"})
    assert.are.equal(1, r.code, r.err)
    assert.matches("^pmcsh compare: /nonexistent/results.jsonl: no such file or folder", r.err)
    r = h.run({"stat", "-p", "999999999"})
    assert.are.equal(1, r.code, r.err)
  end)
end)
