-- Option values: a recipe's declared options ({name=, type=, min=, max=,
-- choices=, ...}) converted and checked, once, for the command line,
-- recipe.run and the options a results file's header repeats; and a
-- command line's words read into them (getopt_long's forms, perf's).  Below the
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

-- ---- a recipe's command line read into its option values -----------------

-- Recipe r's option of that long or short name, or nil.
function M.named(r, name)
  for _, o in ipairs(r.options) do
    if o.name == name or o.short == name then return o end
  end
  return nil
end

-- The option values of recipe r before any is given: its defaults, flags
-- false.
function M.defaults(r)
  local opts = {}
  for _, o in ipairs(r.options) do
    if o.default ~= nil then opts[o.name] = M.convert(o, o.default)
    elseif o.type == "flag" then opts[o.name] = false end
  end
  return opts
end

-- The words each option was given with, by opts table (weak): M.typed.
local TYPED = setmetatable({}, {__mode = "k"})

-- typed(name) -> the option as the user typed it ("-t 5", "--n=1T"), or
-- as "--name value" when it was not typed (a default, recipe.run): what a
-- message about a value refused later names.
function M.typed(opts)
  local words = TYPED[opts] or {}
  return function(name)
    return words[name] or string.format("--%s %s", name:gsub("_", "-"), tostring(opts[name]))
  end
end

-- The options of r whose long name starts with `prefix`: perf's (and
-- getopt_long's) abbreviations, --rep for --repeat.
local function prefixed(r, prefix)
  local out = {}
  for _, o in ipairs(r.options) do
    if o.name:gsub("_", "-"):sub(1, #prefix) == prefix then out[#out + 1] = o end
  end
  return out
end

-- The words of a command line for recipe r, in order, without converting
-- any value: calls fn(kind, word, o, value) with kind "option" (o the
-- option, value the word given or nil for a flag, and whether the value was
-- in the word itself; a long option may be given by a prefix of its name
-- that no other option's starts with), "unknown" (a word that looks like an
-- option r does not have), "ambiguous" (a prefix of several options' names,
-- o the list of them), "needs" (o lacks its value),
-- "arg" (a positional word) or "rest" (the words after "--", or, for a
-- recipe that declares `command = true`, the first positional word and all
-- after it: a command's own options are its own, as perf stat and env stop
-- at the command's name).  fn returning true stops the walk.
local function walk(r, argv, fn)
  local i = 1
  while i <= #argv do
    local a = argv[i]
    if a == "--" then
      fn("rest", a, nil, table.move(argv, i + 1, #argv, 1, {}))
      return
    end
    local long, inline = a:match("^%-%-([%w_%-]+)=(.*)$")
    long = long or a:match("^%-%-([%w_%-]+)$")
    local short = not long and a:match("^%-(%a)$")
    if not long and not short then
      -- a value attached to a short option, as getopt allows: -x, -r3
      local s, rest = a:match("^%-(%a)(.+)$")
      local o = s and M.named(r, s)
      if o and o.short == s and o.type ~= "flag" then short, inline = s, rest end
      -- a counted flag repeated in one word, as perf's -dd and -vv
      if o and o.short == s and o.counted and rest == string.rep(s, #rest) then
        for _ = 1, #rest do
          if fn("option", "-" .. s, o) then return end
        end
        short = s
      end
    end
    local stop
    if long or short then
      local key = long or short
      local o = M.named(r, key) or M.named(r, (key:gsub("%-", "_")))
      local candidates = not o and long and prefixed(r, long) or {}
      if #candidates == 1 then o = candidates[1] end
      if not o then
        stop = fn(#candidates > 1 and "ambiguous" or "unknown", a, candidates)
      else
        local v = inline
        if v == nil and o.type ~= "flag" then
          i = i + 1
          v = argv[i]
          if v == nil then return fn("needs", a, o) end
        end
        stop = fn("option", a, o, v, inline ~= nil)
      end
    elseif a:match("^%-.") and not tonumber(a) then
      stop = fn("unknown", a)
    elseif r.command then
      fn("rest", a, nil, table.move(argv, i, #argv, 1, {}))
      return
    else
      stop = fn("arg", a)
    end
    if stop then return end
    i = i + 1
  end
end

-- Whether a command line asks for the recipe's help: -h or --help where an
-- option may stand (not an option's value, not the command's own words).
function M.wants_help(r, argv)
  local help = false
  walk(r, argv, function(kind, word)
    if (kind == "unknown" or kind == "option") and (word == "--help" or word == "-h") then help = true end
    return help
  end)
  return help
end

-- Parses command-line words for recipe r: returns opts, positional args.
-- "--name value", "--name=value", "-s value", flags without a value, "--".
function M.parse(r, argv)
  errors.check("parse", 1, r, "table")
  errors.check("parse", 2, argv, "table")
  local opts, args = M.defaults(r), {}
  local typed = {}
  TYPED[opts] = typed
  local given = {}   -- list options given on this command line accumulate: -e a -e b
  walk(r, argv, function(kind, a, o, v, inline)
    if kind == "rest" then
      if #v > 0 and not r.usage then
        usage_error("%s: takes no arguments, got '%s'%s (pmcsh %s --help)", r.name, v[1],
          a == "--" and " after --" or "", r.name)
      end
      table.move(v, 1, #v, #args + 1, args)
    elseif kind == "unknown" then
      usage_error("%s: unknown option '%s' (pmcsh %s --help lists the options)", r.name, a, r.name)
    elseif kind == "ambiguous" then
      local names = {}
      for i, c in ipairs(o) do names[i] = "--" .. c.name:gsub("_", "-") end
      usage_error("%s: option '%s' is ambiguous: %s", r.name, a, table.concat(names, ", "))
    elseif kind == "needs" then
      usage_error("%s: option '%s' needs a value", r.name, a)
    elseif kind == "arg" then
      if not r.usage then
        usage_error("%s: unexpected argument '%s' (pmcsh %s --help)", r.name, a, r.name)
      end
      args[#args + 1] = a
    else
      local cv = M.convert(o, v == nil or v)
      typed[o.name] = (v == nil or inline) and a or (a .. " " .. tostring(v))
      if o.counted then   -- a flag given n times is n (-d -d, -dd)
        cv = (given[o.name] and opts[o.name] or 0) + 1
      end
      if o.type == "list" and given[o.name] then
        for _, x in ipairs(cv) do table.insert(opts[o.name], x) end
      else
        opts[o.name] = cv
      end
      given[o.name] = true
    end
  end)
  return opts, args
end

return M
