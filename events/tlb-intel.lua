-- TLB for Intel cores from Skylake to Sapphire Rapids.
-- Event codes: Intel's event lists (the kernel's pmu-events JSON carries
-- them), as libpfm4 encodes them: `pmcsh list -v --pmu MODEL NAME`.
return {
  name = "tlb-intel",
  models = {"skl", "skx", "clx", "icl", "icx", "spr"},
  cpu = "Intel Skylake to Sapphire Rapids",
  short = "page walks per load, store and instruction fetch, walk duration",
  long = [[Page walks completed (misses in both TLB levels) for loads, stores and
instruction fetches, against loads and stores retired; and the average
cycles a load's walk took (walks pending per cycle over walks).]],
  events = {"DTLB_LOAD_MISSES:WALK_COMPLETED", "DTLB_LOAD_MISSES:WALK_PENDING", "DTLB_STORE_MISSES:WALK_COMPLETED",
            "ITLB_MISSES:WALK_COMPLETED", "MEM_INST_RETIRED:ALL_LOADS", "MEM_INST_RETIRED:ALL_STORES"},
  metrics = {
    {name = "load page walks per load", events = {"DTLB_LOAD_MISSES:WALK_COMPLETED", "MEM_INST_RETIRED:ALL_LOADS"},
     fn = function(e) return e["DTLB_LOAD_MISSES:WALK_COMPLETED"] / e["MEM_INST_RETIRED:ALL_LOADS"] end},
    {name = "store page walks per store", events = {"DTLB_STORE_MISSES:WALK_COMPLETED", "MEM_INST_RETIRED:ALL_STORES"},
     fn = function(e) return e["DTLB_STORE_MISSES:WALK_COMPLETED"] / e["MEM_INST_RETIRED:ALL_STORES"] end},
    {name = "load page walk duration (cycles)",
     events = {"DTLB_LOAD_MISSES:WALK_PENDING", "DTLB_LOAD_MISSES:WALK_COMPLETED"},
     fn = function(e) return e["DTLB_LOAD_MISSES:WALK_PENDING"] / e["DTLB_LOAD_MISSES:WALK_COMPLETED"] end},
    {name = "instruction page walks per iteration", events = {"ITLB_MISSES:WALK_COMPLETED"},
     fn = function(e, c) return e["ITLB_MISSES:WALK_COMPLETED"] / c.iterations end},
  },
}
