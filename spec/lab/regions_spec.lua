-- Regions of a user's program on a real PMU (the arm64 lab: instructions
-- retired exact): a region running K trips of a 4-instruction loop counts
-- exactly 4K more than the same region with none, and the cost of a
-- begin/end pair pmcsh states is the one a region around K pairs shows.
-- spec/lab/regions/lab_regions is cross-built against the marker library
-- by lab.sh; elsewhere these are pending.
local h = require("helpers")
local pmc = require("pmcsh.pmc")
local env = pmc.environment()

local NO_HW = "no hardware PMU is exposed on this machine (no cpu or armv8_* PMU in /sys/bus/event_source/devices)"
local PROG = "spec/lab/regions/lab_regions"

local function rows(text)
  local t = {}
  for _, l in ipairs(h.lines(text)) do
    local f = h.fields(l, ",")
    if #f == 14 and f[2] == "all" and f[1] ~= "" then t[f[1] .. "/" .. f[8]] = tonumber(f[5]) end
  end
  return t
end

describe("regions on a hardware PMU", function()
  it("count instructions:u exactly: K trips of a 4-instruction loop are 4K over the region's fixed cost", function()
    if not h.need(env.cpu_pmu and io.open(PROG), NO_HW .. " (or no lab build of " .. PROG .. ")") then return end
    local r = h.run({"stat", "--regions", "-e", "instructions:u,cycles:u", "-x", ",", "--", PROG, 0, 1000, 2000})
    assert.are.equal(0, r.code, r.err)
    local t = rows(r.err)
    local fixed = t["loop-000000/instructions:u"]
    assert.is_truthy(fixed, r.err)
    assert.are.equal(fixed + 4000, t["loop-001000/instructions:u"])
    assert.are.equal(fixed + 8000, t["loop-002000/instructions:u"])
    -- the fixed cost is the one pmcsh states (an empty region's), and the
    -- loop's entry: k's test (cbz) and the moves before it
    r = h.run({"stat", "--regions", "-e", "instructions:u,cycles:u", "--", PROG, 0})
    local stated = tonumber(r.err:match("an empty region counts instructions:u ([%d.]+)"))
    assert.is_truthy(stated, r.err)
    assert.is_true(fixed - stated >= 0 and fixed - stated <= 8,
      string.format("loop-000000 counts %d, the stated fixed cost is %g", fixed, stated))
  end)

  it("states the pair's cost, read with rdpmc, as a region around K pairs counts it", function()
    if not h.need(env.cpu_pmu and io.open(PROG), NO_HW .. " (or no lab build of " .. PROG .. ")") then return end
    local r = h.run({"stat", "--regions", "-e", "instructions:u,cycles:u", "--", PROG, "p1", "p10", "p20"})
    assert.are.equal(0, r.code, r.err)
    local outer = tonumber(r.err:match("a region around one counts instructions:u ([%d.]+)"))
    local empty = tonumber(r.err:match("an empty region counts instructions:u ([%d.]+)"))
    assert.is_truthy(outer and empty, r.err)
    r = h.run({"stat", "--regions", "-e", "instructions:u,cycles:u", "-x", ",", "--", PROG, "p1", "p10", "p20"})
    local t = rows(r.err)
    -- pairs-1 first: the first "p" (its name registered) is not in the slope
    local slope = (t["pairs-20/instructions:u"] - t["pairs-10/instructions:u"]) / 10
    -- the calibration runs its pairs at the top, these inside a region:
    -- the parent's bookkeeping differs by a few instructions
    assert.is_true(math.abs(slope - outer) <= 0.05 * slope, string.format("pair: stated %g, measured %g", outer, slope))
    -- the pmcsh_region_* calls with two events read in user space
    -- (cap_user_rdpmc): the target, kept
    assert.is_true(slope <= 200, string.format("a begin/end pair with 2 events retires %g instructions", slope))
    assert.is_true(outer <= 200, string.format("the stated pair cost with 2 events is %g instructions", outer))
  end)
end)
