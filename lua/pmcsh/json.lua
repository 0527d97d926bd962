-- JSON text as pmcsh writes its records: one encoder for every results
-- file's line and every fingerprint, its keys sorted (bytewise) at every
-- level, so two runs' records differ only where their values do.  Reading
-- stays cjson's (pmcsh.results decodes what this writes).
local errors = require("pmcsh.errors")

local M = {}

-- cjson.null, where cjson is there, writes null
local has_cjson, cjson = pcall(require, "cjson")
local NULL = has_cjson and cjson.null or nil

local ESC = {['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f", ["\n"] = "\\n", ["\r"] = "\\r",
             ["\t"] = "\\t"}

local function escape(c) return ESC[c] or string.format("\\u%04x", c:byte()) end

-- A string as a JSON string, the one escaper: quote, backslash, controls
-- and DEL escaped as cjson escapes them; other bytes as they are, so the
-- string reads back the same bytes.  text = true, for a reader that wants
-- valid text (perf stat's --json, whatever a thread named itself): C1
-- controls escaped too, and in a string that is not UTF-8 each byte >=
-- 0x80 as the code point of its value.
local function str(s, text)
  if text and not utf8.len(s) then
    s = s:gsub('[%c"\\\128-\255]', escape)
  else
    s = s:gsub('[%c"\\]', escape)
    if text then s = s:gsub("\194([\128-\159])", escape) end
  end
  return '"' .. s .. '"'
end
M.string = str

-- A number: an integer exactly, a double in 14 digits (cjson's
-- encode_number_precision(14)); NaN and infinities are no JSON.
local function num(v)
  if math.type(v) == "integer" then return string.format("%d", v) end
  if v ~= v or v == math.huge or v == -math.huge then
    errors.argument("encode", 1, "cannot write " .. tostring(v) .. " as JSON (no NaN or infinity)")
  end
  return string.format("%.14g", v)
end

-- A table whose keys are 1..n (holes at most as many as the entries, or n
-- up to 10, as cjson takes a sparse list) is a list: its length, or nil.
local function list_length(t)
  local n, max = 0, 0
  for k in pairs(t) do
    if math.type(k) ~= "integer" or k < 1 then return nil end
    n, max = n + 1, math.max(max, k)
  end
  if n == 0 or (max > 2 * n and max > 10) then return nil end
  return max
end

local encode

local function object(t, out, depth)
  local keys, names = {}, {}
  for k in pairs(t) do
    local name
    if type(k) == "string" then name = k
    elseif type(k) == "number" then name = num(k)
    else errors.argument("encode", 1, "a " .. type(k) .. " key cannot be written as JSON") end
    keys[#keys + 1], names[k] = k, name
  end
  table.sort(keys, function(a, b) return names[a] < names[b] end)
  out[#out + 1] = "{"
  for i, k in ipairs(keys) do
    if i > 1 then out[#out + 1] = "," end
    out[#out + 1] = str(names[k])
    out[#out + 1] = ":"
    encode(t[k], out, depth + 1)
  end
  out[#out + 1] = "}"
end

function encode(v, out, depth)
  if depth > 1000 then errors.argument("encode", 1, "nested past 1000 levels (a cycle?)") end
  local t = type(v)
  if t == "string" then out[#out + 1] = str(v)
  elseif t == "number" then out[#out + 1] = num(v)
  elseif t == "boolean" then out[#out + 1] = tostring(v)
  elseif v == nil or (NULL ~= nil and v == NULL) then out[#out + 1] = "null"
  elseif t == "table" then
    local n = list_length(v)
    if n then
      out[#out + 1] = "["
      for i = 1, n do
        if i > 1 then out[#out + 1] = "," end
        encode(v[i], out, depth + 1)
      end
      out[#out + 1] = "]"
    else
      object(v, out, depth)
    end
  else
    errors.argument("encode", 1, "a " .. t .. " cannot be written as JSON")
  end
end

-- v (tables, strings, numbers, booleans, cjson.null) as one line of JSON,
-- objects' keys sorted; a function, NaN or a cycle is a bad argument.
M.encode = errors.facade("encode", function(v)
  local out = {}
  encode(v, out, 1)
  return table.concat(out)
end)

return M
