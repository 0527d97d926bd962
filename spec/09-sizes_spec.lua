-- Sizes that keep a file one concern and a function one step: no Lua file
-- of lua/ or scripts/ over 500 lines, no function over 80 lines in Lua or
-- in the C of core/, kernels/ and marker/, but for the few below, each
-- with why.
local h = require("helpers")
local sizes = require("sizes")

local MAX_FILE, MAX_FUNCTION = 500, 80

-- Files over MAX_FILE lines, each with why.
local LONG_FILES = {
}

-- Functions over MAX_FUNCTION lines, "file:name" (C) or "file:line" (Lua),
-- each with why it reads better whole.
local LONG_FUNCTIONS = {
}

local function ls(cmd)
  local p = assert(io.popen(cmd))
  local out = {}
  for line in p:lines() do out[#out + 1] = line end
  p:close()
  return out
end

describe("the sizes", function()
  local root = require("pmcsh.paths").lua:gsub("/lua$", "")
  local function rel(path) return path:sub(#root + 2) end
  local lua_files = ls("find " .. h.shquote(root .. "/lua") .. " " .. h.shquote(root .. "/scripts") ..
    " -name '*.lua' | sort")
  local c_files = ls("ls " .. h.shquote(root) .. "/core/*.c " .. h.shquote(root) .. "/kernels/*.c " ..
    h.shquote(root) .. "/marker/*.c")

  it("are read from every Lua and C file", function()
    assert.is_true(#lua_files >= 50, #lua_files .. " Lua files")
    assert.is_true(#c_files >= 40, #c_files .. " C files")
  end)

  it("keep each Lua file at 500 lines or fewer", function()
    local long = {}
    for _, path in ipairs(lua_files) do
      local n = sizes.file_lines(path)
      if n > MAX_FILE and not LONG_FILES[rel(path)] then long[#long + 1] = rel(path) .. ": " .. n .. " lines" end
    end
    assert.are.same({}, long)
  end)

  it("keep each function at 80 lines or fewer, in Lua and in C", function()
    local long = {}
    for _, path in ipairs(lua_files) do
      for _, fn in ipairs(sizes.lua_functions(path)) do
        local key = rel(path) .. ":" .. fn.line
        if fn.lines > MAX_FUNCTION and not LONG_FUNCTIONS[key] then long[#long + 1] = key .. ": " .. fn.lines .. " lines" end
      end
    end
    for _, path in ipairs(c_files) do
      for _, fn in ipairs(sizes.c_functions(h.slurp(path))) do
        local key = rel(path) .. ":" .. fn.name
        if fn.lines > MAX_FUNCTION and not LONG_FUNCTIONS[key] then long[#long + 1] = key .. ": " .. fn.lines .. " lines" end
      end
    end
    assert.are.same({}, long)
  end)

  it("name no exception that is no longer one", function()
    local stale = {}
    for key in pairs(LONG_FILES) do
      local path = root .. "/" .. key
      if h.slurp(path) == "" or sizes.file_lines(path) <= MAX_FILE then stale[#stale + 1] = key end
    end
    table.sort(stale)
    assert.are.same({}, stale)
  end)

  it("see what they must, in text made to have them", function()
    local body = {}
    for i = 1, 81 do body[i] = "\tx += " .. i .. ";" end
    local c = "/* a comment (with parens) */\nstatic int short_one(int x)\n{\n\treturn x;\n}\n\n" ..
      "int long_one(int x,\n\t     int y)\n{\n" .. table.concat(body, "\n") .. "\n\treturn x + y;\n}\n" ..
      "static const struct s table[] = {\n\t{f(1)},\n};\nint decl(int);\n"
    local got = sizes.c_functions(c)
    assert.are.same({{name = "short_one", line = 2, lines = 4}, {name = "long_one", line = 7, lines = 86}}, got)
    local dir = h.tmpdir()
    local lua = {"local M = {}", "function M.f()"}
    for i = 1, 80 do lua[#lua + 1] = "  local x" .. i .. " = " .. i end
    lua[#lua + 1] = "end"
    lua[#lua + 1] = "return M"
    h.write(dir .. "/f.lua", table.concat(lua, "\n") .. "\n")
    local fns, n = sizes.lua_functions(dir .. "/f.lua"), sizes.file_lines(dir .. "/f.lua")
    os.execute("rm -rf " .. h.shquote(dir))
    assert.are.same({{line = 2, lines = 82}}, fns)
    assert.are.equal(84, n)
  end)
end)
