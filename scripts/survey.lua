-- pmcsh survey: events per loop iteration of the STREAM loops, for every
-- event this machine counts (Heller's PMC survey of STREAM, generalised).
local recipe = require("pmcsh.recipe")
local results = require("pmcsh.results")
local survey = require("pmcsh.survey")
local sys = require("pmcsh.sys")
-- the bounds of the options a results file's header repeats, declared once
-- (pmcsh.survey.plan) and checked here and on --resume/--report alike
local limits = require("pmcsh.survey.plan").OPTIONS
local loops = require("pmcsh.loops")
local MIN_KEPT = require("pmcsh.survey.cell").MIN_KEPT
local defaults = require("pmcsh.survey.defaults")

-- A path's folder resolved (links, ., ..) and its last name: two names of
-- one file, whether or not it exists yet, compare equal.
local function resolved(path)
  local dir, base = path:match("^(.*)/([^/]*)$")
  return (sys.realpath(dir == "" and "/" or dir or ".") or dir or ".") .. "/" .. (base or path)
end

return {
  description = "every-event survey of the STREAM loops: events per loop iteration",
  help = string.format([[
Counts each event over each kernel in pairs of windows, as nanoBench does: one
over a slice of each thread's part of the arrays, one over twice that (with
--fresh: a pass and two over untouched slices), each window on the next
slice, so short windows still read memory.  An event's value per loop
iteration is the pair's difference over the difference in elements: the
window's own cost (enable, disable, the loop's set-up, with --fresh the first
touch) cancels, and is kept as the intercept (--csv/--json).  A cell is the
trimmed mean over the pairs (--stat); a pair that counted a context switch, a
migration or an SMI is dropped, and pairs are made until --reps/2 are kept or
the run's share of --budget is spent.  A cell whose every pair was disturbed
shows their estimate marked "!": no class, no check passed; "dropped" is a
cell with no window counted.  A cell kept on %d pairs or more is classed exact, linear,
noisy, zero or multiplexed; each column says its pairs kept of made.  User
(:u) and OS (:k) are rows of their own (--no-split joins them).  Events are
packed into as few groups as the PMU schedules without multiplexing; events
that cannot be counted here are listed with the reason.  What pmcsh can
predict it checks and says so (with --fresh: a fault per 4 KiB page of each
array; instructions:u against the loop's disassembly; msr/tsc/ against
rdtsc, "--" where the windows are too close to judge).  Memory controllers count per socket, not per task: `pmcsh bandwidth
--kernel triad` checks their bytes against the loop's.  Bandwidth with no
counters open is printed beside the counted runs', with two uncounted runs'
difference as the noise floor.

  pmcsh survey                                   the events this machine counts
  pmcsh survey -e page-faults,msr/tsc/ --fresh   first touch: the intercept, checked
  pmcsh survey --pairs pairs-skl                 dual-event pairs, user then OS
  pmcsh survey --group software                  a group of events/ and its metrics
  pmcsh survey -k copy,triad --chase random:256M a pointer chase beside the loops
                                                 (per dependent load: --chase ORDER:SIZE[:STRIDE])
  pmcsh survey --out s.jsonl ...                 stream rows to a file; then
  pmcsh survey --resume s.jsonl                  continue an interrupted survey
  pmcsh survey --report s.jsonl [--csv|--json]   render a finished file]], MIN_KEPT),
  options = {
    {name = "events", short = "e", type = "list", help = "events to survey (default: those this machine counts)"},
    {name = "pattern", type = "string", help = "survey the events of `pmcsh list PATTERN`"},
    {name = "umasks", type = "flag", help = "expand each event into its umasks"},
    {name = "split", type = "flag", help = "count each event user-only and OS-only (two rows): the default"},
    {name = "no-split", type = "flag", help = "count user and OS together (one row per event)"},
    {name = "all", type = "flag", help = "print every row, those zero in every loop too"},
    {name = "pairs", type = "string", help = "dual-event pairs: events/ file name or \"A,B C,D\""},
    {name = "group", short = "g", type = "string",
     help = "an events/ group (software, memory-skl, ...): its events, then its metrics per kernel"},
    {name = "kernels", short = "k", type = "list",
     help = "stream kernels to survey (default copy,scale,add,triad), and chase (a pointer chase: per dependent load)"},
    {name = "loop", type = "list",
     help = "your own loop, FILE[:SYMBOL] (a .so, or a .c/.s file built with $CC; SYMBOL default: loop): a column " ..
       "each; alone, in place of the kernels; one that fails validation is left out, with what to do"},
    loops.OPTIONS.cflags, loops.OPTIONS.no_default,
    {name = "chase", type = "string",
     help = "the chase: ORDER:SIZE[:STRIDE], default random:256M:64; adds chase to the kernels"},
    limits.sample_ms, limits.n, limits.reps, limits.threads, limits.pages, limits.budget,
    {name = "fresh", type = "flag", help = "fresh arrays per run, no warm-up: first touch inside the first timed repetition"},
    {name = "no-baseline", type = "flag", help = "skip the runs with no counters"},
    {name = "out", short = "o", type = "string",
     help = "append each finished run to this JSON-lines file (%h host, %j job, %t task; DIR/: a file per task in DIR)"},
    {name = "resume", type = "string", help = "continue the survey in this file (its options are used)"},
    {name = "report", type = "string", help = "render the table from a survey file, measuring nothing"},
    {name = "stat", type = "string", choices = defaults.stats, default = defaults.stat,
     help = "value shown per cell, over the pairs of windows: trimmed mean (20th-80th percentile) by default"},
    {name = "csv", type = "flag", help = "print CSV: a line per row and kernel (value, spread, pairs kept, n, MB/s, ...)"},
    {name = "json", type = "flag", help = "print JSON lines: a metric record per row and kernel (its kernel the " ..
      "context, its pairs' slopes the samples), the CSV's fields beside"},
    {name = "plot", type = "plot", help = "heat map of the table (its rows, its labels; --all too) to FILE.png or FILE.svg (gnuplot, 1000x640, taller past 20 rows)"},
  },
  run = function(opts)
    local function usage(msg) error(recipe.usage("survey: " .. msg), 0) end
    if opts.csv and opts.json then usage("--csv and --json exclude each other") end
    if opts.split and opts["no-split"] then usage("--split and --no-split exclude each other") end
    local n_src = (opts.report and 1 or 0) + (opts.resume and 1 or 0)
    if n_src > 1 then usage("--report and --resume exclude each other") end
    if opts.out then
      local path, perr = results.path(opts.out, "survey")
      if not path then return nil, perr end
      opts.out = path
    end
    local results = opts.out or opts.resume or opts.report
    if opts.plot and results and resolved(opts.plot) == resolved(results) then
      usage(string.format("--plot %s names the results file; plot to another file", opts.plot))
    end
    if opts.out and (opts.report or opts.resume) then
      usage("--out writes a new survey; --resume appends to its own file")
    end
    local st, err, errno, run
    if opts.report then
      st, err = survey.load(opts.report)
    else
      run = {
        events = opts.events, pattern = opts.pattern, umasks = opts.umasks, group = opts.group,
        chase = opts.chase, sample_ms = opts.sample_ms,
        split = not opts["no-split"], pairs = opts.pairs, kernels = opts.kernels, loops = opts.loop, cflags = opts.cflags,
        default_cflags = not opts["no-default-cflags"],
        n = opts.n, reps = opts.reps, threads = opts.threads, pages = opts.pages, budget = opts.budget,
        fresh = opts.fresh, baseline = not opts["no-baseline"],
        out = opts.out, resume = opts.resume, typed = recipe.typed(opts),
      }
      -- Ctrl-C between two runs stops here as inside one: 130 and the hint below
      local ok, a, b, c = pcall(survey.run, run)
      if ok then st, err, errno = a, b, c
      elseif sys.interrupted() then st, err, errno = nil, "interrupted", sys.EINTR
      else error(a, 0) end
    end
    if not st then
      io.stderr:write("pmcsh survey: ", tostring(err), "\n")
      local file = run and run.written and (opts.out or opts.resume)
      if file then
        io.stderr:write("pmcsh survey: finished runs are kept in ", file,
                        "; continue with: pmcsh survey --resume ", file, "\n")
      end
      return errno == sys.EINTR and 130 or 1
    end
    local text
    if opts.csv then text = survey.csv(st, {stat = opts.stat})
    elseif opts.json then text = survey.json(st, {stat = opts.stat})
    else text = survey.report(st, {stat = opts.stat, all = opts.all}) end
    io.write(text)
    io.flush()
    if opts.plot then
      local ok, perr = survey.plot(st, opts.plot, {stat = opts.stat, all = opts.all})
      if not ok then return nil, perr end
    end
    local counted = next(st.cells) ~= nil
    return counted and 0 or 1
  end,
}
