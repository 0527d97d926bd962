-- Top-down level 1 for Intel Ice Lake, Ice Lake-SP (5-wide allocation) and
-- Sapphire Rapids (6-wide), on general counters: TOPDOWN.SLOTS_P counts the
-- issue slots.  perf computes the same level from the PERF_METRICS register
-- (topdown-retiring, -fe-bound, ...; tools/perf/pmu-events/arch/x86/
-- icelake/icl-metrics.json, sapphirerapids/spr-metrics.json), whose fractions
-- are of the same slots; the front end's share, as there, leaves out the
-- uops the front end dropped (INT_MISC.UOP_DROPPING).  Event codes: Intel's
-- event lists, as libpfm4 encodes them.
return {
  name = "topdown-icl",
  models = {"icl", "icx", "spr"},
  cpu = "Intel Ice Lake, Ice Lake-SP, Sapphire Rapids",
  -- the models differ only in their allocation width, the issue slots of a
  -- cycle: each metric's fn(e, ctx, k) reads it as k.width
  constants = {icl = {width = 5}, icx = {width = 5}, spr = {width = 6}},
  short = "top-down level 1: retiring, bad speculation, front-end and back-end bound",
  long = [[Issue slots (5 a cycle on Ice Lake, 6 on Sapphire Rapids, counted by
TOPDOWN.SLOTS_P).  Retiring: slots that retired a uop.  Bad speculation: slots
issued and never retired plus a cycle's slots per cycle of recovery.  Front-end bound: slots the front end delivered nothing
to, less the uops it dropped.  Back-end bound: the rest.  The four add up
to 1.]],
  events = {"TOPDOWN:SLOTS_P", "UOPS_ISSUED:ANY", "UOPS_RETIRED:SLOTS", "INT_MISC:RECOVERY_CYCLES",
            "IDQ_UOPS_NOT_DELIVERED:CORE", "INT_MISC:UOP_DROPPING"},
  metrics = {
    {name = "retiring", events = {"UOPS_RETIRED:SLOTS", "TOPDOWN:SLOTS_P"},
     fn = function(e) return e["UOPS_RETIRED:SLOTS"] / e["TOPDOWN:SLOTS_P"] end},
    {name = "bad speculation",
     events = {"UOPS_ISSUED:ANY", "UOPS_RETIRED:SLOTS", "INT_MISC:RECOVERY_CYCLES", "TOPDOWN:SLOTS_P"},
     fn = function(e, _, k)
       return (e["UOPS_ISSUED:ANY"] - e["UOPS_RETIRED:SLOTS"] + k.width * e["INT_MISC:RECOVERY_CYCLES"]) /
         e["TOPDOWN:SLOTS_P"]
     end},
    {name = "front-end bound", events = {"IDQ_UOPS_NOT_DELIVERED:CORE", "INT_MISC:UOP_DROPPING", "TOPDOWN:SLOTS_P"},
     fn = function(e)
       return (e["IDQ_UOPS_NOT_DELIVERED:CORE"] - e["INT_MISC:UOP_DROPPING"]) / e["TOPDOWN:SLOTS_P"]
     end},
    {name = "back-end bound",
     events = {"IDQ_UOPS_NOT_DELIVERED:CORE", "INT_MISC:UOP_DROPPING", "UOPS_ISSUED:ANY", "INT_MISC:RECOVERY_CYCLES",
               "TOPDOWN:SLOTS_P"},
     fn = function(e, _, k)
       return 1 - (e["IDQ_UOPS_NOT_DELIVERED:CORE"] - e["INT_MISC:UOP_DROPPING"] + e["UOPS_ISSUED:ANY"] +
                   k.width * e["INT_MISC:RECOVERY_CYCLES"]) / e["TOPDOWN:SLOTS_P"]
     end},
  },
}
