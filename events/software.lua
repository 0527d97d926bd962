-- The default survey set: events every Linux machine counts, with or
-- without a hardware PMU (the only ones on a KVM guest without a vPMU).
-- Loaded with loadfile(path, "t", {}): data only.
return {
  name = "software",
  description = "kernel software events and the TSC",
  events = {
    "task-clock",        -- ns on CPU: per iteration, time per element
    "page-faults",       -- first touch: 1/512 per fresh array of doubles (4 KiB pages)
    "minor-faults",
    "major-faults",
    "context-switches",
    "cpu-migrations",
    "msr/tsc/",          -- TSC ticks: per iteration = tsc_hz * bytes_per_iter / (bytes/s)
  },
  -- metrics: e = event values per iteration, c = {iterations = 1, bytes =
  -- bytes per iteration (STREAM convention; none for a chase), seconds =
  -- per iteration}, evaluated after the read (pmcsh survey --group software)
  metrics = {
    -- both count only while the task runs: the TSC frequency whatever the load
    {name = "TSC GHz while running", events = {"msr/tsc/", "task-clock"},
     fn = function(e) return e["msr/tsc/"] / e["task-clock"] end},
    -- bytes per ns on cpu: the kernel's bandwidth when nothing preempted it
    {name = "GB/s while running", events = {"task-clock"},
     fn = function(e, c) return c.bytes / e["task-clock"] end},
    -- first touch: 1 per 4 KiB page of fresh arrays (one rep, --fresh), 0 warm
    {name = "page faults per 4 KiB moved", events = {"page-faults"},
     fn = function(e, c) return e["page-faults"] / (c.bytes / 4096) end},
    {name = "TSC ticks per byte", events = {"msr/tsc/"},
     fn = function(e, c) return e["msr/tsc/"] / c.bytes end},
  },
}
