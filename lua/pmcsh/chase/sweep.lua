-- pmcsh.chase.sweep: latency versus size (lmbench lat_mem_rd): the size
-- ladder (chase.sizes) and one chase.latency per size on it (chase.sweep).
local C = require("pmcsh._chase")
local doc = require("pmcsh.help").doc
local errors = require("pmcsh.errors")
local format = require("pmcsh.format")
local complete = require("pmcsh.complete")
local engine = require("pmcsh.chase.engine")

local check_opts, size_of, pick, CHAIN_KEYS = engine.check_opts, engine.size_of, engine.pick, engine.CHAIN_KEYS

local M = {}

local OWN_KEYS = {from = true, to = true, per_octave = true, k = true, each = true}   -- beside the chain's
local SWEEP = format.kind("pmcsh.chase_sweep")

M.MAX_PER_OCTAVE = 64

-- What is wrong with a ladder's bounds, or nil: each an integer, 1 <=
-- from <= to, per_octave in 1..64, stride positive (a ladder from 0, or
-- of 2^63 sizes a doubling, would never end).
local function ladder_bounds(from, to, per_octave, stride)
  if math.type(from) ~= "integer" or from < 1 then return "from: a positive size expected" end
  if math.type(to) ~= "integer" or to < from then return "to: a size >= from expected" end
  if math.type(per_octave) ~= "integer" or per_octave < 1 or per_octave > M.MAX_PER_OCTAVE then
    return string.format("per_octave: an integer in 1..%d expected", M.MAX_PER_OCTAVE)
  end
  if math.type(stride) ~= "integer" or stride < 1 then return "stride: a positive size expected" end
  return nil
end

M.sizes = doc(errors.facade("sizes", function(from, to, per_octave, stride)
  local why = ladder_bounds(from, to, per_octave, stride)
  if why then errors.argument("sizes", 1, string.format("%s", why), 1) end
  local out, seen = {}, {}
  local i = 0
  while true do
    local s = math.floor(from * 2 ^ (i / per_octave) + 0.5)
    if s > to then break end
    s = s // stride * stride
    if s >= stride and not seen[s] then seen[s] = true; out[#out + 1] = s end
    i = i + 1
  end
  return out
end), "chase.sizes", [[
chase.sizes(from, to, per_octave, stride) -> the size ladder of chase.sweep and
pmcsh parallelism: geometric from `from` to `to`, per_octave sizes per
doubling (1..64), each rounded down to a multiple of stride, each once.
Bounds out of range raise (1 <= from <= to, integers).]])
local sizes = M.sizes

M.sweep = doc(errors.facade("sweep", function(opts)
  opts = check_opts(opts, "sweep", OWN_KEYS)
  if opts.each ~= nil and type(opts.each) ~= "function" then
    errors.argument("sweep", 1, "each: a function called with each row expected", 1)
  end
  local from = size_of(opts.from or 4096, "from")
  local to = size_of(opts.to or 256 * 2 ^ 20 // 1, "to")
  local po = opts.per_octave or 4
  local stride = size_of(opts.stride, "stride") or engine.default_stride(opts.order) or 64
  local why = ladder_bounds(from, to, po, stride)
  if why then errors.argument("sweep", 1, string.format("%s", why), 1) end
  if opts.chain then errors.argument("sweep", 1, "chain: a sweep builds its own chains", 1) end
  -- the largest chain is checked before the small ones take their time
  local last = pick(opts, CHAIN_KEYS)
  last.size, last.stride = to, stride
  local ok, bad = C.check(last)
  if not ok then errors.argument("sweep", 1, string.format("size %d, stride %d: %s", to, stride, bad), 1) end
  local res = {rows = {}, order = opts.order or "random", stride = stride, pages = opts.pages or "4k"}
  for _, s in ipairs(sizes(from, to, po, stride)) do
    local o = pick(opts, CHAIN_KEYS)
    o.size, o.stride, o.k = s, stride, opts.k
    o.samples, o.sample_ms = opts.samples, opts.sample_ms
    local r, msg, errno = engine.latency(o)
    if not r then return nil, msg, errno end
    res.rows[#res.rows + 1] = {size = r.size, ns = r.ns, median_ns = r.median_ns, samples = r.samples}
    if opts.each then opts.each(res.rows[#res.rows], res) end
  end
  return setmetatable(res, SWEEP)
end), "chase.sweep", [[
chase.sweep{from=4096, to="256M", per_octave=4, order=, stride=, pages=, samples=, sample_ms=, each=}
  -> {rows={{size=bytes, ns=, median_ns=, samples={ns...}}, ...}, order=, stride=, pages=}
Latency versus size (lmbench lat_mem_rd): one chain per size, sizes
geometric from `from` to `to` with per_octave points per doubling (rounded
down to the stride).  The steps of the curve are the caches: compare with
machine.caches().]])

complete.options(M.sweep, engine.option_keys(OWN_KEYS), engine.option_values)

return M
