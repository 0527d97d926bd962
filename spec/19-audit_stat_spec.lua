-- Audit 23 of pmcsh stat: each finding, as what must hold.
local h = require("helpers")

describe("pmcsh stat's options end at the command's name, as perf stat's do", function()
  it("leaves the command's own options to it", function()
    -- echo -r 3 prints "-r 3": -r is echo's word, so stat makes one run
    local r = h.run({"stat", "-x", ",", "-e", "task-clock", "echo", "-r", "3"})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal("-r 3\n", r.out)
    assert.are.equal(1, #h.lines(r.err), r.err)
    r = h.run({"stat", "-x", ",", "-e", "task-clock", "sh", "-c", "echo hi"})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal("hi\n", r.out)
    -- the command's -h is its own, not a request for stat's help
    r = h.run({"stat", "-x", ",", "-e", "task-clock", "sh", "-c", "echo $0", "-h"})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal("-h\n", r.out)
  end)

  it("still parses options before the command, and -- still ends them", function()
    local r = h.run({"stat", "-x", ",", "-r", "2", "-e", "task-clock", "--", "echo", "-e", "x"})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal("x\nx\n", r.out)   -- two runs: -r 2 was stat's
    assert.matches("task%-clock", r.err)
    assert.are.equal(2, h.run({"stat", "--no-such-option", "true"}).code)
  end)
end)

describe("pmcsh stat, a command that cannot run", function()
  it("exits 127 when it is not found and 126 when it is not runnable, naming it, as env does", function()
    local r = h.run({"stat", "-e", "task-clock", "--", "pmcsh-no-such-command"})
    assert.are.equal(127, r.code, r.err)
    assert.matches("cannot run 'pmcsh%-no%-such%-command': No such file", r.err)
    -- without -- and with -r: the same
    assert.are.equal(127, h.run({"stat", "-r", "2", "-e", "task-clock", "pmcsh-no-such-command"}).code)
    local dir = h.tmpdir()
    local file = h.write(dir .. "/not-executable", "echo never\n")
    for _, cmd in ipairs{file, dir} do   -- a file without x, and a folder: found, not runnable
      r = h.run({"stat", "-e", "task-clock", "--", cmd})
      assert.are.equal(126, r.code, r.err)
      assert.matches("cannot run '" .. cmd:gsub("%p", "%%%0") .. "'", r.err)
    end
    os.execute("rm -rf " .. h.shquote(dir))
  end)
end)

describe("pmcsh stat -o FILE, a file that cannot take the counts", function()
  it("says so, naming the file, and exits 1 in every format (/dev/full)", function()
    local f = io.open("/dev/full", "w")
    if not h.need(f, "no /dev/full here") then return end
    f:close()
    for _, extra in ipairs{{}, {"--append"}, {"-I", "100"}, {"-x", ","}, {"-j"}, {"-r", "2"}} do
      local a = {"stat", "-o", "/dev/full"}
      table.move(extra, 1, #extra, #a + 1, a)
      table.move({"-e", "task-clock", "--", "sleep", "0.15"}, 1, 6, #a + 1, a)
      local r = h.run(a)
      local what = table.concat(extra, " ")
      assert.are.equal(1, r.code, what .. ": " .. r.err)
      assert.matches("cannot write /dev/full: No space left on device", r.err, nil, true)
    end
  end)

  it("keeps the command's status when the file takes the counts", function()
    local f = h.tmpdir() .. "/counts"
    local r = h.run({"stat", "-o", f, "-e", "task-clock", "--", "sh", "-c", "exit 3"})
    assert.are.equal(3, r.code, r.err)
    assert.matches("task%-clock", h.slurp(f))
  end)
end)

describe("target lists name each target once", function()
  local busy
  before_each(function()
    local p = io.popen("sh -c 'while :; do :; done' >/dev/null 2>&1 & echo $!")
    busy = p:read("l")
    p:close()
  end)
  after_each(function() os.execute("kill " .. busy .. " 2>/dev/null") end)

  -- the spinner's time on a cpu while stat counts it, from the kernel's
  -- own account (/proc/PID/schedstat, ns) read before and after: a thread
  -- counted twice reads twice that (603.89 ms over 0.3 s before), whatever
  -- share of a cpu the spinner gets on a busy machine
  local function on_cpu() return tonumber(h.slurp("/proc/" .. busy .. "/schedstat"):match("^(%d+)")) end
  local function rows_and_ratio(args)
    local a = {"stat", "-x", ",", "-e", "task-clock"}
    table.move(args, 1, #args, #a + 1, a)
    table.move({"--", "sleep", "0.3"}, 1, 3, #a + 1, a)
    local t0 = on_cpu()
    local r = h.run(a)
    local spent = on_cpu() - t0
    assert.are.equal(0, r.code, r.err)
    local rows, ms = h.lines(r.err), 0
    for _, l in ipairs(rows) do ms = ms + tonumber(l:match("([%d.]+),msec,task%-clock")) end
    return rows, ms * 1e6 / spent, r.err
  end

  it("counts a thread once under -p P,P, -t P,P and -p P -t P", function()
    if not h.need(on_cpu(), "no /proc/PID/schedstat here") then return end
    for _, args in ipairs{{"-p", busy .. "," .. busy}, {"-t", busy .. "," .. busy}, {"-p", busy, "-t", busy}} do
      local rows, ratio, err = rows_and_ratio(args)
      assert.are.equal(1, #rows, err)
      -- the count's window lies inside the two reads: at most the time
      -- spent, plus 10% for the reads' own granularity
      assert.is_true(ratio <= 1.1, table.concat(args, " ") .. string.format(": %.2f of its time; ", ratio) .. err)
      table.insert(args, "--per-thread")   -- and one row per thread
      rows, ratio, err = rows_and_ratio(args)
      assert.are.equal(1, #rows, err)
      assert.is_true(ratio <= 1.1, table.concat(args, " ") .. string.format(": %.2f of its time; ", ratio) .. err)
    end
  end)

  it("counts a cpu once in pmc.group's cpus list, and -C 0,0 once", function()
    local ok, why = h.can_count_cpu_wide()
    if not h.need(ok, why) then return end
    local pmc = require("pmcsh.pmc")
    local g = assert(pmc.group({"cpu-clock"}, {cpus = {0, 0, 0}}))
    local r = assert(g:measure(require("pmcsh._sys").sleep, 0.2))
    g:close()
    assert.are.equal(1, #r[1].cpus)
    -- cpu-clock of one cpu over 0.2 s: 0.2 s, within 30% for the edges
    assert.is_true(r[1].value <= 0.2e9 * 1.3, tostring(r[1].value))
    local r = h.run({"stat", "-x", ",", "-C", "0,0", "-A", "-e", "cpu-clock", "--", "true"})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal(1, #h.lines(r.err), r.err)
  end)
end)

describe("event names as perf reads them, in stat and pmc", function()
  local pmc = require("pmcsh.pmc")

  it("takes the modifier :uk (user and kernel) and its orders, as perf does", function()
    for _, name in ipairs{"task-clock:uk", "task-clock:ku", "page-faults:uk"} do
      local i = assert(pmc.info(name))
      assert.is_false(i.exclude_user, name)
      assert.is_false(i.exclude_kernel, name)
    end
    local i = assert(pmc.info("page-faults:h"))
    assert.is_true(i.exclude_user and i.exclude_kernel)
    assert.is_false(i.exclude_hv)
    local r = h.run({"stat", "-x", ",", "-e", "page-faults:uk", "--", "true"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("^%d+,,page%-faults:uk,", r.err)
  end)

  it("refuses a sysfs term without a value, a bare name and a negative value, naming the term", function()
    for name, why in pairs{
      ["msr/event=/"] = "bad value '' for term 'event' of msr: the value is missing",
      ["msr/event=-1/"] = "bad value '%-1' for term 'event' of msr",
      ["msr/name/"] = "term 'name' of msr needs a value",
    } do
      local ok, msg, errno = pmc.info(name)
      assert.is_nil(ok, name)
      assert.matches(why, msg)
      assert.are.equal(22, errno)
      local r = h.run({"stat", "-e", name, "--", "true"})
      assert.are.equal(2, r.code, name .. ": " .. r.err)
      assert.matches(why, r.err)
    end
  end)

  it("refuses an empty group {} as a usage error, not the default events", function()
    for _, e in ipairs{"{}", "{,}", "{}:u"} do
      local r = h.run({"stat", "-e", e, "--", "true"})
      assert.are.equal(2, r.code, e .. ": " .. r.err)
      assert.matches("no events in the group '" .. e:gsub("%p", "%%%0") .. "'", r.err)
      assert.not_matches("context%-switches", r.err)
    end
  end)

  it("refuses libpfm4's sampling attributes (period=, freq=): pmcsh counts", function()
    for _, name in ipairs{"task-clock:period=1", "task-clock:freq=100", "page-faults:u:period=10"} do
      local ok, msg = pmc.group{name}
      assert.is_nil(ok, name)
      local attr = name:match(":([pf]%a+=%d+)$")
      assert.matches("'" .. attr .. "' asks the kernel to sample", msg)
      local r = h.run({"stat", "-e", name, "--", "true"})
      assert.are.equal(2, r.code, r.err)
      assert.matches(attr, r.err)
    end
  end)
end)

describe("pmcsh stat and the signals that reach it while the command runs", function()
  -- pmcsh stat in the background; once its command runs, the signal; then
  -- its status, its stderr and whether the command's pid is still there.
  -- pmcsh starts with every signal at its default (env --default-signal),
  -- not with INT and QUIT ignored as a shell starts a background job,
  -- unless keep_ignored.
  local function signalled(sig, cmd, keep_ignored)
    local dir = h.tmpdir()
    local script = string.format([[
ulimit -c 0
%s %s stat -x , -e task-clock,duration_time -- %s 2>%s/err & p=$!
c=; i=0
while [ -z "$c" ] && [ $i -lt 100 ]; do sleep 0.05; c=$(cat /proc/$p/task/$p/children 2>/dev/null); i=$((i+1)); done
sleep 0.2
kill -%s $p
wait $p
echo "$? $c"]], keep_ignored and "" or "env --default-signal", h.shquote(h.exe), cmd, dir, sig)
    local p = io.popen(script)
    local code, child = p:read("a"):match("(%d+)%s+(%d+)")
    p:close()
    local err = h.slurp(dir .. "/err")
    os.execute("rm -rf " .. h.shquote(dir))
    local alive = child and io.open("/proc/" .. child .. "/stat") ~= nil
    if alive then os.execute("kill -9 " .. child) end
    return tonumber(code), err, alive, child
  end

  -- every signal that would end pmcsh: 40 is a real-time one (SIGRTMIN+6 here)
  local SIGNUM = {HUP = 1, QUIT = 3, USR1 = 10, PIPE = 13, TERM = 15, XCPU = 24, VTALRM = 26, ["40"] = 40}
  for _, sig in ipairs{"HUP", "QUIT", "USR1", "TERM", "PIPE", "XCPU", "VTALRM", "40"} do
    it("passes SIG" .. sig .. " on to the command, prints the counts and exits as it ended (128 + signal)", function()
      local code, err, alive, child = signalled(sig, "sleep 5")
      assert.is_truthy(child, "the command never started: " .. err)
      assert.is_false(alive, "the command was left running")
      assert.are.equal(128 + SIGNUM[sig], code, err)
      assert.matches("^[%d.]+,msec,task%-clock,", err)
      -- the signal ended it, not its 5 s
      assert.is_true(tonumber(err:match("\n(%d+),ns,duration_time,")) < 4e9, err)
    end)
  end

  it("holds SIGALRM as perf stat does: the command runs on to its end, then its counts and its status", function()
    local code, err, alive = signalled("ALRM", [['sh' '-c' 'sleep 0.6; exit 3']])
    assert.is_false(alive)
    assert.are.equal(3, code, err)   -- the command's own end, after its sleep
    assert.matches("^[%d.]+,msec,task%-clock,", err)
  end)

  it("ends a count without a command at SIGALRM, prints it and exits 142, leaving -p's process, as perf", function()
    local dir = h.tmpdir()
    -- once stat holds a counter open, the signal
    local p = io.popen(string.format([[
sleep 5 & t=$!
%s stat -x , -e task-clock -p $t 2>%s/err & p=$!
i=0
until ls -l /proc/$p/fd 2>/dev/null | grep -q perf_event || [ $i -ge 100 ]; do sleep 0.05; i=$((i+1)); done
sleep 0.2
kill -ALRM $p
wait $p
echo "$? $(kill -0 $t 2>/dev/null && echo alive)"
kill $t]], h.shquote(h.exe), dir))
    local out = p:read("a")
    p:close()
    local err = h.slurp(dir .. "/err")
    os.execute("rm -rf " .. h.shquote(dir))
    assert.are.equal("142 alive", out:match("^(%d+ ?%a*)"), out .. err)
    assert.matches("task%-clock", err)
  end)

  it("leaves a signal ignored where it started ignored (a shell's background job's QUIT, nohup's HUP)", function()
    local code, err, alive = signalled("QUIT", [['sh' '-c' 'sleep 0.6; exit 3']], true)
    assert.is_false(alive)
    assert.are.equal(3, code, err)
    assert.matches("^[%d.]+,msec,task%-clock,", err)
  end)

  it("lets a command that handles SIGUSR1 go on, and exits with its status", function()
    local code, err, alive = signalled("USR1",
      [['sh' '-c' 'trap "echo usr1 >&2" USR1; i=0; while [ $i -lt 20 ]; do sleep 0.05; i=$((i+1)); done; exit 5']])
    assert.is_false(alive)
    assert.are.equal(5, code, err)
    assert.matches("usr1\n", err)
    assert.matches("task%-clock", err)
  end)
end)

-- Refusals as a user without privileges: root drops to nobody with setpriv.
local NOBODY = "cd / && setpriv --reuid=65534 --regid=65534 --clear-groups"
local function paranoid() return tonumber(h.slurp("/proc/sys/kernel/perf_event_paranoid")) end
local function can_drop()
  return h.is_root() and h.have("setpriv"), "needs root (to drop to nobody) and setpriv"
end

describe("pmcsh stat refused by perf_event_paranoid, as perf stat", function()
  it("names the user's own event as typed, never a stand-in", function()
    if not h.need(can_drop()) then return end
    if not h.need(paranoid() >= 1, "perf_event_paranoid < 1 lets nobody count cpu-wide") then return end
    local r = h.run({"stat", "-e", "task-clock:u", "-a", "--", "true"}, {env = NOBODY})
    assert.are.equal(1, r.code, r.err)
    assert.matches("permission denied opening task%-clock:u", r.err)
    assert.matches("whole cpus", r.err)
    assert.not_matches("count user space only", r.err)
  end)

  it("counts the default events in user space at paranoid 2, named ev:u as perf names them", function()
    if not h.need(can_drop()) then return end
    if not h.need(paranoid() == 2, "perf_event_paranoid is not 2 here") then return end
    local r = h.run({"stat", "-x", ",", "--", "true"}, {env = NOBODY})
    assert.are.equal(0, r.code, r.err)
    local names = {}
    for _, l in ipairs(h.lines(r.err)) do names[#names + 1] = h.fields(l, ",")[3] end
    assert.are.equal("task-clock:u", names[1], r.err)
    assert.are.equal("page-faults:u", names[4], r.err)
    -- 'true' touches a few dozen pages of its own in user space (not 0, not millions)
    local faults = tonumber(h.fields(h.lines(r.err)[4], ",")[1])
    assert.is_true(faults and faults > 0 and faults < 10000, r.err)
    -- an event typed as :k is the user's choice: refused, not changed
    r = h.run({"stat", "-e", "page-faults:k", "--", "true"}, {env = NOBODY})
    assert.are.equal(1, r.code, r.err)
    assert.matches("permission denied opening page%-faults:k", r.err)
  end)
end)

describe("permission messages say what the kernel refused here", function()
  it("blames another user's process on the right to trace it, not on paranoid or a security module", function()
    if not h.need(can_drop()) then return end
    -- process 1 is root's: nobody may not count it at any perf_event_paranoid
    local r = h.run({"stat", "-e", "task-clock:u", "-p", "1", "--", "true"}, {env = NOBODY})
    assert.are.equal(1, r.code, r.err)
    assert.matches("on process 1: it belongs to uid 0 and you are uid 65534", r.err)
    assert.matches("trace", r.err)
    assert.not_matches("security module", r.err)
    assert.not_matches("perf_event_paranoid=", r.err)
  end)

  it("describes paranoid 3 as this kernel enforces it (measured: does :u count?)", function()
    if not h.need(can_drop()) then return end
    local was = paranoid()
    local function set(v)
      local f = assert(io.open("/proc/sys/kernel/perf_event_paranoid", "w"))
      f:write(tostring(v)); f:close()
    end
    local counts, r
    finally(function() set(was) end)
    set(3)
    counts = h.run({"-e", "print(pmc.group{'task-clock:u'} ~= nil)"}, {env = NOBODY}).out == "true\n"
    r = h.run({"stat", "-e", "task-clock:u", "-a", "--", "true"}, {env = NOBODY})
    set(was)
    assert.are.equal(1, r.code, r.err)
    if counts then   -- upstream: 3 is 2, and :u of one's own processes counts
      assert.not_matches("no perf_event_open at all", r.err)
      assert.matches("3 %(which this kernel treats as 2%)", r.err)
      assert.matches("whole cpus", r.err)
    else             -- Debian's patch: nothing unprivileged opens
      assert.matches("enforces as no perf_event_open at all", r.err)
    end
  end)
end)

describe("pmcsh stat -r, as perf stat sums repeated runs", function()
  -- perf's elapsed line: the mean, the standard deviation of the mean (the
  -- runs' standard deviation over sqrt(n)) and it as a percentage of the
  -- mean, both numbers to perf's digits: get_precision(error) + 2
  it("prints the standard error of the mean on the elapsed line, to perf's digits", function()
    local r = h.run({"stat", "-r", "8", "-e", "task-clock", "--", "sh", "-c", ":"})
    assert.are.equal(0, r.code, r.err)
    local m, s, p = r.err:match("\n%s*([%d.]+) %+%- ([%d.]+) seconds time elapsed  %( %+%-%s*([%d.]+)%% %)")
    assert.is_truthy(m, r.err)
    local mean, se, pct = tonumber(m), tonumber(s), tonumber(p)
    assert.is_true(se > 0, r.err)
    -- the same figure twice: the +- over the mean is the percentage, within
    -- the rounding of three significant digits and of %.2f
    assert.is_true(math.abs(100 * se / mean - pct) <= 0.006 * pct + 0.006,
      string.format("%s +- %s is %.2f%%, printed %s%%", m, s, 100 * se / mean, p))
    -- perf's precision: two digits past the error's first significant one
    -- (one more where the printed error rounded up to a power of ten)
    local digits = #s:match("%.(%d*)$")
    assert.are.equal(digits, #m:match("%.(%d*)$"), r.err)
    local want = se > 1 and 2 or math.ceil(-math.log(se, 10)) + 2
    local power = math.log(se, 10) == math.floor(math.log(se, 10))
    assert.is_true(digits == want or power and digits == want + 1,
      string.format("%d digits, perf prints %d: %s", digits, want, r.err))
  end)

  it("keeps running sums, so the memory it holds does not grow with -r", function()
    local recipe, pmc = require("pmcsh.recipe"), require("pmcsh.pmc")
    -- the heap in use after each run's counting, everything collectable
    -- collected (the list of figures made at its full size first)
    local real, live, n = pmc.run, {}, 0
    for i = 1, 300 do live[i] = 0 end
    finally(function() pmc.run = real end)
    pmc.run = function(...)
      local res = table.pack(real(...))
      collectgarbage(); collectgarbage()
      n = n + 1
      live[n] = collectgarbage("count") * 1024
      return table.unpack(res, 1, res.n)
    end
    local dir = h.tmpdir()
    local status = recipe.run("stat", {["repeat"] = 300, events = "task-clock,page-faults",
      output = dir .. "/counts", args = {"true"}})
    pmc.run = real
    os.execute("rm -rf " .. h.shquote(dir))
    assert.are.equal(0, status)
    assert.are.equal(300, n)
    -- every run's aggregates kept cost about 1 KB a run (310 KB here, 25 MB
    -- at -r 4000); running sums hold the same few numbers from the second
    -- run on, whatever the number of runs (a few KB of slack for the heap)
    local grew = live[300] - live[50]
    assert.is_true(grew < 4096, string.format("%.0f bytes more after 250 more runs", grew))
  end)
end)

describe("pmcsh stat -p and -t, as perf's attr.inherit counts", function()
  -- A target that waits until stat's command says the count has begun,
  -- then starts a child that burns 0.3 s of cpu time by its own clock
  -- (os.clock), then says it is done; stat's command waits for that.
  -- Returns stat's result and its task-clock in ms.
  local function counted(which, extra)
    local dir = h.tmpdir()
    local go, done = dir .. "/go", dir .. "/done"
    assert(os.execute("mkfifo " .. h.shquote(go) .. " " .. h.shquote(done)))
    local burn = h.shquote(h.exe) .. " -e " .. h.shquote("local t = os.clock() while os.clock() - t < 0.3 do end")
    local target = string.format("read x < %s; %s; echo > %s", h.shquote(go), burn, h.shquote(done))
    local p = io.popen("sh -c " .. h.shquote(target) .. " >/dev/null 2>&1 & echo $!")
    local pid = p:read("l")
    p:close()
    local a = {"stat", "-x", ",", "-e", "task-clock", which, pid}
    table.move(extra, 1, #extra, #a + 1, a)
    table.move({"--", "sh", "-c", string.format("echo > %s; read x < %s", h.shquote(go), h.shquote(done))}, 1, 4,
      #a + 1, a)
    local r = h.run(a)
    os.execute("kill -9 " .. pid .. " 2>/dev/null; rm -rf " .. h.shquote(dir))
    return r, tonumber(r.err:match("^([%d.]+),msec,task%-clock,"))
  end

  for _, which in ipairs{"-p", "-t"} do
    it("counts with " .. which .. " the child its target starts after the count began", function()
      local r, ms = counted(which, {})
      assert.are.equal(0, r.code, r.err)
      -- at least the child's own 0.3 s (0.13 ms counted before: its parent's)
      assert.is_true(ms and ms >= 300, r.err)
    end)
  end

  it("leaves the target's new children out with -i/--no-inherit, as perf stat -i", function()
    for _, flag in ipairs{"-i", "--no-inherit"} do
      local r, ms = counted("-p", {flag})
      assert.are.equal(0, r.code, r.err)
      assert.is_true(ms == nil or ms < 150, flag .. ": " .. r.err)   -- the shell's own reads and fork
    end
    -- and the command's: sh -c's child burns outside the count
    local r = h.run({"stat", "-x", ",", "-i", "-e", "task-clock", "--", "sh", "-c",
      h.shquote(h.exe) .. " -e 'local t = os.clock() while os.clock() - t < 0.3 do end'; :"})
    assert.are.equal(0, r.code, r.err)
    local ms = tonumber(r.err:match("^([%d.]+),msec,task%-clock,"))
    assert.is_true(ms and ms < 150, r.err)
  end)
end)

describe("pmcsh stat --per-thread, a thread's name is the thread's to choose", function()
  -- a shell that names itself q"\ ESC[31m TAB x (prctl's 15 bytes: any but NUL)
  local NAME = 'q"\\\27[31m\tx'
  local pid
  before_each(function()
    local p = io.popen("sh -c " .. h.shquote([[printf 'q"\\\033[31m\tx' > /proc/$$/comm; sleep 5 & wait]]) ..
      " >/dev/null 2>&1 & echo $!")
    pid = p:read("l")
    p:close()
    for _ = 1, 100 do
      if h.slurp("/proc/" .. pid .. "/comm") == NAME .. "\n" then break end
      os.execute("sleep 0.02")
    end
  end)
  after_each(function() os.execute("kill " .. pid .. " 2>/dev/null") end)

  local function stat(extra)
    local a = {"stat", "--per-thread", "-p", pid, "-e", "task-clock"}
    table.move(extra, 1, #extra, #a + 1, a)
    table.move({"--", "sleep", "0.1"}, 1, 3, #a + 1, a)
    return h.run(a)
  end

  it("writes it as a JSON string in --json", function()
    assert.are.equal(NAME .. "\n", h.slurp("/proc/" .. pid .. "/comm"))
    local r = stat({"--json"})
    assert.are.equal(0, r.code, r.err)
    local recs = h.perf_json_lines(r.err)   -- every line decodes, the first a perf record
    assert.are.equal(1, #recs, r.err)
    assert.are.equal(NAME .. "-" .. pid, recs[1].thread)
  end)

  it("makes its control bytes inert in the table and -x", function()
    for _, extra in ipairs{{}, {"-x", ","}} do
      local r = stat(extra)
      assert.are.equal(0, r.code, r.err)
      assert.is_nil(r.err:find("[\27\t]"), r.err)
      -- -x: a CSV field, its quote doubled (text.csv)
      local want = extra[1] and '"q""\\\\x1b[31m\\x09x-' .. pid .. '"' or 'q"\\\\x1b[31m\\x09x-' .. pid
      assert.is_truthy(r.err:find(want, 1, true), r.err)
    end
  end)
end)

describe("pmcsh stat's -p, -t and -C lists", function()
  it("refuse anything but decimal numbers, and an empty item, as usage errors naming the option as typed", function()
    for _, case in ipairs{
      {{"-p", ""}, "-p '': an empty list"},
      {{"-p", ",,,"}, "-p ,,,: an empty item"},
      {{"-p", "0x10"}, "-p 0x10: '0x10' is not a decimal number"},   -- not pid 16
      {{"-p", "1e3"}, "-p 1e3: '1e3' is not a decimal number"},      -- not pid 1000
      {{"-p", "010"}, "-p 010: '010' has a leading zero"},
      {{"-p", "5-7"}, "-p 5-7: '5-7' is a range"},
      {{"-p", "0"}, "-p 0: '0' is outside 1 to"},
      {{"-p", "2147483648"}, "-p 2147483648: '2147483648' is outside 1 to 2147483647"},   -- no pid_t
      {{"--pid=1,"}, "--pid=1,: an empty item"},
      {{"--pid="}, "--pid='': an empty list"},
      {{"-t", "1,,1"}, "-t 1,,1: an empty item"},
      {{"-C", "0,,1"}, "-C 0,,1: an empty item"},
      {{"-C", ",0"}, "-C ,0: an empty item"},
      {{"-C", "0x0"}, "-C 0x0: '0x0' is not a decimal number"},
      {{"-C", " 0"}, "-C  0: ' 0' is not a decimal number"},
      {{"-C", "010"}, "-C 010: '010' has a leading zero"},   -- perf reads 010 as octal 8
      {{"--cpu", "0-\27[2J"}, "--cpu 0-\\x1b[2J: '0-\\x1b[2J' is not a decimal number"},
    } do
      local a = {"stat", "-e", "task-clock"}
      table.move(case[1], 1, #case[1], #a + 1, a)
      table.move({"--", "true"}, 1, 2, #a + 1, a)
      local r = h.run(a)
      local what = table.concat(case[1], " ")
      assert.are.equal(2, r.code, what .. ": " .. r.err)
      assert.is_truthy(r.err:find("pmcsh stat: " .. case[2], 1, true), what .. ": " .. r.err)
      assert.not_matches("bad argument", r.err)
      assert.is_nil(r.err:find("\27", 1, true))
    end
  end)

  it("keep -p's order and -C's cpus sorted, each once (machine.parse_list's kinds)", function()
    local machine = require("pmcsh.machine")
    assert.are.same({5, 3, 5}, machine.parse_list("5,3,5", "ids"))
    assert.are.same({0, 1, 2, 3, 8}, machine.parse_list("8,0-3,2", "cpus"))
    assert.are.same({0, 1}, machine.parse_list(" 0 , 1\n"))   -- a sysfs file's text, as before
    assert.is_nil((machine.parse_list(" 0 , 1\n", "cpus")))
    assert.has_error(function() machine.parse_list("0", "pids") end)
  end)
end)

describe("pmcsh stat -M, Ctrl-C while a metric is evaluated", function()
  it("ends the stat with status 130, as a Ctrl-C elsewhere does", function()
    local dir = h.tmpdir()
    -- a group whose metric never returns: only an interrupt ends it
    h.write(dir .. "/slow.lua", [[
return {name = "slow", description = "a metric that never ends", events = {"task-clock"},
  metrics = {{name = "forever", events = {"task-clock"}, fn = function(e) while true do end end}}}]])
    -- once the command has come and gone, the metric runs: then Ctrl-C;
    -- a stat still there 10 s later is killed and reported
    local p = io.popen(string.format([[
%s stat -M %s/slow.lua -- sleep 0.2 2>%s/err & p=$!
c=; i=0
while [ -z "$c" ] && [ $i -lt 200 ]; do sleep 0.02; c=$(cat /proc/$p/task/$p/children 2>/dev/null); i=$((i+1)); done
while [ -e /proc/$c ] && [ $i -lt 400 ]; do sleep 0.02; i=$((i+1)); done
sleep 0.3
kill -INT $p
i=0
while kill -0 $p 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
if kill -0 $p 2>/dev/null; then kill -9 $p; echo hung; fi
wait $p
echo "status $?"]], h.shquote(h.exe), dir, dir))
    local out = p:read("a")
    p:close()
    local err = h.slurp(dir .. "/err")
    os.execute("rm -rf " .. h.shquote(dir))
    assert.not_matches("hung", out, nil, true)
    assert.are.equal("130", out:match("status (%d+)"), out .. err)
    assert.matches("pmcsh stat: interrupted", err, nil, true)
  end)
end)

describe("pmcsh stat -o FILE with stdout closed (>&-)", function()
  local function sh(line)
    local p = io.popen(line .. "; echo \"status $?\"")
    local out = p:read("a")
    p:close()
    return tonumber(out:match("status (%d+)")), out
  end

  it("ends with the command's status: a closed stdout it never writes is no failure", function()
    local dir = h.tmpdir()
    local f = dir .. "/counts"
    local code, out = sh(string.format("%s stat -o %s -e task-clock -- true >&- 2>%s/err", h.shquote(h.exe), f, dir))
    assert.are.equal(0, code, out .. h.slurp(dir .. "/err"))
    assert.matches("task%-clock", h.slurp(f))
    -- the command finds its stdout closed: nothing it writes lands in the counts' file
    os.remove(f)
    code = sh(string.format("%s stat -o %s -e task-clock -- sh -c 'echo x$((20+3))y' >&- 2>/dev/null",
      h.shquote(h.exe), f))
    assert.are_not.equal(0, code)   -- its echo failed, as on a closed stdout
    assert.matches("task%-clock", h.slurp(f))
    assert.not_matches("x23y", h.slurp(f))
    os.execute("rm -rf " .. h.shquote(dir))
  end)

  it("still fails a write to a closed stdout, naming it", function()
    local code, out = sh(h.shquote(h.exe) .. " -e 'print(1)' 2>&1 >&-")
    assert.are.equal(1, code, out)
    assert.matches("error writing standard output: Bad file descriptor", out)
  end)
end)

describe("a word with a NUL byte (from Lua: no command line has one)", function()
  local function lua(chunk) return h.run({"-e", chunk}) end

  it("is refused by stat as a usage error naming it, never taken cut short", function()
    local dir = h.tmpdir()
    for _, case in ipairs{
      {[[{events = "task-clock\0xyz", args = {"true"}}]], "option --events: 'task-clock\\x00xyz' holds a NUL byte"},
      {[[{events = {"task-clock", "page-faults\0:k"}, args = {"true"}}]],
       "option --events: 'page-faults\\x00:k' holds a NUL byte"},
      {[[{events = "task-clock", args = {"echo", "a\0b"}}]], "stat: argument 2 ('a\\x00b') holds a NUL byte"},
      {[[{events = "task-clock", pid = "1\0 2", args = {"true"}}]], "option --pid: '1\\x00 2' holds a NUL byte"},
      {string.format([[{events = "task-clock", output = %q, args = {"true"}}]], dir .. "/x\0y"),
       "option --output: '" .. dir .. "/x\\x00y' holds a NUL byte"},
    } do
      local r = lua("require('pmcsh.recipe').run('stat', " .. case[1] .. ")")
      assert.are.equal(2, r.code, case[1] .. ": " .. r.err)
      assert.is_truthy(r.err:find(case[2], 1, true), r.err)
      assert.are.equal("", r.out)   -- echo never ran with 'a'
      assert.is_nil(io.open(dir .. "/x"))   -- no file of the name cut at the NUL
    end
    os.execute("rm -rf " .. h.shquote(dir))
  end)

  it("is a bad argument to the engines and the file functions, at the caller's line", function()
    local dir = h.tmpdir()
    for chunk, why in pairs{
      ['pmc.run{events = {"task-clock"}, cmd = {"echo", "a\\0b"}}'] = "bad argument #1 to 'run' (cmd: word 2 holds a NUL",
      ['pmc.info("task-clock\\0x")'] = "bad argument #1 to 'info' (the event name holds a NUL",
      [string.format("require('pmcsh.sys').create(%q)", dir .. "/x\0y")] = "bad argument #1 to 'create' (the string holds a NUL",
      [string.format("require('pmcsh._sys').mkdir(%q)", dir .. "/x\0y")] = "bad argument #1 to 'mkdir' (the string holds a NUL",
    } do
      local r = lua(chunk)
      assert.are.equal(1, r.code, chunk)
      assert.matches("%(command line%):1: ", r.err)
      assert.is_truthy(r.err:find(why, 1, true), chunk .. ": " .. r.err)
      assert.are.equal("", r.out)
      assert.is_nil(io.open(dir .. "/x"))
    end
    os.execute("rm -rf " .. h.shquote(dir))
  end)

  it("is an answer, not an error, where a function answers nil and why (events.pairs, machine.parse_list)", function()
    local p, why = require("pmcsh.events").pairs("task-clock\0,page-faults")
    assert.is_nil(p)
    assert.matches("NUL byte", why)
    assert.is_nil((require("pmcsh.machine").parse_list("1\0", "ids")))
  end)
end)
