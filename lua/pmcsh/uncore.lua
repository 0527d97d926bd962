-- Memory-controller bandwidth from uncore PMUs (Intel iMC, AMD UMC).
--
-- The controllers a machine has are found under
-- /sys/bus/event_source/devices by the definitions in events/uncore-*.lua;
-- each PMU is counted on the CPUs of its cpumask (one per socket), so each
-- socket is counted once, not once per core.  The arithmetic is pure:
-- counts -> bytes (sysfs .scale and .unit, or 64-byte transfers) -> GB/s
-- per socket and in total, and is specced on recorded readings.
local doc = require("pmcsh.help").doc
local events = require("pmcsh.events")
local machine = require("pmcsh.machine")
local pmc = require("pmcsh.pmc")
local sys = require("pmcsh._sys")

local M = {}

M.SYSFS = machine.SYSFS_PMUS

local slurp = machine.read_text

local function ls(dir)
  local out = sys.dir(dir) or {}
  table.sort(out)
  return out
end

-- Bytes per count from a sysfs .scale and .unit ("MiB", "MB", "KiB", "B"...).
-- With neither, each count is one `transfer` bytes (64: a cache line).
local UNITS = {B = 1, bytes = 1, KB = 1e3, MB = 1e6, GB = 1e9,
               KiB = 1024, MiB = 1024 ^ 2, GiB = 1024 ^ 3}
function M.bytes_per_count(scale, unit, transfer)
  scale = tonumber(scale)
  if unit == nil or unit == "" then
    if scale and scale ~= 1 then
      return nil, "a .scale without a .unit: cannot tell bytes"
    end
    return transfer or 64
  end
  local u = UNITS[unit]
  if not u then return nil, string.format("unknown unit %q for a byte count", unit) end
  return (scale or 1) * u
end

