-- What this machine offers for measurement: CPU, PMUs, permissions, caches,
-- huge pages, clocks: pmcsh.machine's facts, with the PMUs and permissions.
local machine = require("pmcsh.machine")
local numbers = require("pmcsh.numbers")
local pmc = require("pmcsh.pmc")
local stream = require("pmcsh.stream")
local sys = require("pmcsh.sys")

local function read(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return (s:gsub("%s+$", ""))
end

local function ls(dir)
  local out = sys.dir(dir) or {}
  table.sort(out)
  return out
end

-- Reserved huge pages of one size (bytes), 0 when the kernel has none.
local function reserved(size)
  for _, h in ipairs(machine.hugepages()) do
    if h.size == size then return h.nr end
  end
  return 0
end

-- The online cpus by socket, then core: {{socket=, node=, cores = {{core=, cpus = {...}}}}}.
local function topology()
  local sockets, by = {}, {}
  for _, cpu in ipairs(machine.online()) do
    local p = machine.of(cpu)
    local sk = by[p.socket]
    if not sk then
      sk = {socket = p.socket, nodes = {}, cores = {}, by = {}}
      by[p.socket] = sk
      sockets[#sockets + 1] = sk
    end
    sk.nodes[p.node] = true
    local key = p.die .. ":" .. p.core
    local c = sk.by[key]
    if not c then
      c = {core = p.core, die = p.die, cpus = {}}
      sk.by[key] = c
      sk.cores[#sk.cores + 1] = c
    end
    c.cpus[#c.cpus + 1] = cpu
  end
  for _, sk in ipairs(sockets) do
    local nodes = {}
    for n in pairs(sk.nodes) do nodes[#nodes + 1] = n end
    table.sort(nodes)
    sk.nodes, sk.by = nodes, nil
  end
  table.sort(sockets, function(a, b) return a.socket < b.socket end)
  return sockets
end

-- The clocks a measurement reads: the clock source, the frequency driver
-- and governor, and the TSC's rate as the stream engine counts it (rdtsc
-- over CLOCK_MONOTONIC: machine.tsc_hz; not msr/tsc/, which counts only
-- while this task runs, over wall time).
local function clocks()
  local hz = machine.tsc_hz()
  return {
    clocksource = read("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
    cpufreq_driver = read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver"),
    governor = read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
    min_khz = tonumber(read("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_min_freq") or ""),
    max_khz = tonumber(read("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq") or ""),
    tsc_mhz = hz and hz / 1e6,
  }
end

local PARANOID = {
  ["-1"] = "no restrictions",
  ["0"] = "CPU-wide and kernel counting allowed",
  ["1"] = "per-process user and kernel counting; no CPU-wide without CAP_PERFMON",
  ["2"] = "user-only counting of own processes (:u) without CAP_PERFMON",
}

-- The sockets, their cores and cpus, and the NUMA nodes, a few lines.
local function print_topology(topo)
  local ncores, nthreads, nodes = 0, 0, {}
  for _, sk in ipairs(topo) do
    ncores = ncores + #sk.cores
    for _, c in ipairs(sk.cores) do nthreads = math.max(nthreads, #c.cpus) end
    for _, n in ipairs(sk.nodes) do nodes[n] = true end
  end
  local nn = 0
  for _ in pairs(nodes) do nn = nn + 1 end
  print(string.format("topology     %d socket%s, %d core%s, %d thread%s per core, %d NUMA node%s", #topo,
    #topo == 1 and "" or "s", ncores, ncores == 1 and "" or "s", nthreads, nthreads == 1 and "" or "s",
    nn, nn == 1 and "" or "s"))
  for _, sk in ipairs(topo) do
    local cores = {}
    for _, c in ipairs(sk.cores) do cores[#cores + 1] = string.format("%d:[%s]", c.core, machine.format_list(c.cpus)) end
    -- core:[cpus], wrapped under the socket's line
    local line, lines = "", {}
    for _, w in ipairs(cores) do
      if #line + #w > 60 and line ~= "" then lines[#lines + 1] = line; line = "" end
      line = line == "" and w or line .. " " .. w
    end
    lines[#lines + 1] = line
    local nodes_s = {}
    for _, n in ipairs(sk.nodes) do nodes_s[#nodes_s + 1] = tostring(n) end
    print(string.format("  socket %-3d node %s, cores %s", sk.socket, table.concat(nodes_s, ","), lines[1]))
    for i = 2, #lines do print(string.rep(" ", 26) .. lines[i]) end
  end
end

return {
  description = "what this machine offers for measurement: PMUs, permissions, caches, clocks",
  options = {
    {name = "json", type = "flag", help = "one JSON object instead of text"},
  },
  run = function(opts)
    local pmus = ls(machine.SYSFS_PMUS)
    local has_cpu_pmu = pmc.environment().cpu_pmu
    local paranoid = read("/proc/sys/kernel/perf_event_paranoid") or "?"
    local m = {
      cpu = machine.model(),
      cpus = machine.format_list(machine.online()),
      pmus = pmus,
      hardware_pmu = has_cpu_pmu,
      perf_event_paranoid = tonumber(paranoid),
      caches = machine.caches(),   -- sizes in bytes
      emulated = os.getenv("PMCSH_EMULATED"),   -- set by the arm64 lab (spec/lab/lab.sh)
      hugepages_2m = reserved(2 << 20),
      hugepages_1g = reserved(1 << 30),
      thp = machine.thp(),
      constant_tsc = machine.tsc(),
      topology = topology(),
      clocks = clocks(),
    }
    local sm = stream.machine()
    m.stream_isa, m.stream_variants, m.reference_runs = sm.isa, sm.variants, sm.reference_runs
    if opts.json then
      m.fingerprint = machine.fingerprint()
      print(require("cjson").encode(m))
      return 0
    end
    print(string.format("cpu          %s (online %s)", m.cpu, m.cpus))
    print_topology(m.topology)
    if m.emulated then
      print(string.format("emulated     %s: instructions are exact, times mean nothing", m.emulated))
    end
    print(string.format("PMUs         %s", table.concat(pmus, " ")))
    print(string.format("hardware PMU %s", has_cpu_pmu and "yes"
      or "no: cycles, instructions and other hardware events cannot be counted here"))
    print(string.format("paranoid     %s (%s)%s", paranoid, PARANOID[paranoid] or "restricted",
      sys.geteuid() == 0 and "; this user is root: it counts everything" or ""))
    local size = numbers.size
    for _, c in ipairs(m.caches) do
      print(string.format("cache        L%d %-12s %6s  line %s B  cpus %s", c.level or 0, c.type or "?",
        c.size and size(c.size) or "?", c.line or "?", c.shared_cpu_list or "?"))
    end
    print(string.format("huge pages   2M reserved %d, 1G reserved %d; THP %s", m.hugepages_2m,
      m.hugepages_1g, m.thp or "?"))
    print(string.format("TSC          %s%s", m.constant_tsc and "constant and nonstop" or "not constant",
      m.clocks.tsc_mhz and string.format(", %.1f MHz (rdtsc over CLOCK_MONOTONIC, 50 ms)", m.clocks.tsc_mhz) or ""))
    local cl = m.clocks
    print(string.format("clocks       clock source %s; frequency driver %s, governor %s%s", cl.clocksource or "?",
      cl.cpufreq_driver or "none", cl.governor or "none",
      cl.max_khz and string.format(", %.0f-%.0f MHz", (cl.min_khz or 0) / 1e3, cl.max_khz / 1e3) or
      " (the hypervisor or firmware sets the frequency)"))
    local vs = {}
    for _, v in ipairs(m.stream_variants) do
      vs[#vs + 1] = v.name .. (v.runs and "" or " (not on this cpu)")
    end
    print(string.format("STREAM loops %s runs (variants: %s; PMCSH_ISA or isa= picks one)", m.stream_isa,
      table.concat(vs, ", ")))
    return 0
  end,
}
