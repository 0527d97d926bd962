-- The C side's floors, read from the objects the binary was linked from
-- (nm: a file calls another where one of its undefined symbols is defined
-- there): no two files of core/ call each other, nor do three or more in
-- a circle; kernels/ calls nothing in core/; each binding file (core/l*.c)
-- defines at most one luaopen, and the preload table registers every one.
local h = require("helpers")
local cgraph = require("cgraph")
local graph = require("graph")

local function ls(pattern)
  local p = assert(io.popen("ls " .. pattern .. " 2>/dev/null"))
  local out = {}
  for line in p:lines() do out[#out + 1] = line end
  p:close()
  return out
end

-- The build folder of the running binary: build/ beside ./pmcsh, or the
-- binary's own folder (make asan's build-asan/pmcsh).
local function build_dir()
  local dir = h.exe:match("^(.*)/[^/]*$") or "."
  for _, d in ipairs({dir, dir .. "/build"}) do
    if #ls(h.shquote(d) .. "/core/lpmc.o") == 1 then return d end
  end
  error("no core/lpmc.o beside " .. h.exe .. ": build with make", 0)
end

local function objects(dir, floors)
  local out = {}
  for _, floor in ipairs(floors) do
    for _, path in ipairs(ls(h.shquote(dir .. "/" .. floor) .. "/*.o")) do
      out[floor .. "/" .. path:match("([^/]*)%.o$")] = path
    end
  end
  return out
end

describe("the C floors", function()
  local g = cgraph.read(objects(build_dir(), {"core", "kernels"}))

  it("are read from every object of core/ and kernels/", function()
    local n = 0
    for _ in pairs(g.edges) do n = n + 1 end
    assert.is_true(n >= 40, n .. " objects read")
    assert.is_truthy(g.edges["core/lpmc"]["core/lreading"])
    assert.is_truthy(g.edges["core/lstream"]["kernels/stream_run"])
  end)

  it("have no two core files calling each other, and no longer circle", function()
    assert.are.same({}, cgraph.pairs(g.edges))
    assert.are.same({}, graph.cycles(g.edges))
  end)

  it("have kernels/ call nothing in core/", function()
    local up = {}
    for name, to in pairs(g.edges) do
      if name:match("^kernels/") then
        for o, s in pairs(to) do
          if o:match("^core/") then up[#up + 1] = name .. " calls " .. o .. " (" .. s .. ")" end
        end
      end
    end
    table.sort(up)
    assert.are.same({}, up)
  end)

  it("have one luaopen per binding file, each in the preload table", function()
    assert.are.same({}, cgraph.luaopens(g.defines))
    local missing = {}
    for name, d in pairs(g.defines) do
      for s in pairs(d) do
        if s:match("^luaopen_") and g.edges["core/lpreload"][name] == nil then
          missing[#missing + 1] = name .. ": " .. s
        end
      end
    end
    assert.are.same({}, missing)
  end)

  it("see what they must, in objects made to have them: a pair, a circle of three, two luaopens", function()
    local dir = h.tmpdir()
    local src = {
      a = "int b(void);\nint a(void) { return b(); }\n",
      b = "int a(void);\nint b(void) { return a(); }\n",
      c = "int d(void);\nint c(void) { return d(); }\n",
      d = "int e(void);\nint d(void) { return e(); }\n",
      e = "int c(void);\nint e(void) { return c() + 1; }\nint luaopen_x(void) { return 0; }\n" ..
        "int luaopen_y(void) { return 1; }\n",
      f = "int a(void);\nint f(void) { return a(); }\n",
    }
    local objs = {}
    for name, text in pairs(src) do
      h.write(dir .. "/" .. name .. ".c", text)
      assert.is_true(os.execute((os.getenv("CC") or "cc") .. " -c -o " .. h.shquote(dir .. "/" .. name .. ".o") ..
        " " .. h.shquote(dir .. "/" .. name .. ".c")))
      objs[name] = dir .. "/" .. name .. ".o"
    end
    local got = cgraph.read(objs)
    os.execute("rm -rf " .. h.shquote(dir))
    assert.are.same({"a <-> b (a calls b, b calls a)"}, cgraph.pairs(got.edges))
    assert.are.same({{"a", "b", "a"}, {"c", "d", "e", "c"}}, graph.cycles(got.edges))
    assert.are.same({e = {"luaopen_x", "luaopen_y"}}, cgraph.luaopens(got.defines))
  end)
end)
