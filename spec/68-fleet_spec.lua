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
    local env = require("pmcsh._pmc").environment()
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
    {"bench-stream", "--json", "-t", "1", "-k", "copy", "--n", "64K", "--rounds", "1", "--reps", "2"},
    {"bench-chase", "--json", "--from", "4K", "--to", "8K", "--samples", "1", "--sample_ms", "1", single = true},
    {"stat", "--json", "-e", "page-faults", "--", "true", stderr = true},
    {"survey", "--json", "-e", "page-faults", "-k", "copy", "--n", "64K", "--reps", "2"},
    {"bandwidth", "--json", "--seconds", "0.01", single = true, may_fail = true},
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
end)
