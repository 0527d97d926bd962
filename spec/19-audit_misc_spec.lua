-- The fourth audit's findings outside the files' writer and reader: a
-- resume on another machine, an error on a failed stdout, a heat map of
-- any size, the chase API's options of the wrong kind, a folder named as a
-- script.
local h = require("helpers")
local cjson = require("cjson")
local paths = require("pmcsh.paths")

local function survey_file(path, hdr_patch)
  local r = h.run({"survey", "-e", "task-clock", "-k", "copy,scale", "--n", "20000", "-r", "2", "--out", path})
  assert.are.equal(0, r.code, r.err)
  local lines = h.lines(h.slurp(path))
  local hdr = cjson.decode(lines[1])
  hdr_patch(hdr)
  lines[1] = cjson.encode(hdr)
  return lines
end

describe("a survey resumed", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. h.shquote(dir)) end)

  it("only on the machine that started it (A9)", function()
    local f = dir .. "/s.jsonl"
    local lines = survey_file(f, function(hdr) hdr.fingerprint.host = "elsewhere" end)
    -- the header and one run: a survey stopped half way, measured elsewhere
    h.write(f, lines[1] .. "\n" .. lines[2] .. "\n")
    local before = h.slurp(f)
    local r = h.run({"survey", "--resume", f})
    assert.are.equal(1, r.code)
    assert.matches("it was measured on elsewhere .*resume it there", r.err)
    assert.are.equal(before, h.slurp(f))
  end)
end)

describe("standard output", function()
  it("a failed write is said without a stale errno (A28)", function()
    local p = io.popen(h.shquote(h.exe) .. " latency --from 4K --to 16K --json 2>&1 >/dev/full; echo $?")
    local out = p:read("a")
    p:close()
    assert.matches("error writing standard output: ", out, 1, true)
    assert.matches("No space left on device", out, 1, true)
    assert.matches("\n1\n$", out)
  end)
end)

describe("the survey's heat map", function()
  it("stays a picture a viewer opens, whatever the rows (A31)", function()
    if not h.need(h.have("gnuplot")) then return end
    local dir = h.tmpdir()
    local rows, units, cells = {}, {}, {}
    for i = 1, 700 do
      local key = string.format("event%03d", i)
      rows[i], units[i] = {key = key}, {labels = {key}, keys = {key}, kind = "single"}
      cells[i] = {key = key, value = i, min = i, max = i, kept = 2}
    end
    local hdr = {type = "header", format = "pmcsh-survey/1", kernels = {"copy"}, n = 1000, reps = 2, units = units,
      rows = rows}
    local f = dir .. "/wide.jsonl"
    h.write(f, cjson.encode(hdr) .. "\n" .. cjson.encode({type = "run", kernel = "copy", group = 1, cells = cells}) ..
      '\n{"type":"done"}\n')
    local png = dir .. "/h.png"
    local r = h.run({"survey", "--report", f, "--plot", png})
    assert.are.equal(0, r.code, r.err)
    local head = h.slurp(png):sub(1, 24)
    local height = string.unpack(">I4", head, 21)
    local plot = require("pmcsh.plot")
    local heatmap = require("pmcsh.survey.heatmap")
    -- the first MAX_ROWS rows, 24 px each past 20: not 700 rows' 16 960 px
    assert.are.equal(plot.HEIGHT + (heatmap.MAX_ROWS - 20) * plot.ROW_PX, height)
    os.execute("rm -rf " .. h.shquote(dir))
  end)
end)

describe("the chase API", function()
  it("raises a bad argument at the caller for an option of the wrong kind, never an error inside pmcsh (A37)", function()
    local keys = {latency = {"size", "stride", "k"}, parallelism = {"size", "stride", "max", "rounds", "chains"},
      sweep = {"from", "to", "per_octave", "stride", "k", "each"}, loaded = {"size", "threads", "delays", "bw_size"}}
    local inside = 0
    for fname, ks in pairs(keys) do
      for _, k in ipairs(ks) do
        for _, v in ipairs({"{}", "true", '"x"', "1.5", "-1"}) do
          local code = string.format('local ok, e = pcall(chase.%s, {size = "64K", %s = %s}); ' ..
            'io.write(tostring(ok), "\\t", tostring(e))', fname, k, v)
          local r = h.run({"-e", code})
          assert.are.equal(0, r.code, code .. ": " .. r.err)
          if r.out:find(paths.root .. "/lua/", 1, true) or r.out:find("attempt to", 1, true) then
            inside = inside + 1
            print(code, r.out)
          end
        end
      end
    end
    assert.are.equal(0, inside)
  end)
end)

describe("a folder named as a script", function()
  it("is said as lua says it (A38)", function()
    local dir = h.tmpdir()
    os.execute("mkdir " .. h.shquote(dir .. "/w"))
    local r = h.run({"w"}, {env = "cd " .. h.shquote(dir) .. " &&"})
    assert.are.equal(1, r.code)
    assert.matches("cannot read w: Is a directory", r.err, 1, true)
    os.execute("rm -rf " .. h.shquote(dir))
  end)
end)

describe("compare's fingerprint fields", function()
  it("name a cache level read back from JSON as L1, not L1.0 (A33)", function()
    local fp = cjson.decode('{"host":"a","caches":[{"level":1,"type":"Data","size":49152},{"level":3,"type":"Unified","size":33554432}]}')
    assert.are.equal("L1 Data 48K, L3 Unified 32M", require("pmcsh.compare").flat(fp).caches)
  end)
end)
