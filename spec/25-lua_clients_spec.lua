-- pmcsh as Lua's own clients meet it: it starts as lua starts (no engine,
-- no cjson loaded before a chunk uses one; its cost beside lua5.4's,
-- measured in the same run), require's messages are lua's, and the REPL
-- and API bullets of issue 42: option values and tracepoints complete,
-- l:info() and regions.run's result print readably (and stay plain data),
-- metrics.two_window given readings raises a bad argument at its caller.
-- Lua's own suite runs in spec/clients/lua-suite.sh.
local h = require("helpers")
local paths = require("pmcsh.paths")
local repl = require("pmcsh.repl")
local statistics = require("pmcsh.statistics")

local LUA = "/usr/bin/lua5.4"
local function have_lua()
  local f = io.open(LUA)
  if f then f:close() end
  return f ~= nil
end

local dir = h.tmpdir()

-- A command line's stdout, stderr and status, environment cleared of Lua's.
local function sh(line)
  local errf = os.tmpname()
  local p = assert(io.popen("env -u LUA_INIT -u LUA_INIT_5_4 -u LUA_PATH -u LUA_CPATH " .. line .. " 2>" .. errf))
  local out = p:read("a")
  local _, _, code = p:close()
  local err = h.slurp(errf)
  os.remove(errf)
  return {out = out, err = err, code = code}
end

