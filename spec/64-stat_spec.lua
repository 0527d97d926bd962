-- pmcsh stat as perf stat 6.1: an event this machine cannot count is a
-- '<not supported>' row and the run goes on; the command's user and sys
-- time follow the elapsed time.  Compared field by field with perf stat
-- where perf is installed (pending otherwise).
local h = require("helpers")
local pmc = require("pmcsh.pmc")

local function need(cond, reason)
  if not cond then pending(reason) end
  return cond
end

local function lines(s)
  local t = {}
  for l in s:gmatch("[^\n]+") do t[#t + 1] = l end
  return t
end

local function fields(l, sep)
  local t = {}
  for f in (l .. sep):gmatch("(.-)" .. sep) do t[#t + 1] = f end
  return t
end

-- an event that no machine counts: a generic hardware event is refused on a
-- VM without a PMU; where the PMU exists, pick one that still cannot open
local function uncountable()
  for _, ev in ipairs{"cycles", "instructions", "branch-misses"} do
    if pmc.info(ev) and not pmc.group{ev} then return ev end
  end
end

describe("pmcsh stat, events that cannot be counted", function()
  it("shows <not supported> and runs the command with the others", function()
    local ev = uncountable()
    if not need(ev, "every generic hardware event counts here") then return end
    local r = h.run({"stat", "-e", "task-clock," .. ev, "--", "true"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("task%-clock", r.err)
    assert.matches("<not supported>%s+" .. ev, r.err)
    -- -x: the same 7 fields as a counted row of one run
    r = h.run({"stat", "-x", ",", "-e", "task-clock," .. ev, "--", "true"})
    local ls = lines(r.err)
    assert.are.equal(2, #ls)
    assert.are.equal(#fields(ls[1], ","), #fields(ls[2], ","))
    assert.are.same({"<not supported>", "", ev, "0", "100.00", "", ""}, fields(ls[2], ","))
    -- only uncountable events: still a run, status 0, like perf
    r = h.run({"stat", "-e", ev, "--", "true"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("<not supported>", r.err)
  end)

  it("still refuses an unknown name (status 2)", function()
    local r = h.run({"stat", "-e", "no-such-event", "--", "true"})
    assert.are.equal(2, r.code, r.err)
    assert.matches("unknown event", r.err)
  end)

  it("has the same -x rows as perf stat", function()
    local ev = uncountable()
    if not need(ev, "every generic hardware event counts here") then return end
    if not need(os.execute("perf stat -e task-clock true >/dev/null 2>&1"), "perf is not installed") then return end
    local p = io.popen("perf stat -x, -e task-clock," .. ev .. " -- true 2>&1")
    local theirs = lines(p:read("a"))
    p:close()
    local ours = lines(h.run({"stat", "-x", ",", "-e", "task-clock," .. ev, "--", "true"}).err)
    assert.are.equal(#theirs, #ours)
    for i = 1, #ours do
      local a, b = fields(theirs[i], ","), fields(ours[i], ",")
      assert.are.equal(#a, #b)
      assert.are.equal(a[3], b[3])
    end
    assert.are.equal(fields(theirs[2], ",")[1], fields(ours[2], ",")[1])
  end)
end)

describe("pmcsh stat, seconds user and sys", function()
  it("prints them after the elapsed time for one run, as perf does", function()
    -- dd of 300 MiB from /dev/zero is mostly system time: sys > 0, and
    -- user + sys within the elapsed time (plus 10 ms of rusage rounding)
    local r = h.run({"stat", "-e", "task-clock", "--", "dd", "if=/dev/zero", "of=/dev/null", "bs=1M", "count=300"})
    assert.are.equal(0, r.code, r.err)
    local el = tonumber(r.err:match("([%d.]+) seconds time elapsed"))
    local u = tonumber(r.err:match("([%d.]+) seconds user"))
    local s = tonumber(r.err:match("([%d.]+) seconds sys"))
    assert.is_truthy(el and u and s)
    assert.is_true(s > 0)
    assert.is_true(u + s <= el + 0.01)
  end)

  it("leaves them out with -r, as perf does", function()
    local r = h.run({"stat", "-r", "2", "-e", "task-clock", "--", "true"})
    assert.is_nil(r.err:match("seconds user"))
  end)
end)

describe("pmcsh stat -o FILE", function()
  it("writes the counts to the file after a '# started on' line, --append adds", function()
    local f = h.tmpdir() .. "/stat.out"
    local r = h.run({"stat", "-o", f, "-x", ",", "-e", "task-clock", "--", "true"})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal("", r.err)
    local t = io.open(f):read("a")
    assert.matches("^# started on ", t)
    assert.matches("\n,?[%d.]+,msec,task%-clock,", t)
    r = h.run({"stat", "-o", f, "--append", "-x", ",", "-e", "task-clock", "--", "true"})
    assert.are.equal(0, r.code, r.err)
    local _, runs = io.open(f):read("a"):gsub("task%-clock", "")
    assert.are.equal(2, runs)
  end)

  it("refuses --append without -o, and an unwritable path before running", function()
    assert.are.equal(2, h.run({"stat", "--append", "--", "true"}).code)
    local ran = h.tmpdir() .. "/ran"
    local r = h.run({"stat", "-o", "/nonexistent/dir/x", "--", "touch", ran})
    assert.are.equal(1, r.code)
    assert.is_nil(io.open(ran))
  end)
end)
