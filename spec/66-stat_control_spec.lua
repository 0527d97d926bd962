-- pmcsh stat -D and --control speak perf stat 6.1's protocol: a program
-- written for `perf stat --control` (spec/fixtures/perfctl.c) switches
-- counting itself, and page-faults:u counts exactly the pages it touches
-- while enabled.  And pmc.run's env: the command's environment, built in
-- the parent.
local h = require("helpers")
local pmc = require("pmcsh.pmc")

local dir, prog

local function build()
  if prog then return prog end
  dir = h.tmpdir()
  if not os.execute("cc -O2 -o " .. dir .. "/perfctl spec/fixtures/perfctl.c 2>/dev/null") then return nil end
  prog = dir .. "/perfctl"
  return prog
end

-- two new FIFOs in dir: ctl, ack
local function fifos()
  local ctl, ack = dir .. "/ctl", dir .. "/ack"
  os.execute("rm -f " .. ctl .. " " .. ack .. "; mkfifo " .. ctl .. " " .. ack)
  return ctl, ack
end

local function can_count()
  return pmc.group{"page-faults:u"} ~= nil, "page-faults:u does not open here"
end

describe("pmcsh stat -D and --control, perf's protocol", function()
  teardown(function() if dir then os.execute("rm -rf " .. h.shquote(dir)) end end)

  it("counts exactly the pages a program touches between its enable and disable (fifo:)", function()
    if not h.need(can_count()) then return end
    if not h.need(build(), "no C compiler to build spec/fixtures/perfctl.c") then return end
    local ctl, ack = fifos()
    -- 100 pages before, 300 while enabled, 100 after: only the 300 count
    local r = h.run({"stat", "-D", "-1", "--control", "fifo:" .. ctl .. "," .. ack, "-e", "page-faults:u",
      "-x", ",", "--", prog, ctl, ack, "300"})
    assert.are.equal(0, r.code, r.err)
    local ls = h.lines(r.err)
    assert.are.same({"Events disabled", "Events enabled", "Events disabled"}, {ls[1], ls[2], ls[3]})
    local f = h.fields(ls[4], ",")
    assert.are.same({"300", "", "page-faults:u"}, {f[1], f[2], f[3]})
    assert.are.equal(4, #ls)
  end)

  it("takes inherited descriptors (fd:CTL,ACK)", function()
    if not h.need(can_count()) then return end
    if not h.need(build(), "no C compiler to build spec/fixtures/perfctl.c") then return end
    local ctl, ack = fifos()
    local r = h.run({"stat", "-D", "-1", "--control", "fd:7,8", "-e", "page-faults:u", "-x", ",", "--",
      prog, ctl, ack, "300"}, {env = "exec 7<>" .. h.shquote(ctl) .. " 8<>" .. h.shquote(ack) .. ";"})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal("300", h.fields(h.lines(r.err)[4], ",")[1], r.err)
  end)

  it("ignores what perf ignores and says what perf says of a malformed command", function()
    if not h.need(can_count()) then return end
    if not h.need(build(), "no C compiler to build spec/fixtures/perfctl.c") then return end
    local ctl, ack = fifos()
    -- "hello" is not answered, "enablex" is answered and switches nothing
    local r = h.run({"stat", "-D", "-1", "--control", "fifo:" .. ctl .. "," .. ack, "-e", "page-faults:u",
      "-x", ",", "--", prog, ctl, ack, "300"}, {env = "PERFCTL_GARBAGE=1"})
    assert.are.equal(0, r.code, r.err)
    local ls = h.lines(r.err)
    assert.are.same({"Events disabled", "failed: wrong command", "Events enabled", "Events disabled"},
      {ls[1], ls[2], ls[3], ls[4]})
    assert.are.equal("300", h.fields(ls[5], ",")[1])
  end)

  it("gives the rows perf stat gives, where perf is installed", function()
    if not h.need(can_count()) then return end
    if not h.need(build(), "no C compiler to build spec/fixtures/perfctl.c") then return end
    if not h.need(os.execute("perf stat -e page-faults:u true >/dev/null 2>&1"), "perf is not installed") then return end
    local ctl, ack = fifos()
    local p = io.popen(string.format("perf stat -D -1 --control fifo:%s,%s -e page-faults:u -x, -- %s %s %s 300 2>&1",
      ctl, ack, prog, ctl, ack))
    local theirs = h.lines(p:read("a"))
    p:close()
    local ours = h.lines(h.run({"stat", "-D", "-1", "--control", "fifo:" .. ctl .. "," .. ack, "-e", "page-faults:u",
      "-x", ",", "--", prog, ctl, ack, "300"}).err)
    assert.are.equal(#theirs, #ours)
    for i = 1, 3 do assert.are.equal(theirs[i], ours[i]) end
    local a, b = h.fields(theirs[4], ","), h.fields(ours[4], ",")
    assert.are.same({a[1], a[2], a[3], a[5]}, {b[1], b[2], b[3], b[5]})
  end)

  it("starts counting after -D MS, and times the run from there as perf does", function()
    if not h.need(can_count()) then return end
    if not h.need(build(), "no C compiler to build spec/fixtures/perfctl.c") then return end
    -- 100 pages at once, 500 after 600 ms: a 300 ms delay sees the 500 (and
    -- the exit's few), and the elapsed time is about 0.3 s, not 0.6
    local r = h.run({"stat", "-D", "300", "-e", "page-faults:u", "--", prog, "--sleep", "600", "500"})
    assert.are.equal(0, r.code, r.err)
    local ls = h.lines(r.err)
    assert.are.same({"Events disabled", "Events enabled"}, {ls[1], ls[2]})
    local n = tonumber(r.err:match("([%d,]+)%s+page%-faults:u"):gsub(",", "") + 0)
    assert.is_true(n >= 500 and n <= 510, r.err)
    local el = tonumber(r.err:match("([%d.]+) seconds time elapsed"))
    assert.is_true(el > 0.15 and el < 0.55, r.err)
  end)

  it("counts nothing with -D -1 and no enable: <not counted>, as perf", function()
    if not h.need(can_count()) then return end
    local r = h.run({"stat", "-D", "-1", "-e", "page-faults:u", "-x", ",", "--", "true"})
    assert.are.equal(0, r.code, r.err)
    assert.are.same({"Events disabled", "<not counted>,,page-faults:u,0,100.00,,"}, h.lines(r.err))
    r = h.run({"stat", "-D", "-1", "-e", "page-faults:u", "--", "true"})
    assert.matches("\n%s+<not counted>%s+page%-faults:u\n", r.err)
  end)

  it("refuses a control channel that is not one, in one line", function()
    if not h.need(can_count()) then return end
    local d = h.tmpdir()
    h.write(d .. "/plain", "keep me")
    local r = h.run({"stat", "--control", "fifo:" .. d .. "/plain", "-e", "page-faults:u", "--", "true"})
    assert.are.equal(1, r.code, r.err)
    assert.are.same({"pmcsh stat: " .. d .. "/plain is not a FIFO (make one with mkfifo)"}, h.lines(r.err))
    assert.are.equal("keep me", h.slurp(d .. "/plain"))   -- never written as an ack
    r = h.run({"stat", "--control", "fifo:" .. d .. "/none", "-e", "page-faults:u", "--", "true"})
    assert.are.equal(1, r.code, r.err)
    assert.matches("^pmcsh stat: [^\n]*none: No such file or directory\n$", r.err)
    r = h.run({"stat", "--control", "fd:99", "-e", "page-faults:u", "--", "true"})
    assert.are.equal(1, r.code, r.err)
    assert.matches("fd 99 is not open", r.err)
    for _, bad in ipairs{"bogus", "fifo:", "fifo:,x", "fd:", "fd:x", "fd:3,"} do
      r = h.run({"stat", "--control", bad, "-e", "page-faults:u", "--", "true"})
      assert.are.equal(2, r.code, bad .. ": " .. r.err)
      assert.matches("give fifo:CTL%[,ACK%]", r.err)
    end
    r = h.run({"stat", "-D", "-2", "-e", "page-faults:u", "--", "true"})
    assert.are.equal(2, r.code, r.err)
    os.execute("rm -rf " .. h.shquote(d))
  end)
end)

describe("pmc.run's env", function()
  local function output_of(extra)
    local path = os.tmpname()
    local o = {events = {"page-faults:u"}, cmd = {"sh", "-c", 'printf "%s|%s" "$PMCSH_X" "$HOME" > "$0"', path}}
    for k, v in pairs(extra or {}) do o[k] = v end
    local r, info = pmc.run(o)
    local out = h.slurp(path)
    os.remove(path)
    return out, r, info
  end

  it("adds to and overrides the command's environment, and changes nothing without it", function()
    if not h.need(can_count()) then return end
    local home = os.getenv("HOME") or ""
    assert.is_nil(os.getenv("PMCSH_X"))
    assert.are.equal("|" .. home, output_of())
    assert.are.equal("1|" .. home, output_of{env = {PMCSH_X = "1"}})
    assert.are.equal("2|/elsewhere", output_of{env = {PMCSH_X = 2, HOME = "/elsewhere"}})
    assert.is_nil(os.getenv("PMCSH_X"))   -- pmcsh's own is untouched
    -- the binding's shape, as stat --regions calls it
    local path = os.tmpname()
    local r = require("pmcsh._run").run({"page-faults:u"}, {"sh", "-c", 'printf %s "$PMCSH_X" > "$0"', path},
      {env = {PMCSH_X = "1"}})
    assert.truthy(r)
    assert.are.equal("1", h.slurp(path))
    os.remove(path)
  end)

  it("raises on a table that is not NAME = value strings", function()
    for _, env in ipairs{{"x"}, {["A=B"] = "1"}, {[""] = "1"}, {A = "a\0b"}, {A = {}}} do
      local ok, e = pcall(pmc.run, {events = {"page-faults:u"}, cmd = {"true"}, env = env})
      assert.is_false(ok)
      assert.matches("env", tostring(e))
    end
  end)
end)
