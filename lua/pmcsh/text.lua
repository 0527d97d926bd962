-- Text handed to another program or to a terminal, made inert: one quoter
-- per consumer (the shell, gnuplot's commands, gnuplot's data, CSV), each over
-- M.inert, so no byte of a results file, an event name or an option can
-- end a quoted string, start a command or move a terminal's cursor.
local M = {}

local function escape(c) return string.format("\\x%02x", c:byte()) end

-- s with every control character written as \xNN (newline and tab too,
-- unless keep_lines): C0 controls, DEL, and C1 controls as UTF-8
-- (U+0080..U+009F, which some terminals obey as ESC sequences); every
-- byte >= 0x80 too where s is not valid UTF-8 (a terminal in an 8-bit
-- mode obeys 0x9b as CSI).
function M.inert(s, keep_lines)
  s = tostring(s):gsub(keep_lines and "[%z\1-\8\11-\31\127]" or "[%z\1-\31\127]", escape)
  if not utf8.len(s) then return (s:gsub("[\128-\255]", escape)) end
  return (s:gsub("\194[\128-\159]", function(c) return escape(c:sub(2)) end))
end

-- The columns s takes on a terminal: its UTF-8 characters, its bytes
-- where it is not UTF-8.
function M.width(s)
  return utf8.len(s) or #s
end

-- s padded with spaces to w columns (as it is where it is wider): a
-- table's column, where string.format's %-Ns takes no N past 99.
function M.pad(s, w)
  return s .. string.rep(" ", math.max(0, w - M.width(s)))
end

-- A word for sh -c: single-quoted, a quote inside written '\''.
function M.shell(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

-- A string in a gnuplot command: single-quoted, where gnuplot does neither
-- backquote (command) nor @ (macro) substitution nor backslash escapes; a
-- quote inside is doubled.  Controls are written out, since a newline
-- would end the command.
function M.gnuplot(s)
  return "'" .. M.inert(s):gsub("'", "''") .. "'"
end

-- A string field in a gnuplot data block: double-quoted, \ and " escaped
-- (data is never substituted); controls written out, since a newline would
-- end the line and could end the block.
function M.gnuplot_datum(s)
  return '"' .. M.inert(s):gsub('[\\"]', "\\%0") .. '"'
end

-- A CSV text field (RFC 4180), safe in a spreadsheet: one starting with
-- = + - @, a tab or a carriage return (a formula to Excel, LibreOffice and
-- Sheets: =HYPERLINK(...), @SUM(...)) is prefixed with a single quote and
-- quoted (OWASP's CSV injection rule); one holding the separator in use
-- (sep, a comma by default), a quote, or a separator a spreadsheet may
-- take instead (, ; |: a locale's own) is quoted, a quote inside doubled,
-- so no part of it starts a cell; controls written out.  Numbers are no
-- text: a writer formats them itself.
function M.csv(s, sep)
  s = tostring(s)
  local formula = s:find("^[=+%-@\t\r]") ~= nil
  s = M.inert(s)
  if formula then s = "'" .. s end
  if formula or s:find('[,;|"]') or (sep and sep ~= "" and s:find(sep, 1, true)) then
    return '"' .. s:gsub('"', '""') .. '"'
  end
  return s
end

return M
