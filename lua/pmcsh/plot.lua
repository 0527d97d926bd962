-- Charts through gnuplot, when it is installed: sweep curves (x, y series,
-- sizes on a log axis labelled 4K, 1M, ...) and the survey's table as a
-- heat map.  Without gnuplot every function returns nil and a message
-- saying what to install.  Pictures are M.WIDTH x M.HEIGHT pixels (the
-- heat map grows by M.ROW_PX per row beyond 20 rows).
local M = {}

local doc = require("pmcsh.help").doc
local numbers = require("pmcsh.numbers")
local paths = require("pmcsh.paths")
local text = require("pmcsh.text")
local gq, datum = text.gnuplot, text.gnuplot_datum
local read_text = require("pmcsh.machine").read_text
local sys = require("pmcsh.sys")
local sys_stat = sys.stat

-- Where gnuplot is, or nil.  PMCSH_GNUPLOT overrides (also "" to disable);
-- a privileged process (paths.secure) takes neither it nor PATH.
function M.gnuplot()
  if paths.secure then
    local f = io.open("/usr/bin/gnuplot")
    if f then f:close() end
    return f and "/usr/bin/gnuplot" or nil
  end
  local env = os.getenv("PMCSH_GNUPLOT")
  if env then return env ~= "" and env or nil end
  local stat = sys_stat
  for dir in (os.getenv("PATH") or "/usr/bin:/bin"):gmatch("[^:]+") do
    local st = stat(dir .. "/gnuplot")
    if st and st.type == "file" then return dir .. "/gnuplot" end
  end
  return nil
end

local NO_GNUPLOT = "gnuplot is not installed: install it (Debian: apt-get install gnuplot-nox) " ..
  "or plot the printed series yourself"

M.WIDTH, M.HEIGHT, M.ROW_PX = 1000, 640, 24

local function terminal(file, h)
  local ext = file:match("%.(%w+)$")
  ext = ext and ext:lower()
  local size = string.format("size %d,%d noenhanced", M.WIDTH, h or M.HEIGHT)
  if ext == "png" then return "pngcairo " .. size, "png " .. size end
  if ext == "svg" then return "svg " .. size end
  return nil
end

-- Whether a chart can be drawn to `file`: true, or nil and why (a name
-- that is not .png or .svg, a folder that is not there).  Recipes ask
-- before measuring; a missing gnuplot is said after the table is printed,
-- so the numbers are not lost.
function M.check(file)
  if type(file) ~= "string" or not terminal(file) then
    return nil, string.format("cannot plot to '%s': name a .png or .svg file", text.inert(file))
  end
  local dir = file:match("^(.*)/[^/]*$")
  if dir and dir ~= "" then
    local f = io.open(dir .. "/.", "r")
    if not f then return nil, string.format("cannot plot to '%s': no folder %s", text.inert(file), text.inert(dir)) end
    f:close()
  end
  return true
end

-- Runs a gnuplot script; tries the fallback terminal when the first is
-- missing.  Success is gnuplot's exit status 0 and a non-empty picture.
local function run(script_body, file, height)
  local gp = M.gnuplot()
  if not gp then return nil, NO_GNUPLOT end
  local term, fallback = terminal(file, height)
  if not term then return nil, string.format("cannot plot to '%s': name a .png or .svg file", text.inert(file)) end
  -- gnuplot writes a private file of its own (made by mkstemp in /tmp,
  -- where nobody else can put a link in its place); the picture is then
  -- copied into place by sys.replace, so a failed plot leaves the old one
  -- whole and nothing is written through a name another user can guess
  local part = os.tmpname()
  local function attempt(t)
    local sf, ef = os.tmpname(), os.tmpname()
    local f, ok, err = io.open(sf, "w")
    if f then
      ok, err = f:write("set terminal ", t, "\n", "set output ", gq(part), "\n", script_body, "\nset output\n")
      local closed, cerr = f:close()
      if ok then ok, err = closed, cerr end
    end
    if not ok then
      os.remove(sf); os.remove(ef)
      return false, "cannot write gnuplot's script: " .. tostring(err)
    end
    ok = os.execute(text.shell(gp) .. " " .. text.shell(sf) .. " 2>" .. text.shell(ef))
    err = read_text(ef) or ""
    os.remove(sf); os.remove(ef)
    if ok ~= true then return false, "gnuplot failed" .. (err ~= "" and ": " .. err or "") end
    local st = sys_stat(part)
    if not (st and st.size > 0) then
      return false, string.format("gnuplot wrote no picture to '%s'%s", text.inert(file), err ~= "" and ": " .. err or
        " (a full disk, or PMCSH_GNUPLOT naming something that is not gnuplot?)")
    end
    return true
  end
  local ok, err = attempt(term)
  if not ok and fallback then ok, err = attempt(fallback) end
  if ok then
    local pf = io.open(part, "rb")
    local picture = pf and pf:read("a")
    if pf then pf:close() end
    local written, werr = sys.replace(file, function(f) return f:write(picture or "") end)
    if not written then ok, err = false, "cannot write " .. text.inert(file) .. ": " .. tostring(werr) end
  end
  os.remove(part)
  if not ok then return nil, text.inert(err, true) end
  return true
