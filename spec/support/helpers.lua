-- Helpers shared by the specs.
local paths = require("pmcsh.paths")
local M = {}

M.exe = paths.exe
-- Built with AddressSanitizer (make asan): the specs below adapt to it.
M.sanitized = paths.sanitized

-- The first-touch faults `pages` fresh pages take: lo, hi.  Exactly one a
-- page; under the sanitizer up to 1/8 more, its shadow (a byte per 8 bytes,
-- read by every checked store) faulting in where this process never used
-- those addresses before, none where it did.
function M.touch_faults(pages)
  return pages, M.sanitized and pages * 9 / 8 or pages
end

-- Asserts that `x` faults are those of first touching `pages` pages, within
-- the fraction `rel`.
function M.faults_within(x, pages, rel)
  local lo, hi = M.touch_faults(pages)
  assert(x >= lo * (1 - rel) and x <= hi * (1 + rel), string.format("%s faults not within %.1f%% of %s",
    tostring(x), rel * 100, lo == hi and tostring(lo) or lo .. ".." .. hi .. " (sanitized)"))
end

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

-- The _ENV of function f when it has one (it reads a global), else nil.
local function env_of(f)
  for i = 1, math.huge do
    local name, env = debug.getupvalue(f, i)
    if not name then return nil end
    if name == "_ENV" then return type(env) == "table" and env or nil end
  end
end

-- busted's pending() is a global of the spec file's environment, not of
-- this module's: found through the _ENV of a function of that file.
local function pending_of(f)
  local env = env_of(f)
  return env and type(env.pending) == "function" and env.pending or nil
end

-- The environment busted gives spec files, from the spec file that
-- required this module (its chunk is on the stack now): a spec function
-- that reads no global has no _ENV of its own to find pending through.
local SPEC_ENV
for level = 2, math.huge do
  local info = debug.getinfo(level, "f")
  if not info then break end
  local env = env_of(info.func)
  if env and env ~= _G then SPEC_ENV = env; break end
end

-- The pending of the nearest caller that has one (the spec's own function),
-- else of the spec files' environment.
local function caller_pending()
  for level = 3, math.huge do
    local info = debug.getinfo(level, "f")
    if not info then break end
    local p = pending_of(info.func)
    if p then return p end
  end
  local p = SPEC_ENV and SPEC_ENV.pending
  if type(p) == "function" then return p end
  error("helpers.need: no busted pending() on the stack (called outside a spec?)", 3)
end

-- The scheduler's own account of the calling thread: ns on a cpu and ns
-- waiting to run (/proc/thread-self/schedstat), or nil where there is none.
function M.schedstat()
  local f = io.open("/proc/thread-self/schedstat")
  if not f then return nil end
  local run, wait = f:read("n", "n"); f:close()
  return run, wait
end

-- The one way a spec skips: pending with `reason` (what this host lacks: a
-- PMU, a tool, root, huge pages, a quiet machine) unless `cond` holds.
-- Returns cond, so a spec reads: if not h.need(ok, why) then return end.
-- pending is called in tail position, so busted names the spec's line.
function M.need(cond, reason)
  if cond then return cond end
  return caller_pending()(reason)
end

-- Whether command `cmd` is on PATH: true, or false and "<cmd> is not
-- installed" (for h.need).
function M.have(cmd)
  if os.execute("command -v " .. shquote(cmd) .. " >/dev/null 2>&1") then return true end
  return false, cmd .. " is not installed"
end

-- The time of one cycle of this cpu, measured now: an iteration of
-- pmc.probe's loop (a decrement and a branch back: one cycle by its
-- dependency on the counter, two at most on any core that runs it), on the
-- thread's own clock (task-clock: a preemption does not lengthen it), the
-- best of five runs of 10^7.  What a spec compares a latency with, so that
-- "a few cycles" holds on a machine of any speed.
function M.cycle_ns()
  local pmc = require("pmcsh.pmc")
  local g <close> = assert(pmc.group{"task-clock"})
  local best, n = math.huge, 10000000
  for _ = 1, 5 do
    local r = assert(pmc.probe(g, "loop", n))
    best = math.min(best, r[1].value / n)
  end
  return best
end

-- Whether the specs run as root (uid 0).
function M.is_root()
  local p = assert(io.popen("id -u"))
  local uid = p:read("l")
  p:close()
  return uid == "0"
end

-- The lines of `text`, empty ones left out.
function M.lines(text)
  local t = {}
  for l in text:gmatch("[^\n]+") do t[#t + 1] = l end
  return t
end

-- The fields of `line` between the separators `sep` (plain text), empty
-- ones kept: fields("a,,b", ",") is {"a", "", "b"}.
function M.fields(line, sep)
  local t, i = {}, 1
  while true do
    local j = line:find(sep, i, true)
    t[#t + 1] = line:sub(i, (j or 0) - 1)
    if not j then return t end
    i = j + #sep
  end
end

-- A recipe's JSON lines (--json): the first is the fingerprint's record
-- ({recipe=, fingerprint={host=, ...}}, pmcsh.results.head), checked as
-- such; returns it, the records after it decoded, and their lines.
function M.json_lines(text)
  local cjson = require("cjson")
  local lines = M.lines(text)
  local head = assert(lines[1], "no JSON lines")
  local fp = cjson.decode(head)
  assert(type(fp.fingerprint) == "table" and type(fp.fingerprint.host) == "string",
    "the first JSON line carries no fingerprint: " .. head:sub(1, 200))
  local recs = {}
  for i = 2, #lines do recs[#recs + 1] = cjson.decode(lines[i]) end
  return fp, recs, {table.unpack(lines, 2)}
end

-- perf stat's JSON lines (pmcsh stat -j): every line a record, the first
-- included (no fingerprint's line, unless --fingerprint asked for it).
-- The records and the lines.
function M.perf_json_lines(text)
  local cjson = require("cjson")
  local lines = M.lines(text)
  local recs = {}
  for i, l in ipairs(lines) do recs[i] = cjson.decode(l) end
  return recs, lines
end

-- Writes `text` to `path` (a fresh temporary file when path is nil);
-- returns the path.
function M.write(path, text)
  path = path or os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  return path
end

-- |a - b| relative to b.
function M.rel(a, b)
  return math.abs(a - b) / math.abs(b)
end

-- Whether this user may count the kernel (task-clock, :k events, other
-- processes' threads): root, CAP_PERFMON or kernel.perf_event_paranoid <= 1.
function M.can_count_kernel()
  local g, msg = require("pmcsh.pmc").group{"task-clock"}
  if g then g:close(); return true end
  return false, "counting the kernel is refused here: " .. tostring(msg)
end

-- Whether this user may count cpu-wide (a cpu list target): root,
-- CAP_PERFMON or kernel.perf_event_paranoid <= 0.
function M.can_count_cpu_wide()
  local g, msg = require("pmcsh.pmc").group({"task-clock"}, {cpus = {0}})
  if g then g:close(); return true end
  return false, "cannot count cpu-wide here: " .. tostring(msg)
end

-- `it` for specs that count the kernel: pending with the reason where this
-- user may not.  A spec file: local kit = h.kernel_it(it).
function M.kernel_it(it)
  local ok, why = M.can_count_kernel()
  if ok then return it end
  local file = debug.getinfo(2, "f").func  -- its pending is looked up when the spec runs
  return function(name, _) return it(name, function() pending_of(file)(why) end) end
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
