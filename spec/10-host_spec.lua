-- The command line: lua.c's conventions, exit codes, recipes.
local h = require("helpers")

local fixtures = "spec/fixtures/recipes"

describe("pmcsh command line", function()
  it("runs a script with arg set as lua sets it", function()
    local s = h.write(nil, "print(arg[0], arg[1], arg[2], #arg, arg[-1] ~= nil, ...)")
    local r = h.run({s, "a", "b c"})
    assert.are.equal(0, r.code)
    assert.are.equal(s .. "\ta\tb c\t2\ttrue\ta\tb c\n", r.out)
    os.remove(s)
  end)

  it("executes -e chunks in order, and -l libraries", function()
    local r = h.run({"-e", "x = 20", "-l", "s=string", "-e", "print(x + 1, s.rep('ab', 2))"})
    assert.are.equal(0, r.code)
    assert.are.equal("21\tabab\n", r.out)
  end)

  it("reads a script from stdin when stdin is not a terminal", function()
    local r = h.run({}, {stdin = "print(6 * 7)"})
    assert.are.equal(0, r.code)
    assert.are.equal("42\n", r.out)
    r = h.run({"-"}, {stdin = "print(#arg)"})
    assert.are.equal("0\n", r.out)
  end)

  it("enters the REPL after a script with -i", function()
    local r = h.run({"-i", "-e", "y = 5"}, {stdin = "y * 2\n", env = "HOME=" .. h.tmpdir()})
    assert.are.equal(0, r.code)
    assert.matches("10", r.out)
  end)

  it("prints lua's version with -v, pmcsh's with --version, and help with -h", function()
    local r = h.run({"-v"})
    assert.are.equal(0, r.code)
    assert.matches("^Lua 5%.4%.%d+  Copyright", r.out)
    r = h.run({"--version"})
    assert.matches("^pmcsh %d+%.%d+%.%d+ %(Lua 5%.4", r.out)
    r = h.run({"--help"})
    assert.are.equal(0, r.code)
    assert.matches("%-e stat", r.out)
    assert.matches("Recipes", r.out)
  end)

  it("treats a script error as status 1 with message and traceback", function()
    local s = h.write(nil, "local function f() error('boom') end\nf()\n")
    local r = h.run({s})
    assert.are.equal(1, r.code)
    assert.matches("boom", r.err)
    assert.matches("stack traceback:", r.err)
    assert.matches("in local 'f'", r.err)
    os.remove(s)
    r = h.run({"-e", "error({})"})
    assert.are.equal(1, r.code)
    r = h.run({"-e", "x = = 1"})
    assert.are.equal(1, r.code)
    assert.matches("unexpected symbol", r.err)
  end)

  it("refuses bad options as lua does (status 1), and names a close recipe", function()
    local r = h.run({"--bogus"})
    assert.are.equal(1, r.code)
    assert.matches("unrecognized option '%-%-bogus'\nusage: ", r.err)
    r = h.run({"-e"})
    assert.are.equal(1, r.code)
    assert.matches("'%-e' needs argument", r.err)
    r = h.run({"no-such-recipe-or-file"})
    assert.are.equal(1, r.code)
    assert.matches("cannot open no%-such%-recipe%-or%-file: no such file, and no recipe of that name %(pmcsh", r.err)
    r = h.run({"surve"})
    assert.are.equal(1, r.code)
    assert.matches("no recipe of that name %(did you mean survey%? pmcsh %-%-help lists the recipes%)", r.err)
    r = h.run({"./missing.lua"})
    assert.are.equal(1, r.code)
    assert.matches("cannot open ./missing.lua", r.err)
  end)

  it("stops handling options at --", function()
    local s = h.write(nil, "print(...)")
    local r = h.run({"--", s, "-e", "x"})
    assert.are.equal("-e\tx\n", r.out)
    os.remove(s)
  end)
end)

