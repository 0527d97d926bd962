-- The events/ groups per model, proved offline: every group names its
-- models; every event of every group encodes for every model it names
-- (libpfm4's forced PMU, one child pmcsh per model: pmc.info_all); every
-- formula gives a known answer on a recorded reading; and where perf's
-- pmu-events JSON defines the same metric for the model, perf's formula,
-- transcribed below as a Lua function with its file, gives the same value
-- on the same reading.
local helpers = require("helpers")
local events = require("pmcsh.events")
local metrics = require("pmcsh.metrics")
local pmc = require("pmcsh.pmc")

-- the group files of events/ (an `events` list), loaded as the loader does
local GROUPS = {}
for _, name in ipairs(events.names()) do
  local t = events.load(name)
  if t and t.events then GROUPS[#GROUPS + 1] = assert(events.group(name)) end
end

local KNOWN = {}
for _, m in ipairs(pmc.models() or {}) do KNOWN[m.name] = true end

-- a metric by name, evaluated on values {name = count} as model spells them
local function eval(g, model, name, values, ctx)
  local t = events.for_model(g, model)
  for _, m in ipairs(t.metrics) do
    if m.name == name then
      local reading = {}
      for k, v in pairs(values) do reading[#reading + 1] = {name = (g.rename and g.rename[model] or {})[k] or k, value = v} end
      return assert(metrics.eval(m, reading, ctx or {seconds = 2, iterations = 1e6, bytes = 24e6}))
    end
  end
  error("no metric " .. name .. " in " .. g.name)
end

local function group(name)
  for _, g in ipairs(GROUPS) do if g.name == name then return g end end
  error("no group " .. name)
end

local function near(want, got, what)
  assert(math.abs(want - got) <= 1e-9 * math.max(1, math.abs(want)), string.format("%s: %.12g, want %.12g", what, got, want))
end

describe("events/ groups", function()
  it("every group names its models, libpfm4 PMU names", function()
    for _, g in ipairs(GROUPS) do
      local models = events.models(g)
      assert(#models > 0 or g.name == "software", g.name .. " names no models")
      for _, m in ipairs(models) do assert.matches("^[%w_]+$", m) end
    end
  end)

  it("every event of every group encodes for every model it names (one child per model)", function()
    local by_model = {}
    for _, g in ipairs(GROUPS) do
      for _, model in ipairs(events.models(g)) do
        by_model[model] = by_model[model] or {}
        table.insert(by_model[model], events.for_model(g, model))
      end
    end
    local absent = {}
    for model, gs in pairs(by_model) do
      if not KNOWN[model] then
        absent[#absent + 1] = model
      else
        local names, from = {}, {}
        for _, g in ipairs(gs) do
          for _, e in ipairs(g.events) do
            if g.sysfs then
              -- the kernel's power PMU, by sysfs name: no libpfm4 encoding
              local p = pmc.parse_name(e)
              assert.are.equal("sysfs", p.form, e); assert.are.equal("power", p.pmu, e)
            else
              names[#names + 1] = e; from[#names] = g.name
            end
          end
        end
        local infos, whys = assert(pmc.info_all(names, {pmu = model}))
        for i, e in ipairs(names) do
          assert(infos[i], string.format("%s: %s does not encode on %s: %s", from[i], e, model, tostring(whys[i])))
          assert(infos[i].encoded, string.format("%s: %s on %s needs a umask", from[i], e, model))
          assert.is_number(infos[i].config)
        end
      end
    end
    -- libpfm4 built for x86 knows no Arm core: core-a57 is proved in the arm64 lab
    table.sort(absent)
    if #absent > 0 then
      helpers.need(false, "libpfm4 here has no model " .. table.concat(absent, ", ") .. " (an x86 build)")
    end
  end)

  it("each of skl, icl, spr, Zen 3 and Zen 4 has at least 8 groups", function()
    for _, model in ipairs({"skl", "icl", "spr", "amd64_fam19h_zen3", "amd64_fam19h_zen4"}) do
      local n = 0
      for _, g in ipairs(GROUPS) do
        for _, m in ipairs(events.models(g)) do if m == model then n = n + 1 end end
      end
      assert(n >= 8, model .. " has " .. n .. " groups")
    end
  end)

  it("every formula of every group evaluates, for every model, on a reading of every event", function()
    for _, g in ipairs(GROUPS) do
      for _, model in ipairs(events.models(g)) do
        local t = events.for_model(g, model)
        local reading = {}
        for i, e in ipairs(t.events) do reading[i] = {name = e, value = 1000 * i + 7} end
        for _, m in ipairs(t.metrics or {}) do
          local v, why = metrics.eval(m, reading, {seconds = 2, iterations = 1e6, bytes = 24e6})
          assert(v, string.format("%s on %s, %s: %s", g.name, model, m.name, tostring(why)))
        end
      end
    end
  end)
end)

describe("formulas on recorded readings with known answers", function()
  -- A reading of a Skylake thread over 2 s: 4e9 cycles, 6e9 instructions
  local SKL = {["CPU_CLK_UNHALTED:THREAD_P"] = 4e9, ["INST_RETIRED:ANY_P"] = 6e9,
               ["BR_INST_RETIRED:ALL_BRANCHES"] = 1.2e9, ["BR_MISP_RETIRED:ALL_BRANCHES"] = 6e6}

  it("CLOCK and BRANCH (Intel)", function()
    for _, model in ipairs({"skl", "icl", "spr"}) do
      near(1.5, eval(group("clock-intel"), model, "IPC", SKL), "IPC")
      near(2 / 3, eval(group("clock-intel"), model, "CPI", SKL), "CPI")
      near(2, eval(group("clock-intel"), model, "clock GHz", SKL), "GHz")
      near(0.2, eval(group("branch-intel"), model, "branch rate", SKL), "branch rate")
      near(0.005, eval(group("branch-intel"), model, "branch misprediction ratio", SKL), "misprediction ratio")
      near(1000, eval(group("branch-intel"), model, "instructions per misprediction", SKL), "IpMispredict")
    end
  end)

  it("FLOPS: a STREAM triad of 1e6 iterations, 2 DP flops each, as AVX2 FMAs", function()
    -- 1e6 iterations / 4 lanes = 250000 256-bit FMAs, each counted twice
    local r = {["FP_ARITH_INST_RETIRED:SCALAR_DOUBLE"] = 0, ["FP_ARITH_INST_RETIRED:128B_PACKED_DOUBLE"] = 0,
               ["FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE"] = 5e5, ["FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE"] = 0}
    near(2, eval(group("flops-dp-intel"), "skx", "DP flops per iteration", r), "flops per iteration")
    near(1e-3, eval(group("flops-dp-intel"), "skx", "DP GFLOP/s", r), "GFLOP/s")
    near(1, eval(group("flops-dp-intel"), "skx", "DP packed share of operations", r), "packed share")
    local s = {["FP_ARITH_INST_RETIRED:SCALAR_SINGLE"] = 1e6, ["FP_ARITH_INST_RETIRED:128B_PACKED_SINGLE"] = 0,
               ["FP_ARITH_INST_RETIRED:256B_PACKED_SINGLE"] = 0, ["FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE"] = 1e6}
    near(17, eval(group("flops-sp-intel"), "spr", "SP flops per iteration", s), "SP 1 + 16")
    near(16 / 17, eval(group("flops-sp-intel"), "spr", "SP packed share of operations", s), "SP packed share")
  end)

  it("caches, TLB and memory: lines are 64 bytes, latencies by Little's law", function()
    near(0.5, eval(group("l1d-intel"), "icl", "L1D refills per load and store",
      {["L1D:REPLACEMENT"] = 1e6, ["MEM_INST_RETIRED:ALL_LOADS"] = 1.5e6, ["MEM_INST_RETIRED:ALL_STORES"] = 0.5e6}), "L1D")
    near(3.2, eval(group("l2-intel"), "skl", "L2 fill bandwidth GB/s", {["L2_LINES_IN:ALL"] = 1e8}), "L2 GB/s")
    near(0.25, eval(group("l3-intel"), "icl", "L3 miss ratio",
      {["LONGEST_LAT_CACHE:MISS"] = 1, ["LONGEST_LAT_CACHE:REFERENCE"] = 4}), "L3 miss ratio (REFERENCES on icl)")
    near(200, eval(group("mem-intel"), "spr", "off-core data read latency (cycles)",
      {["OFFCORE_REQUESTS_OUTSTANDING:ALL_DATA_RD"] = 2e9, ["OFFCORE_REQUESTS:ALL_DATA_RD"] = 1e7}), "latency (DATA_RD on spr)")
    near(30, eval(group("tlb-intel"), "skl", "load page walk duration (cycles)",
      {["DTLB_LOAD_MISSES:WALK_PENDING"] = 3e7, ["DTLB_LOAD_MISSES:WALK_COMPLETED"] = 1e6}), "walk duration")
    -- a triad of 1e6 iterations from DRAM: 3 arrays of 8-byte elements, 1/8 line each per iteration
    local zen = {["ANY_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL"] = 375000,
                 ["DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL"] = 37500, ["CYCLES_NOT_IN_HALT"] = 3e6}
    for _, model in ipairs({"amd64_fam19h_zen3", "amd64_fam19h_zen4"}) do
      near(0.375, eval(group("memory-zen"), model, "DRAM fills per iteration", zen), "DRAM fills")
      near(0.9, eval(group("memory-zen"), model, "prefetched share of DRAM fills", zen), "prefetched share")
      near(0.75, eval(group("l3-zen"), model, "L3 share of L3 and DRAM fills",
        {["ANY_DATA_CACHE_FILLS_FROM_SYSTEM:INT_CACHE"] = 3, ["ANY_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL"] = 1}), "L3 share")
    end
  end)

  it("ENERGY: 2^32 counts are a joule", function()
    near(50, eval(group("energy-intel"), "skx", "package power W", {["power/energy-pkg/"] = 100 * 2^32}), "W")
    near(100, eval(group("energy-amd"), "amd64_fam19h_zen4", "package energy J", {["power/energy-pkg/"] = 100 * 2^32}), "J")
  end)
end)

describe("the same metric as perf's pmu-events formula, on the same reading", function()
  -- perf's formulas, transcribed (event names as perf writes them)
  local PERF = {
    -- tools/perf/pmu-events/arch/x86/{skylake,icelake,sapphirerapids}/*-metrics.json
    tma_info_thread_ipc = function(p) return p["INST_RETIRED.ANY"] / p["CPU_CLK_UNHALTED.THREAD"] end,
    tma_info_inst_mix_ipbranch = function(p) return p["INST_RETIRED.ANY"] / p["BR_INST_RETIRED.ALL_BRANCHES"] end,
    tma_info_bad_spec_ipmispredict = function(p) return p["INST_RETIRED.ANY"] / p["BR_MISP_RETIRED.ALL_BRANCHES"] end,
    tma_info_memory_l2mpki = function(p) return 1e3 * p["MEM_LOAD_RETIRED.L2_MISS"] / p["INST_RETIRED.ANY"] end,
    tma_info_memory_l3mpki = function(p) return 1e3 * p["MEM_LOAD_RETIRED.L3_MISS"] / p["INST_RETIRED.ANY"] end,
    tma_info_memory_load_miss_real_latency = function(p)
      return p["L1D_PEND_MISS.PENDING"] / (p["MEM_LOAD_RETIRED.L1_MISS"] + p["MEM_LOAD_RETIRED.FB_HIT"])
    end,
    tma_info_system_gflops = function(p)
      return (p["FP_ARITH_INST_RETIRED.SCALAR_SINGLE"] + p["FP_ARITH_INST_RETIRED.SCALAR_DOUBLE"] +
              2 * p["FP_ARITH_INST_RETIRED.128B_PACKED_DOUBLE"] +
              4 * (p["FP_ARITH_INST_RETIRED.128B_PACKED_SINGLE"] + p["FP_ARITH_INST_RETIRED.256B_PACKED_DOUBLE"]) +
              8 * (p["FP_ARITH_INST_RETIRED.256B_PACKED_SINGLE"] + p["FP_ARITH_INST_RETIRED.512B_PACKED_DOUBLE"]) +
              16 * p["FP_ARITH_INST_RETIRED.512B_PACKED_SINGLE"]) / 1e9 / p.duration_time
    end,
    -- tools/perf/pmu-events/arch/x86/skylake/skl-metrics.json, one thread a core (#SMT_on false)
    skl_slots = function(p) return 4 * p["CPU_CLK_UNHALTED.THREAD"] end,
    -- tools/perf/pmu-events/arch/x86/amdzen{3,4}/recommended.json
    branch_misprediction_ratio = function(p) return p.ex_ret_brn_misp / p.ex_ret_brn end,
  }
  PERF.skl_frontend_bound = function(p) return p["IDQ_UOPS_NOT_DELIVERED.CORE"] / PERF.skl_slots(p) end
  PERF.skl_bad_speculation = function(p)
    return (p["UOPS_ISSUED.ANY"] - p["UOPS_RETIRED.RETIRE_SLOTS"] + 4 * p["INT_MISC.RECOVERY_CYCLES"]) / PERF.skl_slots(p)
  end
  PERF.skl_retiring = function(p) return p["UOPS_RETIRED.RETIRE_SLOTS"] / PERF.skl_slots(p) end
  PERF.skl_backend_bound = function(p)
    return 1 - PERF.skl_frontend_bound(p) - (p["UOPS_ISSUED.ANY"] + 4 * p["INT_MISC.RECOVERY_CYCLES"]) / PERF.skl_slots(p)
  end
  -- tools/perf/pmu-events/arch/x86/amdzen4/pipeline.json (PipelineL1)
  PERF.zen4_slots = function(p) return 6 * p.ls_not_halted_cyc end
  PERF.zen4_frontend_bound = function(p) return p["de_no_dispatch_per_slot.no_ops_from_frontend"] / PERF.zen4_slots(p) end
  PERF.zen4_bad_speculation = function(p) return (p["de_src_op_disp.all"] - p.ex_ret_ops) / PERF.zen4_slots(p) end
  PERF.zen4_backend_bound = function(p) return p["de_no_dispatch_per_slot.backend_stalls"] / PERF.zen4_slots(p) end
  PERF.zen4_smt_contention = function(p) return p["de_no_dispatch_per_slot.smt_contention"] / PERF.zen4_slots(p) end
  PERF.zen4_retiring = function(p) return p.ex_ret_ops / PERF.zen4_slots(p) end

  -- one recorded reading under both spellings: pmcsh's (libpfm4) and perf's
  local function both(pairs_)
    local ours, perf = {}, {}
    for _, row in ipairs(pairs_) do ours[row[1]] = row[3]; perf[row[2]] = row[3] end
    return ours, perf
  end

  it("Intel IPC, IpBranch, IpMispredict, L2 and L3 MPKI, load miss latency (skl, icl, spr)", function()
    local ours, perf = both({
      {"CPU_CLK_UNHALTED:THREAD_P", "CPU_CLK_UNHALTED.THREAD", 4.1e9}, {"INST_RETIRED:ANY_P", "INST_RETIRED.ANY", 7.3e9},
      {"BR_INST_RETIRED:ALL_BRANCHES", "BR_INST_RETIRED.ALL_BRANCHES", 1.1e9},
      {"BR_MISP_RETIRED:ALL_BRANCHES", "BR_MISP_RETIRED.ALL_BRANCHES", 3.3e6},
      {"MEM_LOAD_RETIRED:L2_MISS", "MEM_LOAD_RETIRED.L2_MISS", 2.2e7}, {"MEM_LOAD_RETIRED:L3_MISS", "MEM_LOAD_RETIRED.L3_MISS", 4.4e6},
      {"L1D_PEND_MISS:PENDING", "L1D_PEND_MISS.PENDING", 9.1e8}, {"MEM_LOAD_RETIRED:L1_MISS", "MEM_LOAD_RETIRED.L1_MISS", 5.5e7},
      {"MEM_LOAD_RETIRED:FB_HIT", "MEM_LOAD_RETIRED.FB_HIT", 1.2e7}})
    for _, model in ipairs({"skl", "skx", "icl", "icx", "spr"}) do
      near(PERF.tma_info_thread_ipc(perf), eval(group("clock-intel"), model, "IPC", ours), "IPC")
      near(PERF.tma_info_inst_mix_ipbranch(perf), eval(group("branch-intel"), model, "instructions per branch", ours), "IpBranch")
      near(PERF.tma_info_bad_spec_ipmispredict(perf),
        eval(group("branch-intel"), model, "instructions per misprediction", ours), "IpMispredict")
      near(PERF.tma_info_memory_l2mpki(perf), eval(group("l2-intel"), model, "L2 MPKI", ours), "L2MPKI")
      near(PERF.tma_info_memory_l3mpki(perf), eval(group("l3-intel"), model, "L3 MPKI", ours), "L3MPKI")
      near(PERF.tma_info_memory_load_miss_real_latency(perf),
        eval(group("l1d-intel"), model, "L1D load miss latency (cycles)", ours), "Load_Miss_Real_Latency")
    end
  end)

  it("Intel GFLOP/s: DP plus SP is perf's GFLOPs (skl, icl, spr)", function()
    local rows, secs = {}, 1.5
    for i, w in ipairs({"SCALAR", "128B_PACKED", "256B_PACKED", "512B_PACKED"}) do
      for j, p in ipairs({"DOUBLE", "SINGLE"}) do
        rows[#rows + 1] = {"FP_ARITH_INST_RETIRED:" .. w .. "_" .. p, "FP_ARITH_INST_RETIRED." .. w .. "_" .. p, 1e7 * (i * 3 + j)}
      end
    end
    local ours, perf = both(rows)
    perf.duration_time = secs
    for _, model in ipairs({"skl", "icl", "spr"}) do
      local ctx = {seconds = secs}
      near(PERF.tma_info_system_gflops(perf), eval(group("flops-dp-intel"), model, "DP GFLOP/s", ours, ctx) +
        eval(group("flops-sp-intel"), model, "SP GFLOP/s", ours, ctx), "GFLOPs")
    end
  end)

  it("Skylake top-down level 1", function()
    local ours, perf = both({
      {"CPU_CLK_UNHALTED:THREAD_P", "CPU_CLK_UNHALTED.THREAD", 1e9}, {"UOPS_ISSUED:ANY", "UOPS_ISSUED.ANY", 2.6e9},
      {"UOPS_RETIRED:RETIRE_SLOTS", "UOPS_RETIRED.RETIRE_SLOTS", 2.2e9},
      {"INT_MISC:RECOVERY_CYCLES", "INT_MISC.RECOVERY_CYCLES", 5e7},
      {"IDQ_UOPS_NOT_DELIVERED:CORE", "IDQ_UOPS_NOT_DELIVERED.CORE", 6e8}})
    local g, sum = group("topdown-skl"), 0
    for _, model in ipairs({"skl", "skx", "clx"}) do
      sum = 0
      for name, f in pairs({["retiring"] = PERF.skl_retiring, ["bad speculation"] = PERF.skl_bad_speculation,
                            ["front-end bound"] = PERF.skl_frontend_bound, ["back-end bound"] = PERF.skl_backend_bound}) do
        local v = eval(g, model, name, ours)
        near(f(perf), v, name); sum = sum + v
      end
      near(1, sum, "the four add up to 1")
    end
    -- the known answer: 4e9 slots, 2.2e9 retired
    near(0.55, eval(g, "skl", "retiring", ours), "retiring")
  end)

  it("Ice Lake and Sapphire Rapids top-down level 1: the four add up to 1, retiring and front end as perf's", function()
    -- perf reads level 1 from PERF_METRICS, fractions of TOPDOWN.SLOTS:
    -- tma_retiring = topdown-retiring / (sum of the four), tma_frontend_bound
    -- = topdown-fe-bound / (sum) - INT_MISC.UOP_DROPPING / slots
    -- (icl-metrics.json, spr-metrics.json).  On a reading where the metric
    -- register's slots are the general counters' (its definition), both agree.
    local bad = {}
    for _, model in ipairs({"icl", "icx", "spr"}) do
      local group_name = "topdown-icl"
      local ours = {["TOPDOWN:SLOTS_P"] = 5e9, ["UOPS_ISSUED:ANY"] = 2.5e9, ["UOPS_RETIRED:SLOTS"] = 2e9,
                    ["INT_MISC:RECOVERY_CYCLES"] = 4e7, ["IDQ_UOPS_NOT_DELIVERED:CORE"] = 1.1e9, ["INT_MISC:UOP_DROPPING"] = 1e8}
      local perf = {["topdown-retiring"] = 2e9, ["topdown-fe-bound"] = 1.1e9, slots = 5e9, ["INT_MISC.UOP_DROPPING"] = 1e8}
      local g, sum = group(group_name), 0
      near(perf["topdown-retiring"] / perf.slots, eval(g, model, "retiring", ours), "retiring")
      near(perf["topdown-fe-bound"] / perf.slots - perf["INT_MISC.UOP_DROPPING"] / perf.slots,
        eval(g, model, "front-end bound", ours), "front-end bound")
      for _, name in ipairs({"retiring", "bad speculation", "front-end bound", "back-end bound"}) do
        sum = sum + eval(g, model, name, ours)
      end
      near(1, sum, "the four add up to 1")
      bad[model] = eval(g, model, "bad speculation", ours)
    end
    -- one definition, the width its data: Ice Lake and Ice Lake-SP allocate
    -- 5 slots a cycle, Sapphire Rapids 6, so each cycle of recovery costs
    -- Sapphire Rapids one slot more
    near(bad.icl, bad.icx, "bad speculation, icl and icx")
    near(4e7 / 5e9, bad.spr - bad.icl, "a recovery cycle's sixth slot")
  end)

  it("Zen branch misprediction ratio and Zen 4 top-down level 1", function()
    local ours, perf = both({
      {"RETIRED_BRANCH_INSTRUCTIONS", "ex_ret_brn", 8e8}, {"RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED", "ex_ret_brn_misp", 1.6e7},
      {"RETIRED_INSTRUCTIONS", "ex_ret_instr", 4e9}})
    for _, model in ipairs({"amd64_fam19h_zen3", "amd64_fam19h_zen4"}) do
      near(PERF.branch_misprediction_ratio(perf),
        eval(group("branch-zen"), model, "branch misprediction ratio", ours), "branch_misprediction_ratio")
    end
    ours, perf = both({
      {"CYCLES_NOT_IN_HALT", "ls_not_halted_cyc", 1e9},
      {"DISPATCH_STALLS_1:FE_NO_OPS", "de_no_dispatch_per_slot.no_ops_from_frontend", 1.2e9},
      {"DISPATCH_STALLS_1:BE_STALLS", "de_no_dispatch_per_slot.backend_stalls", 1.5e9},
      {"DISPATCH_STALLS_1:SMT_CONTENTION", "de_no_dispatch_per_slot.smt_contention", 0},
      {"OPS_SOURCE_DISPATCHED_FROM_DECODER:DECODER:OPCACHE:LOOP_BUFFER", "de_src_op_disp.all", 3.3e9},
      {"RETIRED_OPS", "ex_ret_ops", 3e9}})
    local g, sum = group("topdown-zen4"), 0
    for name, f in pairs({["front-end bound"] = PERF.zen4_frontend_bound, ["bad speculation"] = PERF.zen4_bad_speculation,
                          ["back-end bound"] = PERF.zen4_backend_bound, ["SMT contention"] = PERF.zen4_smt_contention,
                          ["retiring"] = PERF.zen4_retiring}) do
      local v = eval(g, "amd64_fam19h_zen4", name, ours)
      near(f(perf), v, name); sum = sum + v
    end
    near(1, sum, "the five add up to 1 on this reading")
  end)
end)

describe("a group that does not fit this machine", function()
  it("stat -M memory-zen under a forced Zen 4 says what it cannot count, and exits 0", function()
    local r = helpers.run({"stat", "-x,", "-M", "memory-zen", "--", "true"}, {env = "LIBPFM_FORCE_PMU=amd64_fam19h_zen4"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("DRAM_IO_NEAR", r.err)
    assert.not_matches("unknown event", r.err)
  end)

  it("list --groups shows the models; list --group the per-model names", function()
    local r = helpers.run({"list", "--groups"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("topdown%-zen4%s+zen4%s", r.out)
    r = helpers.run({"list", "--group", "memory-zen"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("amd64_fam19h_zen4: ANY_DATA_CACHE_FILLS_FROM_SYSTEM:DRAM_IO_NEAR", r.out)
  end)
end)
