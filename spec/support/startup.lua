-- Start-up as a user sees it, in interleaved pairs: pmcsh -e '' against
-- lua5.4 -e '', and pmcsh stat -e task-clock -- true against perf stat's.
-- Each command runs as a child of this one (pmc.run: fork and exec, no
-- shell), A then B, A then B ...; printed: each side's median wall time
-- (exec to exit) and CPU time (its task-clock), and the median of the
-- pairs' ratios, so that a busy machine slows both sides alike.  The
-- commands' own output goes to stderr:
--     pmcsh spec/support/startup.lua [PAIRS] 2>/dev/null     (default 200)
local statistics = require("pmcsh.statistics")

local PAIRS = tonumber(arg[1]) or 200
local exe = require("pmcsh.paths").exe

-- wall and CPU seconds of one run of cmd
local function run(cmd)
  local reading, info = assert(pmc.run{events = {"task-clock"}, cmd = cmd})
  assert(info.status == 0, table.concat(cmd, " ") .. ": status " .. tostring(info.status))
  return info.elapsed, reading[1].value * 1e-9
end

local function report(name, a, b, n)
  run(a); run(b)   -- the page cache warmed
  local s = {wall_a = {}, wall_b = {}, cpu_a = {}, cpu_b = {}, wall = {}, cpu = {}}
  for i = 1, n do
    s.wall_a[i], s.cpu_a[i] = run(a)
    s.wall_b[i], s.cpu_b[i] = run(b)
    s.wall[i], s.cpu[i] = s.wall_a[i] / s.wall_b[i], s.cpu_a[i] / s.cpu_b[i]
  end
  local m = statistics.median
  print(string.format("%s, %d interleaved pairs, medians:\n  wall %6.2f ms against %6.2f ms, ratio %.2f\n" ..
    "  cpu  %6.2f ms against %6.2f ms, ratio %.2f", name, n, 1e3 * m(s.wall_a), 1e3 * m(s.wall_b), m(s.wall),
    1e3 * m(s.cpu_a), 1e3 * m(s.cpu_b), m(s.cpu)))
end

report("pmcsh -e '' against lua5.4 -e ''", {exe, "-e", ""}, {"lua5.4", "-e", ""}, PAIRS)
report("pmcsh stat -e task-clock -- true against perf stat -e task-clock -- true",
  {exe, "stat", "-e", "task-clock", "--", "true"}, {"perf", "stat", "-e", "task-clock", "--", "true"}, PAIRS)
