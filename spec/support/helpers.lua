-- Helpers shared by the specs.
local paths = require("pmcsh.paths")
local M = {}

M.exe = paths.exe

local function shquote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end
M.shquote = shquote

local function slurp(path)
  local f = io.open(path, "rb")
  if not f then return "" end
  local s = f:read("a")
  f:close()
  return s
end
M.slurp = slurp

-- Runs the pmcsh binary with `args` (a list), optional stdin text and env
-- prefix; returns {code=, out=, err=}.
function M.run(args, opts)
  opts = opts or {}
  local cmd = {}
  for _, a in ipairs(args) do cmd[#cmd + 1] = shquote(a) end
  local errf, inf = os.tmpname(), os.tmpname()
  local f = assert(io.open(inf, "wb")); f:write(opts.stdin or ""); f:close()
  local line = (opts.env or "") .. " " .. shquote(M.exe) .. " " .. table.concat(cmd, " ")
    .. " <" .. inf .. " 2>" .. errf
  local p = assert(io.popen(line, "r"))
  local out = p:read("a")
  local _, _, code = p:close()
  local err = slurp(errf)
  os.remove(errf); os.remove(inf)
  return {code = code, out = out, err = err}
end

-- Marks the calling spec pending with `reason` unless `cond` holds; returns
-- cond, so a spec reads: if not helpers.require(ok, why) then return end.
-- busted's pending lives in the spec file's environment, found through the
-- caller's _ENV.
function M.require(cond, reason)
  if cond then return cond end
  local caller = debug.getinfo(2, "f").func
  for i = 1, math.huge do
    local name, env = debug.getupvalue(caller, i)
    if not name then break end
    if name == "_ENV" and type(env) == "table" and env.pending then env.pending(reason) end
  end
  error("helpers.require: no busted pending in the caller's environment", 2)
end

-- Whether this user may count the kernel (task-clock, :k events, other
-- processes' threads): root, CAP_PERFMON or kernel.perf_event_paranoid <= 1.
function M.can_count_kernel()
  local g, msg = require("pmcsh.pmc").group{"task-clock"}
  if g then g:close(); return true end
  return false, "counting the kernel is refused here: " .. tostring(msg)
end

-- `it` for specs that count the kernel: pending with the reason where this
-- user may not.  A spec file: local kit = helpers.kernel_it(it, function(why)
-- pending(why) end), pending looked up when the spec runs.
function M.kernel_it(it, pending)
  local ok, why = M.can_count_kernel()
  if ok then return it end
  return function(name, _) return it(name, function() pending(why) end) end
end

-- Writes one line to path, making its directories: a file of a fake sysfs tree.
function M.sysfs_write(path, text)
  os.execute("mkdir -p '" .. path:match("^(.*)/[^/]*$") .. "'")
  local f = assert(io.open(path, "w"))
  f:write(text, "\n")
  f:close()
end

function M.tmpdir()
  local p = assert(io.popen("mktemp -d"))
  local d = p:read("l"); p:close()
  return d
end

return M
