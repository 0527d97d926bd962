-- Documentation that lives next to the code it describes: modules call
-- doc(obj, "name", text) where they define obj; help() reads it back.
local M = {}

local by_object = setmetatable({}, {__mode = "k"})
local by_name = {}

-- Registers `text` for `obj` (a module table or a function) under `name`
-- ("pmc" for a module, "pmc.group" for a function). Returns obj.
function M.doc(obj, name, text)
  assert(type(name) == "string", "doc: name must be a string")
  text = text:gsub("^%s*\n", ""):gsub("%s+$", "")
  local entry = {name = name, text = text}
  if obj ~= nil then by_object[obj] = entry end
  by_name[name] = entry
  return obj
end

local function topics()
  local mods, out = {}, {}
  for name in pairs(by_name) do
    if not name:find("[.:]") then mods[#mods + 1] = name end
  end
  table.sort(mods)
  for _, m in ipairs(mods) do
    -- the first sentence of the first paragraph, cut to fit a line
    local para = by_name[m].text:match("^(.-)\n%s*\n") or by_name[m].text
    local first = para:gsub("%s+", " "):match("^(.-%.)%s") or para:gsub("%s+", " ")
    if #first > 66 then first = first:sub(1, 66):gsub("%s+%S*$", "") .. " ..." end
    out[#out + 1] = string.format("  %-10s %s", m, first)
  end
  return table.concat(out, "\n")
end

local function functions_of(mod)
  local names = {}
  for name in pairs(by_name) do
    if name:sub(1, #mod + 1) == mod .. "." or name:sub(1, #mod + 1) == mod .. ":" then
      names[#names + 1] = name
    end
  end
  table.sort(names)
  return names
end

-- Modules load when first used, and register their docs as they load: the
-- host gives a function that loads them all, called before the topics are
-- listed or a name is looked up.
local load_all = function() end

function M.before_lookup(fn)
  load_all = fn
end

-- The text for x (an object, or a name such as "pmc.group"), or nil.
function M.text(x)
  if type(x) == "string" then load_all() end
  local entry = by_object[x] or (type(x) == "string" and by_name[x])
  if not entry then return nil end
  local text = entry.text
  local fns = functions_of(entry.name)
  if #fns > 0 then text = text .. "\n\nFunctions: " .. table.concat(fns, ", ") end
  return text
end

-- help() lists the topics; help(x) prints the documentation of x.
function M.help(x)
  if x == nil then
    load_all()
    print("pmcsh: Lua 5.4 with performance counters, STREAM kernels and pointer chases.\n")
    print("Topics (help(topic) or help(function)):")
    print(topics())
    print("\nRecipes: pmcsh --help lists them; recipe.run(name, opts) runs one.")
    return
  end
  local text = M.text(x)
  if not text then
    print(string.format("no documentation for %s", type(x) == "string" and x or tostring(x)))
    return
  end
  print(text)
end

M.doc(M.help, "help", [[
help() lists the topics; help(x) prints the documentation of a module or
function, given as the object itself (help(pmc.group)) or its name
(help "pmc.group").]])

return M
