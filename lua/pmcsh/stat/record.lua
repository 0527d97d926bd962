-- perf stat record and perf stat report, in pmcsh's own file: JSON lines,
-- a header naming the rows and the target, then one line per run with
-- each event's instances as pmcsh.stat.aggregate reads them.  report reads
-- it back (a file, or "-" for stdin), as a file from another node is read:
-- bounded, every line's shape checked, no code loaded, and prints it
-- through pmcsh.stat.format as the run printed it, re-aggregated as asked
-- (-A, --per-socket, ...).
local aggregate = require("pmcsh.stat.aggregate")
local format = require("pmcsh.stat.format")
local json = require("pmcsh.json")
local options = require("pmcsh.options")
local results = require("pmcsh.results")
local sys = require("pmcsh.sys")

local M = {}

M.FORMAT = "pmcsh-stat/1"
M.DEFAULT = "perf.data"   -- perf's name, where -o and -i are not given
local MAX_BYTES = 64 << 20

-- The record's writer for path ("-": stdout) and stat's context c, opened
-- before the run as perf opens it: {f, name} | nil, message.  One run of
-- the command's whole count: -r and -I are refused, as perf refuses -r.
function M.open(path, c)
  if c.repeats > 1 then error(options.usage("record: -r does not go with record (one run is recorded)"), 0) end
  if c.interval then error(options.usage("record: -I does not go with record (the whole run is recorded)"), 0) end
  if path == "-" then return {f = io.stdout, name = "stdout"} end
  local f, msg = sys.create(path)
  if not f then return nil, msg end
  return {f = f, name = path}
end

-- The header line: the rows (name, unit, scale, the event counted or the
-- tool's time), the target and the aggregation the run had.
function M.header(w, c)
  local rows = {}
  for j, name in ipairs(c.all) do
    rows[j] = {name = name, unit = c.unit_of[name], scale = c.scale[name], event = c.counted and c.idx[j] or nil,
               tool = c.tool[name]}
  end
  w.f:write(json.encode({format = M.FORMAT, what = c.what or ("'" .. table.concat(c.args, " ") .. "'"),
    target = c.cpus and "cpus" or c.tids and "threads" or "command", null = c.null or false, rows = rows}), "\n")
end

-- A run's line: its times and its instances (aggregate.instances' lists).
function M.run(w, inst, info)
  w.f:write(json.encode({elapsed = info.elapsed or 0, user = info.user or 0, sys = info.sys or 0,
    instances = inst}), "\n")
end

-- where the table goes when the record goes to stdout: nowhere, as perf's
M.SINK = {write = function() end, flush = function() end, close = function() return true end}

function M.close(w)
  local ok, msg
  if w.f == io.stdout then ok, msg = w.f:flush() else ok, msg = w.f:close() end
  if not ok then return nil, string.format("cannot write %s: %s", w.name, msg) end
  return true
end

local INSTANCE = {fields = {value = "number", enabled = "number", running = "number", ["cpu?"] = "integer",
  ["socket?"] = "integer", ["die?"] = "integer", ["core?"] = "integer", ["node?"] = "integer",
  ["tid?"] = "integer", ["comm?"] = "string"}}
local SHAPES = {
  {fields = {format = "string", what = "string", target = "string", null = "boolean",
    rows = {list = {fields = {name = "string", unit = "string", ["scale?"] = "number", ["event?"] = "integer",
      ["tool?"] = "string"}}, min = 1}}},
  {fields = {elapsed = "number", user = "number", sys = "number", instances = {list = {list = INSTANCE}}}},
}

-- The lines of the file at path ("-": stdin), each decoded and checked:
-- the header and the runs, or nil, message naming the line.
local function read_lines(path)
  local name = path == "-" and "stdin" or path
  local lines = {}
  local function one(s, lineno)
    if not s:match("%S") then return true end
    local where = string.format("%s:%d", name, lineno)
    local v, why = results.decode(s)
    if not v then return nil, string.format("%s: %s: not a pmcsh stat record", where, why) end
    local ok, err = results.check(v, SHAPES[#lines == 0 and 1 or 2], where)
    if not ok then return nil, err .. ": not a pmcsh stat record" end
    if #lines == 0 and v.format ~= M.FORMAT then
      return nil, string.format("%s: format %q, not %s: not a pmcsh stat record", where, v.format, M.FORMAT)
    end
    for _, list in ipairs(v.instances or {}) do   -- JSON's numbers back to integers where they are
      for _, x in ipairs(list) do
        for k, n in pairs(x) do x[k] = math.tointeger(n) or n end
      end
    end
    lines[#lines + 1] = v
    return true
  end
  if path == "-" then
    local data = io.stdin:read(MAX_BYTES + 1) or ""
    if #data > MAX_BYTES then return nil, string.format("stdin: over %d bytes: not a pmcsh stat record", MAX_BYTES) end
    local lineno = 0
    for s in data:gmatch("[^\n]*") do
      lineno = lineno + 1
      local ok, err = one(s, lineno)
      if not ok then return nil, err end
    end
  else
    local ok, err = results.each_line(path, one, nil, MAX_BYTES)
    if not ok then return nil, err end
  end
  if #lines == 0 then return nil, string.format("%s: empty: not a pmcsh stat record", name) end
  return lines
end

-- The context report prints with: the record's rows as the run had them,
-- the mode asked, the format of opts (-x, -j).
local function context(head, opts, mode, from_pipe)
  local c = {all = {}, idx = {}, tool = {}, unit_of = {}, scale = {}, unfit = {}, metrics = {}, counted = false,
             null = head.null, mode = mode, M = format.MODES[mode], verbose = 0, repeats = 1, args = {},
             what = from_pipe and "'pipe'" or head.what, sep = opts["field-separator"], json = opts.json}
  c.big_num = not c.sep and not c.json
  if head.target == "cpus" then c.cpus = true elseif head.target == "threads" then c.tids = true end
  local events = 0
  for j, r in ipairs(head.rows) do
    c.all[j], c.unit_of[r.name], c.scale[r.name] = r.name, r.unit, r.scale
    if r.tool then c.tool[r.name] = r.tool end
    if r.event then c.idx[j] = r.event; c.counted = true; events = math.max(events, r.event) end
  end
  return c, events
end

-- perf stat report: the file's runs printed to stderr as the run printed
-- them; the exit status, or nil, message.
function M.report(opts, mode)
  local path = opts.input or M.DEFAULT
  local lines, err = read_lines(path)
  if not lines then return nil, err end
  local c, events = context(lines[1], opts, mode, path == "-")
  if mode ~= "global" and mode ~= "thread" and not c.cpus then
    return nil, string.format("%s counted %s, not cpus: -A and --per-socket/die/core/node need a record of -a or -C",
      path, lines[1].target == "command" and "a command" or lines[1].target)
  end
  local runs = {acc = aggregate.acc(), n = 0}
  for k = 2, #lines do
    local r = lines[k]
    if #r.instances < events then return nil, string.format("%s: run %d has %d events of %d", path, k - 1,
      #r.instances, events) end
    aggregate.fold(c, runs.acc, r, aggregate.aggregate(c.M, r.instances))
    runs.n = runs.n + 1
  end
  if runs.n == 0 then return nil, string.format("%s: no run recorded", path) end
  c.out = format.open()
  format.summary(c, runs)
  local ok, werr = c.out:close()
  if not ok then return nil, werr end
  return 0
end

return M
