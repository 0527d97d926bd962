-- pmcsh.survey.defaults: what a survey does when not told, in one table:
-- the recipe's declarations (plan.OPTIONS), survey.run's own defaults, the
-- renderers' statistic and the chase workload's chain all read it.  n is
-- stream.default_n's (the one rule, stream.new's too).
return {
  kernels = {"copy", "scale", "add", "triad"},   -- the STREAM loops, in STREAM's order
  stats = {"trimmed", "median", "min", "max", "mean"},   -- a cell's statistics, the default first
  stat = "trimmed",             -- nanoBench's trimmed mean of the pairs' slopes: a cell's value
  reps = 10,                    -- timed windows per run (5 pairs)
  max_reps = 1000000,
  threads = 1,                  -- stream.new's default too (STREAM_DEFAULT_THREADS): one
  pages = "4k",
  sample_ms = 20,               -- a chase's timed sample
  budget = 20,                  -- seconds of runs: more pairs are made until enough are kept or it is spent
  chase = {order = "random", size = 256 * 1024 * 1024},
}
