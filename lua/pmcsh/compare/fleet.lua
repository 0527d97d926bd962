-- A fleet of hosts judged against itself: per metric the median, each
-- host's robust z-score and distance from it (flagged past both a z and a
-- band), where a flagged host's fingerprint differs from the rest, and the
-- baseline pmcsh health reads (written here, read back as a file from
-- another node).
local machine = require("pmcsh.machine")
local numbers = require("pmcsh.numbers")
local results = require("pmcsh.results")
local sets = require("pmcsh.compare.sets")
local statistics = require("pmcsh.statistics")
local text = require("pmcsh.text")

local check = results.check
local size = numbers.size

local M = {}

M.Z, M.BAND = 3.5, 0.10

-- A metric's spread over a fleet: the median, the scale its deviations
-- are taken on, a function giving a value's deviation, and the MAD of
-- those.  A metric positive on every host (a rate, a time, a count) is
-- compared on the logarithm, ln(x / median): a node at a tenth of the
-- median is as far off as one at ten times it.  On the linear scale a
-- slow node's deviation cannot pass the median itself, so in a fleet
-- whose MAD passed 19% of the median (0.6745 / 3.5) a node measuring 0
-- was never flagged.  Values of either sign stay linear: x - median.
local function spread(vals)
  local med = statistics.median(vals)
  local log = true
  for _, v in ipairs(vals) do if v <= 0 then log = false end end
  local dev
  -- ln x - ln median: v / med may pass a double where the logs do not
  if log then dev = function(v) return math.log(v) - math.log(med) end else dev = function(v) return v - med end end
  local d = {}
  for i, v in ipairs(vals) do d[i] = math.abs(dev(v)) end
  return med, log and "log" or "linear", dev, statistics.median(d)
end

