-- L3 (core side) for AMD Zen 3 and Zen 4: data-cache fills by source
-- (PMCx044 in AMD's processor programming reference), as libpfm4 encodes
-- them; Zen 4 calls the CCX's own L3 LOCAL_CCX and local DRAM
-- DRAM_IO_NEAR.  The L3's own counters are a separate PMU (amd_l3).
return {
  name = "l3-zen",
  models = {"amd64_fam19h_zen3", "amd64_fam19h_zen4"},
  cpu = "AMD Zen 3, Zen 4",
  short = "data-cache fills from the CCX's L3 against fills from DRAM",
  long = [[Lines the data cache filled from its own CCX's L3 and from local DRAM:
the L3 fill bandwidth and the share of the two that the L3 served.]],
  events = {"ANY_DATA_CACHE_FILLS_FROM_SYSTEM:INT_CACHE", "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL"},
  rename = {amd64_fam19h_zen4 = {
    ["ANY_DATA_CACHE_FILLS_FROM_SYSTEM:INT_CACHE"] = "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:LOCAL_CCX",
    ["ANY_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL"] = "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:DRAM_IO_NEAR",
  }},
  metrics = {
    {name = "L3 fill bandwidth GB/s", unit = "GB/s", events = {"ANY_DATA_CACHE_FILLS_FROM_SYSTEM:INT_CACHE"},
     fn = function(e, c) return e["ANY_DATA_CACHE_FILLS_FROM_SYSTEM:INT_CACHE"] * 64 / c.seconds / 1e9 end},
    {name = "L3 share of L3 and DRAM fills",
     events = {"ANY_DATA_CACHE_FILLS_FROM_SYSTEM:INT_CACHE", "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL"},
     fn = function(e)
       local l3 = e["ANY_DATA_CACHE_FILLS_FROM_SYSTEM:INT_CACHE"]
       return l3 / (l3 + e["ANY_DATA_CACHE_FILLS_FROM_SYSTEM:MEM_IO_LCL"])
     end},
  },
}
