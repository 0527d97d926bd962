-- pmcsh.machine: the one face of the machine facts every engine and recipe
-- uses: cpus (those this process may run on, those online, where each
-- sits), caches, huge pages, memory, the clock and the TSC.  Gathered in C
-- (core/machine.c via pmcsh._machine) and from sysfs/procfs here; read
-- where asked, never cached across calls that may see hotplug.  Functions
-- reading sysfs take an optional root last: a fake tree, for specs.
local C = require("pmcsh._machine")
local sys = require("pmcsh._sys")
local doc = require("pmcsh.help").doc
local errors = require("pmcsh.errors")
local format = require("pmcsh.format")
local paths = require("pmcsh.paths")

local M = {}
-- The folder of the kernel's PMUs (core/sysfs.h's SYSFS_PMUS, the one name of it).
M.SYSFS_PMUS = C.sysfs_pmus

M.read_text = doc(function(path)
  errors.check("read_text", 1, path, "string")
  local f = io.open(path, "r")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s and s:match("^%s*(.-)%s*$")
end, "machine.read_text", [[
machine.read_text(path) -> a sysfs or procfs file's text, white space around
it cut, or nil when it cannot be read.]])

-- "0-3,8,10-11" -> {0, 1, 2, 3, 8, 10, 11}, or nil and a message: the C
-- parser that also reads PMU cpumasks and format bits (core/sysfs.c).
local LIST_KINDS = {cpus = true, ids = true}
M.parse_list = doc(function(s, kind)
  if kind ~= nil and not LIST_KINDS[kind] then
    errors.argument("parse_list", 2, "'cpus' or 'ids' expected, got " .. tostring(kind), 1)
  end
  if type(s) ~= "string" then return nil, "a cpu list such as 0-3,8 expected" end
  local list, msg = C.parse_list(s, kind)
  return list, msg
end, "machine.parse_list", [[
machine.parse_list("0-3,8"[, kind]) -> {0, 1, 2, 3, 8}, or nil, message: a
cpu list as sysfs and perf write them, sorted, each cpu once.  kind "cpus":
one a user typed (-C), decimal N and N-M only, no spaces, no empty item;
"ids": process or thread ids a user typed (-p, -t), decimal numbers from 1,
in the order given.]])

