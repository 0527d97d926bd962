-- Recipes: runnable experiments found on a path, with options declared once
-- by the recipe and parsed, validated and documented here.
local paths = require("pmcsh.paths")
local doc = require("pmcsh.help").doc

local M = {}

-- A usage error: the host prints the message and exits with status 2.
local usage_mt = {__tostring = function(e) return e.message end}
function M.usage(msg)
  return setmetatable({usage = true, message = msg}, usage_mt)
end

local function usage_error(fmt, ...)
  error(M.usage(string.format(fmt, ...)), 0)
end

-- The folders searched, in order: the user's own, PMCSH_PATH, the shipped;
-- only the shipped where the process is privileged (paths.secure).
function M.path()
  local dirs = {}
  if paths.secure then return {paths.scripts} end
  local home = os.getenv("HOME")
  if home and home ~= "" then dirs[#dirs + 1] = home .. "/.pmcsh/recipes" end
  for dir in (os.getenv("PMCSH_PATH") or ""):gmatch("[^:]+") do dirs[#dirs + 1] = dir end
  dirs[#dirs + 1] = paths.scripts
  return dirs
end

local function readable(file)
  local f = io.open(file, "r")
  if f then f:close() return true end
  return false
end

-- The file of recipe `name`, or nil.
function M.find(name)
  if not name:match("^[%w_%-]+$") then return nil end
  for _, dir in ipairs(M.path()) do
    local file = dir .. "/" .. name .. ".lua"
    if readable(file) then return file, dir end
  end
  return nil
end

local cache = {}

-- Option types; "plot" is a file name pmcsh.plot can draw to (.png or
-- .svg in an existing folder), checked before anything is measured.
local TYPES = {int = true, number = true, string = true, flag = true, list = true, size = true, plot = true}

local function check_recipe(r, file)
  if type(r) ~= "table" or type(r.run) ~= "function" then
    error(string.format("%s: a recipe returns a table with a run function", file), 0)
  end
  r.options = r.options or {}
  for i, o in ipairs(r.options) do
    if type(o.name) ~= "string" or not TYPES[o.type] then
      error(string.format("%s: option %d needs a name and a type (%s)", file, i,
        "int, number, string, flag, list, size or plot"), 0)
    end
  end
  return r
end

-- The recipe names closest to `name`, for "did you mean".
local function closest(name)
  local distance = require("pmcsh._pmc").distance
  local best, out = math.max(2, #name // 3), {}
  for _, r in ipairs(M.list()) do
    local d = distance(name, r.name)
    if d < best then best, out = d, {r.name} elseif d == best then out[#out + 1] = r.name end
  end
  return out
end

-- Loads recipe `name` (cached).  None: lua's "cannot open NAME", status 1,
-- with the recipes of a close name.
function M.load(name)
  local file = M.find(name)
  if not file then
    local near = closest(name)
    local e = M.usage(string.format("cannot open %s: no such file, and no recipe of that name (%spmcsh --help " ..
      "lists the recipes)", name, #near > 0 and ("did you mean " .. table.concat(near, ", ") .. "? ") or ""))
    e.status = 1
    error(e, 0)
  end
  if cache[file] then return cache[file], file end
  local chunk, err = loadfile(file)
  if not chunk then error(err, 0) end
  local r = check_recipe(chunk(), file)
  r.name = name
  cache[file] = r
  return r, file
end

-- The value of the first `description = "..."` in a recipe's text, read
-- without running it; nil when there is none.
function M.describe(file)
  local f = io.open(file, "r")
  if not f then return nil end
  local text = f:read(65536) or ""
  f:close()
  local at = text:match("()%f[%w_]description%s*=%s*[\"'%[]")
  if not at then return nil end
  local start = text:find("[\"'%[]", at)
  local q, lit = text:sub(start, start), nil
  if q == "[" then
    local eq = text:match("^%[(=*)%[", start)
    if eq then
      local close = text:find("]" .. eq .. "]", start, true)
      lit = close and text:sub(start, close + #eq + 1)
    end
  else
    local i = start + 1
    while i <= #text do
      local c = text:sub(i, i)
      if c == "\\" then i = i + 1 elseif c == q then lit = text:sub(start, i) break elseif c == "\n" then break end
      i = i + 1
    end
  end
  local load_lit = lit and load("return " .. lit, "=description", "t", {})
  local ok, v = pcall(load_lit or error)
  return ok and type(v) == "string" and v or nil
end

-- Every recipe on the path, the first of a name shadowing later ones.
function M.list()
  local out, seen = {}, {}
  for _, dir in ipairs(M.path()) do
    local names = {}
    for _, file in ipairs(require("pmcsh._sys").dir(dir) or {}) do
      local name = file:match("^([%w_%-]+)%.lua$")
      if name then names[#names + 1] = name end
    end
    table.sort(names)
    for _, name in ipairs(names) do
      if not seen[name] then
        seen[name] = true
        out[#out + 1] = {name = name, dir = dir,
          description = M.describe(dir .. "/" .. name .. ".lua") or "(no description)"}
      end
    end
  end
  return out
end

function M.print_list()
  local list = M.list()
  print("Recipes (pmcsh RECIPE --help):")
  if #list == 0 then print("  (none found)") end
  for _, r in ipairs(list) do
    print(string.format("  %-14s %s  [%s]", r.name, r.description or "", r.dir))
  end
  return 0
end

-- ---- option values ----------------------------------------------------

local SIZE_UNITS = {[""] = 1, b = 1, k = 1024, m = 1024 ^ 2, g = 1024 ^ 3, t = 1024 ^ 4}

-- "64M", "1GiB", "4k", "1048576" -> bytes (binary units), or nil.
function M.parse_size(s)
  if math.type(s) == "integer" then return s end
  if type(s) ~= "string" then return nil end
  local num, unit = s:lower():match("^%s*(%d+%.?%d*)%s*([kmgtb]?)i?b?%s*$")
  if not num then return nil end
  local v = tonumber(num) * SIZE_UNITS[unit]
  if v ~= math.floor(v) then return nil end      -- 1.5 of one byte or one element is no size
  return math.tointeger(v)
end

-- Splits "a,b,c" at commas, except those inside a sysfs event's slashes
-- ("uncore_imc_0/event=0x4,umask=0x3/" stays whole) or inside perf's group
-- braces ("{a,b},c" is "{a,b}" and "c").
function M.split_list(s)
  local out, cur, slashes, braces = {}, {}, 0, 0
  for c in s:gmatch(".") do
    if c == "," and slashes % 2 == 0 and braces == 0 then
      out[#out + 1] = table.concat(cur); cur = {}; slashes = 0
    else
      if c == "/" then slashes = slashes + 1
      elseif c == "{" then braces = braces + 1
      elseif c == "}" and braces > 0 then braces = braces - 1 end
      cur[#cur + 1] = c
    end
  end
  out[#out + 1] = table.concat(cur)
  local clean = {}
  for _, item in ipairs(out) do
    item = item:match("^%s*(.-)%s*$")
    if item ~= "" then clean[#clean + 1] = item end
  end
  return clean
end

local function convert(o, v)
  local t = o.type
  local r
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
    if type(v) == "table" then r = v elseif type(v) == "string" then r = M.split_list(v) end
    if r and #r == 0 then usage_error("option --%s: an empty list (give at least one item)", o.name:gsub("_", "-")) end
  elseif t == "size" then
    r = M.parse_size(type(v) == "number" and math.tointeger(v) or v)
  elseif t == "plot" then
    if type(v) == "string" then
      local ok, why = require("pmcsh.plot").check(v)
      if not ok then usage_error("option --%s: %s", o.name:gsub("_", "-"), why) end
      r = v
    end
  end
  if r == nil then
    usage_error("option --%s: expected %s, got %q", o.name:gsub("_", "-"),
      ({int = "an integer", number = "a number", string = "a string", flag = "true or false",
        list = "a comma-separated list", size = "a size such as 64M or 1G",
        plot = "a .png or .svg file name"})[t], tostring(v))
  end
  if o.choices then
    local ok = false
    for _, c in ipairs(o.choices) do if c == r then ok = true end end
    if not ok then
      usage_error("option --%s: %q is not one of %s", o.name:gsub("_", "-"), tostring(r), table.concat(o.choices, ", "))
    end
  end
  if o.min and type(r) == "number" and r < o.min then
    usage_error("option --%s: %s is below the minimum %s", o.name:gsub("_", "-"), tostring(r), tostring(o.min))
  end
  if o.positive and type(r) == "number" and r <= 0 then
    usage_error("option --%s: must be positive, got %s", o.name:gsub("_", "-"), tostring(r))
  end
  if o.multiple and math.type(r) == "integer" and r % o.multiple ~= 0 then
    usage_error("option --%s: %s is not a multiple of %d", o.name:gsub("_", "-"), tostring(r), o.multiple)
  end
  return r
end

local function option_named(r, name)
  for _, o in ipairs(r.options) do
    if o.name == name or o.short == name then return o end
  end
  return nil
end

local function defaults(r)
  local opts = {}
  for _, o in ipairs(r.options) do
    if o.default ~= nil then opts[o.name] = convert(o, o.default)
    elseif o.type == "flag" then opts[o.name] = false end
  end
  return opts
end

-- The names of a list of {name=...} entries (an engine's own table), as an
-- option's choices.
function M.names(list)
  local t = {}
  for i, e in ipairs(list) do t[i] = e.name end
  return t
end

-- The words of a command line for recipe r, in order, without converting
-- any value: calls fn(kind, word, o, value) with kind "option" (o the
-- option, value the word given or nil for a flag), "unknown" (a word that
-- looks like an option r does not have), "needs" (o lacks its value),
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
      local o = s and option_named(r, s)
      if o and o.short == s and o.type ~= "flag" then short, inline = s, rest end
    end
    local stop
    if long or short then
      local key = long or short
      local o = option_named(r, key) or option_named(r, (key:gsub("%-", "_")))
      if not o then
        stop = fn("unknown", a)
      else
        local v = inline
        if v == nil and o.type ~= "flag" then
          i = i + 1
          v = argv[i]
          if v == nil then return fn("needs", a, o) end
        end
        stop = fn("option", a, o, v)
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
local function wants_help(r, argv)
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
  local opts, args = defaults(r), {}
  local given = {}   -- list options given on this command line accumulate: -e a -e b
  walk(r, argv, function(kind, a, o, v)
    if kind == "rest" then
      if #v > 0 and not r.usage then
        usage_error("%s: takes no arguments, got '%s'%s (pmcsh %s --help)", r.name, v[1],
          a == "--" and " after --" or "", r.name)
      end
      table.move(v, 1, #v, #args + 1, args)
    elseif kind == "unknown" then
      usage_error("%s: unknown option '%s' (pmcsh %s --help lists the options)", r.name, a, r.name)
    elseif kind == "needs" then
      usage_error("%s: option '%s' needs a value", r.name, a)
    elseif kind == "arg" then
      if not r.usage then
        usage_error("%s: unexpected argument '%s' (pmcsh %s --help)", r.name, a, r.name)
      end
      args[#args + 1] = a
    else
      local cv = convert(o, v == nil or v)
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

-- The text of `pmcsh NAME --help`.
function M.help_text(name)
  local r, file = M.load(name)
  local lines = {
    string.format("usage: pmcsh %s [options]%s", name, r.usage and (" " .. r.usage) or ""),
    "", r.description or "",
  }
  if r.help then lines[#lines + 1] = "\n" .. r.help end
  if #r.options > 0 then lines[#lines + 1] = "\noptions:" end
  local metavar = {int = "N", number = "X", string = "STR", list = "LIST", size = "SIZE", flag = "", plot = "FILE"}
  for _, o in ipairs(r.options) do
    local flag = (o.short and ("-" .. o.short .. ", ") or "    ") .. "--" .. o.name:gsub("_", "-")
    local mv = o.choices and table.concat(o.choices, "|") or metavar[o.type]
    if mv ~= "" then flag = flag .. " " .. mv end
    local def = ""
    if o.default ~= nil and o.type ~= "flag" then
      def = " (default " .. (type(o.default) == "table" and table.concat(o.default, ",") or tostring(o.default)) .. ")"
    end
    lines[#lines + 1] = string.format("  %-28s %s%s", flag, o.help or "", def)
  end
  lines[#lines + 1] = "\nfrom " .. file
  return table.concat(lines, "\n")
end

-- A recipe's run returns its exit status (nothing or true: 0, false: 1), or
-- nil and a message for a failure of the environment (the two tiers): the
-- message goes to stderr as "pmcsh NAME: message", and the status is 1.
local function finish(name, status, msg)
  if status == nil and msg ~= nil then
    io.stderr:write("pmcsh ", name, ": ", tostring(msg), "\n")
    return 1
  end
  if status == nil or status == true then return 0 end
  if status == false then return 1 end
  return math.tointeger(status) or 1
end

-- Runs r.run(opts, args).  An argument error raised by a module it calls
-- comes from an option value the module refused (--n 0, --to 1T): it is
-- reported as bad usage, exit status 2, without a traceback.
-- Ctrl-C stops a recipe as it stops a command: "interrupted", status 130
-- (128 + SIGINT), no traceback.
local function interrupted(e)
  return type(e) == "string" and (e:match("interrupted!?$") or e:match("interrupted!?\n"))
end

local function run_recipe(r, opts, args)
  local res = table.pack(xpcall(r.run, function(e)
    if type(e) == "string" and e:find("bad argument #%d+ to '") then
      return M.usage(r.name .. ": " .. e:gsub("^[^\n]-:%d+: ", ""))
    end
    if interrupted(e) then
      local u = M.usage(r.name .. ": interrupted")
      u.status = 130
      return u
    end
    return debug.traceback(e, 2)
  end, opts, args))
  if not res[1] then error(res[2], 0) end
  return table.unpack(res, 2, res.n)
end

-- Host entry: pmcsh NAME args...  Returns the exit status.  The file runs
-- as a script does, with `arg` set as lua sets it; one that returns a recipe
-- table is then run as a recipe, any other has done its work.
function M.main(name, ...)
  local argv = {...}
  local file = M.find(name)
  if not file then M.load(name) end           -- raises "cannot open", with suggestions
  local chunk, err = loadfile(file)
  if not chunk then error(err, 0) end
  local a = {[0] = file}
  for i, v in ipairs(argv) do a[i] = v end
  arg = a
  local r = chunk(...)
  if type(r) ~= "table" or type(r.run) ~= "function" then return 0 end
  r = check_recipe(r, file)
  r.name = name
  cache[file] = r
  if wants_help(r, argv) then
    print(M.help_text(name))
    return 0
  end
  local opts, args = M.parse(r, argv)
  return finish(name, run_recipe(r, opts, args))
end

-- From Lua: recipe.run("survey", {reps = 5}) -> what the recipe's run
-- returns.  Option values are checked as on the command line; positional
-- arguments go in opts.args.
function M.run(name, given)
  given = given or {}
  local r = M.load(name)
  local opts = defaults(r)
  local args = given.args or {}
  for k, v in pairs(given) do
    if k ~= "args" then
      local o = option_named(r, k)
      if not o then usage_error("%s: unknown option '%s'", name, tostring(k)) end
      opts[o.name] = convert(o, v)
    end
  end
  return r.run(opts, args)
end

doc(M, "recipe", [[
Recipes: runnable experiments (scripts/NAME.lua, ~/.pmcsh/recipes, PMCSH_PATH).
A recipe file returns {description=, options={{name=, type=, default=, help=}...},
usage=, run=function(opts, args) ... end}; the host parses --options for it.
run returns the exit status, or nil and a message (printed, status 1).
An option may also say choices={...}, min=, positive=true, multiple=N (type
int, number, string, flag, list, size, or plot: a .png/.svg file name).
command=true: the first positional word is a command, and it and every word
after it are the command's (as perf stat, env and nohup parse: pmcsh stat
-e task-clock sh -c 'echo hi'), with or without "--".]])
doc(M.run, "recipe.run", [[
recipe.run(name, opts) runs a recipe from Lua with an options table, e.g.
recipe.run("demo", {size = "64M"}); positional arguments go in opts.args.]])
doc(M.list, "recipe.list", [[recipe.list() returns {name=, description=, dir=} for every recipe found.]])

return M
