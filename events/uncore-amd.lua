-- AMD memory controllers.  Zen 4/5 kernels (6.8+) expose one amd_umc_N PMU
-- per socket; UMC CAS commands are 64-byte transfers (encoding as in perf's
-- amdzen4/amdzen5 memory-controller events: event=0x0a, rdwrmask 1 read,
-- 2 write).  Written from the documentation; not yet checked on hardware.
-- The older data-fabric PMU (amd_df) has no portable DRAM events and is not
-- listed: add a controller here with total_terms to use it.
return {
  name = "uncore-amd",
  description = "AMD UMC CAS commands",
  controllers = {
    {pmu = "^amd_umc_%d+$", read_terms = "event=0x0a,rdwrmask=0x1", write_terms = "event=0x0a,rdwrmask=0x2",
     bytes_per_count = 64, desc = "Zen 4/5 unified memory controllers"},
  },
}
