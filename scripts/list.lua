-- pmcsh list: the events of this machine's PMUs (libpfm4 and sysfs), or of
-- another CPU model with --pmu, with perf list's habits: one row per event
-- with its aliases, the umasks with -v, and the groups of events/.
local cjson = require("cjson")
local events = require("pmcsh.events")
local options = require("pmcsh.options")
local pmc = require("pmcsh.pmc")
local results = require("pmcsh.results")
local sys = require("pmcsh.sys")

-- libpfm4's perf PMU lists each generic event under every alias
-- (perf::CYCLES, perf::CPU-CYCLES, perf::PERF_COUNT_HW_CPU_CYCLES) with the
-- enum name as description: one row per enum, named as perf writes them
-- (cpu-cycles OR cycles), described from events/generic.lua.  The cache
-- parents (PERF_COUNT_HW_CACHE_L1D) only head their -LOADS/-MISSES rows.
local function collapse(list, descriptions)
  local out, by = {}, {}
  local spelled = {}   -- libpfm4's upper case to perf's spelling (L1-dcache-loads)
  for _, n in ipairs(pmc.generic_names()) do spelled[n:lower()] = n end
  local function perf_name(s) return spelled[s:lower()] or s:lower() end
  for _, e in ipairs(list) do
    local enum = e.description:match("^(PERF_COUNT_[%u_]+)$")
    -- perf::CYCLES from libpfm4; alignment-faults, a kernel name it lacks, as it is
    local short = e.name:match("^perf::(.*)$") or (e.pmu == "perf" and e.name or nil)
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
      if not short:match("^PERF_COUNT_") then row.aliases[#row.aliases + 1] = perf_name(short) end
      row.raw[#row.raw + 1] = e.name .. " " .. e.description
    elseif e.pmu == "perf" and short then
      if not short:match("^PERF_COUNT_HW_CACHE_") then
        out[#out + 1] = {name = perf_name(short), aliases = {perf_name(short)}, pmu = e.pmu, opens = e.opens,
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
  local names, usable = events.names(), {}
  for _, n in ipairs(names) do
    local t = events.load(n)
    if t and (t.events or t.pairs) then usable[#usable + 1] = n end
  end
  if name then
    local t, path = events.load(name)
    if not t or not (t.events or t.pairs) then
      io.stderr:write(string.format("pmcsh list: no group or pairs file '%s'; the choices: %s\n", name,
        table.concat(usable, ", ")))
      return 2
    end
    local models = events.models(t)
    print(string.format("%s (%s%s): %s", t.name or name, #models > 0 and ("PMU " .. table.concat(models, ", ")) or "any PMU",
      t.cpu and (", " .. t.cpu) or "", t.short or t.description or ""))
    if t.long then print("  " .. t.long:gsub("\n", "\n  ")) end
    if t.events then
      print("events:")
      for _, e in ipairs(t.events) do
        local other = {}
        for _, m in ipairs(models) do
          local r = t.rename and t.rename[m] and t.rename[m][e]
          if r then other[#other + 1] = m .. ": " .. r end
        end
        print("  " .. e .. (#other > 0 and ("  (" .. table.concat(other, "; ") .. ")") or ""))
      end
    end
    local counts, why = events.counts_here(t, path)
    print("here: " .. (counts and "counts" or why))
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
  print(string.format("%-16s %-24s %-6s %-7s %-5s %-4s %s", "name", "models", "events", "metrics", "pairs", "here",
    "question"))
  local here = {}
  for _, n in ipairs(usable) do
    local t, path = events.load(n)
    local models = events.models(t)
    -- the models in short (skl,skx,clx / amd64_fam19h_zen3,zen4 as zen3,zen4)
    local short = {}
    for i, m in ipairs(models) do short[i] = m:gsub("^amd64_fam%x+h_", "") end
    local counts = events.counts_here(t, path)
    if counts then here[#here + 1] = n end
    print(string.format("%-16s %-24s %6s %7s %5s %-4s %s", n, #short > 0 and table.concat(short, ",") or "any",
      t.events and #t.events or "", t.metrics and #t.metrics or "", t.pairs and #t.pairs or "", counts and "yes" or "no",
      t.short or t.description or t.cpu or ""))
  end
  print(string.format("count here (written for this machine, an event opens): %s (%d of %d)",
    #here > 0 and table.concat(here, ", ") or "none", #here, #usable))
  print("(pmcsh list --group NAME shows one and why it does not count here; pmcsh survey --group NAME, " ..
    "--pairs NAME and pmcsh stat -M NAME use them)")
  return 0
end

-- perf's tool events (duration_time, user_time, system_time): measured by
-- pmcsh stat itself, no counter; one row each under the "tool" PMU.
local function tool_rows(tools)
  local names, out = {}, {}
  for name in pairs(tools or {}) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    out[#out + 1] = {name = name, aliases = {name}, pmu = "tool", opens = true,
                     description = tools[name].description, raw = {}}
  end
  return out
end

-- The width to fit, as perf list fits it: COLUMNS, else the terminal's
-- (TIOCGWINSZ), else 80; nil into a pipe or a file, where nothing is cut
-- or wrapped.
local function columns()
  if not sys.isatty("stdout") then return nil end
  local c = math.tointeger(tonumber(os.getenv("COLUMNS") or ""))
  if c and c > 0 then return c end
  return sys.columns("stdout") or 80
end

-- The words of text in lines of at most width characters; a word longer
-- than the width is cut into pieces of it.
local function wrap(text, width)
  local lines, cur = {}, ""
  for word in text:gmatch("%S+") do
    while #word > width do
      if cur ~= "" then lines[#lines + 1] = cur; cur = "" end
      lines[#lines + 1] = word:sub(1, width)
      word = word:sub(width + 1)
    end
    if cur == "" then cur = word
    elseif #cur + 1 + #word <= width then cur = cur .. " " .. word
    else lines[#lines + 1] = cur; cur = word end
  end
  if cur ~= "" then lines[#lines + 1] = cur end
  return lines
end

-- One row: head (the mark and the names, or a umask) and its description
-- from column DESC_AT.  Into a pipe, one line whatever its length.  On a
-- terminal of cols columns, every line fits: the description beside the
-- head where both fit on the line, else below it, 6 columns further in and
-- wrapped to the width, as perf list wraps its descriptions.
local DESC_AT = 49
local function put(head, desc, cols)
  desc = desc:gsub("%s+", " ")
  if not cols then
    io.write((string.format("%-" .. (DESC_AT - 1) .. "s %s", head, desc):gsub("%s+$", "")), "\n")
    return
  end
  if #head < DESC_AT and DESC_AT + #desc <= cols then
    io.write((string.format("%-" .. (DESC_AT - 1) .. "s %s", head, desc):gsub("%s+$", "")), "\n")
    return
  end
  local indent = head:match("^%s*")
  for i, l in ipairs(wrap(head, cols - #indent - 2)) do io.write(indent, i == 1 and "" or "  ", l, "\n") end
  local at = math.min(#indent + 6, cols // 2)
  for _, l in ipairs(wrap(desc, cols - at)) do io.write(string.rep(" ", at), l, "\n") end
end

-- The PMU models closest to `name`: those whose name contains it, else
-- those within a small edit distance.
local function close_models(models, name)
  local out, best, near = {}, math.max(2, #name // 3), {}
  for _, m in ipairs(models) do
    if m.name:lower():find(name:lower(), 1, true) then out[#out + 1] = m.name end
    local d = pmc.distance(name, m.name)
    if d < best then best, near = d, {m.name} elseif d == best then near[#near + 1] = m.name end
  end
  return #out > 0 and out or near
end

-- --pmu NAME: a model libpfm4 knows, or a usage error naming the close ones.
local function check_model(name)
  local models, msg = pmc.models()
  if not models then return nil, msg end
  for _, m in ipairs(models) do if m.name == name then return true end end
  local near = close_models(models, name)
  options.usage_error("list: --pmu %s: libpfm4 has no PMU model named '%s'%s (pmcsh list --pmus names them)",
    name, name, #near > 0 and ("; did you mean " .. table.concat(near, ", ", 1, math.min(#near, 5)) .. "?") or "")
end

-- pmcsh list --pmus [PATTERN]: libpfm4's PMU models, those present here first.
local function models(pattern, json)
  local list, msg = pmc.models()
  if not list then return nil, msg end
  local p, shown = pattern and pattern:lower(), {}
  for _, present in ipairs({true, false}) do
    for _, m in ipairs(list) do
      if m.present == present and (not p or (m.name .. " " .. m.description):lower():find(p, 1, true)) then
        shown[#shown + 1] = m
      end
    end
  end
  if json then
    io.write(results.head("list"), "\n")
    for _, m in ipairs(shown) do io.write(cjson.encode(m), "\n") end
  else
    local cols, present = columns(), 0
    for _, m in ipairs(shown) do
      present = present + (m.present and 1 or 0)
      put(string.format("  %s %-28s %5d events", m.present and "+" or "-", m.name, m.events), m.description, cols)
    end
    if #shown > 0 then
      io.write(string.format("%d PMU models of libpfm4, %d present here ('+'); pmcsh list --pmu NAME lists one's events\n",
        #shown, present))
    end
  end
  if #shown == 0 then
    io.stderr:write(string.format("pmcsh list: no PMU model matches '%s'\n", pattern))
    return 1
  end
  return 0
end

-- The events matching pattern, each row with why it does not open here
-- and, with -v, its umasks; or nil, message.
local function gather(opts, pattern)
  local raw, msg = pmc.list(nil, opts.pmu and {pmu = opts.pmu} or nil)
  if not raw then
    return nil, msg
  end
  local generic = events.load("generic") or {}
  local all = collapse(raw, generic.descriptions or {})
  if not opts.pmu then   -- counted by pmcsh stat here, whatever the model
    for _, r in ipairs(tool_rows(generic.tools)) do all[#all + 1] = r end
  end
  local list = matching(all, pattern)
  for _, e in ipairs(list) do
    e.raw = nil
    -- why an event of this machine does not open: pmc.group's message,
    -- with its errno to tell the kinds apart (another model's never opens)
    if not e.opens and not opts.pmu then
      local _, why, errno = pmc.group({e.aliases[1]})
      e.why, e.errno = why or "does not open here", errno or 0
    end
  end
  if opts.umasks then
    for _, e in ipairs(list) do
      -- a tracepoint has no umask, and pmc.info would open it (tens of ms each)
      local info = e.pmu ~= "tool" and e.pmu ~= "tracepoint" and pmc.info(e.name, opts.pmu and {pmu = opts.pmu} or nil)
      if info and #info.umasks > 0 then
        e.umasks = {}
        for _, u in ipairs(info.umasks) do
          e.umasks[#e.umasks + 1] = {name = u.name, code = u.code, default = u.default, description = u.description}
        end
      end
    end
  end
  return list
end

-- A PMU's reasons, one line per kind (errno): how many, and the message
-- of the first event of that kind.
local function reasons(list, pmu, cols)
  local kinds, order = {}, {}
  for _, e in ipairs(list) do
    if e.pmu == pmu and e.why then
      local k = kinds[e.errno]
      if not k then k = {n = 0, why = e.why}; kinds[e.errno] = k; order[#order + 1] = k end
      k.n = k.n + 1
    end
  end
  for _, k in ipairs(order) do put(string.format("  why '-' for %d:", k.n), k.why, cols) end
end

-- The rows under their PMUs' lines, then the total where there are several.
local function print_rows(list)
  local cols = columns()
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
      reasons(list, pmu, cols)
    end
    put(string.format("  %s %s", e.opens and "+" or "-", table.concat(e.aliases, " OR ")), e.description, cols)
    for _, u in ipairs(e.umasks or {}) do
      -- showevtinfo's Umask line: the code, [default] where libpfm4 picks it alone
      put("      :" .. u.name, string.format("0x%02x%s %s", u.code or 0, u.default and " [default]" or "",
        u.description or ""), cols)
    end
  end
  if #pmus > 1 then
    local total, open = 0, 0
    for _, p in ipairs(pmus) do total, open = total + per[p], open + opens[p] end
    io.write(string.format("%d events in %d PMUs, %d open here\n", total, #pmus, open))
  end
end

return {
  description = "list events (libpfm4 and sysfs PMUs), one row per event with its aliases; --groups for events/",
  usage = "[pattern]",
  help = [[
  pmcsh list fault              events whose name or description contains "fault"
  pmcsh list -v INST            with each event's umasks
  pmcsh list --json             one JSON object per line
  pmcsh list --pmu skl INST     Skylake's events (libpfm4's forced PMU), for planning
  pmcsh list --pmus zen         libpfm4's PMU models (names for --pmu) and their CPUs
  pmcsh list --groups           the groups and pairs files in events/; --group NAME shows one
Marks: '+' opens here, '-' does not; under each PMU, why not (no such
counter, or not permitted), once per kind of reason with an example.
Aliases share a row (cpu-cycles OR cycles); the "tool" PMU's duration_time,
user_time and system_time are measured by pmcsh stat itself; tracepoints
(sched:sched_switch) come from tracefs.  -v gives each umask's code and marks
libpfm4's default, as its showevtinfo does.  On a terminal the rows fit its
width (COLUMNS, else the terminal's), descriptions wrapped as perf list
wraps them; into a pipe or file, one line per row, nothing cut.]],
  options = {
    {name = "json", type = "flag", help = "JSON lines: {name, aliases, pmu, description, opens[, why][, umasks]}"},
    {name = "pmu", type = "string", help = "another CPU model's PMU (libpfm4 name, e.g. skl, amd64_fam19h_zen3)"},
    {name = "umasks", short = "v", type = "flag", help = "each event's umasks (unit masks) with their descriptions"},
    {name = "pmus", type = "flag", help = "libpfm4's PMU models: name, CPU, events, whether present here"},
    {name = "groups", type = "flag", help = "the groups and pairs files of events/"},
    {name = "group", type = "string", help = "one group or pairs file of events/: its events and metrics"},
  },
  run = function(opts, args)
    if opts.groups or opts.group then return groups(opts.group) end
    if #args > 1 then options.usage_error("list: at most one pattern") end
    if opts.pmus then return models(args[1], opts.json) end
    if opts.pmu then
      local ok, msg = check_model(opts.pmu)
      if not ok then return nil, msg end
    end
    local list, msg = gather(opts, args[1])
    if not list then
      return nil, msg
    end
    if opts.json then
      io.write(results.head("list"), "\n")
      for _, e in ipairs(list) do e.errno = nil; io.write(cjson.encode(e), "\n") end
      return 0
    end
    print_rows(list)
    if #list == 0 then
      io.stderr:write(string.format("pmcsh list: no event matches '%s'\n", args[1] or ""))
      return 1
    end
    return 0
  end,
}
