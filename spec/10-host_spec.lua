-- The command line: lua.c's conventions, exit codes, recipes.
local h = require("helpers")

local fixtures = "spec/fixtures/recipes"

local function tmpfile(text)
  local name = os.tmpname()
  local f = assert(io.open(name, "w")); f:write(text); f:close()
  return name
end

describe("pmcsh command line", function()
  it("runs a script with arg set as lua sets it", function()
    local s = tmpfile("print(arg[0], arg[1], arg[2], #arg, arg[-1] ~= nil, ...)")
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

  it("prints the version with -v and help with -h", function()
    local r = h.run({"-v"})
    assert.are.equal(0, r.code)
    assert.matches("^pmcsh %d+%.%d+%.%d+ %(Lua 5%.4", r.out)
    r = h.run({"--help"})
    assert.are.equal(0, r.code)
    assert.matches("%-e stat", r.out)
    assert.matches("Recipes", r.out)
  end)

  it("treats a script error as status 1 with message and traceback", function()
    local s = tmpfile("local function f() error('boom') end\nf()\n")
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

  it("treats bad usage as status 2 with a message", function()
    local r = h.run({"--bogus"})
    assert.are.equal(2, r.code)
    assert.matches("unrecognized option '%-%-bogus'", r.err)
    r = h.run({"-e"})
    assert.are.equal(2, r.code)
    assert.matches("needs argument", r.err)
    r = h.run({"no-such-recipe-or-file"})
    assert.are.equal(2, r.code)
    assert.matches("no such file or recipe: no%-such%-recipe%-or%-file", r.err)
    r = h.run({"./missing.lua"})
    assert.are.equal(2, r.code)
    assert.matches("cannot open ./missing.lua", r.err)
  end)

  it("stops handling options at --", function()
    local s = tmpfile("print(...)")
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

  it("convert declared defaults like given values", function()
    local r = h.run({"greet"}, {env = env})
    assert.are.equal("hello world\nsize=4096 mode=a\n", r.out)
  end)

  it("report an option value a module refuses as bad usage, status 2", function()
    local r = h.run({"greet", "--name", "badarg"}, {env = env})
    assert.are.equal(2, r.code)
    assert.matches("^pmcsh: greet: bad argument #1 to 'rep'", r.err)
    assert.not_matches("traceback", r.err)
    -- a shipped one: the largest chain of a sweep is checked before any runs
    local sys = require("pmcsh._sys")
    local t0 = sys.now()
    r = h.run({"latency", "--to", "1T"})
    assert.are.equal(2, r.code)
    assert.matches("latency: bad argument #1 to 'sweep' %(size 1099511627776, stride 64: size too large", r.err)
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