-- {0, 1, 2, 3, 8} -> "0-3,8": the inverse of parse_list, as sysfs writes lists.
M.format_list = doc(function(cpus)
  errors.check("format_list", 1, cpus, "table")
  local parts, i = {}, 1
  while i <= #cpus do
    local j = i
    while cpus[j + 1] == cpus[j] + 1 do j = j + 1 end
    parts[#parts + 1] = j > i and string.format("%d-%d", cpus[i], cpus[j]) or tostring(cpus[i])
    i = j + 1
  end
  return table.concat(parts, ",")
end, "machine.format_list", [[
machine.format_list({0, 1, 2, 3, 8}) -> "0-3,8": a sorted cpu list as sysfs and
perf write it (machine.parse_list reads it back).]])

M.cpus = doc(function()
  return assert(C.cpus())
end, "machine.cpus", [[
machine.cpus() -> the cpus this process may run on (sched_getaffinity), in
order: the engines' default thread count is #machine.cpus().]])

M.online = doc(errors.facade("online", function(root)
  local s = C.online(root)
  return s and M.parse_list(s) or {0}
end), "machine.online", [[
machine.online([root]) -> the online cpus, in order ({0} when sysfs says nothing).]])

M.of = doc(errors.facade("of", function(cpu, root) return C.place(cpu, root) end), "machine.of", [[
machine.of(cpu[, root]) -> {cpu=, socket=, die=, core=, node=}: where the cpu
sits (an id sysfs does not give reads 0).]])

M.threads = doc(function(pid)
  if math.type(pid) ~= "integer" then
    errors.argument("threads", 1, "a process id (an integer) expected, got " .. tostring(pid))
  end
  local names = sys.dir(string.format("/proc/%d/task", pid))
  if not names or #names == 0 then return nil, string.format("no process %d", pid) end
  local out = {}
  for _, n in ipairs(names) do out[#out + 1] = tonumber(n) end
  table.sort(out)
  return out
end, "machine.threads", [[
machine.threads(pid) -> the thread ids of process pid, sorted, or nil, message.]])

M.all_threads = doc(function()
  local out = {}
  for _, name in ipairs(sys.dir("/proc") or {}) do
    local pid = math.tointeger(tonumber(name))
    local list = pid and M.threads(pid)   -- nil: the process ended meanwhile
    for _, t in ipairs(list or {}) do out[#out + 1] = t end
  end
  table.sort(out)
  return out
end, "machine.all_threads", [[
machine.all_threads() -> every thread of every process of the machine, sorted
(a snapshot of /proc/*/task: threads come and go).]])

M.comm = doc(function(tid)
  errors.check("comm", 1, tid, "integer")
  return M.read_text(string.format("/proc/%d/comm", tid)) or "?"
end, "machine.comm", [[
machine.comm(tid) -> the command name of a thread ("bash"), or "?".]])

M.caches = doc(errors.facade("caches", function(cpu, root)
  return setmetatable(C.caches(cpu or 0, root), format.kind("pmcsh.records"))
end), "machine.caches", [[
machine.caches(cpu=0, root=nil) -> list of {level=, type=, size=bytes, line=,
shared_cpu_list=, source=}, level ascending: the data and unified caches of
the cpu, from sysfs, else (some VMs and containers list none) from sysconf
(glibc, cpuid on x86), as `source` says.  The sizes where a latency curve
steps.]])

M.llc = doc(errors.facade("llc", function(root)
  local bytes, count = C.llc(root)
  return {bytes = bytes, count = count}
end), "machine.llc", [[
machine.llc([root]) -> {bytes=, count=}: the last-level caches of all cpus,
each shared cache once (STREAM's rule sizes its arrays from bytes).]])

M.hugepages = doc(errors.facade("hugepages", function(root)
  return setmetatable(C.hugepages(root), format.kind("pmcsh.records"))
end), "machine.hugepages", [[
machine.hugepages([root]) -> list of {size=bytes, nr=, free=}: each huge page
size the kernel offers, how many are reserved and how many of those free.]])

M.thp = doc(errors.facade("thp", function(root) return C.thp(root) end), "machine.thp", [[
machine.thp([root]) -> the transparent huge page mode ("always [madvise]
never"), nil without THP.]])

M.mem_available = doc(errors.facade("mem_available", function(root) return C.mem_available(root) end), "machine.mem_available", [[
machine.mem_available([root]) -> MemAvailable in bytes, nil when unknown.]])

M.clock_tick = doc(function() return C.clock_tick() end, "machine.clock_tick", [[
machine.clock_tick() -> seconds: the smallest step CLOCK_MONOTONIC is seen to
take, reading included (STREAM's checktick).]])

M.tsc = doc(errors.facade("tsc", function(root) return C.tsc(root) end), "machine.tsc", [[
machine.tsc([root]) -> true when the TSC is constant and nonstop (cpuinfo
flags), so ticks measure time.]])

M.tsc_hz = doc(errors.facade("tsc_hz", function(ms) return C.tsc_hz(ms) end), "machine.tsc_hz", [[
machine.tsc_hz([ms]) -> the TSC's rate in Hz: rdtsc ticks over CLOCK_MONOTONIC
across a sleep of ms (default 50), as the stream engine's tsc_hz counts them;
nil where the TSC is not constant and nonstop, or off x86.]])

M.model = doc(errors.facade("model", function(root) return C.model(root) end), "machine.model", [[
machine.model([root]) -> the cpu's model name from /proc/cpuinfo, or "unknown".]])

-- The first processor block of /proc/cpuinfo as key -> value.
local function cpuinfo(root)
  local f = io.open((root or "") .. "/proc/cpuinfo", "r")
  local t = {}
  if not f then return t end
  for line in f:lines() do
    if line:match("^%s*$") then break end
    local k, v = line:match("^(.-)%s*:%s?(.*)$")
    if k and t[k] == nil then t[k] = v end
  end
  f:close()
  return t
end

-- cpuid's hypervisor signatures, by the name a person knows them by.
local HYPERVISORS = {KVMKVMKVM = "KVM", ["Microsoft Hv"] = "Hyper-V", VMwareVMware = "VMware",
  XenVMMXenVMM = "Xen", TCGTCGTCGTCG = "QEMU TCG", ["bhyve bhyve"] = "bhyve", ACRNACRNACRN = "ACRN",
  ["lrpepyh  vr"] = "Parallels", ["VBoxVBoxVBox"] = "VirtualBox"}

-- The word between brackets of a sysfs choice ("always [madvise] never").
local function chosen(s) return s and (s:match("%[(.-)%]") or s) end

M.thp_mode = doc(errors.facade("thp_mode", function(root) return chosen(C.thp(root)) end), "machine.thp_mode", [[
machine.thp_mode([root]) -> the transparent huge page mode in force ("always",
"madvise" or "never"), nil without THP.]])

local function integer(s)
  local v = s and tonumber(s)
  return v and math.tointeger(v) or v
end

-- The fields that name a machine and a task rather than describe one.
M.IDENTITY = {"host", "hostname", "job", "task"}

M.fingerprint = doc(function(root)
  errors.check("fingerprint", 1, root, "string?")
  local r = root or ""
  local function text(path) return M.read_text(r .. path) end
  local ci = cpuinfo(root)
  local fp = {}
  -- under Slurm every slurmd of one host shares gethostname(): the node's
  -- name, the job and the task come from Slurm
  local hostname = text("/proc/sys/kernel/hostname") or "unknown"
  local node, job, task = os.getenv("SLURMD_NODENAME"), os.getenv("SLURM_JOB_ID"), os.getenv("SLURM_PROCID")
  fp.host = node and node ~= "" and node or hostname
  fp.hostname = hostname
  fp.job = job ~= "" and job or nil
  fp.task = integer(task)
  fp.kernel = text("/proc/sys/kernel/osrelease") or "unknown"
  fp.arch = C.arch() or "unknown"
  fp.cpu_vendor = ci.vendor_id or ci["CPU implementer"] or "unknown"
  fp.cpu_model = M.model(root)
  fp.cpu_family = integer(ci["cpu family"] or ci["CPU architecture"])
  fp.cpu_model_id = integer(ci.model or ci["CPU part"])
  fp.cpu_stepping = integer(ci.stepping or ci["CPU revision"])
  fp.microcode = ci.microcode
  -- topology: what is online, where each cpu sits, what this task may use
  local online = M.online(root)
  local sockets, cores, n_sockets, n_cores = {}, {}, 0, 0
  for _, cpu in ipairs(online) do
    local p = M.of(cpu, root)
    if not sockets[p.socket] then sockets[p.socket], n_sockets = true, n_sockets + 1 end
    local key = p.socket .. ":" .. p.die .. ":" .. p.core
    if not cores[key] then cores[key], n_cores = true, n_cores + 1 end
  end
  fp.cpus, fp.sockets, fp.cores = #online, n_sockets, n_cores
  fp.threads_per_core = n_cores > 0 and #online // n_cores or 1
  fp.smt = text("/sys/devices/system/cpu/smt/control") or "unknown"
  fp.cpus_allowed = #M.cpus()
  local nodes = M.parse_list(text("/sys/devices/system/node/online") or "")
  fp.numa_nodes = nodes and #nodes or 1
  fp.caches = {}
  for _, c in ipairs(C.caches(0, root)) do
    fp.caches[#fp.caches + 1] = {level = c.level, type = c.type, size = c.size}
  end
  fp.llc_bytes = M.llc(root).bytes
  local meminfo = M.read_text(r .. "/proc/meminfo") or ""
  local kb = meminfo:match("MemTotal:%s*(%d+) kB")
  fp.mem_total = kb and math.tointeger(tonumber(kb) * 1024)
  fp.thp = M.thp_mode(root) or "none"
  fp.thp_defrag = chosen(text("/sys/kernel/mm/transparent_hugepage/defrag")) or "none"
  -- frequency: the governor of cpu0 and turbo/boost (acpi-cpufreq, intel_pstate)
  fp.governor = text("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor") or "none"
  fp.cpufreq_driver = text("/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver") or "none"
  local boost, no_turbo = text("/sys/devices/system/cpu/cpufreq/boost"),
    text("/sys/devices/system/cpu/intel_pstate/no_turbo")
  if boost then fp.boost = boost == "1" elseif no_turbo then fp.boost = no_turbo == "0" end
  -- counting: who may count what, and how the PMU is reached
  fp.perf_event_paranoid = integer(text("/proc/sys/kernel/perf_event_paranoid"))
  fp.nmi_watchdog = integer(text("/proc/sys/kernel/nmi_watchdog"))
  fp.rdpmc = integer(text(M.SYSFS_PMUS .. "/cpu/rdpmc") or text(M.SYSFS_PMUS .. "/cpu_core/rdpmc"))
  local hv = C.hypervisor(root)
  fp.hypervisor = hv == nil and "unknown" or hv == "" and "none" or HYPERVISORS[hv] or hv
  fp.pmus = sys.dir(r .. M.SYSFS_PMUS) or {}
  table.sort(fp.pmus)
  fp.hardware_pmu = C.cpu_pmu()
  fp.bios = text("/sys/class/dmi/id/bios_version")
  fp.product = text("/sys/class/dmi/id/product_name")
  -- pmcsh itself: the version and the STREAM loops' variant that runs
  fp.pmcsh = paths.version
  local isa = os.getenv("PMCSH_ISA")
  fp.isa = isa and isa ~= "" and isa or C.loops_isa()
  return fp
end, "machine.fingerprint", [[
machine.fingerprint([root]) -> the machine's identity and state, a plain table
every results file and every recipe's --json carries:
  host (SLURMD_NODENAME under Slurm, else the hostname), hostname, job and
  task (SLURM_JOB_ID, SLURM_PROCID; absent outside Slurm), kernel, arch,
  cpu_vendor, cpu_model, cpu_family, cpu_model_id, cpu_stepping, microcode,
  cpus (online), sockets, cores, threads_per_core, smt, cpus_allowed (this
  task's), numa_nodes, caches ({level=, type=, size=}), llc_bytes, mem_total,
  thp, thp_defrag, governor, cpufreq_driver, boost, perf_event_paranoid,
  nmi_watchdog, rdpmc, hypervisor ("none" on bare metal), pmus, hardware_pmu,
  bios, product (DMI), pmcsh (version), isa (the STREAM loops' variant).
A fact this machine does not give is absent (numbers) or "none"/"unknown".
With root (a fake tree) the files are read under it; arch, cpus_allowed,
hardware_pmu and isa stay this process's.]])

return doc(M, "machine", [[
machine facts: cpus, caches, huge pages, memory, clock and TSC
  machine.cpus(), machine.online(), machine.of(cpu), machine.caches(),
  machine.llc(), machine.hugepages(), machine.thp(), machine.mem_available(),
  machine.clock_tick(), machine.tsc(), machine.tsc_hz(), machine.model(), machine.fingerprint()
`pmcsh machine` prints them with the PMUs and permissions.]])
