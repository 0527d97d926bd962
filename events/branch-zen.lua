-- BRANCH for AMD Zen 3 and Zen 4.  Event codes: AMD's processor
-- programming reference (PMCx0C2 retired branch instructions, PMCx0C3
-- retired mispredicted branches), as libpfm4 encodes them.
return {
  name = "branch-zen",
  models = {"amd64_fam19h_zen3", "amd64_fam19h_zen4"},
  cpu = "AMD Zen 3, Zen 4",
  short = "branch rate and misprediction rate and ratio",
  long = [[Branches and mispredicted branches retired against instructions retired:
the share of instructions that are branches, mispredictions per
instruction, and the share of branches mispredicted (perf's
branch_misprediction_ratio).]],
  events = {"RETIRED_BRANCH_INSTRUCTIONS", "RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED", "RETIRED_INSTRUCTIONS"},
  metrics = {
    {name = "branch rate", events = {"RETIRED_BRANCH_INSTRUCTIONS", "RETIRED_INSTRUCTIONS"},
     fn = function(e) return e["RETIRED_BRANCH_INSTRUCTIONS"] / e["RETIRED_INSTRUCTIONS"] end},
    {name = "branch misprediction rate", events = {"RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED", "RETIRED_INSTRUCTIONS"},
     fn = function(e) return e["RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED"] / e["RETIRED_INSTRUCTIONS"] end},
    {name = "branch misprediction ratio",
     events = {"RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED", "RETIRED_BRANCH_INSTRUCTIONS"},
     fn = function(e) return e["RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED"] / e["RETIRED_BRANCH_INSTRUCTIONS"] end},
  },
}
