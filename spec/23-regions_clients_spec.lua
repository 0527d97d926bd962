-- stat --regions as its readers need it: clocks to the ns (a region of a
-- few microseconds is not 0.00), each region's wall time and calls as
-- LIKWID prints them (a region sleeping 3 x 20 ms took at least 60 ms and
-- at most the whole run), a region no call of which ended said in one
-- line, the whole program's counts beside its regions (they hold the
-- regions'), the -x and -j columns the README and the man page name,
-- "thread" one type on every -j row, and each misuse said once.
local h = require("helpers")
local cjson = require("cjson")
local paths = require("pmcsh.paths")

local ROOT = paths.root
local FIX = ROOT .. "/spec/fixtures/regions/"
local dir = h.tmpdir()

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  local ok = p:close()
  return ok, out
end

assert(sh("make -s -C " .. h.shquote(ROOT) .. " marker"))
local function build(name, flags)
  local out = dir .. "/" .. name
  assert(sh(string.format("cc -O2 %s -I%s -o %s %s -L%s -Wl,-rpath,%s -lpmcsh-marker -pthread", flags or "",
    h.shquote(ROOT .. "/include"), h.shquote(out), h.shquote(FIX .. name .. ".c"), h.shquote(ROOT .. "/build"),
    h.shquote(ROOT .. "/build"))))
  return out
end
local NAP, TOUCH, BAD = build("nap"), build("touch"), build("bad")
local LKPIN = build("lkpin", "-DLIKWID_PERFMON -I" .. h.shquote(ROOT .. "/include/pmcsh"))