-- Whether deviation d (spread()'s) lies beyond the band: on the log
-- scale a factor of 1 + band either way, as the z takes a tenth and ten
-- times alike (med * (1 - band) below made a band of 0.5 hold a slow
-- node to half the median but a high latency to 1.5 times it, and a band
-- of 1 or more no bound below at all); on the linear scale band * |med|.
local function beyond(d, scale, med, band)
  if scale == "log" then return math.abs(d) > math.log(1 + band) end
  return math.abs(d) > band * math.abs(med)
end

-- The bounds a value must keep to stay unflagged, from spread(): outside
-- both the robust z and the band of the median.
local function bounds(med, scale, mad, z, band)
  local k = z * mad / statistics.ROBUST_Z
  if scale == "log" then
    return math.min(med * math.exp(-k), med / (1 + band)), math.max(med * math.exp(k), med * (1 + band))
  end
  local d = math.max(k, band * math.abs(med))
  return med - d, med + d
end

-- The fleet's statistics per metric: median, MAD over the hosts that
-- have it (on the scale spread() picks); per host value, robust z, off
-- (the relative distance from the median) and flagged (|z| > o.z and
-- beyond o.band: beyond()).  Returns {rows=, flagged={host...}, stats={name ->
-- {median=, mad=, scale=, n=, unit=, better=}}, equal= (metrics the same
-- on every host), few= (on fewer than 3 hosts), duplicates= ({host=,
-- claims={{file=, line=}...}} for each host several sets claim)}.
function M.fleet(hosts, o)
  o = o or {}
  local zmax, band = o.z or M.Z, o.band or M.BAND
  local names, seen = {}, {}
  for _, h in ipairs(hosts) do
    for _, n in ipairs(h.order) do
      if not seen[n] then seen[n], names[#names + 1] = true, n end
    end
  end
  local res = {rows = {}, flagged = {}, stats = {}, equal = 0, few = 0, z = zmax, band = band,
    hosts = {}, metrics = #names}
  for i, h in ipairs(hosts) do res.hosts[i] = h.host end
  -- a host more than one set claims (two tasks of a job on one node, or a
  -- file claiming another's host): the median of their values is judged
  res.duplicates = {}
  for _, h in ipairs(hosts) do
    if #h.sets > 1 then
      local claims = {}
      for i, s in ipairs(h.sets) do claims[i] = {file = s.source, line = s.line} end
      res.duplicates[#res.duplicates + 1] = {host = h.host, claims = claims}
    end
  end
  local nflag = {}
  for _, name in ipairs(names) do
    local vals, have = {}, {}
    for _, h in ipairs(hosts) do
      local m = h.metrics[name]
      if m then vals[#vals + 1], have[#have + 1] = m.value, {h, m} end
    end
    local med, scale, dev, mad = spread(vals)
    local first = have[1][2]
    res.stats[name] = {median = med, mad = mad, scale = scale, n = #vals, unit = first.unit, better = first.better}
    local all_equal = true
    for _, v in ipairs(vals) do if v ~= vals[1] then all_equal = false end end
    if all_equal then res.equal = res.equal + 1
    elseif #vals < 3 then res.few = res.few + 1
    else
      for _, hm in ipairs(have) do
        local h, m = hm[1], hm[2]
        local z = statistics.robust_z(dev(m.value), 0, mad)
        local off = med ~= 0 and (m.value - med) / math.abs(med) or (m.value == med and 0 or math.huge)
        local flagged = math.abs(z) > zmax and beyond(dev(m.value), scale, med, band)
        local worse
        if m.better then worse = (m.better == "higher") == (m.value < med) end
        res.rows[#res.rows + 1] = {host = h.host, metric = name, unit = m.unit, value = m.value, median = med,
          mad = mad, scale = scale, z = z, off = off, flagged = flagged, worse = worse}
        if flagged then nflag[h.host] = (nflag[h.host] or 0) + 1 end
      end
    end
  end
  table.sort(res.rows, function(a, b)
    if a.flagged ~= b.flagged then return a.flagged end
    local za, zb = math.abs(a.z), math.abs(b.z)
    if za ~= zb then return za > zb end
    if a.host ~= b.host then return a.host < b.host end
    return a.metric < b.metric
  end)
  for _, h in ipairs(res.hosts) do
    if nflag[h] then res.flagged[#res.flagged + 1] = h end
  end
  res.flag_counts = nflag
  return res
end

-- A fingerprint as field -> text, for telling two apart: caches as "L1
-- Data 48K", lists and objects written out (the latter by sorted key),
-- the identity (host, job, task) left out.  fp has results.FINGERPRINT's
-- shape; its other fields may hold any JSON.
local IDENTITY = {}
for _, k in ipairs(machine.IDENTITY) do IDENTITY[k] = true end
local function as_text(v)
  if type(v) ~= "table" then return tostring(v) end
  local t = {}
  for i, x in ipairs(v) do t[i] = as_text(x) end
  if #t > 0 or next(v) == nil then return table.concat(t, " ") end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  for i, k in ipairs(keys) do t[i] = k .. "=" .. as_text(v[k]) end
  return "{" .. table.concat(t, " ") .. "}"
end
function M.flat(fp)
  local out = {}
  for k, v in pairs(fp or {}) do
    if not IDENTITY[k] then
      if k == "caches" then
        local t = {}
        for _, c in ipairs(v) do
          -- a level read back from JSON is a float: L1, never L1.0 (A33)
          t[#t + 1] = string.format("L%s %s %s", tostring(math.tointeger(c.level) or c.level), tostring(c.type),
            c.size and size(c.size) or "?")
        end
        out[k] = table.concat(t, ", ")
      else
        out[k] = as_text(v)
      end
    end
  end
  return out
end

-- Where each flagged host's fingerprint differs from what most of the
-- other hosts share: a list of {host=, field=, value=, others=, agree=,
-- of=}, by host then field.
function M.differences(hosts, flagged)
  local is_flagged, rest = {}, {}
  for _, h in ipairs(flagged) do is_flagged[h] = true end
  for _, h in ipairs(hosts) do
    if not is_flagged[h.host] then rest[#rest + 1] = M.flat(h.fingerprint) end
  end
  local out = {}
  if #rest == 0 then return out end
  for _, h in ipairs(hosts) do
    if is_flagged[h.host] then
      local mine, fields = M.flat(h.fingerprint), {}
      for _, r in ipairs(rest) do for k in pairs(r) do fields[k] = true end end
      for k in pairs(mine) do fields[k] = true end
      local names = {}
      for k in pairs(fields) do names[#names + 1] = k end
      table.sort(names)
      for _, k in ipairs(names) do
        local count, best, bestn = {}, nil, 0
        for _, r in ipairs(rest) do
          local v = r[k] or "(absent)"
          count[v] = (count[v] or 0) + 1
          if count[v] > bestn or (count[v] == bestn and v < best) then best, bestn = v, count[v] end
        end
        local v = mine[k] or "(absent)"
        if v ~= best then
          out[#out + 1] = {host = h.host, field = k, value = v, others = best, agree = bestn, of = #rest}
        end
      end
    end
  end
  return out
end


M.BASELINE = "pmcsh-baseline/1"

-- A baseline for pmcsh health from a fleet's statistics, recomputed over
-- the hosts not flagged: per metric the median, the MAD, and the bounds a
-- node must stay within, low (higher is better) or high (lower is) or both:
-- past them compare flags (bounds()).
function M.baseline(hosts, fleet)
  local flagged = {}
  for _, h in ipairs(fleet.flagged) do flagged[h] = true end
  local healthy, excluded = {}, {}
  for _, h in ipairs(hosts) do
    if flagged[h.host] then excluded[#excluded + 1] = h.host else healthy[#healthy + 1] = h end
  end
  local out = {format = M.BASELINE, created = os.time(), z = fleet.z, band = fleet.band, metrics = {},
    excluded = excluded, hosts = {}}
  for i, h in ipairs(healthy) do out.hosts[i] = h.host end
  local names = {}
  for name in pairs(fleet.stats) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local vals = {}
    for _, h in ipairs(healthy) do
      if h.metrics[name] then vals[#vals + 1] = h.metrics[name].value end
    end
    if #vals > 0 then
      local st = fleet.stats[name]
      local med, scale, _, mad = spread(vals)
      local low, high = bounds(med, scale, mad, fleet.z, fleet.band)
      if high == math.huge then high = nil end   -- past a double: no bound
      if low == -math.huge then low = nil end
      out.metrics[name] = {median = med, mad = mad, scale = scale, n = #vals, unit = st.unit, better = st.better,
        low = st.better ~= "lower" and low or nil, high = st.better ~= "higher" and high or nil}
    end
  end
  return out
end

-- A baseline's shape (pmcsh.results' shapes) and what its numbers must
-- keep: z and band as compare's --z and --band take them, no value past
-- LIMIT, low below high.
local BASELINE = {fields = {format = "string", z = "number", band = "number", ["created?"] = "integer",
  ["hosts?"] = {list = "string"}, ["excluded?"] = {list = "string"},
  metrics = {map = {fields = {median = "number", ["mad?"] = "number", ["low?"] = "number", ["high?"] = "number",
    ["n?"] = "integer", ["scale?"] = "string", ["unit?"] = "string", ["better?"] = "string"}}}}}

-- A baseline file read back and checked (a file from another node, as
-- results files are): the table, or nil and a message naming the file.
function M.read_baseline(path)
  local line1, lines = nil, 0
  local read, err = results.each_line(path, function(l, lineno, at)
    if at > sets.MAX_RECORD then return nil, string.format("%s: over %d bytes: not a baseline", path, sets.MAX_RECORD) end
    if not l:match("%S") then return true end
    lines = lines + 1
    if lines > 1 then return nil, string.format("%s:%d: a baseline is one line (one JSON object)", path, lineno) end
    line1 = l
    return true
  end, nil, sets.MAX_RECORD)
  if not read then return nil, string.format("cannot read the baseline: %s", err) end
  local b, why, kind = results.decode(line1 or "")
  local hint = "write one with pmcsh compare --baseline FILE"
  if not b and kind == "value" then return nil, string.format("%s (baseline): %s (%s)", path, why, hint) end
  if not b or b.format ~= M.BASELINE then
    return nil, string.format("%s: not a pmcsh baseline (%s)", path, hint)
  end
  local ok, cerr = check(b, BASELINE, path .. " (baseline)")
  if not ok then return nil, string.format("%s (%s)", cerr, hint) end
  local function bad(what, v, want)
    return nil, string.format("%s (baseline): %s %.14g: %s (%s)", path, what, v, want, hint)
  end
  if not (b.z > 0 and b.z <= sets.LIMIT) then return bad("z", b.z, "a positive number expected") end
  if not (b.band >= 0 and b.band <= sets.LIMIT) then
    return bad("band", b.band, "a fraction of the median, 0 or more, expected")
  end
  for name, m in pairs(b.metrics) do
    local function field(k) return string.format('metrics["%s"].%s', text.inert(name), k) end
    for _, k in ipairs({"median", "mad", "low", "high"}) do
      if m[k] and not (math.abs(m[k]) <= sets.LIMIT) then
        return bad(field(k), m[k], string.format("past %g, no measurement", sets.LIMIT))
      end
    end
    if m.low and m.high and m.low > m.high then
      return bad(field("low"), m.low, string.format("above its high %.14g", m.high))
    end
    -- checked against its own median: bounds that exclude it would fail
    -- every healthy node (a forged baseline drains the fleet)
    if m.low and m.low > m.median then
      return bad(field("low"), m.low, string.format("above its own median %.14g", m.median))
    end
    if m.high and m.high < m.median then
      return bad(field("high"), m.high, string.format("below its own median %.14g", m.median))
    end
    if m.mad and m.mad < 0 then return bad(field("mad"), m.mad, "a spread, 0 or more, expected") end
    if m.scale == "log" and not (m.median > 0 and (m.low or 1) > 0) then
      return bad(field(m.median > 0 and "low" or "median"), m.median > 0 and m.low or m.median,
        "a log-scale metric's median and bounds are positive")
    end
  end
  return b
end


return M