-- Aggregates recorded readings into bandwidth.
--   readings: list of {pmu=, socket=, cpu=, dir="read"|"write"|"total",
--             raw=, bytes_per_count=}
--   seconds:  the window
-- Readings of the same PMU and direction on the same socket (the same
-- counter seen from several CPUs, as a per-core tool prints it) are
-- averaged, never summed; different PMUs (channels) of a socket are summed.
-- Returns {seconds=, sockets={{socket=, read_bytes=, write_bytes=,
-- total_bytes=, read_gbps=, write_gbps=, total_gbps=}...}, total={...}}.
function M.aggregate(readings, seconds)
  assert(type(seconds) == "number" and seconds > 0, "aggregate: seconds must be > 0")
  local dup = {}      -- socket|pmu|dir -> {sum, n, bpc}
  local order = {}
  for _, r in ipairs(readings) do
    local k = tostring(r.socket) .. "|" .. tostring(r.pmu) .. "|" .. r.dir
    local d = dup[k]
    if not d then
      d = {socket = r.socket, dir = r.dir, sum = 0, n = 0, bpc = r.bytes_per_count or 64}
      dup[k] = d
      order[#order + 1] = k
    end
    d.sum = d.sum + r.raw
    d.n = d.n + 1
  end
  local by_socket, sockets = {}, {}
  for _, k in ipairs(order) do
    local d = dup[k]
    local s = by_socket[d.socket]
    if not s then
      s = {socket = d.socket, read_bytes = 0, write_bytes = 0, other_bytes = 0}
      by_socket[d.socket] = s
      sockets[#sockets + 1] = s
    end
    local bytes = d.sum / d.n * d.bpc
    if d.dir == "read" then s.read_bytes = s.read_bytes + bytes
    elseif d.dir == "write" then s.write_bytes = s.write_bytes + bytes
    else s.other_bytes = s.other_bytes + bytes end
  end
  table.sort(sockets, function(a, b) return a.socket < b.socket end)
  local total = {socket = "total", read_bytes = 0, write_bytes = 0, other_bytes = 0}
  local function finish(s)
    s.total_bytes = s.read_bytes + s.write_bytes + s.other_bytes
    s.read_gbps = s.read_bytes / seconds / 1e9
    s.write_gbps = s.write_bytes / seconds / 1e9
    s.total_gbps = s.total_bytes / seconds / 1e9
  end
  for _, s in ipairs(sockets) do
    finish(s)
    total.read_bytes = total.read_bytes + s.read_bytes
    total.write_bytes = total.write_bytes + s.write_bytes
    total.other_bytes = total.other_bytes + s.other_bytes
  end
  finish(total)
  return {seconds = seconds, sockets = sockets, total = total}
end

-- Loads the controller definitions of events/uncore-*.lua.
function M.definitions()
  local defs = {}
  for _, name in ipairs({"uncore-intel", "uncore-amd"}) do
    local t = events.load(name)
    for _, c in ipairs(t and t.controllers or {}) do defs[#defs + 1] = c end
  end
  return defs
end

-- One direction of a controller: the event string to open and its bytes
-- per count, or nil, why.
local function resolve_dir(root, pmu, def, dir)
  local name = def[dir]
  if name then
    local base = root .. "/" .. pmu .. "/events/" .. name
    if slurp(base) then
      local bpc, err = M.bytes_per_count(slurp(base .. ".scale"), slurp(base .. ".unit"),
                                         def.bytes_per_count)
      if not bpc then return nil, string.format("%s/%s: %s", pmu, name, err) end
      return {event = pmu .. "/" .. name .. "/", bytes_per_count = bpc, dir = dir}
    end
  end
  local terms = def[dir .. "_terms"]
  if terms then
    return {event = pmu .. "/" .. terms .. "/", bytes_per_count = def.bytes_per_count or 64, dir = dir}
  end
  return nil
end

-- Finds the memory-controller PMUs.  Returns a list of
-- {pmu=, def=, cpus={...}, events={{event=, dir=, bytes_per_count=}...}}
-- and the list of all PMU names seen (for the message when none matched).
function M.find(root, defs)
  root = root or M.SYSFS
  defs = defs or M.definitions()
  local found, seen = {}, ls(root)
  for _, pmu in ipairs(seen) do
    for _, def in ipairs(defs) do
      if pmu:match(def.pmu) then
        local evs = {}
        for _, dir in ipairs({"read", "write", "total"}) do
          local e = resolve_dir(root, pmu, def, dir)
          if e then evs[#evs + 1] = e end
        end
        if #evs > 0 then
          local cpus = machine.parse_list(slurp(root .. "/" .. pmu .. "/cpumask") or "0") or {0}
          found[#found + 1] = {pmu = pmu, def = def, cpus = cpus, events = evs}
        end
        break
      end
    end
  end
  return found, seen
end

-- The sentence when no controller is exposed.
function M.none_message(seen)
  return string.format("no memory-controller PMU is exposed here (looked for Intel uncore_imc*, AMD amd_umc_* " ..
    "under %s; this machine has: %s). Run on bare metal or a VM with uncore PMU pass-through.",
    M.SYSFS, #seen > 0 and table.concat(seen, ", ") or "nothing")
end

-- One controller's reading (its binding gives each cpu of an uncore event
-- apart: r[i].cpus, with the socket of each) as rows, one per socket's counter.
function M.rows(c, r)
  local rows = {}
  for i, e in ipairs(c.events) do
    for _, x in ipairs(r[i].cpus) do
      rows[#rows + 1] = {pmu = c.pmu, dir = e.dir, cpu = x.cpu, socket = x.socket, raw = x.raw,
        bytes_per_count = e.bytes_per_count, multiplexed = x.multiplexed}
    end
  end
  return rows
end

-- Counts the controllers system-wide around `window()` (a Lua function that
-- runs the work: a sleep, a command, a kernel run) and returns the
-- aggregate plus the window's own result.  One pmc group per controller:
-- the binding opens an uncore PMU's events on the CPUs of its cpumask (an
-- event without one on c.cpus).
function M.measure(ctrls, window)
  local groups = {}
  local function close_all() for _, gg in ipairs(groups) do gg.g:close() end end
  for _, c in ipairs(ctrls) do
    local names = {}
    for i, e in ipairs(c.events) do names[i] = e.event end
    local g, msg, errno = pmc.group(names, {cpus = c.cpus})
    if not g then close_all(); return nil, msg, errno end
    groups[#groups + 1] = {g = g, c = c}
  end
  for _, gg in ipairs(groups) do gg.g:start() end
  local t0 = sys.now()
  local ok, res = pcall(window)
  local t1 = sys.now()
  for _, gg in ipairs(groups) do gg.g:stop() end
  local readings = {}
  for _, gg in ipairs(groups) do
    local r, msg, errno = gg.g:read()
    if not r then close_all(); return nil, msg, errno end
    for _, row in ipairs(M.rows(gg.c, r)) do readings[#readings + 1] = row end
  end
  close_all()
  if not ok then error(res, 0) end
  local agg = M.aggregate(readings, t1 - t0)
  agg.readings = readings
  return agg, res
end

-- The controllers against a kernel's own bytes: they see at least what the
-- loop moved by STREAM's convention (non-temporal stores skip the
-- write-allocate read) and at most its write-allocate bytes plus other
-- traffic, counted system-wide: up to M.CROSS_SLACK times those.  Adds
-- expected (the write-allocate bytes), ratio and verdict to `cross`.
M.CROSS_FLOOR, M.CROSS_SLACK = 0.95, 2
function M.cross_check(cross)
  cross.expected = cross.stream_bytes_wa
  cross.ratio = cross.controller_bytes / cross.stream_bytes_wa
  cross.verdict = cross.controller_bytes >= M.CROSS_FLOOR * cross.stream_bytes
    and cross.ratio <= M.CROSS_SLACK and "pass" or "fail"
  return cross
end

-- Table text of an aggregate.
function M.format(agg)
  local out = {string.format("%-8s %12s %12s %12s", "socket", "read GB/s", "write GB/s", "total GB/s")}
  local function row(s)
    out[#out + 1] = string.format("%-8s %12.3f %12.3f %12.3f", tostring(s.socket), s.read_gbps, s.write_gbps,
      s.total_gbps)
  end
  for _, s in ipairs(agg.sockets) do row(s) end
  row(agg.total)
  out[#out + 1] = string.format("(%.3f s window; each socket counted once)", agg.seconds)
  return table.concat(out, "\n") .. "\n"
end

doc(M, "uncore", [[
uncore: memory-controller bandwidth (Intel uncore_imc*, AMD amd_umc_*).
  uncore.find([root])              controllers exposed in sysfs
  uncore.measure(ctrls, fn)        count them system-wide around fn()
  uncore.rows(ctrl, reading)       one controller's reading, a row per socket's counter
  uncore.aggregate(readings, s)    pure arithmetic: per socket (once) and total GB/s
  uncore.cross_check(cross)        verdict on controller bytes against a kernel's bytes
  uncore.bytes_per_count(scale, unit[, transfer])]])

return M
