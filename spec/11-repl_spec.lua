-- The REPL over a real pseudo-terminal.
local h = require("helpers")
local Term = require("ptyterm")

describe("the REPL", function()
  local home, t
  before_each(function()
    home = h.tmpdir()
    t = Term.start(home)
    t:expect("> ")
  end)
  after_each(function() t:close() end)

  it("prints expression results and tables readably, several on one line as lua does", function()
    t:send("1 + 1, 'x'\n")
    t:expect('2\t"x"\r?\n> ')
    t:send("_\n")                                   -- the last result
    t:expect('2\r?\n> ')
    t:send("t = {3, b = {c = true}, a = 1}; t.self = t\n")
    t:expect("> ")
    t:send("t\n")
    t:expect("{3, a = 1, b = {c = true}, self = <cycle table: 0x%x+>}")
  end)

  it("greets with lua's version line and pmcsh's", function()
    assert.matches("^Lua 5%.4%.%d+  Copyright[^\n]*\r?\npmcsh %d+%.%d+%.%d+: help%(%) for the topics", t.seen)
  end)

  it("shows a failed open where it happens, and a reading once, compactly", function()
    t:send('g = pmc.group{"no-such-event"}\n')
    t:expect("failed: unknown event 'no%-such%-event'")
    t:expect("> ")
    t:send('g = pmc.group{"page-faults:u", "page-faults:k"}\n')
    t:expect("> ")
    t:send('r = pmc.probe(g, "touch", 4 << 20)\n')
    t:expect("> ")
    t:send("r\n")
    local m = t:expect("reading:\r?\n%s+%d+%s+page%-faults:u\r?\n%s+%d+%s+page%-faults:k\r?\n> ")
    h.faults_within(tonumber(m:match("(%d+)%s+page%-faults:u")), 1024, 0)  -- 4 MiB of 4 KiB pages
  end)

  it("continues incomplete statements over several lines", function()
    t:send("function sq(x)\n")
    t:expect(">> ")
    t:send("return x * x\n")
    t:expect(">> ")
    t:send("end\n")
    t:expect("\n> ")
    t:send("sq(12)\n")
    t:expect("144")
  end)

  it("completes globals, table fields and methods", function()
    t:send("string.for\t")
    t:expect("string.format")
    t:send("\n")
    t:expect("function: ")
    t:send("s = 'abc'\n"); t:expect("> ")
    t:send("s:up\t")
    t:expect("s:upper")
    t:send("()\n")
    t:expect('"ABC"')
    t:send("coll\t")
    t:expect("collectgarbage")
  end)

  it("stops a running loop on Ctrl-C and keeps a working prompt", function()
    t:send("n = 0; while true do n = n + 1 end\n")
    require("pmcsh._sys").sleep(0.3)
    t:send("\3")
    t:expect("interrupted!")
    t:expect("> ")
    t:send("n > 0\n")
    t:expect("true\r?\n> ")
    -- Ctrl-C at the prompt drops the line being typed
    t:send("this is not lua")
    t:expect("lua")
    t:send("\3")
    require("pmcsh._sys").sleep(0.2)  -- the pty delivers SIGINT asynchronously
    t:send("6 * 7\n")
    t:expect("42")
  end)

  it("keeps history across runs and leaves on Ctrl-D", function()
    t:send("remember_me = 1\n")
    t:expect("> ")
    t:send("\4")
    assert.are.equal(0, t:wait())
    local hist = h.slurp(home .. "/.pmcsh_history")
    assert.matches("remember_me = 1", hist)
    local p = io.popen("stat -c %a " .. home .. "/.pmcsh_history")
    assert.are.equal("600", p:read("l"))                  -- private: it may hold what was typed
    p:close()
    -- input that is no terminal leaves no history
    local piped = h.tmpdir()
    local r = h.run({"-i"}, {stdin = "secret = 1\n", env = "HOME=" .. piped})
    assert.are.equal(0, r.code, r.err)
    assert.is_nil(io.open(piped .. "/.pmcsh_history"))
    local t2 = Term.start(home)
    t2:expect("> ")
    t2:send("\27[A")  -- up arrow recalls the last line
    t2:expect("remember_me = 1")
    t2:close()
  end)

  it("keeps a statement of several lines as one history entry, across runs too", function()
    t:send("do io.write('first ') end\n")
    t:expect("first > ")
    t:send("for i = 1, 2 do\n")
    t:expect(">> ")
    t:send("io.write(i * 11, ' ') end\n")
    t:expect("11 22 > ")
    t:send("\4")
    assert.are.equal(0, t:wait())
    local t2 = Term.start(home)
    t2:expect("> ")
    t2:send("\27[A\n")  -- up arrow, then Enter: the whole loop runs again, and only it
    local out = t2:expect("11 22 > ")
    assert.not_matches("first", out)
    t2:send("\27[A\27[A\27[A\n")  -- past the loop run again and the loop, the entry before them
    t2:expect("first > ")
    t2:close()
  end)

  it("prints help", function()
    t:send("help()\n")
    t:expect("Topics")
    t:send("help(help)\n")
    t:expect("lists the topics")
  end)
end)

