-- pmcsh stat: perf-stat-like counting of a command, with mean and relative
-- standard error over repeated runs.
local function mean_rse(xs)
  local n, s = #xs, 0
  for _, x in ipairs(xs) do s = s + x end
  local m = s / n
  if n < 2 then return m, 0 end
  local v = 0
  for _, x in ipairs(xs) do v = v + (x - m) ^ 2 end
  local se = math.sqrt(v / (n - 1) / n)      -- standard error of the mean
  return m, m ~= 0 and 100 * se / math.abs(m) or 0
end

-- perf shows clocks in msec
local function is_clock(name)
  local base = name:gsub(":[ukhGH]+$", "")
  return base == "task-clock" or base == "cpu-clock"
end

local function shown(name, v, unit)
  if is_clock(name) then return v / 1e6, "msec" end
  return v, unit or ""
end

-- perf stat's number format: clocks "%.2f" msec; counts "%.0f" (the mean of
-- -r runs rounded), "%.2f" for events with a fractional sysfs .scale.
local function fmtnum(v, unit, scale)
  if unit == "msec" or (scale and scale ~= math.floor(scale)) then return string.format("%.2f", v) end
  return string.format("%.0f", v)
end

-- perf's shadow metric of an event: a clock's CPUs utilized (over the
-- elapsed time); any other event's rate over the clock's time, in /sec,
-- K/sec, M/sec or G/sec (decimal), when a clock is counted too.
local function metric_of(name, mean, clock_ns, elapsed_s)
  if is_clock(name) then
    if elapsed_s > 0 then return mean / (elapsed_s * 1e9), "CPUs utilized" end
    return nil
  end
  if not clock_ns or clock_ns <= 0 then return nil end
  local rate, unit = 1e9 * mean / clock_ns, "/sec"
  if rate > 1e9 then rate, unit = rate / 1e9, "G/sec"
  elseif rate > 1e6 then rate, unit = rate / 1e6, "M/sec"
  elseif rate > 1e3 then rate, unit = rate / 1e3, "K/sec" end
  return rate, unit
end

