-- L2 for Intel cores from Skylake to Sapphire Rapids.
-- Event codes: Intel's event lists (the kernel's pmu-events JSON carries
-- them), as libpfm4 encodes them: `pmcsh list -v --pmu MODEL NAME`.
return {
  name = "l2-intel",
  models = {"skl", "skx", "clx", "icl", "icx", "spr"},
  cpu = "Intel Skylake to Sapphire Rapids",
  short = "L2 fills and evictions, their bandwidth, demand hit ratio, L2 MPKI",
  long = [[Lines filled into L2 (from L3 or memory, prefetches included) and dirty
lines it evicts, as bandwidths; the share of demand data reads that hit L2;
and loads retired that missed L2 per thousand instructions (perf's L2MPKI).]],
  events = {"L2_LINES_IN:ALL", "L2_LINES_OUT:NON_SILENT", "L2_RQSTS:DEMAND_DATA_RD_HIT",
            "L2_RQSTS:DEMAND_DATA_RD_MISS", "MEM_LOAD_RETIRED:L2_MISS", "INST_RETIRED:ANY_P"},
  metrics = {
    {name = "L2 fill bandwidth GB/s", unit = "GB/s", events = {"L2_LINES_IN:ALL"},
     fn = function(e, c) return e["L2_LINES_IN:ALL"] * 64 / c.seconds / 1e9 end},
    {name = "L2 eviction bandwidth GB/s", unit = "GB/s", events = {"L2_LINES_OUT:NON_SILENT"},
     fn = function(e, c) return e["L2_LINES_OUT:NON_SILENT"] * 64 / c.seconds / 1e9 end},
    {name = "L2 demand data read hit ratio", events = {"L2_RQSTS:DEMAND_DATA_RD_HIT", "L2_RQSTS:DEMAND_DATA_RD_MISS"},
     fn = function(e)
       local hit = e["L2_RQSTS:DEMAND_DATA_RD_HIT"]
       return hit / (hit + e["L2_RQSTS:DEMAND_DATA_RD_MISS"])
     end},
    {name = "L2 MPKI", events = {"MEM_LOAD_RETIRED:L2_MISS", "INST_RETIRED:ANY_P"},
     fn = function(e) return 1000 * e["MEM_LOAD_RETIRED:L2_MISS"] / e["INST_RETIRED:ANY_P"] end},
  },
}
