-- pmcsh list: the events of this machine's PMUs (libpfm4 and sysfs), or of
-- another CPU model with --pmu, with perf list's habits: one row per event
-- with its aliases, the umasks with -v, and the groups of events/.

-- libpfm4's perf PMU lists each generic event under every alias
-- (perf::CYCLES, perf::CPU-CYCLES, perf::PERF_COUNT_HW_CPU_CYCLES) with the
-- enum name as description: one row per enum, named as perf writes them
-- (cpu-cycles OR cycles), described from events/generic.lua.  The cache
-- parents (PERF_COUNT_HW_CACHE_L1D) only head their -LOADS/-MISSES rows.
local function collapse(list, descriptions)
  local out, by = {}, {}
  for _, e in ipairs(list) do
    local enum = e.description:match("^(PERF_COUNT_[%u_]+)$")
    local short = e.name:match("^perf::(.*)$")
    if e.pmu == "perf" and short and short:match("^PERF_COUNT_HW_CACHE_") then
      enum = nil   -- a cache parent: dropped below
    end
    if enum then
      local row = by[enum]
      if not row then
        row = {name = nil, aliases = {}, pmu = e.pmu, opens = e.opens,
               description = descriptions[enum] or enum, enum = enum, raw = {}}
        by[enum] = row
        out[#out + 1] = row
      end
      if not short:match("^PERF_COUNT_") then row.aliases[#row.aliases + 1] = short:lower() end
      row.raw[#row.raw + 1] = e.name .. " " .. e.description
    elseif e.pmu == "perf" and short then
      if not short:match("^PERF_COUNT_HW_CACHE_") then
        out[#out + 1] = {name = short:lower(), aliases = {short:lower()}, pmu = e.pmu, opens = e.opens,
                         description = e.description, raw = {e.name}}
      end
    else
      out[#out + 1] = {name = e.name, aliases = {e.name}, pmu = e.pmu, opens = e.opens, description = e.description,
                       raw = {}}
    end
  end
  for _, r in ipairs(out) do
    if #r.aliases == 0 then r.aliases = {r.enum} end
    -- perf's order: the longer, spelled-out name first (cpu-cycles OR cycles)
    table.sort(r.aliases, function(a, b) if #a ~= #b then return #a > #b end return a < b end)
    r.name = r.aliases[1]
    r.enum = nil
  end
  return out
end

-- The rows whose names, aliases, libpfm4 names or description contain
-- pattern (case-insensitive, plain).
local function matching(rows, pattern)
  if not pattern or pattern == "" then return rows end
  local p, out = pattern:lower(), {}
  for _, r in ipairs(rows) do
    local text = (table.concat(r.aliases, " ") .. " " .. table.concat(r.raw, " ") .. " " .. r.description):lower()
    if text:find(p, 1, true) then out[#out + 1] = r end
  end
  return out
end

-- pmcsh list --groups / --group NAME: the groups and pairs of events/.
local function groups(name)
  local survey = require("pmcsh.survey")
  local names, usable = survey.data_names(), {}
  for _, n in ipairs(names) do
    local t = survey.load_data(n)
    if t and (t.events or t.pairs) then usable[#usable + 1] = n end
  end
  if name then
    local t, path = survey.load_data(name)
    if not t or not (t.events or t.pairs) then
      io.stderr:write(string.format("pmcsh list: no group or pairs file '%s'; the choices: %s\n", name,
        table.concat(usable, ", ")))
      return 2
    end
    print(string.format("%s (%s%s): %s", t.name or name, t.pmu and ("PMU " .. t.pmu) or "any PMU",
      t.cpu and (", " .. t.cpu) or "", t.short or t.description or ""))
    if t.long then print("  " .. t.long:gsub("\n", "\n  ")) end
    if t.events then
      print("events:")
      for _, e in ipairs(t.events) do print("  " .. e) end
    end
    if t.metrics and #t.metrics > 0 then
      print("metrics:")
      for _, m in ipairs(t.metrics) do print(string.format("  %-36s from %s", m.name, table.concat(m.events or {}, ", "))) end
    end
    if t.pairs then
      print("pairs:")
      for _, p in ipairs(t.pairs) do print("  " .. table.concat(p, " + ")) end
    end
    print("from " .. path)
    return 0
  end
  print(string.format("%-16s %-18s %-6s %-7s %-5s %s", "name", "pmu", "events", "metrics", "pairs", "question"))
  for _, n in ipairs(usable) do
    local t = survey.load_data(n)
    print(string.format("%-16s %-18s %6s %7s %5s %s", n, t.pmu or "any", t.events and #t.events or "",
      t.metrics and #t.metrics or "", t.pairs and #t.pairs or "", t.short or t.description or t.cpu or ""))
  end
  print("(pmcsh list --group NAME shows one; pmcsh survey --group NAME, --pairs NAME and pmcsh stat -M NAME use them)")
  return 0
end

return {
  description = "list events (libpfm4 and sysfs PMUs), one row per event with its aliases; --groups for events/",
  usage = "[pattern]",
  help = [[
  pmcsh list fault              events whose name or description contains "fault"
  pmcsh list -v INST            with each event's umasks
  pmcsh list --json             one JSON object per line
  pmcsh list --pmu skl INST     Skylake's events (libpfm4's forced PMU), for planning
  pmcsh list --groups           the groups and pairs files in events/; --group NAME shows one
Marks: '+' opens here, '-' does not (no such counter, or not permitted).
Aliases share a row (cpu-cycles OR cycles).  Descriptions are cut to the
line on a terminal and given in full into a pipe or file, as perf list does.]],
  options = {
    {name = "json", type = "flag", help = "JSON lines: {name, aliases, pmu, description, opens[, umasks]}"},
    {name = "pmu", type = "string", help = "another CPU model's PMU (libpfm4 name, e.g. skl, amd64_fam19h_zen3)"},
    {name = "umasks", short = "v", type = "flag", help = "each event's umasks (unit masks) with their descriptions"},
    {name = "groups", type = "flag", help = "the groups and pairs files of events/"},
    {name = "group", type = "string", help = "one group or pairs file of events/: its events and metrics"},
  },
  run = function(opts, args)
    local pmc = require("pmcsh.pmc")
    if opts.groups or opts.group then return groups(opts.group) end
    if #args > 1 then error(require("pmcsh.recipe").usage("list: at most one pattern"), 0) end
    local raw, msg = pmc.list(nil, opts.pmu and {pmu = opts.pmu} or nil)
    if not raw then
      return nil, msg
    end
    local generic = require("pmcsh.survey").load_data("generic")
    local list = matching(collapse(raw, generic and generic.descriptions or {}), args[1])
    for _, e in ipairs(list) do e.raw = nil end
    if opts.umasks then
      for _, e in ipairs(list) do
        local info = pmc.info(e.name, opts.pmu and {pmu = opts.pmu} or nil)
        if info and #info.umasks > 0 then
          e.umasks = {}
          for _, u in ipairs(info.umasks) do e.umasks[#e.umasks + 1] = {name = u.name, description = u.description} end
        end
      end
    end
    if opts.json then
      local cjson = require("cjson")
      io.write(require("pmcsh.results").head("list"), "\n")
      for _, e in ipairs(list) do io.write(cjson.encode(e), "\n") end
      return 0
    end
    local ok, sys = pcall(require, "pmcsh._sys")
    local tty = ok and sys and sys.isatty and sys.isatty("stdout")
    local per, opens, pmus = {}, {}, {}
    for _, e in ipairs(list) do
      if not per[e.pmu] then pmus[#pmus + 1] = e.pmu end
      per[e.pmu] = (per[e.pmu] or 0) + 1
      opens[e.pmu] = (opens[e.pmu] or 0) + (e.opens and 1 or 0)
    end
    local pmu
    for _, e in ipairs(list) do
      if e.pmu ~= pmu then
        pmu = e.pmu
        io.write(string.format("%s: %d event%s, %d open%s here\n", pmu, per[pmu], per[pmu] == 1 and "" or "s",
          opens[pmu], opens[pmu] == 1 and "s" or ""))
      end
      local desc = e.description:gsub("%s+", " ")
      local name = table.concat(e.aliases, " OR ")
      if tty and #desc > 70 then desc = desc:sub(1, 67) .. "..." end
      io.write(string.format("  %s %-44s %s\n", e.opens and "+" or "-", name, desc))
      for _, u in ipairs(e.umasks or {}) do
        local ud = (u.description or ""):gsub("%s+", " ")
        if tty and #ud > 66 then ud = ud:sub(1, 63) .. "..." end
        io.write(string.format("      :%-41s %s\n", u.name, ud))
      end
    end
    if #list == 0 then
      io.stderr:write(string.format("pmcsh list: no event matches '%s'\n", args[1] or ""))
      return 1
    end
    if #pmus > 1 then
      local total, open = 0, 0
      for _, p in ipairs(pmus) do total, open = total + per[p], open + opens[p] end
      io.write(string.format("%d events in %d PMUs, %d open here\n", total, #pmus, open))
    end
    return 0
  end,
}
