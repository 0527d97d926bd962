-- A survey's results file: JSON lines, the header first, a line per finished
-- run as it finishes, "done" last.  Results already written are never lost:
-- a file with content is never truncated, one writer at a time holds it
-- (flock), every write is checked, and reading validates each line's shape
-- before anything trusts it.
local json = require("pmcsh.json")   -- every line written: keys sorted, doubles in 14 digits, no NaN
local machine = require("pmcsh.machine")
local options = require("pmcsh.options")
local sys = require("pmcsh._sys")
local psys = require("pmcsh.sys")

local M = {}

M.FORMAT = "pmcsh-survey/1"
M.MAX_LINE = 64 << 20     -- bytes; a longer line is no record (the writer writes none)

-- The most bytes a run record of `cells` cells over `reps` pairs of
-- windows takes: per cell its fixed fields and five numbers a pair (slope,
-- intercept, two windows, the pair's number), per run six (times, work, ...), each number at
-- most 24 bytes as pmcsh.json writes it (14 digits, sign, exponent, comma).
-- Whether that fits a line, and the most reps that would.
function M.fits(cells, reps)
  local function bytes(r) return 4096 + cells * 1024 + (cells * 5 + 6) * r * 24 end
  local most = (M.MAX_LINE - bytes(0)) // ((cells * 5 + 6) * 24)
  return bytes(reps) <= M.MAX_LINE, math.max(0, most)
end

-- The line a recipe's JSON lines start with, {"recipe":, "fingerprint":}:
-- a record with a fingerprint names the machine of itself and the records
-- after it, up to the next one (pmcsh compare reads them so, files of many
-- tasks concatenated included).  Its keys sorted, as every record's.
function M.head(recipe, fp)
  return json.encode({recipe = recipe, fingerprint = fp or machine.fingerprint()})
end

-- A typed metric record: the one shape of a measurement in every recipe's
-- --json and results file, which pmcsh compare reads with no decoder per
-- recipe.  m's fields, all but name optional:
--   name     what was measured, as a reader names it ("ns per load, 1M")
--   unit     its unit ("ns", "MB/s", "events per loop iteration")
--   value    the headline number; absent where nothing was left under it
--   stat     which estimator the value is ("best", "median", "trimmed")
--   samples  the numbers the value rests on, where there are several
--   better   "higher" or "lower"; absent for a count, which is neither
--   event    the event it counts, where it is one (a disturbance is known
--            by its encoding, never by its spelling)
--   floor    the least variance one sample can have (a count's Poisson)
--   context  the settings it was measured under, scalars ({size=,
--            threads=, kernel=}); the host is the fingerprint's line before it
-- and any fields of its recipe's beside them.  Returns a new table, type
-- "metric".
M.METRIC_FIELDS = {"name", "unit", "value", "stat", "samples", "better", "event", "floor", "context"}
function M.metric(m)
  local r = {type = "metric"}
  for k, v in pairs(m) do r[k] = v end
  return r
end
M.METRIC = {fields = {type = "string", name = "string", ["unit?"] = "string", ["value?"] = "number",
  ["stat?"] = "string", ["samples?"] = {list = "number"}, ["better?"] = "string", ["event?"] = "string",
  ["floor?"] = "number", ["context?"] = {map = "scalar"}}}

-- The results file a task writes: `name` with %h (the host: Slurm's node
-- name), %j (the job, "local" outside Slurm), %t (the task, 0 outside
-- Slurm) and %% replaced, in the folders as in the file's name; a name
-- ending in "/" is a folder (made, with those above it, when missing)
-- holding RECIPE-%h-%j-%t.jsonl.  Two tasks of a job get two names.
-- Another %x is a usage error (raised); a folder that cannot be made is
-- nil, message, errno.
function M.path(name, recipe, fp)
  fp = fp or machine.fingerprint()
  local function safe(s) return (tostring(s):gsub("[^%w._-]", "_")) end
  local subst = {h = safe(fp.host), j = safe(fp.job or "local"), t = safe(fp.task or 0), ["%"] = "%"}
  local bad
  local out = name:gsub("%%(.?)", function(c)
    if not subst[c] then bad = bad or ("%" .. c) end
    return subst[c]
  end)
  if bad then
    options.usage_error("%s: unknown %s in a results name (%%h host, %%j job, %%t task, %%%% a %%)", name, bad)
  end
  local dir = out:match("^(.*)/$")
  if dir then
    if dir ~= "" then
      local ok, err, errno = psys.mkdirs(dir)
      if not ok then return nil, string.format("cannot make the folder for results: %s", err), errno end
    end
    out = out .. recipe .. "-" .. subst.h .. "-" .. subst.j .. "-" .. subst.t .. ".jsonl"
  end
  return out
end

local Writer = {}
Writer.__index = Writer

-- An exclusive lock on f, or nil, message (f closed).  A filesystem that
-- takes no locks (some network and FUSE ones) is said once and written
-- without one.
local function locked(f, path)
  local ok, msg, errno = sys.lock(f)
  if ok then return true end
  if errno == sys.ENOSYS or errno == sys.ENOLCK or errno == sys.EOPNOTSUPP or errno == sys.ENOTSUP then
    io.stderr:write(string.format("pmcsh: warning: %s: this filesystem takes no locks; two pmcsh writing it at " ..
      "once would mix their lines\n", path))
    return true
  end
  f:close()
  if errno == sys.EWOULDBLOCK then
    return nil, string.format("%s is being written by another pmcsh; wait for it, or write to another file", path)
  end
  return nil, string.format("cannot lock %s: %s", path, msg)
end

-- A new results file at `path`: made here (never through a link, never
-- another user's file), or an empty one of this user's taken over; refused
-- when one with content is there (hint: what to do then, the survey's
-- --resume and --report by default).  The header and the unopened events
-- wait in memory until the first run (or "done") is written with them: a
-- stop before it leaves no file (one made here is removed), so the
-- corrected command finds none in its way.
function M.create(path, hint)
  local f, size, kind, created = psys.create(path, true)   -- fail: nil, message, errno
  if not f then return nil, string.format("cannot write the results file: %s", size), kind end
  if kind ~= "file" then f:close(); return nil, string.format("%s is not a regular file", path) end
  if size > 0 then
    f:close()
    return nil, string.format("%s already holds results: %s", path, hint or string.format("--resume %s " ..
      "continues that survey, --report %s shows it; remove it or name another file to start afresh", path, path))
  end
  local ok, lerr = locked(f, path)
  if not ok then return nil, lerr end
  if f:seek("end") > 0 then   -- written between the check and the lock
    f:close()
    return nil, string.format("%s already holds results (another survey started it)", path)
  end
  return setmetatable({f = f, path = path, pending = {}, created = created}, Writer)
end

-- The results file at `path`, to append to (a resume): a regular file of
-- this user's, opened once, locked; a resume reads it through this very
-- writer (M.read(path, w.f)), so what it read is what it appends to, never
-- a file swapped in between (then w:resume cuts a torn last line off).
function M.append(path)
  local f, size, kind = sys.open(path, "append")
  if not f then return nil, string.format("cannot write the results file: %s", size), kind end
  if kind ~= "file" then f:close(); return nil, string.format("%s is not a regular file", path) end
  local ok, lerr = locked(f, path)
  if not ok then return nil, lerr end
  return setmetatable({f = f, path = path}, Writer)
end

-- Cuts a torn last line off (at valid_bytes, the end of the last whole
-- line that M.read found, reading this writer's own file) and ends the
-- file with a newline, so the next record starts a line.
function Writer:resume(valid_bytes)
  local f = self.f
  local size = f:seek("end")
  if valid_bytes and size > valid_bytes then
    local tok, terr = sys.truncate(f, valid_bytes)
    if not tok then return nil, string.format("cannot cut the torn last line of %s: %s", self.path, terr) end
    size = f:seek("end")
  end
  if size > 0 then
    f:seek("set", size - 1)
    local last = f:read(1)
    f:seek("end")
    if last ~= "\n" then return self:raw("\n") end
  end
  return true
end

function Writer:raw(s)
  local ok, err = self.f:write(s)
  if ok then ok, err = self.f:flush() end
  if not ok then
    return nil, string.format("cannot write the results file %s: %s", self.path, tostring(err))
  end
  return true
end

-- Writes one record, flushed; nil, message when the write failed.
-- The records that hold no measurement: kept back until one that does.
local HELD = {header = true, unopened = true}
function Writer:write(obj)
  local line = json.encode(obj) .. "\n"
  if #line > M.MAX_LINE then   -- M.fits keeps a survey's records under it
    return nil, string.format("cannot write a %s record of %d bytes to %s: its readers take lines of up to %d",
      tostring(obj.type), #line, self.path, M.MAX_LINE)
  end
  if self.pending and HELD[obj.type] then
    self.pending[#self.pending + 1] = line
    return true
  end
  if self.pending then line = table.concat(self.pending) .. line; self.pending = nil end
  return self:raw(line)
end

function Writer:close()
  if not self.f then return true end
  local f = self.f
  self.f = nil
  -- no run written: no file (removed only while that name is still this file)
  if self.pending and self.created then sys.remove_same(self.path, f) end
  local ok, err = f:close()
  if not ok then return nil, string.format("cannot write the results file %s: %s", self.path, tostring(err)) end
  return true
end
Writer.__close = Writer.close
Writer.__gc = Writer.close

-------------------------------------------------------------------------------
-- Reading: every line checked against the shape of its type
-------------------------------------------------------------------------------

local null = require("cjson").null

-- The decoder of lines from another node: no NaN, Infinity or hex (not
-- JSON numbers), nesting bounded.
local decoder = require("cjson").new()
decoder.decode_invalid_numbers(false)
decoder.decode_max_depth(64)

-- Field k of a value at `where`, as a message names it: where[3],
-- where.name, where["a name"].
local function field(where, k)
  if math.type(k) == "integer" then return string.format("%s[%d]", where, k) end
  if type(k) == "string" and k:match("^[%a_][%w_]*$") then return where .. "." .. k end
  return string.format("%s[%q]", where, tostring(k))
end

-- Where in v a number is not finite (1e999 decodes as inf), or nil.
local function infinite(v, where)
  if type(v) == "number" then
    return (v ~= v or v == math.huge or v == -math.huge) and where or nil
  end
  if type(v) == "table" then
    for k, x in pairs(v) do
      local w = infinite(x, field(where, k))
      if w then return w end
    end
  end
end

-- A line of a file from another node as a JSON object: the table, or nil,
-- why and its kind: "syntax" (no JSON object: a torn line, perhaps) or
-- "value" (a number past a double's range).
local lenient = require("cjson").new()
lenient.decode_max_depth(64)
function M.decode(line)
  local ok, v = pcall(decoder.decode, line)
  if not ok and pcall(lenient.decode, line) then
    return nil, "NaN, Infinity or a hex number: not a JSON number (no pmcsh writes one)", "value"
  end
  if not ok or type(v) ~= "table" then return nil, "not a JSON object", "syntax" end
  local at = infinite(v, "")
  if at then
    return nil, string.format("%s: a number past a double's range (no pmcsh writes one)", at:gsub("^%.", "")), "value"
  end
  return v
end

-- Shapes: "string", "integer" (a number with an integer's value), "number"
-- (finite), "boolean", "table", {list = shape[, min = n]}, {map = shape}
-- (string keys), {fields = {name = shape}}; a name ending in ? may be
-- absent.
local FINGERPRINT = {fields = {host = "string",
  ["caches?"] = {list = {fields = {["level?"] = "integer", ["type?"] = "string", ["size?"] = "integer"}}}}}
M.FINGERPRINT = FINGERPRINT
local CELL = {fields = {["key"] = "string", ["count?"] = "number", ["value?"] = "number", ["event?"] = "string",
  ["min?"] = "number", ["max?"] = "number", ["median?"] = "number", ["spread?"] = "number",
  ["enabled?"] = "number", ["running?"] = "number", ["multiplexed?"] = "boolean", ["per_rep?"] = {list = "number"},
  ["unit?"] = "string", ["trimmed?"] = "number", ["mean?"] = "number", ["intercept?"] = "number",
  ["intercepts?"] = {list = "number"}, ["windows?"] = {list = "number"}, ["kept_pairs?"] = {list = "integer"},
  ["kept?"] = "integer", ["dropped?"] = "integer",
  ["class?"] = "string", ["method?"] = "string", ["disturbed?"] = "boolean", ["expected?"] = "number",
  ["verdict?"] = "string", ["check?"] = "string", ["basis?"] = "string", ["resolution?"] = "number"}}
local SHAPES = {
  header = {fields = {
    format = "string", kernels = {list = "string", min = 1}, ["n?"] = "integer", reps = "integer",
    ["threads?"] = "integer", ["pages?"] = "string", ["fresh?"] = "boolean", ["split?"] = "boolean",
    ["started?"] = "number", ["emulated?"] = "string", ["fingerprint?"] = FINGERPRINT, ["baseline?"] = "boolean",
    ["sample_ms?"] = "number", ["group?"] = "string", ["slice?"] = "integer", ["budget?"] = "number",
    ["chase?"] = {fields = {size = "integer", ["stride?"] = "integer", ["order?"] = "string"}},
    ["aliases?"] = {list = {fields = {event = "string", also = {list = "string"}}}},
    ["loops?"] = {list = {fields = {name = "string", path = "string", symbol = "string", ["convention?"] = "string",
      ["bytes?"] = "number", ["flops?"] = "number", ["command?"] = "string", ["cflags?"] = "string"}}},
    units = {list = {fields = {labels = {list = "string"}, keys = {list = "string"}, kind = "string"}}},
    rows = {list = {fields = {key = "string", ["event?"] = "string", ["kind?"] = "string"}}},
  }},
  baseline = {fields = {kernel = "string", ["mbps?"] = "number", ["times?"] = {list = "number"}, ["second?"] = "boolean",
    ["work?"] = {list = "integer"}, ["sec_per_iter?"] = {list = "number"}, ["bytes_per_iter?"] = "number"}},
  run = {fields = {kernel = "string", group = "integer", cells = {list = CELL}, ["mbps?"] = "number",
    ["times?"] = {list = "number"}, ["iterations?"] = "number", ["work?"] = {list = "integer"},
    ["sec_per_iter?"] = {list = "number"}, ["isa?"] = "string", ["bytes_per_iter?"] = "number"}},
  unopened = {fields = {event = "string", ["reason?"] = "string"}},
  done = {fields = {}},
}

local function shape_error(where, want, v)
  local got = v == null and "null" or type(v) == "number" and string.format("%.14g", v) or
    type(v) == "table" and (v[1] ~= nil and "a list" or "an object") or type(v)
  return string.format("%s: expected %s, got %s", where, type(want) == "string" and want or
    (want.list and "a list" or "an object"), got)
end

-- Whether v has the shape: true, or nil and what is wrong where.
local function check(v, shape, where)
  if type(shape) == "string" then
    local ok
    local finite = type(v) == "number" and v == v and v ~= math.huge and v ~= -math.huge
    if shape == "integer" then ok = type(v) == "number" and math.tointeger(v) ~= nil
    elseif shape == "number" then ok = finite
    elseif shape == "scalar" then ok = finite or type(v) == "string" or type(v) == "boolean"
    else ok = type(v) == shape end
    return ok or nil, not ok and shape_error(where, shape, v) or nil
  end
  if type(v) ~= "table" then return nil, shape_error(where, shape, v) end
  if shape.list then
    local n = 0
    for k in pairs(v) do
      if math.type(k) ~= "integer" then return nil, shape_error(where, shape, v) end
      n = n + 1
    end
    if n < (shape.min or 0) then return nil, string.format("%s: an empty list", where) end
    for i = 1, n do
      local ok, err = check(v[i], shape.list, string.format("%s[%d]", where, i))
      if not ok then return nil, err end
    end
    return true
  end
  if shape.map then
    for k, x in pairs(v) do
      if type(k) ~= "string" then return nil, shape_error(where, shape, v) end
      local ok, err = check(x, shape.map, field(where, k))
      if not ok then return nil, err end
    end
    return true
  end
  for name, sub in pairs(shape.fields) do
    local key, optional = name:match("^(.-)(%??)$")
    local x = v[key]
    if x == nil and optional == "" then return nil, string.format("%s: no field %s", where, key) end
    if x ~= nil then
      local ok, err = check(x, sub, field(where, key))
      if not ok then return nil, err end
    end
  end
  return true
end

-- check(v, shape, where) -> true | nil, "where.field: expected ..., got ..."
-- for a value read from another node's file (shapes as above).
M.check = check

-- Reads the file at `path` as a file from another node is read: a regular
-- file only (a FIFO or a device is refused, never waited on), line by line,
-- each line at most M.MAX_LINE bytes (a longer one is refused unread: its
-- pieces gather in a list, so a long line costs its length, not its square).
-- fn(line, lineno, offset) -> true to go on, or nil, message to stop.  The
-- bytes read, or nil, message[, errno] (fn's, or the file's).  from: a
-- file already open (a resume's, checked as it was opened), read from its
-- start and left open; max_line: a lower cap than M.MAX_LINE, for files
-- whose records are small (a survey's runs are the long ones).
function M.each_line(path, fn, from, max_line)
  local f, oerr, errno = from, nil, nil
  if from then from:seek("set", 0) else f, oerr, errno = sys.open(path, "read") end
  if not f then return nil, string.format("cannot read %s", oerr), errno end
  local function done() if not from then f:close() end end
  local parts, plen, base, lineno = {}, 0, 0, 0
  local function one(l)
    lineno = lineno + 1
    local ok, err = fn(l, lineno, base)
    base = base + #l + 1
    return ok, err
  end
  while true do
    local block = f:read(65536)
    if not block then break end
    local from = 1
    while true do
      local nl = block:find("\n", from, true)
      if not nl then break end
      parts[#parts + 1] = block:sub(from, nl - 1)
      local l = table.concat(parts)
      parts, plen = {}, 0
      local ok, err = one(l)
      if not ok then done(); return nil, err end
      from = nl + 1
    end
    if from <= #block then
      parts[#parts + 1] = block:sub(from)
      plen = plen + #block - from + 1
    end
    if plen > (max_line or M.MAX_LINE) then
      done()
      return nil, string.format("%s:%d: a line over %d bytes: not a pmcsh results file", path, lineno + 1,
        max_line or M.MAX_LINE)
    end
  end
  done()
  local rest = table.concat(parts)
  if rest ~= "" then
    local ok, err = one(rest)
    if not ok then return nil, err end
    base = base - 1
  end
  return base
end

-- The records of the file at `path`, each checked: a list of decoded
-- objects, how many torn lines were skipped (0 or 1: only the last line
-- may be torn, by a crash mid-write), the bytes up to the end of the
-- last whole record (where M.append cuts a torn line off) and the line of
-- each record.  nil, message naming file:line and what is wrong in it
-- otherwise: any other line that is not a record is an error, never
-- skipped, so no run is lost unseen.  A file is one survey: its header
-- first and only there, nothing after its "done".
function M.read(path, from)
  local records, lines = {}, {}
  local bad   -- the first line that is no record: {lineno=, at=byte offset}
  local done  -- the line of "done"
  local function line(s, lineno, at)
    if not s:match("%S") then return true end
    if bad then
      return nil, string.format("%s:%d: not a JSON record (only the last line may be torn, by a crash " ..
        "mid-write; line %d follows it): repair or remove that line", path, bad.lineno, lineno)
    end
    local where = string.format("%s:%d", path, lineno)
    local obj, why, kind = M.decode(s)
    if not obj and kind == "syntax" then
      bad = {lineno = lineno, at = at}
      return true
    end
    if not obj then return nil, string.format("%s: %s", where, why) end
    local shape = SHAPES[obj.type]
    if not shape then
      return nil, string.format("%s: not a survey record (type %s)", where, tostring(obj.type))
    end
    if #records == 0 and obj.type ~= "header" then
      return nil, string.format("%s: a survey file starts with its header", where)
    end
    if #records > 0 and obj.type == "header" then
      return nil, string.format("%s: a second survey header (the first is line %d): a survey file holds one " ..
        "survey; name each file, not the files concatenated", where, lines[1])
    end
    if done then
      return nil, string.format("%s: a %s record after the survey's end (\"done\", line %d)", where, obj.type, done)
    end
    if obj.type == "header" and obj.format ~= M.FORMAT then
      return nil, string.format("%s: not a pmcsh survey file (format %s)", where, tostring(obj.format))
    end
    local cok, cerr = check(obj, shape, where .. " (" .. obj.type .. ")")
    if not cok then return nil, cerr end
    if obj.type == "done" then done = lineno end
    records[#records + 1], lines[#records + 1] = obj, lineno
    return true
  end
  local size, err, errno = M.each_line(path, line, from)
  if not size then return nil, err, errno end
  if #records == 0 then
    return nil, string.format("%s: no survey header (empty, or not written by pmcsh survey)", path)
  end
  return records, bad and 1 or 0, bad and bad.at or size, lines
end

return M
