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
