-- pmcsh.machine: the one face of the machine facts every engine and recipe
-- uses: cpus (those this process may run on, those online, where each
-- sits), caches, huge pages, memory, the clock and the TSC.  Gathered in C
-- (core/machine.c via pmcsh._machine) and from sysfs/procfs here; read
-- where asked, never cached across calls that may see hotplug.  Functions
-- reading sysfs take an optional root last: a fake tree, for specs.
local C = require("pmcsh._machine")
local sys = require("pmcsh._sys")
local doc = require("pmcsh.help").doc

local M = {}

M.read_text = doc(function(path)
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
M.parse_list = doc(function(s)
  if type(s) ~= "string" then return nil, "a cpu list such as 0-3,8 expected" end
  local cpus, msg = C.parse_list(s)
  return cpus, msg
end, "machine.parse_list", [[
machine.parse_list("0-3,8") -> {0, 1, 2, 3, 8}, or nil, message: a cpu list
as sysfs and perf write them, sorted, each cpu once.]])

M.cpus = doc(function()
  return assert(C.cpus())
end, "machine.cpus", [[
machine.cpus() -> the cpus this process may run on (sched_getaffinity), in
order: the engines' default thread count is #machine.cpus().]])

M.online = doc(function(root)
  local s = C.online(root)
  return s and M.parse_list(s) or {0}
end, "machine.online", [[
machine.online([root]) -> the online cpus, in order ({0} when sysfs says nothing).]])

M.of = doc(function(cpu, root) return C.place(cpu, root) end, "machine.of", [[
machine.of(cpu[, root]) -> {cpu=, socket=, die=, core=, node=}: where the cpu
sits (an id sysfs does not give reads 0).]])

M.threads = doc(function(pid)
  local names = sys.dir(string.format("/proc/%d/task", pid))
  if not names or #names == 0 then return nil, string.format("no process %d", pid) end
  local out = {}
  for _, n in ipairs(names) do out[#out + 1] = tonumber(n) end
  table.sort(out)
  return out
end, "machine.threads", [[
machine.threads(pid) -> the thread ids of process pid, sorted, or nil, message.]])

M.comm = doc(function(tid)
  return M.read_text(string.format("/proc/%d/comm", tid)) or "?"
end, "machine.comm", [[
machine.comm(tid) -> the command name of a thread ("bash"), or "?".]])

M.caches = doc(function(cpu, root)
  local list = C.caches(cpu or 0, root)
  return list
end, "machine.caches", [[
machine.caches(cpu=0, root=nil) -> list of {level=, type=, size=bytes, line=,
shared_cpu_list=, source=}, level ascending: the data and unified caches of
the cpu, from sysfs, else (some VMs and containers list none) from sysconf
(glibc, cpuid on x86), as `source` says.  The sizes where a latency curve
steps.]])

M.llc = doc(function(root)
  local bytes, count = C.llc(root)
  return {bytes = bytes, count = count}
end, "machine.llc", [[
machine.llc([root]) -> {bytes=, count=}: the last-level caches of all cpus,
each shared cache once (STREAM's rule sizes its arrays from bytes).]])

M.hugepages = doc(function(root) return C.hugepages(root) end, "machine.hugepages", [[
machine.hugepages([root]) -> list of {size=bytes, nr=, free=}: each huge page
size the kernel offers, how many are reserved and how many of those free.]])

M.thp = doc(function(root) return C.thp(root) end, "machine.thp", [[
machine.thp([root]) -> the transparent huge page mode ("always [madvise]
never"), nil without THP.]])

M.mem_available = doc(function(root) return C.mem_available(root) end, "machine.mem_available", [[
machine.mem_available([root]) -> MemAvailable in bytes, nil when unknown.]])

M.clock_tick = doc(function() return C.clock_tick() end, "machine.clock_tick", [[
machine.clock_tick() -> seconds: the smallest step CLOCK_MONOTONIC is seen to
take, reading included (STREAM's checktick).]])

M.tsc = doc(function(root) return C.tsc(root) end, "machine.tsc", [[
machine.tsc([root]) -> true when the TSC is constant and nonstop (cpuinfo
flags), so ticks measure time.]])

M.model = doc(function(root) return C.model(root) end, "machine.model", [[
machine.model([root]) -> the cpu's model name from /proc/cpuinfo, or "unknown".]])

return doc(M, "machine", [[
machine facts: cpus, caches, huge pages, memory, clock and TSC
  machine.cpus(), machine.online(), machine.of(cpu), machine.caches(),
  machine.llc(), machine.hugepages(), machine.thp(), machine.mem_available(),
  machine.clock_tick(), machine.tsc(), machine.model()
`pmcsh machine` prints them with the PMUs and permissions.]])
