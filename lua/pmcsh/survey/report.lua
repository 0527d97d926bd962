-- The survey's table: one row per event, one column per workload, the
-- value (events per iteration) and the spread over the pairs kept; the
-- bandwidth and time per iteration with and without counters; the group's
-- metrics; and what was not counted here, with the reason.  It reads the
-- records (pmcsh.survey.records) and the header, never the runs; the heat
-- map shares its words (value_text, spread_text, row_class, ...).
local numbers = require("pmcsh.numbers")
local pmc = require("pmcsh.pmc")
local text = require("pmcsh.text")
local cell = require("pmcsh.survey.cell")
local D = require("pmcsh.survey.defaults")
local records = require("pmcsh.survey.records")
local workloads = require("pmcsh.survey.workloads")

local M = {}

-- Whether a row (its records by kernel) is zero in every column it has:
-- the rows the table and the heat map leave out unless --all.
function M.zero_row(byk, kernels)
  local any = false
  for _, k in ipairs(kernels) do
    local r = byk[k]
    if r then
      if not r.zero then return false end
      any = true
    end
  end
  return any
end

-- A row's class: the least exact of its classed cells' (a cell with none
-- is marked in its place); zero for a zero row; nil where no cell has one.
local RANK = {zero = 0, exact = 1, linear = 2, noisy = 3, multiplexed = 4}
function M.row_class(byk, kernels)
  if M.zero_row(byk, kernels) then return "zero" end
  local worst
  for _, k in ipairs(kernels) do
    local class = byk[k] and byk[k].class
    if class and (not worst or (RANK[class] or 0) > (RANK[worst] or 0)) then worst = class end
  end
  return worst
end

-- A cell's spread as the table prints it: "--" where a relative spread
-- means nothing (the mean is 0, or the pairs straddle it so that the
-- spread passes 999%); "*" multiplexed, "?" too few pairs kept to class,
-- "!" every pair disturbed (the value their estimate, no class).
-- Empty for no cell or one with nothing under it.
function M.spread_text(c)
  if not c or c.standing == "dropped" or c.mean == nil then return "" end
  local s
  if c.spread == nil and c.max == c.min then s = ""
  elseif c.spread == nil or c.spread ~= c.spread or c.spread >= 9.995 then s = "--"
  elseif c.spread == 0 then s = "±0%"
  elseif c.spread < 0.1 then s = string.format("±%.1f%%", c.spread * 100)
  else s = string.format("±%.0f%%", c.spread * 100) end
  if c.multiplexed then s = s .. "*" end
  if c.standing == "few" then s = s .. "?" end
  if c.standing == "disturbed" then s = s .. "!" end
  return s
end

-- A cell's value as a row prints it (num: the row's notation, row_format):
-- "dropped" where no window was counted.
function M.value_text(c, v, num)
  if c and c.standing == "dropped" then return string.format("%9s", "dropped") end
  return num(v)
end

-- Per workload, the samples its cells kept of those made: "5/5 pairs",
-- "3-5/5 pairs" where its runs differ, nil where no cell says.
function M.kept_text(ix, kernel)
  local lo, hi, total, what
  for _, byk in pairs(ix.events) do
    local r = byk[kernel]
    if r and r.kept then
      lo, hi, total = math.min(lo or r.kept, r.kept), math.max(hi or r.kept, r.kept), math.max(total or r.made, r.made)
      what = r.sample_kind
    end
  end
  if not lo then return nil end
  return string.format("%s/%d %s", lo == hi and string.format("%d", lo) or string.format("%d-%d", lo, hi), total, what)
end

local function trim(s) return (s:gsub("%s+$", "")) end

-- A row's label: its key, and its unit when the event has one (task-clock: ns per iteration).
function M.label(key, byk)
  for _, r in pairs(byk) do
    if r.count_unit then return key .. " (" .. r.count_unit .. ")" end
  end
  return key
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

