-- Regions of the user's program (pmcsh/marker.h, libpmcsh-marker): what
-- physics says a region that first-touches pages counts (one page fault
-- per 4 KiB page, exactly, on each thread, nested or not), the same from a
-- program written for LIKWID's macros, and a program that misuses the API
-- or runs without pmcsh behaving exactly as it does unlinked.
local h = require("helpers")
local cjson = require("cjson")
local paths = require("pmcsh.paths")

local ROOT = paths.root
local FIX = ROOT .. "/spec/fixtures/regions/"
local dir = h.tmpdir()

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  local ok, _, code = p:close()
  return ok, out, code
end

-- the library (make marker: a no-op when built) and the fixtures built against it
assert(sh("make -s -C " .. h.shquote(ROOT) .. " marker"))
local LIB = ROOT .. "/build"
local function build(name, src, flags)
  local out = dir .. "/" .. name
  local ok, msg = sh(string.format("cc -O2 -I%s %s -o %s %s -L%s -Wl,-rpath,%s -lpmcsh-marker -pthread",
    h.shquote(ROOT .. "/include"), flags or "", h.shquote(out), h.shquote(FIX .. src), h.shquote(LIB), h.shquote(LIB)))
  assert(ok, msg)
  return out
end
local TOUCH = build("touch", "touch.c")
local TOUCH_OFF = build("touch-off", "touch.c", "-DPMCSH_NO_MARKERS")
local LIKWID = build("likwid", "likwid.c", "-DLIKWID_PERFMON -I" .. h.shquote(ROOT .. "/include/pmcsh"))
local BAD = build("bad", "bad.c")

-- a command's stdout, stderr and exit status, run by the shell
local function run_cmd(cmd, env)
  local errf = os.tmpname()
  local p = io.popen((env or "") .. " " .. cmd .. " 2>" .. errf)
  local out = p:read("a")
  local _, _, code = p:close()
  local err = h.slurp(errf)
  os.remove(errf)
  return {out = out, err = err, code = code}
end

-- stat --regions -x , : rows keyed "region/thread/event"
local function csv_rows(text)
  local rows = {}
  for _, l in ipairs(h.lines(text)) do
    local f = h.fields(l, ",")
    if #f == 14 and f[1] ~= "" then
      rows[f[1] .. "/" .. f[2] .. "/" .. f[8]] = {calls = tonumber(f[3]), iterations = tonumber(f[4]),
        inclusive = tonumber(f[5]), exclusive = tonumber(f[6]), per_call = tonumber(f[11]),
        per_iteration = tonumber(f[12]), pairs = tonumber(f[13]), thread = f[2]}
    end
  end
  return rows
end

