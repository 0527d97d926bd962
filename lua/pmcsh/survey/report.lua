-- The survey's table: one row per event, one column per workload, the
-- value (events per iteration) and the spread over the pairs kept; the
-- bandwidth and time per iteration with and without counters; the group's
-- metrics; and what was not counted here, with the reason.  Also the
-- per-kernel figures the other outputs (csv, json, plot) share.
local errors = require("pmcsh.errors")
local events = require("pmcsh.events")
local formulas = require("pmcsh.formulas")
local numbers = require("pmcsh.numbers")
local statistics = require("pmcsh.statistics")
local pmc = require("pmcsh.pmc")
local text = require("pmcsh.text")
local cell = require("pmcsh.survey.cell")
local D = require("pmcsh.survey.defaults")
local workloads = require("pmcsh.survey.workloads")

local M = {}

local median_of = function(list) return statistics.stats(list).median end

-- The statistic a cell shows: the trimmed mean of its pairs' slopes (its
-- value), median, min, max or mean.  A cell of an older file has only
-- the mean, as its value.
function M.cell_stat(c, stat)
  if not c then return nil end
  if (stat or D.stat) == "trimmed" or stat == "value" then return c.value end
  if stat == "mean" then return c.mean or c.value end
  return c[stat]
end

-- A cell's class (pmcsh.survey.cell), nil where it may claim none (every
-- pair dropped, too few kept) and for an older file's cell without one.
M.class_of = cell.class_of

-- Whether a cell counts as zero: classed zero, or (a file without classes)
-- exactly 0.  A cell with nothing under it is not zero.
local function zero_cell(c)
  if cell.standing(c) then return false end
  if c.class then return c.class == "zero" end
  return c.value == 0
end

-- Whether a row is zero in every column it has: the rows the table and the
-- heat map leave out unless --all.
function M.zero_row(cells, kernels)
  local any = false
  for _, k in ipairs(kernels) do
    local c = cells[k]
    if c then
      if not zero_cell(c) then return false end
      any = true
    end
  end
  return any
end

-- A row's class: the least exact of its classed cells' (a cell with none
-- is marked in its place); zero for a zero row; nil where no cell has one.
local RANK = {zero = 0, exact = 1, linear = 2, noisy = 3, multiplexed = 4}
local function row_class(cells, kernels)
  if M.zero_row(cells, kernels) then return "zero" end
  local worst
  for _, k in ipairs(kernels) do
    local class = M.class_of(cells[k])
    if class and (not worst or (RANK[class] or 0) > (RANK[worst] or 0)) then worst = class end
  end
  return worst
end
M.row_class = row_class

-- A cell's spread as the table prints it: "--" where a relative spread
-- means nothing (the mean is 0, or the pairs straddle it so that the
-- spread passes 999%); "*" multiplexed, "?" too few pairs kept to class.
-- Empty for no cell or one with nothing under it.
function M.spread_text(c)
  if not c or cell.dropped(c) or c.value == nil then return "" end
  local s
  if c.spread == nil and c.max == c.min then s = ""
  elseif c.spread == nil or c.spread ~= c.spread or c.spread >= 9.995 then s = "--"
  elseif c.spread == 0 then s = "±0%"
  elseif c.spread < 0.1 then s = string.format("±%.1f%%", c.spread * 100)
  else s = string.format("±%.0f%%", c.spread * 100) end
  if c.multiplexed then s = s .. "*" end
  if cell.standing(c) == "few" then s = s .. "?" end
  return s
end

-- A cell's value as a row prints it (num: the row's notation, row_format):
-- "dropped" where every pair was disturbed.
function M.value_text(c, v, num)
  if cell.dropped(c) then return string.format("%9s", "dropped") end
  return num(v)
end

-- Per workload, the samples its cells kept of those made: "5/5 pairs",
-- "3-5/5 pairs" where its runs differ, nil where no cell says.
function M.kept_text(st, kernel)
  local lo, hi, total, what
  for _, byk in pairs(st.cells) do
    local kept, made = cell.kept(byk[kernel])
    if kept then
      lo, hi, total = math.min(lo or kept, kept), math.max(hi or kept, kept), math.max(total or made, made)
      what = cell.samples(byk[kernel])
    end
  end
  if not lo then return nil end
  return string.format("%s/%d %s", lo == hi and string.format("%d", lo) or string.format("%d-%d", lo, hi), total, what)
