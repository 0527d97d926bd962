-- The require graph of lua/ and scripts/, read from luac's listing: for
-- each file, the pmcsh modules it requires, and where (a function body or
-- a pcall instead of the chunk's top); a recipe may not reach a C module
-- (pmcsh._sys).  Used by spec/09-floors_spec.lua.
local graph = require("graph")

local M = {}

local function listing(path)
  local p = assert(io.popen("luac5.4 -l -l -p '" .. path:gsub("'", "'\\''") .. "' 2>&1"))
  local out = p:read("a")
  local ok, _, code = p:close()
  -- no listing, no check: a floor unread is a failure, not a pass
  if not ok then error(string.format("luac5.4 -l -l %s: status %s: %s (make deps installs lua5.4)", path, code,
    (out:gsub("%s+$", ""))), 0) end
  return out
end

-- Requires of one file: {{module=, line=, in_function=, in_pcall=, passed=}, ...}
-- A require is read where require is fetched (_ENV.require, or _G.require):
-- called right there with one literal name, it is a require of that name;
-- pcall(require, "name") is one under pcall; any other use (an alias such
-- as local r = require, xpcall, a name held in a variable) is passed = true,
-- module = the literal if one follows, and hides what it loads from this check.
function M.file(path)
  local ins, where = {}, "main"
  for l in listing(path):gmatch("[^\n]+") do
    if l:match("^main <") then where = "main"
    elseif l:match("^function <") then where = "function" end
    local line, op, a, rest = l:match("^%s+%d+%s+%[(%d+)%]%s+(%u+)%s+(%-?%d*)(.*)$")
    if op then ins[#ins + 1] = {line = tonumber(line), op = op, a = tonumber(a), rest = rest, where = where} end
  end
  local out = {}
  for i, x in ipairs(ins) do
    local fetched = (x.op == "GETTABUP" and x.rest:match('_ENV "require"$'))
      or (x.op == "GETFIELD" and x.rest:match('; "require"$') and ins[i - 1] and ins[i - 1].rest:match('_ENV "_G"$'))
    if fetched then
      local k = ins[i + 1] and ins[i + 1].op == "LOADK" and ins[i + 1].rest:match('; "(.-)"$')
      local call = ins[i + 2]
      local direct = k and call and (call.op == "CALL" or call.op == "TAILCALL") and call.a == x.a
        and call.rest:match("; 1 in") ~= nil
      -- pcall(require, "m"): pcall fetched into the register just below require's, called with 2 arguments
      local p = ins[i - 1]
      local under_pcall = k and not direct and p and p.op == "GETTABUP" and p.rest:match('_ENV "pcall"$')
        and p.a == x.a - 1 and call and call.op == "CALL" and call.a == p.a and call.rest:match("; 2 in") ~= nil
      out[#out + 1] = {module = k or nil, line = x.line, in_function = x.where ~= "main",
        in_pcall = under_pcall or false, passed = not direct and not under_pcall}
    end
  end
  return out
end

-- Lua's own globals: all a module or a recipe may read or write
-- unqualified (every other name is required at the top, or a typo).
M.STANDARD = {}
for name in ([[_G _VERSION arg assert collectgarbage coroutine debug dofile error getmetatable io ipairs load
    loadfile math next os package pairs pcall print rawequal rawget rawlen rawset require select setmetatable
    string table tonumber tostring type utf8 warn xpcall]]):gmatch("%S+") do M.STANDARD[name] = true end

-- Globals a file reads or writes that Lua does not define: {"file:line: name", ...}.
function M.globals(path, rel)
  local out = {}
  for l in listing(path):gmatch("[^\n]+") do
    local line, op, name = l:match("^%s+%d+%s+%[(%d+)%]%s+([GS]ETTABUP)%s.-; _ENV \"([%w_]+)\"")
    if name and not M.STANDARD[name] then
      out[#out + 1] = string.format("%s:%s: %s global '%s'", rel or path, line, op == "GETTABUP" and "reads" or "writes", name)
    end
  end
  return out
end

-- The file of module `name` under lua/, or nil (a C module).
function M.path(root, name)
  local base = root .. "/lua/" .. name:gsub("%.", "/")
  for _, p in ipairs({base .. ".lua", base .. "/init.lua"}) do
    local f = io.open(p)
    if f then f:close(); return p end
  end
end

-- Every Lua file of lua/pmcsh and scripts/.
function M.files(root)
  local p = assert(io.popen("find '" .. root .. "/lua' '" .. root .. "/scripts' -name '*.lua' | sort"))
  local t = {}
  for l in p:lines() do t[#t + 1] = l end
  p:close()
  return t
end

-- The one file whose requires sit inside functions, and why: they are
-- still edges of the graph, checked as the others.
M.LAZY = {["lua/pmcsh/names.lua"] = "the globals, each loaded when a chunk first reads it"}

-- {problems = {"file:line: why", ...}, cycles = {{"a", "b", "a"}, ...}}
function M.check(root)
  local problems, edges = {}, {}
  for _, f in ipairs(M.files(root)) do
    local rel = f:sub(#root + 2)
    local name = rel:match("^lua/(.*)%.lua$")
    name = name and name:gsub("/init$", ""):gsub("/", ".") or rel
    edges[name] = edges[name] or {}
    for _, g in ipairs(M.globals(f, rel)) do problems[#problems + 1] = g end
    for _, r in ipairs(M.file(f)) do
      local own = r.module and (r.module == "pmcsh" or r.module:match("^pmcsh%."))
      if r.passed then
        problems[#problems + 1] = string.format("%s:%d: require passed on or aliased%s: call require(\"name\") itself, at the top",
          rel, r.line, r.module and string.format(" (%q)", r.module) or "")
      end
      if own then   -- outside modules (cjson) may be optional; pmcsh's own never are
        if r.in_pcall then
          problems[#problems + 1] = string.format("%s:%d: pcall(require, %q): pmcsh's own modules are not optional", rel, r.line, r.module)
        elseif r.in_function and not M.LAZY[rel] then
          problems[#problems + 1] = string.format("%s:%d: require(%q) inside a function: require at the top", rel, r.line, r.module)
        end
        if rel:match("^scripts/") and r.module:match("^pmcsh%._") then
          problems[#problems + 1] = string.format("%s:%d: require(%q): a recipe uses lua/pmcsh, not the C modules",
            rel, r.line, r.module)
        end
        if M.path(root, r.module) then edges[name][r.module] = true end
      end
    end
  end
  table.sort(problems)
  return {problems = problems, cycles = graph.cycles(edges), edges = edges}
end

-- README.md's table of Lua floors: {name = rank}, rank growing floor by
-- floor and, within a floor, in the order written (survey/ (`plan`, ...)
-- names pmcsh.survey.plan); backticked names inside other parentheses are
-- descriptions, not modules.
function M.floors(readme)
  local f = assert(io.open(readme))
  local text = f:read("a")
  f:close()
  local rank, n, on = {}, 0, false
  for line in text:gmatch("[^\n]+") do
    if line:match("^| Lua floor |") then on = true
    elseif on and not line:match("^|") then break
    elseif on and not line:match("^|%-") then
      local cell = line:match("^|[^|]*|([^|]*)|")
      local depth, prefix, pending = 0, nil, nil
      local i = 1
      while i <= #cell do
        local ch = cell:sub(i, i)
        if ch == "(" then
          depth = depth + 1
          if depth == 1 then prefix, pending = pending, nil end
        elseif ch == ")" then
          depth = depth - 1
          if depth == 0 then prefix = nil end
        elseif ch == "`" then
          local j = cell:find("`", i + 1, true)
          local name = cell:sub(i + 1, j - 1)
          i = j
          if depth == 0 then
            if name:match("/$") then pending = "pmcsh." .. name:gsub("/$", "") .. "."
            else n = n + 1; rank["pmcsh." .. name] = n; pending = nil end
          elseif depth == 1 and prefix then
            n = n + 1; rank[prefix .. name] = n
          end
        elseif ch == "," and depth == 0 then
          pending = nil
        end
        i = i + 1
      end
    end
  end
  return rank
end

-- Requires that climb README's floors (a module requiring one placed later
-- in the table) and modules the table does not place: {"why", ...}.
function M.climbs(edges, rank)
  local out = {}
  for n, to in pairs(edges) do
    if n:match("^pmcsh") then
      if not rank[n] then out[#out + 1] = n .. ": not placed in README.md's table of Lua floors" end
      for m in pairs(to) do
        if rank[n] and rank[m] and rank[m] >= rank[n] then
          out[#out + 1] = string.format("%s requires %s, placed after it in README.md's Lua floors", n, m)
        end
      end
    end
  end
  table.sort(out)
  return out
end

return M
