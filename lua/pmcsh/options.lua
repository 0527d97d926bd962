-- Option values: a recipe's declared options ({name=, type=, min=, max=,
-- choices=, ...}) converted and checked, once, for the command line,
-- recipe.run and the options a results file's header repeats.  Below the
-- recipe host so that an experiment (the survey) checks its header with
-- the very checks its options had.
local plot = require("pmcsh.plot")
local errors = require("pmcsh.errors")
local text = require("pmcsh.text")
local sys_C = require("pmcsh._sys")

local M = {}

-- A usage error object (errors.usage): the host prints the message and
-- exits with status 2.
M.usage = errors.usage

function M.usage_error(fmt, ...)
  error(M.usage(string.format(fmt, ...)), 0)
end
local usage_error = M.usage_error

local SIZE_UNITS = {[""] = 1, b = 1, k = 1024, m = 1024 ^ 2, g = 1024 ^ 3, t = 1024 ^ 4}

-- The largest value of an int, size or number option that declares no
-- smaller max: 2^53, below which a double holds every integer, so that a
-- size times its unit, or a count times a size, neither wraps nor rounds.
M.MAX_VALUE = 1 << 53

-- "64M", "1GiB", "4k", "1048576" -> bytes (binary units), or nil and why.
function M.parse_size(s)
  if math.type(s) == "integer" then return s end
  if type(s) ~= "string" then return nil end
  local num, unit = s:lower():match("^%s*(%d+%.?%d*)%s*([kmgtb]?)i?b?%s*$")
  if not num then return nil end
  local v = (tonumber(num) + 0.0) * SIZE_UNITS[unit]   -- as a double: 2^63 and more do not wrap
  if v ~= math.floor(v) then return nil end      -- 1.5 of one byte or one element is no size
  if v > M.MAX_VALUE then return nil, string.format("%s is above the largest size, 2^53 bytes", s) end
  return math.tointeger(v)
end

-- Splits "a,b,c" at commas, except those inside a sysfs event's slashes
-- ("uncore_imc_0/event=0x4,umask=0x3/" stays whole) or inside perf's group
-- braces ("{a,b},c" is "{a,b}" and "c"); empty items left out unless
-- keep_empty: the event list's one splitter, pmc_split_list (core/evname.c).
M.split_list = sys_C.split_list

local function flag_name(o) return "--" .. o.name:gsub("_", "-") end

-- The bounds of a numeric option (int, number, size), its own or an
-- option list's items (items = {type=, min=, max=}): every value finite,
-- at least min, at most max (M.MAX_VALUE unless it says less).  The one
-- place where a count or a size from the command line, recipe.run or a
-- results file's header is checked.
local function bounded(o, r, what)
  if r ~= r or r == math.huge or r == -math.huge then
    usage_error("option %s: %s is not a finite number", flag_name(o), what)
  end
  if o.min and r < o.min then
    usage_error("option %s: %s is below the minimum %s", flag_name(o), what, tostring(o.min))
  end
  local max = o.max or M.MAX_VALUE
  if r > max then   -- max_why: why no more (a limit of the engine, not a choice)
    usage_error("option %s: %s is above the maximum %s%s", flag_name(o), what, tostring(max),
      o.max_why and " (" .. o.max_why .. ")" or "")
  end
  if o.positive and r <= 0 then
    usage_error("option %s: must be positive, got %s", flag_name(o), what)
  end
end

local NUMERIC = {int = true, number = true, size = true}

-- A value with a NUL byte (from recipe.run or a results file's header: a
-- command line has none) is refused: C would take it cut short.
local function no_nul(o, v)
  if type(v) == "string" and v:find("\0", 1, true) then
    usage_error("option %s: '%s' holds a NUL byte", flag_name(o), text.inert(v))
  end
end

function M.convert(o, v)
  errors.check("convert", 1, o, "table")
  if type(o.name) ~= "string" then errors.argument("convert", 1, "an option {name=, type=, ...} expected") end
  no_nul(o, v)
  if o.type == "list" and type(v) == "table" then
    for _, x in ipairs(v) do no_nul(o, x) end
  end
  local t = o.type
  local r, why
  if t == "flag" then
    if type(v) == "boolean" then r = v
    elseif v == "true" or v == "1" or v == "yes" then r = true
    elseif v == "false" or v == "0" or v == "no" then r = false end
  elseif t == "int" then
    r = math.tointeger(tonumber(v))
  elseif t == "number" then
    r = tonumber(v)
  elseif t == "string" then
    if type(v) == "string" or type(v) == "number" then r = tostring(v) end
  elseif t == "list" then
    local items = type(v) == "string" and M.split_list(v, true)   -- empty items kept, to be refused
    if items then
      r = {}
      for _, x in ipairs(items) do if x ~= "" then r[#r + 1] = x end end
    elseif type(v) == "table" then
      r = v
    end
    if r and #r == 0 then usage_error("option %s: an empty list (give at least one item)", flag_name(o)) end
    if items and #r < #items then   -- "a,,b": a typo, as perf's parser says
      usage_error("option %s: an empty item in '%s'", flag_name(o), text.inert(v))
    end
    if r and o.items then   -- each item converted and bounded as an option of the items' type
      local item = setmetatable({}, {__index = function(_, k) if k == "name" then return o.name end return o.items[k] end})
      local out = {}
      for i, x in ipairs(r) do out[i] = M.convert(item, x) end
      r = out
    end
  elseif t == "size" then
    r, why = M.parse_size(type(v) == "number" and (math.tointeger(v) or (v == v and math.abs(v) ~= math.huge
      and v == math.floor(v) and string.format("%.0f", v)) or v) or v)
  elseif t == "plot" then
    if type(v) == "string" then
      local ok, pwhy = plot.check(v)
      if not ok then usage_error("option %s: %s", flag_name(o), pwhy) end
      r = v
    end
  end
  if r == nil then
    if why then usage_error("option %s: %s", flag_name(o), why) end
    usage_error("option %s: expected %s, got %q", flag_name(o),
      ({int = "an integer", number = "a number", string = "a string", flag = "true or false",
        list = "a comma-separated list", size = "a size such as 64M or 1G",
        plot = "a .png or .svg file name"})[t], tostring(v))
  end
  if o.choices then
    local ok = false
    for _, c in ipairs(o.choices) do if c == r then ok = true end end
    if not ok then
      usage_error("option %s: %q is not one of %s", flag_name(o), tostring(r), table.concat(o.choices, ", "))
    end
  end
  if NUMERIC[t] then bounded(o, r, tostring(r)) end
  if o.multiple and math.type(r) == "integer" and r % o.multiple ~= 0 then
    usage_error("option %s: %s is not a multiple of %d", flag_name(o), tostring(r), o.multiple)
  end
  return r
end

return M
