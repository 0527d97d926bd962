-- Drives pmcsh on a real pseudo-terminal, as a person at a keyboard would.
local sys = require("pmcsh._sys")
local paths = require("pmcsh.paths")

local Term = {}
Term.__index = Term

-- Starts pmcsh (or argv) on a pty with HOME=home.
function Term.start(home, argv)
  argv = argv or {paths.exe}
  local env = {"HOME=" .. home, "TERM=dumb", "PATH=" .. (os.getenv("PATH") or "/usr/bin:/bin")}
  for _, k in ipairs{"ASAN_OPTIONS", "UBSAN_OPTIONS"} do   -- make asan: reports go to its log
    if os.getenv(k) then env[#env + 1] = k .. "=" .. os.getenv(k) end
  end
  local p = assert(sys.spawn_pty(argv, env))
  return setmetatable({p = p, buf = "", seen = ""}, Term)
end

-- Waits until `pattern` (a Lua pattern) appears in the output; returns the
-- output up to the end of the match and keeps the rest.  Errors after
-- `timeout` seconds with what was seen.
function Term:expect(pattern, timeout)
  local deadline = sys.now() + (timeout or 5)
  repeat
    local a, b = self.buf:find(pattern)
    if a then
      local m = self.buf:sub(1, b)
      self.buf = self.buf:sub(b + 1)
      return m
    end
    local s = self.p:read(0.05)
    if s == nil then break end
    self.buf = self.buf .. s
    self.seen = self.seen .. s
  until sys.now() > deadline
  error(string.format("expected %q within %gs; output was:\n%s", pattern, timeout or 5, self.seen), 2)
end

function Term:send(s) self.p:write(s) return self end
function Term:wait() return self.p:wait() end
function Term:close() self.p:close() end

return Term
