-- pmcsh stat: perf-stat-like counting of a command (or of cpus, processes
-- or threads), in perf stat 6.1's three output formats.  The recipe holds
-- the options and the help; the engine is pmcsh.stat.
local options = require("pmcsh.options")
local recipe = require("pmcsh.recipe")
local stat = require("pmcsh.stat")

-- perf stat report's options: the record to read and how to aggregate it
local REPORT = {name = "stat report", options = {
  {name = "input", short = "i", type = "string", help = "the record to read (default perf.data; -: stdin)"},
  {name = "no-aggr", short = "A", type = "flag", help = "a row per cpu"},
  {name = "per-socket", type = "flag", help = "a row per socket"},
  {name = "per-die", type = "flag", help = "a row per die"},
  {name = "per-core", type = "flag", help = "a row per core"},
  {name = "per-node", type = "flag", help = "a row per NUMA node"},
  {name = "field-separator", short = "x", type = "string", help = "CSV output with this separator"},
  {name = "json", short = "j", type = "flag", help = "JSON lines"},
}}
local MODES = {{"no-aggr", "none"}, {"per-socket", "socket"}, {"per-die", "die"}, {"per-core", "core"},
               {"per-node", "node"}}

-- The subcommand a first word names, as perf reads it: a prefix of
-- "record" or "report" of 3 letters or more.
local function subcommand(word)
  if not word or #word < 3 then return nil end
  for _, s in ipairs({"record", "report"}) do
    if s:sub(1, #word) == word then return s end
  end
end

-- pmcsh stat record --help, pmcsh stat report --help
local function help(r, usage, what)
  print(string.format("pmcsh %s %s\n  %s", r.name, usage, what))
  for _, o in ipairs(r.name == "stat report" and r.options or {}) do
    print(string.format("  %-4s --%-20s %s", o.short and ("-" .. o.short .. ",") or "", o.name, o.help))
  end
  return 0
end

local function report(argv)
  if options.wants_help(REPORT, argv) then
    return help(REPORT, "[-i FILE|-] [-A|--per-socket|--per-die|--per-core|--per-node] [-x SEP|-j]",
      "prints a record of pmcsh stat record as the run printed it ('pipe' for stdin, as perf)")
  end
  local opts = recipe.parse(REPORT, argv)
  local mode = "global"
  for _, m in ipairs(MODES) do
    if opts[m[1]] then
      if mode ~= "global" then error(options.usage("report: give one of -A, --per-socket/die/core/node"), 0) end
      mode = m[2]
    end
  end
  return stat.report(opts, mode)
end

-- perf stat record's words after "record", read as stat's own over those
-- given before it (lists added to): opts, the command; the record's -o.
local function record(r, opts, argv)
  local more, args = recipe.parse(r, argv)
  local given = options.defaults(r)
  for k, v in pairs(more) do
    if type(v) == "table" and type(opts[k]) == "table" then table.move(v, 1, #v, #opts[k] + 1, opts[k])
    elseif v ~= given[k] then opts[k] = v end
  end
  local path = opts.output or "perf.data"
  opts.output = nil
  return opts, args, path
end

local R = {
  description = "count events of a command, cpus or threads, like perf stat (-a, -C, -p, -t, -I, -A, --per-*)",
  usage = "[[--] cmd [args...]]",
  command = true,   -- options end at the command's name, as perf stat's do
  help = [[
  pmcsh stat -e task-clock,page-faults:u,page-faults:k -- dd if=/dev/zero of=/dev/null bs=1M count=100
  pmcsh stat -e task-clock -r 10 -x , -- ls       CSV in perf stat's field order
  pmcsh stat -e page-faults --json -- ls          JSON lines with perf stat's keys
  pmcsh stat -a -I 500 -- sleep 2                 every cpu, a row per event every 500 ms
  pmcsh stat -a --per-socket -- sleep 1           one row per socket and event
  pmcsh stat -p 1234 --per-thread -- sleep 1      the threads of process 1234 for a second
  pmcsh stat -a --per-thread -- sleep 1           every thread of the machine that counted something
  pmcsh stat -e '{task-clock,page-faults}' -M software -- ls
  pmcsh stat --regions -e page-faults:u,task-clock -- ./app   the regions ./app marks, per call and thread
  pmcsh stat -D 500 -- ./app                      counting starts 500 ms after ./app does
  pmcsh stat -D -1 --control fifo:ctl,ack -- ./app   ./app switches counting itself
  pmcsh stat -x, -I 1000 --interval-count 5 --summary   every cpu, 5 seconds, then their sum
  pmcsh stat record -o run.data -- ./app          the run's counts kept (pmcsh's record; -o -: stdout)
  pmcsh stat report -i run.data [-A|--per-core]   printed again (-i -: stdin; -x, -j)
The command is counted from its exec, children included; the output goes to
stderr, like perf stat's (the command keeps stdout).  With -a, -C, -p or -t
those are counted instead, while the command runs (or until Ctrl-C, or the
process of -p ends, when no command is given), with the threads and children
they start meanwhile (not with -i).  The default events are perf
stat 6.1's (cpu-clock instead of task-clock for cpus); an event this machine
cannot count is a <not supported> row and the run goes on.
With --regions the command's own regions are counted instead: a program
built with pmcsh's marker library (pkg-config --cflags --libs pmcsh-marker;
LIKWID's macros through pmcsh-likwid) counts each region on counters each
thread opens itself, inclusive and exclusive of nested regions, per call
and per iteration, per thread and summed; -x and -j give a row per
region, thread and event.
-D and --control speak perf stat's protocol, so a program written for
`perf stat --control` runs unchanged: CTL and ACK are FIFOs (mkfifo) or
descriptors pmcsh inherits; the program writes `enable` or `disable` lines
on CTL, each switching every counter (`ping`, `stop` and `evlist` change
nothing), and reads "ack\n" and a NUL on ACK after each, as perf writes it.
An event never enabled (no `enable` after -D -1, or a command gone within
the delay) shows <not counted>; with -D N the elapsed time runs from the
delay's end, as perf's.]],
  options = {
    {name = "events", short = "e", type = "list",
      help = "comma-separated events; {a,b} groups them; repeated -e add (default: perf stat 6.1's list)"},
    {name = "metrics", short = "M", type = "list", help = "the events and metrics of groups in events/ (software, memory-skl)"},
    {name = "repeat", short = "r", type = "int", default = 1, min = 1, max = 1000000, help = "runs to average"},
    {name = "all-cpus", short = "a", type = "flag", help = "count every online cpu (system wide)"},
    {name = "cpu", short = "C", type = "string", help = "count these cpus: 0-3,8"},
    {name = "pid", short = "p", type = "string", help = "count these processes (all their threads): PID[,PID]"},
    {name = "tid", short = "t", type = "string", help = "count these threads: TID[,TID]"},
    {name = "no-inherit", short = "i", type = "flag",
      help = "leave out the threads and children the command (or -p, -t) starts while counted"},
    {name = "detailed", short = "d", type = "flag", counted = true,
      help = "perf's detailed events too: L1 and LLC loads and misses; -dd: L1i, dTLB, iTLB; -ddd: L1d prefetches"},
    {name = "null", short = "n", type = "flag", help = "count no events (only those of -e): the elapsed time"},
    {name = "all-user", type = "flag", help = "count every event in user space only (as :u, the rows keep their names)"},
    {name = "all-kernel", type = "flag", help = "count every event in the kernel only (as :k, the rows keep their names)"},
    {name = "topdown", type = "flag", help = "perf's top-down level 1, where the cpu PMU has its events"},
    {name = "metric-only", type = "flag", help = "print the metrics only (-M's), a column each"},
    {name = "big-num", short = "B", type = "flag",
      help = "thousands' separators in the table, as the locale writes them (perf's default; not with -x)"},
    {name = "no-big-num", type = "flag", help = "no thousands' separators"},
    {name = "verbose", short = "v", type = "flag", counted = true,
      help = "say what perf -v says: events not supported, each event's count, enabled and running times"},
    {name = "interval-print", short = "I", type = "int", min = 10, max = 86400000, help = "print the counts every N ms"},
    {name = "interval-count", type = "int", min = 1, max = 2147483647,
      help = "with -I: N intervals (without a command the count then ends; a command is waited for)"},
    {name = "summary", type = "flag", help = "with -I: the table of the intervals' sum after them; -x marks its rows 'summary'"},
    {name = "no-csv-summary", type = "flag", help = "with --summary -x: no 'summary' field"},
    {name = "no-aggr", short = "A", type = "flag", help = "with -a/-C: a row per cpu"},
    {name = "per-socket", type = "flag", help = "with -a/-C: a row per socket"},
    {name = "per-die", type = "flag", help = "with -a/-C: a row per die"},
    {name = "per-core", type = "flag", help = "with -a/-C: a row per core"},
    {name = "per-node", type = "flag", help = "with -a/-C: a row per NUMA node"},
    {name = "per-thread", type = "flag", help = "with -p/-t: a row per thread; with -a: every thread of the machine"},
    -- perf merges the instances of a PMU an event names by its prefix
    -- (uncore_imc/x/ over uncore_imc_0..N); pmcsh opens the one PMU a sysfs
    -- name gives, so its rows are perf's --no-merge rows already
    {name = "no-merge", type = "flag",
      help = "perf's: a row per PMU instance (pmcsh's rows always are: a sysfs event names one PMU)"},
    {name = "delay", short = "D", type = "int", min = -1, max = 2147483647,
      help = "start counting N ms after the command starts; -1: at 'enable' on --control"},
    {name = "control", type = "string",
      help = "fifo:CTL[,ACK] or fd:CTL[,ACK]: take perf's enable/disable/ping lines, answer ack"},
    {name = "field-separator", short = "x", type = "string", help = "CSV output with this separator"},
    {name = "json", short = "j", type = "flag", help = "JSON lines (perf stat's keys)"},
    {name = "output", short = "o", type = "string", help = "write the counts to this file instead of stderr"},
    {name = "append", type = "flag", help = "with -o: append to the file"},
    {name = "fingerprint", type = "flag",
      help = "the machine's fingerprint before the counts: a JSON line with -j, else a '#' line (a -o file has it)"},
    {name = "regions", type = "flag",
      help = "count the regions the command marks with pmcsh's marker library (pmcsh/marker.h, likwid-marker.h)"},
    {name = "out", type = "string", help = "with --regions: a results file per process in this folder, for pmcsh compare"},
  },
}
R.run = function(opts, args)
  local sub = subcommand(args[1])
  if sub == "report" then return report(table.move(args, 2, #args, 1, {})) end
  if sub == "record" then
    local rest = table.move(args, 2, #args, 1, {})
    if options.wants_help(R, rest) then
      return help({name = "stat record"}, "[stat's options] [-o FILE|-] [--] cmd [args...]",
        "counts as pmcsh stat does (its options: pmcsh stat --help) and keeps the run in FILE (default " ..
        "perf.data; -: stdout, the table then not shown), for pmcsh stat report; -r and -I do not go with it")
    end
    local o, a, path = record(R, opts, rest)
    return stat.run(o, a, recipe.typed(o), path)
  end
  return stat.run(opts, args, recipe.typed(opts))
end
return R
