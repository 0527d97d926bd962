-- Comparing results: many hosts' files as a fleet (each node against the
-- fleet's median, by the robust z-score), or two sides as an A/B (the
-- difference with an interval from the runs each side holds: run-to-run
-- noise, which the repetitions inside one run do not show).
--
-- A results file holds sets: a record with a fingerprint (a survey's
-- header, a recipe's first JSON line, a health file's header) names the
-- machine of the records after it, up to the next one.  Each recipe's
-- records become metrics through one reader in READERS; a record of type
-- "metric" ({name=, value=, unit=, better=, samples=}) is read from any.
-- A metric: {name=, value= (the headline: best, trimmed mean), unit=,
-- better= ("higher", "lower" or nil), samples= (the repetitions kept),
-- floor= (the least variance of one sample: counts' Poisson variance),
-- event= (the event it counts, where it is one)}.
local machine = require("pmcsh.machine")
local numbers = require("pmcsh.numbers")
local statistics = require("pmcsh.statistics")
local results = require("pmcsh.results")
local survey = require("pmcsh.survey")

local null = require("cjson").null
local check = results.check

local M = {}

M.Z, M.BAND, M.LEVEL = 3.5, 0.10, 0.95

-- The largest magnitude compare takes for a value: no measurement is near
-- it, and the statistics over values up to it (differences, squares,
-- Welch's sums) stay within a double.
M.LIMIT = 1e100

local size = numbers.size

-- Readers: per recipe the fields its records carry (pmcsh.results' shapes)
-- and the metrics of one such record.  A record that has the fields not
-- marked optional is the reader's, and must have their shapes.
local READERS = {}
READERS.latency = {fields = {size = "integer", ns = "number", ["samples?"] = {list = "number"}},
  metrics = function(r)
    return {{name = "ns per load, " .. size(r.size), value = r.ns, unit = "ns", better = "lower", samples = r.samples}}
  end}
READERS.parallelism = {fields = {size = "integer", mlp = "number"},
  metrics = function(r)
    return {{name = "mlp, " .. size(r.size), value = r.mlp, unit = "misses", better = "higher"}}
  end}
READERS.loaded = {fields = {delay = "integer", ns = "number", mbps = "number"},
  metrics = function(r)
    return {{name = string.format("ns per load, delay %d", r.delay), value = r.ns, unit = "ns", better = "lower"},
      {name = string.format("loaders MB/s, delay %d", r.delay), value = r.mbps, unit = "MB/s", better = "higher"}}
  end}
-- per: a field of the records that names a metric only where a run holds
-- several of its values ("triad MB/s, 2 threads"); a run of one is a
-- setting of the run's, so that an A/B of -t 1 against -t all pairs
-- triad with triad and says the threads differ.
READERS["bench-stream"] = {fields = {kernel = "string", threads = "integer", mbps = "number",
  ["samples?"] = {list = "number"}}, per = {field = "threads", name = "%d threads"},
  metrics = function(r)
    return {{name = r.kernel .. " MB/s", value = r.mbps, unit = "MB/s", better = "higher", samples = r.samples}}
  end}
-- survey --json (the tidy records): the events per iteration, and the
-- bandwidth once per kernel
READERS.survey = {fields = {kind = "string", name = "string", kernel = "string", ["value?"] = "number",
  ["unit?"] = "string", ["mbps_no_counters?"] = "number"},
  metrics = function(r, seen)
    if r.kind ~= "event" then return {} end
    local out = {}
    if r.value then
      out[1] = {name = string.format("%s per iteration, %s", r.name, r.kernel), value = r.value, unit = r.unit,
        event = r.name}
    end
    if r.mbps_no_counters and not seen[r.kernel] then
      seen[r.kernel] = true
      out[#out + 1] = {name = r.kernel .. " MB/s", value = r.mbps_no_counters, unit = "MB/s", better = "higher"}
    end
    return out
  end}
-- A metric record of any recipe (pmcsh health writes these).
local METRIC = {fields = {name = "string", value = "number", ["unit?"] = "string", ["better?"] = "string",
  ["samples?"] = {list = "number"}},
  metrics = function(r)
    return {{name = r.name, value = r.value, unit = r.unit,
      better = (r.better == "higher" or r.better == "lower") and r.better or nil, samples = r.samples}}
  end}

-- The metrics of record r by reader rd: a list; nil where r is not rd's
-- (a field it needs absent); nil, message where it is but a field has not
-- its shape.
local function read_record(rd, r, where, seen)
  for name in pairs(rd.fields) do
    if not name:match("%?$") and r[name] == nil then return nil end
  end
  local ok, err = check(r, {fields = rd.fields}, where .. " (" .. (r.type == "metric" and "metric" or "record") .. ")")
  if not ok then return nil, err end
  return rd.metrics(r, seen)
end

-- The settings of a set: the scalar fields of its first record but the
-- fingerprint and the bookkeeping (an A/B says where they differ).
local NOT_SETTINGS = {type = true, format = true, started = true, recipe = true, fingerprint = true, units = true,
  rows = true, kernels = true, finished = true}
local function settings_of(r)
  local s = {}
  for k, v in pairs(r) do
    if not NOT_SETTINGS[k] and (type(v) == "string" or type(v) == "number" or type(v) == "boolean") then s[k] = v end
  end
  if type(r.kernels) == "table" then s.kernels = table.concat(r.kernels, ",") end
  return s
end

local function new_set(path, line, fp, recipe, first)
  return {source = path, line = line, fingerprint = fp, host = fp.host or "unknown", recipe = recipe or "unknown",
    settings = settings_of(first), metrics = {}}
end

-- Adds metric m to the set, read at `where`: nil, message where a value, a
-- sample or the floor is past what the statistics take (M.LIMIT).
local function add(set, m, where)
  local function past(v) return not (math.abs(v) <= M.LIMIT) end
  local bad = past(m.value) and m.value
  for _, v in ipairs(m.samples or {}) do bad = bad or past(v) and v end
  if bad or m.floor and past(math.sqrt(m.floor)) then
    return nil, string.format("%s: %s: %s past %g, which no measurement reaches: not compared", where, m.name,
      bad and string.format("%.14g", bad) or "a count's variance", M.LIMIT)
  end
  if m.samples and #m.samples == 0 then m.samples = nil end
  set.metrics[#set.metrics + 1] = m
  return true
end

-- The Poisson variance of one kept slope of a cell of counts (no unit):
-- a pair's slope (c2 - c1) / dw varies as (c1 + c2) / dw^2, whatever few
-- equal slopes a file kept say; the mean over the kept pairs.  nil where
-- the cell has no windows (a ratio cell, an older file) or counts time.
local function poisson(c, run)
  if c.unit or not (run and run.work and c.windows) then return nil end
  local w, k, sum, n = run.work, 1, 0, 0
  local kept = c.per_rep or {}
  for p = 2, #c.windows, 2 do
    local dw = (w[p] or 0) - (w[p - 1] or 0)
    if dw > 0 then
      -- the kept slopes are a subsequence of the pairs' (pmcsh.survey.run)
      if kept[k] == (c.windows[p] - c.windows[p - 1]) / dw then
        sum, n, k = sum + (c.windows[p] + c.windows[p - 1]) / dw ^ 2, n + 1, k + 1
      end
    end
  end
  return n > 0 and sum / n or nil
end

-- A survey's results file (pmcsh.results, checked line by line): the
-- bandwidth of each kernel with no counters (MB/s per pair of windows as
-- samples), and each cell's events per iteration (trimmed mean; the
-- kept pairs' slopes as samples).
local function survey_set(path)
  local st, err = survey.load(path)
  if not st then return nil, err end
  local hdr = st.header
  local ms = {}
  for _, k in ipairs(hdr.kernels) do
    local b = st.baseline[k]
    if b and b.mbps then
      local samples
      if b.bytes_per_iter and b.sec_per_iter then
        samples = {}   -- a pair's slope is <= 0 only when noise outweighed the work: no rate
        for _, s in ipairs(b.sec_per_iter) do
          if s > 0 then samples[#samples + 1] = 1e-6 * b.bytes_per_iter / s end
        end
      end
      ms[#ms + 1] = {name = k .. " MB/s", value = b.mbps, unit = "MB/s", better = "higher", samples = samples}
    elseif b and b.sec_per_iter and #b.sec_per_iter > 0 then
      local ns = {}
      for i, s in ipairs(b.sec_per_iter) do ns[i] = s * 1e9 end
      ms[#ms + 1] = {name = k .. " ns per iteration", value = statistics.median(ns), unit = "ns", better = "lower",
        samples = ns}
    end
  end
  local run_of = {}
  for _, r in ipairs(st.runs) do
    for _, c in ipairs(r.cells) do run_of[c] = r end
  end
  for _, row in ipairs(hdr.rows) do
    for _, k in ipairs(hdr.kernels) do
      local c = st.cells[row.key] and st.cells[row.key][k]
      if c and c.value then
        ms[#ms + 1] = {name = string.format("%s per iteration, %s", row.key, k), value = c.value,
          unit = c.unit, samples = c.per_rep, floor = poisson(c, run_of[c]), event = row.key}
      end
    end
  end
  local set = new_set(path, 1, hdr.fingerprint or {}, "survey", hdr)
  for _, m in ipairs(ms) do
    local ok, aerr = add(set, m, path)
    if not ok then return nil, aerr end
  end
  return {set}
end

-- A set's metrics named by their reader's `per` field where the set holds
-- several of its values, the one value a setting of the set's otherwise.
local function settle(set)
  local per = (READERS[set.recipe] or {}).per
  if not per then return end
  local vals, n = {}, 0
  for _, m in ipairs(set.metrics) do
    if m.per ~= nil and not vals[m.per] then vals[m.per], n = true, n + 1 end
  end
  for _, m in ipairs(set.metrics) do
    if m.per ~= nil then
      local v = math.tointeger(m.per) or m.per   -- JSON numbers decode as floats: 2, not 2.0
      if n > 1 then m.name = m.name .. ", " .. string.format(per.name, v) else set.settings[per.field] = v end
    end
    m.per = nil
  end
end

-- The sets of one results file: a list, or nil and a message naming the
-- file (and its line) and what is wrong.  Read as a file from another node
-- (results.each_line: regular, every line bounded; results.decode: finite
-- numbers); a torn last line (a kill mid-write) is skipped, as
-- results.read skips it.  A survey's results file is one set; JSON lines
-- hold a set per record with a fingerprint.
-- The bounds of a file compare reads that is not a survey's: its records
-- are small (a metric and its samples), few, and the file a few MiB at
-- most (a health or latency file is kilobytes; held, a byte of JSON costs
-- about twenty).
M.MAX_RECORD, M.MAX_RECORDS, M.MAX_FILE = 1 << 20, 100000, 8 << 20

function M.read(path)
  -- each line handled as it is read: a file of many lines costs one at a time
  local sets, set, seen, n, torn = {}, nil, {}, 0, nil
  local SURVEY = {}   -- the first line is a survey's header: read as a survey
  local function line(l, lineno, at)
    if at + #l > M.MAX_FILE then
      return nil, string.format("%s: over %d bytes: no recipe of pmcsh's but the survey writes so much", path, M.MAX_FILE)
    end
    if not l:match("%S") then return true end
    n = n + 1
    local where = string.format("%s:%d", path, lineno)
    if n > M.MAX_RECORDS then
      return nil, string.format("%s: more than %d records: no recipe of pmcsh's writes so many", where, M.MAX_RECORDS)
    end
    if torn then return nil, torn end   -- only the last line may be torn
    local r, why, kind = results.decode(l)
    if n == 1 and r and r.type == "header" and r.format == results.FORMAT then return nil, SURVEY end
    if not r and kind == "syntax" and n > 1 then   -- torn by a kill mid-write, if it is the last
      torn = string.format("%s: %s (compare reads the results files and --json output of pmcsh recipes)", where, why)
      return true
    end
    if not r then
      return nil, string.format("%s: %s%s", where, why, kind == "syntax" and " (compare reads the results " ..
        "files and --json output of pmcsh recipes)" or "")
    end
    for k, v in pairs(r) do if v == null then r[k] = nil end end   -- JSON lines write null for no value
    if r.type == "header" and r.format == results.FORMAT then
      return nil, string.format("%s: a survey's header inside another file: a survey file is read alone " ..
        "(name each file, not the files concatenated)", where)
    end
    if r.fingerprint ~= nil then
      local fok, ferr = check(r.fingerprint, results.FINGERPRINT, where .. " (fingerprint)")
      if not fok then return nil, ferr end
      set = new_set(path, lineno, r.fingerprint, type(r.recipe) == "string" and r.recipe or nil, r)
      sets[#sets + 1], seen = set, {}
    elseif not set then
      return nil, string.format("%s: a record before any fingerprint: not written by this pmcsh " ..
        "(results carry their machine's fingerprint since pmcsh compare)", where)
    end
    local reader = r.type == "metric" and METRIC or READERS[set.recipe]
    local ms, rerr
    if reader then ms, rerr = read_record(reader, r, where, seen) end
    if rerr then return nil, rerr end
    for _, m in ipairs(ms or {}) do
      if reader.per then m.per = r[reader.per.field] end
      local aok, aerr = add(set, m, where)
      if not aok then return nil, aerr end
    end
    return true
  end
  local ok, err = results.each_line(path, line, nil, M.MAX_RECORD)
  if not ok and err == SURVEY then return survey_set(path) end
  if not ok then return nil, err end
  if n == 0 then return nil, string.format("%s: empty: no results in it", path) end
  if #sets == 0 then return nil, string.format("%s: no results in it", path) end
  for _, s in ipairs(sets) do settle(s) end
  return sets
end

M.recipes = {"survey", "health"}
for name in pairs(READERS) do if name ~= "survey" then M.recipes[#M.recipes + 1] = name end end
table.sort(M.recipes)

-- Metrics of many sets merged under one name each ("recipe: name"): the
-- values (several when tasks repeat), the samples joined, in first-seen
-- order.  filter(name) keeps a metric (nil: all).  A count of what
-- disturbs a window (context switches, migrations: survey.disturbance) is
-- no measurement of the machine: left out, its event added to the list
-- `left` if given.
local function merge(sets, filter, left)
  local by, order = {}, {}
  for _, s in ipairs(sets) do
    for _, m in ipairs(s.metrics) do
      local name = s.recipe .. ": " .. m.name
      local disturbance = m.event and survey.disturbance(m.event)
      if disturbance and left then
        local have = false
        for _, n in ipairs(left) do have = have or n == m.event end
        if not have then left[#left + 1] = m.event end
      end
      if not disturbance and (not filter or filter(name)) then
        local e = by[name]
        if not e then
          e = {name = name, unit = m.unit, better = m.better, values = {}, samples = {}, floor = 0}
          by[name], order[#order + 1] = e, name
        end
        e.values[#e.values + 1] = m.value
        e.floor = math.max(e.floor, m.floor or 0)
        for _, v in ipairs(m.samples or {}) do e.samples[#e.samples + 1] = v end
      end
    end
  end
  for _, e in pairs(by) do e.value = statistics.median(e.values) end
  return by, order
end

-- A filter keeping the metrics whose name holds one of `words` (plain
-- text), nil for none.
function M.only(words)
  if not words or #words == 0 then return nil end
  return function(name)
    for _, w in ipairs(words) do
      if name:find(w, 1, true) then return true end
    end
    return false
  end
end

-- The sets grouped by host, in the order hosts first appear; the events
-- of the disturbance counts left out are added to `left` (a list) if given.
function M.hosts(sets, filter, left)
  local by, order = {}, {}
  for _, s in ipairs(sets) do
    if not by[s.host] then
      by[s.host] = {host = s.host, fingerprint = s.fingerprint, sets = {}}
      order[#order + 1] = s.host
    end
    table.insert(by[s.host].sets, s)
  end
  local out = {}
  for i, h in ipairs(order) do
    local e = by[h]
    e.metrics, e.order = merge(e.sets, filter, left)
    out[i] = e
  end
  return out
end

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

-- Two sides, A and B, each a list of sets (a set is one run): per metric
-- both have, each run's value (its headline: best, trimmed mean, as the
-- recipe states it), and B - A between the means of the runs with
-- Welch's interval over the runs, so the interval holds the run-to-run
-- variance that the repetitions inside one run never show.  The
-- intervals hold together at o.level (Bonferroni: each at 1 - (1 -
-- level) / m for m intervals): "no significant difference" then means
-- for every metric at once, as an A/A of many metrics must read.  A side
-- of one run gives no interval (why = "one run each", "one run in A").
-- A metric zero in every run of both sides is left out (counted).
-- Returns rows {metric=, unit=, better=, a=, b=, diff=, rel=, lo=, hi=,
-- runs_a=, runs_b=, significant= (nil: no interval), why=, sd_runs= (the
-- runs' values' SD, pooled over the sides), sd_reps= (the median SD of
-- the repetitions inside a run, where runs kept them)}, significant ones
-- first, then by |rel|; and {level=, each= (each interval's level),
-- intervals=, zero=, disturbances= (the events left out)}.
function M.ab(a_sets, b_sets, o)
  o = o or {}
  local level = o.level or M.LEVEL
  local left = {}
  local function side(sets)
    local runs = {}
    for i, s in ipairs(sets) do runs[i] = merge({s}, o.filter, left) end
    return runs
  end
  local ra, rb = side(a_sets), side(b_sets)
  local order, seen = {}, {}
  for _, r in ipairs(ra) do
    for _, e in pairs(r) do
      if not seen[e.name] then seen[e.name] = true; order[#order + 1] = e.name end
    end
  end
  table.sort(order)
  -- per metric the runs of a side that hold it: values, the least
  -- variance of one run's value (a count's Poisson floor over the samples
  -- its value rests on), the SD of its repetitions
  local function gather(runs, name)
    local xs, floor, sds, first = {}, 0, {}, nil
    for _, r in ipairs(runs) do
      local e = r[name]
      if e then
        first = first or e
        xs[#xs + 1] = e.value
        floor = math.max(floor, e.floor / math.max(1, #e.samples))
        if #e.samples >= 2 then sds[#sds + 1] = select(3, statistics.mean_rse(e.samples)) end
      end
    end
    return xs, floor, sds, first
  end
  local rows, info = {}, {level = level, zero = 0, disturbances = left}
  for _, name in ipairs(order) do
    local xs, fa, sa, e = gather(ra, name)
    local ys, fb, sb = gather(rb, name)
    local zero = #ys > 0
    for _, v in ipairs(xs) do zero = zero and v == 0 end
    for _, v in ipairs(ys) do zero = zero and v == 0 end
    if zero then info.zero = info.zero + 1
    elseif #ys > 0 then
      local row = {metric = name, unit = e.unit, better = e.better, runs_a = #xs, runs_b = #ys, fa = fa, fb = fb,
        xs = xs, ys = ys}
      local sds = {}
      table.move(sa, 1, #sa, 1, sds); table.move(sb, 1, #sb, #sds + 1, sds)
      row.sd_reps = #sds > 0 and statistics.median(sds) or nil
      if #xs >= 2 and #ys >= 2 then
        local sdx, sdy = select(3, statistics.mean_rse(xs)), select(3, statistics.mean_rse(ys))
        row.sd_runs = math.sqrt(((#xs - 1) * sdx ^ 2 + (#ys - 1) * sdy ^ 2) / (#xs + #ys - 2))
      else
        row.why = #xs < 2 and #ys < 2 and "one run each" or #xs < 2 and "one run in A" or "one run in B"
      end
      rows[#rows + 1] = row
    end
  end
  local m = 0
  for _, r in ipairs(rows) do if not r.why then m = m + 1 end end
  info.intervals = m
  info.each = m > 0 and 1 - (1 - level) / m or level
  for _, row in ipairs(rows) do
    local s = 0
    for _, v in ipairs(row.xs) do s = s + v end
    row.a = s / #row.xs
    s = 0
    for _, v in ipairs(row.ys) do s = s + v end
    row.b = s / #row.ys
    if not row.why then
      local w = statistics.welch(row.xs, row.ys, info.each, row.fa, row.fb)
      row.a, row.b, row.lo, row.hi = w.mean_a, w.mean_b, w.lo, w.hi
      row.significant = w.lo > 0 or w.hi < 0
    end
    row.diff = row.b - row.a
    row.rel = row.a ~= 0 and row.diff / math.abs(row.a) or (row.diff == 0 and 0 or nil)
    row.xs, row.ys, row.fa, row.fb = nil, nil, nil, nil
  end
  local rank = function(r) return r.significant == true and 0 or r.significant == nil and 1 or 2 end
  table.sort(rows, function(p, q)
    if rank(p) ~= rank(q) then return rank(p) < rank(q) end
    local rp, rq = math.abs(p.rel or math.huge), math.abs(q.rel or math.huge)
    if rp ~= rq then return rp > rq end
    return p.metric < q.metric
  end)
  return rows, info
end

-- Where two sets of sets differ: {field=, a=, b=} for the fingerprints
-- (identity included: an A/B of two machines says so) and the settings.
function M.ab_differences(a_sets, b_sets)
  local function one(sets, what)
    local out = {}
    for _, s in ipairs(sets) do
      local t = what == "fingerprint" and M.flat(s.fingerprint) or s.settings
      if what == "fingerprint" then t.host = s.host end
      for k, v in pairs(t) do if out[k] == nil then out[k] = tostring(v) end end
    end
    return out
  end
  local res = {}
  for _, what in ipairs({"fingerprint", "settings"}) do
    local x, y, keys = one(a_sets, what), one(b_sets, what), {}
    for k in pairs(x) do keys[k] = true end
    for k in pairs(y) do keys[k] = true end
    local names = {}
    for k in pairs(keys) do names[#names + 1] = k end
    table.sort(names)
    res[what] = {}
    for _, k in ipairs(names) do
      if x[k] ~= y[k] then table.insert(res[what], {field = k, a = x[k] or "(absent)", b = y[k] or "(absent)"}) end
    end
  end
  return res
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
    if at > M.MAX_RECORD then return nil, string.format("%s: over %d bytes: not a baseline", path, M.MAX_RECORD) end
    if not l:match("%S") then return true end
    lines = lines + 1
    if lines > 1 then return nil, string.format("%s:%d: a baseline is one line (one JSON object)", path, lineno) end
    line1 = l
    return true
  end, nil, M.MAX_RECORD)
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
  if not (b.z > 0 and b.z <= M.LIMIT) then return bad("z", b.z, "a positive number expected") end
  if not (b.band >= 0 and b.band <= M.LIMIT) then
    return bad("band", b.band, "a fraction of the median, 0 or more, expected")
  end
  for name, m in pairs(b.metrics) do
    for _, k in ipairs({"median", "mad", "low", "high"}) do
      if m[k] and not (math.abs(m[k]) <= M.LIMIT) then
        return bad(string.format("metrics[%q].%s", name, k), m[k], string.format("past %g, no measurement", M.LIMIT))
      end
    end
    if m.low and m.high and m.low > m.high then
      return bad(string.format("metrics[%q].low", name), m.low, string.format("above its high %.14g", m.high))
    end
  end
  return b
end

return M