-- -x , rows: {region, thread, calls, ..., seconds} by "region/thread/event"
local function csv(text)
  local rows, n = {}, nil
  for _, l in ipairs(h.lines(text)) do
    local f = h.fields(l, ",")
    if #f > 8 then
      n = n or #f
      assert.are.equal(n, #f, l)   -- one shape for every row
      rows[f[1] .. "/" .. f[2] .. "/" .. f[8]] = f
    end
  end
  return rows, n
end

-- the words of a list in a document: after `lead`, up to the ';'
local function listed(path, lead)
  local text = h.slurp(path):gsub("\\%-", "-"):gsub("\\f[BIRP]", ""):gsub("%s+", " ")
  local list = text:match(lead .. " (.-);")
  assert.is_truthy(list, path .. ": no '" .. lead .. "' list")
  local words = {}
  for w in (list .. ","):gmatch("%s*(.-),") do words[#words + 1] = w end
  return words
end

describe("stat --regions output", function()
  it("writes task-clock to the ns, so a region of microseconds is not 0.00", function()
    local r = h.run({"stat", "--regions", "-e", "task-clock", "--", NAP, 1, 1})
    assert.are.equal(0, r.code, r.err)
    local v = r.err:match("Region 'blink'.-\n%s+[%d.]+%s+%S*%s+[%d.e+-]*%s+runtime %(s%)\n%s+(%S+)")
    assert.is_truthy(v, r.err)
    assert.matches("^%d+%.%d%d%d%d%d%d$", v)
    assert.is_true(tonumber(v) > 0, v)   -- the reads themselves take time
  end)

  it("gives each region its wall time and calls: 3 sleeps of 20 ms take 60 ms or more, less than the run", function()
    local r = h.run({"stat", "--regions", "-e", "task-clock", "-x", ",", "--", NAP, 20, 3})
    assert.are.equal(0, r.code, r.err)
    local rows = csv(r.err)
    local nap = rows["nap/all/task-clock"]
    assert.are.equal("3", nap[3])
    local secs, elapsed = tonumber(nap[14]), tonumber(rows["/all/task-clock"][14])
    assert.is_true(secs >= 0.060, nap[14])   -- nanosleep never wakes early
    assert.is_true(secs < elapsed, nap[14] .. " s of a " .. elapsed .. " s run")
    -- the thread slept: its task-clock is a small part of its wall time
    assert.is_true(tonumber(nap[5]) / 1e3 < secs, nap[5] .. " ms on cpu")
    r = h.run({"stat", "--regions", "-e", "task-clock", "--", NAP, 20, 3})
    assert.matches("Region 'nap' of '.-' %(3 calls, 1 thread%)", r.err)
    assert.matches("\n%s+0%.%d+%s+0%.0%d+%s+runtime %(s%)\n", r.err)   -- total, per call
  end)

  it("says in one line that no call of a region ended, with no table of zeros", function()
    local r = h.run({"stat", "--regions", "-e", "page-faults", "--", BAD, "unbalanced"})
    assert.matches("Region 'open at exit' of '.-': no call of it ended", r.err)
    assert.is_nil(r.err:find("inclusive"), r.err)
    r = h.run({"stat", "--regions", "-e", "page-faults", "-x", ",", "--", BAD, "unbalanced"})
    local rows = csv(r.err)
    assert.is_nil(rows["open at exit/all/page-faults"], r.err)
    assert.is_truthy(rows["/all/page-faults"], r.err)
  end)

  it("prints the whole program's counts beside its regions, holding theirs", function()
    local N, CALLS = 64, 5
    local r = h.run({"stat", "--regions", "-e", "page-faults:u", "-x", ",", "--", TOUCH, N, CALLS, 2, 8, 8})
    local rows = csv(r.err)
    local whole = tonumber(rows["/all/page-faults:u"][5])
    local regions = tonumber(rows["touch/all/page-faults:u"][5]) + tonumber(rows["outer/all/page-faults:u"][5])
    assert.are.equal(2 * CALLS * (N + 16), regions)
    assert.is_true(whole >= regions, whole .. " < " .. regions)
    r = h.run({"stat", "--regions", "-e", "page-faults:u", "--", TOUCH, N, CALLS, 2, 8, 8})
    assert.matches("The whole of '.-touch.-':\n\n%s+%d+%s+page%-faults:u\n", r.err)
  end)

  it("has the -x columns and -j keys the README and the man page name", function()
    local r = h.run({"stat", "--regions", "-e", "page-faults:u", "-x", ",", "--", TOUCH, 4, 1, 2, 1, 1})
    local _, n = csv(r.err)
    r = h.run({"stat", "--regions", "-e", "page-faults:u", "-j", "--", TOUCH, 4, 1, 2, 1, 1})
    local keys = {}
    for _, l in ipairs(h.lines(r.err)) do
      for k in pairs(cjson.decode(l)) do keys[k] = true end
    end
    for _, doc in ipairs({ROOT .. "/README.md", ROOT .. "/pmcsh.1"}) do
      assert.are.equal(n, #listed(doc, "gives a row per region, thread and event, with the columns:"), doc)
      local named = {}
      for _, k in ipairs(listed(doc, "gives one object per row, with the keys:")) do named[k] = true end
      for k in pairs(keys) do assert.is_true(named[k], doc .. " does not name -j's key " .. k) end
    end
  end)

  it("writes \"thread\" as a string on every -j row", function()
    local r = h.run({"stat", "--regions", "-e", "page-faults:u", "-j", "--", TOUCH, 4, 1, 2, 1, 1})
    local threads = 0
    for _, l in ipairs(h.lines(r.err)) do
      local o = cjson.decode(l)
      assert.are.equal("string", type(o.thread), l)
      if o.thread ~= "all" then threads = threads + 1; assert.matches("^%d+$", o.thread) end
    end
    assert.is_true(threads >= 2)   -- two threads' own rows seen
  end)

  it("says each misuse once", function()
    for mode, says in pairs({thread = "left open", unbegun = "never begun", unbalanced = "open at exit"}) do
      local r = h.run({"stat", "--regions", "-e", "page-faults", "--", BAD, mode})
      local n = 0
      for _, l in ipairs(h.lines(r.err)) do
        if l:find(says, 1, true) and not l:match("^ Region '") then n = n + 1 end
      end
      assert.are.equal(1, n, mode .. ":\n" .. r.err)
    end
  end)

  it("gives a LIKWID program its companions: pinning, where it runs, and GET's seconds and calls", function()
    local r = h.run({"stat", "--regions", "-e", "task-clock", "--", LKPIN, 20, 3})
    assert.are.equal(0, r.code, r.err)
    local cpu, pinned, at, bad = r.out:match("pin (%d+): (%d), at (%d+); pin %-1: (%d)\n")
    assert.are.same({cpu, "1", "0"}, {at, pinned, bad}, r.out)
    local nev, secs, calls = r.out:match("get: (%d+) events, ([%d.]+) s, (%d+) calls\n")
    assert.are.same({"1", "3"}, {nev, calls}, r.out)
    assert.is_true(tonumber(secs) >= 0.060, r.out)   -- 3 x nanosleep(20 ms), wall time
    local runtime = tonumber(r.err:match("\n%s+([%d.]+)%s+%S+%s+runtime %(s%)\n"))
    assert.is_true(math.abs(runtime - tonumber(secs)) < 1e-5, r.out .. r.err)   -- GET's is the table's
  end)
end)
