-- Descriptions of the kernel's generic events (libpfm4's perf PMU gives
-- only their enum names), for pmcsh list; the wording follows the kernel's
-- perf_event.h comments; and perf's tool events.  Data only: loaded with
-- loadfile(path, "t", {}).
return {
  name = "generic",
  descriptions = {
    PERF_COUNT_HW_CPU_CYCLES = "CPU cycles (core clock ticks while not halted)",
    PERF_COUNT_HW_INSTRUCTIONS = "instructions retired",
    PERF_COUNT_HW_CACHE_REFERENCES = "cache accesses, usually last-level cache references",
    PERF_COUNT_HW_CACHE_MISSES = "cache misses, usually last-level cache misses",
    PERF_COUNT_HW_BRANCH_INSTRUCTIONS = "branch instructions retired",
    PERF_COUNT_HW_BRANCH_MISSES = "mispredicted branch instructions",
    PERF_COUNT_HW_BUS_CYCLES = "bus cycles, which can differ from total cycles",
    PERF_COUNT_HW_STALLED_CYCLES_FRONTEND = "cycles the front end issued no micro-operations (stalled)",
    PERF_COUNT_HW_STALLED_CYCLES_BACKEND = "cycles the back end retired no micro-operations (stalled)",
    PERF_COUNT_HW_REF_CPU_CYCLES = "reference cycles at a constant rate, unaffected by frequency scaling",
    PERF_COUNT_SW_CPU_CLOCK = "per-cpu high-resolution timer: ns the cpu (or task) was counted",
    PERF_COUNT_SW_TASK_CLOCK = "ns on a cpu of the counted task",
    PERF_COUNT_SW_PAGE_FAULTS = "page faults, minor and major",
    PERF_COUNT_SW_CONTEXT_SWITCHES = "context switches",
    PERF_COUNT_SW_CPU_MIGRATIONS = "migrations of the task to another cpu",
    PERF_COUNT_SW_PAGE_FAULTS_MIN = "minor page faults: no I/O needed",
    PERF_COUNT_SW_PAGE_FAULTS_MAJ = "major page faults: I/O was needed",
    PERF_COUNT_SW_CGROUP_SWITCHES = "context switches to a task in another cgroup",
    PERF_COUNT_SW_ALIGNMENT_FAULTS = "unaligned accesses the kernel fixed up (alignment faults)",
    PERF_COUNT_SW_EMULATION_FAULTS = "instructions the kernel emulated (emulation faults)",
    PERF_COUNT_SW_DUMMY = "counts nothing: a placeholder for sampling's side-band records",
    PERF_COUNT_SW_BPF_OUTPUT = "the output of BPF programs (bpf_perf_event_output), for sampling",
  },
  -- perf's tool events: no counter, the tool measures them itself (pmcsh
  -- stat); time: which of the run's times (pmc.run's elapsed, user, sys)
  tools = {
    duration_time = {time = "elapsed", description = "wall-clock time of the run (the interval with -I), in ns"},
    user_time = {time = "user", description = "user CPU time of the command and its waited-for children " ..
      "(getrusage), in ns"},
    system_time = {time = "sys", description = "system CPU time of the command and its waited-for children " ..
      "(getrusage), in ns"},
  },
}
