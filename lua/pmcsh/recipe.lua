-- Recipes: runnable experiments found on a path, with options declared once
-- by the recipe and parsed, validated and documented here.
local numbers = require("pmcsh.numbers")
local paths = require("pmcsh.paths")
local doc = require("pmcsh.help").doc
local sys = require("pmcsh._sys")
local psys = require("pmcsh.sys")
local options = require("pmcsh.options")
local errors = require("pmcsh.errors")
local pmc = require("pmcsh.pmc")
local format = require("pmcsh.format")
local text = require("pmcsh.text")

local M = {}

-- A usage error: the host prints the message and exits with status 2
-- (pmcsh.options makes them; recipes raise them with recipe.usage).
M.usage = options.usage
local usage_error = options.usage_error

local said = {}
-- Whether a folder the user's side adds is searched: the one rule for
-- folders pmcsh takes code from (sys.private_real: this user's or root's,
-- written by nobody else, and so every folder above it), else one line on
-- stderr, once, naming it and why (a missing folder is no news).
local function code_dir(dir)
  local real, why = psys.private_real(dir)
  if real then return true end
  if sys.stat(dir) and not said[dir] then
    said[dir] = true
    io.stderr:write(string.format("pmcsh: recipes in %s are skipped: %s\n", text.inert(dir), text.inert(tostring(why))))
  end
  return false
end

