-- Machine facts (pmcsh.machine): parsing checked on a fake sysfs/procfs
-- tree (the root argument), so the answers are known whatever the host;
-- on the real host, only what must hold anywhere.
local machine = require("pmcsh.machine")
local h = require("helpers")
local pmc = require("pmcsh.pmc")

local write = require("helpers").sysfs_write

-- Two cpus with private L1d, L1i, L2 and one shared L3; cpu1 lists its
-- indexes in another order (sysfs promises none).
local root = require("helpers").tmpdir()
local function cache(cpu, idx, level, typ, size, shared)
  local d = string.format("%s/sys/devices/system/cpu/cpu%d/cache/index%d/", root, cpu, idx)
  write(d .. "level", level)
  write(d .. "type", typ)
  write(d .. "size", size)
  write(d .. "coherency_line_size", "64")
  write(d .. "shared_cpu_list", shared)
end
cache(0, 0, 1, "Data", "48K", "0")
cache(0, 1, 1, "Instruction", "32K", "0")
cache(0, 2, 2, "Unified", "2048K", "0")
cache(0, 3, 3, "Unified", "96M", "0-1")
cache(1, 0, 3, "Unified", "96M", "0-1")
cache(1, 1, 1, "Data", "48K", "1")
cache(1, 2, 2, "Unified", "2048K", "1")
write(root .. "/sys/devices/system/cpu/online", "0-1")
write(root .. "/sys/devices/system/cpu/cpu1/topology/physical_package_id", "0")
write(root .. "/sys/devices/system/cpu/cpu1/topology/core_id", "7")
write(root .. "/sys/devices/system/cpu/cpu1/node3/x", "")
write(root .. "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "8")
write(root .. "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "5")
write(root .. "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages", "0")
write(root .. "/sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages", "0")
write(root .. "/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never")
write(root .. "/proc/meminfo", "MemTotal:       16000000 kB\nMemFree:         1000 kB\nMemAvailable:    1234 kB")
write(root .. "/proc/cpuinfo", "processor\t: 0\nmodel name\t: Fake CPU 9000\nflags\t\t: fpu tsc constant_tsc nonstop_tsc")

describe("machine facts on a fake tree", function()
  teardown(function() os.execute("rm -rf '" .. root .. "'") end)

  it("caches: data and unified only, level ascending, sizes in bytes, from sysfs", function()
    local c, source = require("pmcsh._machine").caches(1, root)
    assert.are.equal("sysfs", source)
    assert.are.same({1, 2, 3}, {c[1].level, c[2].level, c[3].level})
    assert.are.same({48 * 1024, 2048 * 1024, 96 * 2^20}, {c[1].size, c[2].size, c[3].size})
    assert.are.same({"Data", "Unified", "Unified"}, {c[1].type, c[2].type, c[3].type})
    assert.are.equal(64, c[1].line)
    assert.are.equal("0-1", c[3].shared_cpu_list)
  end)

  it("the last-level caches count a shared cache once", function()
    assert.are.same({bytes = 96 * 2^20, count = 1}, machine.llc(root))
  end)

  it("a tree with no caches says none, never this host's", function()
    local empty = os.tmpname()
    local c, source = require("pmcsh._machine").caches(0, empty)
    os.remove(empty)
    assert.are.same({}, c)
    assert.are.equal("none", source)
  end)

  it("cpus, topology, huge pages, THP, memory, TSC and model", function()
    assert.are.same({0, 1}, machine.online(root))
    assert.are.same({cpu = 1, socket = 0, die = 0, core = 7, node = 3}, machine.of(1, root))
    assert.are.same({{size = 2^21, nr = 8, free = 5}, {size = 2^30, nr = 0, free = 0}}, machine.hugepages(root))
    assert.are.equal("always [madvise] never", machine.thp(root))
    assert.are.equal(1234 * 1024, machine.mem_available(root))
    assert.are.equal("Fake CPU 9000", machine.model(root))
    -- the TSC is x86's: elsewhere the same flags mean nothing
    local x86 = require("pmcsh.stream").machine().isa ~= "generic"
    assert.are.equal(x86, machine.tsc(root))
  end)

  it("the fingerprint reads the machine's identity and state from the tree", function()
    write(root .. "/proc/cpuinfo", "processor\t: 0\nvendor_id\t: GenuineFake\ncpu family\t: 6\nmodel\t\t: 143\n" ..
      "model name\t: Fake CPU 9000\nstepping\t: 8\nmicrocode\t: 0x2b000590\nflags\t\t: fpu tsc constant_tsc nonstop_tsc\n\n" ..
      "processor\t: 1\nvendor_id\t: Other\nmicrocode\t: 0x1\n")
    write(root .. "/proc/sys/kernel/hostname", "fake1")
    write(root .. "/proc/sys/kernel/osrelease", "6.1.0-fake")
    write(root .. "/proc/sys/kernel/perf_event_paranoid", "2")
    write(root .. "/proc/sys/kernel/nmi_watchdog", "1")
    write(root .. "/sys/devices/system/cpu/smt/control", "on")
    write(root .. "/sys/devices/system/node/online", "0-1")
    write(root .. "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance")
    write(root .. "/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver", "intel_pstate")
    write(root .. "/sys/devices/system/cpu/intel_pstate/no_turbo", "1")
    write(root .. "/sys/kernel/mm/transparent_hugepage/defrag", "always defer [madvise] never")
    write(root .. "/sys/bus/event_source/devices/cpu/rdpmc", "2")
    write(root .. "/sys/bus/event_source/devices/software/type", "1")
    write(root .. "/sys/hypervisor/type", "xen")
    write(root .. "/sys/class/dmi/id/bios_version", "2.1.7")
    local fp = machine.fingerprint(root)
    local expect = {host = "fake1", hostname = "fake1", kernel = "6.1.0-fake", cpu_vendor = "GenuineFake",
      cpu_model = "Fake CPU 9000", cpu_family = 6, cpu_model_id = 143, cpu_stepping = 8, microcode = "0x2b000590",
      cpus = 2, sockets = 1, cores = 2, threads_per_core = 1, smt = "on", numa_nodes = 2, llc_bytes = 96 * 2^20,
      mem_total = 16000000 * 1024, thp = "madvise", thp_defrag = "madvise", governor = "performance",
      cpufreq_driver = "intel_pstate", boost = false, perf_event_paranoid = 2, nmi_watchdog = 1, rdpmc = 2,
      hypervisor = "xen", bios = "2.1.7", pmus = {"cpu", "software"}}
    if os.getenv("SLURMD_NODENAME") then expect.host = os.getenv("SLURMD_NODENAME") end
    for k, v in pairs(expect) do assert.are.same(v, fp[k], k) end
    assert.are.same({{level = 1, type = "Data", size = 48 * 1024}, {level = 2, type = "Unified", size = 2048 * 1024},
      {level = 3, type = "Unified", size = 96 * 2^20}}, fp.caches)
    assert.is_nil(fp.product)                    -- absent from the tree: absent, never guessed
    assert.are.equal(require("pmcsh.paths").version, fp.pmcsh)
    -- what the tree cannot hold stays this process's
    assert.are.equal(#machine.cpus(), fp.cpus_allowed)
    assert.is_string(fp.arch); assert.is_string(fp.isa); assert.is_boolean(fp.hardware_pmu)
    assert.are.same(fp, require("cjson").decode(require("cjson").encode(fp)))   -- plain data
  end)

  it("cpu lists parse as sysfs and perf write them", function()
    assert.are.same({0, 1, 2, 3, 8, 10, 11}, machine.parse_list("0-3,8,10-11"))
    assert.are.same({0, 28}, machine.parse_list("28,0,0"))
    assert.is_nil((machine.parse_list("3-1")))
    assert.is_nil((machine.parse_list("")))
    assert.are.same({0, 1, 2, 3}, machine.parse_list("0-3\n"))            -- as a sysfs file reads
    assert.are.same({1, 2}, machine.parse_list(" 1 , 2 "))
    assert.matches("bad cpu list %('0%-70000' is outside 0 to 65535", select(2, machine.parse_list("0-70000")))
  end)
end)

describe("machine facts on this host", function()
  it("cache sizes grow with the level and the line is a power of two", function()
    local c = machine.caches()
    for i = 2, #c do
      assert.is_true(c[i].level >= c[i - 1].level)
      if c[i].size and c[i - 1].size and c[i].level > c[i - 1].level then
        assert.is_true(c[i].size >= c[i - 1].size, "L" .. c[i].level .. " smaller than L" .. c[i - 1].level)
      end
    end
    for _, x in ipairs(c) do
      if x.line then assert.are.equal(0, x.line & (x.line - 1)) end
    end
  end)

  it("the allowed cpus are online, and the llc is one of cpu0's caches or their sum", function()
    local online = {}
    for _, c in ipairs(machine.online()) do online[c] = true end
    for _, c in ipairs(machine.cpus()) do assert.is_true(online[c], "cpu " .. c .. " not online") end
    local llc, c = machine.llc(), machine.caches()
    if #c > 0 and c[1].source == "sysfs" then
      assert.is_true(llc.bytes >= c[#c].size and llc.count >= 1)
    end
  end)

  it("the clock tick is between 1 ns and 10 ms", function()
    local t = machine.clock_tick()
    assert.is_true(t >= 1e-9 and t <= 1e-2, tostring(t))
  end)
end)

describe("pmcsh machine", function()
  it("maps every online cpu to one socket and core, and counts the TSC's rate where msr/tsc/ opens", function()
    local r = h.run({"machine", "--json"})
    assert.are.equal(0, r.code, r.err)
    local m = require("cjson").decode(r.out)
    local seen, n = {}, 0
    for _, sk in ipairs(m.topology) do
      for _, c in ipairs(sk.cores) do
        for _, cpu in ipairs(c.cpus) do
          assert.is_nil(seen[cpu], "cpu " .. cpu .. " twice")
          seen[cpu], n = true, n + 1
        end
      end
    end
    assert.are.equal(#machine.online(), n)
    local t = h.run({"machine"})
    assert.matches("\ntopology     %d+ sockets?, %d+ cores?, %d+ threads? per core", t.out)
    assert.matches("\nclocks       clock source ", t.out)
    if machine.tsc() and machine.tsc_hz() then
      -- the TSC's rate as the stream engine counts it (rdtsc over the clock)
      assert.is_true(m.clocks.tsc_mhz > 100, tostring(m.clocks.tsc_mhz))
      assert.matches("TSC .*MHz %(rdtsc over CLOCK_MONOTONIC, 50 ms%)", t.out)
    end
  end)
end)
