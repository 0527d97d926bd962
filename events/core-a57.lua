-- The core group for the Arm Cortex-A57 (libpfm4 PMU "arm_ac57").
return {
  name = "core-a57",
  models = {"arm_ac57"},
  cpu = "Arm Cortex-A57",
  short = "instructions, cycles, loads, stores and refills per iteration",
  long = [[Instructions retired and cycles per iteration (on a STREAM loop the
instructions are the loop body's over the elements one trip handles: exact
in the arm64 lab), SIMD, loads and stores executed, L1D and L2D refills.]],
  events = {
    "INST_RETIRED", "CPU_CYCLES", "INST_SPEC_EXEC_SIMD", "INST_SPEC_EXEC_LOAD", "INST_SPEC_EXEC_STORE",
    "L1D_CACHE_REFILL",
  },
  metrics = {
    {name = "instructions per iteration", events = {"INST_RETIRED"},
     fn = function(e, c) return e["INST_RETIRED"] / c.iterations end},
    {name = "instructions per cycle", events = {"INST_RETIRED", "CPU_CYCLES"},
     fn = function(e) return e["INST_RETIRED"] / e["CPU_CYCLES"] end},
    {name = "L1D refills per 64 bytes moved", events = {"L1D_CACHE_REFILL"},
     fn = function(e, c) return e["L1D_CACHE_REFILL"] * 64 / c.bytes end},
  },
}
