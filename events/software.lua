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
  metrics = {
    {name = "TSC GHz while running", events = {"msr/tsc/", "task-clock"},
     fn = function(e) return e["msr/tsc/"] / e["task-clock"] end},
  },
}
