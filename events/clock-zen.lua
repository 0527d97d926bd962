-- CLOCK/CPI for AMD Zen 3 and Zen 4.  Event codes: AMD's processor
-- programming reference (PMCx076 cycles not in halt, PMCx0C0 retired
-- instructions), as libpfm4 encodes them.
return {
  name = "clock-zen",
  models = {"amd64_fam19h_zen3", "amd64_fam19h_zen4"},
  cpu = "AMD Zen 3, Zen 4",
  short = "instructions per cycle and the clock while running",
  long = [[Core cycles not in halt and instructions retired: IPC and CPI are their
ratio; the clock is cycles over the run's seconds.]],
  events = {"CYCLES_NOT_IN_HALT", "RETIRED_INSTRUCTIONS"},
  metrics = {
    {name = "IPC", events = {"RETIRED_INSTRUCTIONS", "CYCLES_NOT_IN_HALT"},
     fn = function(e) return e["RETIRED_INSTRUCTIONS"] / e["CYCLES_NOT_IN_HALT"] end},
    {name = "CPI", events = {"RETIRED_INSTRUCTIONS", "CYCLES_NOT_IN_HALT"},
     fn = function(e) return e["CYCLES_NOT_IN_HALT"] / e["RETIRED_INSTRUCTIONS"] end},
    {name = "clock GHz", unit = "GHz", events = {"CYCLES_NOT_IN_HALT"},
     fn = function(e, c) return e["CYCLES_NOT_IN_HALT"] / c.seconds / 1e9 end},
  },
}
