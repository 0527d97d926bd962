-- L2 for AMD Zen 3 and Zen 4.  Event codes: AMD's processor programming
-- reference (PMCx060 requests to L2 group 1, PMCx064 core-to-L2 cacheable
-- request access status), as libpfm4 encodes them.
return {
  name = "l2-zen",
  models = {"amd64_fam19h_zen3", "amd64_fam19h_zen4"},
  cpu = "AMD Zen 3, Zen 4",
  short = "data-cache requests to L2 and their L2 misses",
  long = [[Requests the data cache sends to L2 (reads, reads for ownership, shared
reads, changes to writable) and the data-cache reads that missed L2: the
L2 miss ratio of data reads and their misses per request.]],
  events = {"REQUESTS_TO_L2_GROUP1:RD_BLK_L:RD_BLK_X:LS_RD_BLK_C_S:CHANGE_TO_X",
            "CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C", "RETIRED_INSTRUCTIONS"},
  metrics = {
    {name = "L2 data miss ratio",
     events = {"CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C",
               "REQUESTS_TO_L2_GROUP1:RD_BLK_L:RD_BLK_X:LS_RD_BLK_C_S:CHANGE_TO_X"},
     fn = function(e)
       return e["CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C"] /
              e["REQUESTS_TO_L2_GROUP1:RD_BLK_L:RD_BLK_X:LS_RD_BLK_C_S:CHANGE_TO_X"]
     end},
    {name = "L2 data MPKI", events = {"CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C", "RETIRED_INSTRUCTIONS"},
     fn = function(e)
       return 1000 * e["CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C"] / e["RETIRED_INSTRUCTIONS"]
     end},
    {name = "L2 data request bandwidth GB/s", unit = "GB/s",
     events = {"REQUESTS_TO_L2_GROUP1:RD_BLK_L:RD_BLK_X:LS_RD_BLK_C_S:CHANGE_TO_X"},
     fn = function(e, c)
       return e["REQUESTS_TO_L2_GROUP1:RD_BLK_L:RD_BLK_X:LS_RD_BLK_C_S:CHANGE_TO_X"] * 64 / c.seconds / 1e9
     end},
  },
}
