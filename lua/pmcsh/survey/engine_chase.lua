-- The survey's pointer-chase workload: one iteration is one dependent
-- load; the chain and the sample length kept in the header.  An engine of
-- pmcsh.survey.workloads: its names, its columns (plain data a renderer
-- reads) and its workloads (the columns with the runs that measure them).
local chase_module = require("pmcsh.chase")
local chase_C = require("pmcsh._chase")
local D = require("pmcsh.survey.defaults")
local errors = require("pmcsh.errors")
local options = require("pmcsh.options")

local M = {}


local chase_engine = {unit = "dependent load"}
M.engine = chase_engine

function chase_engine.names() return {"chase"} end

-- "ORDER:SIZE[:STRIDE]", any part left out taking its default: random,
-- 256M, and the order's own stride (chase.default_stride: 64 for random,
-- 256 for page and tlb).  "random:256M", "64M", "page:64M:128".
-- Returns {order=, size=, stride=} or nil, message.
function M.parse_chase(spec)
  local chase = chase_module
  local c = {order = D.chase.order, size = D.chase.size}
  if type(spec) == "table" then
    for k, v in pairs(spec) do c[k] = v end
    c.stride = c.stride or chase.default_stride(c.order)
    return c
  end
  local orders, names = {}, {}
  for _, o in ipairs(chase.orders()) do orders[o.name] = true; names[#names + 1] = o.name end
  table.sort(names)
  local parse_size = options.parse_size
  local sizes = 0
  for part in ((spec or "") .. ":"):gmatch("([^:]*):") do
    if orders[part] then c.order = part
    elseif spec ~= nil and spec ~= "" then
      local n = parse_size(part)
      if not n or n <= 0 then
        return nil, string.format("bad chase %q: %q is neither an order (%s) nor a size (256M, 4K)",
          spec, part, table.concat(names, ", "))
      end
      sizes = sizes + 1
      if sizes == 1 then c.size = n elseif sizes == 2 then c.stride = n
      else return nil, string.format("bad chase %q: ORDER:SIZE[:STRIDE] expected", spec) end
    end
  end
  c.stride = c.stride or chase.default_stride(c.order)
  -- the chain this asks for, checked as chase.chain would, before anything runs
  local ok, why = pcall(chase_C.check, {size = c.size, stride = c.stride, order = c.order})
  if not ok then
    return nil, string.format("bad chase %q: %s", spec, errors.message(why))
  end
  return c
end

function M.chase_text(c)
  local size = c.size % 2^20 == 0 and string.format("%d MiB", c.size // 2^20)
    or string.format("%d KiB", c.size // 1024)
  return string.format("%s order over %s, %d-byte elements", c.order, size, c.stride)
end

-- --chase alone adds the chase to the kernels; the header keeps the chain
-- and the sample length.
function chase_engine.configure(opt, hdr, usage)
  local has = false
  for _, k in ipairs(hdr.kernels) do has = has or k == "chase" end
  if opt.chase and not has then hdr.kernels[#hdr.kernels + 1] = "chase"; has = true end
  if not has then return end
  local c, err = M.parse_chase(opt.chase)
  if not c then usage(err) end
  hdr.chase, hdr.sample_ms = c, opt.sample_ms or D.sample_ms
end

-- A header read from a file: the chase's chain, which the note and the runs
-- read (pmcsh.results checks only that what is there has its shape).
function chase_engine.check(hdr)
  for _, k in ipairs(hdr.kernels) do
    if k == "chase" and not (hdr.chase and hdr.chase.stride) then
      return nil, "kernel chase without its chain (chase.size and chase.stride)"
    end
  end
  if hdr.chase then   -- the chain, checked as chase.chain checks it
    local c = hdr.chase
    local ok, why = pcall(chase_C.check, {size = c.size, stride = c.stride, order = c.order})
    if not ok then return nil, "chase: " .. errors.message(why) end
  end
  return true
end

-- The chase's note under the table: the chain, the samples, what a value is.
local function note(h)
  return string.format("chase: %s, %s pages, %d samples of ~%d ms per run; " ..
    "one iteration = one dependent load: value = count / loads of each sample (then the statistic over the " ..
    "samples); ns per iteration: the median sample", M.chase_text(h.chase),
    tostring(h.pages), h.reps, h.sample_ms or D.sample_ms)
end

function chase_engine.columns(hdr)
  return {{name = "chase", title = "Chase", unit = chase_engine.unit, what = "a pointer chase",
    note = hdr.chase and note(hdr)}}
end

-- reps samples of sample_ms each over one chain, built (and touched)
-- once; the group (if any) around each sample only
function chase_engine.workloads(hdr, env, cols)
  local chain
  cols[1].run = function(group, reps)
    local chase = chase_module
    local c = hdr.chase
    if not chain then
      local err, errno
      chain, err, errno = chase.chain{size = c.size, order = c.order, stride = c.stride, pages = hdr.pages}
      if not chain then return nil, err, errno end
    end
    local r, err, errno = chase.latency{chain = chain, samples = reps, sample_ms = hdr.sample_ms, group = group}
    if not r then return nil, err, errno end
    local times = {}
    local per = r.loads_per_sample
    for i, ns in ipairs(r.samples) do times[i] = ns * per * 1e-9 end
    return {times = times, iterations = r.loads, counts = r.counts, per_rep = r.per_rep,
      record = {ns = r.ns, median_ns = r.median_ns, samples = r.samples, loads_per_sample = per,
        min = r.ns * per * 1e-9, median = r.median_ns * per * 1e-9}}
  end
  return function() if chain then chain:close(); chain = nil end end
end

return M