-- The folders searched, in order: the user's own, PMCSH_PATH, the shipped;
-- only the shipped where the process is privileged (paths.secure); the
-- first two only where code_dir takes them.
function M.path()
  local dirs = {}
  if paths.secure then return {paths.scripts} end
  local home = os.getenv("HOME")
  if home and home ~= "" and code_dir(home .. "/.pmcsh/recipes") then dirs[#dirs + 1] = home .. "/.pmcsh/recipes" end
  for dir in (os.getenv("PMCSH_PATH") or ""):gmatch("[^:]+") do
    if code_dir(dir) then dirs[#dirs + 1] = dir end
  end
  dirs[#dirs + 1] = paths.scripts
  return dirs
end

-- Only a regular file is a recipe: opening a FIFO (or a device) in a
-- recipe folder would wait for a writer, and `pmcsh --help` with it.  One
-- outside the shipped folder is code the user's side adds: psys.code_file.
local function regular(file)
  local st = sys.stat(file)
  return st ~= nil and st.type == "file" and (file:sub(1, #paths.scripts + 1) == paths.scripts .. "/" or
    psys.code_file(file) ~= nil)
end

local function readable(file)
  if not regular(file) then return false end
  local f = io.open(file, "r")
  if f then f:close() return true end
  return false
end

-- The file of recipe `name`, or nil.
function M.find(name)
  errors.check("find", 1, name, "string")
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
    for _, b in ipairs({"min", "max"}) do
      if o[b] ~= nil and type(o[b]) ~= "number" then
        error(string.format("%s: option %s: %s must be a number", file, o.name, b), 0)
      end
    end
  end
  return r
end

-- The recipe names closest to `name`, for "did you mean".
local function closest(name)
  local best, out = math.max(2, #name // 3), {}
  for _, r in ipairs(M.list()) do
    local d = pmc.distance(name, r.name)
    if d < best then best, out = d, {r.name} elseif d == best then out[#out + 1] = r.name end
  end
  return out
end

-- Loads recipe `name` (cached).  None: lua's "cannot open NAME", status 1,
-- with the recipes of a close name.
function M.load(name)
  errors.check("load", 1, name, "string")
  local file = M.find(name)
  if not file then
    local near, st = closest(name), sys.stat(name)
    error(errors.usage(st and string.format("cannot read %s: %s", name, st.type == "dir" and "Is a directory" or
      "not a regular file") or string.format("cannot open %s: no such file, and no recipe of that name (%spmcsh " ..
      "--help lists the recipes)", name, #near > 0 and ("did you mean " .. table.concat(near, ", ") .. "? ") or ""),
      1), 0)
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
  errors.check("describe", 1, file, "string")
  local f = regular(file) and io.open(file, "r")
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
    for _, file in ipairs(sys.dir(dir) or {}) do
      local name = file:match("^([%w_%-]+)%.lua$")
      if name and regular(dir .. "/" .. file) then names[#names + 1] = name end
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
  return setmetatable(out, format.kind("pmcsh.records"))
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

-- ---- option values: pmcsh.options ------------------------------------

-- the command line's words read into them, the options' defaults, and
-- how each option was typed: pmcsh.options too
M.MAX_VALUE, M.parse_size, M.split_list, M.convert = options.MAX_VALUE, options.parse_size, options.split_list,
  options.convert
M.parse, M.typed = options.parse, options.typed
local convert = options.convert

-- The names of a list of {name=...} entries (an engine's own table), as an
-- option's choices.
function M.names(list)
  errors.check("names", 1, list, "table")
  local t = {}
  for i, e in ipairs(list) do t[i] = e.name end
  return t
end

-- The text of `pmcsh NAME --help`.
function M.help_text(name)
  errors.check("help_text", 1, name, "string")
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
      local d = o.default
      if type(d) == "table" then d = table.concat(d, ",")
      elseif o.type == "size" and math.type(d) then d = numbers.size(d)   -- 64M, not 67108864.0
      elseif math.type(d) == "float" and d == math.floor(d) and math.abs(d) < 2^53 then d = math.tointeger(d) end
      def = " (default " .. tostring(d) .. ")"
    end
    lines[#lines + 1] = string.format("  %-28s %s%s", flag, o.help or "", def)
  end
  lines[#lines + 1] = "\nfrom " .. file
  return table.concat(lines, "\n")
end

-- A recipe's run returns its exit status (nothing or true: 0, false: 1, an
-- integer 0..255), or nil and a message for a failure of the environment
-- (the two tiers): the message goes to stderr as "pmcsh NAME: message", and
-- the status is 1.  Anything else is the recipe's mistake, said as such with
-- its file, status 1: a table, a string or 2^40 is no exit status.
local function finish(r, file, status, msg, ...)
  if status == nil and msg ~= nil then
    io.stderr:write("pmcsh ", r.name, ": ", tostring(msg), "\n")
    return 1
  end
  if status == nil or status == true then return 0 end
  if status == false then return 1 end
  if math.type(status) == "integer" and status >= 0 and status <= 255 then return status end
  if math.type(status) == "float" and math.tointeger(status) and status >= 0 and status <= 255 then
    return math.tointeger(status)
  end
  io.stderr:write(string.format("pmcsh %s: %s: run returned %s, not an exit status (nothing, true, false, " ..
    "an integer 0..255, or nil and a message)\n", r.name, file,
    type(status) == "string" and string.format("the string %q", status) or
    type(status) == "number" and tostring(status) or ("a " .. type(status))))
  return 1
end

-- Runs r.run(opts, args).  An argument error raised by a module it calls
-- comes from an option value the module refused (--n 0, --to 1T): it is
-- reported as bad usage, exit status 2, without a traceback or a location
-- in pmcsh's code.  Ctrl-C (known by the interrupt flag, not by the text of
-- the error) stops a recipe as it stops a command: "interrupted", status
-- 130 (128 + SIGINT), no traceback.
local TRACED = {}   -- an error already given its traceback, kept whole on its way out
local function run_recipe(r, opts, args)
  local res = table.pack(xpcall(r.run, function(e)
    if errors.is(e, "usage") then return e end
    if sys.interrupted() then return errors.usage("interrupted", 130) end
    if errors.is(e, "argument") then return M.usage(errors.text(e)) end
    return setmetatable({text = debug.traceback(e, 2)}, TRACED)
  end, opts, args))
  if not res[1] then error(res[2], 0) end
  return table.unpack(res, 2, res.n)
end

-- Host entry: pmcsh NAME args...  Returns the exit status.  The file runs
-- as a script does, with `arg` set as lua sets it; one that returns a recipe
-- table is then run as a recipe, any other has done its work.
function M.main(name, ...)
  errors.check("main", 1, name, "string")
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
  -- a usage error of the recipe's is said as its other errors are:
  -- "pmcsh NAME: message", status 2 (or the error's own)
  local ok, status = xpcall(function()
    if options.wants_help(r, argv) then
      print(M.help_text(name))
      return 0
    end
    local opts, args = M.parse(r, argv)
    return finish(r, file, run_recipe(r, opts, args))
  end, function(e)
    if errors.is(e, "usage") or getmetatable(e) == TRACED then return e end
    return debug.traceback(e, 2)
  end)
  if ok then return status end
  if getmetatable(status) == TRACED then error(status.text, 0) end
  if type(status) ~= "table" then error(status, 0) end
  -- a recipe's own usage messages may begin with its name: said once
  local msg = tostring(status.message)
  if msg:sub(1, #name + 2) == name .. ": " then msg = msg:sub(#name + 3) end
  io.stderr:write("pmcsh ", name, ": ", msg, "\n")
  return status.status or 2
end

-- From Lua: recipe.run("survey", {reps = 5}) -> what the recipe's run
-- returns.  Option values are checked as on the command line; positional
-- arguments go in opts.args.
function M.run(name, given)
  errors.check("run", 1, name, "string")
  errors.check("run", 2, given, "table?")
  given = given or {}
  local r = M.load(name)
  local opts = options.defaults(r)
  local args = given.args or {}
  errors.check("run", 2, args, "table")
  for i, a in ipairs(args) do   -- as a command line's: C would take one cut at a NUL
    if type(a) == "string" and a:find("\0", 1, true) then
      usage_error("%s: argument %d ('%s') holds a NUL byte", name, i, text.inert(a))
    end
  end
  for k, v in pairs(given) do
    if k ~= "args" then
      local o = options.named(r, k)
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
An option may also say choices={...}, min=, max= (with max_why=, why no
more: said when a value above it is refused), positive=true, multiple=N (type
int, number, string, flag, list, size, or plot: a .png/.svg file name).
command=true: the first positional word is a command, and it and every word
after it are the command's (as perf stat, env and nohup parse: pmcsh stat
-e task-clock sh -c 'echo hi'), with or without "--".]])
doc(M.run, "recipe.run", [[
recipe.run(name, opts) runs a recipe from Lua with an options table, e.g.
recipe.run("demo", {size = "64M"}); positional arguments go in opts.args.]])
doc(M.list, "recipe.list", [[recipe.list() returns {name=, description=, dir=} for every recipe found.]])
doc(M.path, "recipe.path", [[
recipe.path() -> the folders searched for recipes, in order: ~/.pmcsh/recipes,
PMCSH_PATH's, the shipped scripts/ (only that one in a privileged process).]])
doc(M.find, "recipe.find", [[recipe.find(name) -> the file of recipe name and its folder, or nil.]])
doc(M.load, "recipe.load", [[
recipe.load(name) -> the recipe table and its file (cached); an error naming
the recipes of a close name when there is none.]])
doc(M.describe, "recipe.describe", [[
recipe.describe(file) -> the recipe's description, read from its text without
running it, or nil.]])
doc(M.print_list, "recipe.print_list", [[recipe.print_list() prints the recipes found, as pmcsh --help does.]])
doc(M.names, "recipe.names", [[
recipe.names(list) -> the names of a list of {name=, ...} entries (an engine's
own table), for an option's choices.]])
doc(M.typed, "recipe.typed", [[
recipe.typed(opts) -> a function of an option's name giving it as typed on the
command line ("-t 5", "--n=1T"), or as "--name value": what a message about a
value refused later names.]])
doc(M.parse, "recipe.parse", [[
recipe.parse(r, argv) -> opts, args: command-line words for recipe table r,
each option converted and checked by its declaration; a usage error (exit 2)
for an unknown option or a bad value.]])
doc(M.help_text, "recipe.help_text", [[recipe.help_text(name) -> the text of pmcsh NAME --help.]])
doc(M.main, "recipe.main", [[
recipe.main(name, ...) -> exit status: the host's entry for pmcsh NAME args...
(the file runs with arg set; a returned recipe table is parsed and run).]])
doc(M.usage, "recipe.usage", [[
recipe.usage(message) -> a usage error object: error(recipe.usage("..."), 0)
ends a recipe with the message and exit status 2, without a traceback.]])
doc(M.convert, "recipe.convert", [[
recipe.convert(option, value) -> the value converted and checked as the option
{name=, type=, min=, max=, choices=, ...} declares it; a usage error if not.]])
doc(M.parse_size, "recipe.parse_size", [[
recipe.parse_size("64M") -> bytes (binary units: 4k, 1GiB, 1048576), or nil
and why (not a whole number of bytes, above 2^53).]])
doc(M.split_list, "recipe.split_list", [[
recipe.split_list("a,b,c") -> {"a", "b", "c"}: commas inside a sysfs event's
slashes (pmu/event=0x4,umask=0x3/) or perf's group braces ({a,b}) do not split.]])

return M
