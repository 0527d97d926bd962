-- The sizes of pmcsh's files and functions: a Lua file's lines, each Lua
-- function's lines as luac counts them (its first line to its `end`), each
-- C function's lines (its signature's first line to the `}` that closes
-- it, as the house writes them: the body's braces at the start of a line).
-- Used by spec/09-sizes_spec.lua.
local M = {}

local function shquote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

local function lines_of(text)
  local out = {}
  for l in (text .. "\n"):gmatch("([^\n]*)\n") do out[#out + 1] = l end
  if out[#out] == "" then out[#out] = nil end
  return out
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- The number of lines of a file.
function M.file_lines(path)
  return #lines_of(read(path))
end

-- Each function of Lua file path: {{line=, lines=}, ...} (luac -l: a
-- listing it cannot make is a failure, never a pass).
function M.lua_functions(path)
  local p = assert(io.popen("luac5.4 -l -p " .. shquote(path) .. " 2>&1"))
  local out = p:read("a")
  local ok, _, code = p:close()
  if not ok then error(string.format("luac5.4 -l %s: status %s: %s", path, code, (out:gsub("%s+$", ""))), 0) end
  local fns = {}
  for first, last in out:gmatch("\nfunction <[^\n]-:(%d+),(%d+)>") do
    fns[#fns + 1] = {line = tonumber(first), lines = tonumber(last) - tonumber(first) + 1}
  end
  return fns
end

-- Each function defined in C text: {{name=, line=, lines=}, ...}.  A
-- definition starts at a line at the left edge that names a function (an
-- identifier and its "(", no ";" at its end) and whose body opens with a
-- "{" alone at the left edge, lines later or on the next; it ends at the
-- first "}" at the left edge after that.
function M.c_functions(text)
  local fns, start, name, body = {}, nil, nil, nil
  for i, l in ipairs(lines_of(text)) do
    if body then
      if l:match("^}") then
        fns[#fns + 1] = {name = name, line = start, lines = i - start + 1}
        body, start = nil, nil
      end
    elseif l == "{" and start then
      body = true
    elseif l:match("^[%a_]") and l:find("(", 1, true) and not l:match(";%s*$") and not l:match("^typedef") then
      start, name = i, l:match("([%a_][%w_]*)%s*%(")
    elseif l:match("^[%a_#/}]") or l == "" then
      start = nil   -- a declaration, a directive, a comment or a blank: no signature goes on
    end
  end
  return fns
end

return M
