-- The Lua half of the REPL: how results print and what Tab proposes.
local complete = require("pmcsh.complete")

local M = {}

local MAX_DEPTH = 4
local MAX_ITEMS = 200

local keywords = {
  "and", "break", "do", "else", "elseif", "end", "false", "for", "function",
  "goto", "if", "in", "local", "nil", "not", "or", "repeat", "return", "then",
  "true", "until", "while",
}

local lazy = require("pmcsh.names").lazy

local function is_identifier(s)
  return type(s) == "string" and s:match("^[%a_][%w_]*$") ~= nil
end

local function key_order(a, b)
  local ta, tb = type(a), type(b)
  if ta ~= tb then return ta == "number" end
  if ta == "number" or ta == "string" then return a < b end
  return tostring(a) < tostring(b)
end

local function scalar(v)
  if type(v) == "string" then return (string.format("%q", v):gsub("\\\n", "\\n")) end
  if math.type(v) == "float" and v == math.floor(v) and math.abs(v) < 1e15 then
    return string.format("%.1f", v)
  end
  return tostring(v)
end

local full = false   -- set by M.full: results print every field
local COMPACT        -- __name -> formatter, below

-- A reading as perf stat shows counts: one line per event (value, unit,
-- name, and the share of time counted when multiplexed).
function M.reading(r, indent)
  local lines = {}
  local pct = (r.enabled or 0) > 0 and 100 * (r.running or 0) / r.enabled or 100
  for _, e in ipairs(r) do
    lines[#lines + 1] = string.format("%s%16s %-6s %s%s", indent or "",
      math.type(e.value) == "integer" and tostring(e.value) or string.format("%.2f", e.value or 0),
      e.unit or "", e.name, pct < 100 and string.format("  (%.1f%% counted)", pct) or "")
  end
  if #lines == 0 then return "{}" end
  return "reading:\n" .. table.concat(lines, "\n")
end

local size = require("pmcsh.metrics").size

