-- The survey's table as a heat map (gnuplot, through pmcsh.plot): a row per
-- event, a column per workload, each cell labelled as the table prints it
-- and coloured by what it means: firm cells (exact, linear) by value over
-- the row's scale, signed; noisy, multiplexed and unclassed cells faded;
-- cells with no value hatched.
-- It reads the records (pmcsh.survey.records), as the table does.
local plot = require("pmcsh.plot")
local records = require("pmcsh.survey.records")
local report = require("pmcsh.survey.report")
local cell = require("pmcsh.survey.cell")
local text = require("pmcsh.text")
local workloads = require("pmcsh.survey.workloads")

local M = {}
local gq, datum = text.gnuplot, text.gnuplot_datum

-- How a cell (its record) is drawn: "none" (no value: dropped, or no
-- cell), "faint" (a value its class does not vouch for: noisy, multiplexed,
-- too few pairs, every pair disturbed) or "firm" (exact, linear, zero, or a file's cell without
-- class).
local function look(c, v)
  if v == nil or c.standing == "dropped" then return "none" end
  if c.standing or c.class == "noisy" or c.class == "multiplexed" then return "faint" end
  return "firm"
end

-- Whether a value is a count at all: at least one count over the pair's
-- difference in iterations (c.resolution); below it the pairs cannot tell
-- it from 0, and it is coloured as 0.
local function counts(c, v)
  return v ~= 0 and not (c.resolution and math.abs(v) < c.resolution)
end

