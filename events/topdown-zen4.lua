-- Top-down level 1 for AMD Zen 4 (6 dispatch slots a cycle), as AMD's
-- pipeline utilisation and perf's amdzen4 metrics write it
-- (tools/perf/pmu-events/arch/x86/amdzen4/pipeline.json: total_dispatch_slots,
-- frontend_bound, bad_speculation, backend_bound, smt_contention,
-- retiring).  Event codes: AMD's processor programming reference (PMCx1A0
-- no dispatch per slot, PMCx0AA source of ops dispatched, PMCx0C1 retired
-- ops), as libpfm4 encodes them.  Zen 3 has no such counter.
return {
  name = "topdown-zen4",
  models = {"amd64_fam19h_zen4"},
  cpu = "AMD Zen 4",
  short = "top-down level 1: retiring, bad speculation, front-end and back-end bound",
  long = [[Each cycle offers 6 dispatch slots.  Front-end bound: slots with no op
from the front end.  Back-end bound: slots the back end refused.  SMT
contention: slots the other thread took.  Bad speculation: ops dispatched
and never retired.  Retiring: ops retired.  The five add up to 1.]],
  events = {"CYCLES_NOT_IN_HALT", "DISPATCH_STALLS_1:FE_NO_OPS", "DISPATCH_STALLS_1:BE_STALLS",
            "DISPATCH_STALLS_1:SMT_CONTENTION", "OPS_SOURCE_DISPATCHED_FROM_DECODER:DECODER:OPCACHE:LOOP_BUFFER",
            "RETIRED_OPS"},
  metrics = {
    {name = "front-end bound", events = {"DISPATCH_STALLS_1:FE_NO_OPS", "CYCLES_NOT_IN_HALT"},
     fn = function(e) return e["DISPATCH_STALLS_1:FE_NO_OPS"] / (6 * e["CYCLES_NOT_IN_HALT"]) end},
    {name = "bad speculation",
     events = {"OPS_SOURCE_DISPATCHED_FROM_DECODER:DECODER:OPCACHE:LOOP_BUFFER", "RETIRED_OPS", "CYCLES_NOT_IN_HALT"},
     fn = function(e)
       return (e["OPS_SOURCE_DISPATCHED_FROM_DECODER:DECODER:OPCACHE:LOOP_BUFFER"] - e["RETIRED_OPS"]) /
              (6 * e["CYCLES_NOT_IN_HALT"])
     end},
    {name = "back-end bound", events = {"DISPATCH_STALLS_1:BE_STALLS", "CYCLES_NOT_IN_HALT"},
     fn = function(e) return e["DISPATCH_STALLS_1:BE_STALLS"] / (6 * e["CYCLES_NOT_IN_HALT"]) end},
    {name = "SMT contention", events = {"DISPATCH_STALLS_1:SMT_CONTENTION", "CYCLES_NOT_IN_HALT"},
     fn = function(e) return e["DISPATCH_STALLS_1:SMT_CONTENTION"] / (6 * e["CYCLES_NOT_IN_HALT"]) end},
    {name = "retiring", events = {"RETIRED_OPS", "CYCLES_NOT_IN_HALT"},
     fn = function(e) return e["RETIRED_OPS"] / (6 * e["CYCLES_NOT_IN_HALT"]) end},
  },
}