-- Results of the engines, one or a few lines each (show(x) prints all).
COMPACT = {
  ["pmcsh.reading"] = M.reading,
  ["pmcsh.stream_result"] = function(r, indent)
    local head = string.format("%s%s: %.1f MB/s (best of %d reps, median %.1f), %d B/iteration, n = %d, " ..
      "%d thread%s, %s pages, %s loop%s", indent or "", r.kernel, r.mbps or 0, r.reps or 0,
      (r.bytes_per_iter or 0) * (r.n or 0) / (r.median or 1) * 1e-6, r.bytes_per_iter or 0, r.n or 0,
      r.threads or 0, r.threads == 1 and "" or "s", r.pages or "?", r.isa or "?",
      r.reference and " (reference)" or "")
    if r.counts then head = head .. "\n" .. M.reading(r.counts, indent):gsub("^reading:", "counts, summed over the reps:") end
    for _, w in ipairs(r.warnings or {}) do head = head .. "\n" .. (indent or "") .. "warning: " .. w end
    return head
  end,
  ["pmcsh.chase_latency"] = function(r, indent)
    return string.format("%s%.2f ns per load (best of %d samples, median %.2f): %s order, %s, stride %d, %s pages",
      indent or "", r.ns, #r.samples, r.median_ns, r.order, size(r.size), r.stride, r.pages)
  end,
  ["pmcsh.chase_parallelism"] = function(r, indent)
    local l = {string.format("%sparallelism %s (%s chains): %s order, %s, stride %d, %s pages", indent or "",
      r.mlp and string.format("%.2f%s%s", r.mlp, (r.rounds or 1) > 1 and string.format(" (k=%d, %.2f-%.2f over %d rounds)", r.mlp_k,
        r.mlp_min, r.mlp_max, r.rounds) or "", r.at_least and string.format(", at least %d", r.at_least) or "")
        or ("none: " .. tostring(r.why)), r.chains or "?", r.order, size(r.size), r.stride, r.pages)}
    for _, row in ipairs(r.rows) do
      l[#l + 1] = string.format("%s  k=%-2d %8.2f ns/load  speedup %5.2f%s", indent or "", row.k, row.ns,
        row.speedup, row.superlinear and "  (above k: left out of mlp)" or "")
    end
    return table.concat(l, "\n")
  end,
}

-- Renders v readably: nested tables indented, keys sorted, cycles and depth
-- bounded, long tables cut with a count of what was left out.
function M.format(v, depth, seen, indent)
  depth, seen, indent = depth or 0, seen or {}, indent or ""
  if type(v) ~= "table" then return scalar(v) end
  local mt = getmetatable(v)
  if mt and mt.__tostring then return tostring(v) end
  if mt and not full and COMPACT[mt.__name] then return COMPACT[mt.__name](v, indent) end
  if seen[v] then return "<cycle " .. tostring(v) .. ">" end
  if depth >= MAX_DEPTH then return "{...}" end
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
    parts[#parts + 1] = M.format(v[i], depth + 1, seen, inner)
  end
  for _, k in ipairs(keys) do
    count = count + 1
    if count > MAX_ITEMS then break end
    local ks = is_identifier(k) and k or "[" .. scalar(k) .. "]"
    parts[#parts + 1] = ks .. " = " .. M.format(v[k], depth + 1, seen, inner)
  end
  if count > MAX_ITEMS then
    parts[#parts + 1] = string.format("-- %d more", n + #keys - MAX_ITEMS)
  end
  seen[v] = nil
  local flat = "{" .. table.concat(parts, ", ") .. "}"
  if #flat + #indent <= 78 and not flat:find("\n") then return flat end
  return "{\n" .. inner .. table.concat(parts, ",\n" .. inner) .. "\n" .. indent .. "}"
end

-- Prints the results of a REPL statement on one line, tab-separated, as
-- lua prints them (each readably formatted); `_` keeps the first.
function M.show(...)
  local n = select("#", ...)
  local parts = {}
  for i = 1, n do parts[i] = M.format((select(i, ...))) end
  rawset(_G, "_", (...))
  print(table.concat(parts, "\t"))
end

-- Prints v with every field, readings included (the REPL's show(v)).
function M.full(v)
  full = true
  local ok, text = pcall(M.format, v)
  full = false
  print(ok and text or tostring(v))
end

-- Passes a call's results through; a failure (nil, message) is printed
-- where it happens, so `g = pmc.group{"cycles"}` does not fail silently.
function M.checked(...)
  local v, msg = ...
  if v == nil and type(msg) == "string" and select("#", ...) >= 2 then
    io.stderr:write("failed: ", msg, "\n")
    io.stderr:flush()
  end
  return ...
end

-- `x = f(...)` or `local x = t.f(...)`: the same statement with the
-- right-hand side passed through M.checked; nil for any other statement.
function M.rewrite(src)
  local lhs, rhs = src:match("^%s*([%a_][%w_%.]*%s*=)%s*([%a_][%w_%.:]*%s*[%(%{\"'].-);?%s*$")
  local loc = src:match("^%s*local%s+") and "local " or ""
  if not lhs then
    lhs, rhs = src:match("^%s*local%s+([%a_][%w_]*%s*=)%s*([%a_][%w_%.:]*%s*[%(%{\"'].-);?%s*$")
  end
  if not lhs or lhs:match("^local") then return nil end
  return string.format("local __checked = require('pmcsh.repl').checked; %s%s __checked(%s)", loc, lhs, rhs)
end

-- Fields proposed after "x." or "x:" for a value: its own keys, then those
-- reachable through __index tables.
local function fields(v, methods_only)
  local out, seen = {}, {}
  local function add(t)
    for k, val in pairs(t) do
      if is_identifier(k) and not seen[k] and (not methods_only or type(val) == "function") then
        seen[k] = true
        out[#out + 1] = k
      end
    end
  end
  local guard = 0
  while v ~= nil and guard < 8 do
    guard = guard + 1
    if type(v) == "table" then add(v) end
    local mt = getmetatable(v)
    local idx = type(mt) == "table" and rawget(mt, "__index") or nil
    if type(v) == "string" then idx = string end
    if type(idx) ~= "table" then break end
    v = idx
  end
  return out
end

local function resolve(path)
  local v = _G
  for name in path:gmatch("[^.:]+") do
    if type(v) ~= "table" and type(v) ~= "userdata" and type(v) ~= "string" then return nil end
    local ok, nv = pcall(function() return v[name] end)
    if not ok then return nil end
    v = nv
  end
  return v
end

local function matching(list, prefix, lead)
  local out = {}
  for _, s in ipairs(list) do
    if s:sub(1, #prefix) == prefix then out[#out + 1] = (lead or "") .. s end
  end
  table.sort(out)
  return out
end

-- Candidates for `word`, with `line` the text before the cursor.
function M.complete(line, word)
  -- a lazy module named on the line registers its completers when loaded
  for name in pairs(lazy) do
    if rawget(_G, name) == nil and line:find("%f[%w_]" .. name .. "[.:]") then pcall(function() return _G[name] end) end
  end
  local hooked = complete.ask(line, word)
  if hooked then return hooked end
  if complete.in_string(line) then return {} end
  local base, sep, prefix = word:match("^(.-)([.:])([%w_]*)$")
  if base and base ~= "" then
    local v = resolve(base)
    if v == nil then return {} end
    return matching(fields(v, sep == ":"), prefix, base .. sep)
  end
  local names = {}
  for k in pairs(_G) do if is_identifier(k) then names[#names + 1] = k end end
  for k in pairs(lazy) do if rawget(_G, k) == nil then names[#names + 1] = k end end
  for _, k in ipairs(keywords) do names[#names + 1] = k end
  return matching(names, word)
end

-- Called once when the REPL starts: the banner under lua's version line.
function M.setup()
  print(string.format("pmcsh %s: help() for the topics, Tab completes, Ctrl-D leaves",
    require("pmcsh.paths").version))
end

return M
