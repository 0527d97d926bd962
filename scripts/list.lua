-- pmcsh list: the events of this machine's PMUs (libpfm4 and sysfs), or of
-- another CPU model with --pmu.
return {
  description = "list events (libpfm4 and sysfs PMUs): name, PMU, whether it opens here, description",
  usage = "[pattern]",
  help = [[
  pmcsh list fault              events whose name or description contains "fault"
  pmcsh list --json             one JSON object per line
  pmcsh list --pmu skl INST     Skylake's events (libpfm4's forced PMU), for planning
Marks: '+' opens here, '-' does not (no such counter, or not permitted).]],
  options = {
    {name = "json", type = "flag", help = "JSON lines: {name, pmu, description, opens}"},
    {name = "pmu", type = "string", help = "another CPU model's PMU (libpfm4 name, e.g. skl, amd64_fam19h_zen3)"},
  },
  run = function(opts, args)
    local pmc = require("pmcsh.pmc")
    if #args > 1 then error(require("pmcsh.recipe").usage("list: at most one pattern"), 0) end
    local list, msg = pmc.list(args[1], opts.pmu and {pmu = opts.pmu} or nil)
    if not list then
      io.stderr:write("pmcsh list: ", msg, "\n")
      return 1
    end
    if opts.json then
      local cjson = require("cjson")
      for _, e in ipairs(list) do io.write(cjson.encode(e), "\n") end
      return 0
    end
    -- as perf list: descriptions cut to the line on a terminal, in full into
    -- a pipe or file; each PMU's heading says how many of its events are shown
    local ok, sys = pcall(require, "pmcsh._sys")
    local tty = ok and sys and sys.isatty and sys.isatty("stdout")
    local per = {}
    for _, e in ipairs(list) do per[e.pmu] = (per[e.pmu] or 0) + 1 end
    local pmu
    for _, e in ipairs(list) do
      if e.pmu ~= pmu then
        pmu = e.pmu
        io.write(string.format("%s: %d event%s\n", pmu, per[pmu], per[pmu] == 1 and "" or "s"))
      end
      local desc = e.description:gsub("%s+", " ")
      if tty and #desc > 70 then desc = desc:sub(1, 67) .. "..." end
      io.write(string.format("  %s %-44s %s\n", e.opens and "+" or "-", e.name, desc))
    end
    if #list == 0 then
      io.stderr:write(string.format("pmcsh list: no event matches '%s'\n", args[1] or ""))
      return 1
    end
    return 0
  end,
}