describe("the REPL with the engines", function()
  local t
  before_each(function()
    t = Term.start(h.tmpdir())
    t:expect("> ")
  end)
  after_each(function() t:close() end)

  it("stops building a large chain soon after Ctrl-C, whatever phase it is in", function()
    local sys = require("pmcsh._sys")
    for _, delay in ipairs({0.3, 1.2}) do
      t:send('c = chase.chain{size = "4G"}\n')
      sys.sleep(delay)
      local t0 = sys.now()
      t:send("\3")
      t:expect("interrupted")
      local took = sys.now() - t0
      t:expect("> ")
      -- the target is 0.5 s; 1 s allows for a loaded machine (freeing what was mapped included)
      assert.is_true(took < 1.0, string.format("stopped %.2f s after Ctrl-C", took))
    end
  end)

  -- Every C loop looks at the interrupt flag (pmcsh_stop_requested) at
  -- least every few ms: 0.5 s from Ctrl-C to the error is the promise, for
  -- the pty's delivery and the prompt's reprint on a loaded machine too.
  -- A second Ctrl-C right after the first is absorbed: the REPL lives on.
  it("stops pmc.probe, pmc.overhead and the empty-window loops within 0.5 s of Ctrl-C, pressed twice", function()
    local sys = require("pmcsh._sys")
    t:send('g = pmc.group{"page-faults:u"}\n')
    t:expect("> ")
    for i, call in ipairs({
      'pmc.probe(g, "loop", 1 << 50)',             -- days of a two-instruction loop
      'pmc.probe(g, "syscalls", 1 << 50)',
      'pmc.overhead{events = {"page-faults:u"}, n = 1 << 50}',
      'require("pmcsh._calib").windows(g, 1 << 50)',
      'require("pmcsh._sys").sleep(1e6)',
    }) do
      t:send("r" .. i .. " = " .. call .. "\n")
      sys.sleep(0.3)
      local t0 = sys.now()
      t:send(i % 2 == 0 and "\3\3" or "\3")          -- twice in a row on every other one
      t:expect("interrupted")
      local took = sys.now() - t0
      t:expect("> ")
      assert.is_true(took < 0.5, string.format("%s stopped %.2f s after Ctrl-C", call, took))
    end
    t:send("r1 == nil and r4 == nil, 6 * 7\n")
    t:expect("true\t42")
  end)

  it("prints a stream run with counters in a few lines, every field a call away", function()
    t:send('g = pmc.group{"page-faults:u", "task-clock"}; s = stream.new{n = 2^18, threads = 1, quiet = true}\n')
    t:expect("> ")
    t:send('s:run("triad", {reps = 10, group = g})\n')
    local out = t:expect("\n> ")
    local lines = select(2, out:gsub("\n", ""))
    assert.is_true(lines <= 6, out)                      -- was 599 lines
    assert.matches("triad: [%d.]+ MB/s %(best of 10 reps", out)
    assert.matches("%d+%s+page%-faults:u", out)
    t:send('chase.latency{size = "1M", samples = 2}\n')
    assert.matches("[%d.]+ ns per load %(best of 2 samples", t:expect("\n> "))
    t:send('show(s:run("copy", {reps = 2}))\n')
    t:expect("bytes_per_iter = 16")
  end)

  it("completes event names inside pmc.group{\"...", function()
    t:send('x = {"page-fa\t')         -- not on a pmc line: no event names
    t:send("\21")                     -- Ctrl-U clears the line
    t:send('g = pmc.group{"page-fa\t')
    t:expect('pmc%.group{"page%-faults')
    t:send("\21")
    t:send('g = pmc.group{"page-faults:\t')
    require("pmcsh._sys").sleep(0.2)
    t:send("\t")
    t:expect("page%-faults:k%s+page%-faults:mh%s+page%-faults:u")
    t:send("\21")
    t:send('g = pmc.group{"page-faults:u"}\n')
    t:expect("> ")
    t:send("g:events()[1]\n")
    t:expect('"page%-faults:u"')
  end)

  -- the keys come from the lists chase checks the options against (chase/engine.check_opts)
  it("completes option keys inside a call's table", function()
    t:send("chase.latency{si\t")
    t:expect("chase%.latency{size=")
    t:send('"1M", sample\t')
    require("pmcsh._sys").sleep(0.2)
    t:send("\t")
    t:expect("sample_ms=%s+samples=")
    t:send("\21")
    t:send("chase.parallelism{size = 4096, ma\t")
    t:expect("chase%.parallelism{size = 4096, max=")
    t:send("\21")
    -- the engines' own option lists: stream.new, s:run's table (a later
    -- argument), pmc.group's after its events
    t:send("stream.new{th\t")
    t:expect("stream%.new{threads=")
    t:send("\21")
    t:send('s = stream.new{n = 1000, quiet = true}\n')
    t:expect("> ")
    t:send('s:run("copy", {rep\t')
    t:expect('s:run%("copy", {reps=')
    t:send("\21")
    t:send('pmc.group{"task-clock", pi\t')
    require("pmcsh._sys").sleep(0.2)
    t:send("\t")
    t:expect("pid=%s+pinned=")
    t:send("\21")
    t:send("x = {si\t")                  -- no options known for a plain table: nothing proposed
    require("pmcsh._sys").sleep(0.2)
    t:send("ze = 1}\n")
    t:expect("> ")
    t:send("x.size\n")
    t:expect("1\r?\n> ")
  end)

  it("shows stream.disasm's listing once, as its result", function()
    t:send('d = stream.disasm("copy")\n')
    local quiet = t:expect("\n> ")
    assert.not_matches("inner loop", quiet)             -- the assignment prints nothing
    t:send("d\n")
    local out = t:expect("\n> ")
    if not h.need(not out:match("^d\r?\nnil"), "objdump cannot disassemble here") then return end
    local _, n = out:gsub("inner loop", "")
    assert.are.equal(1, n, out)
    assert.matches("instructions per element", out)
  end)

  it("stops a long C kernel between repetitions on Ctrl-C", function()
    t:send("s = stream.new{n = 2^22, threads = 1}\n")
    t:expect("> ")
    local sys = require("pmcsh._sys")
    local t0 = sys.now()
    t:send("r = s:run('triad', {reps = 100000})\n")
    sys.sleep(0.5)
    t:send("\3")
    t:expect("interrupted")
    t:expect("> ")
    -- 100000 repetitions of 4M elements would take minutes: it stopped early
    assert.is_true(sys.now() - t0 < 5)
    t:send("r == nil, s:run('copy', {reps = 2}).bytes_per_iter\n")
    t:expect("true\t16")
  end)
end)
