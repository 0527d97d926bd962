-- The memory group for AMD Zen 3/4 (libpfm4 PMU "amd64_fam19h_zen3").
return {
  name = "memory-zen",
  pmu = "amd64_fam19h_zen3",
  cpu = "AMD Zen 3/4",
  short = "data-cache fills by source, loads and stores",
  long = [[Data-cache fills from local DRAM (demand and all, prefetch included), loads
and stores dispatched, per iteration: on a STREAM loop 1/8 line per array per
iteration is the expectation when every line comes from memory.]],
  events = {
    "CYCLES_NOT_IN_HALT", "LS_DISPATCH:LD_DISPATCH", "LS_DISPATCH:STORE_DISPATCH",
    "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL", "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL",
  },
  metrics = {
    {name = "DRAM fills per iteration", events = {"ANY_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL"},
     fn = function(e, c) return e["ANY_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL"] / c.iterations end},
    {name = "prefetched share of DRAM fills",
     events = {"DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL", "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL"},
     fn = function(e)
       return 1 - e["DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL"] / e["ANY_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL"]
     end},
    {name = "cycles per iteration", events = {"CYCLES_NOT_IN_HALT"},
     fn = function(e, c) return e["CYCLES_NOT_IN_HALT"] / c.iterations end},
  },
}
