-- FLOPS for AMD Zen 3 and Zen 4: floating-point operations retired
-- (PMCx003 in AMD's processor programming reference: adds, multiplies,
-- divides, FMA counting 2; Zen 4 adds bfloat16 MACs), as libpfm4 encodes
-- them.  Zen's counter does not tell double from single precision, nor
-- scalar from packed: a single group for both, unlike Intel's.
return {
  name = "flops-zen",
  models = {"amd64_fam19h_zen3", "amd64_fam19h_zen4"},
  cpu = "AMD Zen 3, Zen 4",
  short = "floating-point operations (DP and SP together, all widths)",
  long = [[Floating-point operations retired by SSE and AVX instructions, every
lane counted (a 256-bit double add is 4), double and single precision
together: GFLOP/s over the run's seconds and per iteration.  The counter
can count more than one per cycle; perf merges it across counters.]],
  events = {"RETIRED_SSE_AVX_FLOPS:ANY", "CYCLES_NOT_IN_HALT"},
  metrics = {
    {name = "GFLOP/s", unit = "GFLOP/s", events = {"RETIRED_SSE_AVX_FLOPS:ANY"},
     fn = function(e, c) return e["RETIRED_SSE_AVX_FLOPS:ANY"] / c.seconds / 1e9 end},
    {name = "flops per iteration", events = {"RETIRED_SSE_AVX_FLOPS:ANY"},
     fn = function(e, c) return e["RETIRED_SSE_AVX_FLOPS:ANY"] / c.iterations end},
    {name = "flops per cycle", events = {"RETIRED_SSE_AVX_FLOPS:ANY", "CYCLES_NOT_IN_HALT"},
     fn = function(e) return e["RETIRED_SSE_AVX_FLOPS:ANY"] / e["CYCLES_NOT_IN_HALT"] end},
  },
}
