-- pmcsh.format: how values print, written once.  The REPL shows results
-- with M.value; a result's kind (its metatable's __name) has one compact
-- formatter here, which is also the kind's __tostring, so print(r) in a
-- script prints what the REPL prints; show(v) prints every field.  Results
-- stay plain tables: the metatable only names their kind and prints them
-- (cjson ignores metatables).
local size = require("pmcsh.numbers").size
local doc = require("pmcsh.help").doc

local M = {}

local MAX_DEPTH = 4
local MAX_ITEMS = 200
local WIDTH = 78

local function is_identifier(s)
  return type(s) == "string" and s:match("^[%a_][%w_]*$") ~= nil
end

local function key_order(a, b)
  local ta, tb = type(a), type(b)
  if ta ~= tb then return ta == "number" end
  if ta == "number" or ta == "string" then return a < b end
  return tostring(a) < tostring(b)
end

-- A scalar as Lua would write it: strings quoted (a newline as \n), a
-- float with an integral value keeps its ".0".
local function scalar(v)
  if type(v) == "string" then return (string.format("%q", v):gsub("\\\n", "\\n")) end
  if math.type(v) == "float" and v == math.floor(v) and math.abs(v) < 1e15 then
    return string.format("%.1f", v)
  end
  return tostring(v)
end

-- ---- records: a list of flat tables prints as a table ---------------------

