-- Machine facts about cpus and threads, from sysfs and procfs: cpu lists
-- ("0-3,8"), the online cpus, where a cpu sits (socket, die, core, NUMA
-- node) and the threads of a process.  Read where asked, never cached
-- across calls that may see hotplug.
local M = {}

M.CPU_SYSFS = "/sys/devices/system/cpu"

local function slurp(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

-- "0-3,8,10-11" -> {0, 1, 2, 3, 8, 10, 11}, or nil and a message.
function M.parse_list(s)
  if type(s) ~= "string" then return nil, "a cpu list such as 0-3,8 expected" end
  local out, seen = {}, {}
  for item in s:gmatch("[^,%s]+") do
    local a, b = item:match("^(%d+)%-(%d+)$")
    a, b = tonumber(a or item:match("^%d+$")), tonumber(b or a or item)
    if not a or not b or b < a then return nil, string.format("bad cpu list item '%s' (give N or N-M)", item) end
    for c = a, b do
      if not seen[c] then seen[c] = true; out[#out + 1] = c end
    end
  end
  if #out == 0 then return nil, "an empty cpu list" end
  table.sort(out)
  return out
end

-- The online cpus, in order.
function M.online(root)
  local s = slurp((root or M.CPU_SYSFS) .. "/online")
  local list = s and M.parse_list(s:match("^%s*(.-)%s*$"))
  return list or {0}
end

-- Where cpu sits: {cpu, socket, die, core, node}; an id sysfs does not give is 0.
function M.of(cpu, root)
  root = root or M.CPU_SYSFS
  local function id(file)
    return tonumber(slurp(string.format("%s/cpu%d/topology/%s", root, cpu, file)) or "") or 0
  end
  local node = 0
  local p = io.popen(string.format("ls -d %s/cpu%d/node* 2>/dev/null", root, cpu))
  if p then
    node = tonumber((p:read("l") or ""):match("node(%d+)$")) or 0
    p:close()
  end
  return {cpu = cpu, socket = id("physical_package_id"), die = id("die_id"), core = id("core_id"), node = node}
end

-- The thread ids of process pid (from /proc/PID/task), sorted; nil and a
-- message when there is no such process.
function M.threads(pid)
  local p = io.popen(string.format("ls /proc/%d/task 2>/dev/null", pid))
  local out = {}
  for l in p:lines() do out[#out + 1] = tonumber(l) end
  p:close()
  if #out == 0 then return nil, string.format("no process %d", pid) end
  table.sort(out)
  return out
end

-- The command name of a thread ("bash"), or "?".
function M.comm(tid)
  local s = slurp(string.format("/proc/%d/comm", tid))
  return s and s:match("^(.-)%s*$") or "?"
end

return M
