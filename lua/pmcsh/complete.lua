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

-- Inside an open string literal? (then `word` is string contents)
function M.in_string(line)
  local quote
  local i = 1
  while i <= #line do
    local c = line:sub(i, i)
    if quote then
      if c == "\\" then i = i + 1 elseif c == quote then quote = nil end
    elseif c == '"' or c == "'" then
      quote = c
    end
    i = i + 1
  end
  return quote ~= nil
end

return M
