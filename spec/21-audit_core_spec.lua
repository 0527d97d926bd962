-- The fifth audit's core findings (issue 40): an argument list of any
-- length, a control channel at its end or never pausing, CSV for any
-- separator, a baseline against its own median, the marker folder, the
-- readings' metatable, true range messages, compare's skipped names and
-- list -v without opening every tracepoint.
local h = require("helpers")
local cjson = require("cjson")
local paths = require("pmcsh.paths")

local ROOT = paths.root

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  local ok, _, code = p:close()
  return ok, out, code
end

-- pmcsh ARGS as a shell line (redirections and $(...) allowed), with a
-- deadline: {code=, out=, err=}; code 124/137 means it did not end.
local function run_sh(line, limit)
  local errf = os.tmpname()
  local p = assert(io.popen(string.format("timeout -s KILL %d %s %s 2>%s", limit or 120, h.shquote(h.exe), line,
    errf)))
  local out = p:read("a")
  local _, _, code = p:close()
  local err = h.slurp(errf)
  os.remove(errf)
  return {code = code, out = out, err = err}
end

local function count_lines(text, pattern)
  local n = 0
  for _, l in ipairs(h.lines(text)) do if l:match(pattern) then n = n + 1 end end
  return n
end

describe("an argument list of any length (H2)", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. h.shquote(dir)) end)

  it("reaches a recipe whole: 10,000 words after stat's --", function()
    -- the counted command says how many words it got
    local r = run_sh("stat -x, -e task-clock -- sh -c 'echo $#' sh $(seq 1 10000)")
    assert.are.equal(0, r.code, r.err)
    assert.are.equal("10000\n", r.out)
    assert.matches("task%-clock", r.err)
  end)

  it("reaches compare whole: 300 files, each said as the one it is", function()
    local names = {}
    for i = 1, 300 do
      names[i] = string.format("%s/f%03d.jsonl", dir, i)
      h.write(names[i], "{}\n")
    end
    local r = h.run({"compare", table.unpack(names)})
    assert.are.equal(1, r.code, r.err)
    assert.matches("f001%.jsonl:1: a record before any fingerprint", r.err)
    assert.is_nil(r.err:find("corruption"))
  end)

  it("reaches a script's arg and ... whole, and pmc.run's command: 10,000 words", function()
    local script = h.write(dir .. "/n.lua", "local n = select('#', ...)\n" ..
      "local cmd = {'sh', '-c', 'echo $#', 'sh'}\nfor i = 1, 10000 do cmd[#cmd + 1] = tostring(i) end\n" ..
      "local r = assert(pmc.run{events = {'task-clock'}, cmd = cmd})\nprint(n, #arg)\n")
    local r = run_sh(h.shquote(script) .. " $(seq 1 10000)")
    assert.are.equal(0, r.code, r.err)
    assert.are.equal("10000\n10000\t10000\n", r.out)
  end)
end)

