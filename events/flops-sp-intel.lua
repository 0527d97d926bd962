-- FLOPS_SP for Intel cores from Skylake to Sapphire Rapids: SP floating-point
-- operations by width.  Event codes: Intel's event lists (FP_ARITH_INST_RETIRED,
-- 0xc7, one umask per width), as libpfm4 encodes them.  An FMA counts twice
-- in each event, as Intel's lists say; a 512-bit event counts zero on a
-- core without AVX-512.
return {
  name = "flops-sp-intel",
  models = {"skl", "skx", "clx", "icl", "icx", "spr"},
  cpu = "Intel Skylake to Sapphire Rapids",
  short = "SP floating-point operations: scalar, 128, 256 and 512-bit packed",
  long = [[Floating-point instructions retired on single-precision values, scalar and
packed by width; each packed instruction is weighted by its lanes
(128-bit: 4, 256-bit: 8, 512-bit: 16) to give operations, FMA counting twice.
The rate over the run's seconds is GFLOP/s; the packed share says how much
of the work is vectorised.]],
  events = {"FP_ARITH_INST_RETIRED:SCALAR_SINGLE", "FP_ARITH_INST_RETIRED:128B_PACKED_SINGLE",
            "FP_ARITH_INST_RETIRED:256B_PACKED_SINGLE", "FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE"},
  metrics = {
    {name = "SP GFLOP/s", unit = "GFLOP/s",
     events = {"FP_ARITH_INST_RETIRED:SCALAR_SINGLE", "FP_ARITH_INST_RETIRED:128B_PACKED_SINGLE",
               "FP_ARITH_INST_RETIRED:256B_PACKED_SINGLE", "FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE"},
     fn = function(e, c)
       return (e["FP_ARITH_INST_RETIRED:SCALAR_SINGLE"] + 4 * e["FP_ARITH_INST_RETIRED:128B_PACKED_SINGLE"] +
               8 * e["FP_ARITH_INST_RETIRED:256B_PACKED_SINGLE"] + 16 * e["FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE"]) / c.seconds / 1e9
     end},
    {name = "SP flops per iteration",
     events = {"FP_ARITH_INST_RETIRED:SCALAR_SINGLE", "FP_ARITH_INST_RETIRED:128B_PACKED_SINGLE",
               "FP_ARITH_INST_RETIRED:256B_PACKED_SINGLE", "FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE"},
     fn = function(e, c)
       return (e["FP_ARITH_INST_RETIRED:SCALAR_SINGLE"] + 4 * e["FP_ARITH_INST_RETIRED:128B_PACKED_SINGLE"] +
               8 * e["FP_ARITH_INST_RETIRED:256B_PACKED_SINGLE"] + 16 * e["FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE"]) / c.iterations
     end},
    {name = "SP packed share of operations",
     events = {"FP_ARITH_INST_RETIRED:SCALAR_SINGLE", "FP_ARITH_INST_RETIRED:128B_PACKED_SINGLE",
               "FP_ARITH_INST_RETIRED:256B_PACKED_SINGLE", "FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE"},
     fn = function(e)
       local packed = 4 * e["FP_ARITH_INST_RETIRED:128B_PACKED_SINGLE"] + 8 * e["FP_ARITH_INST_RETIRED:256B_PACKED_SINGLE"] +
                      16 * e["FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE"]
       return packed / (packed + e["FP_ARITH_INST_RETIRED:SCALAR_SINGLE"])
     end},
  },
}
