-- BRANCH for Intel cores from Skylake to Sapphire Rapids.
-- Event codes: Intel's event lists (the kernel's pmu-events JSON carries
-- them), as libpfm4 encodes them: `pmcsh list -v --pmu MODEL NAME`.
return {
  name = "branch-intel",
  models = {"skl", "skx", "clx", "icl", "icx", "spr"},
  cpu = "Intel Skylake to Sapphire Rapids",
  short = "branch rate and misprediction rate and ratio",
  long = [[Branches and mispredicted branches retired against instructions retired:
the share of instructions that are branches, mispredictions per instruction,
the share of branches mispredicted, and instructions per branch and per
misprediction (perf's IpBranch and IpMispredict).]],
  events = {"BR_INST_RETIRED:ALL_BRANCHES", "BR_MISP_RETIRED:ALL_BRANCHES", "INST_RETIRED:ANY_P",
            "CPU_CLK_UNHALTED:THREAD_P"},
  metrics = {
    {name = "branch rate", events = {"BR_INST_RETIRED:ALL_BRANCHES", "INST_RETIRED:ANY_P"},
     fn = function(e) return e["BR_INST_RETIRED:ALL_BRANCHES"] / e["INST_RETIRED:ANY_P"] end},
    {name = "branch misprediction rate", events = {"BR_MISP_RETIRED:ALL_BRANCHES", "INST_RETIRED:ANY_P"},
     fn = function(e) return e["BR_MISP_RETIRED:ALL_BRANCHES"] / e["INST_RETIRED:ANY_P"] end},
    {name = "branch misprediction ratio", events = {"BR_MISP_RETIRED:ALL_BRANCHES", "BR_INST_RETIRED:ALL_BRANCHES"},
     fn = function(e) return e["BR_MISP_RETIRED:ALL_BRANCHES"] / e["BR_INST_RETIRED:ALL_BRANCHES"] end},
    {name = "instructions per branch", events = {"INST_RETIRED:ANY_P", "BR_INST_RETIRED:ALL_BRANCHES"},
     fn = function(e) return e["INST_RETIRED:ANY_P"] / e["BR_INST_RETIRED:ALL_BRANCHES"] end},
    {name = "instructions per misprediction", events = {"INST_RETIRED:ANY_P", "BR_MISP_RETIRED:ALL_BRANCHES"},
     fn = function(e) return e["INST_RETIRED:ANY_P"] / e["BR_MISP_RETIRED:ALL_BRANCHES"] end},
  },
}