describe("long lists to the bindings (H2)", function()
  it("end in a result or a clear error, never a crash", function()
    local r = h.run({"-e", [[
local names = {}
for i = 1, 5000 do names[i] = "task-clock" end
print(select(2, pcall(pmc.group, names)))
local cmd = {"sh", "-c", 'echo $#', "sh"}
for i = 1, 20000 do cmd[#cmd + 1] = "w" .. i end
local rr, info = pmc.run{events = {"task-clock"}, cmd = cmd}
print(rr ~= nil, info.status)
]]})
    assert.are.equal(0, r.code, r.err)
    assert.matches("at most %d+ events in one group", r.out)
    assert.matches("\n20000\ntrue\t0\n$", r.out)
  end)
end)

describe("--control (M1, L1, L2)", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. h.shquote(dir)) end)

  it("stops listening to a channel at its end: fd:0 from /dev/null, fd:1 into a file", function()
    local r = run_sh("stat -x, -e task-clock -D -1 --control fd:0 -- true </dev/null", 60)
    assert.are.equal(0, r.code, r.err)
    assert.are.same({"Events disabled"}, {h.lines(r.err)[1]})
    r = run_sh("stat -x, -e task-clock -D -1 --control fd:1 -- true >" .. h.shquote(dir .. "/out"), 60)
    assert.are.equal(0, r.code, r.err)
  end)

  it("does every command of one write, in order, the last line without its newline too", function()
    local r = h.run({"stat", "-x", ",", "-e", "task-clock", "-D", "-1", "--control", "fd:0", "--", "true"},
      {stdin = "enable\ndisable\nping\nenable\nevlist -x\nenable NAME\n" .. string.rep("x", 70) .. "\ndisable"})
    assert.are.equal(0, r.code, r.err)
    local l = h.lines(r.err)
    -- 70 bytes: 63 as one command, the rest as the next (perf's reading),
    -- both unknown, so ignored as perf ignores them
    assert.are.same({"Events disabled", "Events enabled", "Events disabled", "Events enabled", "failed: wrong command"},
      {table.unpack(l, 1, 5)})
    assert.matches("^pmcsh stat: 'enable EVENT' and 'disable EVENT' on the control channel are ignored", l[6])
    assert.are.equal("Events disabled", l[7])
  end)

  -- a writer that never pauses into the FIFO: it dies of SIGPIPE when
  -- pmcsh closes it; killed by the spec in any case
  local function writer(fifo)
    os.execute("mkfifo " .. h.shquote(fifo))
    local pidf = dir .. "/writer.pid"
    os.execute(string.format("(yes enable > %s 2>/dev/null & echo $! > %s)", h.shquote(fifo), h.shquote(pidf)))
    return function() os.execute("kill " .. h.slurp(pidf):gsub("%s", "") .. " 2>/dev/null") end
  end

  it("sees its command end while a writer never pauses, its log bounded", function()
    local fifo = dir .. "/ctl"
    local stop = writer(fifo)
    local r = run_sh("stat -x, -e task-clock -D -1 --control fifo:" .. h.shquote(fifo) .. " -- sleep 1", 60)
    stop()
    assert.are.equal(0, r.code, r.err)
    local enabled = count_lines(r.err, "^Events enabled$")
    assert.is_true(enabled >= 1 and enabled <= 4096, enabled .. " lines")
    if enabled == 4096 then assert.matches("pmcsh stat: %d+ more control commands done, not listed", r.err) end
  end)

  it("ends on SIGTERM and on Ctrl-C's SIGINT while a writer never pauses", function()
    for _, sig in ipairs({"TERM", "INT"}) do
      local fifo = dir .. "/ctl" .. sig
      local stop = writer(fifo)
      -- 2 s, then the signal; KILL 60 s later only if it is deaf (137)
      local p = io.popen(string.format("timeout -s %s -k 60 2 %s stat -e task-clock -D -1 --control fifo:%s " ..
        "-- sleep 1000 >/dev/null 2>&1; echo $?", sig, h.shquote(h.exe), h.shquote(fifo)))
      local code = tonumber(p:read("a"))
      p:close()
      stop()
      assert.are.equal(124, code, sig)   -- timeout's own status: pmcsh ended on the signal
    end
  end)

  it("refuses an ACK FIFO of another user's as it refuses a CTL FIFO, before 'Events disabled'", function()
    if not h.need(h.is_root(), "needs root to give a FIFO to another user") then return end
    local ctl, ack = dir .. "/ctl", dir .. "/ack"
    os.execute(string.format("mkfifo %s %s && chown nobody %s", h.shquote(ctl), h.shquote(ack), h.shquote(ack)))
    local r = h.run({"stat", "-e", "task-clock", "-D", "-1", "--control", "fifo:" .. ctl .. "," .. ack, "--", "true"})
    assert.are.equal(1, r.code, r.err)
    assert.matches("ack: a FIFO of another user's", r.err)
    assert.is_nil(r.err:find("Events disabled"))
    assert.are.equal("", r.out)
  end)

  it("names an fd past any descriptor as given, before anything runs", function()
    local r = h.run({"stat", "-e", "task-clock", "-D", "-1", "--control", "fd:99999999999", "--", "true"})
    assert.are.equal(2, r.code)
    assert.matches("fd 99999999999 is not open", r.err)
    assert.is_nil(r.err:find("fd %-1"))
    assert.is_nil(r.err:find("Events disabled"))
    r = h.run({"stat", "-e", "task-clock", "-D", "-1", "--control", "fd:3,123456789012345678901234", "--", "true"})
    assert.are.equal(2, r.code)
    assert.matches("fd 123456789012345678901234 is not open", r.err)
  end)
end)

