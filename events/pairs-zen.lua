-- Dual-event pairs for AMD Zen 3/4 (libpfm4 PMU "amd64_fam19h_zen3"):
-- counted together, user-only then OS-only (pmcsh survey --pairs pairs-zen).
-- Encodings checked with pmc.info(name, {pmu = "amd64_fam19h_zen3"}).
return {
  name = "pairs-zen",
  pmu = "amd64_fam19h_zen3",
  cpu = "AMD Zen 3/4",
  pairs = {
    -- instructions and macro-ops retired
    {"RETIRED_INSTRUCTIONS", "RETIRED_OPS"},
    -- cycles per instruction
    {"CYCLES_NOT_IN_HALT", "RETIRED_INSTRUCTIONS"},
    -- loads and stores dispatched per iteration
    {"LS_DISPATCH:LD_DISPATCH", "LS_DISPATCH:STORE_DISPATCH"},
    -- demand fills from DRAM versus all fills from DRAM (prefetch coverage)
    {"DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL", "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL"},
    -- floating-point operations retired per instruction
    {"RETIRED_SSE_AVX_FLOPS:ANY", "RETIRED_INSTRUCTIONS"},
    -- branches and mispredictions (one branch per loop trip)
    {"RETIRED_BRANCH_INSTRUCTIONS", "RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED"},
  },
}
