-- CLOCK/CPI for Intel cores from Skylake to Sapphire Rapids: one question,
-- "how many instructions does a cycle retire, at what clock?".  Event
-- codes: Intel's event lists (CPU_CLK_UNHALTED.THREAD_P 0x3c, umask 0x00;
-- INST_RETIRED.ANY_P 0xc0, umask 0x00), as the kernel's pmu-events carry
-- them; the general-counter spellings, not the fixed counters'.
return {
  name = "clock-intel",
  models = {"skl", "skx", "clx", "icl", "icx", "spr"},
  cpu = "Intel Skylake to Sapphire Rapids",
  short = "instructions per cycle and the clock while running",
  long = [[Core cycles while not halted and instructions retired, both on general
counters.  IPC and CPI are their ratio; the clock is cycles over the run's
seconds, which a halted or descheduled thread lowers.]],
  events = {"CPU_CLK_UNHALTED:THREAD_P", "INST_RETIRED:ANY_P"},
  metrics = {
    {name = "IPC", events = {"INST_RETIRED:ANY_P", "CPU_CLK_UNHALTED:THREAD_P"},
     fn = function(e) return e["INST_RETIRED:ANY_P"] / e["CPU_CLK_UNHALTED:THREAD_P"] end},
    {name = "CPI", events = {"INST_RETIRED:ANY_P", "CPU_CLK_UNHALTED:THREAD_P"},
     fn = function(e) return e["CPU_CLK_UNHALTED:THREAD_P"] / e["INST_RETIRED:ANY_P"] end},
    {name = "clock GHz", unit = "GHz", events = {"CPU_CLK_UNHALTED:THREAD_P"},
     fn = function(e, c) return e["CPU_CLK_UNHALTED:THREAD_P"] / c.seconds / 1e9 end},
  },
}