-- The survey's rows for the heat map, as the table chooses them (zero rows
-- only with o.all): {name, class, values, looks, scale (per unit: the
-- largest firm count's magnitude), cells}, and the keys of the zero rows
-- left out.
local function survey_rows(ix, kernels, units, o)
  local rows, zero = {}, {}
  for _, key in ipairs(ix.keys) do
    local cells = ix.events[key]
    local class = report.row_class(cells, kernels)
    if report.zero_row(cells, kernels) and not o.all then
      zero[#zero + 1] = key
    else
      local vals, looks, scale, loose = {}, {}, {}, {}
      for i, k in ipairs(kernels) do
        local c = cells[k]
        local v = c and c.value
        vals[i], looks[i] = v, c and look(c, v) or "none"
        local u = units[k]
        if looks[i] ~= "none" and counts(c, v) then
          local t = looks[i] == "firm" and scale or loose
          t[u] = math.max(t[u] or 0, math.abs(v))
        end
      end
      -- a row with no firm count: its faint cells on their own scale, faded
      for u, top in pairs(loose) do scale[u] = scale[u] or top end
      rows[#rows + 1] = {name = report.label(key, cells), class = class, values = vals, looks = looks, scale = scale,
        cells = cells}
    end
  end
  return rows, zero
end

-- The image's data block, a line per cell: x, y, the colour (value over
-- its row's scale of the same unit, -1..1; NaN for no value), the value's
-- label and its spread's, and the look (0 firm, 1 faint, 2 none).
local LOOK = {firm = 0, faint = 1, none = 2}
local function survey_data(rows, kernels, units)
  local data = {}
  for y, r in ipairs(rows) do
    local num = report.row_format(r.values)
    for x, k in ipairs(kernels) do
      local v, c, top = r.values[x], r.cells[k], r.scale[units[k]]
      local colour = "NaN"
      if r.looks[x] ~= "none" then
        colour = (top and top > 0 and counts(c, v)) and string.format("%.6g", math.max(-1, math.min(1, v / top))) or "0"
      end
      data[#data + 1] = {x - 1, #rows - y, colour, datum((report.value_text(c, v, num):gsub("^%s+", ""))),
        datum(report.spread_text(c)), LOOK[r.looks[x]]}
    end
  end
  return data
end

-- Each row's class and scale, as right-hand tics: "noisy  1 = 0.9025".
local function scale_tics(rows, kernels, units)
  local out = {}
  for y, r in ipairs(rows) do
    local parts = {}
    for _, k in ipairs(kernels) do
      local u = units[k]
      if r.scale[u] and not parts[u] then
        parts[u] = true
        parts[#parts + 1] = string.format("%.4g", r.scale[u])
      end
    end
    local s = string.format("%-6s %s", r.class or "--", #parts > 0 and ("1 = " .. table.concat(parts, ", ")) or "")
    out[#out + 1] = string.format("%s %d", gq((s:gsub("%s+$", ""))), #rows - y)
  end
  return out
end

-- The lines under the chart: which columns count per what (with more than
-- one unit), then the rows left out, wrapped at 120 characters.
local function survey_notes(kernels, units, zero)
  local per, nunits = {}, 0
  for _, k in ipairs(kernels) do
    if not per[units[k]] then per[units[k]], nunits = {}, nunits + 1 end
    table.insert(per[units[k]], k)
  end
  local lines, cur = {}, string.format("zero in every column (left out, %d; --all shows them):", #zero)
  for i, z in ipairs(zero) do
    if #cur + #z + 2 > 120 then
      if #lines == M.MAX_NOTE_LINES - 1 then cur = cur .. string.format(" ... (%d more)", #zero - i + 1); break end
      lines[#lines + 1] = cur; cur = "  " .. z
    else cur = cur .. " " .. z end
  end
  lines[#lines + 1] = cur
  if #zero == 0 then lines = {} end
  if nunits > 1 then
    local t = {}
    for _, k in ipairs(kernels) do
      local u = units[k]
      if per[u] then t[#t + 1] = table.concat(per[u], ", ") .. ": per " .. u; per[u] = nil end
    end
    table.insert(lines, 1, table.concat(t, "; "))
  end
  return lines
end

-- The most rows a chart draws, and lines of notes under it: the picture
-- stays under 640 + 280 * 24 pixels high, whatever the survey.
M.MAX_ROWS, M.MAX_NOTE_LINES = 300, 8

-- The legend over the chart, the table's words.
local function legend(o)
  return {
    report.heading(o) .. "; per column the pairs kept / made (below)",
    "colour: value / the row's scale (right: its class, and the value coloured fully), red +, blue -; " ..
      "below one count: as 0",
    string.format("faded and hatched: noisy, multiplexed (*), under %d pairs kept (?) or all disturbed (!); " ..
      "cross-hatched: no value (dropped)", cell.MIN_KEPT),
    "± = (max - min) / mean over the pairs kept (-- undefined)",
  }
end

-- The survey table as a heat map: a row per event, a column per
-- workload, each cell coloured by its value over its row's scale among the
-- columns of the same unit (a chase's hundreds per load and a loop's 0.6
-- per iteration are not on one scale), and labelled with the value and
-- its spread as the table prints them.  Rows the table leaves out (zero
-- in every column, unless o.all) are named under the chart.  o.stat as
-- the table's.  Returns the gnuplot commands and the picture's height.
function M.script(st, o)
  o = o or {}
  local kernels = st.header.kernels
  local cols, units = workloads.columns(st.header), {}
  for _, k in ipairs(kernels) do units[k] = cols[k].unit end
  local ix = records.index((records.of(st, o)))
  local rows, zero = survey_rows(ix, kernels, units, o)
  if #rows == 0 then return nil, "nothing to plot: every counted row is zero" end
  local all = #rows
  for i = M.MAX_ROWS + 1, all do rows[i] = nil end   -- a picture a viewer opens
  local xt, kt, yt = {}, {}, {}
  for x, k in ipairs(kernels) do
    xt[#xt + 1] = string.format("%s %d", gq(k), x - 1)
    kt[#kt + 1] = string.format("%s %d", gq(report.kept_text(ix, k) or ""), x - 1)
  end
  for y, r in ipairs(rows) do yt[#yt + 1] = string.format("%s %d", gq(r.name), #rows - y) end
  local height = plot.HEIGHT + math.max(0, #rows - 20) * plot.ROW_PX
  local title = legend(o)
  local body = {
    plot.datablock("d", survey_data(rows, kernels, units)),
    "set x2tics (" .. table.concat(xt, ", ") .. ") scale 0",
    "set xtics (" .. table.concat(kt, ", ") .. ") scale 0 font ',9'",
    "set ytics (" .. table.concat(yt, ", ") .. ") scale 0",
    "set y2tics (" .. table.concat(scale_tics(rows, kernels, units), ", ") .. ") scale 0 font ',9'",
    string.format("set xrange [-0.5:%f]; set x2range [-0.5:%f]; set yrange [-0.5:%f]; set y2range [-0.5:%f]",
      #kernels - 0.5, #kernels - 0.5, #rows - 0.5, #rows - 0.5),
    -- a diverging palette light enough at +-1 that black labels stay readable
    "set palette defined (-1 '#67a9cf', -0.5 '#d1e5f0', 0 '#f7f7f7', 0.5 '#fddbc7', 1 '#ef8a62')",
    "set cbrange [-1:1]",
    "unset colorbox",
    "set lmargin 34",
    "set rmargin 22",
    string.format("set tmargin %d", #title + 3),
  }
  for i, l in ipairs(title) do
    body[#body + 1] = string.format("set label %s at screen 0.5, screen 1 center offset 0, %.1f font ',%d'", gq(l),
      -1.2 * i - 0.3, i == 1 and 11 or 9)
  end
  local lines = survey_notes(kernels, units, zero)
  if all > #rows then
    table.insert(lines, 1, string.format("the first %d rows of %d: a chart holds at most %d (the table shows them all; " ..
      "-e or --pattern narrows a survey)", #rows, all, M.MAX_ROWS))
  end
  body[#body + 1] = string.format("set bmargin %d", #lines + 3)
  for i, l in ipairs(lines) do
    body[#body + 1] = string.format("set label %s at screen 0.01, character %d left", gq(l), #lines - i + 1)
  end
  body[#body + 1] = "plot $d using 1:2:3 with image notitle, " ..
    -- faint cells under a veil of white, sparsely hatched; cells with no value cross-hatched
    "$d using ($6 == 1 ? $1 : NaN):2:(0.5):(0.5) with boxxy fs transparent solid 0.6 noborder lc rgb 'white' notitle, " ..
    "$d using ($6 == 1 ? $1 : NaN):2:(0.5):(0.5) with boxxy fs transparent pattern 6 noborder lc rgb '#c0c0c0' notitle, " ..
    "$d using ($6 == 2 ? $1 : NaN):2:(0.5):(0.5) with boxxy fs pattern 1 noborder lc rgb '#a0a0a0' notitle, " ..
    "$d using 1:($2 + 0.15):4 with labels font ',10' notitle, " ..
    "$d using 1:($2 - 0.18):5 with labels font ',8' tc rgb '#505050' notitle"
  return table.concat(body, "\n"), height
end

function M.draw(st, file, o)
  local body, height = M.script(st, o)
  if not body then return nil, height end
  return plot.draw(body, file, height)
end

return M