end

local function trim(s) return (s:gsub("%s+$", "")) end

-- Per kernel, the median over its counted runs of f(run record).
local function counted(st, f)
  local per = {}
  for _, r in ipairs(st.runs) do
    local v = f(r)
    if v then per[r.kernel] = per[r.kernel] or {}; table.insert(per[r.kernel], v) end
  end
  local out = {}
  for k, l in pairs(per) do out[k] = median_of(l) end
  return out
end

-- Counted bandwidth per kernel: median over the runs of that kernel.
function M.counted_mbps(st) return counted(st, function(r) return r.mbps end) end

-- ns per iteration of a run record (the median: of its pairs' slopes, else of
-- its repetitions), nil when it has no times.
function M.ns_of(rec)
  local s = workloads.seconds_per_iteration(rec)
  return s and s * 1e9
end
local ns_of = M.ns_of

-- The kernel figures beside the table, per kernel: MB/s and ns per
-- iteration (median) with no counters and counted (median run),
-- and counted/uncounted - 1 as a rate (negative when counting slows the
-- kernel down).
function M.rates(st)
  local cm, cn = M.counted_mbps(st), counted(st, ns_of)
  local out = {}
  for _, k in ipairs(st.header.kernels) do
    local b, b2 = st.baseline[k], st.baseline2 and st.baseline2[k]
    local r = {mbps = b and b.mbps, mbps_counted = cm[k], ns = ns_of(b), ns_counted = cn[k],
      mbps_aa = b2 and b2.mbps, ns_aa = ns_of(b2)}
    if r.mbps and r.mbps_counted and r.mbps > 0 then r.perturbation = (r.mbps_counted / r.mbps - 1) * 100
    elseif r.ns and r.ns_counted and r.ns_counted > 0 then r.perturbation = (r.ns / r.ns_counted - 1) * 100 end
    -- the noise floor: the same comparison between two runs without counters
    if r.mbps and r.mbps_aa and r.mbps > 0 then r.aa = (r.mbps_aa / r.mbps - 1) * 100
    elseif r.ns and r.ns_aa and r.ns_aa > 0 then r.aa = (r.ns / r.ns_aa - 1) * 100 end
    out[k] = r
  end
  return out
end

-- The syntax of an event name counted at exactly u or k (cycles:u,
-- cpu/event=0x3c/k, {a,b}:u; pmc.parse_name, the one parser), or nil:
-- a name without that one modifier, or one a results file holds that
-- does not parse.
local function privileged(name)
  local ok, p = pcall(pmc.parse_name, name)
  if not ok then
    if errors.is(p, "argument") then return nil end
    error(p, 0)
  end
  if p.modifiers == "u" or p.modifiers == "k" then return p end
end

-- The reading of a list of cells: value(c) per event, and a :u and a :k
-- row of one event also summed under the plain name.
local function reading_of(cells, value)
  local reading, sums = {}, {}
  for _, c in ipairs(cells) do
    local v = c.event and value(c)
    if v then   -- a cell naming no event (the file may omit it) gives no formula one
      reading[c.event] = {value = v}
      local p = privileged(c.event)
      local base, mod = p and p.plain, p and p.modifiers
      if p and (c.key == nil or c.key == c.event) then
        sums[base] = sums[base] or {}
        sums[base][mod] = v
      end
    end
  end
  for base, t in pairs(sums) do
    if t.u and t.k and not reading[base] then reading[base] = {value = t.u + t.k} end
  end
  return reading
end

