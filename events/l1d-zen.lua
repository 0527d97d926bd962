-- L1D for AMD Zen 3 and Zen 4.  Event codes: AMD's processor programming
-- reference (PMCx029 LS dispatch, PMCx044 data-cache fills by source), as
-- libpfm4 encodes them.  Zen 4 renamed the fill sources.
return {
  name = "l1d-zen",
  models = {"amd64_fam19h_zen3", "amd64_fam19h_zen4"},
  cpu = "AMD Zen 3, Zen 4",
  short = "L1 data cache fills from L2 and beyond, per load and store",
  long = [[Data-cache fills (64-byte lines, prefetches included) from the core's L2
and from beyond it, against loads and stores dispatched; the fill bandwidth.]],
  events = {"LS_DISPATCH:LD_DISPATCH", "LS_DISPATCH:STORE_DISPATCH", "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:LCL_L2",
            "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:INT_CACHE:EXT_CACHE_LCL:MEM_IO_LCL:EXT_CACHE_RMT:MEM_IO_RMT"},
  rename = {amd64_fam19h_zen4 = {
    ["ANY_DATA_CACHE_FILLS_FROM_SYSTEM:INT_CACHE:EXT_CACHE_LCL:MEM_IO_LCL:EXT_CACHE_RMT:MEM_IO_RMT"] =
      "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:LOCAL_CCX:NEAR_CACHE_NEAR_FAR:DRAM_IO_NEAR:FAR_CACHE_NEAR_FAR:DRAM_IO_FAR",
  }},
  metrics = {
    {name = "L1D fills per load and store",
     events = {"ANY_DATA_CACHE_FILLS_FROM_SYSTEM:LCL_L2",
               "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:INT_CACHE:EXT_CACHE_LCL:MEM_IO_LCL:EXT_CACHE_RMT:MEM_IO_RMT",
               "LS_DISPATCH:LD_DISPATCH", "LS_DISPATCH:STORE_DISPATCH"},
     fn = function(e)
       return (e["ANY_DATA_CACHE_FILLS_FROM_SYSTEM:LCL_L2"] +
               e["ANY_DATA_CACHE_FILLS_FROM_SYSTEM:INT_CACHE:EXT_CACHE_LCL:MEM_IO_LCL:EXT_CACHE_RMT:MEM_IO_RMT"]) /
              (e["LS_DISPATCH:LD_DISPATCH"] + e["LS_DISPATCH:STORE_DISPATCH"])
     end},
    {name = "L1D fill bandwidth GB/s", unit = "GB/s",
     events = {"ANY_DATA_CACHE_FILLS_FROM_SYSTEM:LCL_L2",
               "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:INT_CACHE:EXT_CACHE_LCL:MEM_IO_LCL:EXT_CACHE_RMT:MEM_IO_RMT"},
     fn = function(e, c)
       return (e["ANY_DATA_CACHE_FILLS_FROM_SYSTEM:LCL_L2"] +
               e["ANY_DATA_CACHE_FILLS_FROM_SYSTEM:INT_CACHE:EXT_CACHE_LCL:MEM_IO_LCL:EXT_CACHE_RMT:MEM_IO_RMT"]) *
              64 / c.seconds / 1e9
     end},
    {name = "share of fills from beyond L2",
     events = {"ANY_DATA_CACHE_FILLS_FROM_SYSTEM:LCL_L2",
               "ANY_DATA_CACHE_FILLS_FROM_SYSTEM:INT_CACHE:EXT_CACHE_LCL:MEM_IO_LCL:EXT_CACHE_RMT:MEM_IO_RMT"},
     fn = function(e)
       local far = e["ANY_DATA_CACHE_FILLS_FROM_SYSTEM:INT_CACHE:EXT_CACHE_LCL:MEM_IO_LCL:EXT_CACHE_RMT:MEM_IO_RMT"]
       return far / (far + e["ANY_DATA_CACHE_FILLS_FROM_SYSTEM:LCL_L2"])
     end},
  },
}
