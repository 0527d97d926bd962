-- Where libpfm4 4.13 encodes an event otherwise than the vendor's own table
-- as perf carries it (the kernel tree's tools/perf/pmu-events/arch/), so a
-- different event would be counted.  pmc.info gives perf's encoding, with
-- `corrected` saying what libpfm4 gave and why; pmc.group refuses the
-- event on such a machine, naming the sysfs form that counts it right.
-- Each entry: the libpfm4 model, libpfm4's event and umask code (config's
-- low 16 bits, recognised by encoding, never by name), perf's config and
-- config1 (MSR_PEBS_FRONTEND, perf's frontend= term), and its source.
-- Data only: loaded with loadfile(path, "t", {}).
return {
  name = "encodings",
  description = "corrections of libpfm4 4.13's encodings, from perf's per-model tables",
  fixes = {
    {model = "spr", libpfm = 0x08c2, config = 0x04c2, config1 = 0x8,
     event = "UOPS_RETIRED:MS", sysfs = "cpu/event=0xc2,umask=0x4,frontend=0x8/",
     why = "libpfm4 puts the MS bit in the umask (0x08) and sets no MSR_PEBS_FRONTEND value",
     source = "linux tools/perf/pmu-events/arch/x86/sapphirerapids/pipeline.json, UOPS_RETIRED.MS: " ..
       "EventCode 0xc2, UMask 0x4, MSRIndex 0x3F7, MSRValue 0x8"},
    {model = "spr", libpfm = 0x07ad, config = 0x40ad, config1 = 0x7,
     event = "INT_MISC:UNKNOWN_BRANCH_CYCLES", sysfs = "cpu/event=0xad,umask=0x40,frontend=0x7/",
     why = "libpfm4 puts the MSR value in the umask (0x07) and sets no MSR_PEBS_FRONTEND value",
     source = "linux tools/perf/pmu-events/arch/x86/sapphirerapids/pipeline.json, " ..
       "INT_MISC.UNKNOWN_BRANCH_CYCLES: EventCode 0xad, UMask 0x40, MSRIndex 0x3F7, MSRValue 0x7"},
  },
}
