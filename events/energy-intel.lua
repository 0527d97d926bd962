-- ENERGY for Intel Skylake to Sapphire Rapids: RAPL through the kernel's power PMU, by
-- its sysfs names (/sys/bus/event_source/devices/power/events/), not
-- libpfm4's: the kernel gives every RAPL domain the unit 2^-32 J
-- (energy-*.scale 2.3283064365386962890625e-10).  A domain the part lacks
-- (energy-ram on client parts) is a <not supported> row.
-- Package-wide counters: count them system-wide (stat -a) for the socket.
return {
  name = "energy-intel",
  models = {"skl", "skx", "clx", "icl", "icx", "spr"},
  sysfs = true,
  cpu = "Intel Skylake to Sapphire Rapids",
  short = "package and DRAM energy and power (RAPL)",
  long = [[Energy the package and its DRAM used over the run, from the RAPL counters the
kernel's power PMU exposes, in joules (2^-32 J a count) and as average watts
over the run's seconds.]],
  events = {"power/energy-pkg/", "power/energy-ram/"},
  metrics = {
    {name = "package energy J", unit = "J", events = {"power/energy-pkg/"},
     fn = function(e) return e["power/energy-pkg/"] * 2^-32 end},
    {name = "package power W", unit = "W", events = {"power/energy-pkg/"},
     fn = function(e, c) return e["power/energy-pkg/"] * 2^-32 / c.seconds end},
    {name = "DRAM power W", unit = "W", events = {"power/energy-ram/"},
     fn = function(e, c) return e["power/energy-ram/"] * 2^-32 / c.seconds end},
  },
}
