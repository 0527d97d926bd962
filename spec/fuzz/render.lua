-- Driver (spec/fuzz/lua.c): what the survey renders from a results file
-- that names its events as the input says.  The input's lines are up to
-- four event names (the row keys), the first one's unit, and the kernel
-- order (a byte: which of copy, triad comes first); the results file is
-- written through cjson as a survey writes it, read back with survey.load,
-- and rendered as the table, the CSV and the plot's gnuplot script.
--
-- Findings: a control byte on the terminal (the table), and a byte of a
-- name that leaves its quoted string in the gnuplot script.  The latter is
-- checked by shape: the script with every single-quoted string and every
-- data field cut out must equal the script rendered from benign names of
-- the same lengths; a data block may end only at its own EOD.
local cjson = require("cjson")
local survey = require("pmcsh.survey")
local heatmap = require("pmcsh.survey.heatmap")
local plot = require("pmcsh.plot")
local path = os.tmpname()

local function cell(event, unit, v)
  return {event = event, key = event, unit = unit, value = v, median = v, min = v, max = v, mean = v, trimmed = v,
    spread = 0, per_rep = {v, v}, count = v * 2e5, enabled = 40040, running = 40040, multiplexed = false}
end

local function results(names, unit, kernels)
  local units, rows = {}, {}
  for i, e in ipairs(names) do
    units[i] = {kind = "single", labels = {e}, keys = {e}}
    rows[i] = {key = e, event = e, kind = "single"}
  end
  local lines = {cjson.encode{type = "header", format = "pmcsh-survey/1", kernels = kernels, units = units,
    rows = rows, n = 100000, reps = 2, threads = 1, pages = "4k", baseline = false, split = false, fresh = false,
    started = 1795454849}}
  for _, k in ipairs(kernels) do
    for g, e in ipairs(names) do
      lines[#lines + 1] = cjson.encode{type = "run", kernel = k, group = g, iterations = 200000,
        bytes_per_iter = k == "copy" and 16 or 24, times = {1e-5, 1e-5}, median = 1e-5, min = 1e-5, mbps = 1e5,
        cells = {cell(e, g == 1 and unit or nil, g * 0.25)}}
    end
  end
  lines[#lines + 1] = cjson.encode{type = "done", finished = 1795454849}
  return table.concat(lines, "\n") .. "\n"
end

-- The script with its single-quoted strings as '' and its data fields as
-- "": what no name may change.  Raises on an unterminated string or a data
-- line that is not fields.
local function shape(script)
  local head, data, rest = script:match("^(%$d << EOD\n)(.-\n)(EOD\n.*)$")
  assert(head, "no data block")
  local cut = {}
  for line in data:gmatch("(.-)\n") do
    assert(line ~= "EOD", "a data line reads EOD")
    local s, j = {}, 1
    while j <= #line do
      local c = line:sub(j, j)
      if c == '"' then
        local k = j + 1
        while line:sub(k, k) ~= '"' do
          assert(k <= #line, "an unterminated data field: " .. line)
          k = k + (line:sub(k, k) == "\\" and 2 or 1)
        end
        s[#s + 1], j = '""', k + 1
      else
        s[#s + 1], j = c, j + 1
      end
    end
    cut[#cut + 1] = table.concat(s)
  end
  local out, i = {}, 1
  while true do
    local q = rest:find("'", i, true)
    if not q then out[#out + 1] = rest:sub(i) break end
    out[#out + 1] = rest:sub(i, q - 1) .. "''"
    local j = q + 1
    while true do
      local e = rest:find("'", j, true)
      assert(e, "an unterminated gnuplot string")
      if rest:sub(e + 1, e + 1) == "'" then j = e + 2 else i = e + 1 break end
    end
  end
  return head .. table.concat(cut, "\n") .. "\n" .. table.concat(out)
end

local function render(names, unit, kernels)
  local f = assert(io.open(path, "wb"))
  assert(f:write(results(names, unit, kernels)))
  f:close()
  local st, err = survey.load(path)
  if not st then return nil, err end
  return survey.report(st, {}), survey.csv(st, {}), (heatmap.script(st, {}))
end

local function no_controls(s, what)
  local at = s:find("[%z\1-\9\11-\31\127]") or s:find("\194[\128-\159]")
  assert(not at, string.format("%s: a control byte at %d: %q", what, at or 0, s:sub((at or 1) - 10, (at or 1) + 10)))
end

return function(data)
  local parts = {}
  for line in (data .. "\n"):gmatch("(.-)\n") do parts[#parts + 1] = line end
  local names, seen = {}, {}
  for i = 1, math.min(4, #parts) do
    local e = parts[i]
    if not seen[e] and e ~= "" then names[#names + 1], seen[e] = e, true end
  end
  if #names == 0 then return end
  local unit = parts[5] ~= "" and parts[5] or nil
  local kernels = (parts[6] or ""):byte(1) and (parts[6]:byte(1) % 2 == 1) and {"triad", "copy"} or {"copy", "triad"}
  local table_text, csv, script = render(names, unit, kernels)
  if not table_text then
    assert(type(csv) == "string", "load failed without a message")
    return
  end
  no_controls(table_text, "the table")
  -- the same names, benign, of the same lengths: one letter each
  local benign = {}
  for i, e in ipairs(names) do benign[i] = string.char(96 + i):rep(#e) end
  local _, _, script0 = render(benign, unit and ("u"):rep(#unit), kernels)
  assert(type(csv) == "string")
  assert(script and script0, "no plot script")
  no_controls(script, "the gnuplot script")
  assert(shape(script) == shape(script0), "a name changed the gnuplot script's shape:\n" .. script)
end