describe("range messages (L10)", function()
  it("say the range for reps and a control fd out of it", function()
    local r = h.run({"-e", [[
print(select(2, pcall(pmc.run, {events = {"task-clock"}, cmd = {"true"}, reps = 1e12})))
print(select(2, pcall(pmc.run, {events = {"task-clock"}, cmd = {"true"}, reps = 0})))
print(select(2, pcall(pmc.run, {events = {"task-clock"}, cmd = {"true"}, control = {ctl = 1e10}})))
print(select(2, pcall(pmc.run, {events = {"task-clock"}, cmd = {"true"}, control = {ctl = 3, ack = 2.5}})))
print(select(2, pcall(pmc.run, {events = {"task-clock"}, cmd = {"true"}, control = {ctl = true}})))
]]})
    assert.are.equal(0, r.code, r.err)
    local l = h.lines(r.out)
    assert.matches("reps: a whole number in 1%.%.1000000 expected, got 1000000000000%)", l[1])
    assert.matches("reps: a whole number in 1%.%.1000000 expected, got 0", l[2])
    assert.matches("control: ctl: fd 10000000000%.0 out of range %(0%.%.2147483647%)", l[3])
    assert.matches("control: ack: fd 2%.5 out of range", l[4])
    assert.matches("control: ctl: a FIFO path or an fd expected, got boolean", l[5])
    for _, s in ipairs(l) do assert.is_nil(s:find("got table")) end
  end)
end)

describe("the readings' metatable (L9)", function()
  it("is protected: a script neither changes nor replaces it, and readings still index by name", function()
    local r = h.run({"-e", [[
local g = pmc.group{"task-clock"}
local a = g:read()
print(getmetatable(a), pcall(setmetatable, a, {}))
local ok = pcall(function() getmetatable(a).__index = function() return "broken" end end)
print(ok, g:read()["task-clock"].name, tostring(a):match("^reading") ~= nil)
]]})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal("pmcsh.reading\tfalse\tcannot change a protected metatable\nfalse\ttask-clock\ttrue\n", r.out)
  end)
end)

-- the marker library's fixtures built against it (make marker)
local mdir = h.tmpdir()
local function build_marker(name, src)
  assert(sh("make -s -C " .. h.shquote(ROOT) .. " marker"))
  h.write(mdir .. "/" .. name .. ".c", src)
  local out = mdir .. "/" .. name
  local ok, msg = sh(string.format("cc -O2 -I%s -o %s %s -L%s -Wl,-rpath,%s -lpmcsh-marker -pthread",
    h.shquote(ROOT .. "/include"), h.shquote(out), h.shquote(mdir .. "/" .. name .. ".c"), h.shquote(ROOT .. "/build"),
    h.shquote(ROOT .. "/build")))
  assert(ok, msg)
  return out
end

local MARKED = [[
#include <pmcsh/marker.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	pmcsh_region_begin(argc > 2 ? argv[2] : "x;=1+1");
	pmcsh_region_end(argc > 2 ? argv[2] : "x;=1+1");
	if (!strcmp(mode, "fork")) {   /* a child that ends by _exit, no region open */
		pid_t pid = fork();
		if (pid == 0) {
			pmcsh_region_begin("child");
			pmcsh_region_end("child");
			_exit(0);
		}
		waitpid(pid, NULL, 0);
	} else if (!strcmp(mode, "litter")) {   /* the program's own things in the marker folder */
		const char *dir = getenv("PMCSH_MARKER_DIR");
		char p[4096];
		snprintf(p, sizeof p, "%s/mine.txt", dir ? dir : ".");
		FILE *f = fopen(p, "w");
		if (f) { fputs("keep\n", f); fclose(f); }
		snprintf(p, sizeof p, "%s/sub", dir ? dir : ".");
		mkdir(p, 0700);
		printf("%s\n", dir ? dir : "");
	}
	return 0;
}
]]