-- The reading a group's metrics see for one kernel: each counted event's
-- value per iteration (a :u and a :k row of the same run also summed
-- under the plain name), with ctx per iteration too: iterations = 1,
-- bytes = bytes per iteration (STREAM convention; none for the chase),
-- seconds = the counted runs' median time per iteration.  Ratios of
-- events come out as ratios of counts; per-iteration metrics as such.
local function metric_reading(st, kernel)
  local cells = {}
  for _, byk in pairs(st.cells) do cells[#cells + 1] = byk[kernel] end
  local reading = reading_of(cells, function(c) return c.value end)
  local secs, bytes = {}, nil
  for _, r in ipairs(st.runs) do
    if r.kernel == kernel and r.times and r.iterations and r.iterations > 0 then
      local sum = 0
      for _, t in ipairs(r.times) do sum = sum + t end
      secs[#secs + 1] = sum / r.iterations
      bytes = bytes or r.bytes_per_iter
    end
  end
  return reading, {iterations = 1, bytes = bytes, seconds = median_of(secs)}
end

-- A metric whose events one run counted together, evaluated pair by pair
-- (window by window for a chase) on that run's kept slopes, then reduced
-- by the survey's statistic: a ratio of two trimmed means would pair one
-- event's windows with another's.  Nil, nil where no run holds them all.
local function joint_value(st, kernel, m, whole, ctx)
  for _, r in ipairs(st.runs) do
    local n = r.kernel == kernel and r.cells and r.cells[1] and r.cells[1].per_rep and #r.cells[1].per_rep
    local mine = n and reading_of(r.cells, function(c) return c.value end)
    local all = n and n > 0 and #(m.events or {}) > 0
    for _, e in ipairs(all and m.events or {}) do all = all and mine[e] ~= nil end
    if all then
      local vals = {}
      for p = 1, n do
        local rd = reading_of(r.cells, function(c) return c.per_rep and c.per_rep[p] end)
        for e, x in pairs(whole) do if rd[e] == nil then rd[e] = x end end
        local v, why, absent = formulas.eval(m, rd, ctx)
        if v == nil then return nil, why, absent end
        vals[p] = v
      end
      return statistics.stats(vals).trimmed
    end
  end
  return nil
end

-- The metrics of the survey's group (header.group, an events/ file), each
-- evaluated per kernel after the runs.  Returns {path=, rows={{name=,
-- unit=, desc=, values={kernel=v}, reasons={kernel=why}}}}, or nil and a
-- message (no group, or its file no longer loads).  A survey just run has
-- the group the user named (st.group); one read from a results file, which
-- may come from another node, loads only a group of events/, never code a
-- path in the file names.
function M.group_metrics(st)
  local name = st.header and st.header.group
  if not name then return nil, "the survey has no group" end
  local t, path
  if st.group then
    t, path = st.group.data, st.group.path
  else
    local own = name:find("/", 1, true) and events.own(name) or name
    if own:find("/", 1, true) or not own:match("^[%w_%-]+$") then
      return nil, string.format("the group's metrics are in %s, which pmcsh does not load for a results file " ..
        "(it loads no code a file names)", text.inert(name))
    end
    t, path = events.group_here(own)
    if not t then return nil, path end
  end
  local ws = workloads.of(st.header)
  local out = {path = path, rows = {}}
  for _, m in ipairs(t.metrics or {}) do
    local row = {name = m.name, unit = m.unit, desc = m.desc, values = {}, reasons = {}}
    for _, k in ipairs(st.header.kernels) do
      local reading, ctx = metric_reading(st, k)
      local v, why, field = joint_value(st, k, m, reading, ctx)
      if v == nil and why == nil then v, why, field = formulas.eval(m, reading, ctx) end
      -- a formula over c.bytes on a workload that moves no STREAM bytes
      if field then
        why = string.format("needs %s per iteration, which %s does not have", field, ws[k].what)
      end
      row.values[k], row.reasons[k] = v, why
    end
    out.rows[#out.rows + 1] = row
  end
  return out
end

-- A row's label: its key, and its unit when the event has one (task-clock: ns per iteration).
function M.label(st, r)
  for _, c in pairs(st.cells[r.key] or {}) do
    if c.unit then return r.key .. " (" .. c.unit .. ")" end
  end
  return r.key
end

-- One notation for a row: scientific for every cell when one needs it
-- (nonzero below 1e-3 or from 1e7), fixed with 4 decimals otherwise; 0
-- as 0 either way.
local function row_format(values)
  local sci = false
  for _, v in pairs(values) do
    if v ~= 0 and (math.abs(v) < 1e-3 or math.abs(v) >= 1e7) then sci = true end
  end
  return function(v)
    if v == nil then return string.format("%9s", "n/a") end
    if v == 0 then return string.format("%9s", sci and "0" or "0.0000") end
    return sci and string.format("%9.2e", v) or string.format("%9.4f", v)
  end
end
M.row_format = row_format

-- The event rows, one notation per row, and the row's class; rows zero in
-- every column are left out unless o.all (named in a line below).
-- Returns the lines, how many rows were counted, and the zero rows' keys.
local STAT_NAME = {trimmed = "trimmed mean", value = "trimmed mean", mean = "mean", median = "median", min = "min",
  max = "max"}
local function heading(o) return string.format("Events per loop iteration (%s)", STAT_NAME[o.stat or D.stat]) end
M.heading = heading

local function event_lines(st, o, ws, w)
  local kernels = st.header.kernels
  local line = {text.pad(heading(o), w)}
  for _, k in ipairs(kernels) do line[#line + 1] = string.format("%10s%-7s", ws[k].title, "") end
  line[#line + 1] = " class"
  local out, shown, zero = {trim(table.concat(line))}, 0, {}
  -- what each column rests on: its pairs kept of those made
  line = {text.pad("kept / made", w)}
  local said = false
  for _, k in ipairs(kernels) do
    local kt = M.kept_text(st, k)
    said = said or kt ~= nil
    line[#line + 1] = " " .. text.pad(string.format("%15s", kt or ""), 16)
  end
  if said then out[#out + 1] = trim(table.concat(line)) end
  for _, r in ipairs(st.header.rows) do
    local cells = st.cells[r.key]
    if cells then
      shown = shown + 1
      local class = row_class(cells, kernels)
      if M.zero_row(cells, kernels) and not o.all then
        zero[#zero + 1] = r.key
      else
        local vals = {}
        for i, k in ipairs(kernels) do vals[i] = M.cell_stat(cells[k], o.stat) end
        local num = row_format(vals)
        line = {text.pad(M.label(st, r), w)}
        for i, k in ipairs(kernels) do
          line[#line + 1] = " " .. M.value_text(cells[k], vals[i], num) .. " " .. text.pad(M.spread_text(cells[k]), 6)
        end
        line[#line + 1] = " " .. (class or "--")
        out[#out + 1] = trim(table.concat(line))
      end
    end
  end
  return out, shown, zero
end

-- Names in lines of at most 100 columns after a heading.
local function name_lines(head, names)
  local out, cur = {}, head
  for _, n in ipairs(names) do
    if #cur + #n + 1 > 100 then out[#out + 1] = cur; cur = "  " .. n else cur = cur .. " " .. n end
  end
  out[#out + 1] = cur
  return out
end

-- The kernel figures' rows: bandwidth beside the counted runs', so the
-- perturbation is visible; ns per iteration where a workload moves no
-- STREAM bytes.  Each {label, field of M.rates, format}.
local function rate_rows(st, ws)
  local timed = false
  for _, k in ipairs(st.header.kernels) do timed = timed or (ws[k].bytes == nil and ws[k].run ~= nil) end
  local rows = {{"MB/s, no counters", "mbps"}, {"MB/s, counted (median run)", "mbps_counted"}}
  if timed then
    rows[#rows + 1] = {"ns per iteration, no counters (median)", "ns", "%9.2f"}
    rows[#rows + 1] = {"ns per iteration, counted (median run)", "ns_counted", "%9.2f"}
  end
  rows[#rows + 1] = {"counted/uncounted - 1, %", "perturbation"}
  rows[#rows + 1] = {"  noise floor: A/A - 1, %", "aa"}
  return rows, timed
end

-- Those rows as lines; a row with no value at all is left out.
local function rate_lines(st, rows, w)
  local rates, out = M.rates(st), {}
  for _, s in ipairs(rows) do
    local l, any = {text.pad(s[1], w)}, false
    for _, k in ipairs(st.header.kernels) do
      local v = rates[k][s[2]]
      any = any or v ~= nil
      l[#l + 1] = " " .. (v and string.format(s[3] or "%9.1f", v) or string.format("%9s", "n/a")) .. string.rep(" ", 7)
    end
    if any then out[#out + 1] = trim(table.concat(l)) end
  end
  return out
end

-- The group's metrics, with one line per kernel and reason for the n/a cells.
local function metric_lines(st, ws, w)
  if not st.header.group then return {} end
  local gm, gwhy = M.group_metrics(st)
  if not gm then return {"", "Metrics: none shown: " .. gwhy} end
  if #gm.rows == 0 then return {} end
  local kernels = st.header.kernels
  for _, r in ipairs(gm.rows) do w = math.max(w, #r.name + (r.unit and #r.unit + 3 or 0) + 1) end
  local l = {text.pad("Metrics (" .. (gm.path:match("[^/]*/[^/]*$") or gm.path) .. ")", w)}
  for _, k in ipairs(kernels) do l[#l + 1] = string.format("%10s%-7s", ws[k].title, "") end
  local out, why = {"", trim(table.concat(l))}, {}
  for _, r in ipairs(gm.rows) do
    l = {text.pad(r.name .. (r.unit and (" (" .. r.unit .. ")") or ""), w)}
    for _, k in ipairs(kernels) do
      l[#l + 1] = " " .. numbers.fmt(r.values[k], 9) .. string.rep(" ", 7)
      local reason = r.values[k] == nil and r.reasons[k]
      if reason then
        reason = reason:gsub("^metric " .. r.name:gsub("%p", "%%%0") .. " ", "")
        local tag = k .. "\0" .. reason
        if not why[tag] then why[tag] = {k = k, reason = reason, names = {}}; why[#why + 1] = why[tag] end
        table.insert(why[tag].names, r.name)
      end
    end
    out[#out + 1] = trim(table.concat(l))
  end
  for _, x in ipairs(why) do
    out[#out + 1] = string.format("  n/a for %s: %s: %s", x.k, table.concat(x.names, ", "), x.reason)
  end
  return out
end

-- What the numbers are: n, pairs of windows, threads, pages; the method;
-- each workload's note.
local function notes(st, o, ws)
  local hdr = st.header
  -- the loops' windows come in pairs; a chase's are a sample each (its note)
  local paired = false
  for _, k in ipairs(hdr.kernels) do paired = paired or ws[k].sized == true end
  local pairs = workloads.pairs(hdr.reps)
  local out = {string.format("n = %s, %s per run (--reps %d)%s, %d thread%s, %s%s; %s",
    tostring(hdr.n or "default"), paired and string.format("%d pair%s of windows", pairs, pairs == 1 and "" or "s")
    or string.format("%d windows", hdr.reps), hdr.reps,
    hdr.fresh and " (fresh arrays, no warm-up)" or "",
    hdr.threads or 1, (hdr.threads or 1) == 1 and "" or "s",
    hdr.pages and (hdr.pages .. " pages") or "page policy not recorded",
    hdr.split and ", :u user / :k OS" or "",
    (o.stat and o.stat ~= D.stat) and ("showing the " .. o.stat) or "showing the trimmed mean (20th-80th percentile)")}
  out[#out + 1] = hdr.fresh and
    "value = (count of a 2-pass window - count of a 1-pass window) / n, each window on fresh arrays; " ..
    "first touch is the window's cost (intercept, in --csv/--json)" or
    "value = (count of a window over n - count of one over each thread's first half or so) / their difference " ..
    "in elements: the window's own cost cancels (intercept, in --csv/--json)"
  out[#out + 1] = string.format("a pair that counted a context switch, a migration or an SMI is dropped: " ..
    "dropped = every pair of the cell's run, no value; ± = (max - min) / mean over the pairs kept, -- " ..
    "where that is undefined (a mean of 0, or past 999%%); * = multiplexed; ? = fewer than %d pairs kept, no class; " ..
    "class, of the cells with one: zero (no count in a kept window), exact (every pair the same, to one count), " ..
    "linear (within %d%%), noisy",
    cell.MIN_KEPT, math.floor(cell.LINEAR * 100 + 0.5))
  for _, k in ipairs(hdr.kernels) do
    if ws[k].note then out[#out + 1] = ws[k].note(hdr) end
  end
  if hdr.emulated then
    out[#out + 1] = "measured on an emulated machine (" .. hdr.emulated .. "): counts of instructions are exact, " ..
      "times and bandwidth mean nothing"
  end
  return out
end

-- The checks: each cell whose count pmcsh can predict, the prediction and
-- the verdict; a failure says by how much.
local function verdict_lines(st)
  local out = {}
  for _, r in ipairs(st.header.rows) do
    for _, k in ipairs(st.header.kernels) do
      local c = st.cells[r.key] and st.cells[r.key][k]
      if c and c.verdict then
        local got = c.check == "intercept" and c.intercept or c.value
        local word = ({pass = "ok", unresolved = "--"})[c.verdict] or "FAIL"
        local function num(v) return v and (numbers.fmt(v, 1):gsub("^%s+", "")) or "--" end
        out[#out + 1] = string.format("  %-4s %s, %s: %s %s, expected %s (%s)%s", word,
          r.key, k, c.check == "intercept" and "per window" or "per iteration", num(got), num(c.expected), c.basis or "",
          c.verdict ~= "fail" and "" or string.format(": off by %+.2f%%", 100 * (got / c.expected - 1)))
      end
    end
  end
  if #out > 0 then table.insert(out, 1, "Checks, each against a figure known without the counter:") ; table.insert(out, 1, "") end
  return out
end

-- Not counted here, and counted user+OS together: the unopened list, and
-- :u and :k rows with identical nonzero counts (the event ignores the
-- privilege filter, as the kernel's software clocks do).
local function unopened_lines(st)
  local listed = {table.unpack(st.unopened)}
  for _, u in ipairs(st.header.units or {}) do
    if u.kind == "split" and st.cells[u.keys[1]] and st.cells[u.keys[2]] then
      local same, any = true, false
      for _, k in ipairs(st.header.kernels) do
        local a, b = st.cells[u.keys[1]][k], st.cells[u.keys[2]][k]
        if a and b then
          if a.count ~= b.count then same = false end
          if (a.count or 0) > 0 then any = true end
        end
      end
      if same and any then
        listed[#listed + 1] = {event = pmc.parse_name(u.labels[1]).plain, fallback = true,
          reason = "the :u and :k rows are equal: this event ignores the user/OS filter (each counts both)"}
      end
    end
  end
  local out = {}
  for _, part in ipairs({{false, "Not counted here:"}, {true, "Counted user+OS together:"}}) do
    local lines = {}
    for _, u in ipairs(listed) do
      if (u.fallback or false) == part[1] then
        lines[#lines + 1] = string.format("  %-30s %s", u.event, u.reason or "")
      end
    end
    if #lines > 0 then
      out[#out + 1] = ""
      out[#out + 1] = part[2]
      for _, l in ipairs(lines) do out[#out + 1] = l end
    end
  end
  return out
end

-- Renders the classic table.  o.stat picks the statistic shown: mean (the
-- seed's count/(n*reps), default), median, min or max.
function M.report(st, o)
  o = o or {}
  local ws = workloads.of(st.header)
  local rows, timed = rate_rows(st, ws)
  -- the first column fits every label, the heading and the ns rows' with two spaces
  local w = math.max(timed and 40 or 26, #heading(o) + 1)
  for _, r in ipairs(st.header.rows) do w = math.max(w, #M.label(st, r) + 1) end
  local out, shown, zero = event_lines(st, o, ws, w)
  if #zero > 0 then
    for _, l in ipairs(name_lines(string.format("zero in every loop (%d; --all shows them):", #zero), zero)) do
      out[#out + 1] = l
    end
  end
  -- one row per event, its other names here (as pmcsh list's OR)
  for _, a in ipairs(st.header.aliases or {}) do
    local names = {}
    for _, n in ipairs(a.also) do names[#names + 1] = text.inert(n) end
    for _, l in ipairs(name_lines(string.format("%s is also", text.inert(a.event)), {table.concat(names, " OR ")})) do
      out[#out + 1] = l
    end
  end
  for _, l in ipairs(verdict_lines(st)) do out[#out + 1] = l end
  out[#out + 1] = ""
  local wrapped = {}
  for _, l in ipairs(notes(st, o, ws)) do
    local words = {}
    for word in l:gmatch("%S+") do words[#words + 1] = word end
    local first = table.remove(words, 1)
    for _, x in ipairs(name_lines(first, words)) do wrapped[#wrapped + 1] = x end
  end
  for _, part in ipairs({rate_lines(st, rows, w), metric_lines(st, ws, w), {""}, wrapped, unopened_lines(st)}) do
    for _, l in ipairs(part) do out[#out + 1] = l end
  end
  if not st.done then
    out[#out + 1] = ""
    out[#out + 1] = "(incomplete survey: resume it with --resume FILE)"
  end
  if shown == 0 then out[#out + 1] = "(no event counted)" end
  for i, l in ipairs(out) do out[i] = text.inert(l) end   -- names from a results file reach a terminal
  return table.concat(out, "\n") .. "\n"
end

return M
