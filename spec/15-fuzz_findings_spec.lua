-- What make fuzz found (harnesses in spec/fuzz/), each fixed at its cause:
-- the input that crashed or misled pmcsh, and the answer it gives now.
local h = require("helpers")
local paths = require("pmcsh.paths")

describe("a PMU's sysfs files (make fuzz: sysfs_files)", function()
  -- spec/fixtures/resolve.c: the resolver's own C files, built to read a
  -- tree this spec writes: PMU "fuzzed", type 77, format/f, events/e.
  local dir, built
  setup(function()
    dir = h.tmpdir()
    local root = paths.root
    built = os.execute(("cc -O1 -std=gnu11 -D_GNU_SOURCE -DSYSFS_PMUS='\"%s/sysfs\"' -o %s/resolve " ..
      "%s/spec/fixtures/resolve.c %s/core/evname.c %s/core/sysfs.c -lpfm 2>%s/cc.err"):format(
      dir, dir, root, root, root, dir))
  end)
  teardown(function() os.execute("rm -rf " .. h.shquote(dir)) end)

  -- Writes the PMU's files (name -> text; false removes it) and resolves
  -- `name`: status, config, config1, scale, ncpumask, message.
  local function resolve(files, name)
    if not h.need(built, "cannot build spec/fixtures/resolve.c: " .. h.slurp(dir .. "/cc.err")) then return end
    local pmu = dir .. "/sysfs/fuzzed"
    os.execute(("rm -rf %s && mkdir -p %s/format %s/events"):format(pmu, pmu, pmu))
    h.write(pmu .. "/type", "77\n")
    for file, text in pairs(files) do h.write(pmu .. "/" .. file, text .. "\n") end
    local p = assert(io.popen(h.shquote(dir .. "/resolve") .. " " .. h.shquote(name)))
    local line = p:read("l")
    p:close()
    local r, config, config1, _, ncpumask, scale, msg = line:match("^(%S+) (%S+) (%S+) (%S+) (%S+) (%S+) (.*)$")
    return tonumber(r), tonumber(config), tonumber(config1), tonumber(scale), tonumber(ncpumask), msg
  end

  it("place a value into the bits a format names, lowest bits first", function()
    -- 0xfff into config:0-7,32-35: 0xff in bits 0-7, 0xf in bits 32-35
    local r, config = resolve({["format/f"] = "config:0-7,32-35"}, "fuzzed/f=0xfff/")
    if r == nil then return end
    assert.are.same({0, 0xf000000ff}, {r, config})
    local r1, _, config1 = resolve({["format/f"] = "config1:63"}, "fuzzed/f=1/")
    assert.are.same({0, math.mininteger}, {r1, config1})   -- bit 63
  end)

  it("refuse a value wider than its format's bits, as perf does (cut to fit, it named another event)", function()
    local r, config, _, _, _, msg = resolve({["format/f"] = "config:8-15"}, "fuzzed/f=0x1ff/")
    if r == nil then return end
    assert.are.equal(-22, r)
    assert.matches("value 0x1ff of term f does not fit its 8 bits %(PMU fuzzed: config:8%-15%)", msg)
    r, config = resolve({["format/f"] = "config:8-15"}, "fuzzed/f=0xff/")
    assert.are.same({0, 0xff00}, {r, config})
  end)

  it("refuse a format bit below 0 or above 63, which shifted by it (config1:-063: UB)", function()
    for _, fmt in ipairs({"config1:-063", "config:-5-3", "config:0-64", "config:7-0", "config:x", "config:"}) do
      local r, _, _, _, _, msg = resolve({["format/f"] = fmt}, "fuzzed/f=1/")
      if r == nil then return end
      assert.are.equal(-22, r, fmt)
      assert.matches("format f of PMU fuzzed reads '" .. fmt:gsub("%-", "%%-") .. "': bits are N or N%-M, from 0 to 63", msg)
    end
  end)

  it("refuse a cpumask that names no cpu (-1 was cpu -1; 2147483647 overflowed the count)", function()
    local r, _, _, _, n = resolve({cpumask = "0,18"}, "fuzzed/config=1/")
    if r == nil then return end
    assert.are.same({0, 2}, {r, n})
    for _, mask in ipairs({"-1", "0,-1", "2147483647", "1-0", "a"}) do
      local r2, _, _, _, _, msg = resolve({cpumask = mask}, "fuzzed/config=1/")
      assert.are.equal(-22, r2, mask)
      assert.matches("cpumask of PMU fuzzed reads '" .. mask:gsub("%-", "%%-") .. "', not a list of cpus", msg)
    end
  end)

  it("refuse an event scale that is not a positive number (every reading would be it times the count)", function()
    local r, _, _, scale = resolve({["events/e"] = "config=4", ["events/e.scale"] = "6.103515625e-5"}, "fuzzed/e/")
    if r == nil then return end
    assert.are.same({0, 6.103515625e-5}, {r, scale})
    for _, s in ipairs({"nan", "inf", "0", "-1", "1x"}) do
      local r2, _, _, _, _, msg = resolve({["events/e"] = "config=4", ["events/e.scale"] = s}, "fuzzed/e/")
      assert.are.equal(-22, r2, s)
      assert.matches("event e of PMU fuzzed has scale '" .. s:gsub("%-", "%%-") .. "', not a positive number", msg)
    end
  end)
end)

describe("a survey results file (make fuzz: result_lines)", function()
  -- `pmcsh survey --report` of a file: a header with `fields` (JSON text)
  -- and one run of add counting task-clock
  local function report(fields)
    local dir = h.tmpdir()
    local file = dir .. "/s.jsonl"
    h.write(file, '{"type":"header","format":"pmcsh-survey/1",' .. fields .. ',"n":1000,"reps":1,' ..
      '"units":[{"labels":["task-clock"],"keys":["task-clock"],"kind":"single"}],"rows":[{"key":"task-clock"}]}\n' ..
      '{"type":"run","kernel":"add","group":1,"cells":[{"key":"task-clock","value":1.5}]}\n{"type":"done"}\n')
    local r = h.run({"survey", "--report", file})
    os.execute("rm -rf " .. h.shquote(dir))
    return r
  end

  it("naming the chase kernel without its chain is refused by name, not a traceback in the report", function()
    local r = report('"kernels":["add","chase"]')
    assert.are.equal(1, r.code, r.err)
    assert.matches("s%.jsonl:1 %(header%): kernel chase without its chain", r.err)
    assert.not_matches("traceback", r.err)
  end)

  it("a cell without its event name leaves the group's metrics without it, not a traceback", function()
    local r = report('"kernels":["add"],"group":"software"')
    assert.are.equal(0, r.code, r.err)
    assert.matches("task%-clock%s+1%.5", r.out)
  end)
end)
