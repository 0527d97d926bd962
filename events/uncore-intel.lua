-- Intel integrated memory controllers: CAS commands (64-byte transfers).
-- The encodings come from the kernel's sysfs events (with their .scale and
-- .unit, 6.103515625e-5 MiB = 64 bytes); the *_terms are used only where a
-- kernel lacks the named event.
return {
  name = "uncore-intel",
  description = "Intel iMC read/write CAS counts",
  controllers = {
    {pmu = "^uncore_imc_%d+$", read = "cas_count_read", write = "cas_count_write",
     read_terms = "event=0x04,umask=0x03", write_terms = "event=0x04,umask=0x0c",
     bytes_per_count = 64,
     desc = "server iMC channels (Skylake-SP..): one PMU per channel, cpumask one cpu per socket"},
    {pmu = "^uncore_imc$", read = "data_reads", write = "data_writes", bytes_per_count = 64,
     desc = "client iMC free-running counters (Skylake..Tiger Lake)"},
    {pmu = "^uncore_imc_free_running_%d+$", read = "data_read", write = "data_write", bytes_per_count = 64,
     desc = "client iMC free-running counters (Alder Lake..)"},
  },
}
