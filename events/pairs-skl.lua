-- Dual-event pairs for Intel Skylake (libpfm4 PMU "skl"): events that must
-- be counted in the same run, because their ratio is the point.  The survey
-- measures each pair user-only, then OS-only (pmcsh survey --pairs pairs-skl).
-- Encodings checked with pmc.info(name, {pmu = "skl"}).
return {
  name = "pairs-skl",
  pmu = "skl",
  cpu = "Intel Skylake",
  pairs = {
    -- instructions and micro-operations retired (the seed's 7,6,6,7 vs 9,8,8,10)
    {"INST_RETIRED:ANY_P", "UOPS_RETIRED:RETIRE_SLOTS"},
    -- issued versus retired micro-ops: wrong-path work
    {"UOPS_ISSUED:ANY", "UOPS_RETIRED:RETIRE_SLOTS"},
    -- executed versus retired: micro-ops executed per instruction retired
    {"UOPS_EXECUTED:THREAD", "INST_RETIRED:ANY_P"},
    -- loads and stores retired per iteration (copy 1+1, add 2+1)
    {"MEM_INST_RETIRED:ALL_LOADS", "MEM_INST_RETIRED:ALL_STORES"},
    -- Little's law: outstanding / requests = demand read latency in cycles
    {"OFFCORE_REQUESTS_OUTSTANDING:DEMAND_DATA_RD", "OFFCORE_REQUESTS:DEMAND_DATA_RD"},
    -- lines in and written back at L2: 1/8 per array per iteration
    {"L2_LINES_IN:ALL", "L2_TRANS:L2_WB"},
    -- cycles stalled on an L3 miss, out of all cycles
    {"CYCLE_ACTIVITY:STALLS_L3_MISS", "CPU_CLK_UNHALTED:THREAD_P"},
    -- floating point: scalar versus 256-bit packed double (scale 1, add 1, triad 2 flops)
    {"FP_ARITH:SCALAR_DOUBLE", "FP_ARITH:256B_PACKED_DOUBLE"},
  },
}
