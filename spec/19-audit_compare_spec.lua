-- The fourth audit's reader findings: results files come from other nodes
-- and are hostile.  Each file below (spec/fixtures/hostile/, or written
-- here) is refused with a message naming it and its line, exit 1, no
-- traceback; or read, where it is good, without trusting what it says.
local h = require("helpers")
local cjson = require("cjson")

local HOSTILE = "spec/fixtures/hostile/"   -- specs run in the tree

local function clean(r)
  assert.is_nil(r.err:find("traceback", 1, true), r.err)
  assert.is_nil(r.err:find("\27", 1, true), r.err)
end

-- runs args, expecting a refusal with status `code` whose message matches
local function refused(args, pattern, code)
  local r = h.run(args)
  assert.are.equal(code or 1, r.code, r.err)
  assert.matches(pattern, r.err)
  clean(r)
  return r
end

describe("a survey file", function()
  it("holds one survey: a second header is refused, naming its line", function()
    -- two nodes' files concatenated were read as one host, the last header's
    for _, mode in ipairs({{"survey", "--report"}, {"compare"}}) do
      local a = {table.unpack(mode)}
      a[#a + 1] = HOSTILE .. "survey-concatenated.jsonl"
      if mode[1] == "compare" then a[#a + 1] = HOSTILE .. "survey-n1.jsonl"; a[#a + 1] = HOSTILE .. "survey-n1.jsonl" end
      refused(a, "survey%-concatenated%.jsonl:5: a second survey header %(the first is line 1%)")
    end
    refused({"survey", "--report", HOSTILE .. "survey-second-header.jsonl"},
      "survey%-second%-header%.jsonl:4: a second survey header")
  end)

  it("refuses a header without kernels, a record after done, runs at another n", function()
    refused({"survey", "--report", HOSTILE .. "survey-no-kernels.jsonl"}, "no%-kernels%.jsonl:1 %(header%)%.kernels: an empty list")
    refused({"survey", "--report", HOSTILE .. "survey-after-done.jsonl"},
      "after%-done%.jsonl:4: a run record after the survey's end %(\"done\", line 3%)")
    -- the table showed the header's n 1024 for windows of 4096
    refused({"survey", "--report", HOSTILE .. "survey-other-n.jsonl"},
      "other%-n%.jsonl:3 %(run%): copy windows of 4096 iterations where the header's n is 1024")
    refused({"survey", "--resume", HOSTILE .. "survey-other-n.jsonl"}, "other%-n%.jsonl:3 %(run%)")
    local r = h.run({"survey", "--report", HOSTILE .. "survey-n1.jsonl"})   -- the same file, untampered
    assert.are.equal(0, r.code, r.err)
    assert.matches("\na +1%.5000", r.out)
  end)

  it("takes finite numbers only, integers where an integer is expected", function()
    refused({"survey", "--report", HOSTILE .. "survey-nan.jsonl"}, "survey%-nan%.jsonl:3: NaN, Infinity or a hex number")
    refused({"survey", "--report", HOSTILE .. "survey-1e999.jsonl"},
      "1e999%.jsonl:3: cells%[1%]%.value: a number past a double's range")
    refused({"survey", "--report", HOSTILE .. "survey-fraction.jsonl"},
      "fraction%.jsonl:3 %(run%)%.work%[2%]: expected integer, got 1024%.5")
  end)
end)

describe("CSV of files from other nodes", function()
  it("makes every CSV text field safe for a spreadsheet, numbers left numbers", function()
    -- OWASP: a field starting = + - @ tab or CR is prefixed with ' and quoted
    local function fields(line)   -- the CSV fields of a line, unquoted
      local out, i = {}, 1
      while i <= #line + 1 do
        if line:sub(i, i) == '"' then
          local j, v = i + 1, {}
          while true do
            local c = line:sub(j, j)
            if c == '"' and line:sub(j + 1, j + 1) == '"' then v[#v + 1] = '"'; j = j + 2
            elseif c == '"' then break
            else v[#v + 1] = c; j = j + 1 end
          end
          out[#out + 1], i = table.concat(v), j + 2
        else
          local j = line:find(",", i, true) or #line + 1
          out[#out + 1], i = line:sub(i, j - 1), j + 1
        end
      end
      return out
    end
    local outputs = {
      h.run({"compare", "--csv", HOSTILE .. "health-formula.jsonl"}),
      h.run({"compare", "--csv", HOSTILE .. "survey-tidy-formula.jsonl"}),
      h.run({"survey", "--report", HOSTILE .. "survey-formula.jsonl", "--csv"}),
    }
    local seen = 0
    for _, r in ipairs(outputs) do
      assert.are.equal(0, r.code, r.err)
      local lines = h.lines(r.out)
      assert.is_true(#lines >= 3, r.out)
      for i = 2, #lines do
        for _, f in ipairs(fields(lines[i])) do
          if not tonumber(f) then
            assert.is_nil(f:find("^[=+%-@\t\r]"), lines[i])
            if f:find("^'") then seen = seen + 1 end
          end
        end
      end
      assert.is_nil(r.out:find("[\t\r]"))
    end
    assert.is_true(seen >= 10, seen .. " fields made safe")
    -- numbers stay numbers, a negative one too
    assert.matches("\n\"'\\x09n3\",health: @SUM%(A1:A9%),\"'%+cmd|' /C calc'!A0\",50,99%.5,[%d.]+,log,%-46%.4",
      outputs[1].out)
  end)
end)

-- A health results file of `host` whose triad is `mbps`, written by the spec.
local function health(path, host, mbps)
  return h.write(path, cjson.encode({type = "header", recipe = "health", format = "pmcsh-health/1",
    fingerprint = {host = host, thp = "madvise"}}) .. "\n" .. cjson.encode({type = "metric", name = "triad MB/s",
    value = mbps, unit = "MB/s", better = "higher"}) .. "\n")
end

describe("pmcsh compare of files from other nodes", function()
  local dir = h.tmpdir()
  teardown(function() os.execute("rm -rf " .. h.shquote(dir)) end)
  local fleet = dir .. "/fleet"
  os.execute("mkdir " .. h.shquote(fleet))
  for i, v in ipairs({100, 101, 99, 98}) do health(fleet .. "/n" .. i .. ".jsonl", "n" .. i, v) end

  it("reads a survey's header only at the top of its own file", function()
    local mixed = h.write(dir .. "/mixed.jsonl", h.slurp(fleet .. "/n1.jsonl") .. h.slurp(HOSTILE .. "survey-n1.jsonl"))
    refused({"compare", mixed, fleet}, "mixed%.jsonl:3: a survey's header inside another file")
    -- JSON lines with several fingerprints are several sets: four hosts here
    local r = h.run({"compare", HOSTILE .. "health-escape.jsonl"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("^pmcsh compare: 4 hosts", r.out)
  end)

  it("names a host that two files claim, in the text, in --json and (on stderr) with --csv", function()
    -- n3 at 1000 and at 1e9 MB/s was merged silently (the median, 5e8: "FLAGGED (better)")
    local d = dir .. "/dup"
    os.execute("cp -R " .. h.shquote(fleet) .. " " .. h.shquote(d))
    health(d .. "/n3.jsonl", "n3", 1000)
    health(d .. "/n3b.jsonl", "n3", 1e9)
    local r = h.run({"compare", d})
    assert.are.equal(0, r.code, r.err)
    assert.matches("\nhost n3 is claimed by 2 sets, their values merged %(the median%): [^\n]*/dup/n3%.jsonl:1, " ..
      "[^\n]*/dup/n3b%.jsonl:1\n", r.out)
    local j = cjson.decode(h.run({"compare", "--json", d}).out)
    assert.are.equal(1, #j.duplicates)
    assert.are.equal("n3", j.duplicates[1].host)
    assert.matches("/dup/n3%.jsonl$", j.duplicates[1].claims[1].file)
    assert.matches("/dup/n3b%.jsonl$", j.duplicates[1].claims[2].file)
    assert.matches("host n3 is claimed by 2 sets", h.run({"compare", "--csv", d}).err)
    assert.not_matches("claimed", h.run({"compare", fleet}).out)   -- one set a host: nothing said
  end)

  it("writes no byte of a file to the terminal that a terminal obeys", function()
    local base = dir .. "/escape-base.json"
    local r = h.run({"compare", "--rows", "0", "--baseline", base, HOSTILE .. "health-escape.jsonl"})
    assert.are.equal(0, r.code, r.err)
    for _, c in ipairs({"\27", "\7"}) do assert.is_nil(r.out:find(c, 1, true), r.out) end
    -- the host list, the flagged list, the fingerprint's difference and the baseline's left out
    assert.matches("^pmcsh compare: 4 hosts %(e1, e2, e3, n\\x1b%[2J\\x1b%]0;owned\\x07x%)", r.out)
    assert.matches("\nflagged: n\\x1b", r.out)
    assert.matches("\n  thp +\\x1b%[2J", r.out)
    assert.matches("%(left out: n\\x1b%[2J\\x1b%]0;owned\\x07x%)\n", r.out)
  end)

  it("leaves out a bad file of a folder, saying which and why; a file named is still an error", function()
    local d = dir .. "/torn"
    os.execute("cp -R " .. h.shquote(fleet) .. " " .. h.shquote(d))
    for _, f in ipairs({"empty.jsonl", "health-torn-middle.jsonl", "health-torn-last.jsonl", "health-nan.jsonl"}) do
      os.execute("cp " .. HOSTILE .. f .. " " .. h.shquote(d))
    end
    local r = h.run({"compare", d})
    assert.are.equal(0, r.code, r.err)
    -- the torn last line (a kill mid-write) skipped: t1 is a host
    assert.matches("^pmcsh compare: 5 hosts %(t1, n1, n2, n3, n4%) in 5 files", r.out)
    local err = h.lines(r.err)
    assert.are.equal(3, #err, r.err)
    assert.matches("^pmcsh compare: left out .*/empty%.jsonl: empty", err[1])
    assert.matches("^pmcsh compare: left out .*/health%-nan%.jsonl:2: NaN", err[2])
    assert.matches("^pmcsh compare: left out .*/health%-torn%-middle%.jsonl:2: not a JSON object", err[3])
    refused({"compare", HOSTILE .. "health-torn-middle.jsonl", fleet}, "torn%-middle%.jsonl:2: not a JSON object")
    refused({"compare", HOSTILE .. "empty.jsonl", fleet}, "empty%.jsonl: empty: no results in it")
    r = h.run({"compare", HOSTILE .. "health-torn-last.jsonl", fleet})
    assert.are.equal(0, r.code, r.err)
  end)

  it("refuses what its messages and statistics cannot hold, naming file:line, never a traceback", function()
    -- a metric record's context holds scalars, its samples numbers; a fingerprint's caches are caches
    refused({"compare", HOSTILE .. "metric-context-list.jsonl", fleet},
      "context%-list%.jsonl:2 %(metric%)%.context%.threads: expected scalar, got a list")
    refused({"compare", HOSTILE .. "metric-samples-string.jsonl", fleet},
      "samples%-string%.jsonl:2 %(metric%)%.samples%[2%]: expected number, got string")
    refused({"compare", HOSTILE .. "health-caches.jsonl", fleet}, "caches%.jsonl:1 %(fingerprint%)%.caches%[1%]: expected an object")
    -- NaN, Infinity and 1e999 are no numbers
    refused({"compare", HOSTILE .. "health-nan.jsonl", fleet}, "nan%.jsonl:2: NaN, Infinity or a hex number")
    refused({"compare", HOSTILE .. "health-1e999.jsonl", fleet}, "1e999%.jsonl:2: value: a number past a double's range")
    -- +-1.7e308: "+inf%" and "[-inf, -nan]" before
    refused({"compare", HOSTILE .. "health-extreme.jsonl", fleet}, "extreme%.jsonl:2: triad MB/s: %-1%.7e%+308 past 1e%+100")
    refused({"compare", HOSTILE .. "health-extreme.jsonl", fleet .. "/n1.jsonl"}, "extreme%.jsonl:2")
    -- an infinite z (a MAD of 0) is null in --json
    local r = h.run({"compare", "--json", HOSTILE .. "survey-tidy-formula.jsonl"})
    assert.are.equal(0, r.code, r.err)
    local j = cjson.decode(r.out)
    assert.are.equal(cjson.null, j.rows[1].z)
    assert.is_true(j.rows[1].flagged)
  end)

  it("takes the median and Welch's interval of finite extremes without overflowing", function()
    local metrics = require("pmcsh.metrics")
    assert.are.equal(0, metrics.median({-1.7e308, 1.7e308}))
    assert.are.equal(1.7e308, metrics.median({1.7e308, 1.7e308}))
    assert.are.equal(1.35e308, metrics.stats({1.7e308, 1e308}).median)
    local w = metrics.welch({1e100, 2e100, 3e100}, {4e100, 5e100, 6e100})
    assert.near(4, w.df, 1e-9)                  -- as for {1, 2, 3}, {4, 5, 6}: the df is scale-free
    assert.near(3e100, w.diff, 1e88)
    assert.is_true(w.lo > 0 and w.hi < 1e101)
  end)

  it("prints a host or metric name of any length (the fuzzer's find: %-159s)", function()
    local d = dir .. "/long"
    os.execute("cp -R " .. h.shquote(fleet) .. " " .. h.shquote(d))
    local long = ("n"):rep(150)
    health(d .. "/long.jsonl", long, 50)
    local r = h.run({"compare", d})
    assert.are.equal(0, r.code, r.err)
    assert.matches("\n" .. long .. "  health: triad MB/s +50 ", r.out)
    local m = ("m"):rep(120)   -- and in an A/B
    local a = h.write(dir .. "/a.jsonl", (h.slurp(d .. "/long.jsonl"):gsub("triad MB\\/s", m)))   -- cjson writes \/
    r = h.run({"compare", a, a})
    assert.are.equal(0, r.code, r.err)
    assert.matches("\nhealth: " .. m .. " +50 +50 ", r.out)
  end)

  it("writes no baseline part when the baseline cannot be written", function()
    local d = dir .. "/out"
    os.execute("mkdir -p " .. h.shquote(d .. "/b.json"))
    local r = h.run({"compare", fleet, "--baseline", d .. "/b.json"})
    assert.are.equal(1, r.code)
    assert.matches("cannot write the baseline", r.err)
    assert.are.equal("b.json", h.run({"-e", "for _, n in ipairs(require('pmcsh.sys').dir(" ..
      string.format("%q", d) .. ")) do io.write(n, ' ') end"}).out:gsub("%s+$", ""))
  end)
end)

describe("pmcsh health --baseline", function()
  it("refuses a baseline whose fields are not what health reads, before measuring (exit 2)", function()
    local cases = {
      {"band-abc", "band%-abc%.json %(baseline%)%.band: expected number, got string"},
      {"band-negative", "%(baseline%): band %-0%.5: a fraction of the median, 0 or more"},
      {"z-zero", "%(baseline%): z 0: a positive number expected"},
      {"high-1e999", "%(baseline%): metrics%[\"health: triad MB/s, socket 0\"%]%.high: a number past a double's range"},
      {"median-nan", "%(baseline%): NaN, Infinity or a hex number"},
      {"low-extreme", "%.low %-1%.7e%+308: past 1e%+100"},
      {"low-above-high", "%.low 90: above its high 50"},
      {"low-string", "%.low: expected number, got string"},
      {"metrics-list", "%(baseline%)%.metrics: expected an object, got a list"},
    }
    for _, c in ipairs(cases) do
      local r = refused({"health", "--n", "1M", "--chain", "4M", "--baseline", HOSTILE .. "baseline-" .. c[1] .. ".json"},
        c[2], 2)
      assert.are.equal("", r.out)
    end
  end)
end)
