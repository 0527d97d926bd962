-- perf stat 6.1's output, from the table pmcsh.stat sums: the aggregation
-- modes' prefix fields, the std table, -x SEP and --json rows with perf's
-- fields in its order in every mode (-I, -A, --per-*), the shadow metrics,
-- the summary's header and times, and the writer every line goes through.
local json = require("pmcsh.json")
local formulas = require("pmcsh.formulas")
local statistics = require("pmcsh.statistics")
local pmc = require("pmcsh.pmc")
local sys = require("pmcsh.sys")
local text = require("pmcsh.text")

local M = {}

-- perf shows clocks in msec
local function is_clock(name)
  local base = pmc.parse_name(name).base
  return base == "task-clock" or base == "cpu-clock"
end

-- s ("1234567.89") with the environment's thousands' separator and
-- grouping (sys.numeric_locale), as printf's ' flag writes it in perf's
-- table (-B, perf's default there): "1,234,567.89" in en_US, unchanged in C.
local LOCALE
local function grouped(s)
  LOCALE = LOCALE or sys.numeric_locale()
  local sep, g = LOCALE.thousands_sep, LOCALE.grouping
  local sign, int, frac = s:match("^(%-?)(%d+)(.*)$")
  if not int or sep == "" or #g == 0 then return s end
  local parts, i, k = {}, #int, 1
  while i > 0 do
    local n = g[math.min(k, #g)]
    table.insert(parts, 1, int:sub(math.max(1, i - n + 1), i))
    i, k = i - n, k + 1
  end
  if frac ~= "" then frac = LOCALE.decimal_point .. frac:sub(2) end
  return sign .. table.concat(parts, sep) .. frac
end

-- perf stat's number format: clocks "%.2f" msec; counts "%.0f" (the mean of
-- -r runs rounded), "%.2f" for events with a fractional sysfs .scale;
-- big: the table's, with thousands' separators (perf's "%'18.0f").
local function fmtnum(v, unit, scale, big)
  local s
  if unit == "msec" or (scale and scale ~= math.floor(scale)) then s = string.format("%.2f", v)
  else s = string.format("%.0f", v) end
  return big and grouped(s) or s
end

-- perf's shadow metric of an event: a clock's CPUs utilized (over the
-- elapsed time); any other event's rate over the clock's time of the same
-- aggregate, in /sec, K/sec, M/sec or G/sec (decimal).
local function metric_of(name, mean, clock_ns, elapsed_s)
  if is_clock(name) then
    if elapsed_s > 0 then return mean / (elapsed_s * 1e9), "CPUs utilized" end
    return nil
  end
  if not clock_ns or clock_ns <= 0 then return nil end
  local rate, unit = 1e9 * mean / clock_ns, "/sec"
  if rate > 1e9 then rate, unit = rate / 1e9, "G/sec"
  elseif rate > 1e6 then rate, unit = rate / 1e6, "M/sec"
  elseif rate > 1e3 then rate, unit = rate / 1e3, "K/sec" end
  return rate, unit
end

-- ---- aggregation modes: perf's prefix fields per mode ----------------------
-- key(inst) names an instance's aggregate; std/csv/json write its fields
-- (perf 6.1's aggr_printout); header is the -I table's first line.
local MODES = {
  global = {key = function() return "" end, csv = function() return {} end,
    std = function() return "" end, json = function() return "" end,
    header = "#           time             counts unit events"},
  none = {key = function(i) return string.format("%06d", i.cpu) end,
    csv = function(a) return {"CPU" .. a.cpu} end,
    std = function(a) return string.format("CPU%-7d ", a.cpu) end,
    json = function(a) return string.format('"cpu" : "%d", ', a.cpu) end,
    header = "#           time CPU                    counts unit events"},
  socket = {key = function(i) return string.format("%06d", i.socket) end,
    csv = function(a) return {"S" .. a.socket, tostring(a.nr)} end,
    std = function(a) return string.format("S%-5d %4d ", a.socket, a.nr) end,
    json = function(a) return string.format('"socket" : "S%d", "aggregate-number" : %d, ', a.socket, a.nr) end,
    header = "#           time socket cpus             counts unit events"},
  die = {key = function(i) return string.format("%06d-%06d", i.socket, i.die) end,
    csv = function(a) return {string.format("S%d-D%d", a.socket, a.die), tostring(a.nr)} end,
    std = function(a) return string.format("S%d-D%-8d %4d ", a.socket, a.die, a.nr) end,
    json = function(a)
      return string.format('"die" : "S%d-D%d", "aggregate-number" : %d, ', a.socket, a.die, a.nr)
    end,
    header = "#           time die          cpus             counts unit events"},
  core = {key = function(i) return string.format("%06d-%06d-%06d", i.socket, i.die, i.core) end,
    csv = function(a) return {string.format("S%d-D%d-C%d", a.socket, a.die, a.core), tostring(a.nr)} end,
    std = function(a) return string.format("S%d-D%d-C%-8d %4d ", a.socket, a.die, a.core, a.nr) end,
    json = function(a)
      return string.format('"core" : "S%d-D%d-C%d", "aggregate-number" : %d, ', a.socket, a.die, a.core, a.nr)
    end,
    header = "#           time core            cpus             counts unit events"},
  node = {key = function(i) return string.format("%06d", i.node) end,
    csv = function(a) return {"N" .. a.node, tostring(a.nr)} end,
    std = function(a) return string.format("N%-5d %4d ", a.node, a.nr) end,
    json = function(a) return string.format('"node" : "N%d", "aggregate-number" : %d, ', a.node, a.nr) end,
    header = "#           time node   cpus             counts unit events"},
  -- a thread's name is the thread's to choose (prctl PR_SET_NAME): inert
  -- in the table, a CSV field for -x's separator, a JSON string in --json
  thread = {key = function(i) return string.format("%010d", i.tid) end,
    csv = function(a, sep) return {text.csv(a.comm .. "-" .. a.tid, sep)} end,
    std = function(a) return string.format("%16s-%-8d ", text.inert(a.comm), a.tid) end,
    json = function(a) return string.format('"thread" : %s, ', json.string(a.comm .. "-" .. a.tid, true)) end,
    header = "#           time             comm-pid                  counts unit events"},
}
-- perf prints aggregates first, events within, except for -A and --per-thread
local EVENT_MAJOR = {none = true, thread = true}


-- Where the counts go: every row, header and footer is written through
-- out:write, so every write is checked; the first failure is kept (err)
-- and out:close() (a flush for stderr) returns false, message.  What was
-- written stays: nothing is truncated or removed after a failure.
local Out = {}
Out.__index = Out

function Out:write(...)
  local ok, msg = self.f:write(...)
  if not ok and not self.err then self.err = msg end
end

function Out:flush()
  local ok, msg = self.f:flush()
  if not ok and not self.err then self.err = msg end
end

function Out:close()
  local ok, msg
  if self.f == io.stderr then ok, msg = self.f:flush() else ok, msg = self.f:close() end
  if not ok and not self.err then self.err = msg end
  if self.err then return false, string.format("cannot write %s: %s", self.name, self.err) end
  return true
end

-- The file of -o (path, appended to with append), opened before the run,
-- as perf does: a bad path costs no run.  stderr without a path; nil,
-- message when it cannot be opened.  note: a '#' comment line of pmcsh's
-- (the fingerprint), after perf's "# started on" in a file.
local function open_output(path, append, note)
  local out
  if not path then out = setmetatable({f = io.stderr, name = "the counts to stderr"}, Out)
  else
    local f, msg = sys.create(path, append)   -- never through another user's link
    if not f then return nil, msg end
    out = setmetatable({f = f, name = path}, Out)
    out:write(string.format("# started on %s\n", os.date("%a %b %e %H:%M:%S %Y")))
  end
  if note then out:write("# ", note, "\n") end
  if path then out:write("\n") end
  return out
end

-- ---- output: a row's fields w (see row) in each of perf's formats ----
local function json_row(c, w)
  local s = {"{"}
  if w.pre then s[#s + 1] = string.format('"interval" : %s, ', w.pre:match("%S+")) end
  s[#s + 1] = c.M.json(w.a)
  s[#s + 1] = string.format('"counter-value" : "%s", "unit" : %s, "event" : %s, ', w.status or string.format("%f", w.v),
    json.string(w.unit, true), json.string(w.name, true))
  if w.n > 1 then s[#s + 1] = string.format('"variance" : %.2f, ', w.rse) end
  s[#s + 1] = string.format('"event-runtime" : %d, "pcnt-running" : %.2f, "metric-value" : %f, "metric-unit" : %s}',
    w.runtime, w.pct, w.metric or 0, json.string(w.munit or "", true))
  c.out:write(table.concat(s), "\n")
end

-- perf stat -x: [interval,] [aggregate fields,] value, unit, event,
-- [variance with -r > 1,] run time, percent running, metric value, metric unit
local function csv_row(c, w)
  local f = {}
  -- perf's --summary table in -x: each row marked, unless --no-csv-summary
  if w.pre then f[1] = w.pre elseif c.summary and not c.no_csv_summary then f[1] = string.format("%16s", "summary") end
  for _, x in ipairs(c.M.csv(w.a, c.sep)) do f[#f + 1] = x end
  f[#f + 1] = w.status or fmtnum(w.v, w.unit, c.scale[w.name])
  f[#f + 1] = w.unit
  f[#f + 1] = w.name
  if w.n > 1 then f[#f + 1] = string.format("%.2f%%", w.rse) end
  f[#f + 1] = tostring(w.runtime)
  f[#f + 1] = string.format("%.2f", w.pct)
  f[#f + 1] = w.metric and string.format("%.3f", w.metric) or ""
  f[#f + 1] = w.munit or ""
  c.out:write(table.concat(f, c.sep), "\n")
end

local function std_row(c, w)
  local line = (w.pre and w.pre .. " " or "") .. c.M.std(w.a) ..
    string.format("%18s %-4s %-32s", w.status or fmtnum(w.v, w.unit, c.scale[w.name], c.big_num), w.unit, w.name)   -- perf: unit width 4
  if w.metric then line = line .. string.format(" # %8.3f %-23s", w.metric, w.munit)
  else line = line .. string.rep(" ", 38) end
  -- perf leaves out a zero noise
  if w.n > 1 and not w.status and w.rse ~= 0 then line = line .. string.format("  ( +- %5.2f%% )", w.rse) end
  if not w.status and w.pct < 100 then line = line .. string.format(" (%.2f%%)", w.pct) end
  c.out:write((line:gsub("%s+$", "")), "\n")
end

-- --metric-only: a row's metric as perf 6.1 prints it in a column of its
-- own (c.columns: {unit, text} in the row's order), the clocks' CPUs
-- utilized and the rates left out as perf leaves them; an event not counted
-- has an empty column, as perf prints one.
local function only_metric(c, w)
  local unit = w.status and "" or w.munit
  if not unit or unit:find("/sec", 1, true) or unit:find("CPUs utilized", 1, true) then return end
  c.columns[#c.columns + 1] = {unit, w.status and "" or string.format("%8.3f", w.metric)}
end

-- The --metric-only lines of one table: the units' header and the values,
-- perf's columns of 20 (wider for a longer unit), -x's fields each ended
-- by the separator, --json's {"metric-value" : V} objects on one line.
local function metric_only_lines(c)
  local head, vals = {}, {}
  for i, col in ipairs(c.columns) do
    local unit, v = col[1], col[2]
    if c.json then
      vals[i] = string.format('{"metric-value" : %s}', json.string(v:match("^%s*(.-)%s*$"), true))
    elseif c.sep then
      if unit ~= "" then head[#head + 1] = unit .. c.sep end
      vals[i] = v:match("^%s*([%d.]*)") .. c.sep
    else
      if unit ~= "" then head[#head + 1] = string.format("%20s ", unit) end
      vals[i] = string.format("%" .. (#unit > 20 and #unit + 1 or 20) .. "s ", v)
    end
  end
  if c.json then c.out:write("{}\n")   -- perf 6.1's header line in --json
  else c.out:write(table.concat(head), "\n") end
  c.out:write(table.concat(vals), "\n")
end

-- One row of perf stat's in the chosen format: event name of aggregate a,
-- t its cell (see fold); metric_v: its -M metric {value, unit}, if any.
local function row(c, prefix_t, a, j, t, el_s, clock_ns, metric_v)
  local name = c.all[j]
  local ens, runs = t.enabled, t.running
  local w = {a = a, name = name, n = t.stats.n, unit = c.unit_of[name], rse = 0}
  local m = 0
  if not c.tool[name] and (not c.idx[j] or not c.counted) then w.status = "<not supported>"; w.unit = ""
  elseif runs == 0 then w.status = "<not counted>"
  else m = t.stats.mean; w.rse = select(2, statistics.mean_error(t.stats)) end
  w.v = w.unit == "msec" and m / 1e6 or m
  w.pct = (not w.status and ens > 0) and 100 * runs / ens or 100
  w.runtime = w.status and 0 or math.floor(runs / w.n + 0.5)
  if not w.status and not c.tool[name] then
    if metric_v then w.metric, w.munit = metric_v[1], metric_v[2]
    else w.metric, w.munit = metric_of(name, m, clock_ns, el_s) end
  end
  w.pre = prefix_t and string.format("%6d.%09d", math.floor(prefix_t), math.floor(prefix_t % 1 * 1e9 + 0.5)) or nil
  if c.metric_only then only_metric(c, w)
  elseif c.json then json_row(c, w) elseif c.sep then csv_row(c, w) else std_row(c, w) end
end

-- -M metrics of one aggregate: {[event] = {value, unit}} on the row of each
-- metric's first event; one that cannot be evaluated here is left out
-- (formulas.eval: a Ctrl-C inside one stops the stat, as elsewhere).
local function metric_rows(list, means, el_s)
  local at = {}
  for _, mt in ipairs(list) do
    local first = mt.events and mt.events[1]
    if first and not at[first] then
      local v = formulas.eval(mt, means, {seconds = el_s})
      if v then at[first] = {v, mt.name} end
    end
  end
  return at
end

-- Per aggregate key of acc: the means of its counted events (means), its
-- clock's mean (clock_ns) and its -M metrics (metric).
local function means_of(c, acc, el_s)
  local out = {}
  for _, k in ipairs(acc.keys) do
    local cell, o = acc.cells[k], {means = {}}
    for j, name in ipairs(c.all) do
      if c.idx[j] and c.counted and cell[j].running > 0 and not o.means[name] then
        o.means[name] = cell[j].stats.mean
        if is_clock(name) and not o.clock_ns then o.clock_ns = o.means[name] end
      end
    end
    o.metric = metric_rows(c.metrics, o.means, el_s)
    out[k] = o
  end
  return out
end

-- perf's order of threads for an event: by count, the largest first, uncounted last
local function by_count(keys, cells, j)
  local order = {}
  for j, k in ipairs(keys) do order[j] = k end
  local function val(k) local t = cells[k][j]; return t.running > 0 and t.first or -1 end
  table.sort(order, function(x, y)
    local vx, vy = val(x), val(y)
    if vx ~= vy then return vx > vy end
    return x < y
  end)
  return order
end

-- an uncounted event's aggregate has 1 member in perf's --per-socket/die/core/node
local ONE_MEMBER = {socket = true, die = true, core = true, node = true}

local print_rows
-- prints one table of rows from acc (fold): per aggregate, the events (or
-- per event, the aggregates), in the first run's keys
local function print_table(c, prefix_t, acc, el_s)
  if c.metric_only then c.columns = {} end
  print_rows(c, prefix_t, acc, el_s)
  if c.metric_only then metric_only_lines(c) end
end

function print_rows(c, prefix_t, acc, el_s)
  local keys, cells = acc.keys, acc.cells
  local derived = means_of(c, acc, el_s)
  local function one(k, j)
    local d, a = derived[k], acc.aggs[k]
    if not c.idx[j] and ONE_MEMBER[c.mode] then a = setmetatable({nr = 1}, {__index = a}) end
    row(c, prefix_t, a, j, cells[k][j], el_s, d.clock_ns, d.metric[c.all[j]])
  end
  -- perf leaves out the threads that counted nothing when it lists every thread of the machine
  local function shown(k, j)
    return not c.system_threads or cells[k][j].nonzero
  end
  if EVENT_MAJOR[c.mode] then
    for j in ipairs(c.all) do
      for _, k in ipairs(c.mode == "thread" and by_count(keys, cells, j) or keys) do
        if shown(k, j) then one(k, j) end
      end
    end
  else
    for _, k in ipairs(keys) do
      for j in ipairs(c.all) do one(k, j) end
    end
  end
end

-- the table of the runs, with perf's header and times in the table format
local function print_summary(c, runs)
  local n, el = runs.n, runs.acc.elapsed.mean
  local se, rse = statistics.mean_error(runs.acc.elapsed)
  local tabular = not c.sep and not c.json
  if tabular then
    c.out:write(string.format("\n Performance counter stats for %s%s:\n\n",
      text.inert(c.what or ("'" .. table.concat(c.args, " ") .. "'")),
      n > 1 and string.format(" (%d runs)", n) or ""))
  end
  print_table(c, nil, runs.acc, el)
  if not tabular then return end
  if not c.null then c.out:write("\n") end   -- perf -n leaves the rows' blank line out
  if n > 1 then
    -- perf: the mean and the standard error of the mean, to two digits
    -- past the error's first significant one (perf's get_precision + 2)
    local prec = (se > 1 or se <= 0) and 2 or math.ceil(-math.log(se, 10)) + 2
    c.out:write(string.format(" %17." .. prec .. "f +- %." .. prec .. "f seconds time elapsed  ( +- %5.2f%% )\n\n",
      el, se, rse))
  else
    c.out:write(string.format("%18.9f seconds time elapsed\n\n", el))
  end
  -- perf prints user/sys for one run of a command it started
  if n == 1 and not c.cpus and not c.tids and runs.user then
    c.out:write(string.format("%18.9f seconds user\n%18.9f seconds sys\n\n", runs.user, runs.sys))
  end
end

M.is_clock = is_clock
M.MODES = MODES
M.open = open_output
M.table = print_table
M.summary = print_summary
-- What perf stat says on stderr of its delay's end and of each control
-- command (pr_info: log, a list of "enabled", "disabled", "malformed" or
-- an event's name), said after the run: the switches themselves were made
-- in C while the command ran.  A named event is perf's, not pmcsh's.
local SAID = {enabled = "Events enabled", disabled = "Events disabled", malformed = "failed: wrong command"}

function M.said_control(log, dropped)
  local named = false
  for _, what in ipairs(log or {}) do
    if SAID[what] then io.stderr:write(SAID[what], "\n")
    elseif not named then
      named = true
      io.stderr:write("pmcsh stat: 'enable EVENT' and 'disable EVENT' on the control channel are ignored: ",
        "pmcsh switches all events together ('enable', 'disable')\n")
    end
  end
  if dropped then io.stderr:write("pmcsh stat: ", dropped, " more control commands done, not listed\n") end
end

-- perf -v's lines after a run: each event's count, enabled and running
-- times summed over its instances (to the counts' output), or that it was
-- not read (to stderr).
function M.said_counts(c, inst)
  for j, name in ipairs(c.all) do
    local i = c.idx[j]
    if i and c.counted then
      local v, e, r = 0, 0, 0
      for _, x in ipairs(inst[i]) do v, e, r = v + x.value, e + x.enabled, r + x.running end
      c.out:write(string.format("%s: %d %d %d\n", name, v, e, r))
    elseif not c.tool[name] then
      io.stderr:write("failed to read counter ", name, "\n")
    end
  end
end

return M
