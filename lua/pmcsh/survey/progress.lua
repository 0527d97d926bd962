-- The survey's progress line on stderr, when stderr is a terminal: runs
-- done of the total, time elapsed and an estimate of the time left.
local sys = require("pmcsh._sys")

local M = {}

function M.stderr_is_tty()
  return sys.isatty("stderr")
end

-- A function tell(done, total, what) that rewrites the line; tell() clears
-- it (before anything else is written to stderr, and at the end).  Does
-- nothing when not enabled.
function M.new(enabled)
  if not enabled then return function() end end
  local now = sys.now
  local t0 = now()
  return function(done, total, what)
    if done == nil then io.stderr:write("\r\27[K"); io.stderr:flush(); return end
    local el = now() - t0
    local left = done > 0 and el / done * (total - done) or nil
    io.stderr:write(string.format("\r\27[Ksurvey: %d/%d runs, %.0fs elapsed%s%s",
      done, total, el, left and string.format(", ~%.0fs left", left) or "",
      what and ("  " .. what) or ""))
    io.stderr:flush()
  end
end

return M
