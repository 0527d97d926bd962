-- Driver (spec/fuzz/lua.c): a results file from another node, as pmcsh
-- compare reads it (pmcsh.compare.read: a survey's file, or JSON lines of
-- any recipe), compared by the recipe itself with three good health files
-- as a fleet (text, --csv, --json, --baseline) and with one as an A/B.
-- nil and a message, or a usage error, is the answer to a bad file; an
-- error raised anywhere else is a finding, and so is a control byte on
-- the terminal, a CSV text field a spreadsheet would evaluate, or a
-- baseline that pmcsh health's reader refuses.
local cjson = require("cjson")
local compare = require("pmcsh.compare")
local paths = require("pmcsh.paths")
local errors = require("pmcsh.errors")

local recipe = dofile(paths.scripts .. "/compare.lua")
local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir))
local input, base = dir .. "/input.jsonl", dir .. "/base.json"

-- three nodes' health files
local good = {}
for i, v in ipairs({100, 101, 99}) do
  local lines = {cjson.encode({type = "header", recipe = "health", format = "pmcsh-health/1",
    fingerprint = {host = "g" .. i, kernel = "6.1.0", thp = "madvise", caches = {{level = 1, type = "Data", size = 49152}}}})}
  lines[2] = cjson.encode({type = "metric", name = "triad MB/s, socket 0", value = v, unit = "MB/s", better = "higher",
    samples = {v, v * 0.99, v * 1.01}})
  lines[3] = cjson.encode({type = "metric", name = "idle latency ns", value = 90 + i, unit = "ns", better = "lower",
    samples = {90 + i, 91 + i}})
  lines[4] = '{"type":"done"}'
  good[i] = dir .. "/g" .. i .. ".jsonl"
  local f = assert(io.open(good[i], "wb"))
  assert(f:write(table.concat(lines, "\n") .. "\n"))
  f:close()
end

local OPTS = {z = compare.Z, band = compare.BAND, level = compare.LEVEL, rows = 40}

-- The recipe run with opts + extra and args, its stdout and stderr kept:
-- ok (true: it ran to its end or answered), out, err.
local function run(extra, args)
  local opts = {}
  for k, v in pairs(OPTS) do opts[k] = v end
  for k, v in pairs(extra) do opts[k] = v end
  local out, err = {}, {}
  local write, stderr = io.write, io.stderr
  io.write = function(...) for _, s in ipairs({...}) do out[#out + 1] = tostring(s) end return io end
  io.stderr = {write = function(self, ...) for _, s in ipairs({...}) do err[#err + 1] = tostring(s) end return self end}
  local ok, status, msg = pcall(recipe.run, opts, args)
  io.write, io.stderr = write, stderr
  if not ok then
    if errors.is(status, "usage") and type(status.message) == "string" then return true, "", "" end
    error(status, 0)
  end
  assert(status == 0 or status == nil and type(msg) == "string", "neither 0 nor nil, message")
  return true, table.concat(out), table.concat(err) .. (msg or "")
end

local function no_controls(s, what)
  local at = s:find("[%z\1-\9\11-\31\127]") or s:find("\194[\128-\159]")
  assert(not at, string.format("%s: a control byte at %d: %q", what, at or 0, s:sub((at or 1) - 10, (at or 1) + 10)))
end

-- Every text field of a CSV (quoted or not) that a spreadsheet would take
-- for a formula.
local function formulas(csv)
  for line in csv:gmatch("[^\n]+") do
    local i = 1
    while i <= #line do
      local f
      if line:sub(i, i) == '"' then
        local j = i + 1
        while true do
          local q = line:find('"', j, true)
          assert(q, "an unterminated CSV field: " .. line)
          if line:sub(q + 1, q + 1) == '"' then j = q + 2 else f, i = line:sub(i + 1, q - 1), q + 2 break end
        end
      else
        local j = line:find(",", i, true) or #line + 1
        f, i = line:sub(i, j - 1), j + 1
      end
      -- a number (an infinite z is -inf, as %g writes it) or a text that is no formula
      assert(tonumber(f) or f:match("^%-?inf$") or not f:find("^[=+%-@\t\r]"), "a formula in a CSV field: " .. f)
    end
  end
end

return function(data)
  local f = assert(io.open(input, "wb"))
  assert(f:write(data))
  f:close()
  local sets, rerr = compare.read(input)
  if not sets then
    assert(type(rerr) == "string", "read failed without a message")
    return
  end
  local fleet = {input, good[1], good[2], good[3]}
  local _, out, err = run({}, fleet)
  no_controls(out, "the fleet's text"); no_controls(err, "its errors")
  _, out, err = run({csv = true}, fleet)
  formulas(out); no_controls(err, "--csv's errors")
  _, out = run({json = true, rows = 0}, fleet)
  if out ~= "" then assert(type(cjson.decode(out)) == "table") end
  os.remove(base)
  _, out = run({json = true, baseline = base}, fleet)
  if io.open(base) then
    local b, berr = compare.read_baseline(base)
    assert(b, "a baseline its reader refuses: " .. tostring(berr))
  end
  _, out, err = run({}, {input, good[1]})
  no_controls(out, "the A/B's text"); no_controls(err, "its errors")
  _, out = run({csv = true}, {input, good[1]})
  formulas(out)
  _, out = run({json = true}, {input, good[1]})
  if out ~= "" then assert(type(cjson.decode(out)) == "table") end
end