describe("start-up", function()
  it("loads no engine, no C module and no cjson before a chunk uses one", function()
    local r = sh(h.shquote(h.exe) .. [[ -e 'local t = {} for k in pairs(package.loaded) do t[#t + 1] = k end
      table.sort(t) print(table.concat(t, " "))']])
    assert.are.equal(0, r.code, r.err)
    local own = {}
    for name in r.out:gmatch("%S+") do
      assert.is_nil(name:match("^pmcsh%._"), name .. " loaded at start")
      assert.are_not.equal("cjson", name)
      if name:match("^pmcsh") then own[#own + 1] = name end
    end
    -- the globals' table, the help it feeds and where pmcsh's files are
    assert.are.same({"pmcsh.help", "pmcsh.names", "pmcsh.paths"}, own)
    -- and each global is there when a chunk reads it
    r = sh(h.shquote(h.exe) .. [[ -e 'print(type(pmc.group), type(stream.new), type(chase.latency), type(help),
      package.loaded["pmcsh.pmc"] == pmc, package.loaded["pmcsh.stream"] ~= nil, rawget(_G, "machine"))']])
    assert.are.equal("function\tfunction\tfunction\tfunction\ttrue\ttrue\tnil\n", r.out, r.err)
  end)

  it("runs with a LUA_CPATH that finds nothing, as lua5.4 does (testes/main.lua:115)", function()
    if not h.need(have_lua(), "lua5.4 is not installed to compare with") then return end
    local want = sh("LUA_CPATH=xuxu " .. LUA .. " -e 'print(1)'")
    local got = sh("LUA_CPATH=xuxu " .. h.shquote(h.exe) .. " -e 'print(1)'")
    assert.are.same(want, got)
  end)

  it("says require's 'module not found' byte for byte as lua5.4 (testes/attrib.lua:67), a pmcsh module its own way", function()
    if not h.need(have_lua(), "lua5.4 is not installed to compare with") then return end
    local chunk = h.shquote([[package.path = "?.lua;?/?"; package.cpath = "?.so;?/init"
      print(select(2, pcall(require, "XXX")))]])
    local want = sh(LUA .. " -e " .. chunk)
    local got = sh(h.shquote(h.exe) .. " -e " .. chunk)
    assert.are.same(want, got)
    assert.matches("^module 'XXX' not found:\n\tno field package.preload%['XXX'%]\n\tno file 'XXX.lua'\n", got.out)
    got = sh(h.shquote(h.exe) .. " -e 'print(select(2, pcall(require, \"pmcsh.nosuch\")))'")
    assert.matches("no file '[^']*/lua/pmcsh/nosuch%.lua'", got.out)
  end)

  -- Each side's CPU time (task-clock of the child, exec to exit), in
  -- interleaved pairs: a busy machine slows both alike.  The issue asks
  -- within 3x; this machine reads about 2x (pmcsh links libpfm4, whose
  -- relocations lua5.4 does not pay).
  it("costs within 3x of lua5.4 -e '', median of 21 interleaved pairs' ratios", function()
    if not h.need(have_lua(), "lua5.4 is not installed to compare with") then return end
    if not h.need(not h.sanitized, "built with the sanitizer (make asan): its shadow memory is set up at every "
      .. "start, a cost the plain build does not pay") then return end
    local function cpu(cmd)
      local reading, info = assert(pmc.run{events = {"task-clock"}, cmd = cmd})
      assert.are.equal(0, info.status)
      return reading[1].value
    end
    local ratios = {}
    cpu({h.exe, "-e", ""}); cpu({LUA, "-e", ""})
    for i = 1, 21 do ratios[i] = cpu({h.exe, "-e", ""}) / cpu({LUA, "-e", ""}) end
    local median = statistics.median(ratios)
    assert.is_true(median < 3, string.format("pmcsh -e '' costs %.2fx lua5.4's (median of 21)", median))
  end)
end)

describe("the REPL's completion", function()
  local function complete(line)
    return repl.complete(line, line:match("[%w_]*$"))
  end

  it("proposes an option's values: quoted after key=, bare inside the open quote", function()
    assert.are.same({'"random"'}, complete('chase.latency{order=ra'))
    assert.are.same({"random"}, complete('x = chase.latency{size = 1 << 20, order = "ra'))
    assert.are.same({"1g", "2m", "4k", "thp"}, complete('chase.sweep{pages="'))
    assert.are.same({'"page"'}, complete('chase.parallelism{order = "random", order=pa'))
    -- a key still completes as a key, and a value of an unknown key not at all
    assert.are.same({"order="}, complete('chase.latency{or'))
    assert.are.same({}, complete('chase.latency{nosuch="'))
  end)

  -- f takes chase's options (orders and page policies) and returns them:
  -- what Tab wrote is what the statement then evaluates
  it("completes option values at a terminal, as a user types them", function()
    local Term = require("ptyterm")
    local t = Term.start(dir)
    t:expect("> ")
    t:send('f = function(o) return o.order, o.pages end; require("pmcsh.complete").options(f, {"order", "pages"}, ' ..
      'require("pmcsh.chase.engine").option_values)\n')
    t:expect("> ")
    t:send("f{order=ra\t}\n")
    t:expect('\n"random"\tnil\r?\n> ')
    t:send('f{pages = "th\t, order="st\t}\n')   -- readline closes the quote
    t:expect('\n"stride"\t"thp"\r?\n> ')
    t:send("\4")
    t:close()
  end)

  -- tracefs's names, where it is mounted; where it is not and this is root,
  -- in a mount namespace of pmcsh's own (unshare -m), the host untouched
  it("completes tracepoint names, SUBSYS:EVENT, inside pmc.group{\"...", function()
    local chunk = [[local r = require("pmcsh.repl")
      local got = r.complete('g = pmc.group{"sched:sched_sw', "sched:sched_sw")
      print(table.concat(got, " "))]]
    local mounted = os.execute("test -r /sys/kernel/tracing/events/sched/sched_switch/id")
    local line = h.shquote(h.exe) .. " -e " .. h.shquote(chunk)
    if not mounted then
      local can = h.is_root() and os.execute("command -v unshare >/dev/null 2>&1")
      if not h.need(can, "no tracefs here, and not root to mount one in a namespace") then return end
      line = "unshare -m sh -c " .. h.shquote("mount -t tracefs nodev /sys/kernel/tracing && " .. line)
    end
    local r = sh(line)
    if not h.need(r.code == 0, "tracefs cannot be mounted here: " .. r.err) then return end
    local got = {}
    for name in r.out:gmatch("%S+") do got[name] = true end
    assert.is_true(got["sched:sched_switch"], r.out)
    for name in pairs(got) do assert.matches("^sched:sched_sw", name) end
  end)
end)

describe("results in the REPL and print", function()
  local cjson = require("cjson")

  it("l:info() prints a line naming the loop and what an element moves, and stays plain data", function()
    if not h.need(h.have("cc"), "no C compiler") then return end
    local src = dir .. "/scale2.c"
    h.write(src, "#include <stddef.h>\nvoid scale2(double *restrict a, const double *restrict b, " ..
      "const double *restrict c, double s, size_t n)\n{ (void)c; for (size_t i = 0; i < n; i++) a[i] = s * b[i]; }\n")
    local l = assert(stream.loop(src, "scale2"))
    local info = l:info()
    local text = tostring(info)
    assert.matches("^loop scale2 %(scale2 in [^)]+%): STREAM's arrays", text)
    -- STREAM's scale: one array read, one written, 16 bytes per element
    assert.matches("reads b, writes a, 1 load, 1 store, 16 B %(24 with write%-allocate%)", text)
    assert.are.equal(text, repl.show(info))   -- the REPL prints what print prints
    local plain = cjson.decode(cjson.encode(info))
    assert.are.same({"b"}, plain.reads)
    assert.are.equal(16, plain.bytes)
    l:close()
  end)

  it("regions.run's result prints a row per region with its counts, and stays plain data", function()
    if not h.need(h.have("cc"), "no C compiler") then return end
    local ROOT = paths.root
    assert(os.execute("make -s -C " .. h.shquote(ROOT) .. " marker >/dev/null"))
    local exe = dir .. "/touch"
    assert(os.execute(string.format("cc -O2 -I%s -o %s %s -L%s -Wl,-rpath,%s -lpmcsh-marker -pthread",
      h.shquote(ROOT .. "/include"), h.shquote(exe), h.shquote(ROOT .. "/spec/fixtures/regions/touch.c"),
      h.shquote(ROOT .. "/build"), h.shquote(ROOT .. "/build"))))
    local N, CALLS = 32, 3
    local r = assert(regions.run{events = {"page-faults:u"}, cmd = {exe, tostring(N), tostring(CALLS), "1", "8", "4"}})
    local text = tostring(r)
    assert.matches("^regions of " .. exe:gsub("%p", "%%%0") .. " 32 3 1 8 4: status 3, ", text)
    -- physics: the touch region first-touches N pages per call
    local calls, iters, faults = text:match("\n%s+touch%s+(%d+)%s+(%d+)%s+(%d+)\n")
    assert.are.equal(CALLS, tonumber(calls), text)
    assert.are.equal(CALLS * N, tonumber(iters))
    h.faults_within(tonumber(faults), CALLS * N, 0)
    assert.matches("\n%s+outer%s+3%s+0%s+%d+\n%s+inner%s+3%s+0%s+%d+\n", text)
    assert.are.equal(text, repl.show(r))
    local plain = cjson.decode(cjson.encode(r))
    assert.are.equal("touch", plain.regions[1].name)
    assert.are.equal(CALLS * N, plain.regions[1].inclusive[1])
  end)
end)

describe("metrics.two_window", function()
  it("given readings raises a bad argument at the caller's line, naming the entry, never an error inside pmcsh", function()
    local script = dir .. "/tw.lua"
    h.write(script, [[
local g = assert(pmc.group{"task-clock"})
local r1, r2 = g:read(), g:read()
local ok, e = pcall(metrics.two_window, {1, 2}, {10, 30})
metrics.two_window({1, 2}, {r1, r2})
]])
    local r = h.run({script})
    assert.are.equal(1, r.code)
    assert.matches(": " .. script:gsub("%p", "%%%0") .. ":4: bad argument #2 to 'two_window' %(counts%[1%]: a number " ..
      "expected, got pmcsh.reading", r.err)
    assert.is_nil(r.err:find("statistics.lua", 1, true), r.err)
    -- numbers: one pair, slope (30 - 10) / (2 - 1)
    local s, i = metrics.two_window({1, 2}, {10, 30})
    assert.are.same({20.0}, s)
    assert.are.same({-10.0}, i)
    local ok, e = pcall(metrics.two_window, {1, "x"}, {1, 2})
    assert.is_false(ok)
    assert.matches("bad argument #1 to 'two_window' %(work%[2%]: a number expected, got string%)", tostring(e))
  end)
end)

teardown(function() os.execute("rm -rf " .. h.shquote(dir)) end)
