-- L1D for Intel cores from Skylake to Sapphire Rapids.
-- Event codes: Intel's event lists (the kernel's pmu-events JSON carries
-- them), as libpfm4 encodes them: `pmcsh list -v --pmu MODEL NAME`.
return {
  name = "l1d-intel",
  models = {"skl", "skx", "clx", "icl", "icx", "spr"},
  cpu = "Intel Skylake to Sapphire Rapids",
  short = "L1 data cache refills, their bandwidth and the load miss latency",
  long = [[Lines replaced in the L1 data cache (each a 64-byte refill from L2 or
beyond) against loads and stores retired; the refill bandwidth; and the
average latency of a load that missed L1 by Little's law: cycles of
outstanding misses over the loads that missed (a line-fill-buffer hit is one).]],
  events = {"L1D:REPLACEMENT", "MEM_INST_RETIRED:ALL_LOADS", "MEM_INST_RETIRED:ALL_STORES",
            "L1D_PEND_MISS:PENDING", "MEM_LOAD_RETIRED:L1_MISS", "MEM_LOAD_RETIRED:FB_HIT"},
  metrics = {
    {name = "L1D refill bandwidth GB/s", unit = "GB/s", events = {"L1D:REPLACEMENT"},
     fn = function(e, c) return e["L1D:REPLACEMENT"] * 64 / c.seconds / 1e9 end},
    {name = "L1D refills per load and store",
     events = {"L1D:REPLACEMENT", "MEM_INST_RETIRED:ALL_LOADS", "MEM_INST_RETIRED:ALL_STORES"},
     fn = function(e)
       return e["L1D:REPLACEMENT"] / (e["MEM_INST_RETIRED:ALL_LOADS"] + e["MEM_INST_RETIRED:ALL_STORES"])
     end},
    {name = "L1D load miss latency (cycles)",
     events = {"L1D_PEND_MISS:PENDING", "MEM_LOAD_RETIRED:L1_MISS", "MEM_LOAD_RETIRED:FB_HIT"},
     fn = function(e)
       return e["L1D_PEND_MISS:PENDING"] / (e["MEM_LOAD_RETIRED:L1_MISS"] + e["MEM_LOAD_RETIRED:FB_HIT"])
     end},
  },
}
