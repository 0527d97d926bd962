-- Completion hooks for the REPL: modules register functions that propose
-- candidates for the word under the cursor in their own contexts.
local M = {}

local completers = {}

-- fn(line, word) -> list of candidates (replacing word), or nil to pass.
-- `line` is the text before the cursor, `word` the word being completed.
function M.register(fn)
  assert(type(fn) == "function", "register: function expected")
  completers[#completers + 1] = fn
end

-- The first non-nil answer of the registered completers.
function M.ask(line, word)
  for _, fn in ipairs(completers) do
    local ok, res = pcall(fn, line, word)
    if ok and type(res) == "table" then return res end
  end
  return nil
end

-- Option keys of the functions that take a table of options, by the
-- function itself: declared by the module that checks them (one list for
-- both), proposed as "key=" inside the call's table.
local option_keys = setmetatable({}, {__mode = "k"})
local option_values = setmetatable({}, {__mode = "k"})

-- Declares fn's option keys (a list of names) and, where a key takes one
-- of a few names, those (values: {key = {name, ...}}).  Returns fn.
function M.options(fn, keys, values)
  assert(type(keys) == "table", "options: list of keys expected")
  assert(values == nil or type(values) == "table", "options: values: a table of lists expected")
  option_keys[fn] = keys
  option_values[fn] = values
  return fn
end

-- fn's declared option keys, or nil.
function M.keys_of(fn)
  return option_keys[fn]
end

-- The names option `key` of fn takes, or nil.
function M.values_of(fn, key)
  local v = option_values[fn]
  return v and v[key]
end

-- Lua text as far as `s` goes: the brackets still open ({at = position,
-- comma = its last comma}, innermost last) and the quote of a string
-- literal left open and where it opened, or nil.
local function scan(s)
  local open, quote, quote_at = {}, nil, nil
  local i = 1
  while i <= #s do
    local c = s:sub(i, i)
    if quote then
      if c == "\\" then i = i + 1 elseif c == quote then quote = nil end
    elseif c == '"' or c == "'" then
      quote, quote_at = c, i
    elseif c == "{" or c == "(" or c == "[" then
      open[#open + 1] = {at = i}
    elseif (c == "}" or c == ")" or c == "]") and #open > 0 then
      open[#open] = nil
    elseif c == "," and #open > 0 then
      open[#open].comma = i
    end
    i = i + 1
  end
  return open, quote, quote_at
end

-- When the cursor (at the end of `line`, after `word`) is where a key of a
-- call's option table goes, as in `chase.latency{si`, `f({n = 1, th` or a
-- later argument, `s:run("copy", {re`: the name of the function called
-- ("chase.latency"), else nil.
function M.option_call(line, word)
  local before = line:sub(1, #line - #word)
  local open, quote = scan(before)
  local top, parent = open[#open], open[#open - 1]
  if quote or not top or before:sub(top.at, top.at) ~= "{" then return nil end
  if not before:sub((top.comma or top.at) + 1):match("^%s*$") then return nil end
  local head = before:sub(1, top.at - 1)
  local name = head:match("([%a_][%w_.:]*)%s*%(?%s*$")
  if not name and parent and before:sub(parent.at, parent.at) == "(" and head:match(",%s*$") then
    name = before:sub(1, parent.at - 1):match("([%a_][%w_.:]*)%s*$")
  end
  return name
end

-- When the cursor is where an option's value goes, as in
-- `chase.latency{order = "ra` or `chase.latency{order=ra`: the function
-- called, the key, and whether the value's quote is already open; else nil.
function M.option_value(line, word)
  local before = line:sub(1, #line - #word)
  local _, quote, quote_at = scan(before)
  if quote then before = before:sub(1, quote_at - 1) end
  local key_at, key = before:match("()([%a_][%w_]*)%s*=%s*$")
  if not key then return nil end
  local call = M.option_call(before:sub(1, key_at - 1), "")
  if call then return call, key, quote ~= nil end
  return nil
end

-- Inside an open string literal? (then `word` is string contents)
function M.in_string(line)
  local _, quote = scan(line)
  return quote ~= nil
end

return M
