-- perf's metric group names (perf list metricgroups; perf's
-- tools/perf/pmu-events/arch/x86/*/*metrics.json and amdzen*/*.json) that
-- ask a question a group of events/ answers, each with those groups: -M
-- takes the first that fits this machine, else the first.  Data only:
-- loaded with loadfile(path, "t", {}).
return {
  name = "perf-metricgroups",
  description = "perf's -M names mapped to events/ groups",
  map = {
    TopdownL1 = {"topdown-icl", "topdown-skl", "topdown-zen4"},   -- Intel's level 1
    TmaL1 = {"topdown-icl", "topdown-skl", "topdown-zen4"},       -- the same, as perf's TMA names it
    PipelineL1 = {"topdown-zen4", "topdown-icl", "topdown-skl"},  -- AMD Zen 4's level 1
    Branches = {"branch-intel", "branch-zen"},
    branch_prediction = {"branch-zen", "branch-intel"},           -- AMD's
    l2_cache = {"l2-zen", "l2-intel"},
    l3_cache = {"l3-zen", "l3-intel"},
    tlb = {"tlb-zen", "tlb-intel"},
    MemoryTLB = {"tlb-intel", "tlb-zen"},
  },
}
