-- pmcsh is lua: every option, environment variable, message and exit status
-- of lua(1), checked against lua5.4 itself on the same command line.  Both
-- run by absolute path, so each names itself in its messages; the name is
-- replaced by PROG before comparing.  Tracebacks differ in their frames
-- (pmcsh's host calls in), so an error compares by its first line and the
-- presence of a traceback.
local h = require("helpers")

local LUA = "/usr/bin/lua5.4"
local function have_lua()
  local f = io.open(LUA)
  if f then f:close() end
  return f ~= nil
end

local dir = h.tmpdir()
local function file(name, text) return h.write(dir .. "/" .. name, text) end

-- Runs `exe` with args (each shell-quoted) and an env prefix in `dir`.
local function run(exe, args, env, stdin)
  local q = {}
  for i, a in ipairs(args) do q[i] = h.shquote(a) end
  local errf, inf = os.tmpname(), os.tmpname()
  local f = assert(io.open(inf, "w")); f:write(stdin or ""); f:close()
  local p = assert(io.popen(string.format("cd %s && env -u LUA_INIT -u LUA_INIT_5_4 -u LUA_PATH -u LUA_PATH_5_4 %s %s %s <%s 2>%s",
    h.shquote(dir), env or "", h.shquote(exe), table.concat(q, " "), inf, errf)))
  local out = p:read("a")
  local _, _, code = p:close()
  local err = h.slurp(errf)
  os.remove(errf); os.remove(inf)
  local function norm(s) return (s:gsub(exe:gsub("%p", "%%%0"), "PROG")) end
  return {code = code, out = norm(out), err = norm(err)}
end

local function first_line(s) return s:match("^[^\n]*") end

local function same(args, env, stdin)
  local want = run(LUA, args, env, stdin)
  local got = run(h.exe, args, env, stdin)
  local what = table.concat(args, " ") .. (env and (" with " .. env) or "")
  assert.are.equal(want.code, got.code, "exit status of " .. what .. ": " .. got.err)
  assert.are.equal(want.out, got.out, "stdout of " .. what)
  if want.err:find("stack traceback:", 1, true) then
    assert.are.equal(first_line(want.err), first_line(got.err), "stderr of " .. what)
    assert.truthy(got.err:find("stack traceback:", 1, true), "a traceback for " .. what)
  else
    assert.are.equal(want.err, got.err, "stderr of " .. what)
  end
end

describe("pmcsh as lua(1)", function()
  teardown(function() os.execute("rm -rf " .. h.shquote(dir)) end)

  it("runs -e, -l and -W in order, as lua5.4 does", function()
    if not h.need(have_lua(), "lua5.4 is not installed to compare with") then return end
    file("mymod.lua", "return {x = 42}")
    same({"-e", "print(1)", "-e", "print(2)"})
    same({"-eprint(3)"})
    same({"-l", "mymod", "-e", "print(mymod.x)"})
    same({"-l", "m=mymod", "-e", "print(m.x, mymod)"})
    same({"-e", "warn('hidden')"})
    same({"-W", "-e", "warn('shown')"})
    same({"-e", "warn('@on'); warn('a', 'b')"})
  end)

  it("refuses bad options with lua's message, usage text and status", function()
    if not h.need(have_lua(), "lua5.4 is not installed to compare with") then return end
    for _, args in ipairs{{"-x"}, {"--x"}, {"-vx"}, {"-Ex"}, {"-e"}, {"-l"}, {"-e", "-v"}, {"-i", "-q"}} do
      same(args)
    end
  end)

  it("prints lua's version line with -v; --version is pmcsh's", function()
    if not h.need(have_lua(), "lua5.4 is not installed to compare with") then return end
    same({"-v"})
    same({"-v", "-e", "print(1)"})
    local r = run(h.exe, {"--version"})
    assert.are.equal(0, r.code)
    assert.matches("^pmcsh %d+%.%d+%.%d+ %(Lua 5%.4%.%d+%)\n$", r.out)
  end)

  it("honours LUA_INIT_5_4, LUA_INIT and @file, and -E ignoring them", function()
    if not h.need(have_lua(), "lua5.4 is not installed to compare with") then return end
    local init = file("init.lua", "print('from init file', ...)")
    same({"-e", "print(2)"}, "LUA_INIT='print(1)'")
    same({"-e", "print(2)"}, "LUA_INIT='print(1)' LUA_INIT_5_4='print(15)'")
    same({"-e", "print(2)"}, "LUA_INIT=@" .. init)
    same({"-e", "print(2)"}, "LUA_INIT=@/nonexistent/init.lua")
    same({"-e", "print(2)"}, "LUA_INIT='error(\"in init\")'")
    same({"-E", "-e", "print(2)"}, "LUA_INIT='print(1)'")
    same({"-E", "-e", "print(package.path)"}, "LUA_PATH='/x/?.lua'")
  end)

  it("leaves package.path and package.cpath as lua sets them, and still finds its own modules", function()
    if not h.need(have_lua(), "lua5.4 is not installed to compare with") then return end
    same({"-e", "print(package.path); print(package.cpath)"})
    same({"-e", "print(package.path)"}, "LUA_PATH='/x/?.lua;;'")
    same({"-e", "print(package.path)"}, "LUA_PATH_5_4='/y/?.lua'")
    local r = run(h.exe, {"-e", "print(require('pmcsh.metrics') ~= nil)"}, "LUA_PATH='/x/?.lua'")
    assert.are.equal("true\n", r.out, r.err)
  end)

  it("reports errors as lua does: strings, tables, __tostring, syntax, exit codes", function()
    if not h.need(have_lua(), "lua5.4 is not installed to compare with") then return end
    same({"-e", "error('boom')"})
    same({"-e", "error({})"})
    same({"-e", "error(setmetatable({}, {__tostring = function() return 'custom' end}))"})
    same({"-e", "error(nil)"})
    same({"-e", "error(42)"})
    same({"-e", "x = = 1"})
    same({"-e", "os.exit(3)"})
    same({"-e", "os.exit(false)"})
    same({"-e", "os.exit(true)"})
  end)

  it("runs scripts with arg, stdin with -, and stops options at --", function()
    if not h.need(have_lua(), "lua5.4 is not installed to compare with") then return end
    local s = file("args.lua", "print(#arg, arg[0], arg[-1], arg[1], arg[2], ...)")
    same({s, "a", "b"})
    same({"-e", "x=1", s, "a"})
    same({"--", s, "-e", "x"})
    same({"-"}, nil, "print('stdin', ...)")
    same({"-", "p", "q"}, nil, "print(arg[0], ...)")
    same({}, nil, "print('no args, stdin not a terminal')")
    same({"missing.lua"})
    same({"./missing.lua", "x"})
    file("bad.lua", "x = = 1")
    same({"bad.lua"})
    file("err.lua", "local function f() error('deep') end f()")
    same({"err.lua"})
  end)

  -- testes/main.lua of Lua 5.4.4: the script's arguments come from the
  -- global arg as -e left it, not from the command line
  it("passes the script arg[1..#arg] as -e and LUA_INIT left them", function()
    if not h.need(have_lua(), "lua5.4 is not installed to compare with") then return end
    local s = file("dots.lua", "print(select('#', ...), ...)")
    same({"-e", "arg[1] = 100", "-"}, nil, "print(...)")
    same({"-e", "arg[1] = 100", "-", "a", "b"}, nil, "print(...)")
    same({"-e", "arg = {'x', 'y', n = 5}", s, "a"})
    same({"-e", "arg[3] = nil", s, "a", "b", "c"})
    same({s, "a", "b"}, "LUA_INIT='arg[2] = \"init\"'")
    same({"-e", "arg = 1", "-"}, nil, "")
    same({"-e", "arg = nil", s})
    same({"-e", "arg = setmetatable({}, {__len = function() return 2 end})", s})
  end)

  -- Input that is no terminal still sees the REPL as lua shows it: the
  -- prompts (tostring of _PROMPT and _PROMPT2), each result through the
  -- global print, and lua's messages.
  it("runs -i over piped input as lua does: prompts, results through print, errors", function()
    if not h.need(have_lua(), "lua5.4 is not installed to compare with") then return end
    local twice = " --\na = 2\n"
    same({"-i"}, nil, twice)
    same({"-e_PROMPT='alo'", "-i"}, nil, twice)
    same({"-e", "_PROMPT2 = '..'", "-i"}, nil, "for i = 1, 2 do\nprint(i)\nend\n")
    same({"-e", "local C = 0; _PROMPT = setmetatable({}, {__tostring = function() C = C + 1; return C end})", "-i"},
      nil, twice)
    same({"-e", "_PROMPT = '' _PROMPT2 = ''", "-i"}, nil, "(6*2-6) -- ===\na =\n10\nprint(a)\na")
    same({"-e", "_PROMPT = '' _PROMPT2 = ''", "-i"}, nil,
      (" --\nfunction f ( x )\n  local a = [[\nxuxu\n]]\n  if x == 11 then return 1 + 12 , 2 + 20 end\n" ..
       "  return x + 1\nend\nreturn( f( 100 ) )\ndo return f( 11 ) end"):gsub(" ", "\n\n"))
    same({"-i"}, nil, "=1, 2\nreturn 3\n1 + 1, nil\n")
    same({"-e", "_PROMPT = '' _PROMPT2 = ''", "-i"}, nil, "a = [[b\nc\nd\ne]]\n=a\n'x', true, 'y'\n")  -- strings as themselves
    same({"-e", "print = nil", "-i"}, nil, "10\n")
    same({"-e", "print = function(...) io.write('[', select('#', ...), ']') end", "-i"}, nil, "10\n1, 2\n")
    same({"-i"}, nil, "error('x')\nerror({})\nx = = 1\nprint(2)\n")
    same({"-e", "_PROMPT = setmetatable({}, {__tostring = function() error('no prompt') end})", "-i"}, nil, "1\n")
  end)

  -- Lua 5.4.4 prints "(null)" for a statement cut by the end of input (a
  -- bug that 5.4.6 fixed: it reports the syntax error); pmcsh reports it.
  it("reports a statement cut by the end of input as its syntax error", function()
    if not h.need(have_lua(), "lua5.4 is not installed to compare with") then return end
    local want = run(LUA, {"-i"}, nil, "for i = 1, 2 do\n")
    local got = run(h.exe, {"-i"}, nil, "for i = 1, 2 do\n")
    assert.are.equal(want.out, got.out)
    assert.are.equal(want.code, got.code)
    assert.are.equal("stdin:1: 'end' expected near <eof>\n", got.err)
  end)
end)
