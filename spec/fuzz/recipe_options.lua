-- Driver (spec/fuzz/lua.c): the recipe option parser, pmcsh.recipe's parse
-- with its sizes and lists, given one command line per input, a word per
-- line; and the values of the survey's own options (--chase ORDER:SIZE,
-- --pairs "A,B C,D").  A usage error (errors.is(e, "usage")), or nil
-- and a message, is their answer to bad words; any other error is a
-- finding, and so is a value its option does not allow.
local recipe = require("pmcsh.recipe")
local events = require("pmcsh.events")
local engine_chase = require("pmcsh.survey.engine_chase")
local errors = require("pmcsh.errors")

local R = {name = "fuzz", usage = "[ARGS]", run = function() end, options = {
  {name = "n", short = "n", type = "int", default = 1, min = 1},
  {name = "scale", type = "number", default = 3.0},
  {name = "name", short = "N", type = "string", default = "x"},
  {name = "loud", short = "l", type = "flag"},
  {name = "events", short = "e", type = "list", default = "a,b"},
  {name = "size", short = "s", type = "size", default = "64M", min = 4096},
  {name = "stat", type = "string", choices = {"mean", "median", "min", "max"}, default = "mean"},
  {name = "bytes_per", type = "size"},
}}

local function check_size(v, what)
  assert(v == nil or math.type(v) == "integer" and v >= 0, what .. ": not a size: " .. tostring(v))
end

return function(data)
  check_size(recipe.parse_size(data), "parse_size")
  -- a NUL byte is a bad argument to the C splitter, never read cut short
  local ok, items = pcall(recipe.split_list, data)
  assert(ok or data:find("\0", 1, true) and errors.is(items, "argument"), "split_list: " .. tostring(items))
  for _, item in ipairs(ok and items or {}) do
    assert(item ~= "" and not item:match("^%s") and not item:match("%s$"), "split_list: item " .. item)
  end
  local c, why = engine_chase.parse_chase(data)
  assert(c and math.type(c.size) == "integer" and c.size > 0 and math.type(c.stride) == "integer" and
    c.stride > 0 and type(c.order) == "string" or not c and type(why) == "string", "parse_chase")
  local p, perr = events.pairs(data)
  assert(type(p) == "table" or not p and type(perr) == "string", "pairs")
  local argv = {}
  for w in (data .. "\n"):gmatch("([^\n]*)\n") do argv[#argv + 1] = w end
  local ok, opts, args = pcall(recipe.parse, R, argv)
  if not ok then
    if errors.is(opts, "usage") and type(opts.message) == "string" then return end
    error(opts, 0)
  end
  assert(math.type(opts.n) == "integer" and opts.n >= 1, "n")
  assert(type(opts.scale) == "number", "scale")
  assert(type(opts.name) == "string", "name")
  assert(type(opts.loud) == "boolean", "loud")
  assert(type(opts.events) == "table" and #opts.events >= 1, "events")
  for _, e in ipairs(opts.events) do assert(type(e) == "string" and e ~= "", "events item") end
  check_size(opts.size, "size")
  assert(opts.size >= 4096, "size below its minimum")
  check_size(opts.bytes_per, "bytes_per")
  assert(({mean = 1, median = 1, min = 1, max = 1})[opts.stat], "stat")
  assert(type(args) == "table", "args")
end
