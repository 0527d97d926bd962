-- Memory-controller bandwidth: the arithmetic on recorded readings, the
-- sysfs discovery on a recorded tree, and the recipe on this machine.
local helpers = require("helpers")
local kit = helpers.kernel_it(it)  -- specs that count the kernel
local uncore = require("pmcsh.uncore")

local write = helpers.sysfs_write

describe("uncore arithmetic", function()
  it("turns sysfs scale and unit into bytes per count", function()
    -- Intel iMC: 6.103515625e-5 MiB per CAS = exactly one 64-byte line
    assert.are.equal(64, uncore.bytes_per_count("6.103515625e-5", "MiB"))
    assert.are.equal(64, uncore.bytes_per_count(nil, nil))        -- bare transfers
    assert.are.equal(32, uncore.bytes_per_count(nil, "", 32))
    assert.are.equal(1e6, uncore.bytes_per_count("1", "MB"))
    local v, err = uncore.bytes_per_count("1", "furlongs")
    assert.is_nil(v)
    assert.matches("unknown unit", err)
    v, err = uncore.bytes_per_count("0.5", nil)
    assert.is_nil(v)
    assert.matches("without a .unit", err)
  end)

  it("parses cpumasks", function()
    assert.are.same({0, 28}, require("pmcsh.machine").parse_list("0,28"))
    assert.are.same({0, 1, 2, 3, 8}, require("pmcsh.machine").parse_list("0-3,8"))
    assert.is_nil((require("pmcsh.machine").parse_list("0,x")))
  end)

  -- The recorded readings of the Intel article (seed 001): a dual-socket
  -- Xeon 5500, 5 s idle, each socket's uncore counter printed once per core
  -- (4 cores per socket).  Hand computation, averaging per socket:
  --   writes  s0 (50459+50458+50481+50458)/4 = 50464     s1 (15737+15741+15741+15740)/4 = 15739.75
  --   reads   s0 (196626+196618+196679+196515)/4 = 196609.5   s1 (36071+36071+36072+36072)/4 = 36071.5
  --   total   (50464+15739.75+196609.5+36071.5) * 64 / 5 s = 3825724.8 B/s = 0.0038257248 GB/s
  it("averages a socket's per-core copies and sums sockets (seed 001 readings)", function()
    local writes = {50459, 50458, 50481, 50458, 15737, 15741, 15741, 15740}
    local reads = {196626, 196618, 196679, 196515, 36071, 36071, 36072, 36072}
    local readings = {}
    for i = 1, 8 do
      local socket = i <= 4 and 0 or 1
      readings[#readings + 1] = {pmu = "uncore", socket = socket, cpu = i - 1, dir = "write", raw = writes[i]}
      readings[#readings + 1] = {pmu = "uncore", socket = socket, cpu = i - 1, dir = "read", raw = reads[i]}
    end
    local agg = uncore.aggregate(readings, 5)
    assert.are.equal(2, #agg.sockets)
    assert.is_true(helpers.rel(agg.total.total_gbps, 0.0038257248) <= 1e-12)
    assert.is_true(helpers.rel(agg.sockets[1].write_bytes, 50464 * 64) <= 1e-12)
    assert.is_true(helpers.rel(agg.sockets[2].read_bytes, 36071.5 * 64) <= 1e-12)
    assert.is_true(helpers.rel(agg.sockets[1].read_gbps, 196609.5 * 64 / 5 / 1e9) <= 1e-12)
    assert.is_true(helpers.rel(agg.total.read_gbps + agg.total.write_gbps, agg.total.total_gbps) <= 1e-12)
  end)

  -- A two-socket server with three iMC channel PMUs per socket, each counted
  -- once on its socket's cpumask cpu: channels of a socket add up.
  -- s0: reads 1e9+1.1e9+0.9e9 = 3e9 lines, writes 3 * 0.5e9 = 1.5e9 lines
  -- s1: reads 3 * 0.2e9 = 0.6e9, writes 3 * 0.1e9 = 0.3e9; window 2 s
  -- read GB/s s0 = 3e9*64/2/1e9 = 96; write s0 = 48; s1 read 19.2, write 9.6; total 172.8
  it("sums channels within a socket (recorded server readings)", function()
    local r = {}
    local function add(pmu, socket, dir, raw)
      r[#r + 1] = {pmu = pmu, socket = socket, cpu = socket * 28, dir = dir, raw = raw,
                   bytes_per_count = uncore.bytes_per_count("6.103515625e-5", "MiB")}
    end
    local s0r = {1e9, 1.1e9, 0.9e9}
    for ch = 0, 2 do
      add("uncore_imc_" .. ch, 0, "read", s0r[ch + 1]); add("uncore_imc_" .. ch, 0, "write", 0.5e9)
      add("uncore_imc_" .. ch, 1, "read", 0.2e9); add("uncore_imc_" .. ch, 1, "write", 0.1e9)
    end
    local agg = uncore.aggregate(r, 2)
    assert.is_true(helpers.rel(agg.sockets[1].read_gbps, 96) <= 1e-12)
    assert.is_true(helpers.rel(agg.sockets[1].write_gbps, 48) <= 1e-12)
    assert.is_true(helpers.rel(agg.sockets[2].read_gbps, 19.2) <= 1e-12)
    assert.is_true(helpers.rel(agg.sockets[2].write_gbps, 9.6) <= 1e-12)
    assert.is_true(helpers.rel(agg.total.total_gbps, 172.8) <= 1e-12)
    assert.matches("total%s+115%.200%s+57%.600%s+172%.800", uncore.format(agg))
  end)

  it("refuses a zero window", function()
    assert.has_error(function() uncore.aggregate({}, 0) end)
  end)
end)

describe("uncore discovery", function()
  local root
  setup(function()
    root = helpers.tmpdir()
    -- a recorded Skylake-SP tree (two channels shown), an AMD Zen 4 UMC,
    -- and PMUs that are not memory controllers
    for ch = 0, 1 do
      local d = root .. "/uncore_imc_" .. ch
      write(d .. "/type", tostring(20 + ch))
      write(d .. "/cpumask", "0,28")
      write(d .. "/events/cas_count_read", "event=0x04,umask=0x03")
      write(d .. "/events/cas_count_read.scale", "6.103515625e-5")
      write(d .. "/events/cas_count_read.unit", "MiB")
      write(d .. "/events/cas_count_write", "event=0x04,umask=0x0c")
      write(d .. "/events/cas_count_write.scale", "6.103515625e-5")
      write(d .. "/events/cas_count_write.unit", "MiB")
    end
    write(root .. "/amd_umc_0/type", "30")
    write(root .. "/amd_umc_0/cpumask", "0")
    write(root .. "/amd_umc_0/format/event", "config:0-7")
    write(root .. "/uncore_cha_0/type", "40")
    write(root .. "/software/type", "1")
  end)
  teardown(function() os.execute("rm -rf '" .. root .. "'") end)

  it("finds the iMC channels and the UMC, with events, bytes per count and cpus", function()
    local found, seen = uncore.find(root)
    assert.are.equal(5, #seen)
    assert.are.equal(3, #found)
    local byname = {}
    for _, c in ipairs(found) do byname[c.pmu] = c end
    local imc = byname.uncore_imc_1
    assert.are.same({0, 28}, imc.cpus)
    assert.are.equal("uncore_imc_1/cas_count_read/", imc.events[1].event)
    assert.are.equal("read", imc.events[1].dir)
    assert.are.equal(64, imc.events[1].bytes_per_count)
    assert.are.equal("uncore_imc_1/cas_count_write/", imc.events[2].event)
    local umc = byname.amd_umc_0
    assert.are.equal("amd_umc_0/event=0x0a,rdwrmask=0x1/", umc.events[1].event)
    assert.are.equal("amd_umc_0/event=0x0a,rdwrmask=0x2/", umc.events[2].event)
    assert.is_nil(byname.uncore_cha_0)
  end)
end)

describe("uncore.measure", function()
  -- A reading recorded as the binding gives an uncore event (r[i].cpus):
  -- the iMC read counter of a two-socket server, counted once per socket on
  -- cpus 0 and 28, over a 2 s window.  1.5e9 and 0.5e9 lines of 64 bytes:
  -- 48 and 16 GB/s.
  it("turns each socket's counter into one reading (recorded per-cpu detail)", function()
    local ctrl = {pmu = "uncore_imc_0", cpus = {0, 28},
                  events = {{event = "uncore_imc_0/cas_count_read/", dir = "read", bytes_per_count = 64}}}
    local r = {{value = 2e9, cpus = {{cpu = 0, socket = 0, raw = 1.5e9}, {cpu = 28, socket = 1, raw = 0.5e9}}}}
    local rows = uncore.rows(ctrl, r)
    assert.are.same({{pmu = "uncore_imc_0", dir = "read", cpu = 0, socket = 0, raw = 1.5e9, bytes_per_count = 64},
                     {pmu = "uncore_imc_0", dir = "read", cpu = 28, socket = 1, raw = 0.5e9, bytes_per_count = 64}},
      rows)
    local agg = uncore.aggregate(rows, 2)
    assert.is_true(helpers.rel(agg.sockets[1].read_gbps, 48) <= 1e-12)
    assert.is_true(helpers.rel(agg.sockets[2].read_gbps, 16) <= 1e-12)
    assert.is_true(helpers.rel(agg.total.read_gbps, 64) <= 1e-12)
  end)

  -- Live, with counters this machine has standing in for a controller:
  -- cpu-wide cpu-clock counts 1e9 ns per second on each cpu, so at one
  -- "byte" per count a socket (its cpus averaged, as for an uncore counter
  -- seen from several cpus) shows 1.0 "GB/s"; msr/tsc/ shows the TSC GHz.
  kit("counts a real cpu-wide stand-in once per socket", function()
    local f = io.open("/sys/devices/system/cpu/online")
    local online = f and f:read("l") or ""
    if f then f:close() end
    if not helpers.need(online:match("^0%-%d+$"), "needs cpus 0 and 1 online") then return end
    local ctrls = {{pmu = "clock", cpus = {0, 1}, events = {
      {event = "cpu-clock", dir = "read", bytes_per_count = 1}}}}
    local agg, res = assert(uncore.measure(ctrls, function() os.execute("sleep 0.1"); return "done" end))
    assert.are.equal("done", res)
    assert.are.equal(2, #agg.readings)
    assert.are.same({0, 1}, {agg.readings[1].cpu, agg.readings[2].cpu})
    assert.is_true(helpers.rel(agg.total.read_gbps, 1.0) <= 0.02)
  end)
end)

describe("pmcsh bandwidth", function()
  local here = uncore.find()

  it("on a machine without a memory-controller PMU says so and exits non-zero", function()
    if not helpers.need(#here == 0, "this machine has a memory-controller PMU") then return end
    local r = helpers.run({"bandwidth", "--seconds", "0.1"})
    assert.are.equal(1, r.code)
    assert.matches("no memory%-controller PMU", r.err)
    assert.matches("software", r.err)   -- names what the machine has
    assert.are.equal("", r.out)
  end)

  it("sees at least the write-allocate bytes of a triad run", function()
    if not helpers.need(#here > 0, "no memory-controller PMU exposed here (KVM guest without uncore)") then
      return
    end
    local r = helpers.run({"bandwidth", "--kernel", "triad", "--reps", "5", "--json"})
    assert.are.equal(0, r.code)
    local t
    for _, o in ipairs(select(2, helpers.json_lines(r.out))) do
      if o.name == "controller bytes over the kernel's (write-allocate)" then t = o end
    end
    -- the controllers see every line the kernel moved, plus other traffic
    assert.is_true(t.controller_bytes >= 0.9 * t.stream_bytes_wa)
    assert.near(t.controller_bytes / t.stream_bytes_wa, t.value, 1e-9 * t.value)
    assert.are.equal("pass", t.verdict)
  end)

  it("judges controller bytes against the kernel's: STREAM's bytes at least, twice write-allocate at most", function()
    -- triad over 1000 elements: 24 bytes each by STREAM's count, 32 with write-allocate
    local function at(seen)
      return uncore.cross_check({stream_bytes = 24000, stream_bytes_wa = 32000, controller_bytes = seen})
    end
    assert.are.equal("pass", at(32000).verdict)
    assert.are.equal(1, at(32000).ratio)
    assert.are.equal("pass", at(22800).verdict)     -- non-temporal stores: no write-allocate read
    assert.are.equal("fail", at(22799).verdict)     -- lines the loop moved went uncounted
    assert.are.equal("pass", at(64000).verdict)     -- other traffic, system-wide
    assert.are.equal("fail", at(64001).verdict)
  end)

  it("rejects bad usage with exit 2", function()
    local r = helpers.run({"bandwidth", "--seconds", "-1"})
    assert.are.equal(2, r.code)
    assert.matches("seconds", r.err)
    r = helpers.run({"bandwidth", "--kernel", "nosuch"})
    assert.are.equal(2, r.code)
    assert.matches("unknown kernel", r.err)
    r = helpers.run({"bandwidth", "--bogus"})
    assert.are.equal(2, r.code)
    assert.matches("unknown option", r.err)
  end)
end)
