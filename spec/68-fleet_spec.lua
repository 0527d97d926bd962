-- Fleet: the fingerprint every result carries, checked on this host
-- against what other programs say of it.
local h = require("helpers")
local cjson = require("cjson")
local machine = require("pmcsh.machine")

-- The first line of a shell command's output.
local function sh(cmd)
  local p = assert(io.popen(cmd .. " 2>/dev/null"))
  local l = p:read("l")
  p:close()
  return l
end

describe("the fingerprint on this host", function()
  local fp = machine.fingerprint()

  it("names the machine as uname and the C library do", function()
    assert.are.equal(sh("uname -n"), fp.hostname)
    assert.are.equal(os.getenv("SLURMD_NODENAME") or fp.hostname, fp.host)
    assert.are.equal(sh("uname -r"), fp.kernel)
    assert.are.equal(sh("uname -m"), fp.arch)
    assert.are.equal(tonumber(sh("getconf _NPROCESSORS_ONLN")), fp.cpus)
    assert.are.equal(tonumber(sh("nproc")), fp.cpus_allowed)
    -- sysinfo's total RAM (getconf) is /proc/meminfo's MemTotal, to the page
    local pages, page = tonumber(sh("getconf _PHYS_PAGES")), tonumber(sh("getconf PAGESIZE"))
    assert.is_true(math.abs(pages * page - fp.mem_total) <= page, pages * page .. " vs " .. fp.mem_total)
  end)

  it("has a topology that adds up and caches that grow with the level", function()
    assert.is_true(fp.sockets >= 1 and fp.cores >= fp.sockets)
    assert.are.equal(fp.cpus, fp.cores * fp.threads_per_core)
    assert.is_true(fp.numa_nodes >= 1)
    local top = 0
    for i, c in ipairs(fp.caches) do
      assert.is_true(c.size > 0 and c.level >= (i > 1 and fp.caches[i - 1].level or 1))
      top = math.max(top, c.size)
    end
    if #fp.caches > 0 then assert.is_true(fp.llc_bytes >= top) end
  end)

  it("says the counting state the pmc module sees", function()
    local env = require("pmcsh._events").environment()
    assert.are.equal(env.paranoid, fp.perf_event_paranoid)
    assert.are.equal(env.cpu_pmu, fp.hardware_pmu)
    local pmus = {}
    for name in io.popen("ls /sys/bus/event_source/devices"):lines() do pmus[#pmus + 1] = name end
    table.sort(pmus)
    assert.are.same(pmus, fp.pmus)
    if fp.hardware_pmu then assert.is_true(pmc.group{"instructions:u"} ~= nil) end
    if os.getenv("PMCSH_ISA") == nil then assert.are.equal(require("pmcsh.stream").machine().isa, fp.isa) end
    assert.are.equal(sh(h.shquote(h.exe) .. " --version"):match("^pmcsh (%S+)"), fp.pmcsh)
  end)

  it("names a hypervisor exactly where cpuinfo's flags say there is one (x86)", function()
    local flags = sh("grep -m1 '^flags' /proc/cpuinfo")
    if not h.need(flags, "no x86 flags in /proc/cpuinfo") then return end
    local under = (" " .. flags .. " "):find(" hypervisor ", 1, true) ~= nil
    assert.are.equal(under, fp.hypervisor ~= "none", fp.hypervisor)
    local vendor = sh("grep -m1 '^vendor_id' /proc/cpuinfo"):match(":%s*(.*)$")
    assert.are.equal(vendor, fp.cpu_vendor)
  end)

  it("under Slurm names the node, the job and the task from Slurm", function()
    local r = h.run({"-e", "print(require('cjson').encode(require('pmcsh.machine').fingerprint()))"},
      {env = "SLURMD_NODENAME=n7 SLURM_JOB_ID=42 SLURM_PROCID=3"})
    assert.are.equal(0, r.code, r.err)
    local f = cjson.decode(r.out)
    assert.are.same({"n7", fp.hostname, "42", 3}, {f.host, f.hostname, f.job, f.task})
    assert.is_nil(fp.job == nil and os.getenv("SLURM_JOB_ID") or nil)
  end)
end)

describe("every recipe's --json and results file", function()
  -- each recipe's --json, the cheapest way: JSON lines start with the
  -- fingerprint's line, a single object carries it
  local cases = {
    {"machine", "--json", single = true},
    {"list", "--json", "page-faults"},
    {"latency", "--json", "--from", "4K", "--to", "8K", "--samples", "1", "--sample_ms", "1"},
    {"parallelism", "--json", "--sizes", "64K", "--max", "2", "--samples", "1", "--sample_ms", "1"},
    {"loaded", "--json", "--size", "1M", "--bw-size", "1M", "--delays", "0", "--samples", "1", "--sample_ms", "2"},
    {"bench-stream", "--json", "-t", "1", "-k", "copy", "--n", "64K", "--rounds", "2", "--reps", "3",
      -- the samples compare reads: MB/s of every repetition of every round, the best the headline
      check = function(recs)
        for _, key in ipairs({"samples", "ref_samples"}) do
          assert.are.equal(2 * 3, #recs[1][key], key)
          local best = math.max(table.unpack(recs[1][key]))
          assert.near(key == "samples" and recs[1].value or recs[1].ref_mbps, best, 1e-9 * best)
        end
      end},
    {"bench-chase", "--json", "--size", "64K", "--pairs", "1", "--from", "4K", "--to", "8K", "--samples", "1",
      "--sample_ms", "1"},
    -- stat's JSON lines are perf stat's: the fingerprint's line only when asked
    {"stat", "--json", "--fingerprint", "-e", "page-faults", "--", "true", stderr = true},
    {"survey", "--json", "-e", "page-faults", "-k", "copy", "--n", "64K", "--reps", "2"},
    {"bandwidth", "--json", "--seconds", "0.01", may_fail = true},
  }
  for _, c in ipairs(cases) do
    it(c[1] .. " --json", function()
      local r = h.run(c)
      if c.may_fail and not h.need(r.code == 0, c[1] .. " cannot run here: " .. r.err:gsub("\n.*", "")) then
        return
      end
      assert.are.equal(0, r.code, r.err)
      local text = c.stderr and r.err or r.out
      if c.single then
        local o = cjson.decode(text)
        assert.are.equal(machine.fingerprint().host, o.fingerprint.host)
        assert.is_string(o.fingerprint.kernel)
      else
        local head, recs = h.json_lines(text)
        assert.are.equal(c[1], head.recipe)
        assert.are.equal(machine.fingerprint().host, head.fingerprint.host)
        assert.is_true(#recs >= 1)
        if c.check then c.check(recs) end
      end
    end)
  end

  it("a survey's results file carries it in its header", function()
    local dir = h.tmpdir()
    local r = h.run({"survey", "-e", "page-faults", "-k", "copy", "--n", "64K", "--reps", "2", "--out", dir .. "/"},
      {env = "SLURMD_NODENAME=n2 SLURM_JOB_ID=7 SLURM_PROCID=1"})
    assert.are.equal(0, r.code, r.err)
    local file = dir .. "/survey-n2-7-1.jsonl"        -- DIR/: a file per task
    local hdr = cjson.decode(h.slurp(file):match("^[^\n]+"))
    assert.are.equal("header", hdr.type)
    assert.are.same({"n2", "7", 1}, {hdr.fingerprint.host, hdr.fingerprint.job, hdr.fingerprint.task})
    -- the same task again: the file holds results, and is not overwritten
    local again = h.run({"survey", "-e", "page-faults", "-k", "copy", "--n", "64K", "--reps", "2", "--out",
      dir .. "/survey-%h-%j-%t.jsonl"}, {env = "SLURMD_NODENAME=n2 SLURM_JOB_ID=7 SLURM_PROCID=1"})
    assert.are.equal(1, again.code)
    assert.matches("already holds results", again.err)
    local bad = h.run({"survey", "-e", "page-faults", "--out", dir .. "/%x.jsonl"})
    assert.are.equal(2, bad.code)
    assert.matches("unknown %%x in a results name", bad.err)
    os.execute("rm -rf " .. h.shquote(dir))
  end)

  -- the keys of an object at every level, in the order a line writes them
  local function key_order(line)
    local keys = {}
    for k in line:gmatch('"([^"]+)":') do keys[#keys + 1] = k end
    return keys
  end

  it("writes its keys in the same, sorted order on every run: two runs' headers differ only in values", function()
    local dir = h.tmpdir()
    local heads = {}
    for i = 1, 2 do
      local r = h.run({"survey", "-e", "page-faults", "-k", "copy", "--n", "64K", "--reps", "2", "--out",
        dir .. "/" .. i .. ".jsonl"})
      assert.are.equal(0, r.code, r.err)
      heads[i] = h.slurp(dir .. "/" .. i .. ".jsonl"):match("^[^\n]+")
    end
    os.execute("rm -rf " .. h.shquote(dir))
    local keys = key_order(heads[1])
    assert.is_true(#keys > 10, heads[1])
    assert.are.same(keys, key_order(heads[2]))
    -- the fingerprint's own keys, sorted
    local fp = heads[1]:match('"fingerprint":(%b{})')
    local top = {}
    for k in fp:gsub("%b[]", ""):sub(2):gsub("%b{}", ""):gmatch('"([^"]+)":') do top[#top + 1] = k end
    local sorted = table.move(top, 1, #top, 1, {})
    table.sort(sorted)
    assert.are.same(sorted, top)
    -- and results.head, the JSON lines' first record, alike
    local r1 = h.run({"-e", "print(require('pmcsh.results').head('x'))"})
    local r2 = h.run({"-e", "print(require('pmcsh.results').head('x'))"})
    assert.are.same(key_order(r1.out), key_order(r2.out))
  end)

  it("has one encoder, pmcsh.json: keys sorted at every level, lists kept, cjson reads it back", function()
    local json = require("pmcsh.json")
    local v = {z = 1, a = {y = true, b = {3, 2.5, "q\"/\n\1"}}, m = {}, n = -7}
    local s = json.encode(v)
    assert.are.equal('{"a":{"b":[3,2.5,"q\\"/\\n\\u0001"],"y":true},"m":{},"n":-7,"z":1}', s)
    assert.are.same(v, cjson.decode(s))
    assert.has_error(function() json.encode({0 / 0}) end)
    assert.has_error(function() json.encode({f = print}) end)
  end)
end)

describe("the fleet's statistics (pmcsh.metrics)", function()
  local metrics = require("pmcsh.metrics")

  it("median, MAD and the robust z-score as Iglewicz and Hoaglin define them", function()
    assert.are.equal(100, metrics.median({101, 99, 100, 100.5, 50}))
    assert.are.equal(1, metrics.mad({101, 99, 100, 100.5, 50}))
    assert.are.equal(3.5, metrics.median({1, 6, 3, 4}))
    assert.near(-33.725, metrics.robust_z(50, 100, 1), 1e-9)
    assert.are.equal(0, metrics.robust_z(7, 7, 0))
    assert.are.equal(math.huge, metrics.robust_z(8, 7, 0))
  end)

  it("Student's t quantiles match the printed table to its 3 decimals", function()
    for df, t in pairs({[1] = 12.706, [2] = 4.303, [5] = 2.571, [10] = 2.228, [30] = 2.042, [1e6] = 1.960}) do
      assert.near(t, metrics.t_quantile(0.975, df), 5e-4, "df " .. df)
    end
    assert.near(4.604, metrics.t_quantile(0.995, 4), 5e-4)
    assert.near(0.025, metrics.t_cdf(-2.776, 4), 5e-5)
  end)

  it("Welch's interval: by hand for equal spreads; a Poisson floor widens equal counts", function()
    -- means 2 and 5, variances 1, se = sqrt(2/3), df = 4: 3 -+ 2.776 * 0.8165
    local w = metrics.welch({1, 2, 3}, {4, 5, 6})
    assert.near(3, w.diff, 1e-12); assert.near(4, w.df, 1e-9)
    assert.near(3 - 2.2667, w.lo, 1e-3); assert.near(3 + 2.2667, w.hi, 1e-3)
    local exact = metrics.welch({1, 1, 1}, {2, 2, 2})
    assert.are.same({1, 1}, {exact.lo, exact.hi})           -- no spread: the difference is exact
    local floored = metrics.welch({1, 1, 1}, {2, 2, 2}, 0.95, 1, 2)
    assert.is_true(floored.lo < 0 and floored.hi > 1)     -- 1 and 2 counts: Poisson says they may be equal
    assert.is_nil((metrics.welch({1}, {1, 2})))
  end)
end)

-- A health results file of host `host` with these metric values.
local function health_file(dir, host, values, fp)
  local f = {host = host, kernel = "6.1.0", thp = "madvise", pmcsh = "0.1.0"}
  for k, v in pairs(fp or {}) do f[k] = v end
  local lines = {cjson.encode({type = "header", recipe = "health", format = "pmcsh-health/1", fingerprint = f})}
  for name, v in pairs(values) do
    lines[#lines + 1] = cjson.encode({type = "metric", name = name, value = v, unit = name:match("MB/s") and "MB/s" or "ns",
      better = name:match("MB/s") and "higher" or "lower"})
  end
  return h.write(dir .. "/health-" .. host .. ".jsonl", table.concat(lines, "\n") .. "\n")
end

describe("pmcsh compare", function()
  local dir = h.tmpdir()
  teardown(function() os.execute("rm -rf " .. h.shquote(dir)) end)
  local fleet = dir .. "/fleet"
  os.execute("mkdir " .. h.shquote(fleet))
  -- five nodes; n5 at half the bandwidth, with THP off; n4 3% off (inside the band)
  local tri = {n1 = 100, n2 = 101, n3 = 99, n4 = 97, n5 = 50}
  for host, v in pairs(tri) do
    health_file(fleet, host, {["triad MB/s"] = v, ["idle latency ns"] = 90 + #host},
      host == "n5" and {thp = "never"} or nil)
  end

  it("flags the node past |z| > 3.5 and the band, worst first, and names its fingerprint's difference", function()
    local r = h.run({"compare", fleet})
    assert.are.equal(0, r.code, r.err)
    local lines = h.lines(r.out)
    assert.matches("^pmcsh compare: 5 hosts", lines[1])
    -- on the log scale: median 99, MAD the median of |ln(x / 99)| = ln(101 / 99) (2%),
    -- z = 0.6745 ln(50 / 99) / ln(101 / 99) = -23.04
    assert.matches("^n5%s+health: triad MB/s%s+50%s+99%s+2%%%s+%-23%.04%s+%-49%.5%%  FLAGGED %(worse%)", lines[3])
    assert.matches("\nflagged: n5 %(1 metrics%)\n", r.out)
    assert.matches("\n  thp%s+never %(the rest: madvise, 4 of 4%)", r.out)
    assert.matches("1 metrics are the same on every host", r.out)  -- the latencies: 92 everywhere
    local j = cjson.decode(h.run({"compare", "--json", fleet}).out)
    assert.are.same({"n5"}, j.flagged)
    local n4
    for _, row in ipairs(j.rows) do if row.host == "n4" then n4 = row end end
    assert.is_false(n4.flagged)                          -- |z| 0.69 and 2% off
    assert.near(-0.6883, n4.z, 1e-4); assert.are.equal("log", n4.scale)
    -- a band of 1% and a z of 0.5 flag n2 and n4 (|z| 0.67 and 0.69, 2% off) too; a z of 100 flags nothing
    assert.matches("flagged: n2 %(1 metrics%), n4 %(1 metrics%), n5",
      h.run({"compare", "--band", "0.01", "--z", "0.5", fleet}).out)
    assert.matches("flagged: none", h.run({"compare", "--z", "100", fleet}).out)
  end)

  it("judges a positive metric by ratios: a node at 1% of a fleet spread +-30% is flagged", function()
    -- on the linear scale the median 90 and MAD 25 put even 0 at z = -2.43
    local wide = dir .. "/wide"
    os.execute("mkdir " .. h.shquote(wide))
    local vals = {w1 = 100, w2 = 140, w3 = 70, w4 = 120, w5 = 80, w6 = 0.9}
    for host, v in pairs(vals) do health_file(wide, host, {["triad MB/s"] = v, ["skew"] = v - 95}) end
    local j = cjson.decode(h.run({"compare", "--json", "--band", "0.5", wide}).out)
    assert.are.same({"w6"}, j.flagged)
    local row = {}
    for _, r in ipairs(j.rows) do row[r.host .. " " .. r.metric] = r end
    local w6 = row["w6 health: triad MB/s"]
    -- |ln(x / 90)|: 0.105 0.118 0.251 0.288 0.442 4.61, MAD (0.251 + 0.288) / 2
    local mad = (math.log(90 / 70) + math.log(120 / 90)) / 2
    assert.near(mad, w6.mad, 1e-12); assert.are.equal("log", w6.scale)
    assert.near(0.6745 * math.log(0.9 / 90) / mad, w6.z, 1e-9)
    assert.is_false(row["w2 health: triad MB/s"].flagged)         -- z +1.1, 56% above
    -- x - 95 takes both signs: the linear scale, where w6 is not flagged (z -2.43)
    local skew = row["w6 health: skew"]
    assert.are.equal("linear", skew.scale); assert.near(25, skew.mad, 1e-9)
    assert.near(0.6745 * (-94.1 + 5) / 25, skew.z, 1e-9)
    assert.is_false(skew.flagged)
  end)

  it("writes a baseline from the nodes not flagged, which health reads", function()
    local base = dir .. "/base.json"
    local r = h.run({"compare", fleet, "--baseline", base})
    assert.are.equal(0, r.code, r.err)
    assert.matches("left out: n5", r.out)
    local b = cjson.decode(h.slurp(base))
    local m = b.metrics["health: triad MB/s"]
    -- over n1..n4: median 99.5, MAD of ln(x / 99.5) 1%: low = min(99.5 exp(-3.5 0.01 / 0.6745), 99.5 / 1.1),
    -- the band a factor either way as the z takes ratios
    assert.near(99.5, m.median, 1e-9)
    assert.near(99.5 / 1.1, m.low, 1e-9)
    assert.is_nil(m.high)
    assert.are.same({"n1", "n2", "n3", "n4"}, b.hosts)
  end)

  it("refuses what it cannot read, naming it", function()
    assert.are.equal(2, h.run({"compare"}).code)
    local r = h.run({"compare", dir .. "/none.jsonl"})
    assert.are.equal(1, r.code); assert.matches("none%.jsonl: no such file", r.err)   -- the environment's, as bad.jsonl
    -- (a last line alone may be torn, by a kill mid-write: skipped)
    local bad = h.write(dir .. "/bad.jsonl", cjson.encode({recipe = "latency", fingerprint = {host = "x"}}) ..
      "\n{oops\n{}\n")
    r = h.run({"compare", bad, fleet})
    assert.are.equal(1, r.code); assert.matches("bad%.jsonl:2: not a JSON object", r.err)
    assert.is_nil(r.err:find("traceback", 1, true))
    local old = h.write(dir .. "/old.jsonl", '{"size":4096,"ns":1.5}\n')
    r = h.run({"compare", old, fleet})
    assert.are.equal(1, r.code); assert.matches("old%.jsonl:1: a record before any fingerprint", r.err)
  end)

  it("draws each node over the fleet median, the band and the flagged node marked", function()
    if not h.need(require("pmcsh.plot").gnuplot(), "gnuplot is not installed") then return end
    local png = dir .. "/fleet.png"
    local r = h.run({"compare", fleet, "--plot", png})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal("\137PNG", h.slurp(png):sub(1, 4))
  end)
end)

-- A file of runs of a recipe: a fingerprint line per run, then its records.
local function runs_file(path, recipe, runs, host)
  local lines = {}
  for _, recs in ipairs(runs) do
    lines[#lines + 1] = cjson.encode({recipe = recipe, fingerprint = {host = host or "x", kernel = "6.1.0"}})
    for _, r in ipairs(recs) do lines[#lines + 1] = cjson.encode(r) end
  end
  return h.write(path, table.concat(lines, "\n") .. "\n")
end

describe("pmcsh compare, A/B against run-to-run noise", function()
  local metrics = require("pmcsh.metrics")
  local dir = h.tmpdir()
  teardown(function() os.execute("rm -rf " .. h.shquote(dir)) end)
  -- runs of latency: per run the headline ns of two sizes, and samples
  -- inside each run so tight that an interval from them would call any
  -- difference real
  local function latency(name, ns1, ns2)
    local function ns(size, v, samples)
      return {type = "metric", name = "ns per load, " .. size, unit = "ns", better = "lower", value = v,
        samples = samples, context = {size = size == "1M" and 1048576 or 2097152}}
    end
    local runs = {}
    for i = 1, #ns1 do
      runs[i] = {ns("1M", ns1[i], {ns1[i], ns1[i] + 1e-3, ns1[i] + 2e-3}), ns("2M", ns2[i], {ns2[i], ns2[i] + 1e-3})}
    end
    return runs_file(dir .. "/" .. name, "latency", runs)
  end

  it("judges B - A by Welch's interval over the runs, all intervals together at --level (Bonferroni)", function()
    local a = latency("a.jsonl", {10, 11, 12}, {50, 52, 54})
    local b = latency("b.jsonl", {20, 21, 22}, {51, 53, 55})
    local r = h.run({"compare", "--json", a, b})
    assert.are.equal(0, r.code, r.err)
    local j = cjson.decode(r.out)
    assert.are.same({3, 3, 0.95}, {j.runs_a, j.runs_b, j.level})
    assert.near(1 - 0.05 / 2, j.each, 1e-12)                 -- two intervals: each at 97.5%
    local row = {}
    for _, x in ipairs(j.rows) do row[x.metric] = x end
    -- 1M: means 11 and 21, variances 1, se sqrt(2/3), df 4
    local t = metrics.t_quantile(1 - 0.025 / 2, 4)
    local one = row["latency: ns per load, 1M"]
    assert.are.same({3, 3, true}, {one.runs_a, one.runs_b, one.significant})
    assert.near(10, one.diff, 1e-9)
    assert.near(10 - t * math.sqrt(2 / 3), one.lo, 1e-9); assert.near(10 + t * math.sqrt(2 / 3), one.hi, 1e-9)
    -- 2M: means 52 and 53, variances 4: the runs hold the 1 ns apart; the
    -- repetitions inside each run (1e-3 apart) would not have
    local two = row["latency: ns per load, 2M"]
    assert.is_false(two.significant)
    assert.near(1 - t * math.sqrt(8 / 3), two.lo, 1e-9)
    assert.near(2, two.sd_runs, 1e-9)                        -- pooled over the sides
    assert.is_true(metrics.welch({52, 52.001}, {53, 53.001}).lo > 0)
    -- the text says which noise, and the verdicts
    local out = h.run({"compare", a, b}).out
    assert.matches("Welch's interval over the runs %(run%-to%-run noise%), 95%% for the 2 intervals together", out)
    assert.matches("\nlatency: ns per load, 1M%s+11%s+21%s+%+10%s+%+90%.9%%%s+3/3%s+%[[^]]+%]%s+B higher\n", out)
    assert.matches("1 metrics differ significantly, 1 show no significant difference, 0 have no interval", out)
  end)

  it("gives no interval, and no verdict, for a side of one run", function()
    local a = latency("one-a.jsonl", {10}, {50})
    local b = latency("one-b.jsonl", {20}, {51})
    local many = latency("many.jsonl", {20, 21}, {51, 52})
    local r = h.run({"compare", "--json", a, b})
    assert.are.equal(0, r.code, r.err)
    for _, x in ipairs(cjson.decode(r.out).rows) do
      assert.are.same({"one run each", nil, nil}, {x.why, x.significant, x.lo})
    end
    local row = cjson.decode(h.run({"compare", "--json", a, many}).out).rows[1]
    assert.are.equal("one run in A", row.why)
    local out = h.run({"compare", a, b}).out
    assert.matches("no interval: one run each", out)
    assert.matches("0 metrics differ significantly, 0 show no significant difference, 2 have no interval", out)
  end)

  it("takes a folder of runs per side with --ab", function()
    os.execute("mkdir -p " .. h.shquote(dir .. "/A") .. " " .. h.shquote(dir .. "/B"))
    for i, v in ipairs({10, 11, 12}) do latency("A/" .. i .. ".jsonl", {v}, {50}) end
    for i, v in ipairs({20, 21}) do latency("B/" .. i .. ".jsonl", {v}, {50}) end
    local r = h.run({"compare", "--ab", "--json", dir .. "/A", dir .. "/B"})
    assert.are.equal(0, r.code, r.err)
    local j = cjson.decode(r.out)
    assert.are.same({3, 2}, {j.runs_a, j.runs_b})
    local row = {}
    for _, x in ipairs(j.rows) do row[x.metric] = x end
    assert.is_true(row["latency: ns per load, 1M"].significant)
    -- 2M: 50 in every run: no spread, no difference (and not zero: kept)
    assert.are.same({0, 0, false}, {row["latency: ns per load, 2M"].lo, row["latency: ns per load, 2M"].hi,
      row["latency: ns per load, 2M"].significant})
    assert.are.equal(2, h.run({"compare", "--ab", dir .. "/A"}).code)
  end)

  it("pairs bench-stream's kernels across thread counts, the threads a setting of a run of one count", function()
    local function bench(name, threads, mbps)
      local runs = {}
      for i, v in ipairs(mbps) do
        runs[i] = {}
        for _, t in ipairs(threads) do
          table.insert(runs[i], {type = "metric", name = "triad MB/s", unit = "MB/s", better = "higher", value = v * t,
            samples = {v * t, 0.9 * v * t}, context = {kernel = "triad", threads = t}})
        end
      end
      return runs_file(dir .. "/" .. name, "bench-stream", runs)
    end
    local one, all = bench("t1.jsonl", {1}, {100, 110, 105}), bench("t2.jsonl", {2}, {100, 110, 105})
    local r = h.run({"compare", one, all})
    assert.are.equal(0, r.code, r.err)
    assert.matches("\nbench%-stream: triad MB/s +105 +210 +%+105 +%+100%.0%% +3/3 +%[[^]]+%] +B higher\n", r.out)
    assert.matches("settings: A and B differ in\n  threads +1 %(A%) vs 2 %(B%)\n", r.out)
    -- a run of both counts names each
    local both = bench("both.jsonl", {1, 2}, {100, 101})
    local names = {}
    for _, x in ipairs(cjson.decode(h.run({"compare", "--json", both, both}).out).rows) do names[#names + 1] = x.metric end
    table.sort(names)
    assert.are.same({"bench-stream: triad MB/s, threads 1", "bench-stream: triad MB/s, threads 2"}, names)
  end)

  it("leaves out the disturbance counts, known by their encoding, and metrics zero in every run", function()
    local function survey(name, cs)
      local function cell(event, v)
        return {type = "metric", name = event, event = event, unit = "events per loop iteration", value = v,
          context = {kernel = "copy"}}
      end
      local runs = {}
      for i = 1, 2 do
        runs[i] = {cell("perf::CS:k", cs[i]), cell("migrations:u", 0), cell("major-faults", 0), cell("faults", 1 / 512)}
      end
      return runs_file(dir .. "/" .. name, "survey", runs)
    end
    local r = h.run({"compare", "--json", survey("sa.jsonl", {3e-7, 1e-7}), survey("sb.jsonl", {9e-6, 8e-6})})
    assert.are.equal(0, r.code, r.err)
    local j = cjson.decode(r.out)
    assert.are.equal(1, #j.rows)
    assert.are.same({"survey: faults", 0, false},
      {j.rows[1].metric, j.rows[1].diff, j.rows[1].significant})
    assert.are.same({"perf::CS:k", "migrations:u"}, j.left_out.disturbances)
    assert.are.equal(1, j.left_out.zero)
  end)

  it("reads surveys of this machine, a folder of runs per side: the interval around B - A, the settings apart",
    function()
    if not h.need(#machine.cpus() >= 2, "one cpu: no second thread count") then return end
    local threads = {one = "1", all = tostring(#machine.cpus())}
    for side, t in pairs(threads) do
      os.execute("mkdir -p " .. h.shquote(dir .. "/" .. side))
      for i = 1, 2 do
        local r = h.run({"survey", "-e", "page-faults,context-switches", "-k", "copy,triad", "--n", "1M", "--reps", "10",
          "--threads", t, "--out", dir .. "/" .. side .. "/" .. i .. ".jsonl"})
        assert.are.equal(0, r.code, r.err)
      end
    end
    local r = h.run({"compare", "--ab", "--json", dir .. "/one", dir .. "/all"})
    assert.are.equal(0, r.code, r.err)
    local j = cjson.decode(r.out)
    local seen = {}
    for _, row in ipairs(j.rows) do
      seen[row.metric] = true
      assert.is_nil(row.metric:find("context-switches", 1, true))
      assert.are.same({2, 2}, {row.runs_a, row.runs_b})
      assert.is_true(row.lo <= row.diff and row.diff <= row.hi, row.metric)
      assert.near(row.b - row.a, row.diff, 1e-9 * math.abs(row.a))
    end
    assert.is_true(seen["survey: MB/s, no counters, kernel copy"] and seen["survey: MB/s, no counters, kernel triad"])
    assert.are.same({"context-switches:u", "context-switches:k"}, j.left_out.disturbances)
    r = h.run({"compare", "--ab", dir .. "/one", dir .. "/all"})
    -- (the survey's slice, a part of each thread's share of n, may differ with them)
    assert.matches("settings: A and B differ in\n[^\n]*\n?  threads%s+1 %(A%) vs " .. threads.all .. " %(B%)", r.out)
  end)
end)

describe("pmcsh health", function()
  local SMALL = {"health", "--n", "1M", "--chain", "4M", "--mlp-max", "4", "--reps", "3"}
  local function with(extra)
    local a = {table.unpack(SMALL)}
    for _, x in ipairs(extra or {}) do a[#a + 1] = x end
    return a
  end
  local dir = h.tmpdir()
  teardown(function() os.execute("rm -rf " .. h.shquote(dir)) end)

  it("refuses to judge nothing: no baseline and no threshold is a usage error naming them (exit 2)", function()
    local r = h.run({"health"})
    assert.are.same({2, ""}, {r.code, r.out})
    assert.matches("^pmcsh health: nothing to judge against: give %-%-baseline FILE .* a threshold " ..
      "%(%-%-min%-triad, %-%-min%-copy, %-%-max%-latency, %-%-min%-mlp%), or %-%-measure%-only", r.err)
    r = h.run({"health", "--measure-only", "--baseline", dir .. "/none.json"})
    assert.are.equal(2, r.code)
    assert.matches("%-%-measure%-only judges nothing", r.err)
  end)

  it("is silent and exits 0 when healthy; one line on stderr and 1 when not", function()
    local r = h.run(with({"--min-triad", "1"}))             -- 1 MB/s: any memory passes
    assert.are.same({0, "", ""}, {r.code, r.out, r.err})
    r = h.run(with({"--min-triad", "1e12", "--max-latency", "1e9"}))
    assert.are.equal(1, r.code)
    assert.are.equal("", r.out)
    assert.are.equal(1, #h.lines(r.err))
    assert.matches("^pmcsh health: %S+: triad MB/s, socket %d+ [%d.e+]+ < 1e%+12 %(%-%-min%-triad%)\n$", r.err)
  end)

  it("--measure-only -v: each measurement beside its run's own spread, nothing judged", function()
    local r = h.run(with({"--measure-only", "-v"}))
    assert.are.equal(0, r.code, r.err)
    local l = h.lines(r.out)
    local sockets, nsock = {}, 0
    for _, cpu in ipairs(machine.cpus()) do
      local sk = machine.of(cpu).socket
      if not sockets[sk] then sockets[sk], nsock = true, nsock + 1 end
    end
    assert.are.equal(2 * nsock + 3, #l)   -- triad and copy per socket, latency, mlp, the verdict
    assert.matches("^triad MB/s, socket %d+ +[%d.e+]+ MB/s +±[%d.]+%% over 3 reps$", l[1])
    assert.matches("^idle latency ns +[%d.e+]+ ns +±[%d.]+%% over 5 samples$", l[#l - 2])
    assert.matches("^mlp +[%d.e+]+ misses +%(one figure%)$", l[#l - 1])
    assert.matches(": measured in [%d.]+ s %(%-%-measure%-only: nothing judged%)$", l[#l])
  end)

  it("--json: the fingerprint, a metric per measurement whose value is its best repetition, the verdict", function()
    local r = h.run(with({"--json", "--measure-only", "--out", dir .. "/"}))
    assert.are.equal(0, r.code, r.err)
    local head, recs = h.json_lines(r.out)
    assert.are.equal("health", head.recipe)
    local by = {}
    for _, x in ipairs(recs) do by[x.name or x.type] = x end
    for name, x in pairs(by) do
      if name:match("MB/s") then
        assert.are.equal(3, #x.samples)
        assert.near(math.max(table.unpack(x.samples)), x.value, 1e-6 * x.value)   -- best of the reps
      end
    end
    assert.near(math.min(table.unpack(by["idle latency ns"].samples)), by["idle latency ns"].value, 1e-9)
    assert.is_true(by.mlp.value >= 1 and by.mlp.value <= 4 * 1.05)   -- 4 chains overlap at most 4 misses
    assert.are.same({false, nil}, {by.verdict.judged, by.verdict.healthy})
    -- the file holds the same, and compare reads it
    local file = dir .. "/health-" .. head.fingerprint.host .. "-local-0.jsonl"
    assert.matches('"type":"done"', h.slurp(file))
  end)

  it("judges against a baseline and says which check failed", function()
    local fleet = dir .. "/fleet"
    os.execute("mkdir " .. h.shquote(fleet))
    for i = 1, 3 do
      health_file(fleet, "n" .. i, {["triad MB/s, socket 0"] = 1e9 + i, ["idle latency ns"] = 1e6 + i})
    end
    local base = dir .. "/base.json"
    assert.are.equal(0, h.run({"compare", fleet, "--baseline", base}).code)
    local r = h.run(with({"--baseline", base}))
    assert.are.equal(1, r.code)
    assert.matches("triad MB/s, socket 0 [%d.e+]+ < [%d.e+]+ %(the baseline's median", r.err)
    assert.is_nil(r.err:find("latency"))               -- far below a bound on the high side: fine
    local missing = h.run(with({"-v", "--baseline", dir .. "/nothing.json"}))
    assert.are.equal(2, missing.code)      -- found before measuring: never health's 1
    assert.are.equal("", missing.out)
    assert.matches("cannot read the baseline", missing.err)
  end)
end)
