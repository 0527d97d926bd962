-- The memory group (core-side fills from DRAM) for AMD Zen 3 and Zen 4:
-- libpfm4 names the local-DRAM fill source MEM_IO_LCL on Zen 3 and
-- DRAM_IO_NEAR on Zen 4 (PMCx043/PMCx044 in AMD's processor programming
-- references), one umask bit (0x08) under two names.
return {
  name = "memory-zen",
  models = {"amd64_fam19h_zen3", "amd64_fam19h_zen4"},
  cpu = "AMD Zen 3/4",
  short = "data-cache fills by source, loads and stores",
  long = [[Data-cache fills from local DRAM (demand and all, prefetch included), loads
and stores dispatched, per iteration: on a STREAM loop 1/8 line per array per
iteration is the expectation when every line comes from memory.]],
  events = {
    "CYCLES_NOT_IN_HALT", "LS_DISPATCH:LD_DISPATCH", "LS_DISPATCH:STORE_DISPATCH",
    "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL", "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL",
  },
  rename = {amd64_fam19h_zen4 = {
    ["DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL"] = "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:DRAM_IO_NEAR",
    ["ANY_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL"] = "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:DRAM_IO_NEAR",
  }},
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
