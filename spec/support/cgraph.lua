-- The C call graph between files, read from their objects with nm: a file
-- calls another when one of its undefined symbols is defined there (its
-- cycles: graph.cycles).  Used by spec/09-cfloors_spec.lua.
local M = {}

local function shquote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

-- {defined = {sym=true}, undefined = {sym=true}} of one object (nm -P:
-- "name type value size"; U is undefined, a lower-case type is local).
local function symbols(path)
  local p = assert(io.popen("nm -P -g " .. shquote(path) .. " 2>&1"))
  local out = p:read("a")
  local ok, _, code = p:close()
  -- no listing, no check: a graph unread is a failure, not a pass
  if not ok then error(string.format("nm %s: status %s: %s", path, code, (out:gsub("%s+$", ""))), 0) end
  local t = {defined = {}, undefined = {}}
  for name, kind in out:gmatch("([^%s]+) (%a)[^\n]*") do
    if kind == "U" then t.undefined[name] = true
    elseif kind:match("%u") then t.defined[name] = true end
  end
  return t
end

-- objects: {name = path}.  Returns {edges = {a = {b = "symbol", ...}},
-- defines = {name = {sym=true}}}: a calls (or reads) b through symbol.
function M.read(objects)
  local syms, owner = {}, {}
  for name, path in pairs(objects) do
    syms[name] = symbols(path)
    for s in pairs(syms[name].defined) do owner[s] = name end
  end
  local edges, defines = {}, {}
  for name, t in pairs(syms) do
    edges[name], defines[name] = {}, t.defined
    for s in pairs(t.undefined) do
      local o = owner[s]
      if o and o ~= name and (not edges[name][o] or s < edges[name][o]) then edges[name][o] = s end
    end
  end
  return {edges = edges, defines = defines}
end

-- "a <-> b (a calls sym1, b calls sym2)" for each pair of files that call
-- each other, sorted.
function M.pairs(edges)
  local out = {}
  for a, to in pairs(edges) do
    for b, s in pairs(to) do
      if a < b and edges[b] and edges[b][a] then
        out[#out + 1] = string.format("%s <-> %s (%s calls %s, %s calls %s)", a, b, a, s, b, edges[b][a])
      end
    end
  end
  table.sort(out)
  return out
end

-- The luaopen_* functions each file defines: {name = {"luaopen_x", ...}}
-- for the files that define more than one.
function M.luaopens(defines)
  local out = {}
  for name, d in pairs(defines) do
    local list = {}
    for s in pairs(d) do
      if s:match("^luaopen_") then list[#list + 1] = s end
    end
    table.sort(list)
    if #list > 1 then out[name] = list end
  end
  return out
end

return M