-- Whether t is a list of scalars (a record's small list, reads = {"b", "c"}).
local function scalar_list(t)
  if getmetatable(t) then return false end
  local n = #t
  for k, x in pairs(t) do
    if math.type(k) ~= "integer" or k < 1 or k > n or type(x) == "table" then return false end
  end
  return true
end

-- Whether v is a list of records: every item a table
-- of no kind whose keys are names and whose values are scalars or lists of
-- scalars, and nothing but the items.
local function is_records(v)
  local n = #v
  for k in pairs(v) do
    if math.type(k) ~= "integer" or k < 1 or k > n then return false end
  end
  for i = 1, n do
    local r = v[i]
    if type(r) ~= "table" or getmetatable(r) or next(r) == nil then return false end
    for k, x in pairs(r) do
      if not is_identifier(k) or type(x) == "function" or (type(x) == "table" and not scalar_list(x)) then
        return false
      end
    end
  end
  return true
end

local function cell(x)
  if x == nil then return "" end
  if type(x) == "table" then
    local parts = {}
    for i, e in ipairs(x) do parts[i] = tostring(e) end
    return table.concat(parts, ",")
  end
  if type(x) == "string" then return (x:gsub("%c", " ")) end
  if math.type(x) == "float" and x ~= math.floor(x) then return string.format("%.6g", x) end
  return scalar(x)
end

-- rows as a table: a header of the column names, then one line per row,
-- numbers right-aligned.  columns: the names in order (default: every key,
-- name first, long texts last).
function M.table(rows, columns, indent)
  indent = indent or ""
  if not columns then
    local seen, long = {}, {}
    columns = {}
    for _, r in ipairs(rows) do
      for k, x in pairs(r) do
        if not seen[k] then seen[k] = true; columns[#columns + 1] = k end
        if #cell(x) > 24 then long[k] = true end
      end
    end
    table.sort(columns, function(a, b)
      if (a == "name") ~= (b == "name") then return a == "name" end
      if not long[a] ~= not long[b] then return not long[a] end
      return a < b
    end)
  end
  local width, text = {}, {}
  for j, c in ipairs(columns) do width[j] = #c end
  for i, r in ipairs(rows) do
    text[i] = {}
    for j, c in ipairs(columns) do
      text[i][j] = cell(r[c])
      width[j] = math.max(width[j], #text[i][j])
    end
  end
  local function line(cells, numeric)
    local out = {}
    for j, s in ipairs(cells) do
      local last = j == #cells
      if numeric and numeric[j] then out[j] = string.rep(" ", width[j] - #s) .. s
      else out[j] = last and s or s .. string.rep(" ", width[j] - #s) end
    end
    return indent .. table.concat(out, "  ")
  end
  local lines = {line(columns)}
  for i, r in ipairs(rows) do
    local numeric = {}
    for j, c in ipairs(columns) do numeric[j] = type(r[c]) == "number" end
    lines[#lines + 1] = line(text[i], numeric)
  end
  return table.concat(lines, "\n")
end

-- ---- the kinds' compact forms ----------------------------------------------

local kinds = {}   -- __name -> function(v, indent) -> text

-- A reading as perf stat shows counts: one line per event (value, unit,
-- name, and the share of time counted when multiplexed); pmc.format's too.
function M.reading_lines(r, indent)
  local lines = {}
  local pct = (r.enabled or 0) > 0 and 100 * (r.running or 0) / r.enabled or 100
  for _, e in ipairs(r) do
    lines[#lines + 1] = string.format("%s%16s %-6s %s%s", indent or "",
      math.type(e.value) == "integer" and tostring(e.value) or string.format("%.2f", e.value or 0),
      e.unit or "", e.name, pct < 100 and string.format("  (%.1f%% counted)", pct) or "")
  end
  return lines
end

function M.reading(r, indent)
  local lines = M.reading_lines(r, indent)
  if #lines == 0 then return "{}" end
  return "reading:\n" .. table.concat(lines, "\n")
end
kinds["pmcsh.reading"] = M.reading

-- A result's counts as a reading, headed by what they sum over.
local function counts(r, indent, over)
  return "\n" .. M.reading(r, indent):gsub("^reading:", "counts, summed over " .. over .. ":")
end

kinds["pmcsh.stream_result"] = function(r, indent)
  indent = indent or ""
  local rate = r.mbps and string.format("%.1f MB/s (%s of %d reps", r.mbps, r.mbps_stat or "best", r.reps or 0) or
    string.format("no MB/s (%s; %d reps", r.mbps_why or "not measured", r.reps or 0)
  local head = string.format("%s%s: %s, median %.1f), %d B/iteration, n = %d, " ..
    "%d thread%s, %s pages, %s loop%s", indent, r.kernel, rate,
    (r.bytes_per_iter or 0) * (r.n or 0) / (r.median or 1) * 1e-6, r.bytes_per_iter or 0, r.n or 0,
    r.threads or 0, r.threads == 1 and "" or "s", r.pages or "?", r.isa or "?",
    r.reference and " (reference)" or "")
  if r.counts then head = head .. counts(r.counts, indent, "the reps") end
  for _, w in ipairs(r.warnings or {}) do head = head .. "\n" .. indent .. "warning: " .. w end
  return head
end

kinds["pmcsh.chase_latency"] = function(r, indent)
  indent = indent or ""
  local text = string.format("%s%.2f ns per load (best of %d samples, median %.2f): %s order, %s, stride %d, %s pages",
    indent, r.ns, #r.samples, r.median_ns, r.order, size(r.size), r.stride, r.pages)
  if r.counts then text = text .. counts(r.counts, indent, string.format("the samples (%d loads)", r.loads)) end
  return text
end

kinds["pmcsh.chase_parallelism"] = function(r, indent)
  indent = indent or ""
  local rounds = r.rounds or 1
  local within = r.mlp_rounds or rounds   -- the rounds in which the mlp's row was within k
  local mlp = r.mlp and string.format("%.2f (k=%d, %s)%s", r.mlp, r.mlp_k, rounds > 1
      and string.format("%.2f-%.2f over %s", r.mlp_min, r.mlp_max, within < rounds
        and string.format("the %d of %d rounds within k", within, rounds) or rounds .. " rounds") or "one round: no range",
      r.at_least and string.format(", at least %d: %s", r.at_least, r.engine_limit and "the most chains the engine runs"
        or "raise max") or "")
    or "-"
  local l = {string.format("%sparallelism %s (%s chains): %s order, %s, stride %d, %s pages", indent,
    mlp, r.chains or "?", r.order, size(r.size), r.stride, r.pages)}
  if not r.mlp then l[2] = string.format("%s  no mlp: %s", indent, tostring(r.why)) end
  for _, row in ipairs(r.rows) do
    l[#l + 1] = string.format("%s  k=%-2d %8.2f ns/load  speedup %5.2f%s%s", indent, row.k, row.ns, row.speedup,
      rounds > 1 and string.format(" (%.2f-%.2f)", row.speedup_min, row.speedup_max) or "",
      row.superlinear and "  (above k: left out of mlp)" or "")
  end
  if r.note then l[#l + 1] = indent .. "note: " .. r.note end
  return table.concat(l, "\n")
end

kinds["pmcsh.chase_sweep"] = function(r, indent)
  indent = indent or ""
  local rows = {}
  for i, row in ipairs(r.rows) do
    rows[i] = {size = size(row.size), ns = string.format("%.2f", row.ns), median_ns = string.format("%.2f", row.median_ns)}
  end
  return string.format("%sns per load by size (best of the samples): %s order, stride %d, %s pages\n", indent,
    r.order, r.stride, r.pages) .. M.table(rows, {"size", "ns", "median_ns"}, indent .. "  ")
end

kinds["pmcsh.chase_steps"] = function(r, indent)
  indent = indent or ""
  local l = {}
  for _, st in ipairs(r.steps) do
    l[#l + 1] = string.format("%sstep %s -> %s  x%.1f%s%s", indent, size(st.from), size(st.to), st.ratio,
      st.cache_level and string.format("  (L%d %s per sysfs)", st.cache_level, size(st.cache_size)) or "",
      st.below_llc and "  (to memory, below the LLC)" or "")
  end
  if #l == 0 then l[1] = indent .. "no step: the curve rises nowhere by 25% from one point to the next" end
  if r.note then l[#l + 1] = indent .. "note: " .. r.note end
  return table.concat(l, "\n")
end

kinds["pmcsh.chase_loaded"] = function(r, indent)
  indent = indent or ""
  local rows = {}
  local function spread(lo, mid, hi) return string.format("%.1f %.1f %.1f", lo, mid, hi) end
  for i, row in ipairs(r.rows) do
    rows[i] = {delay = row.delay, mbps = string.format("%.1f", row.mbps),
      mbps_range = string.format("%.1f-%.1f", row.min_mbps, row.max_mbps),
      ns_best_median_worst = spread(row.ns, row.median_ns, row.max_ns)}
  end
  local idle = spread(r.idle.ns, r.idle.median_ns, r.idle.max_ns)
  local text = string.format("%sloaded latency, %d loader thread%s: idle %s ns per load (best median worst); %s order, "
    .. "%s, stride %d, %s pages\n", indent, r.threads, r.threads == 1 and "" or "s", idle, r.order, size(r.size),
    r.stride, r.pages) .. M.table(rows, {"delay", "mbps", "mbps_range", "ns_best_median_worst"}, indent .. "  ")
  for _, f in ipairs(r.flags or {}) do text = text .. "\n" .. indent .. "flag: " .. f.text end
  if r.cause then text = text .. "\n" .. indent .. "likely cause: " .. r.cause end
  if r.note then text = text .. "\n" .. indent .. "note: " .. r.note end
  return text
end

kinds["pmcsh.disasm"] = function(r, indent)
  indent = indent or ""
  local sums = r.elements and string.format("%d instructions per iteration, %g elements per iteration: %.3g " ..
    "instructions per element", r.instructions, r.elements, r.per_element) or string.format("%d instructions " ..
    "per iteration; the elements one handles: unknown (nothing says them)", r.instructions)
  if r.recorded then return string.format("%s%s (%s), recorded where it was built: %s", indent, r.kernel, r.symbol, sums) end
  local l = {string.format("%s%s (%s): inner loop %x..%x", indent, r.kernel, r.symbol, r.from, r.to)}
  for _, line in ipairs(r.lines) do l[#l + 1] = indent .. line end
  l[#l + 1] = indent .. sums
  if #r.loops > 1 then l[#l + 1] = string.format("%s(%d other loops: head/remainder)", indent, #r.loops - 1) end
  return table.concat(l, "\n")
end

-- pmc.info's encoding: the name, where it counts and its perf_event_attr
kinds["pmcsh.event_info"] = function(e, indent)
  indent = indent or ""
  local ex = {}
  for _, k in ipairs({"user", "kernel", "hv"}) do if e["exclude_" .. k] then ex[#ex + 1] = k end end
  local l = {string.format("%s%s (%s, %s): type %d, config 0x%x%s%s%s%s, %s here", indent, e.name or "?",
    e.canonical or "?", e.pmu or "?", e.type or -1, e.config or 0, (e.config1 or 0) ~= 0 and string.format(", config1 0x%x", e.config1) or "",
    (e.config2 or 0) ~= 0 and string.format(", config2 0x%x", e.config2) or "",
    #ex > 0 and ", excludes " .. table.concat(ex, "/") or "",
    (e.precise_ip or 0) > 0 and ", precise_ip " .. e.precise_ip or "", e.opens and "opens" or "does not open")}
  if e.description and e.description ~= "" then l[#l + 1] = indent .. "  " .. e.description end
  if e.corrected then l[#l + 1] = string.format("%s  corrected: %s", indent, e.corrected.why) end
  return table.concat(l, "\n")
end

kinds["pmcsh.records"] = function(v, indent) return M.table(v, nil, indent) end

-- l:info(): what the loop is and what one element of it moves
kinds["pmcsh.loop_info"] = function(l, indent)
  indent = indent or ""
  local per = {}
  if l.reads then per[#per + 1] = "reads " .. (#l.reads > 0 and table.concat(l.reads, ",") or "nothing") end
  if l.writes then per[#per + 1] = "writes " .. (#l.writes > 0 and table.concat(l.writes, ",") or "nothing") end
  if l.loads then per[#per + 1] = string.format("%d load%s, %d store%s", l.loads, l.loads == 1 and "" or "s",
    l.stores or 0, l.stores == 1 and "" or "s") end
  if l.bytes then per[#per + 1] = string.format("%s B%s", scalar(l.bytes),
    l.bytes_wa and string.format(" (%s with write-allocate)", scalar(l.bytes_wa)) or "") end
  if l.flops then per[#per + 1] = scalar(l.flops) .. " flops" end
  local how = {l.convention == "own" and "its own data" or "STREAM's arrays"}
  if l.described then how[#how + 1] = "described" end
  if l.probed then how[#how + 1] = "probed on one element" end
  if l.reference then how[#how + 1] = "validated against its reference" end
  if l.reduction then how[#how + 1] = "a reduction" end
  return string.format("%sloop %s (%s in %s): %s; per element: %s", indent, tostring(l.name), tostring(l.symbol),
    tostring(l.path), table.concat(how, ", "), #per > 0 and table.concat(per, ", ") or "nothing said")
end

-- regions.run's result: a row per region, its inclusive counts per event
kinds["pmcsh.regions_result"] = function(r, indent)
  indent = indent or ""
  local cmd = type(r.command) == "table" and table.concat(r.command, " ") or tostring(r.command)
  local l = {string.format("%sregions of %s: status %s, %.6f s, %d process%s", indent, cmd, tostring(r.status),
    r.elapsed or 0, #(r.processes or {}), #(r.processes or {}) == 1 and "" or "es")}
  local columns, rows = {"region", "calls", "iterations"}, {}
  for _, e in ipairs(r.events or {}) do columns[#columns + 1] = e end
  for i, g in ipairs(r.regions or {}) do
    rows[i] = {region = g.name, calls = g.calls, iterations = g.iterations}
    for j, e in ipairs(r.events or {}) do rows[i][e] = (g.inclusive or {})[j] end
  end
  if #rows > 0 then l[#l + 1] = M.table(rows, columns, indent .. "  ") .. "\n" .. indent .. "  (inclusive counts)"
  else l[#l + 1] = indent .. "  no region ended" end
  if r.cost and r.cost.ns then l[#l + 1] = string.format("%s  a begin/end pair costs %.0f ns", indent, r.cost.ns) end
  for _, n in ipairs(r.notes or {}) do l[#l + 1] = indent .. "  note: " .. tostring(n) end
  return table.concat(l, "\n")
end

-- v's kind: its metatable's __name, or the name a protected one gives
-- (__metatable, as a reading's).
local function kind_name(v)
  local mt = getmetatable(v)
  if type(mt) == "string" then return mt end
  return type(mt) == "table" and rawget(mt, "__name") or nil
end

-- __tostring of every kind: its compact form.
local function compact(v)
  return kinds[kind_name(v)](v, "")
end

-- The metatable of a kind of result ("pmcsh.stream_result", ...): its
-- name and its compact form as __tostring; one table per kind.
local metatables = {}
function M.kind(name)
  assert(kinds[name], "format.kind: no formatter for " .. tostring(name))
  metatables[name] = metatables[name] or {__name = name, __tostring = compact}
  return metatables[name]
end

-- A kind's metatable made elsewhere (a reading's, made in C with its
-- __index): its compact form as __tostring, as M.kind gives.
function M.adopt(mt)
  assert(kinds[mt.__name], "format.adopt: no formatter for " .. tostring(mt.__name))
  mt.__tostring = compact
  return mt
end

-- ---- any value ---------------------------------------------------------------

-- Renders v readably: nested tables indented, keys sorted, cycles and depth
-- bounded, long tables cut with a count of what was left out; a list of
-- two or more records, given itself, as a table.  A kind prints compactly
-- unless full (every field).
function M.value(v, full, depth, seen, indent)
  depth, seen, indent = depth or 0, seen or {}, indent or ""
  if type(v) ~= "table" then return scalar(v) end
  local mt = getmetatable(v)
  local kind = kinds[kind_name(v)]
  if kind and not full then return kind(v, indent) end
  if type(mt) == "table" and mt.__tostring and not kind then return tostring(v) end
  if seen[v] then return "<cycle " .. tostring(v) .. ">" end
  if depth >= MAX_DEPTH then return "{...}" end
  if depth == 0 and #v >= 2 and #v <= MAX_ITEMS and is_records(v) then return M.table(v) end
  local n = #v
  local keys = {}
  for k in pairs(v) do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then keys[#keys + 1] = k end
  end
  if n == 0 and #keys == 0 then return "{}" end
  table.sort(keys, key_order)
  seen[v] = true
  local inner = indent .. "  "
  local parts, count = {}, 0
  for i = 1, n do
    count = count + 1
    if count > MAX_ITEMS then break end
    parts[#parts + 1] = M.value(v[i], full, depth + 1, seen, inner)
  end
  for _, k in ipairs(keys) do
    count = count + 1
    if count > MAX_ITEMS then break end
    local ks = is_identifier(k) and k or "[" .. scalar(k) .. "]"
    parts[#parts + 1] = ks .. " = " .. M.value(v[k], full, depth + 1, seen, inner)
  end
  if count > MAX_ITEMS then
    parts[#parts + 1] = string.format("-- %d more", n + #keys - MAX_ITEMS)
  end
  seen[v] = nil
  local flat = "{" .. table.concat(parts, ", ") .. "}"
  if #flat + #indent <= WIDTH and not flat:find("\n") then return flat end
  return "{\n" .. inner .. table.concat(parts, ",\n" .. inner) .. "\n" .. indent .. "}"
end

M.show = doc(function(v)
  local ok, text = pcall(M.value, v, true)
  print(ok and text or tostring(v))
end, "show", [[
show(x) prints x with every field: a result of s:run or a chase, which
print(r) and the REPL show in a line or a few, as the whole table (nested
tables indented, keys sorted, 200 items and 4 levels at most); a list of
records, such as stream.kernels(), as a table with a line per record.]])

return M
