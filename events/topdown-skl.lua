-- Top-down level 1 for Skylake, Skylake-SP and Cascade Lake (4-wide issue):
-- Intel's top-down method as perf's skylake/skylakex metrics write it
-- (tools/perf/pmu-events/arch/x86/skylake/skl-metrics.json, tma_*_bound,
-- for one thread per core: no SMT halving).  Event codes: Intel's event
-- lists, as libpfm4 encodes them.
return {
  name = "topdown-skl",
  models = {"skl", "skx", "clx"},
  cpu = "Intel Skylake, Skylake-SP, Cascade Lake",
  short = "top-down level 1: retiring, bad speculation, front-end and back-end bound",
  long = [[Each cycle offers 4 issue slots.  Retiring: slots that retired a uop.  Bad
speculation: slots issued and never retired plus 4 per cycle of recovery.
Front-end bound: slots the front end delivered nothing to.  Back-end bound:
the rest.  The four add up to 1.  With SMT on, perf halves the core's
recovery cycles (INT_MISC.RECOVERY_CYCLES_ANY / 2); this group counts one
thread.]],
  events = {"CPU_CLK_UNHALTED:THREAD_P", "UOPS_ISSUED:ANY", "UOPS_RETIRED:RETIRE_SLOTS", "INT_MISC:RECOVERY_CYCLES",
            "IDQ_UOPS_NOT_DELIVERED:CORE"},
  metrics = {
    {name = "retiring", events = {"UOPS_RETIRED:RETIRE_SLOTS", "CPU_CLK_UNHALTED:THREAD_P"},
     fn = function(e) return e["UOPS_RETIRED:RETIRE_SLOTS"] / (4 * e["CPU_CLK_UNHALTED:THREAD_P"]) end},
    {name = "bad speculation",
     events = {"UOPS_ISSUED:ANY", "UOPS_RETIRED:RETIRE_SLOTS", "INT_MISC:RECOVERY_CYCLES", "CPU_CLK_UNHALTED:THREAD_P"},
     fn = function(e)
       return (e["UOPS_ISSUED:ANY"] - e["UOPS_RETIRED:RETIRE_SLOTS"] + 4 * e["INT_MISC:RECOVERY_CYCLES"]) /
              (4 * e["CPU_CLK_UNHALTED:THREAD_P"])
     end},
    {name = "front-end bound", events = {"IDQ_UOPS_NOT_DELIVERED:CORE", "CPU_CLK_UNHALTED:THREAD_P"},
     fn = function(e) return e["IDQ_UOPS_NOT_DELIVERED:CORE"] / (4 * e["CPU_CLK_UNHALTED:THREAD_P"]) end},
    {name = "back-end bound",
     events = {"IDQ_UOPS_NOT_DELIVERED:CORE", "UOPS_ISSUED:ANY", "INT_MISC:RECOVERY_CYCLES", "CPU_CLK_UNHALTED:THREAD_P"},
     fn = function(e)
       local slots = 4 * e["CPU_CLK_UNHALTED:THREAD_P"]
       return 1 - (e["IDQ_UOPS_NOT_DELIVERED:CORE"] + e["UOPS_ISSUED:ANY"] + 4 * e["INT_MISC:RECOVERY_CYCLES"]) / slots
     end},
  },
}