end

local function datablock(name, rows)
  local out = {"$" .. name .. " << EOD"}
  for _, r in ipairs(rows) do out[#out + 1] = table.concat(r, " ") end
  out[#out + 1] = "EOD"
  return table.concat(out, "\n")
end

-- Byte sizes as x tics: every power of 4 from the first point to the
-- last, labelled 4K, 1M, 256M.
local function size_tics(lo, hi)
  local size = numbers.size
  local t, x = {}, 1
  while x * 4 <= lo do x = x * 4 end
  while x <= hi * 1.01 do
    t[#t + 1] = string.format("%s %.0f", gq(size(x)), x)
    x = x * 4
  end
  return "set xtics (" .. table.concat(t, ", ") .. ")"
end

-- Line chart.  o = {title=, xlabel=, ylabel=, logx=, logy=, bytes= (x is
-- bytes: log axis labelled 4K, 1M), y0= (y from 0), ymax=,
-- series = {{title=, points = {{x, y[, ylow, yhigh]}, ...}, points_only=, dashed=}, ...}
-- (ylow..yhigh on every point of a series: drawn as error bars; {x} alone,
-- no y, is a gap: the line stops there, nothing drawn at x),
-- vlines = {{x=, title=}} (dashed, labelled), hline = {y=, title=},
-- from0= (both axes from 0), key= (gnuplot's placement, "top left" by
-- default); a series' labels = {"text", ...} mark its points (a false entry
-- leaves its point unmarked).  A margin keeps the first and last points whole.
function M.lines(file, o)
  local parts, plots = {}, {}
  local lo, hi, ytop = math.huge, -math.huge, 0
  for i, s in ipairs(o.series or {}) do
    local rows, bars = {}, #s.points > 0
    for _, p in ipairs(s.points) do bars = bars and (p[2] == nil or p[3] ~= nil and p[4] ~= nil) end
    for _, p in ipairs(s.points) do
      if p[1] and p[2] == nil then
        if #rows > 0 and #rows[#rows] > 0 then rows[#rows + 1] = {} end   -- a blank line: gnuplot breaks the line
      elseif p[1] then
        local row = {string.format("%.10g", p[1]), string.format("%.10g", p[2])}
        if bars then row[3], row[4] = string.format("%.10g", p[3]), string.format("%.10g", p[4]) end
        rows[#rows + 1] = row
        lo, hi, ytop = math.min(lo, p[1]), math.max(hi, p[1]), math.max(ytop, bars and p[4] or p[2])
      end
    end
    if #rows > 0 then
      parts[#parts + 1] = datablock("s" .. i, rows)
      plots[#plots + 1] = string.format("$s%d using %s with %s title %s", i, bars and "1:2:3:4" or "1:2",
        s.points_only and "points pt 7 ps 1.6 lc rgb '#d62728'"
          or s.dashed and "linespoints pt 6 ps 0.8 lw 1 dt 2 lc rgb '#808080'"
          or bars and "yerrorlines pt 7 ps 0.8 lw 2" or "linespoints pt 7 ps 0.8 lw 2",
        gq(s.title or ("series " .. i)))
    end
    for j, label in ipairs(s.labels or {}) do
      local p = s.points[j]
      if label and p and p[1] and p[2] then
        parts[#parts + 1] = string.format("set label %s at %.10g,%.10g offset 0.8,0.8 font ',9'", gq(label), p[1], p[2])
      end
    end
  end
  if #plots == 0 then return nil, "nothing to plot" end
  if o.hline then   -- a level with its title in the key, where no label can cover a point
    plots[#plots + 1] = string.format("%.10g with lines dt 2 lw 2 lc rgb '#d62728' title %s", o.hline.y,
      gq(o.hline.title or ""))
  end
  parts[#parts + 1] = "set title " .. gq(o.title or "")
  parts[#parts + 1] = "set xlabel " .. gq(o.xlabel or "")
  parts[#parts + 1] = "set ylabel " .. gq(o.ylabel or "")
  parts[#parts + 1] = "set grid"
  parts[#parts + 1] = "set key " .. (o.key or "top left") .. " box opaque width 1"
  if o.key == "below" then   -- room under the x label for one key line per series
    parts[#parts + 1] = string.format("set bmargin %d", 4 + #plots)
  end
  if o.logx or o.bytes then parts[#parts + 1] = "set logscale x 2" end
  if o.bytes then parts[#parts + 1] = size_tics(lo, hi) end
  if o.logy then parts[#parts + 1] = "set logscale y" end
  if o.logx or o.bytes then
    parts[#parts + 1] = string.format("set xrange [%.10g:%.10g]", lo / 1.3, hi * 1.3)
  end
  local top = math.max(ytop, o.hline and o.hline.y or 0) * 1.12
  if o.from0 then   -- a range of at least 1 where every x is 0 (gnuplot refuses an empty one)
    parts[#parts + 1] = string.format("set xrange [0:%.10g]\nset yrange [0:%.10g]", math.max(hi * 1.08, 1),
      o.ymax or math.max(top, 1))
  elseif o.y0 then parts[#parts + 1] = string.format("set yrange [0:%.10g]", o.ymax or top)
  elseif not o.logy then parts[#parts + 1] = "set offsets 0, 0, graph 0.08, graph 0.08" end
  for _, v in ipairs(o.vlines or {}) do
    parts[#parts + 1] = string.format("set arrow from %.10g, graph 0 to %.10g, graph 1 nohead dt 2 lc rgb '#808080'", v.x, v.x)
    parts[#parts + 1] = string.format("set label %s at %.10g, graph 0.04 rotate left offset 1,0 tc rgb '#505050'",
      gq(v.title or ""), v.x)
  end
  parts[#parts + 1] = "plot " .. table.concat(plots, ", ")
  return run(table.concat(parts, "\n"), file)
end

-- Grouped bars: one cluster per row (event), one bar per column (kernel).
-- o = {title=, ylabel=, columns = {"copy", ...}, rows = {{name=, values={...}}, ...}}.
function M.bars(file, o)
  local rows = {}
  for _, r in ipairs(o.rows or {}) do
    local l = {datum(r.name)}
    for i = 1, #o.columns do l[#l + 1] = r.values[i] and string.format("%.10g", r.values[i]) or "NaN" end
    rows[#rows + 1] = l
  end
  if #rows == 0 then return nil, "nothing to plot" end
  local plots = {}
  for i, c in ipairs(o.columns) do
    plots[#plots + 1] = string.format("$d using %d:xtic(1) title %s", i + 1, gq(c))
  end
  local body = table.concat({
    datablock("d", rows),
    "set title " .. gq(o.title or ""),
    "set ylabel " .. gq(o.ylabel or ""),
    "set style data histograms",
    "set style histogram clustered gap 1",
    "set style fill solid 0.8 border -1",
    "set xtics rotate by -35",
    "set grid ytics",
    o.logy and "set logscale y" or "set yrange [0:*]",
    "plot " .. table.concat(plots, ", "),
  }, "\n")
  return run(body, file)
end

-- Points over named categories, as ratios to 1: one column per metric
-- (o.metrics, names on the x axis), a series per node (o.series = {{title=,
-- points = {{x=, y=, lo=?, hi=?, flagged=?}}}}), y = value / reference;
-- o.band draws 1 + band and 1 / (1 + band), a factor either way as
-- compare judges ratios; flagged points are ringed and labelled with
-- their series' title; lo..hi draws an interval.  pmcsh compare's picture.
function M.fleet(file, o)
  local parts, plots, flagged = {}, {}, {}
  local ylo, yhi = 1, 1
  for i, s in ipairs(o.series or {}) do
    local rows = {}
    for _, p in ipairs(s.points) do
      -- a node's points spread a little across the column, in series order
      local x = p.x + ((i - 1) / math.max(1, #o.series) - 0.5) * 0.3
      rows[#rows + 1] = {string.format("%.10g", x), string.format("%.10g", p.y),
        string.format("%.10g", p.lo or p.y), string.format("%.10g", p.hi or p.y)}
      ylo, yhi = math.min(ylo, p.lo or p.y), math.max(yhi, p.hi or p.y)
      if p.flagged then flagged[#flagged + 1] = {x, p.y, s.title} end
    end
    if #rows > 0 then
      parts[#parts + 1] = datablock("s" .. i, rows)
      plots[#plots + 1] = string.format("$s%d using 1:2:3:4 with yerrorbars pt 7 ps 1 title %s", i, gq(s.title or ""))
    end
  end
  if #plots == 0 then return nil, "nothing to plot" end
  if #flagged > 0 then
    local rows = {}
    for _, f in ipairs(flagged) do rows[#rows + 1] = {string.format("%.10g", f[1]), string.format("%.10g", f[2]), datum(f[3] or "")} end
    parts[#parts + 1] = datablock("f", rows)
    plots[#plots + 1] = "$f using 1:2 with points pt 6 ps 2.5 lw 2 lc rgb '#d62728' title 'flagged', " ..
      "$f using 1:2:3 with labels offset 0,1.4 tc rgb '#d62728' notitle"
  end
  local xt = {}
  for i, name in ipairs(o.metrics or {}) do xt[#xt + 1] = string.format("%s %d", gq(name), i) end
  parts[#parts + 1] = "set title " .. gq(o.title or "")
  parts[#parts + 1] = "set ylabel " .. gq(o.ylabel or "value / fleet median")
  parts[#parts + 1] = "set xtics (" .. table.concat(xt, ", ") .. ") rotate by -30 font ',9'"
  parts[#parts + 1] = string.format("set xrange [0.4:%f]", #(o.metrics or {}) + 0.6)
  local pad = (yhi - ylo) * 0.1 + 0.05
  if o.band then
    ylo, yhi = math.min(ylo, 1 / (1 + o.band)), math.max(yhi, 1 + o.band)
    for _, y in ipairs({1 / (1 + o.band), 1 + o.band}) do
      parts[#parts + 1] = string.format("set arrow from graph 0, first %.10g to graph 1, first %.10g nohead dt 2 lw 2 lc rgb '#808080'", y, y)
    end
    parts[#parts + 1] = string.format("set label %s at graph 0.01, first %.10g offset 0,0.7 tc rgb '#505050'",
      gq(string.format("band: a factor of %g either way", 1 + o.band)), 1 + o.band)
  end
  parts[#parts + 1] = string.format("set yrange [%.10g:%.10g]", ylo - pad, yhi + pad)
  parts[#parts + 1] = "set arrow from graph 0, first 1 to graph 1, first 1 nohead lc rgb '#505050'"
  parts[#parts + 1] = "set grid ytics"
  local longest = 0   -- the rotated names take room under the axis
  for _, n in ipairs(o.metrics or {}) do longest = math.max(longest, #n) end
  parts[#parts + 1] = string.format("set bmargin %d", 4 + math.min(20, longest // 4))
  parts[#parts + 1] = "set key outside right top box"
  parts[#parts + 1] = "plot " .. table.concat(plots, ", ")
  return run(table.concat(parts, "\n"), file)
end

-- A gnuplot script body drawn to file (the terminal and output set here),
-- height pixels high (default M.HEIGHT): what M.lines and M.bars do, for a
-- chart of the caller's own (the survey's heat map).
function M.draw(body, file, height)
  return run(body, file, height)
end

M.datablock = datablock

doc(M, "plot", [[
plot: charts through gnuplot (PNG or SVG by the file's extension).
  plot.check(file)           true, or why it cannot be drawn (ask before measuring)
  plot.lines(file, {series={{title=, points={{x,y}...}}}, logx=, bytes=, y0=,
             vlines={{x=, title=}}, hline={y=, title=}, xlabel=, ylabel=})
  plot.bars(file, {columns={...}, rows={{name=, values={...}}}})
  plot.draw(body, file[, height])  a script of the caller's own (the survey's heat map)
  plot.fleet(file, {metrics={names}, series={{title=, points={{x=, y=, lo=, hi=, flagged=}}}}, band=})
                             values over a reference per named column (pmcsh compare)
Pictures are 1000 x 640 pixels (the survey's 24 more per row beyond 20).
Returns true, or nil and a message (e.g. when gnuplot is not installed).]])

return M
