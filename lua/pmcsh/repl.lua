-- The Lua half of the REPL: its results (printed by pmcsh.format), the
-- check of a failing assignment, and what Tab proposes.
local complete = require("pmcsh.complete")
local paths = require("pmcsh.paths")
local format = require("pmcsh.format")
local names = require("pmcsh.names")

local M = {}

local keywords = {
  "and", "break", "do", "else", "elseif", "end", "false", "for", "function",
  "goto", "if", "in", "local", "nil", "not", "or", "repeat", "return", "then",
  "true", "until", "while",
}

local function is_identifier(s)
  return type(s) == "string" and s:match("^[%a_][%w_]*$") ~= nil
end

-- The results of a REPL statement, each readably formatted, for the host
-- to hand to the global print as lua does (one line, tab-separated);
-- `_` keeps the first.
function M.show(...)
  local n = select("#", ...)
  local parts = {}
  for i = 1, n do parts[i] = format.value((select(i, ...))) end
  rawset(_G, "_", (...))
  return table.unpack(parts, 1, n)
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
    local mt = debug.getmetatable(v)   -- a handle's is hidden (__metatable)
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
  -- a global the line names is in use: its module loads, and with it
  -- its completers (pmc's event names inside pmc.group{"...)
  for name in line:gmatch("[%a_][%w_]*") do
    if names.globals[name] and rawget(_G, name) == nil then local _ = _G[name] end
  end
  local vcall, key, quoted = complete.option_value(line, word)
  local values = vcall and complete.values_of(resolve(vcall), key)
  if values then
    local out = matching(values, word)
    if not quoted then for i, v in ipairs(out) do out[i] = string.format("%q", v) end end
    return out
  end
  local hooked = complete.ask(line, word)
  if hooked then return hooked end
  if complete.in_string(line) then return {} end
  local call = complete.option_call(line, word)
  local keys = call and complete.keys_of(resolve(call))
  if keys and word:match("^[%a_]?[%w_]*$") then
    local out = matching(keys, word)
    for i, k in ipairs(out) do out[i] = k .. "=" end
    return out
  end
  local base, sep, prefix = word:match("^(.-)([.:])([%w_]*)$")
  if base and base ~= "" then
    local v = resolve(base)
    if v == nil then return {} end
    return matching(fields(v, sep == ":"), prefix, base .. sep)
  end
  local seen = {}
  for k in pairs(_G) do if is_identifier(k) then seen[k] = true end end
  for k in pairs(names.globals) do seen[k] = true end   -- loaded when first read
  for _, k in ipairs(keywords) do seen[k] = true end
  local list = {}
  for k in pairs(seen) do list[#list + 1] = k end
  return matching(list, word)
end

-- The banner under lua's version line, when a person starts the REPL at a
-- terminal (input from elsewhere sees what lua prints, and no more).
function M.banner()
  io.stdout:write(string.format("pmcsh %s: help() for the topics, Tab completes, Ctrl-D leaves\n",
    paths.version))
end

return M
