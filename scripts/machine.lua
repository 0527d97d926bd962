-- What this machine offers for measurement: CPU, PMUs, permissions, caches,
-- huge pages, clocks: pmcsh.machine's facts, with the PMUs and permissions.
local machine = require("pmcsh.machine")
local metrics = require("pmcsh.metrics")
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

local PARANOID = {
  ["-1"] = "no restrictions",
  ["0"] = "CPU-wide and kernel counting allowed",
  ["1"] = "per-process user and kernel counting; no CPU-wide without CAP_PERFMON",
  ["2"] = "user-only counting of own processes (:u) without CAP_PERFMON",
}

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
    }
    local sm = stream.machine()
    m.stream_isa, m.stream_variants, m.reference_runs = sm.isa, sm.variants, sm.reference_runs
    if opts.json then
      m.fingerprint = machine.fingerprint()
      print(require("cjson").encode(m))
      return 0
    end
    print(string.format("cpu          %s (online %s)", m.cpu, m.cpus))
    if m.emulated then
      print(string.format("emulated     %s: instructions are exact, times mean nothing", m.emulated))
    end
    print(string.format("PMUs         %s", table.concat(pmus, " ")))
    print(string.format("hardware PMU %s", has_cpu_pmu and "yes"
      or "no: cycles, instructions and other hardware events cannot be counted here"))
    print(string.format("paranoid     %s (%s)", paranoid, PARANOID[paranoid] or "restricted"))
    local size = metrics.size
    for _, c in ipairs(m.caches) do
      print(string.format("cache        L%d %-12s %6s  line %s B  cpus %s", c.level or 0, c.type or "?",
        c.size and size(c.size) or "?", c.line or "?", c.shared_cpu_list or "?"))
    end
    print(string.format("huge pages   2M reserved %d, 1G reserved %d; THP %s", m.hugepages_2m,
      m.hugepages_1g, m.thp or "?"))
    print(string.format("TSC          %s", m.constant_tsc and "constant and nonstop" or "not constant"))
    local vs = {}
    for _, v in ipairs(m.stream_variants) do
      vs[#vs + 1] = v.name .. (v.runs and "" or " (not on this cpu)")
    end
    print(string.format("STREAM loops %s runs (variants: %s; PMCSH_ISA or isa= picks one)", m.stream_isa,
      table.concat(vs, ", ")))
    return 0
  end,
}
