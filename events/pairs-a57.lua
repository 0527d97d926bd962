-- Dual-event pairs for the Arm Cortex-A57 (libpfm4 PMU "arm_ac57"):
-- counted together, user-only then OS-only (pmcsh survey --pairs pairs-a57).
-- The arm64 lab's emulated PMU counts INST_RETIRED and CPU_CYCLES; the other
-- architected events open there and count zero.  Names checked with
-- pmc.info(name) on the lab's Cortex-A57.
return {
  name = "pairs-a57",
  pmu = "arm_ac57",
  cpu = "Arm Cortex-A57",
  pairs = {
    -- cycles per instruction
    {"CPU_CYCLES", "INST_RETIRED"},
    -- loads and stores executed per instruction retired
    {"INST_SPEC_EXEC_LOAD", "INST_RETIRED"},
    {"INST_SPEC_EXEC_STORE", "INST_RETIRED"},
    -- L1 data refills against L2 refills (what the L2 absorbs)
    {"L1D_CACHE_REFILL", "L2D_CACHE_REFILL"},
    -- branches predicted and mispredicted
    {"BRANCH_PRED", "BRANCH_MISPRED"},
  },
}
