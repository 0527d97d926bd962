-- The third hostile audit's findings, each at its cause: text from a
-- results file, an event name or an option reaches gnuplot, the shell and
-- the terminal as inert text; a bare recipe name means the recipe.
local h = require("helpers")
local cjson = require("cjson")
local plot = require("pmcsh.plot")
local text = require("pmcsh.text")

-- A finished survey file whose one event is `event` (unit `unit`),
-- counted over add: `pmcsh survey --report` renders it.
local function survey_file(file, event, unit)
  local header = {type = "header", format = "pmcsh-survey/1", kernels = {"add"}, n = 1000, reps = 1,
    units = {{labels = {event}, keys = {event}, kind = "single"}}, rows = {{key = event}}}
  h.write(file, cjson.encode(header) .. "\n" ..
    cjson.encode({type = "run", kernel = "add", group = 1, cells = {{key = event, value = 1.5, unit = unit}}}) ..
    '\n{"type":"done"}\n')
end

local function size_of(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local n = f:seek("end")
  f:close()
  return n
end

-- A gnuplot script less its strings: '...' (a quote doubled inside) and
-- "..." (backslash escapes), as gnuplot reads commands and data.
local function outside_strings(script)
  local out, i = {}, 1
  while i <= #script do
    local c = script:sub(i, i)
    if c == "'" then
      local j = script:find("'", i + 1, true)
      assert(j, "unterminated single-quoted string")
      i = j + 1
    elseif c == '"' then
      local j = i + 1
      while script:sub(j, j) ~= '"' do
        assert(j <= #script, "unterminated double-quoted string")
        j = j + (script:sub(j, j) == "\\" and 2 or 1)
      end
      i = j + 1
    else
      out[#out + 1] = c
      i = i + 1
    end
  end
  return table.concat(out)
end

describe("text handed to gnuplot", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. h.shquote(dir)) end)
  local function in_dir(args, env)
    return h.run(args, {env = "cd " .. h.shquote(dir) .. " && " .. (env or "")})
  end

  it("runs no backquote or macro of an event name, a unit or the picture's name", function()
    if not h.need(plot.gnuplot(), "gnuplot is not installed") then return end
    survey_file(dir .. "/evil.jsonl", "x`touch PWNED1`@y", "n`touch PWNED2`s")
    local r = in_dir({"survey", "--report", "evil.jsonl", "--plot", "h`touch PWNED3`.png"})
    assert.are.equal(0, r.code, r.err)
    for i = 1, 3 do assert.is_nil(size_of(dir .. "/PWNED" .. i), "PWNED" .. i .. " was created") end
    assert.is_true(size_of(dir .. "/h`touch PWNED3`.png") > 1000)
  end)

  it("lets no newline in a name end the data block and start a command", function()
    if not h.need(plot.gnuplot(), "gnuplot is not installed") then return end
    survey_file(dir .. "/nl.jsonl", "a\nEOD\nsystem('touch PWNED4')\n$d << EOD", "u\nsystem('touch PWNED5')")
    local r = in_dir({"survey", "--report", "nl.jsonl", "--plot", "nl.png"})
    assert.are.equal(0, r.code, r.err)
    assert.is_nil(size_of(dir .. "/PWNED4"))
    assert.is_nil(size_of(dir .. "/PWNED5"))
    assert.is_true(size_of(dir .. "/nl.png") > 1000)
  end)

  it("quotes every name so that the script holds it whole inside one string", function()
    local st = {header = {kernels = {"add"}, rows = {}}, cells = {}}
    local names = {"`id`", "@m", "it's", 'say "hi"', "a\\b", "l1\nl2\r\27[2J", "\194\155x"}
    for _, n in ipairs(names) do
      st.header.rows[#st.header.rows + 1] = {key = n}
      st.cells[n] = {add = {value = 1, count = 1}}
    end
    local script = assert(require("pmcsh.survey.heatmap").script(st))
    -- outside single-quoted and data strings no backquote, @ or control byte but newlines
    assert.is_nil(outside_strings(script):find("[`@\1-\9\11-\31\127]"))
    for _, n in ipairs(names) do
      assert.truthy(script:find(text.gnuplot(n), 1, true), n)
      assert.is_nil(text.gnuplot(n):sub(2, -2):gsub("''", ""):find("'"), n)
    end
    assert.is_nil(text.inert("\27[2J\194\155"):find("[%c\194]"))
  end)

  it("keeps the script's shape whatever the names: make fuzz's render harness over its seeds", function()
    -- the harness raises where a name's byte leaves its string (spec/fuzz/render.lua)
    local drive = dofile("spec/fuzz/render.lua")
    local seeds = require("pmcsh._sys").dir("spec/fuzz/corpus/render")
    assert.is_true(#seeds >= 5)
    for _, name in ipairs(seeds) do drive(h.slurp("spec/fuzz/corpus/render/" .. name)) end
  end)

  it("fails when gnuplot draws nothing, and keeps the picture already there whole", function()
    if not h.need(plot.gnuplot(), "gnuplot is not installed") then return end
    survey_file(dir .. "/s.jsonl", "task-clock")
    local r = in_dir({"survey", "--report", "s.jsonl", "--plot", "s.png"})
    assert.are.equal(0, r.code, r.err)
    local good = size_of(dir .. "/s.png")
    assert.is_true(good > 1000)
    r = in_dir({"survey", "--report", "s.jsonl", "--plot", "s.png"}, "PMCSH_GNUPLOT=/bin/echo")
    assert.are.equal(1, r.code, r.err)
    assert.matches("gnuplot wrote no picture to 's%.png'", r.err)
    assert.are.equal(good, size_of(dir .. "/s.png"))
    r = in_dir({"survey", "--report", "s.jsonl", "--plot", "s.png"}, "PMCSH_GNUPLOT=/bin/false")
    assert.are.equal(1, r.code, r.err)
    assert.matches("gnuplot failed", r.err)
    assert.are.equal(good, size_of(dir .. "/s.png"))
    local leftovers = io.popen("ls -A " .. h.shquote(dir)):read("a")
    assert.is_nil(leftovers:find("%.part"), leftovers)
  end)

  it("refuses to plot over the survey's own results file (exit 2, the file untouched)", function()
    survey_file(dir .. "/s.svg", "task-clock")
    local before = h.slurp(dir .. "/s.svg")
    for _, args in ipairs({{"survey", "--report", "s.svg", "--plot", "./s.svg"},
                           {"survey", "--out", "o.svg", "--plot", "o.svg", "-e", "task-clock"},
                           {"survey", "--resume", "s.svg", "--plot", dir .. "/s.svg"}}) do
      local r = in_dir(args)
      assert.are.equal(2, r.code, r.err)
      assert.matches("names the results file", r.err)
    end
    assert.are.equal(before, h.slurp(dir .. "/s.svg"))
    assert.is_nil(size_of(dir .. "/o.svg"))
  end)
end)

describe("text handed to a terminal", function()
  it("writes a results file's control characters out, in the table and the CSV", function()
    local dir = h.tmpdir()
    survey_file(dir .. "/t.jsonl", "ev\27]0;title\7\27[2J", "u\27[31m")
    for _, args in ipairs({{"survey", "--report", dir .. "/t.jsonl"}, {"survey", "--report", dir .. "/t.jsonl", "--csv"}}) do
      local r = h.run(args)
      assert.are.equal(0, r.code, r.err)
      assert.is_nil(r.out:find("[\1-\8\11-\31\127]"), r.out)
      assert.truthy(r.out:find("ev\\x1b]0;title\\x07\\x1b[2J", 1, true), r.out)
    end
    os.execute("rm -rf " .. h.shquote(dir))
  end)
end)

describe("a bare recipe name", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. h.shquote(dir)) end)
  local function in_dir(args)
    return h.run(args, {env = "cd " .. h.shquote(dir) .. " && "})
  end

  it("runs the recipe, never a file of that name in the current folder, and says so", function()
    h.write(dir .. "/stat", 'io.open("OWNED", "w"):close()\n')
    local r = in_dir({"stat", "-e", "task-clock", "-x", ",", "--", "true"})
    assert.are.equal(0, r.code, r.err)
    assert.is_nil(size_of(dir .. "/OWNED"))
    assert.matches("msec,task%-clock", r.err)
    assert.matches("running the recipe stat; the file 'stat' in this folder runs as %./stat", r.err)
    r = in_dir({"./stat"})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal(0, size_of(dir .. "/OWNED"))
  end)

  it("is not broken by a data file of its name", function()
    h.write(dir .. "/list", "not lua at all {\n")
    local r = in_dir({"list", "page-faults"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("page%-faults", r.out)
  end)

  it("that names no recipe still runs a file of that name, as lua does", function()
    h.write(dir .. "/myscript", 'print("ran", arg[1])\n')
    local r = in_dir({"myscript", "x"})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal("ran\tx\n", r.out)
    assert.are.equal("", r.err)
  end)
end)

describe("Ctrl-C", function()
  it("inside a metric's function stops the recipe: status 130, no traceback", function()
    local dir = h.tmpdir()
    h.write(dir .. "/spin.lua", [[
local metrics = require("pmcsh.metrics")
return {description = "a metric that spins", run = function()
  local m = {name = "spin", events = {}, fn = function()
    io.popen("kill -INT " .. require("pmcsh._sys").getpid()):close()
    while true do end
  end}
  local v, why = metrics.eval(m, {}, {})
  print("evaluated", v, why)
end}
]])
    local r = h.run({"spin"}, {env = "PMCSH_PATH=" .. h.shquote(dir)})
    os.execute("rm -rf " .. h.shquote(dir))
    assert.are.equal(130, r.code, r.err)
    assert.matches("interrupted", r.err)
    assert.not_matches("evaluated", r.out)
    assert.not_matches("traceback", r.err)
  end)
end)

describe("a group's target", function()
  local pmc, stream, sys = require("pmcsh.pmc"), require("pmcsh.stream"), require("pmcsh._sys")

  it("counts every worker of a threaded run once: the calling thread, its own id, inherit", function()
    local threads = math.min(2, #require("pmcsh.machine").cpus())
    if not h.need(threads == 2, "one cpu: no threaded run") then return end
    -- the first touch of a fresh 16 MiB array by two threads, each its
    -- half: 4096 faults on 4 KiB pages, whoever takes them (a worker left
    -- out: ~2048; counted twice: ~6144)
    local want = 2^21 * 8 / 4096
    local lo, hi = h.touch_faults(want)   -- the sanitizer's shadow too
    for i, o in ipairs({{}, {pid = sys.getpid()}, {inherit = true}, {pid = sys.getpid(), inherit = true}}) do
      local g <close> = assert(pmc.group({"page-faults:u"}, o))
      local s <close> = assert(stream.new{n = 2^21, threads = 2, touch = false, quiet = true})
      local r = assert(s:run("fill", {reps = 1, warmup = false, group = g}))
      local v = r.counts[1].value
      assert.is_true(v >= lo and v <= hi * 1.01 + 8, string.format("target %d: %d faults for %d pages", i, v, want))
    end
  end)

  it("refuses to start, stop, reset or measure again inside g:measure's function, and reads there", function()
    local g <close> = assert(pmc.group{"task-clock"})
    local s = assert(stream.new{n = 4096, quiet = true})
    for name, fn in pairs({start = function() g:start() end, stop = function() g:stop() end,
                           reset = function() g:reset() end, measure = function() g:measure(function() end) end,
                           engine = function() s:run("copy", {group = g, reps = 1}) end}) do
      local ok, err = pcall(g.measure, g, fn)
      assert.is_false(ok, name)
      assert.matches("the group is measuring", err, nil, name)
    end
    local r = assert(g:measure(function() assert(g:read()) end))
    assert.is_true(r[1].value > 0)
    assert(g:start()); assert(g:stop())
  end)

  it("names a bad pid or cpu in the options, by field", function()
    local ok, err = pcall(pmc.group, {"task-clock"}, {pid = "x"})
    assert.is_false(ok)
    assert.matches("bad argument #2 to 'group' %(pid: an integer expected, got string%)", err)
    ok, err = pcall(pmc.group, {"task-clock"}, {cpus = {0, 1.5}})
    assert.matches("cpus%[2%]: a cpu number expected, got a fraction", err)
  end)
end)

describe("a finalizer at exit", function()
  it("makes no stream, group or chain (Lua would never finalize it): a warning, nothing leaked", function()
    -- under make asan, LeakSanitizer reports what such a handle held
    for _, make in ipairs({'stream.new{n = 4096, quiet = true}:run("copy")', 'pmc.group{"task-clock"}:start()',
                           'chase.chain{size = 1 << 16}'}) do
      local r = h.run({"-W", "-e", "X = setmetatable({}, {__gc = function() " .. make .. " end})"})
      assert.are.equal(0, r.code, r.err)
      assert.matches("error in __gc %(.-pmcsh is exiting: no pmcsh%.%a+ can be made in a finalizer now%)", r.err)
    end
  end)
end)

describe("a bad argument to an engine", function()
  -- raised where the user called the facade, numbered and named as the
  -- user wrote the call, as Lua's own library does; never inside lua/pmcsh
  local cases = {
    {"chase.latency{size = -5}", "bad argument #1 to 'latency' %(size: must be positive, got %-5%)"},
    {"chase.parallelism{size = 4096, max = 2, order = 'nosuch'}", "bad argument #1 to 'parallelism' %(order: unknown value"},
    {"local s = stream.new{n = 1000, quiet = true}; s:run(5)", "bad argument #1 to 'run' %(unknown kernel '5'"},
    {"local s = stream.new{n = 1000, quiet = true}; s:run('copy', {reps = 0})", "bad argument #2 to 'run' %(reps:"},
    {"stream.new{n = -1}", "bad argument #1 to 'new' %(n:"},
    {"pmc.group({'task-clock'}, {pid = 'x'})", "bad argument #2 to 'group' %(pid: an integer expected, got string%)"},
    {"pmc.group{}", "bad argument #1 to 'group' %(no events given%)"},
  }
  for _, c in ipairs(cases) do
    it(c[1], function()
      local r = h.run({"-e", c[1]})
      assert.are.equal(1, r.code)
      assert.matches("^[^\n]*: %(command line%):1: " .. c[2], r.err)
      assert.is_nil(r.err:find("lua/pmcsh", 1, true), r.err)
    end)
  end

  it("is an error object of kind argument, which a recipe turns into usage (status 2)", function()
    local errors = require("pmcsh.errors")
    local ok, e = pcall(chase.latency, {size = "lots"})
    assert.is_false(ok)
    assert.are.same({"argument", 1, "latency", 'size: not a size: "lots"'}, {e.kind, e.arg, e.func, e.message})
    assert.is_true(errors.is(e, "argument"))
    assert.is_false(errors.is("bad argument #1 to 'x' (y)"))   -- text is never decoded
  end)
end)

describe("a handle's metatable", function()
  it("is hidden: getmetatable names the class, setmetatable is refused, no metamethod can be called on a stray value", function()
    local g <close> = assert(pmc.group{"task-clock"})
    local s <close> = assert(stream.new{n = 1000, quiet = true})
    local c <close> = assert(chase.chain{size = 4096})
    assert.are.same({"pmcsh.group", "pmcsh.stream", "pmcsh.chain"}, {getmetatable(g), getmetatable(s), getmetatable(c)})
    assert.has_error(function() setmetatable(g, {}) end)
    -- the real ones, reached the way only debug code can, check their argument
    for _, h in ipairs({g, s, c}) do
      for name, f in pairs(debug.getmetatable(h)) do
        if type(f) == "function" then
          for _, stray in ipairs({5.5, {}, "x", io.stdout}) do
            local ok, e = pcall(f, stray, "value")
            assert.is_false(ok, name)
            assert.matches("expected", tostring(e))
          end
        end
      end
    end
  end)
end)
