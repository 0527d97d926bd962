-- Numbers on a busy node: with a busy loop on every cpu (this spec starts
-- its own, so it holds quiet or loaded), the survey still answers in every
-- cell and says how far to trust it, the TSC's rate is the engine's, an
-- alternate run has its rate or says why, and nothing is written for a
-- terminal into a pipe.
local helpers = require("helpers")
local kit = helpers.kernel_it(it)  -- specs that count the kernel
local machine = require("pmcsh.machine")
local stream = require("pmcsh.stream")
local cjson = require("cjson")

-- A busy loop on each cpu (sh -c 'while :; do :; done', as a user would
-- start one); returns the function that ends them.
local function busy()
  local pids = {}
  for _ = 1, #machine.cpus() do
    local p = assert(io.popen("sh -c 'while :; do :; done' >/dev/null 2>&1 </dev/null & echo $!"))
    pids[#pids + 1] = assert(math.tointeger(tonumber(p:read("l"))))
    p:close()
  end
  return function()
    for _, pid in ipairs(pids) do os.execute("kill " .. pid .. " 2>/dev/null") end
  end
end

describe("with a busy loop on every cpu", function()
  local stop
  setup(function() stop = busy() end)
  teardown(function() stop() end)

  kit("the survey gives a value in every cell, first touch checked exactly where a pair was kept", function()
    -- the Done-when of issue 41: fresh arrays, 5 windows (3 pairs kept wanted)
    local r = helpers.run({"survey", "-e", "page-faults,task-clock", "--fresh", "--n", "2M", "-r", "5", "--budget", "10",
      "--json"})
    assert.are.equal(0, r.code, r.err)
    local _, all = helpers.json_lines(r.out)
    local cells = 0
    for _, o in ipairs(all) do
      if o.kind == "event" then
        cells = cells + 1
        assert.is_number(o.value, o.name .. " " .. o.context.kernel)   -- never dropped: a window was counted
        -- kept/made honest: kept + dropped = made, disturbed exactly when none was kept
        assert.are.equal(o.pairs_total, o.pairs_kept + o.dropped, o.name)
        assert.is_true(o.pairs_total >= 3, o.name)
        assert.are.equal(o.pairs_kept == 0, o.disturbed, o.name)
        if o.disturbed then
          assert.are.equal(cjson.null, o.class, o.name)
          assert.are_not.equal("pass", o.verdict, o.name)
        end
        if o.name == "page-faults:u" and not o.disturbed then
          -- a fault per 4 KiB page of the window's slice of each array: exact
          assert.are.equal("pass", o.verdict, o.context.kernel .. ": " .. tostring(o.note))
        end
      end
    end
    assert.are.equal(3 * 4, cells)   -- page-faults:u, page-faults:k and task-clock in each of the 4 loops
  end)

  it("pmcsh machine's TSC rate is the stream engine's tsc_hz, within 1%", function()
    if not helpers.need(machine.tsc() and machine.tsc_hz(), "no constant TSC here") then return end
    local s <close> = assert(stream.new{n = 1 << 22, quiet = true})
    local engine = assert(s:run("triad", {reps = 4}).tsc_hz)
    for _ = 1, 3 do
      local r = helpers.run({"machine", "--json"})
      assert.are.equal(0, r.code, r.err)
      local mhz = cjson.decode(r.out).clocks.tsc_mhz
      assert.is_true(helpers.rel(mhz * 1e6, engine) < 0.01, string.format("%.1f MHz, the engine %.1f", mhz, engine / 1e6))
    end
  end)

  it("an alternate run has its MB/s or says why not, and prints the same", function()
    local s <close> = assert(stream.new{n = 1 << 20, quiet = true})
    for i = 1, 8 do
      local r = assert(s:run(i % 2 == 0 and "copy" or "triad", {reps = 2 + i % 3, alternate = true}))
      assert.are.equal("median slope", r.mbps_stat)
      if r.mbps then
        assert.is_true(r.mbps > 0)
        assert.matches(" MB/s %(median slope of ", tostring(r))
      else
        assert.is_string(r.mbps_why)
        assert.matches("no MB/s %(" .. r.mbps_why:gsub("%p", "%%%0"), tostring(r))
      end
    end
    -- a single window is no pair: no rate, and why
    local one = assert(s:run("triad", {reps = 1, alternate = true}))
    assert.is_nil(one.mbps)
    assert.matches("no pair", one.mbps_why)
  end)
end)

describe("what a run writes", function()
  it("draws no progress meter into a pipe, and says nothing of STREAM's rule when --n was chosen", function()
    local r = helpers.run({"survey", "-e", "task-clock", "-k", "copy", "--n", "256K", "-r", "2", "--budget", "0"})
    assert.are.equal(0, r.code, r.err)
    assert.not_matches("\27", r.err)
    assert.not_matches("breaks STREAM's rule", r.err)
    assert.matches("n = 262144 per array", r.err)
  end)

  it("says n below STREAM's rule once a process, not on every stream", function()
    local m = stream.machine()
    if not helpers.need(m.default_n > 4096, "STREAM's rule asks no more than 4096 elements here") then return end
    local r = helpers.run({"-e", "local stream = require('pmcsh.stream') for i = 1, 3 do " ..
      "assert(stream.new{n = 4096, threads = 1}):close() end assert(stream.new{n = 4096, rule = false}):close()"})
    assert.are.equal(0, r.code, r.err)
    local _, said = r.err:gsub("breaks STREAM's rule", "")
    assert.are.equal(1, said, r.err)
  end)

  it("defaults to one thread in stream.new and the survey, and the survey's table says so", function()
    local s <close> = assert(stream.new{n = 1 << 16, quiet = true})
    assert.are.equal(1, s:info().threads)
    local r = helpers.run({"survey", "-e", "task-clock", "-k", "copy", "--n", "256K", "-r", "2", "--budget", "0"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("\nkept / made%s+%d+/%d+ pairs%s+1 thread\n", r.out)
  end)
end)
