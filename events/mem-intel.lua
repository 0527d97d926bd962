-- MEM (core side) for Intel cores from Skylake to Sapphire Rapids: what the
-- core asks of the uncore.  Event codes: Intel's event lists, as libpfm4
-- encodes them; Sapphire Rapids names the data-read requests DATA_RD.
-- The memory controllers' own counts are uncore-intel's.
return {
  name = "mem-intel",
  models = {"skl", "skx", "clx", "icl", "icx", "spr"},
  cpu = "Intel Skylake to Sapphire Rapids",
  short = "data reads beyond L2: bandwidth and latency; L3 misses and L2 writebacks",
  long = [[Data read requests the core sends off-core (demand and prefetch, each a
64-byte line) as a bandwidth, their average latency in cycles by Little's
law (requests outstanding each cycle over requests), the L3 misses as a
bandwidth to memory and the dirty lines L2 writes back.]],
  events = {"OFFCORE_REQUESTS:ALL_DATA_RD", "OFFCORE_REQUESTS_OUTSTANDING:ALL_DATA_RD", "LONGEST_LAT_CACHE:MISS",
            "L2_LINES_OUT:NON_SILENT"},
  rename = {
    spr = {["OFFCORE_REQUESTS:ALL_DATA_RD"] = "OFFCORE_REQUESTS:DATA_RD",
           ["OFFCORE_REQUESTS_OUTSTANDING:ALL_DATA_RD"] = "OFFCORE_REQUESTS_OUTSTANDING:DATA_RD"},
  },
  metrics = {
    {name = "off-core data read bandwidth GB/s", unit = "GB/s", events = {"OFFCORE_REQUESTS:ALL_DATA_RD"},
     fn = function(e, c) return e["OFFCORE_REQUESTS:ALL_DATA_RD"] * 64 / c.seconds / 1e9 end},
    {name = "off-core data read latency (cycles)",
     events = {"OFFCORE_REQUESTS_OUTSTANDING:ALL_DATA_RD", "OFFCORE_REQUESTS:ALL_DATA_RD"},
     fn = function(e) return e["OFFCORE_REQUESTS_OUTSTANDING:ALL_DATA_RD"] / e["OFFCORE_REQUESTS:ALL_DATA_RD"] end},
    {name = "memory read bandwidth GB/s (L3 misses)", unit = "GB/s", events = {"LONGEST_LAT_CACHE:MISS"},
     fn = function(e, c) return e["LONGEST_LAT_CACHE:MISS"] * 64 / c.seconds / 1e9 end},
    {name = "L2 writeback bytes per iteration", events = {"L2_LINES_OUT:NON_SILENT"},
     fn = function(e, c) return e["L2_LINES_OUT:NON_SILENT"] * 64 / c.iterations end},
  },
}