return {
  description = "count events of a command, like perf stat (mean and relative stderr over -r runs)",
  usage = "-- cmd [args...]",
  help = [[
  pmcsh stat -e task-clock,page-faults:u,page-faults:k -- dd if=/dev/zero of=/dev/null bs=1M count=100
  pmcsh stat -e task-clock -r 10 -x , -- ls       CSV in perf stat's field order
  pmcsh stat -e page-faults --json -- ls          JSON lines with perf stat's keys
The command is counted from its exec, children included; the output goes to
stderr, like perf stat's (the command keeps stdout).]],
  options = {
    {name = "events", short = "e", type = "list", default = {"task-clock", "context-switches", "cpu-migrations",
      "page-faults", "cycles", "instructions", "branches", "branch-misses"},
      help = "comma-separated events (perf stat 6.1's default list; one the machine cannot count is <not supported>)"},
    {name = "repeat", short = "r", type = "int", default = 1, min = 1, help = "runs to average"},
    {name = "field-separator", short = "x", type = "string", help = "CSV output with this separator"},
    {name = "json", type = "flag", help = "JSON lines (perf stat's keys)"},
    {name = "output", short = "o", type = "string", help = "write the counts to this file instead of stderr"},
    {name = "append", type = "flag", help = "with -o: append to the file"},
  },
  run = function(opts, args)
    local recipe = require("pmcsh.recipe")
    local pmc = require("pmcsh.pmc")
    if #args == 0 then error(recipe.usage("stat: no command given (pmcsh stat -e EV -- cmd args)"), 0) end
    local sep = opts["field-separator"] or opts.field_separator
    if sep == "" then error(recipe.usage("stat: -x needs a separator (such as -x ,)"), 0) end
    if sep and opts.json then error(recipe.usage("stat: -x and --json exclude each other"), 0) end
    -- as perf stat: an event this machine cannot count is a <not supported>
    -- row and the run goes on with the others (a wrong name stays an error)
    if opts.append and not opts.output then error(recipe.usage("stat: --append needs -o FILE"), 0) end
    local out = io.stderr
    if opts.output then   -- opened before the run, as perf does: a bad path costs no run
      local f, msg = io.open(opts.output, opts.append and "a" or "w")
      if not f then io.stderr:write("pmcsh stat: ", msg, "\n"); return 1 end
      out = f
      f:write(string.format("# started on %s\n\n", os.date("%a %b %e %H:%M:%S %Y")))
    end
    local all, events, unsupported = opts.events, {}, {}
    for _, name in ipairs(all) do
      local g, msg, errno = pmc.group{name}
      if g then g:close(); events[#events + 1] = name
      elseif pmc.info(name) then unsupported[name] = msg
      else io.stderr:write("pmcsh stat: ", msg, "\n"); return errno == 2 and 2 or 1 end
    end
    if #events == 0 then events = {"task-clock"} end  -- counted for the run, not shown
    local vals, runs, ens, elapsed, user, sys = {}, {}, {}, {}, {}, {}
    for i = 1, #events do vals[i], runs[i], ens[i] = {}, 0, 0 end
    local status, stopped = 0, nil
    for rep = 1, opts["repeat"] do
      local r, info, errno = pmc.run{events = events, cmd = args}
      if not r then
        io.stderr:write("pmcsh stat: ", info, "\n")
        return errno == 2 and 2 or 1
      end
      for i = 1, #events do
        vals[i][rep] = r[i].value
        runs[i] = runs[i] + r[i].running
        ens[i] = ens[i] + r[i].enabled
      end
      elapsed[rep], user[rep], sys[rep] = info.elapsed, info.user or 0, info.sys or 0
      status = info.status or status
      if info.stopped_by then   -- Ctrl-C or SIGTERM: print what was counted, exit 128 + signal
        stopped, status = info.stopped_by, 128 + info.stopped_by
        break
      end
    end
    local n = #elapsed
    local el, el_rse = mean_rse(elapsed)
    local cjson = opts.json and require("cjson")
    if not sep and not cjson then
      out:write(string.format("\n Performance counter stats for '%s'%s:\n\n", table.concat(args, " "),
        n > 1 and string.format(" (%d runs)", n) or ""))
    end
    local clock_ns
    for i, name in ipairs(events) do
      if is_clock(name) and not clock_ns then clock_ns = mean_rse(vals[i]) end
    end
    local at = {}
    for i, name in ipairs(events) do at[name] = i end
    for _, name in ipairs(all) do
      local i = at[name]
      if not i then
        if cjson then
          out:write(cjson.encode{["counter-value"] = "<not supported>", unit = "", event = name,
            ["event-runtime"] = 0, ["pcnt-running"] = 100.0}, "\n")
        elseif sep then
          local f = {"<not supported>", "", name}
          if n > 1 then f[#f + 1] = "" end
          f[#f + 1] = "0"; f[#f + 1] = "100.00"; f[#f + 1] = ""; f[#f + 1] = ""
          out:write(table.concat(f, sep), "\n")
        else
          out:write(string.format("%18s      %s", "<not supported>", name), "\n")
        end
        goto continue
      end
      local m, rse = mean_rse(vals[i])
      local v, unit = shown(name, m, nil)
      local info = pmc.info(name)
      if info and info.unit and unit == "" then unit = info.unit end
      local pct = ens[i] > 0 and 100 * runs[i] / ens[i] or 100
      local runtime = math.floor(runs[i] / n + 0.5)
      local metric, munit = metric_of(name, m, clock_ns, el)
      local num = fmtnum(v, unit, info and info.scale)
      if cjson then
        -- perf stat -j: counter-value a "%f" string, the others numbers
        local o = {["counter-value"] = string.format("%f", v), unit = unit, event = name,
                   ["event-runtime"] = runtime, ["pcnt-running"] = tonumber(string.format("%.2f", pct))}
        if n > 1 then o.variance = tonumber(string.format("%.2f", rse)) end
        if metric then o["metric-value"] = tonumber(string.format("%f", metric)); o["metric-unit"] = munit end
        out:write(cjson.encode(o), "\n")
      elseif sep then
        -- perf stat -x: value, unit, event, [variance with -r > 1,] run time,
        -- percent running, metric value, metric unit
        local f = {num, unit, name}
        if n > 1 then f[#f + 1] = string.format("%.2f%%", rse) end
        f[#f + 1] = tostring(runtime)
        f[#f + 1] = string.format("%.2f", pct)
        f[#f + 1] = metric and string.format("%.3f", metric) or ""
        f[#f + 1] = munit or ""
        out:write(table.concat(f, sep), "\n")
      else
        local line = string.format("%18s %-4s %-32s", num, unit, name)   -- perf: unit width 4
        if metric then line = line .. string.format(" # %8.3f %-20s", metric, munit) end
        if n > 1 then line = line .. string.format("  ( +- %5.2f%% )", rse) end
        if pct < 100 then line = line .. string.format(" (%.2f%%)", pct) end
        out:write((line:gsub("%s+$", "")), "\n")
      end
      ::continue::
    end
    if not sep and not cjson then
      out:write(string.format("\n%18.9f seconds time elapsed%s\n\n", el,
        n > 1 and string.format("  ( +- %5.2f%% )", el_rse) or ""))
      -- perf prints user/sys for a single run only
      if n == 1 then out:write(string.format("%18.9f seconds user\n%18.9f seconds sys\n\n", user[1], sys[1])) end
    end
    if out ~= io.stderr then out:close() end
    return status
  end,
}
