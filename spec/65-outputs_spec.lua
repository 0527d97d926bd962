-- pmcsh list's plain output: each PMU heading counts the rows under it, and
-- descriptions are whole when the output is not a terminal (as perf list).
local h = require("helpers")

describe("pmcsh list", function()
  it("counts the events under each PMU heading", function()
    local r = h.run({"list"})
    assert.are.equal(0, r.code, r.err)
    local pmu, want, got, seen = nil, 0, 0, 0
    for l in r.out:gmatch("[^\n]+") do
      local name, n = l:match("^(%S+): (%d+) events?$")
      if name then
        if pmu then assert.are.equal(want, got, pmu) end
        pmu, want, got, seen = name, tonumber(n), 0, seen + 1
      else
        got = got + 1
      end
    end
    assert.are.equal(want, got, pmu)
    assert.is_true(seen >= 1)
  end)

  it("prints descriptions in full into a pipe (no '...' cut)", function()
    local r = h.run({"list"})
    assert.is_nil(r.out:match("%.%.%.\n"))
  end)
end)
