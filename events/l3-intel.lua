-- L3 (core side) for Intel cores from Skylake to Sapphire Rapids.
-- Event codes: Intel's event lists (the kernel's pmu-events JSON carries
-- them), as libpfm4 encodes them: `pmcsh list -v --pmu MODEL NAME`.
-- libpfm4 spells the reference umask REFERENCES on Ice Lake.
return {
  name = "l3-intel",
  models = {"skl", "skx", "clx", "icl", "icx", "spr"},
  cpu = "Intel Skylake to Sapphire Rapids",
  short = "last-level cache references and misses, L3 MPKI",
  long = [[The core's requests to the last-level cache and those that missed it
(demand, prefetch to L2 included), as a miss ratio and a miss bandwidth
(64 bytes a miss); loads retired that hit or missed L3, and the misses per
thousand instructions (perf's L3MPKI).  The uncore's view of memory traffic
is in uncore-intel.]],
  events = {"LONGEST_LAT_CACHE:REFERENCE", "LONGEST_LAT_CACHE:MISS", "MEM_LOAD_RETIRED:L3_HIT",
            "MEM_LOAD_RETIRED:L3_MISS", "INST_RETIRED:ANY_P"},
  rename = {
    icl = {["LONGEST_LAT_CACHE:REFERENCE"] = "LONGEST_LAT_CACHE:REFERENCES"},
    icx = {["LONGEST_LAT_CACHE:REFERENCE"] = "LONGEST_LAT_CACHE:REFERENCES"},
  },
  metrics = {
    {name = "L3 miss ratio", events = {"LONGEST_LAT_CACHE:MISS", "LONGEST_LAT_CACHE:REFERENCE"},
     fn = function(e) return e["LONGEST_LAT_CACHE:MISS"] / e["LONGEST_LAT_CACHE:REFERENCE"] end},
    {name = "L3 miss bandwidth GB/s", unit = "GB/s", events = {"LONGEST_LAT_CACHE:MISS"},
     fn = function(e, c) return e["LONGEST_LAT_CACHE:MISS"] * 64 / c.seconds / 1e9 end},
    {name = "L3 load hit ratio", events = {"MEM_LOAD_RETIRED:L3_HIT", "MEM_LOAD_RETIRED:L3_MISS"},
     fn = function(e)
       local hit = e["MEM_LOAD_RETIRED:L3_HIT"]
       return hit / (hit + e["MEM_LOAD_RETIRED:L3_MISS"])
     end},
    {name = "L3 MPKI", events = {"MEM_LOAD_RETIRED:L3_MISS", "INST_RETIRED:ANY_P"},
     fn = function(e) return 1000 * e["MEM_LOAD_RETIRED:L3_MISS"] / e["INST_RETIRED:ANY_P"] end},
  },
}
