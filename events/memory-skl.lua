-- The memory group for Intel Skylake (libpfm4 PMU "skl"): one question,
-- "where do the loop's bytes come from?", per LIKWID's group model.
-- metrics: Lua functions over event values (e) and the run (c: iterations,
-- bytes, seconds), evaluated by pmcsh.metrics after the read.
return {
  name = "memory-skl",
  models = {"skl"},
  cpu = "Intel Skylake",
  short = "L1/L2/L3 line traffic and demand-read latency",
  long = [[Lines brought into L1 and L2, L3 misses, and the demand-read latency by
Little's law (outstanding requests / requests).  On a STREAM loop with 8-byte
elements a line is 8 iterations: 1/8 line per array per iteration.]],
  events = {
    "CPU_CLK_UNHALTED:THREAD_P", "L1D:REPLACEMENT", "L2_LINES_IN:ALL", "LONGEST_LAT_CACHE:MISS",
    "OFFCORE_REQUESTS:DEMAND_DATA_RD", "OFFCORE_REQUESTS_OUTSTANDING:DEMAND_DATA_RD",
  },
  metrics = {
    {name = "L1 lines in per iteration", events = {"L1D:REPLACEMENT"},
     fn = function(e, c) return e["L1D:REPLACEMENT"] / c.iterations end},
    {name = "L2 bandwidth GB/s", events = {"L2_LINES_IN:ALL"},
     fn = function(e, c) return e["L2_LINES_IN:ALL"] * 64 / c.seconds / 1e9 end},
    {name = "L3 miss bytes per STREAM byte", events = {"LONGEST_LAT_CACHE:MISS"},
     fn = function(e, c) return e["LONGEST_LAT_CACHE:MISS"] * 64 / c.bytes end},
    {name = "demand read latency (cycles)",
     events = {"OFFCORE_REQUESTS_OUTSTANDING:DEMAND_DATA_RD", "OFFCORE_REQUESTS:DEMAND_DATA_RD"},
     fn = function(e) return e["OFFCORE_REQUESTS_OUTSTANDING:DEMAND_DATA_RD"] / e["OFFCORE_REQUESTS:DEMAND_DATA_RD"] end},
  },
}
