-- ENERGY for AMD Zen 3, Zen 4: RAPL through the kernel's power PMU, by
-- its sysfs names (/sys/bus/event_source/devices/power/events/), not
-- libpfm4's: the kernel gives every RAPL domain the unit 2^-32 J
-- (energy-*.scale 2.3283064365386962890625e-10).
-- The package domain only: the cores' domain is per core.
-- Package-wide counters: count them system-wide (stat -a) for the socket.
return {
  name = "energy-amd",
  models = {"amd64_fam19h_zen3", "amd64_fam19h_zen4"},
  sysfs = true,
  cpu = "AMD Zen 3, Zen 4",
  short = "package energy and power (RAPL)",
  long = [[Energy the package used over the run, from the RAPL counters the
kernel's power PMU exposes, in joules (2^-32 J a count) and as average watts
over the run's seconds.]],
  events = {"power/energy-pkg/"},
  metrics = {
    {name = "package energy J", unit = "J", events = {"power/energy-pkg/"},
     fn = function(e) return e["power/energy-pkg/"] * 2^-32 end},
    {name = "package power W", unit = "W", events = {"power/energy-pkg/"},
     fn = function(e, c) return e["power/energy-pkg/"] * 2^-32 / c.seconds end},

  },
}
