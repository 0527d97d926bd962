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
