-- Errors that say their kind (core/lpmcsh.h): a table {kind=, message=,
-- where=, ...} under _sys.error_mt, whose tostring is the text a user reads.
-- Kind "argument" (arg=, func=: a bad argument, as luaL_argerror words
-- it) is raised by the engines and the facades alike; kind "usage" (a
-- command's bad options, status=) by the recipe host and the option
-- checks; callers decide on the kind, never on the text.
local sys = require("pmcsh._sys")

local M = {}
local MT = sys.error_mt

-- Whether e is an error object (of kind `kind`, when given).
function M.is(e, kind)
  return getmetatable(e) == MT and (kind == nil or e.kind == kind)
end

-- "file:line: " of the function n calls above the one calling this, as
-- error() prefixes (n = 1: that function's caller).
local function where(n)
  local i = debug.getinfo(n + 2, "Sl")
  if i and i.currentline and i.currentline > 0 then return i.short_src .. ":" .. i.currentline .. ": " end
  return ""
end

-- Raises a bad argument #arg to func at `level` (1: the caller of the
-- function calling this, as error's level 2).
function M.argument(func, arg, message, level)
  error(setmetatable({kind = "argument", arg = arg, func = func, message = message, where = where((level or 1) + 1)},
    MT), 0)
end

-- A usage error: bad options or arguments of a command or recipe.  The
-- host (core/lhost.c) prints its message alone and exits with status
-- (2 unless given).
function M.usage(message, status)
  return setmetatable({kind = "usage", message = message, status = status}, MT)
end

-- Checks argument arg of func, as lauxlib's luaL_check* do: v of type
-- `want` ("table", "string", "number", "integer", "function"; "string?"
-- where nil is allowed too), else a bad argument at the caller of func.
function M.check(func, arg, v, want)
  local t = want:match("^(%a+)%??$")
  if v == nil and want:sub(-1) == "?" then return v end
  if (t == "integer" and math.tointeger(v)) or (t ~= "integer" and type(v) == t) then return v end
  local got = type(v)
  if t == "integer" and got == "number" then
    M.argument(func, arg, "number has no integer representation", 2)
  end
  M.argument(func, arg, (t == "integer" and "number" or t) .. " expected, got " .. (v == nil and "no value" or got), 2)
end

-- f as a facade named func: a bad argument raised anywhere below it (by
-- the engine it calls, say) is raised at the facade's caller, as func's,
-- arg moved by shift (-1 for a method whose engine counts the self).
function M.facade(func, f, shift)
  return function(...)
    local r = table.pack(pcall(f, ...))
    if r[1] then return table.unpack(r, 2, r.n) end
    local e = r[2]
    if M.is(e, "argument") then
      e.where, e.func, e.arg = where(1), func, e.arg + (shift or 0)
    elseif sys.interrupted() then
      error("interrupted!", 2)   -- Ctrl-C, as lua.c raises it, where the user called
    end
    error(e, 0)
  end
end

-- What e says, for display: an error object's message alone (what is
-- inside "bad argument #1 to 'f' (...)"), anything else as a string.
function M.message(e)
  return M.is(e) and e.message or tostring(e)
end

-- The text of e without its position (a recipe's usage line).
function M.text(e)
  if not M.is(e) then return tostring(e) end
  local w = e.where
  e.where = nil
  local t = tostring(e)
  e.where = w
  return t
end

return M
