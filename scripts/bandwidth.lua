-- pmcsh bandwidth: memory-controller bandwidth from uncore counters,
-- per socket (each counted once) and in total.
local recipe = require("pmcsh.recipe")
local results = require("pmcsh.results")
local stream = require("pmcsh.stream")
local sys = require("pmcsh.sys")
local uncore = require("pmcsh.uncore")
local shell = require("pmcsh.text").shell
-- --json: the fingerprint's line, then metric records (pmcsh.results.metric):
-- read, write and total GB/s of each socket and of all, the bytes beside
-- the total; with --kernel, the controllers' bytes over the kernel's.
local function print_json(agg, cross)
  local cjson = require("cjson")
  print(results.head("bandwidth"))
  local all = {}
  for _, s in ipairs(agg.sockets) do all[#all + 1] = s end
  all[#all + 1] = agg.total
  for _, s in ipairs(all) do
    local where = s == agg.total and "all sockets" or string.format("socket %d", s.socket)
    local context = {socket = s ~= agg.total and s.socket or nil, seconds = agg.seconds}
    for _, dir in ipairs({"read", "write", "total"}) do
      local m = {name = string.format("%s GB/s, %s", dir, where), unit = "GB/s", value = s[dir .. "_gbps"],
        stat = "over the window", context = context}
      if dir == "total" then
        m.read_bytes, m.write_bytes, m.other_bytes, m.total_bytes = s.read_bytes, s.write_bytes, s.other_bytes,
          s.total_bytes
      end
      print(cjson.encode(results.metric(m)))
    end
  end
  if cross then
    print(cjson.encode(results.metric{name = "controller bytes over the kernel's (write-allocate)", unit = "ratio",
      value = cross.ratio, stat = "one window", context = {kernel = cross.kernel}, verdict = cross.verdict,
      controller_bytes = cross.controller_bytes, stream_bytes = cross.stream_bytes,
      stream_bytes_wa = cross.stream_bytes_wa}))
  end
end

return {
  description = "memory-controller bandwidth (uncore iMC/UMC): read, write, total GB/s per socket",
  usage = "[[--] cmd args...]",
  command = true,   -- options end at the command's name
  help = [[
Counts the memory controllers system-wide over a window: a duration
(--seconds), a command (after --), or a stream kernel run (--kernel), and
prints read, write and total GB/s per socket and in total.  With --kernel the
bytes the kernel moved (STREAM convention and with write-allocate) are printed
beside the bytes the controllers saw.  Needs a memory-controller PMU
(Intel uncore_imc*, AMD amd_umc_*) and cpu-wide counting rights.]],
  options = {
    {name = "seconds", short = "s", type = "number", default = 1, positive = true, max = 86400,
     help = "window length with no command or kernel"},
    {name = "kernel", short = "k", type = "string", help = "run this stream kernel as the window (cross-check)"},
    {name = "n", type = "size", min = 1, help = "elements per array for --kernel (default: STREAM's rule)"},
    {name = "reps", short = "r", type = "int", default = 10, min = 1, max = 1000000, help = "timed repetitions for --kernel"},
    {name = "threads", short = "t", type = "int", min = 1, max = 1024,
     help = "stream threads for --kernel (default: all allowed cpus)"},
    {name = "json", type = "flag", help = "JSON lines: the fingerprint, a metric record per socket and direction"},
  },
  run = function(opts, args)
    if opts.kernel and #args > 0 then
      error(recipe.usage("bandwidth: give --kernel or a command, not both"), 0)
    end
    if opts.kernel then
      local known = {}
      for _, d in ipairs(stream.kernels()) do known[#known + 1] = d.name end
      local ok = false
      for _, k in ipairs(known) do if k == opts.kernel then ok = true end end
      if not ok then
        error(recipe.usage(string.format("unknown kernel %q (kernels: %s)", opts.kernel,
          table.concat(known, ", "))), 0)
      end
    end
    local ctrls, seen = uncore.find()
    if #ctrls == 0 then
      return nil, uncore.none_message(seen)
    end
    local window, s
    if opts.kernel then
      -- every allowed cpu unless told (stream.new's own default is one thread)
      local so = {n = opts.n, threads = opts.threads or #stream.machine().cpus}
      local err
      s, err = stream.new(so)
      if not s then return nil, err end
      window = function() return assert(s:run(opts.kernel, {reps = opts.reps, warmup = true})) end
    elseif #args > 0 then
      window = function()
        local q = {}
        for i, a in ipairs(args) do q[i] = shell(a) end
        return os.execute(table.concat(q, " "))
      end
    else
      window = function() sys.sleep(opts.seconds) end
    end
    local agg, res = uncore.measure(ctrls, window)
    if not agg then
      return nil, res
    end
    local cross
    if opts.kernel then
      -- warm-up included: the controllers saw every repetition the window ran
      local reps_run = res.reps + (res.warmup or 0)
      local per_rep = res.n or (res.iterations / res.reps)
      cross = {
        kernel = opts.kernel,
        stream_bytes = res.bytes_per_iter * per_rep * reps_run,
        stream_bytes_wa = (res.bytes_per_iter_wa or res.bytes_per_iter) * per_rep * reps_run,
        controller_bytes = agg.total.total_bytes,
      }
      uncore.cross_check(cross)
    end
    if opts.json then
      print_json(agg, cross)
    else
      io.write(uncore.format(agg))
      if cross then
        io.write(string.format(
          "\n%s moved %.3f GB (STREAM convention), %.3f GB with write-allocate;\n" ..
          "the memory controllers saw %.3f GB (%.2fx the write-allocate bytes): %s\n",
          cross.kernel, cross.stream_bytes / 1e9, cross.stream_bytes_wa / 1e9,
          cross.controller_bytes / 1e9, cross.ratio, cross.verdict == "pass" and "pass" or
          string.format("FAIL (expected %.2f to %.2fx)", uncore.CROSS_FLOOR * cross.stream_bytes / cross.stream_bytes_wa,
            uncore.CROSS_SLACK)))
      end
    end
    if s then s:close() end
    return 0
  end,
}