describe("regions (M3, L5, L6)", function()
  local prog
  setup(function() prog = build_marker("marked", MARKED) end)
  teardown(function() os.execute("rm -rf " .. h.shquote(mdir)) end)

  it("quotes a region name holding the separator in use, a formula made inert (-x ';', -x '|')", function()
    for _, sep in ipairs({";", "|", ",", ":"}) do
      local r = h.run({"stat", "--regions", "-e", "task-clock", "-x", sep, "--", prog})
      assert.are.equal(0, r.code, r.err)
      local line = h.lines(r.err)[1]
      assert.are.equal(1, line:find('"x;=1+1"' .. sep .. "all" .. sep, 1, true), line)
    end
    local r = h.run({"stat", "--regions", "-e", "task-clock", "-x", ";", "--", prog, "plain", "=HYPERLINK(1)"})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal([["'=HYPERLINK(1)";all;]], h.lines(r.err)[1]:sub(1, 21))
  end)

  it("says nothing of a forked child that ended by _exit with no region open", function()
    local r = h.run({"stat", "--regions", "-e", "task-clock", "--", prog, "fork"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("child", r.err)
    assert.is_nil(r.err:find("did not reach its exit"), r.err)
    assert.is_nil(r.err:find("killed, crashed or replaced by exec"), r.err)
  end)

  it("removes only the library's files from its folder, and says what it left there", function()
    local r = h.run({"stat", "--regions", "-e", "task-clock", "--", prog, "litter"})
    assert.are.equal(0, r.code, r.err)
    local folder = r.out:match("^(%S+)\n")
    assert.is_truthy(folder)
    assert.are.equal("keep\n", h.slurp(folder .. "/mine.txt"))
    assert.matches("the regions' folder .* is left as it is: it holds mine%.txt, sub", r.err)
    local _, names = sh("ls -A " .. h.shquote(folder))
    assert.are.equal("mine.txt\nsub\n", names)   -- the library's own file removed
    os.execute("rm -rf " .. h.shquote(folder))
  end)
end)

describe("CSV for any separator (M3)", function()
  it("text.csv quotes the separator in use and a spreadsheet's other ones", function()
    local text = require("pmcsh.text")
    assert.are.equal('"x;=1+1"', text.csv("x;=1+1"))
    assert.are.equal('"x;=1+1"', text.csv("x;=1+1", ";"))
    assert.are.equal('"a:b"', text.csv("a:b", ":"))
    assert.are.equal("a:b", text.csv("a:b"))
    assert.are.equal([["'=1+1"]], text.csv("=1+1", ";"))
    assert.are.equal('"a|b"', text.csv("a|b"))
    assert.are.equal("plain", text.csv("plain", ";"))
  end)

  it("quotes a host named with a semicolon in compare --csv", function()
    local dir = h.tmpdir()
    for i, host in ipairs({"n1", "n2", "x;=1+1"}) do
      h.write(dir .. "/h" .. i .. ".jsonl", cjson.encode({type = "header", recipe = "health",
        format = "pmcsh-health/1", fingerprint = {host = host, thp = "madvise"}}) .. "\n" ..
        cjson.encode({type = "metric", name = "triad MB/s", value = 100 + i, unit = "MB/s", better = "higher"}) .. "\n")
    end
    local r = h.run({"compare", "--csv", dir})
    os.execute("rm -rf " .. h.shquote(dir))
    assert.are.equal(0, r.code, r.err)
    assert.is_truthy(r.out:find('\n"x;=1+1",', 1, true), r.out)
    assert.is_nil(r.out:find("\nx;=1+1", 1, true))
  end)
end)

describe("a baseline against its own median (M7)", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. h.shquote(dir)) end)

  local function baseline(m)
    local b = {format = "pmcsh-baseline/1", z = 3.5, band = 0.1, metrics = {["triad MB/s"] = m}}
    return h.write(dir .. "/b.json", cjson.encode(b) .. "\n")
  end

  it("refuses low above the median, high below it, a negative spread, a log scale at or below 0", function()
    local cases = {
      {{median = 100, low = 150}, "low 150: above its own median 100"},
      {{median = 100, high = -5}, "high %-5: below its own median 100"},
      {{median = 100, low = 90, high = 99}, "high 99: below its own median 100"},
      {{median = 100, mad = -1}, "mad %-1: a spread, 0 or more"},
      {{median = -3, scale = "log"}, "median %-3: a log%-scale metric's median and bounds are positive"},
    }
    for _, c in ipairs(cases) do
      local r = h.run({"health", "--baseline", baseline(c[1])})
      assert.are.equal(2, r.code, r.err)
      assert.matches('b%.json %(baseline%): metrics%["triad MB/s"%]%.' .. c[2], r.err)
      assert.are.equal("", r.out)
    end
  end)

  it("takes one whose bounds hold its median", function()
    local compare = require("pmcsh.compare")
    local b = assert(compare.read_baseline(baseline({median = 100, low = 90, high = 110, scale = "log"})))
    assert.are.equal(90, b.metrics["triad MB/s"].low)
  end)

  it("names a metric with control characters inert", function()
    local b = {format = "pmcsh-baseline/1", z = 3.5, band = 0.1, metrics = {["a\nb\27[2J"] = {median = 1, low = 2}}}
    local r = h.run({"health", "--baseline", h.write(dir .. "/b.json", cjson.encode(b) .. "\n")})
    assert.are.equal(2, r.code)
    assert.matches('metrics%["a\\x0ab\\x1b%[2J"%]%.low', r.err)
  end)
end)