describe("recipes", function()
  local env = "PMCSH_PATH=" .. fixtures

  it("are found on PMCSH_PATH and listed by --help with their folder", function()
    local r = h.run({"--help"}, {env = env})
    assert.matches("greet%s+greets, to test option handling%s+%[" .. fixtures:gsub("%-", "%%-") .. "%]", r.out)
  end)

  it("parse declared options of every type", function()
    local r = h.run({"greet", "--name", "pmc", "-n", "2", "--size=1M", "-e", "a,msr/tsc/,u/x=1,y=2/", "--loud", "--", "p", "q"}, {env = env})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal("HELLO PMC\nHELLO PMC\nsize=1048576 mode=a\nevents=a|msr/tsc/|u/x=1,y=2/\nargs=p|q\n", r.out)
  end)

  it("take values attached to short options, as getopt does", function()
    local r = h.run({"greet", "-n2", "-ea,b", "--name=x"}, {env = env})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal("hello x\nhello x\nsize=4096 mode=a\nevents=a|b\n", r.out)
    r = h.run({"greet", "-q1"}, {env = env})
    assert.are.equal(2, r.code)
    assert.matches("unknown option '%-q1'", r.err)
  end)

  it("take their exit status from run, and 1 on error", function()
    assert.are.equal(3, h.run({"greet", "--name", "three"}, {env = env}).code)
    local r = h.run({"greet", "--name", "fail"}, {env = env})
    assert.are.equal(1, r.code)
    assert.matches("greeting failed", r.err)
    assert.matches("stack traceback", r.err)
  end)

  it("stop on a Ctrl-C that comes while the recipe library loads: status 130, no traceback", function()
    -- A copy of the library whose pmcsh.recipe sends its pmcsh SIGINT as it
    -- loads (popen: os.execute would ignore the signal), so the stop hook
    -- fires inside require; make asan's slower start showed the window.
    local paths, root = require("pmcsh.paths"), h.tmpdir()
    assert(os.execute(("cp -R %s %s/lua && ln -s %s %s/scripts && ln -s %s %s/events"):format(
      h.shquote(paths.lua), root, h.shquote(paths.scripts), root, h.shquote(paths.events), root)))
    local lib = root .. "/lua/pmcsh/"
    assert(os.rename(lib .. "recipe.lua", lib .. "recipe_real.lua"))
    local f = assert(io.open(lib .. "recipe.lua", "w"))
    f:write('io.popen("kill -INT " .. require("pmcsh._sys").getpid()):close()\n',
            "for _ = 1, 1e8 do end\n",
            ("return dofile(%q)\n"):format(lib .. "recipe_real.lua"))
    f:close()
    local r = h.run({"greet"}, {env = env .. " PMCSH_HOME=" .. root})
    os.execute("rm -rf " .. root)
    assert.are.equal(130, r.code, r.err)
    assert.matches("interrupted", r.err)
    assert.not_matches("traceback", r.err)
  end)

  it("convert declared defaults like given values", function()
    local r = h.run({"greet"}, {env = env})
    assert.are.equal("hello world\nsize=4096 mode=a\n", r.out)
  end)

  it("report an option value a module refuses as bad usage, status 2", function()
    local r = h.run({"greet", "--name", "badarg"}, {env = env})
    assert.are.equal(2, r.code)
    assert.matches("^pmcsh greet: bad argument #1 to 'latency' %(size: not a size: \"lots\"%)", r.err)
    assert.not_matches("traceback", r.err)
    -- a bad argument of Lua's own library is the recipe's bug: status 1, where it is
    r = h.run({"greet", "--name", "libbug"}, {env = env})
    assert.are.equal(1, r.code)
    assert.matches("bad argument #1 to 'rep'", r.err)
    assert.matches("traceback", r.err)
    -- a shipped one: the largest chain of a sweep is checked before any runs
    local sys = require("pmcsh._sys")
    local t0 = sys.now()
    r = h.run({"latency", "--to", "1T"})
    assert.are.equal(2, r.code)
    assert.matches("^pmcsh latency: %-%-to 1T: size too large: more than 2%^32%-1 elements", r.err)
    assert.is_true(sys.now() - t0 < 5)
  end)

  it("print their own --help from the declaration", function()
    local r = h.run({"greet", "--help"}, {env = env})
    assert.are.equal(0, r.code)
    assert.matches("usage: pmcsh greet %[options%] %[words%.%.%.%]", r.out)
    assert.matches("%-n, %-%-times N%s+how often %(default 1%)", r.out)
    assert.matches("%-%-mode a|b", r.out)
  end)

  it("reject unknown and malformed options with status 2", function()
    local cases = {
      {{"greet", "--nope"}, "unknown option '%-%-nope'"},
      {{"greet", "--times", "x"}, "option %-%-times: expected an integer, got \"x\""},
      {{"greet", "--times", "0"}, "below the minimum 1"},
      {{"greet", "--size", "lots"}, "expected a size"},
      {{"greet", "--mode", "c"}, "\"c\" is not one of a, b"},
      {{"greet", "--name"}, "needs a value"},
    }
    for _, c in ipairs(cases) do
      local r = h.run(c[1], {env = env})
      assert.are.equal(2, r.code, table.concat(c[1], " "))
      assert.matches(c[2], r.err)
      assert.are.equal("", r.out)
    end
  end)

  it("prefer the user's own folder to PMCSH_PATH and the shipped ones", function()
    local home = h.tmpdir()
    os.execute("mkdir -p " .. home .. "/.pmcsh/recipes")
    local f = assert(io.open(home .. "/.pmcsh/recipes/greet.lua", "w"))
    f:write('return {description = "mine", run = function() print("own recipe") end}')
    f:close()
    local r = h.run({"greet"}, {env = env .. " HOME=" .. home})
    assert.are.equal("own recipe\n", r.out)
  end)

  it("list without running their bodies; a plain script there runs as a script with arg", function()
    local home = h.tmpdir()
    local d = home .. "/.pmcsh/recipes"
    os.execute("mkdir -p " .. d)
    local mark = home .. "/ran"
    local f = assert(io.open(d .. "/plain.lua", "w"))
    f:write(("io.open(%q, 'a'):write('x'); print('plain', #arg, arg[0]:match('[^/]+$'), ...)"):format(mark))
    f:close()
    f = assert(io.open(d .. "/quiet.lua", "w"))
    f:write('return {run = function() print("ran") end}')
    f:close()
    local r = h.run({"--help"}, {env = "HOME=" .. home})
    assert.are.equal(0, r.code, r.err)
    assert.is_nil(io.open(mark))                               -- listing ran nothing
    assert.matches("\n  plain%s+%(no description%)", r.out)
    assert.matches("\n  quiet%s+%(no description%)", r.out)
    r = h.run({"plain", "a", "b"}, {env = "HOME=" .. home})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal("plain\t2\tplain.lua\ta\tb\n", r.out)
    r = h.run({"quiet"}, {env = "HOME=" .. home})
    assert.are.equal("ran\n", r.out)
    os.execute("rm -rf " .. home)
  end)

  it("see pmc, stream, chase, recipe, metrics and help as scripts and -e do", function()
    local home = h.tmpdir()
    os.execute("mkdir -p " .. home .. "/.pmcsh/recipes")
    local f = assert(io.open(home .. "/.pmcsh/recipes/names.lua", "w"))
    f:write([[return {description = "names", run = function()
      print(type(pmc.group), type(stream.new), type(chase.latency), type(recipe.run), type(metrics.stats), type(help))
    end}]])
    f:close()
    local want = "function\tfunction\tfunction\tfunction\tfunction\tfunction\n"
    assert.are.equal(want, h.run({"names"}, {env = "HOME=" .. home}).out)
    local line = "print(type(pmc.group), type(stream.new), type(chase.latency), type(recipe.run), type(metrics.stats), type(help))"
    assert.are.equal(want, h.run({"-e", line}).out)
    assert.are.equal(want, h.run({"-"}, {stdin = line}).out)
    os.execute("rm -rf " .. home)
  end)

  it("take options in the usual spelling and accumulate a repeated list", function()
    local r = h.run({"greet", "-e", "a,b", "-e", "c", "--events", "d"}, {env = env})
    assert.are.equal(0, r.code, r.err)
    assert.matches("events=a|b|c|d\n", r.out)
    r = h.run({"latency", "--help"})
    assert.matches("%-%-per%-octave N", r.out)
    assert.matches("%-%-sample%-ms X", r.out)
    assert.not_matches("%-%-sample_ms", r.out)
    local a = h.run({"latency", "--from", "4K", "--to", "8K", "--per-octave", "1", "--samples", "1", "--sample-ms", "1"})
    local b = h.run({"latency", "--from", "4K", "--to", "8K", "--per_octave", "1", "--samples", "1", "--sample_ms", "1"})
    assert.are.equal(0, a.code, a.err)
    assert.are.equal(0, b.code, b.err)
    assert.are.equal(select(2, a.out:gsub("\n ", "")), select(2, b.out:gsub("\n ", "")))   -- the same rows (not the # notes)
  end)

  it("are callable from Lua with an options table", function()
    local r = h.run({"-e", "local recipe = require 'pmcsh.recipe'; print(recipe.run('greet', {name = 'lua', size = '2k'}))"}, {env = env})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal("hello lua\nsize=2048 mode=a\n0\n", r.out)
    r = h.run({"-e", "require('pmcsh.recipe').run('greet', {bogus = 1})"}, {env = env})
    assert.are.equal(2, r.code)
    assert.matches("unknown option 'bogus'", r.err)
  end)
end)

describe("recipe option values", function()
  local recipe = require("pmcsh.recipe")
  it("parse sizes in binary units", function()
    assert.are.equal(4096, recipe.parse_size("4k"))
    assert.are.equal(64 * 2^20, recipe.parse_size("64M"))
    assert.are.equal(2^30, recipe.parse_size("1GiB"))
    assert.are.equal(1536, recipe.parse_size("1.5k"))
    assert.is_nil(recipe.parse_size("-1"))
  end)
  it("split lists but keep sysfs events whole", function()
    assert.are.same({"a", "uncore_imc_0/event=0x4,umask=0x3/:u", "b"},
      recipe.split_list("a, uncore_imc_0/event=0x4,umask=0x3/:u ,b"))
  end)
end)

-- A result prints in a script as the REPL shows it (pmcsh.format, one
-- formatter): print(r) and tostring(r) give the compact form, show(x) every
-- field, a list of records a table; the results stay plain data for cjson.
describe("results in scripts", function()
  it("print as the REPL shows them, one line for a run or a latency", function()
    local r = h.run({"-"}, {stdin = [[
local s = stream.new{n = 2^16, threads = 1, quiet = true}
print(s:run("triad", {reps = 3}))
print(chase.latency{size = "1M", samples = 2})
]]})
    assert.are.equal(0, r.code, r.err)
    local lines = {}
    for l in r.out:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.are.equal(2, #lines, r.out)
    assert.matches("^triad: [%d.]+ MB/s %(best of 3 reps, median [%d.]+%), 24 B/iteration, n = 65536, 1 thread, 4k pages", lines[1])
    assert.matches("^[%d.]+ ns per load %(best of 2 samples, median [%d.]+%): random order, 1M, stride 64, 4k pages$", lines[2])
    -- the REPL shows the same text: the same result printed both ways
    local i = h.run({"-i"}, {stdin = "r = chase.sweep{from = 4096, to = 8192, per_octave = 1, samples = 2}\nprint(r)\nr\n"})
    assert.are.equal(0, i.code, i.err)
    local printed, shown = i.out:match("> print%(r%)\n(ns per load by size.-)\n> r\n(ns per load by size.-)\n> \n$")
    assert.is_truthy(printed, i.out)
    assert.are.equal(printed, shown)
    assert.matches("size%s+ns%s+median_ns\n%s+4K%s+[%d.]+%s+[%d.]+\n%s+8K", printed)
  end)

  it("print a reading as the REPL shows it: g:read(), pmc.probe's", function()
    local r = h.run({"-e", [[
local g = assert(pmc.group{"page-faults:u", "task-clock"})
local r = pmc.probe(g, "touch", 4 << 20)
print(r)
print((require("pmcsh.repl").show(r)))   -- the REPL's text at a terminal
print(g:read())]]})
    assert.are.equal(0, r.code, r.err)
    local printed, shown = r.out:match("^(reading:\n.-)\n(reading:\n.-)\nreading:\n")
    assert.is_truthy(printed, r.out)
    assert.are.equal(printed, shown)
    assert.matches("^reading:\n%s+%d+%s+page%-faults:u\n%s+%d+ ns%s+task%-clock$", printed)
  end)

  it("print every list of records as the REPL shows it: caches, events, models, huge pages, orders, recipes", function()
    for _, call in ipairs{"machine.caches()", "pmc.list('fault')", "pmc.models()", "machine.hugepages()", "chase.orders()",
        "chase.page_policies()", "recipe.list()"} do
      local r = h.run({"-e", ("local v = %s; print(v); print('--'); print((require('pmcsh.repl').show(v)))"):format(call)})
      assert.are.equal(0, r.code, r.err)
      local printed, shown = r.out:match("^(.-)\n%-%-\n(.-)\n$")
      assert.are.equal(shown, printed, call)
      assert.not_matches("^table: 0x", printed, nil, call)
      assert.matches("^[%w_]+%s+[%w_]+", printed, nil, call)   -- a header of field names
    end
  end)

  it("print a list of records as a table, with show too: stream.kernels()", function()
    local r = h.run({"-e", "print(stream.kernels()); print(#stream.kernels()); show(stream.kernels())"})
    assert.are.equal(0, r.code, r.err)
    local n = tonumber(r.out:match("\n(%d+)\n"))
    local printed, shown = r.out:match("^(.-)\n%d+\n(.*)\n$")
    assert.are.equal(printed, shown)
    local lines = {}
    for l in printed:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.are.equal(n + 1, #lines)                       -- a header, then a line per kernel (was a 150-line tree)
    assert.matches("^name%s+available%s+bytes%s+bytes_wa", lines[1])
    assert.matches("^triad%s+true%s+24%s+32%s.*stream_triad%s+a%s+a = b %+ s%*c %(STREAM triad%)$", lines[2])
  end)

  it("stay plain data: cjson encodes them as it encodes their fields", function()
    local r = h.run({"-e", [[
local cjson = require("cjson")
local s = stream.new{n = 2^16, threads = 1, quiet = true}
local run, lat = s:run("copy", {reps = 2}), chase.latency{size = "1M", samples = 2}
local k = stream.kernels()
local function near(a, b) return math.abs(a - b) <= 1e-9 * math.abs(b) end
local r2, l2 = cjson.decode(cjson.encode(run)), cjson.decode(cjson.encode(lat))
assert(r2.kernel == "copy" and r2.n == run.n and near(r2.mbps, run.mbps) and #r2.times == 2)
assert(near(l2.ns, lat.ns) and l2.order == "random" and cjson.decode(cjson.encode(k))[1].name == "triad")
print(getmetatable(run).__name, getmetatable(lat).__name, #cjson.decode(cjson.encode(k)) == #k)
]]})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal("pmcsh.stream_result\tpmcsh.chase_latency\ttrue\n", r.out)
  end)

  it("stream.disasm returns its listing and prints nothing itself", function()
    local r = h.run({"-e", [[
local d, msg = stream.disasm("copy")
if not d then print("none: " .. msg) return end
io.write("returned ", #d.lines, " lines\n")
print(d)
]]})
    assert.are.equal(0, r.code, r.err)
    if not h.need(not r.out:match("^none"), "objdump cannot disassemble here: " .. r.out) then return end
    local n = tonumber(r.out:match("^returned (%d+) lines\n"))
    local listing = r.out:match("^returned %d+ lines\n(.*)$")
    assert.matches("^copy %(stream_copy_%w+%): inner loop %x+%.%.%x+\n", listing)
    local lines = select(2, listing:gsub("\n", ""))
    assert.is_true(lines >= n + 2, listing)                -- the head, the lines, the counts
    assert.matches("%d+ instructions per iteration, [%d.]+ elements per iteration", listing)
  end)
end)

-- Ctrl-C in a script is lua's: the error "interrupted!" at the next Lua
-- instruction, which pcall catches and which otherwise ends the script with
-- status 1 and a traceback.  An engine stops between repetitions and its
-- return is overtaken by that error.
describe("Ctrl-C in a script", function()
  -- Runs `exe file`, sends SIGINT once the script has printed "ready";
  -- returns its status, stdout and stderr.
  local function interrupt(exe, text)
    local dir = h.tmpdir()
    local script = h.write(dir .. "/s.lua", text)
    local cmd = ("cd %s && %s s.lua >out 2>err & pid=$!; i=0; while ! grep -qs ready %s/out && [ $i -lt 200 ]; " ..
      "do sleep 0.05; i=$((i+1)); done; sleep 0.2; kill -INT $pid; wait $pid; echo $?"):format(
      h.shquote(dir), h.shquote(exe), h.shquote(dir))
    local p = io.popen(cmd)
    local code = tonumber(p:read("a"):match("(%d+)%s*$"))
    p:close()
    local r = {code = code, out = h.slurp(dir .. "/out"), err = h.slurp(dir .. "/err"):gsub(exe:gsub("%p", "%%%0"), "PROG")}
    os.remove(script)
    os.execute("rm -rf " .. h.shquote(dir))
    return r
  end

  it("ends a Lua loop as lua5.4 ends it: 'interrupted!', a traceback, status 1", function()
    if not h.need(io.open("/usr/bin/lua5.4") ~= nil, "lua5.4 is not installed to compare with") then return end
    local text = "print('ready') io.stdout:flush()\nlocal x = 0\nwhile true do x = x + 1 end\n"
    local want, got = interrupt("/usr/bin/lua5.4", text), interrupt(h.exe, text)
    assert.are.equal(want.code, got.code)
    assert.are.equal(1, got.code)
    assert.are.equal(want.out, got.out)
    assert.are.equal(want.err:match("^[^\n]*"), got.err:match("^[^\n]*"))   -- PROG: interrupted!
    assert.matches("stack traceback:", got.err)
  end)

  it("stops s:run and chase.latency between repetitions with that error, which pcall catches", function()
    local got = interrupt(h.exe, [[
local s = stream.new{n = 2^20, threads = 1, quiet = true}
print("ready") io.stdout:flush()
local r, msg, errno = s:run("triad", {reps = 1000000})
print("after s:run", r, msg, errno)
]])
    assert.are.equal(1, got.code)
    assert.are.equal("ready\n", got.out)                 -- nothing after s:run ran
    assert.matches("^PROG: s%.lua:3: interrupted!\nstack traceback:", got.err)
    got = interrupt(h.exe, [[
print("ready") io.stdout:flush()
print(pcall(chase.latency, {size = "16M", samples = 1000, sample_ms = 50}))
local s = stream.new{n = 2^20, threads = 1, quiet = true}
print(pcall(s.run, s, "triad", {reps = 2}) and "runs again")
]])
    assert.are.equal(0, got.code, got.err)
    assert.matches("^ready\nfalse\t[^\n]*interrupted!\nruns again\n$", got.out)
  end)
end)
