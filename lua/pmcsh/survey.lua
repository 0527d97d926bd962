-- The every-event survey of the STREAM loops (Heller's PMC survey, generalised).
--
-- For each event (or user/OS split, or dual-event pair) and each workload,
-- the survey reports events per iteration: the count divided by the
-- iterations of the timed repetitions.  This module is the survey's one
-- door; the parts live beside it:
--   pmcsh.events            the events/ data files (groups, pairs), the default events
--   pmcsh.survey.cell       what a cell rests on: pairs kept of made, the class they allow
--   pmcsh.survey.figures    a run's time per iteration, by its named estimators
--   pmcsh.survey.workloads  what is measured: one column per workload, engines in
--                           engine_stream (the loops, the user's loops) and engine_chase
--   pmcsh.survey.plan       options -> header; units packed into groups (first fit)
--   pmcsh.survey.run        the runs, appended to the results file (pmcsh.results)
--   pmcsh.survey.progress   the progress line
--   pmcsh.survey.derived    the group's metrics, evaluated on the runs' cells
--   pmcsh.survey.records    the one row shape after the file: what every output reads
--   pmcsh.survey.report     the table
--   pmcsh.survey.outputs    CSV and JSON lines of the records
--   pmcsh.survey.heatmap    the table as a heat map (gnuplot)
local derived = require("pmcsh.survey.derived")
local heatmap = require("pmcsh.survey.heatmap")
local help = require("pmcsh.help")
local outputs = require("pmcsh.survey.outputs")
local report = require("pmcsh.survey.report")
local run = require("pmcsh.survey.run")

-- The survey's verbs: run it, read a file back, render it.  The parts'
-- own names (plan.pack, events.pairs, outputs.FIELDS, ...) are reached
-- through their modules.
local M = {}

-- Runs (or resumes) a survey.  Options: events (list), pattern, umasks,
-- split, pairs (list of lists or a pair-list string), kernels, n, reps,
-- threads, pages, fresh (first touch inside the first timed repetition:
-- new arrays per run, no warm-up), baseline (default true), out (path),
-- resume (path: options come from its header), progress (nil = auto),
-- quiet (no warning about a small n), group (an events/ group: its
-- events, its metrics in the report), chase ("ORDER:SIZE[:STRIDE]" or a
-- table: adds the chase kernel), sample_ms (per chase sample), loops
-- (list of "FILE[:SYMBOL]": the user's loops, pmcsh.loops; alone they
-- replace the default kernels; one that fails validation is left out) and
-- cflags (added to the flags a .c/.s loop is built with; default_cflags =
-- false: cflags alone).
-- Returns the state table (see load) or nil, message, errno.
M.run = run.run
M.load = run.load
M.disturbance = run.disturbance
M.report = report.report
M.group_metrics = derived.group_metrics
M.records = outputs.records
M.typed = outputs.typed
M.csv = outputs.csv
M.json = outputs.json
M.plot = heatmap.draw

do
  help.doc(M, "survey", [[
survey: the every-event survey of the STREAM loops (events per loop iteration).
  survey.run{events=, pattern=, split=, pairs=, group=, kernels=, chase=, loops=, n=, reps=, fresh=, out=, resume=}
      -> state (rows, cells per kernel, baseline bandwidth, unopened events)
      kernels: stream kernels and "chase" (chase="random:256M": per dependent load)
      loops: your own loops, {"k.c:f", "x.so:g"} (stream.loop; pmcsh/loop.h)
      group: an events/ file (software, memory-skl, ...); survey.group_metrics(state)
      evaluates its metrics per kernel
  survey.load(path)             a JSON-lines file written by survey.run{out=...}
  survey.disturbance(name)      whether the event counts what disturbs a window
      (context switches, migrations, SMIs), known by its encoding
  survey.records(state, {stat=}) a record per row and kernel, what the table, the
      heat map, csv and json show; survey.typed(record): it as a typed metric
  survey.report(state, {stat=}) the table; survey.csv(state), survey.json(state):
      the records as CSV, as JSON lines of typed metrics
  survey.plot(state, "FILE.png", {stat=, all=})  a heat map of the table (gnuplot)]])
end

return M