local function threads_of(rows, region)
  local t = {}
  for k, r in pairs(rows) do
    if k:match("^" .. region .. "/%d+/") then t[#t + 1] = r end
  end
  return t
end

describe("stat --regions", function()
  it("counts page-faults:u exactly N per call in a region first-touching N pages, each thread its own", function()
    local N, CALLS, A, B = 64, 5, 24, 16
    local r = h.run({"stat", "--regions", "-e", "page-faults:u", "-x", ",", "--", TOUCH, N, CALLS, 2, A, B})
    assert.are.equal(3, r.code, r.err)   -- the program's own status
    assert.are.equal(string.format("touched %d pages %d times on 2 threads\n", N + A + B, CALLS), r.out)
    local rows = csv_rows(r.err)
    local all = rows["touch/all/page-faults:u"]
    assert.is_truthy(all, r.err)
    -- physics: one first-touch fault per 4 KiB page, exactly
    assert.are.equal(2 * CALLS, all.calls)
    assert.are.equal(2 * CALLS * N, all.inclusive)
    assert.are.equal(2 * CALLS * N, all.exclusive)
    assert.are.equal(N, all.per_call)
    assert.are.equal(1, all.per_iteration)   -- pmcsh_region_iterations(N) divides exactly
    local ts = threads_of(rows, "touch")
    assert.are.equal(2, #ts)
    for _, t in ipairs(ts) do
      assert.are.equal(CALLS, t.calls)
      assert.are.equal(CALLS * N, t.inclusive)
    end
    -- nesting: outer's exclusive is its inclusive less inner's, exactly
    local outer, inner = rows["outer/all/page-faults:u"], rows["inner/all/page-faults:u"]
    assert.are.equal(2 * CALLS * (A + B), outer.inclusive)
    assert.are.equal(2 * CALLS * A, outer.exclusive)
    assert.are.equal(outer.inclusive - inner.inclusive, outer.exclusive)
    assert.are.equal(2 * CALLS * B, inner.inclusive)
    assert.are.equal(2 * CALLS, outer.pairs)   -- one marker pair (inner's) inside each call
    assert.are.equal(0, inner.pairs)
  end)

  it("prints perf stat's table with the pair's measured cost, and -j lines with exact integer counts", function()
    local r = h.run({"stat", "--regions", "-e", "page-faults:u,task-clock", "--", TOUCH, 32, 2, 1, 8, 8})
    assert.are.equal(3, r.code, r.err)
    assert.matches("Region 'touch' of '.-touch 32 2 1 8 8' %(2 calls, 64 iterations, 1 thread%):", r.err)
    assert.matches("\n%s+64%s+64%s+32%.000%s+1%.000%s+page%-faults:u\n", r.err)
    assert.matches("A begin/end pair costs %d+ ns; a region around one counts page%-faults:u 0", r.err)
    assert.matches("seconds time elapsed", r.err)
    r = h.run({"stat", "--regions", "-e", "page-faults:u", "-j", "--", TOUCH, 32, 2, 1, 8, 8})
    local n = 0
    for _, l in ipairs(h.lines(r.err)) do
      local o = cjson.decode(l)
      if o.region ~= cjson.null then n = n + 1 end
      assert.are.equal("string", type(o["counter-value"]))
      if o.region == "touch" then assert.are.equal("64", o["counter-value"]) end
      if o.region == "outer" then assert.are.equal("32", o["counter-value"]); assert.are.equal("16", o["exclusive-value"]) end
    end
    assert.are.equal(3, n)   -- touch, outer, inner: one thread, one event (and the whole program's)
  end)

  it("writes one results file per process with --out that pmcsh compare reads", function()
    local out = dir .. "/res/"
    local r = h.run({"stat", "--regions", "-e", "page-faults:u", "-x", ",", "--out", out, "--", TOUCH, 16, 3, 2, 4, 4})
    assert.are.equal(3, r.code, r.err)
    local names = {}
    for n in io.popen("ls " .. h.shquote(out)):read("a"):gmatch("%S+") do names[#names + 1] = n end
    assert.are.equal(1, #names)
    assert.matches("^regions%-.*%.jsonl$", names[1])
    local recs = {}
    for l in io.lines(out .. names[1]) do recs[#recs + 1] = cjson.decode(l) end
    assert.are.equal("header", recs[1].type)
    assert.are.equal("done", recs[#recs].type)
    local found
    for _, m in ipairs(recs) do
      if m.name == "region touch: page-faults:u per call" then found = m end
    end
    assert.is_truthy(found)
    assert.are.equal(16, found.value)
    assert.are.same({16, 16}, found.samples)   -- each thread's
    local c = h.run({"compare", out .. names[1], out .. names[1]})
    assert.are.equal(0, c.code, c.err)
    assert.matches("region touch: page%-faults:u per call", c.out .. c.err)
  end)

  it("counts a program written for LIKWID's macros, built against pmcsh's shim, as its own", function()
    local r = h.run({"stat", "--regions", "-e", "page-faults:u", "-x", ",", "--", LIKWID, 40, 4, 2})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal("likwid: 40 pages 4 times\n", r.out)
    local rows = csv_rows(r.err)
    assert.are.equal(2 * 4 * 40, rows["touch/all/page-faults:u"].inclusive)
    assert.are.equal(40, rows["touch/all/page-faults:u"].per_call)
  end)

  it("says when the command marks no region", function()
    local r = h.run({"stat", "--regions", "-e", "page-faults:u", "--", "true"})
    assert.are.equal(0, r.code)
    assert.matches("No region of 'true' was counted", r.err)
  end)

  it("refuses what does not go with it, naming it", function()
    local r = h.run({"stat", "--regions", "-a", "--", "true"})
    assert.are.equal(2, r.code)
    assert.matches("%-a does not go with it", r.err)
    r = h.run({"stat", "--regions", "-e", "page-faults"})
    assert.are.equal(2, r.code)
    assert.matches("needs a command", r.err)
    r = h.run({"stat", "--regions", "-e", "no-such-event", "--", "true"})
    assert.are.equal(1, r.code)
    assert.matches("no%-such%-event", r.err)
    assert.is_nil(r.err:find("traceback"))
  end)
end)

describe("the marker library in the user's program", function()
  it("changes nothing without pmcsh: output, status and stderr as the program built without markers", function()
    local on, off = run_cmd(h.shquote(TOUCH) .. " 16 2 2 4 4"), run_cmd(h.shquote(TOUCH_OFF) .. " 16 2 2 4 4")
    assert.are.same(off, on)
    assert.are.equal(3, on.code)
    assert.are.equal("", on.err)
  end)

  -- each misuse: the program's output and status as without pmcsh, and
  -- exactly one line of the library's on stderr, naming it
  local CASES = {
    {"unbegun", "region 'never begun' ended but never begun"},
    {"unbalanced", nil, "inside open at exit at its end"},
    {"control", "region name 'tab\\x09here' is not a name"},
    {"long", "is not a name %(1 to 127 bytes"},
    {"many", "more than 255 region names"},
    {"thread", "ended inside region 'left open'"},
    {"fork", nil},
    {"exec", nil, "did not reach its exit"},
    {"crash", nil, "did not reach its exit"},
  }
  for _, case in ipairs(CASES) do
    local mode, says, note = case[1], case[2], case[3]
    it("takes a bad input (" .. mode .. ") with one line, the program unchanged", function()
      local plain = run_cmd(h.shquote(BAD) .. " " .. mode)
      local r = h.run({"stat", "--regions", "-e", "page-faults:u", "--", BAD, mode})
      assert.are.equal(plain.code, r.code, r.err)
      assert.are.equal(plain.out, r.out)
      local lines = 0
      for _, l in ipairs(h.lines(r.err)) do if l:match("^pmcsh marker") then lines = lines + 1 end end
      assert.are.equal(says and 1 or 0, lines, r.err)
      if says then assert.matches(says, r.err) end
      if note then assert.matches(note, r.err) end
      assert.is_nil(r.err:find("traceback"))
    end)
  end

  it("keeps the counts of the regions a crashed program ended", function()
    local r = h.run({"stat", "--regions", "-e", "page-faults:u", "-x", ",", "--", BAD, "crash"})
    assert.are.equal(134, r.code)
    local rows = csv_rows(r.err)
    assert.are.equal(2, rows["done before/all/page-faults:u"].calls, r.err)
    -- the call open at the crash is not counted; its ended child is in
    -- the region's children, so its exclusive counts are not given
    local inside = rows["crashed inside/all/page-faults:u"]
    assert.are.equal(1, inside.calls, r.err)
    assert.is_nil(inside.exclusive, r.err)
    assert.matches("was inside crashed inside at its end: that call is not counted, nor its exclusive", r.err)
  end)

  it("counts a forked child's regions in a file of its own, the parent's unharmed", function()
    local r = h.run({"stat", "--regions", "-e", "page-faults:u", "-x", ",", "--", BAD, "fork"})
    local rows = csv_rows(r.err)
    assert.are.equal(1, rows["forked/all/page-faults:u"].calls)
    assert.are.equal(1, rows["child/all/page-faults:u"].calls)
  end)

  it("turns itself off with one line on an environment it cannot use, the program unchanged", function()
    local plain = run_cmd(h.shquote(BAD) .. " unbalanced")
    for _, env in ipairs({"PMCSH_MARKER_EVENTS='zz;9,1' PMCSH_MARKER_DIR=" .. h.shquote(dir),
                          "PMCSH_MARKER_EVENTS=0,1,2,0,0,16 PMCSH_MARKER_DIR=/nonexistent/x"}) do
      local r = run_cmd(h.shquote(BAD) .. " unbalanced", env)
      assert.are.equal(plain.code, r.code)
      assert.are.equal(plain.out, r.out)
      assert.are.equal(1, #h.lines(r.err), r.err)
      assert.matches("^pmcsh marker %(pid %d+%): .*regions are not counted\n$", r.err)
    end
  end)
end)