local function event_lines(ix, kernels, o, cols, w, threads)
  local line = {text.pad(heading(o), w)}
  for _, k in ipairs(kernels) do line[#line + 1] = string.format("%10s%-7s", cols[k].title, "") end
  line[#line + 1] = " class"
  local out, zero = {trim(table.concat(line))}, {}
  -- what each column rests on: its pairs kept of those made
  line = {text.pad("kept / made", w)}
  local said = false
  for _, k in ipairs(kernels) do
    local kt = M.kept_text(ix, k)
    said = said or kt ~= nil
    line[#line + 1] = " " .. text.pad(string.format("%15s", kt or ""), 16)
  end
  -- and the threads each window ran on, where the class column is
  line[#line + 1] = string.format(" %d thread%s", threads, threads == 1 and "" or "s")
  if said then out[#out + 1] = trim(table.concat(line)) end
  for _, key in ipairs(ix.keys) do
    local byk = ix.events[key]
    if M.zero_row(byk, kernels) and not o.all then
      zero[#zero + 1] = key
    else
      local vals = {}
      for i, k in ipairs(kernels) do vals[i] = byk[k] and byk[k].value end
      local num = row_format(vals)
      line = {text.pad(M.label(key, byk), w)}
      for i, k in ipairs(kernels) do
        line[#line + 1] = " " .. M.value_text(byk[k], vals[i], num) .. " " .. text.pad(M.spread_text(byk[k]), 6)
      end
      line[#line + 1] = " " .. (M.row_class(byk, kernels) or "--")
      out[#out + 1] = trim(table.concat(line))
    end
  end
  return out, #ix.keys, zero
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

-- The workloads' figures (records.FIGURES) as rows, each label saying its
-- estimator: bandwidth beside the counted runs', so the perturbation is
-- visible; ns per iteration where a workload moves no STREAM bytes.  Then
-- counted/uncounted - 1 and the same between two runs without counters
-- (the noise floor).  A row with no value at all is left out.
local SHOWN = {mbps = "%9.1f", mbps_counted = "%9.1f", ns = "%9.2f", ns_counted = "%9.2f"}
local function rate_rows(ix, kernels)
  local f = ix.figures
  local timed = false   -- a workload timed but moving no STREAM bytes
  for _, k in ipairs(kernels) do
    timed = timed or ((f.ns or {})[k] ~= nil and (f.mbps or {})[k] == nil)
  end
  local rows = {}
  for _, fig in ipairs(records.FIGURES) do
    local byk = f[fig.figure]
    if SHOWN[fig.figure] and byk and (timed or not fig.figure:match("^ns")) then
      local how, seen = {}, {}
      for _, k in ipairs(kernels) do
        local s = byk[k] and byk[k].stat
        if s and not seen[s] then seen[s], how[#how + 1] = true, s end
      end
      local label = fig.name
      if not label:find("(", 1, true) and #how > 0 then
        label = label .. " (" .. table.concat(how, " / "):gsub(" / median ", " / ") .. ")"
      end
      local vals = {}
      for _, k in ipairs(kernels) do vals[k] = byk[k] and byk[k].value end
      rows[#rows + 1] = {label, vals, SHOWN[fig.figure]}
    end
  end
  local function v(fig, k) return f[fig] and f[fig][k] and f[fig][k].value end
  local pert, aa = {}, {}
  for _, k in ipairs(kernels) do
    local m, mc, n, nc = v("mbps", k), v("mbps_counted", k), v("ns", k), v("ns_counted", k)
    if m and mc and m > 0 then pert[k] = (mc / m - 1) * 100
    elseif n and nc and nc > 0 then pert[k] = (n / nc - 1) * 100 end
    local m2, n2 = v("mbps_aa", k), v("ns_aa", k)
    if m and m2 and m > 0 then aa[k] = (m2 / m - 1) * 100
    elseif n and n2 and n2 > 0 then aa[k] = (n / n2 - 1) * 100 end
  end
  rows[#rows + 1] = {"counted/uncounted - 1, %", pert}
  rows[#rows + 1] = {"  noise floor: A/A - 1, %", aa}
  return rows
end

-- Those rows as lines; a row with no value at all is left out.
local function rate_lines(rows, kernels, w)
  local out = {}
  for _, s in ipairs(rows) do
    local l, any = {text.pad(s[1], w)}, false
    for _, k in ipairs(kernels) do
      local v = s[2][k]
      any = any or v ~= nil
      l[#l + 1] = " " .. (v and string.format(s[3] or "%9.1f", v) or string.format("%9s", "n/a")) .. string.rep(" ", 7)
    end
    if any then out[#out + 1] = trim(table.concat(l)) end
  end
  return out
end

-- The group's metrics, with one line per kernel and reason for the n/a
-- cells, and what a formula's seconds are.
local function metric_lines(ix, info, kernels, cols, w)
  if not (info.group or info.group_why) then return {} end
  if not info.group then return {"", "Metrics: none shown: " .. info.group_why} end
  if #ix.metrics == 0 then return {} end
  for _, r in ipairs(ix.metrics) do w = math.max(w, #r.name + (r.unit and #r.unit + 3 or 0) + 1) end
  local l = {text.pad("Metrics (" .. (info.group:match("[^/]*/[^/]*$") or info.group) .. ")", w)}
  for _, k in ipairs(kernels) do l[#l + 1] = string.format("%10s%-7s", cols[k].title, "") end
  local out, why = {"", trim(table.concat(l))}, {}
  for _, r in ipairs(ix.metrics) do
    l = {text.pad(r.name .. (r.unit and (" (" .. r.unit .. ")") or ""), w)}
    for _, k in ipairs(kernels) do
      local rec = r[k] or {}
      l[#l + 1] = " " .. numbers.fmt(rec.value, 9) .. string.rep(" ", 7)
      local reason = rec.value == nil and rec.note
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
  out[#out + 1] = "  seconds in a formula: per iteration, the time's own two-window slope, pair by pair as " ..
    "the counts (median slope)"
  return out
end

-- What the numbers are: n, pairs of windows, threads, pages; the method;
-- each workload's note.
local function notes(st, o, cols)
  local hdr = st.header
  -- the loops' windows come in pairs; a chase's are a sample each (its note)
  local paired = false
  for _, k in ipairs(hdr.kernels) do paired = paired or cols[k].sized == true end
  local pairs = cell.pairs(hdr.reps)
  local made = hdr.slice and string.format("at least %d pair%s of windows kept", pairs, pairs == 1 and "" or "s") or
    string.format("%d pair%s of windows", pairs, pairs == 1 and "" or "s")
  local out = {string.format("n = %s, %s per run (--reps %d%s)%s, %d thread%s, %s%s; %s",
    tostring(hdr.n or "default"), paired and made or string.format("%d windows", hdr.reps), hdr.reps,
    hdr.budget and string.format(", --budget %gs", hdr.budget) or "",
    hdr.fresh and " (fresh arrays, no warm-up)" or "",
    hdr.threads or 1, (hdr.threads or 1) == 1 and "" or "s",
    hdr.pages and (hdr.pages .. " pages") or "page policy not recorded",
    hdr.split and ", :u user / :k OS" or "",
    (o.stat and o.stat ~= D.stat) and ("showing the " .. o.stat) or "showing the trimmed mean (20th-80th percentile)")}
  out[#out + 1] = hdr.slice and (hdr.fresh and string.format(
    "value = (count of a 2-pass window - count of a 1-pass window) / their difference in elements, each window " ..
    "over %d untouched elements of each thread's part of fresh arrays; first touch is the window's cost " ..
    "(intercept, in --csv/--json)", hdr.slice) or string.format(
    "value = (count of a window over %d elements of each thread's part - count of one over %d) / their " ..
    "difference in elements, each window on elements not touched since a whole pass over the arrays (from " ..
    "memory): the window's own cost cancels (intercept, in --csv/--json)", 2 * hdr.slice, hdr.slice)) or
    hdr.fresh and
    "value = (count of a 2-pass window - count of a 1-pass window) / n, each window on fresh arrays; " ..
    "first touch is the window's cost (intercept, in --csv/--json)" or
    "value = (count of a window over n - count of one over each thread's first half or so) / their difference " ..
    "in elements: the window's own cost cancels (intercept, in --csv/--json)"
  out[#out + 1] = string.format("a pair that counted a context switch, a migration or an SMI is dropped%s: " ..
    "! = every pair of the cell's run disturbed: the value is theirs, no class, no check; dropped = no window " ..
    "counted, no value; ± = (max - min) / mean over the pairs kept, -- " ..
    "where that is undefined (a mean of 0, or past 999%%); * = multiplexed; ? = fewer than %d pairs kept, no class; " ..
    "class, of the cells with one: zero (no count in a kept window), exact (every pair the same, to one count), " ..
    "linear (within %d%%), noisy", hdr.slice and " (pairs are made until enough are kept or the budget is spent)"
    or "", cell.MIN_KEPT, math.floor(cell.LINEAR * 100 + 0.5))
  for _, k in ipairs(hdr.kernels) do
    if cols[k].note then out[#out + 1] = cols[k].note end
  end
  if hdr.emulated then
    out[#out + 1] = "measured on an emulated machine (" .. hdr.emulated .. "): counts of instructions are exact, " ..
      "times and bandwidth mean nothing"
  end
  return out
end

-- The checks: each cell whose count pmcsh can predict, the prediction and
-- the verdict; a failure says by how much.
local function verdict_lines(recs)
  local out = {}
  local function num(v) return v and (numbers.fmt(v, 1):gsub("^%s+", "")) or "--" end
  for _, r in ipairs(recs) do
    if r.kind == "event" and r.verdict then
      local got = r.checked
      local word = ({pass = "ok", unresolved = "--"})[r.verdict] or "FAIL"
      out[#out + 1] = string.format("  %-4s %s, %s: %s %s, expected %s (%s)%s", word,
        r.name, r.kernel, r.check == "intercept" and "per window" or "per iteration", num(got), num(r.expected),
        r.basis or "", r.verdict ~= "fail" and "" or string.format(": off by %+.2f%%", 100 * (got / r.expected - 1)))
    end
  end
  if #out > 0 then table.insert(out, 1, "Checks, each against a figure known without the counter:") ; table.insert(out, 1, "") end
  return out
end

-- Not counted here, and counted user+OS together: the unopened list, and
-- :u and :k rows with identical nonzero counts (the event ignores the
-- privilege filter, as the kernel's software clocks do).
local function unopened_lines(st, ix)
  local listed = {table.unpack(st.unopened)}
  for _, u in ipairs(st.header.units or {}) do
    local ua, ub = ix.events[u.keys[1]], ix.events[u.keys[2] or ""]
    if u.kind == "split" and ua and ub then
      local same, any = true, false
      for _, k in ipairs(st.header.kernels) do
        local a, b = ua[k], ub[k]
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

-- The lines under the rows: zero rows, the events' other names, the checks.
local function below_rows(st, recs, zero)
  local out = {}
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
  for _, l in ipairs(verdict_lines(recs)) do out[#out + 1] = l end
  return out
end

-- Renders the classic table.  o.stat picks the statistic shown (trimmed,
-- the default; median, min, max or mean); o.all shows the zero rows.
function M.report(st, o)
  o = o or {}
  local recs, info = records.of(st, o)
  local ix, kernels, cols = records.index(recs), st.header.kernels, workloads.columns(st.header)
  local rates = rate_rows(ix, kernels)
  -- the first column fits every label and the heading, with two spaces
  local w = math.max(26, #heading(o) + 1)
  for _, r in ipairs(rates) do w = math.max(w, #r[1] + 1) end
  for _, key in ipairs(ix.keys) do w = math.max(w, #M.label(key, ix.events[key]) + 1) end
  local out, shown, zero = event_lines(ix, kernels, o, cols, w, st.header.threads or 1)
  for _, l in ipairs(below_rows(st, recs, zero)) do out[#out + 1] = l end
  out[#out + 1] = ""
  local wrapped = {}
  for _, l in ipairs(notes(st, o, cols)) do
    local words = {}
    for word in l:gmatch("%S+") do words[#words + 1] = word end
    local first = table.remove(words, 1)
    for _, x in ipairs(name_lines(first, words)) do wrapped[#wrapped + 1] = x end
  end
  for _, part in ipairs({rate_lines(rates, kernels, w), metric_lines(ix, info, kernels, cols, w), {""}, wrapped,
    unopened_lines(st, ix)}) do
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
