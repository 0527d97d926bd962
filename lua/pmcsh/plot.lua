-- Charts through gnuplot, when it is installed: sweep curves (x, y series)
-- and the survey's events-per-iteration table as grouped bars.  Without
-- gnuplot every function returns nil and a message saying what to install.
local M = {}

local ok_help, help = pcall(require, "pmcsh.help")
local doc = ok_help and help.doc or function(obj) return obj end

local function shquote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- Where gnuplot is, or nil.  PMCSH_GNUPLOT overrides (also "" to disable);
-- a privileged process (paths.secure) takes neither it nor PATH.
function M.gnuplot()
  if require("pmcsh.paths").secure then
    local f = io.open("/usr/bin/gnuplot")
    if f then f:close() end
    return f and "/usr/bin/gnuplot" or nil
  end
  local env = os.getenv("PMCSH_GNUPLOT")
  if env then return env ~= "" and env or nil end
  local p = io.popen("command -v gnuplot 2>/dev/null")
  local path = p and p:read("l")
  if p then p:close() end
  return path and path ~= "" and path or nil
end

local NO_GNUPLOT = "gnuplot is not installed: install it (Debian: apt-get install gnuplot-nox) " ..
  "or plot the printed series yourself"

local function terminal(file)
  local ext = file:match("%.(%w+)$")
  ext = ext and ext:lower()
  if ext == "png" then return "pngcairo size 1000,640 noenhanced", "png size 1000,640 noenhanced" end
  if ext == "svg" then return "svg size 1000,640 noenhanced" end
  return nil
end

local function gq(s) -- a gnuplot string literal
  return '"' .. tostring(s):gsub("\\", "\\\\"):gsub('"', '\\"') .. '"'
end

-- Runs a gnuplot script; tries the fallback terminal when the first is missing.
local function run(script_body, file)
  local gp = M.gnuplot()
  if not gp then return nil, NO_GNUPLOT end
  local term, fallback = terminal(file)
  if not term then return nil, string.format("cannot plot to %q: name a .png or .svg file", file) end
  local function attempt(t)
    local sf, ef = os.tmpname(), os.tmpname()
    local f = assert(io.open(sf, "w"))
    f:write("set terminal ", t, "\n", "set output ", gq(file), "\n", script_body, "\nset output\n")
    f:close()
    local ok = os.execute(shquote(gp) .. " " .. shquote(sf) .. " 2>" .. shquote(ef))
    local e = io.open(ef, "r")
    local err = e and e:read("a") or ""
    if e then e:close() end
    os.remove(sf); os.remove(ef)
    return ok == true, err
  end
  local ok, err = attempt(term)
  if not ok and fallback then ok, err = attempt(fallback) end
  if not ok then return nil, "gnuplot failed: " .. (err:gsub("%s+$", "")) end
  return true
end

local function datablock(name, rows)
  local out = {"$" .. name .. " << EOD"}
  for _, r in ipairs(rows) do out[#out + 1] = table.concat(r, " ") end
  out[#out + 1] = "EOD"
  return table.concat(out, "\n")
end

-- Line chart.  o = {title=, xlabel=, ylabel=, logx=, logy=,
-- series = {{title=, points = {{x, y}, ...}}, ...}}.
function M.lines(file, o)
  local parts, plots = {}, {}
  for i, s in ipairs(o.series or {}) do
    local rows = {}
    for _, p in ipairs(s.points) do
      if p[1] and p[2] then rows[#rows + 1] = {string.format("%.10g", p[1]), string.format("%.10g", p[2])} end
    end
    parts[#parts + 1] = datablock("s" .. i, rows)
    plots[#plots + 1] = string.format("$s%d using 1:2 with linespoints title %s", i, gq(s.title or ("series " .. i)))
  end
  if #plots == 0 then return nil, "nothing to plot" end
  parts[#parts + 1] = "set title " .. gq(o.title or "")
  parts[#parts + 1] = "set xlabel " .. gq(o.xlabel or "")
  parts[#parts + 1] = "set ylabel " .. gq(o.ylabel or "")
  parts[#parts + 1] = "set grid"
  parts[#parts + 1] = "set key top left"
  if o.logx then parts[#parts + 1] = "set logscale x 2" end
  if o.logy then parts[#parts + 1] = "set logscale y" end
  parts[#parts + 1] = "plot " .. table.concat(plots, ", ")
  return run(table.concat(parts, "\n"), file)
end

-- Grouped bars: one cluster per row (event), one bar per column (kernel).
-- o = {title=, ylabel=, columns = {"copy", ...}, rows = {{name=, values={...}}, ...}}.
function M.bars(file, o)
  local rows = {}
  for _, r in ipairs(o.rows or {}) do
    local l = {gq(r.name)}
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

-- The survey table as bars (events per loop iteration, per kernel).
function M.survey(st, file, o)
  o = o or {}
  local cols, rows = {}, {}
  for i, k in ipairs(st.header.kernels) do cols[i] = k end
  for _, r in ipairs(st.header.rows) do
    local cells = st.cells[r.key]
    if cells then
      local vals = {}
      for i, k in ipairs(cols) do
        local c = cells[k]
        vals[i] = c and ((o.stat and o.stat ~= "mean") and c[o.stat] or c.value)
      end
      rows[#rows + 1] = {name = r.key, values = vals}
    end
  end
  return M.bars(file, {title = "Events per loop iteration", ylabel = "events / iteration",
                       columns = cols, rows = rows, logy = o.logy})
end

doc(M, "plot", [[
plot: charts through gnuplot (PNG or SVG by the file's extension).
  plot.lines(file, {series={{title=, points={{x,y}...}}}, logx=, xlabel=, ylabel=})
  plot.bars(file, {columns={...}, rows={{name=, values={...}}}})
  plot.survey(state, file)   the survey table as grouped bars
Returns true, or nil and a message (e.g. when gnuplot is not installed).]])

return M
