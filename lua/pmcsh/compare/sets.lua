-- Results files read as sets of metrics, for pmcsh compare.
--
-- A results file holds sets: a record with a fingerprint (a survey's
-- header, a recipe's first JSON line, a health file's header) names the
-- machine of the records after it, up to the next one.  Every measurement
-- is a typed metric record (pmcsh.results.metric), whatever recipe wrote
-- it: compare reads those and nothing else, with no reader per recipe.  A
-- survey's results file becomes the same records through the survey's own
-- (pmcsh.survey.records).  A metric: {name=, value= (the headline: best,
-- trimmed mean), unit=, better= ("higher", "lower" or nil), samples= (what
-- it rests on), floor= (the least variance of one sample: counts' Poisson
-- variance), event= (the event it counts, where it is one), context=}.
local results = require("pmcsh.results")
local statistics = require("pmcsh.statistics")
local survey = require("pmcsh.survey")

local null = require("cjson").null
local check = results.check

local M = {}

-- The largest magnitude compare takes for a value: no measurement is near
-- it, and the statistics over values up to it (differences, squares,
-- Welch's sums) stay within a double.
M.LIMIT = 1e100

-- The bounds of a file compare reads that is not a survey's: its records
-- are small (a metric and its samples), few, and the file a few MiB at
-- most (a health or latency file is kilobytes; held, a byte of JSON costs
-- about twenty).
M.MAX_RECORD, M.MAX_RECORDS, M.MAX_FILE = 1 << 20, 100000, 8 << 20

-- The settings of a set: the scalar fields of its first record but the
-- fingerprint and the bookkeeping (an A/B says where they differ); the
-- metrics' context adds to them (settle).
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

-- The metric of typed record r, read at `where`: the metric; false for
-- one with no value (nothing was left under it); nil, message where r is
-- not the shape, or a value, a sample or the floor is past what the
-- statistics take (M.LIMIT).
local function metric_of(r, where)
  for k, v in pairs(r.context or {}) do if v == null then r.context[k] = nil end end
  local ok, err = check(r, results.METRIC, where .. " (metric)")
  if not ok then return nil, err end
  if r.value == nil then return false end
  local function past(v) return not (math.abs(v) <= M.LIMIT) end
  local bad = past(r.value) and r.value
  for _, v in ipairs(r.samples or {}) do bad = bad or past(v) and v end
  if bad or r.floor and past(math.sqrt(r.floor)) then
    return nil, string.format("%s: %s: %s past %g, which no measurement reaches: not compared", where, r.name,
      bad and string.format("%.14g", bad) or "a count's variance", M.LIMIT)
  end
  return {name = r.name, value = r.value, unit = r.unit, samples = r.samples and #r.samples > 0 and r.samples or nil,
    better = (r.better == "higher" or r.better == "lower") and r.better or nil, floor = r.floor, event = r.event,
    context = r.context or {}}
end

-- A context value as a name shows it: 2, not 2.0 (JSON reads numbers as floats).
local function shown(v)
  if type(v) == "number" then
    local i = math.tointeger(v)
    return i and tostring(i) or string.format("%.14g", v)
  end
  return tostring(v)
end

-- A set's metrics named apart, by their context alone: a field whose value
-- differs between metrics of one name is added to their names ("triad
-- MB/s, threads 2"); one with one value in the whole set is a setting of
-- the set's, so that an A/B of -t 1 against -t all pairs triad with triad
-- and says the threads differ.
local function settle(set)
  local per, fields = {}, {}
  for _, m in ipairs(set.metrics) do
    for f, v in pairs(m.context) do
      if not per[f] then per[f] = {names = {}, values = {}, n = 0}; fields[#fields + 1] = f end
      local e, key = per[f], shown(v)
      e.names[m.name] = e.names[m.name] or {}
      if not e.names[m.name][key] then e.names[m.name][key] = true; e.names[m.name].n = (e.names[m.name].n or 0) + 1 end
      if not e.values[key] then e.values[key], e.n = v, e.n + 1 end
    end
  end
  table.sort(fields)
  local apart = {}
  for _, f in ipairs(fields) do
    for _, vals in pairs(per[f].names) do if vals.n > 1 then apart[f] = true end end
    if not apart[f] and per[f].n == 1 then
      local _, v = next(per[f].values)
      set.settings[f] = type(v) == "number" and math.tointeger(v) or v   -- 2, not 2.0
    end
  end
  for _, m in ipairs(set.metrics) do
    for _, f in ipairs(fields) do
      if apart[f] and m.context[f] ~= nil then m.name = string.format("%s, %s %s", m.name, f, shown(m.context[f])) end
    end
  end
end

-- A survey's results file (pmcsh.results, checked line by line): one set,
-- its records as the survey's outputs type them.
local function survey_set(path)
  local st, err = survey.load(path)
  if not st then return nil, err end
  local hdr = st.header
  local set = new_set(path, 1, hdr.fingerprint or {}, "survey", hdr)
  for _, r in ipairs(survey.records(st)) do
    local m, merr = metric_of(survey.typed(r), path)
    if m == nil then return nil, merr end
    if m then set.metrics[#set.metrics + 1] = m end
  end
  settle(set)
  return {set}
end

-- The sets of one results file: a list, or nil and a message naming the
-- file (and its line) and what is wrong.  Read as a file from another node
-- (results.each_line: regular, every line bounded; results.decode: finite
-- numbers); a torn last line (a kill mid-write) is skipped, as
-- results.read skips it.  A survey's results file is one set; JSON lines
-- hold a set per record with a fingerprint.
function M.read(path)
  -- each line handled as it is read: a file of many lines costs one at a time
  local sets, set, n, torn = {}, nil, 0, nil
  local SURVEY = {}   -- the first line is a survey's header: read as a survey
  local HINT = " (compare reads the results files and --json output of pmcsh recipes)"
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
      torn = string.format("%s: %s%s", where, why, HINT)
      return true
    end
    if not r then return nil, string.format("%s: %s%s", where, why, kind == "syntax" and HINT or "") end
    for k, v in pairs(r) do if v == null then r[k] = nil end end   -- JSON lines write null for no value
    if r.type == "header" and r.format == results.FORMAT then
      return nil, string.format("%s: a survey's header inside another file: a survey file is read alone " ..
        "(name each file, not the files concatenated)", where)
    end
    if r.fingerprint ~= nil then
      local fok, ferr = check(r.fingerprint, results.FINGERPRINT, where .. " (fingerprint)")
      if not fok then return nil, ferr end
      set = new_set(path, lineno, r.fingerprint, type(r.recipe) == "string" and r.recipe or nil, r)
      sets[#sets + 1] = set
    elseif not set then
      return nil, string.format("%s: a record before any fingerprint: not written by this pmcsh " ..
        "(results carry their machine's fingerprint since pmcsh compare)", where)
    end
    if r.type == "metric" then
      local m, merr = metric_of(r, where)
      if m == nil then return nil, merr end
      if m then set.metrics[#set.metrics + 1] = m end
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

-- Metrics of many sets merged under one name each ("recipe: name"): the
-- values (several when tasks repeat), the samples joined, in first-seen
-- order.  filter(name) keeps a metric (nil: all).  A count of what
-- disturbs a window (context switches, migrations: survey.disturbance,
-- by the event's encoding) is no measurement of the machine: left out, its
-- event added to the list `left` if given.
function M.merge(sets, filter, left)
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
    e.metrics, e.order = M.merge(e.sets, filter, left)
    out[i] = e
  end
  return out
end

return M
