-- The survey's table as a heat map (gnuplot, through pmcsh.plot): a row per
-- event, a column per workload, each cell coloured by its value over the
-- largest in its row of the same unit.
local metrics = require("pmcsh.metrics")
local plot = require("pmcsh.plot")
local report = require("pmcsh.survey.report")
local text = require("pmcsh.text")
local workloads = require("pmcsh.survey.workloads")

local M = {}
local gq, datum, fmt = text.gnuplot, text.gnuplot_datum, metrics.fmt

-- The survey's rows for the heat map: {name, values (one per kernel, the
-- cell's stat), top (per unit, the largest magnitude), cells}, and the keys
-- of the rows that are zero in every column.
local function survey_rows(st, kernels, units, stat)
  local rows, zero = {}, {}
  for _, r in ipairs(st.header.rows) do
    local cells = st.cells[r.key]
    if cells then
      local vals, top, any = {}, {}, false
      for i, k in ipairs(kernels) do
        vals[i] = report.cell_stat(cells[k], stat)
        local u = units[k]
        top[u] = math.max(top[u] or 0, math.abs(vals[i] or 0))
        any = any or (vals[i] or 0) ~= 0
      end
      if not any then zero[#zero + 1] = r.key
      else rows[#rows + 1] = {name = report.label(st, r), values = vals, top = top, cells = cells} end
    end
  end
  return rows, zero
end

-- The image's data block, a line per cell: x, y, the value over its row's
-- top of the same unit, the value's label and its spread's.
local function survey_data(rows, kernels, units)
  local data = {}
  for y, r in ipairs(rows) do
    for x, k in ipairs(kernels) do
      local v, c, top = r.values[x], r.cells[k], r.top[units[k]]
      data[#data + 1] = {x - 1, #rows - y, v and string.format("%.6g", top > 0 and v / top or 0) or "NaN",
        datum(v and fmt(v, 1):gsub("^%s+", "") or "n/a"), datum(v and report.spread_text(c) or "")}
    end
  end
  return data
end

-- The lines under the chart: which columns count per what (with more than
-- one unit), then the rows left out, wrapped at 120 characters.
local function survey_notes(kernels, units, zero)
  local per, nunits = {}, 0
  for _, k in ipairs(kernels) do
    if not per[units[k]] then per[units[k]], nunits = {}, nunits + 1 end
    table.insert(per[units[k]], k)
  end
  local lines, cur = {}, string.format("zero in every column (left out, %d):", #zero)
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

-- The survey table as a heat map: a row per event, a column per
-- workload, each cell coloured by its value over the largest in its row
-- among the columns of the same unit (a chase's hundreds per load and a
-- loop's 0.6 per iteration are not on one scale), and labelled with the
-- value and its spread.  Rows that are zero in every column are left out
-- and named under the chart.  o.stat as the table's.  M.script
-- returns the gnuplot commands and the picture's height.
function M.script(st, o)
  o = o or {}
  local kernels = st.header.kernels
  local units = workloads.units(kernels, {loops = st.header.loops})
  local rows, zero = survey_rows(st, kernels, units, o.stat)
  if #rows == 0 then return nil, "nothing to plot: every counted row is zero" end
  local all = #rows
  for i = M.MAX_ROWS + 1, all do rows[i] = nil end   -- a picture a viewer opens
  local xt, yt = {}, {}
  for x, k in ipairs(kernels) do xt[#xt + 1] = string.format("%s %d", gq(k), x - 1) end
  for y, r in ipairs(rows) do yt[#yt + 1] = string.format("%s %d", gq(r.name), #rows - y) end
  local height = plot.HEIGHT + math.max(0, #rows - 20) * plot.ROW_PX
  local body = {
    plot.datablock("d", survey_data(rows, kernels, units)),
    "set title " .. gq(string.format("Events per iteration%s; colour: value / the largest in its row of the same unit; " ..
      "± = (max - min) / mean over repetitions", (o.stat and o.stat ~= "mean") and (" (" .. o.stat .. ")") or "")) ..
      " font ',10'",
    "set x2tics (" .. table.concat(xt, ", ") .. ") scale 0",
    "set ytics (" .. table.concat(yt, ", ") .. ") scale 0",
    string.format("set xrange [-0.5:%f]; set x2range [-0.5:%f]; set yrange [-0.5:%f]", #kernels - 0.5, #kernels - 0.5, #rows - 0.5),
    "unset xtics",
    -- light enough at 1 that black labels stay readable
    "set palette defined (0 '#f7f7f7', 0.5 '#fddbc7', 1 '#ef8a62')",
    "set cbrange [0:1]",
    "set cblabel 'value / row maximum of the same unit'",
    "set lmargin 34",
    "set tmargin 4",
  }
  local lines = survey_notes(kernels, units, zero)
  if all > #rows then
    table.insert(lines, 1, string.format("the first %d rows of %d: a chart holds at most %d (the table shows them all; " ..
      "-e or --pattern narrows a survey)", #rows, all, M.MAX_ROWS))
  end
  body[#body + 1] = string.format("set bmargin %d", #lines + 2)
  for i, l in ipairs(lines) do
    body[#body + 1] = string.format("set label %s at screen 0.01, character %d left", gq(l), #lines - i + 1)
  end
  body[#body + 1] = "plot $d using 1:2:3 with image notitle, $d using 1:($2 + 0.12):4 with labels font ',10' notitle, " ..
    "$d using 1:($2 - 0.12):5 with labels font ',8' tc rgb '#505050' notitle"
  return table.concat(body, "\n"), height
end

function M.draw(st, file, o)
  local body, height = M.script(st, o)
  if not body then return nil, height end
  return plot.draw(body, file, height)
end

return M
