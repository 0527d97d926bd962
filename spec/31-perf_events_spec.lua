-- What perf names beyond libpfm4, pmcsh names alike: tracepoints
-- (SUBSYS:EVENT through tracefs ids), the tool events user_time and
-- system_time, and the precise modifiers p, pp, ppp and P.  Each checked
-- against its reference: tracefs's id file, a command's known number of
-- system calls, its rusage, perf stat where perf counts here.
local h = require("helpers")
local errors = require("pmcsh.errors")
local pmc = require("pmcsh.pmc")

-- tracefs where perf looks for it, or nil
local function tracefs()
  for _, d in ipairs{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"} do
    local f = io.open(d .. "/events/syscalls/sys_enter_write/id")
    if f then
      local id = f:read("n")
      f:close()
      return d, id
    end
  end
  return nil
end

local function perf_counts(ev)
  return os.execute("perf stat -e " .. ev .. " true >/dev/null 2>&1")
end

-- the -x, rows of a run: {[event] = value} (non-numbers kept as text)
local function csv(out)
  local t = {}
  for _, l in ipairs(h.lines(out)) do
    local f = h.fields(l, ",")
    t[f[3]] = tonumber(f[1]) or f[1]
  end
  return t
end

describe("tracepoints", function()
  it("resolve SUBSYS:EVENT through tracefs's id into PERF_TYPE_TRACEPOINT, with modifiers", function()
    local dir, id = tracefs()
    if not h.need(dir, "no tracefs with syscalls:sys_enter_write here") then return end
    local i = assert(pmc.info("syscalls:sys_enter_write"))
    assert.are.same({2, id, "tracepoint"}, {i.type, i.config, i.pmu})
    local u = assert(pmc.info("syscalls:sys_enter_write:u"))
    assert.are.same({2, id, true, false}, {u.type, u.config, u.exclude_kernel, u.exclude_user})
  end)

  it("count a command's system calls exactly: dd bs=1 count=1000 writes 1000 times", function()
    if not h.need(tracefs(), "no tracefs with syscalls:sys_enter_write here") then return end
    local r = h.run({"stat", "-x,", "-e", "syscalls:sys_enter_write,syscalls:sys_enter_read", "--",
      "dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=1000", "status=none"})
    assert.are.equal(0, r.code, r.err)
    local t = csv(r.err)
    assert.are.equal(1000, t["syscalls:sys_enter_write"])
    -- the loader and libc read a few files before dd's own 1000 reads
    assert.is_true(t["syscalls:sys_enter_read"] >= 1000 and t["syscalls:sys_enter_read"] < 1100,
      tostring(t["syscalls:sys_enter_read"]))
  end)

  it("count what perf stat counts on the same command, within 2", function()
    if not h.need(tracefs(), "no tracefs here") then return end
    if not h.need(perf_counts("sched:sched_switch"), "perf is not installed (or cannot count tracepoints)") then
      return
    end
    local p = io.popen("perf stat -x, -e sched:sched_switch -- sleep 0.1 2>&1")
    local perf = csv(p:read("a"))["sched:sched_switch"]
    p:close()
    local r = h.run({"stat", "-x,", "-e", "sched:sched_switch", "--", "sleep", "0.1"})
    local ours = csv(r.err)["sched:sched_switch"]
    assert.is_number(perf)
    assert.is_number(ours, r.err)
    assert.is_true(math.abs(ours - perf) <= 2, string.format("pmcsh %s, perf %s", ours, perf))
  end)

  it("leave EVENT:UMASK to libpfm4 where no such tracepoint exists", function()
    local i = assert(pmc.info("INST_RETIRED:ANY_P", {pmu = "skl"}))
    assert.are.same({4, 0xc0}, {i.type, i.config & 0xffff})
    local k = assert(pmc.info("skl::INST_RETIRED:ANY_P:k", {pmu = "skl"}))
    assert.are.same({true, false}, {k.exclude_user, k.exclude_kernel})
  end)

  it("are listed under the tracepoint PMU, and found by part of their name", function()
    if not h.need(tracefs(), "no tracefs here") then return end
    local l = pmc.list("sched_switch")
    local found
    for _, e in ipairs(l) do if e.name == "sched:sched_switch" then found = e end end
    assert.are.same({"tracepoint", true}, {found and found.pmu, found and found.opens})
    local r = h.run({"list", "sched_switch"})
    assert.matches("sched:sched_switch", r.out)
  end)

  it("an unknown x:y says so once, with no dangling punctuation", function()
    local _, msg, errno = pmc.info("nosuch:thing")
    assert.are.equal(2, errno)
    assert.matches("^unknown event 'nosuch:thing'; ", msg)
    assert.not_matches("; %(", msg)
    assert.not_matches("; ;", msg)
  end)
end)

describe("perf's tool events", function()
  it("user_time and system_time are the command's rusage in ns, the footer's seconds user and sys", function()
    local r = h.run({"stat", "-e", "user_time,system_time,duration_time", "--", "sh", "-c",
      "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"})
    assert.are.equal(0, r.code, r.err)
    local user = tonumber(r.err:match("(%d+) ns%s+user_time"))
    local sys_ = tonumber(r.err:match("(%d+) ns%s+system_time"))
    local foot_u = tonumber(r.err:match("([%d.]+) seconds user"))
    local foot_s = tonumber(r.err:match("([%d.]+) seconds sys"))
    assert.is_number(user, r.err)
    assert.are.equal(math.floor(foot_u * 1e9 + 0.5), user)
    -- a run without system time reads <not counted>, as perf's does
    if foot_s == 0 then assert.matches("<not counted> ns%s+system_time", r.err)
    else assert.are.equal(math.floor(foot_s * 1e9 + 0.5), sys_) end
  end)

  it("have perf's -x fields: the value, ns, the name, the value again as run time, 100.00", function()
    local r = h.run({"stat", "-x,", "-e", "user_time", "--", "sh", "-c",
      "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"})
    local f = h.fields(h.lines(r.err)[1], ",")
    assert.are.same({"ns", "user_time", f[1], "100.00", "", ""}, {f[2], f[3], f[4], f[5], f[6], f[7]})
    if not h.need(perf_counts("user_time"), "perf is not installed (or has no user_time)") then return end
    local p = io.popen("perf stat -x, -e user_time,system_time -- true 2>&1")
    local shape = {}
    for _, l in ipairs(h.lines(p:read("a"))) do shape[#shape + 1] = #h.fields(l, ",") end
    p:close()
    local o = h.run({"stat", "-x,", "-e", "user_time,system_time", "--", "true"})
    local ours = {}
    for _, l in ipairs(h.lines(o.err)) do ours[#ours + 1] = #h.fields(l, ",") end
    assert.are.same(shape, ours)
  end)

  it("are listed under the tool PMU", function()
    local r = h.run({"list", "_time"})
    for _, n in ipairs{"duration_time", "user_time", "system_time"} do assert.matches(n, r.out) end
  end)
end)

describe("perf's precise modifiers", function()
  it("p, pp, ppp set precise_ip 1 to 3 and exclude the guest, as perf's parser does", function()
    for n, name in ipairs{"task-clock:p", "task-clock:pp", "task-clock:ppp"} do
      local i = assert(pmc.info(name))
      assert.are.same({1, 1, n}, {i.type, i.config, i.precise_ip}, name)
    end
    assert.are.equal("ppp", pmc.parse_name("cycles:ppp").modifiers)
    assert.are.equal("cycles", pmc.parse_name("cycles:ppp").base)
    assert.are.equal(3, assert(pmc.info("cycles:ppp")).precise_ip)
    assert.are.equal(2, assert(pmc.info("page-faults:upp")).precise_ip)
  end)

  it("refuse more than three p, and p with P, as arguments", function()
    for name, why in pairs{["page-faults:pppp"] = "too many p", ["page-faults:pP"] = "both p and P"} do
      local ok, e = pcall(pmc.parse_name, name)
      assert.is_false(ok)
      assert.is_true(errors.is(e, "argument"), name)
      assert.matches(why, e.message, 1, true)
    end
  end)

  it("drop the exclude_guest p implied where the PMU refuses it, and P falls back to what opens, as perf", function()
    if not h.need(pmc.info("msr/tsc/"), "no msr PMU here") then return end
    -- the msr PMU takes precise_ip but refuses exclude_guest, as perf finds
    for _, name in ipairs{"msr/tsc/p", "msr/tsc/P"} do
      local r = h.run({"stat", "-x,", "-e", name, "--", "true"})
      assert.are.equal(0, r.code, r.err)
      assert.is_number(csv(r.err)[name], r.err)
    end
  end)

  it("cycles:ppp counts where the PMU has PEBS, and is not supported where there is no PMU, as perf says",
    function()
    local r = h.run({"stat", "-x,", "-e", "cycles:ppp", "--", "true"})
    assert.are.equal(0, r.code, r.err)
    if pmc.environment().cpu_pmu then
      assert.is_number(csv(r.err)["cycles:ppp"], r.err)
    else
      assert.are.equal("<not supported>", csv(r.err)["cycles:ppp"])
    end
  end)
end)

describe("encodings a user can trust", function()
  it("give perf's table where libpfm4 4.13 encodes another event, with libpfm4's and the source kept", function()
    -- tools/perf/pmu-events/arch/x86/sapphirerapids/pipeline.json
    for _, c in ipairs{{"UOPS_RETIRED:MS", 0x4c2, 0x8, 0x8c2}, {"INT_MISC:UNKNOWN_BRANCH_CYCLES", 0x40ad, 0x7, 0x7ad}} do
      local i = assert(pmc.info(c[1], {pmu = "spr"}))
      assert.are.same({4, c[2], c[3]}, {i.type, i.config, i.config1}, c[1])
      assert.are.same({c[4], 0}, {i.corrected.config, i.corrected.config1}, c[1])
      assert.matches("sapphirerapids", i.corrected.source)
    end
  end)

  it("recognise the defect by its encoding, keeping the attributes' bits", function()
    local i = assert(pmc.info("spr::UOPS_RETIRED:MS:c=1", {pmu = "spr"}))
    assert.are.same({0x10004c2, 0x8}, {i.config, i.config1})
    local ok = assert(pmc.info("UOPS_RETIRED:SLOTS", {pmu = "spr"}))
    assert.are.same({0x2c2, 0, nil}, {ok.config, ok.config1, ok.corrected})
  end)

  it("encode perf's generic names under another model as on this one", function()
    for _, name in ipairs{"instructions", "cycles", "branch-misses", "ref-cycles", "task-clock", "page-faults",
                          "cs", "L1-dcache-load-misses", "dTLB-loads", "dummy"} do
      local here = assert(pmc.info(name))
      for _, model in ipairs{"icl", "spr", "amd64_fam19h_zen4"} do
        local there, msg = pmc.info(name, {pmu = model})
        assert.is_table(there, msg)
        assert.are.same({here.type, here.config}, {there.type, there.config}, name .. " on " .. model)
      end
    end
  end)
end)
