-- pmcsh compare: results of many nodes judged against their fleet, or two
-- results files as an A/B.  The statistics are pmcsh.compare's.
local compare = require("pmcsh.compare")
local statistics = require("pmcsh.statistics")
local recipe = require("pmcsh.recipe")
local plot = require("pmcsh.plot")
local sys = require("pmcsh.sys")
local text = require("pmcsh.text")

local function usage(fmt, ...) error(recipe.usage("compare: " .. string.format(fmt, ...)), 0) end

-- --json and --baseline: a number past a double (an infinite z where the
-- MAD is 0) is null
local json = require("cjson").new()
json.encode_invalid_numbers("null")

-- The files named: a folder stands for its *.json and *.jsonl files, sorted;
-- nil and a message when one is not there (the environment's: status 1).
-- Also whether a folder was named, and the files found in one (by name).
-- What a folder's .json/.jsonl name that is no file is, for its line.
local function not_a_file(path)
  local st = sys.stat(path)
  if st then return st.type == "dir" and "a folder" or "not a regular file (a FIFO, a socket or a device)" end
  st = sys.stat(path, true)
  return st and st.type == "link" and "a link to nothing" or "gone while listed"
end

-- The files the arguments name (a folder: its .json and .jsonl files),
-- whether a folder was named, which came from one, and a line for each of
-- a folder's names left out as no regular file.
local function files_of(args)
  local files, from_dir, in_dir, skipped = {}, false, {}, {}
  for _, a in ipairs(args) do
    local st = sys.stat(a)
    if not st then return nil, text.inert(a) .. ": no such file or folder" end
    if st.type == "dir" then
      from_dir = true
      local names = {}
      for _, n in ipairs(sys.dir(a) or {}) do
        local path = a:gsub("/+$", "") .. "/" .. n
        if n:match("%.jsonl?$") then
          if (sys.stat(path) or {}).type == "file" then names[#names + 1] = n
          else skipped[#skipped + 1] = string.format("pmcsh compare: left out %s: %s", text.inert(path), not_a_file(path)) end
        end
      end
      table.sort(names)
      table.sort(skipped)
      for _, n in ipairs(names) do
        files[#files + 1] = a:gsub("/+$", "") .. "/" .. n
        in_dir[files[#files]] = true
      end
    else
      files[#files + 1] = a
    end
  end
  return files, from_dir, in_dir, skipped
end

local function g(v) return v == nil and "n/a" or string.format("%.6g", v) end
local function signed(v) return v == nil and "n/a" or string.format("%+.6g", v) end
local function pct(v)
  if v == nil then return "n/a" end
  if v == math.huge or v == -math.huge then return v > 0 and "+inf%" or "-inf%" end
  return string.format("%+.1f%%", v * 100)
end
-- A MAD on the log scale is a relative spread: ln(x / median), shown as %.
local function mad(r) return r.scale == "log" and string.format("%.3g%%", r.mad * 100) or g(r.mad) end
local function zs(z) return (z == math.huge or z == -math.huge) and (z > 0 and "+inf" or "-inf") or string.format("%+.2f", z) end

local function column(rows, f, min)
  local w = min or 0
  for _, r in ipairs(rows) do w = math.max(w, text.width(f(r))) end
  return w
end

-- A header of fields, then a line per row: numbers to 10 digits (an
-- infinite z as inf), text made safe as CSV (text.csv).
local function csv(fields, rows)
  local out = {table.concat(fields, ",")}
  for _, r in ipairs(rows) do
    local l = {}
    for i, f in ipairs(fields) do
      local v = r[f]
      l[i] = v == nil and "" or type(v) == "number" and string.format("%.10g", v) or text.csv(v)
    end
    out[#out + 1] = table.concat(l, ",")
  end
  return table.concat(out, "\n") .. "\n"
end

-- ---- the fleet -------------------------------------------------------------

-- Where sets claim one host: a line each, naming the files.
local function duplicates(res, say)
  for _, d in ipairs(res.duplicates) do
    local t = {}
    for i, c in ipairs(d.claims) do t[i] = c.file .. ":" .. c.line end
    say("host %s is claimed by %d sets, their values merged (the median): %s", d.host, #d.claims, table.concat(t, ", "))
  end
end

-- Lines for a terminal: every byte of a results file made inert.
local function lines(out)
  for i, l in ipairs(out) do out[i] = text.inert(l) end
  return table.concat(out, "\n") .. "\n"
end

local function fleet_text(res, diffs, nfiles, o)
  local out = {}
  local function say(...) out[#out + 1] = string.format(...) end
  say("pmcsh compare: %d hosts (%s) in %d files, %d metrics; a node is flagged past |z| > %g and beyond " ..
    "%g%% of the fleet median (on ratios a factor of %g either way)", #res.hosts, table.concat(res.hosts, ", "),
    nfiles, res.metrics, res.z, res.band * 100, 1 + res.band)
  duplicates(res, say)
  if #res.hosts < 3 then say("  (fewer than 3 hosts: no median to judge a node against)") end
  local rows, nflagged = res.rows, 0
  for _, r in ipairs(rows) do if r.flagged then nflagged = nflagged + 1 end end
  local shown = o.rows > 0 and math.min(#rows, math.max(o.rows, nflagged)) or #rows
  if #rows > 0 then
    local list = {table.unpack(rows, 1, shown)}
    local wh = column(list, function(r) return text.inert(r.host) end, 4)
    local wm = column(list, function(r) return text.inert(r.metric) end, 6)
    say("%s  %s %12s %12s %10s %8s %8s", text.pad("host", wh), text.pad("metric", wm), "value", "median", "MAD", "z", "off")
    for _, r in ipairs(list) do
      say("%s  %s %12s %12s %10s %8s %8s%s", text.pad(text.inert(r.host), wh), text.pad(text.inert(r.metric), wm),
        g(r.value), g(r.median), mad(r), zs(r.z), pct(r.off),
        r.flagged and ("  FLAGGED" .. (r.worse == true and " (worse)" or r.worse == false and " (better)" or "")) or "")
    end
    if shown < #rows then say("... %d more rows (--rows 0 shows all)", #rows - shown) end
  end
  if res.equal > 0 then say("%d metrics are the same on every host", res.equal) end
  if res.few > 0 then say("%d metrics are on fewer than 3 hosts: not judged", res.few) end
  if #o.disturbances > 0 then
    local t = {}
    for i, n in ipairs(o.disturbances) do t[i] = text.inert(n) end
    say("left out: the counts of %s (what disturbs a window, not the machine's work)", table.concat(t, ", "))
  end
  if #res.flagged == 0 then
    say("flagged: none")
  else
    local t = {}
    for _, h in ipairs(res.flagged) do t[#t + 1] = string.format("%s (%d metrics)", text.inert(h), res.flag_counts[h]) end
    say("flagged: %s", table.concat(t, ", "))
    local by = {}
    for _, d in ipairs(diffs) do by[d.host] = by[d.host] or {}; table.insert(by[d.host], d) end
    for _, h in ipairs(res.flagged) do
      if not by[h] then
        say("fingerprint of %s: the same as the rest's, but for its name", text.inert(h))
      else
        say("fingerprint of %s differs from the rest's in:", text.inert(h))
        for _, d in ipairs(by[h]) do
          say("  %-20s %s (the rest: %s, %d of %d)", text.inert(d.field), text.inert(d.value), text.inert(d.others),
            d.agree, d.of)
        end
      end
    end
  end
  return lines(out)
end

local FLEET_FIELDS = {"host", "metric", "unit", "value", "median", "mad", "scale", "z", "off", "flagged", "worse"}

local function fleet_csv(res)
  return csv(FLEET_FIELDS, res.rows)
end

local function fleet_json(res, diffs, hosts, disturbances)
  local rows = {}
  for i, r in ipairs(res.rows) do
    rows[i] = {host = r.host, metric = r.metric, unit = r.unit, value = r.value, median = r.median, mad = r.mad,
      scale = r.scale, z = r.z, off = r.off, flagged = r.flagged, worse = r.worse}
  end
  local fps = {}
  for _, h in ipairs(hosts) do fps[h.host] = h.fingerprint end
  return json.encode({mode = "fleet", z = res.z, band = res.band, hosts = res.hosts, flagged = res.flagged,
    rows = rows, differences = diffs, fingerprints = fps, equal = res.equal, few = res.few,
    duplicates = res.duplicates, left_out = {disturbances = disturbances}}) .. "\n"
end

-- One point per node per metric, as the node's value over the fleet's
-- median, the band drawn.
local function fleet_plot(res, file)
  local names, idx = {}, {}
  for _, r in ipairs(res.rows) do
    if not idx[r.metric] then names[#names + 1] = r.metric; idx[r.metric] = #names end
  end
  local by, order = {}, {}
  for _, r in ipairs(res.rows) do
    if r.median ~= 0 then
      if not by[r.host] then by[r.host] = {}; order[#order + 1] = r.host end
      table.insert(by[r.host], {x = idx[r.metric], y = r.value / r.median, flagged = r.flagged})
    end
  end
  local series = {}
  for _, h in ipairs(order) do series[#series + 1] = {title = h, points = by[h]} end
  return plot.fleet(file, {metrics = names, series = series, band = res.band,
    title = string.format("%d hosts: each node's value over the fleet median; flagged past |z| > %g and the band",
      #res.hosts, res.z)})
end

-- ---- A/B -------------------------------------------------------------------

-- How a side's runs read: "host H, recipe R, N runs".
local function who(sets)
  local hs, rs, seen = {}, {}, {}
  for _, s in ipairs(sets) do
    if not seen["h" .. s.host] then seen["h" .. s.host] = true; hs[#hs + 1] = text.inert(s.host) end
    if not seen["r" .. s.recipe] then seen["r" .. s.recipe] = true; rs[#rs + 1] = text.inert(s.recipe) end
  end
  return string.format("host %s, %s, %d run%s", table.concat(hs, " "), table.concat(rs, " "), #sets,
    #sets == 1 and "" or "s")
end

local function ab_text(rows, info, diffs, a, b, o)
  local out = {}
  local function say(...) out[#out + 1] = string.format(...) end
  say("pmcsh compare: A = %s (%s), B = %s (%s)", text.inert(a), who(o.a_sets), text.inert(b), who(o.b_sets))
  say("B - A: the means of each side's runs (a run's value is its headline), with Welch's interval over the runs " ..
    "(run-to-run noise)%s", info.intervals == 0 and "" or info.intervals == 1
    and string.format(" at %g%%", info.level * 100) or string.format(", %g%% for the %d intervals together " ..
    "(each at %.4g%%, Bonferroni)", info.level * 100, info.intervals, info.each * 100))
  if #rows > 0 then
    local wm = column(rows, function(r) return text.inert(r.metric) end, 6)
    say("%s %12s %12s %12s %8s %5s  %s", text.pad("metric", wm), "A", "B", "B - A", "", "runs", "interval")
    local shown = o.rows > 0 and math.min(#rows, o.rows) or #rows
    for i = 1, shown do
      local r = rows[i]
      local iv = r.lo and string.format("[%s, %s]", signed(r.lo), signed(r.hi)) or "no interval: " .. r.why
      local verdict = r.significant == nil and ""
        or r.significant and (r.diff > 0 and "B higher" or "B lower") or "no significant difference"
      local l = string.format("%s %12s %12s %12s %8s %5s  %-27s %s", text.pad(text.inert(r.metric), wm), g(r.a),
        g(r.b), signed(r.diff), pct(r.rel), r.runs_a .. "/" .. r.runs_b, iv, verdict)
      out[#out + 1] = (l:gsub("%s+$", ""))
    end
    if shown < #rows then say("... %d more rows (--rows 0 shows all)", #rows - shown) end
  else
    say("no metric is in both")
  end
  local nsig, nsame, nnone = 0, 0, 0
  for _, r in ipairs(rows) do
    if r.significant == true then nsig = nsig + 1 elseif r.significant == false then nsame = nsame + 1
    else nnone = nnone + 1 end
  end
  say("%d metrics differ significantly, %d show no significant difference, %d have no interval", nsig, nsame, nnone)
  if nnone > 0 then
    say("an interval needs 2 runs a side or more: append runs to a file (pmcsh latency --json >> a.jsonl) " ..
      "or give --ab two folders of runs")
  end
  -- the noise the intervals rest on, beside what one run's repetitions show
  local between, within = {}, {}
  for _, r in ipairs(rows) do
    if r.sd_runs and r.sd_reps and r.a ~= 0 then
      between[#between + 1], within[#within + 1] = r.sd_runs / math.abs(r.a), r.sd_reps / math.abs(r.a)
    end
  end
  if #between > 0 then
    say("noise: a run's value varies by %.2g%% between runs, a repetition by %.2g%% inside a run (SD over the " ..
      "mean, median of %d metrics)", 100 * statistics.median(between), 100 * statistics.median(within), #between)
  end
  if #info.disturbances > 0 or info.zero > 0 then
    local t = {}
    for i, n in ipairs(info.disturbances) do t[i] = text.inert(n) end
    say("left out:%s%s", #t > 0 and string.format(" the counts of %s (what disturbs a window, not the " ..
      "machine's work)%s", table.concat(t, ", "), info.zero > 0 and ";" or "") or "",
      info.zero > 0 and string.format(" %d metrics zero in every run", info.zero) or "")
  end
  for _, what in ipairs({"settings", "fingerprint"}) do
    if #diffs[what] == 0 then
      say("%s: the same", what)
    else
      say("%s: A and B differ in", what)
      for _, d in ipairs(diffs[what]) do
        say("  %-20s %s (A) vs %s (B)", text.inert(d.field), text.inert(d.a), text.inert(d.b))
      end
    end
  end
  return lines(out)
end

local AB_FIELDS = {"metric", "unit", "a", "b", "diff", "rel", "lo", "hi", "runs_a", "runs_b", "significant", "why",
  "sd_runs", "sd_reps"}

local function ab_csv(rows)
  return csv(AB_FIELDS, rows)
end

local function ab_plot(rows, file, level)
  local names, pts = {}, {}
  for _, r in ipairs(rows) do
    if r.a and r.a ~= 0 and r.lo then
      names[#names + 1] = r.metric
      pts[#pts + 1] = {x = #names, y = r.b / r.a, lo = 1 + r.lo / r.a, hi = 1 + r.hi / r.a, flagged = r.significant}
    end
  end
  return plot.fleet(file, {metrics = names, series = {{title = "B / A", points = pts}},
    ylabel = "B / A (means of the runs)",
    title = string.format("B over A per metric, with the %g%% interval; marked: significant", level * 100)})
end

-- --baseline FILE: never over an input, never where a later compare of
-- the folder would read it (a usage error).
local function check_baseline(baseline, args, files)
  local bdir = sys.realpath((baseline:match("^(.*)/[^/]*$") or "."):gsub("^$", "/"))
  local bfile = sys.realpath(baseline)
  for _, a in ipairs(args) do
    local real = sys.realpath(a)
    if real and (real == bfile or real == bdir and (sys.stat(a) or {}).type == "dir") then
      usage("--baseline %s %s: write it outside the results", text.inert(baseline),
        real == bfile and "is one of the results compared" or "lies in a folder of results compared, " ..
        "where every later compare would read it as a host's")
    end
  end
  for _, f in ipairs(files) do
    if bfile and sys.realpath(f) == bfile then
      usage("--baseline %s is one of the results compared: write it outside the results", text.inert(baseline))
    end
  end
end

-- Every file's sets: a file named that cannot be read is an error; one of
-- a folder is left out, saying why, and the others compared.  Returns the
-- list of each file's sets and the sets by file, or nil, message.
local function read_all(files, in_dir)
  local per_file, sets_of, left = {}, {}, {}
  for _, f in ipairs(files) do
    local sets, err = compare.read(f)
    if sets then per_file[#per_file + 1] = sets
    elseif in_dir[f] then left[#left + 1] = "pmcsh compare: left out " .. err
    else return nil, text.inert(err) end
    sets_of[f] = sets
  end
  if #left > 0 then io.stderr:write(lines(left)) end
  if #per_file == 0 then return nil, string.format("no results in %d files (all left out)", #files) end
  return per_file, sets_of
end

-- The A/B: each side the runs of the files its argument names.
local function run_ab(opts, args, sets_of)
  local sides = {}
  for i = 1, 2 do
    sides[i] = {}
    for _, f in ipairs((files_of({args[i]}))) do
      local sets = sets_of[f] or {}
      table.move(sets, 1, #sets, #sides[i] + 1, sides[i])
    end
    if #sides[i] == 0 then usage("%s: no results in it", text.inert(args[i])) end
  end
  local rows, info = compare.ab(sides[1], sides[2], {filter = compare.only(opts.only), level = opts.level})
  local diffs = compare.ab_differences(sides[1], sides[2])
  if opts.csv then io.write(ab_csv(rows))
  elseif opts.json then
    io.write(json.encode({mode = "ab", a = args[1], b = args[2], runs_a = #sides[1], runs_b = #sides[2],
      level = info.level, each = info.each, rows = rows, differences = diffs,
      left_out = {disturbances = info.disturbances, zero = info.zero}}), "\n")
  else
    io.write(ab_text(rows, info, diffs, args[1], args[2], {rows = opts.rows, a_sets = sides[1],
      b_sets = sides[2]}))
  end
  if opts.plot then
    local ok, perr = ab_plot(rows, opts.plot, opts.level)
    if not ok then return nil, perr end
  end
  return 0
end

-- The baseline written from the fleet, and said unless --json or --csv.
local function write_baseline(opts, hosts, res)
  local b = compare.baseline(hosts, res)
  local ok, err = sys.replace(opts.baseline, function(f) return f:write(json.encode(b), "\n") end)
  if not ok then return nil, "cannot write the baseline: " .. text.inert(tostring(err)) end
  if not opts.json and not opts.csv then
    local n = 0
    for _ in pairs(b.metrics) do n = n + 1 end
    io.write(string.format("baseline: %d metrics of %d healthy hosts written to %s%s\n", n, #b.hosts,
      text.inert(opts.baseline), #b.excluded > 0 and (" (left out: " .. text.inert(table.concat(b.excluded, ", ")) .. ")") or ""))
  end
  return true
end

-- The fleet: every file's sets merged by host.
local function run_fleet(opts, per_file)
  local sets = {}
  for _, s in ipairs(per_file) do table.move(s, 1, #s, #sets + 1, sets) end
  local disturbances = {}
  local hosts = compare.hosts(sets, compare.only(opts.only), disturbances)
  local res = compare.fleet(hosts, {z = opts.z, band = opts.band})
  local diffs = compare.differences(hosts, res.flagged)
  if res.metrics == 0 then
    return nil, string.format("no metrics in %d files (compare reads the metric records of pmcsh recipes' " ..
      "--json output and results files, and survey results files)", #per_file)
  end
  if opts.csv then
    io.write(fleet_csv(res))
    local warn = {}
    duplicates(res, function(...) warn[#warn + 1] = "pmcsh compare: " .. string.format(...) end)
    if #warn > 0 then io.stderr:write(lines(warn)) end
  elseif opts.json then io.write(fleet_json(res, diffs, hosts, disturbances))
  else io.write(fleet_text(res, diffs, #per_file, {rows = opts.rows, disturbances = disturbances})) end
  io.flush()
  if opts.baseline then
    local ok, err = write_baseline(opts, hosts, res)
    if not ok then return nil, err end
  end
  if opts.plot then
    local ok, perr = fleet_plot(res, opts.plot)
    if not ok then return nil, perr end
  end
  return 0
end

return {
  description = "compare results: each node against its fleet, or two files as an A/B",
  usage = "FILE|DIR...",
  help = [[
Reads the metric records of pmcsh recipes' --json output and results
files (every recipe writes one shape: name, unit, value, samples, the
settings it ran under) and survey results files, each set named by the
fingerprint of the machine that measured it, and merges them by host.
Where a set holds one metric under several settings (bench-stream at 1
and 2 threads) the setting joins its name ("triad MB/s, threads 2"); a
setting the whole set shares is the set's, and an A/B says where the
sides' differ.

With three or more hosts, or folders, per metric the fleet's median, each
node's deviation d from it, the MAD (the median |d|) and the robust z-score
0.6745 d / MAD: a node is flagged past |z| > --z and beyond --band of the
median.  For a metric positive on every host (rates, times, counts) d is
ln(x / median), so a tenth of the median is as far off as ten times it,
the band is a factor of 1 + band either way (--band 0.5: a third below
the median is as far as half above it), and the MAD shows as a
percentage; for one of either sign d is x - median.  The
table is sorted worst first; the fingerprint fields where a flagged node
differs from the rest are listed (the likely cause, often).

With exactly two files it is an A/B, each file a side holding one run or
several (a recipe's --json appended: pmcsh latency --json >> a.jsonl);
--ab takes two folders (or files) as the sides, a folder's files its
runs.  Per metric, B - A between the means of the runs' values (each
run's headline: best, trimmed mean), with Welch's interval over the runs,
as perf stat -r and hyperfine take runs: what varies from run to run on a
shared machine (page placement, neighbours, frequency) is in it, where
the repetitions inside one run would miss it.  The intervals hold together
at --level (Bonferroni), so an A/A of many metrics reads "no significant
difference" on every one.  A side of one run gives no interval ("no
interval: one run each"), never a verdict.  The counts of what disturbs a
window (context switches, migrations, known by their encoding) and
metrics zero in every run are left out, as the survey's table leaves
them.

Files come from other nodes and are checked line by line: a folder's file
that cannot be read is left out, with a line on stderr saying why; a file
named is an error.  A host several sets claim (two tasks on one node, or a
file naming another's host) is judged on the median of their values and
named, with the files that claim it.

  pmcsh compare results/                     the fleet, worst first
  pmcsh compare results/ --baseline b.json   ... and a baseline for pmcsh health
  pmcsh compare a.jsonl b.jsonl              A/B, the runs each file holds
  pmcsh compare --ab a/ b/                   A/B, a folder of runs per side
  pmcsh compare --only MB/s results/         the metrics whose name holds MB/s]],
  options = {
    {name = "z", type = "number", default = compare.Z, positive = true, help = "flag past this robust |z|"},
    {name = "band", type = "number", default = compare.BAND, min = 0,
     help = "and beyond this fraction of the fleet median (0.1: 10%; a metric positive on every host: a factor " ..
       "of 1 + band either way)"},
    {name = "level", type = "number", default = compare.LEVEL, min = 0.5, max = 0.999,
     help = "A/B: the confidence of all the intervals together"},
    {name = "only", type = "list", help = "the metrics whose name holds one of these words"},
    {name = "fleet", type = "flag", help = "two files as a fleet of two hosts, not an A/B"},
    {name = "ab", type = "flag", help = "A/B of the two files or folders named, each a side's runs"},
    {name = "rows", type = "int", default = 40, min = 0, help = "rows of the table, flagged ones always (0: all)"},
    {name = "baseline", type = "string", help = "write a baseline for pmcsh health (the fleet's, flagged nodes left out)"},
    {name = "csv", type = "flag", help = "CSV: a line per node and metric (A/B: per metric)"},
    {name = "json", type = "flag", help = "one JSON object: rows, flagged nodes, their fingerprint differences"},
    {name = "plot", type = "plot", help = "each node's value over the fleet median per metric, the band drawn (.png/.svg)"},
  },
  run = function(opts, args)
    if opts.csv and opts.json then usage("--csv and --json exclude each other") end
    if #args == 0 then usage("name the results files or folders to compare (pmcsh compare --help)") end
    local files, from_dir, in_dir, skipped = files_of(args)
    if not files then return nil, from_dir end
    if #skipped > 0 then io.stderr:write(lines(skipped)) end
    if #files == 0 then usage("no .json or .jsonl files in %s", text.inert(table.concat(args, " "))) end
    if opts.baseline then check_baseline(opts.baseline, args, files) end
    if opts.ab then
      if #args ~= 2 then usage("--ab compares two sides: name two files or folders, not %d", #args) end
      if opts.fleet then usage("--ab and --fleet exclude each other") end
    end
    local per_file, sets_of = read_all(files, in_dir)
    if not per_file then return nil, sets_of end
    if opts.ab or #files == 2 and not from_dir and not opts.fleet then
      if opts.baseline then usage("--baseline needs a fleet: give a folder, three files or more, or --fleet") end
      return run_ab(opts, args, sets_of)
    end
    return run_fleet(opts, per_file)
  end,
}
