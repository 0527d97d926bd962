-- FLOPS_DP for Intel cores from Skylake to Sapphire Rapids: DP floating-point
-- operations by width.  Event codes: Intel's event lists (FP_ARITH_INST_RETIRED,
-- 0xc7, one umask per width), as libpfm4 encodes them.  An FMA counts twice
-- in each event, as Intel's lists say; a 512-bit event counts zero on a
-- core without AVX-512.
return {
  name = "flops-dp-intel",
  models = {"skl", "skx", "clx", "icl", "icx", "spr"},
  cpu = "Intel Skylake to Sapphire Rapids",
  short = "DP floating-point operations: scalar, 128, 256 and 512-bit packed",
  long = [[Floating-point instructions retired on double-precision values, scalar and
packed by width; each packed instruction is weighted by its lanes
(128-bit: 2, 256-bit: 4, 512-bit: 8) to give operations, FMA counting twice.
The rate over the run's seconds is GFLOP/s; the packed share says how much
of the work is vectorised.]],
  events = {"FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", "FP_ARITH_INST_RETIRED:128B_PACKED_DOUBLE",
            "FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE", "FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE"},
  metrics = {
    {name = "DP GFLOP/s", unit = "GFLOP/s",
     events = {"FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", "FP_ARITH_INST_RETIRED:128B_PACKED_DOUBLE",
               "FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE", "FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE"},
     fn = function(e, c)
       return (e["FP_ARITH_INST_RETIRED:SCALAR_DOUBLE"] + 2 * e["FP_ARITH_INST_RETIRED:128B_PACKED_DOUBLE"] +
               4 * e["FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE"] + 8 * e["FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE"]) / c.seconds / 1e9
     end},
    {name = "DP flops per iteration",
     events = {"FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", "FP_ARITH_INST_RETIRED:128B_PACKED_DOUBLE",
               "FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE", "FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE"},
     fn = function(e, c)
       return (e["FP_ARITH_INST_RETIRED:SCALAR_DOUBLE"] + 2 * e["FP_ARITH_INST_RETIRED:128B_PACKED_DOUBLE"] +
               4 * e["FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE"] + 8 * e["FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE"]) / c.iterations
     end},
    {name = "DP packed share of operations",
     events = {"FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", "FP_ARITH_INST_RETIRED:128B_PACKED_DOUBLE",
               "FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE", "FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE"},
     fn = function(e)
       local packed = 2 * e["FP_ARITH_INST_RETIRED:128B_PACKED_DOUBLE"] + 4 * e["FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE"] +
                      8 * e["FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE"]
       return packed / (packed + e["FP_ARITH_INST_RETIRED:SCALAR_DOUBLE"])
     end},
  },
}
