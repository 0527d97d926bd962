-- pmcsh.stat.aggregate: where each instance of a stat's events counted (a
-- cpu and its place in the topology, or a thread), the instances of a
-- reading aggregated by the mode (perf's --no-aggr, --per-socket, ...,
-- --per-thread), and the runs summed into one table as perf stat sums
-- them.  Plain data in, plain data out; the context c is pmcsh.stat's.
local machine = require("pmcsh.machine")
local statistics = require("pmcsh.statistics")

local M = {}

-- Where each instance counted (c.place: cpu topology, or the thread) and
-- pmc.run's targets.
function M.place(c)
  local topo = machine
  c.place = {}
  if c.cpus then
    for _, cpu in ipairs(c.cpus) do c.place[cpu] = topo.of(cpu) end
    c.targets = {{cpus = c.cpus}}
  elseif c.tids then
    c.targets = {}
    -- inherit: the threads and children a target starts while counted are
    -- counted with it, as perf's attr.inherit (off with -i)
    for k, t in ipairs(c.tids) do
      c.targets[k] = {pid = t, inherit = c.inherit}
      c.place[k] = {tid = t, comm = topo.comm(t)}
    end
  end
end

-- inst[i]: event i's instances {key..., value, enabled, running} in reading r
function M.instances(c, r)
  local inst = {}
  for i = 1, #c.events do
    local list = {}
    if c.cpus then
      for _, x in ipairs(r[1][i].cpus or {}) do
        local p = c.place[x.cpu] or machine.of(x.cpu)
        list[#list + 1] = {cpu = x.cpu, socket = p.socket, die = p.die, core = p.core, node = p.node,
                           value = x.value, enabled = x.enabled, running = x.running}
      end
    elseif c.tids then
      for k, rd in ipairs(r) do
        if rd then   -- false: a thread gone before it was opened
          list[#list + 1] = {tid = c.place[k].tid, comm = c.place[k].comm,
                             value = rd[i].value, enabled = rd.enabled, running = rd.running}
        end
      end
    else
      list[1] = {value = r[i].value, enabled = r.enabled, running = r.running}
    end
    inst[i] = list
  end
  return inst
end

-- instances minus the previous cumulative ones (for -I)
function M.minus(cur, prev)
  if not prev then return cur end
  local d = {}
  for i, list in ipairs(cur) do
    d[i] = {}
    for k, x in ipairs(list) do
      local p = prev[i][k] or {value = 0, enabled = 0, running = 0}
      local y = {}
      for kk, v in pairs(x) do y[kk] = v end
      y.value, y.enabled, y.running = x.value - p.value, x.enabled - p.enabled, x.running - p.running
      d[i][k] = y
    end
  end
  return d
end

-- the aggregates of mode (MODES[c.mode], format's): {key -> {fields..., nr, [i] = {value, enabled, running}}}, and their keys in order
function M.aggregate(mode, inst)
  local aggs, keys = {}, {}
  for i, list in ipairs(inst) do
    for _, x in ipairs(list) do
      local k = mode.key(x)
      local a = aggs[k]
      if not a then
        a = {cpu = x.cpu, socket = x.socket, die = x.die, core = x.core, node = x.node, tid = x.tid,
             comm = x.comm, nr = 0, sum = {}}
        aggs[k] = a
        keys[#keys + 1] = k
      end
      if i == 1 then a.nr = a.nr + 1 end
      local s = a.sum[i] or {value = 0, enabled = 0, running = 0}
      s.value, s.enabled, s.running = s.value + x.value, s.enabled + x.enabled, s.running + x.running
      a.sum[i] = s
    end
  end
  table.sort(keys)
  return aggs, keys
end

-- The rows of a table, summed run by run as perf stat sums them: the
-- first run's aggregates (aggs, their keys in order), the elapsed times'
-- running statistics (elapsed), and per key and row (c.all's index) a
-- cell {stats, enabled, running, first, nonzero}: the running statistics of its value
-- (statistics.running), its enabled and running times summed over the runs,
-- the first run's value and whether any run's was not 0.  Nothing grows
-- with the runs: -r 1000000 keeps what -r 2 keeps.
function M.acc()
  return {elapsed = statistics.running(), cells = {}}
end

-- Adds a run's (or an interval's) times (seconds: elapsed, its length;
-- user and sys, the command's rusage, none for an interval) and its
-- aggregates aggs, keys (M.aggregate's two results) to acc.
function M.fold(c, acc, times, aggs, keys)
  if not acc.keys then acc.aggs, acc.keys = aggs, keys end
  statistics.update(acc.elapsed, times.elapsed)
  for _, k in ipairs(acc.keys) do
    local cell = acc.cells[k]
    if not cell then cell = {}; acc.cells[k] = cell end
    for j, name in ipairs(c.all) do
      local t = cell[j]
      if not t then t = {stats = statistics.running(), enabled = 0, running = 0}; cell[j] = t end
      local i, v = c.idx[j], 0
      if c.tool[name] then   -- the run's (or interval's) time in ns; 0 reads <not counted>, as perf's
        v = math.floor((times[c.tool[name]] or 0) * 1e9 + 0.5)
        t.enabled, t.running = t.enabled + v, t.running + v
      elseif i and c.counted then
        local s = aggs[k] and aggs[k].sum[i] or {value = 0, enabled = 0, running = 0}
        v, t.enabled, t.running = s.value, t.enabled + s.enabled, t.running + s.running
      end
      statistics.update(t.stats, v)
      if t.first == nil then t.first = v end
      t.nonzero = t.nonzero or v ~= 0
    end
  end
end

return M