describe("compare DIR/ (L14)", function()
  it("names a FIFO, a dangling link and a folder it leaves out", function()
    local dir = h.tmpdir()
    for i, v in ipairs({100, 101, 99}) do
      h.write(dir .. "/n" .. i .. ".jsonl", cjson.encode({type = "header", recipe = "health",
        format = "pmcsh-health/1", fingerprint = {host = "n" .. i, thp = "madvise"}}) .. "\n" ..
        cjson.encode({type = "metric", name = "triad MB/s", value = v, unit = "MB/s", better = "higher"}) .. "\n")
    end
    os.execute(string.format("cd %s && mkfifo fifo.jsonl && ln -s nowhere dangling.json && mkdir sub.jsonl",
      h.shquote(dir)))
    local r = h.run({"compare", dir .. "/"})
    os.execute("rm -rf " .. h.shquote(dir))
    assert.are.equal(0, r.code, r.err)
    assert.matches("left out [^\n]*/dangling%.json: a link to nothing", r.err)
    assert.matches("left out [^\n]*/fifo%.jsonl: not a regular file", r.err)
    assert.matches("left out [^\n]*/sub%.jsonl: a folder", r.err)
    assert.matches("^pmcsh compare: 3 hosts", r.out)
  end)
end)

describe("list -v (L15)", function()
  it("opens no tracepoint more than list does: perf_event_open calls counted by pmcsh itself", function()
    if not h.need(h.is_root() and h.have("unshare"), "needs root to mount tracefs in a mount namespace of its own")
    then return end
    -- tracefs mounted in a namespace of the spec's own, so nothing else sees it
    local calls = {}
    for _, v in ipairs({"", "-v"}) do
      local ok, out = sh(string.format("unshare -m sh -c 'mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; " ..
        "%s stat -x, -e syscalls:sys_enter_perf_event_open -- %s list %s sched: >/dev/null'", h.shquote(h.exe),
        h.shquote(h.exe), v))
      local n = out:match("\n?(%d+),,syscalls:sys_enter_perf_event_open")
      if not h.need(ok and n, "no tracefs or no syscall tracepoints here: " .. out) then return end
      calls[#calls + 1] = tonumber(n)
    end
    -- each listed tracepoint opened by -v cost ~35 ms here: -v now opens exactly what list opens
    assert.are.equal(calls[1], calls[2])
  end)
end)
