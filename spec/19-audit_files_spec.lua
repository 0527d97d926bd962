-- The fourth audit's writer findings: in a results folder a group shares
-- (writable by others, not sticky), another user's link or file never makes
-- pmcsh write where the user did not ask, a replacement is whole or absent,
-- and a file's trouble is found before measuring.  The other user is
-- nobody (root drops to it with setpriv).
local h = require("helpers")

local AS_OTHER = "setpriv --reuid=65534 --regid=65534 --clear-groups "

local function exists(path) return os.execute("test -e " .. h.shquote(path) .. " -o -L " .. h.shquote(path)) == true end
local function is_link(path) return os.execute("test -L " .. h.shquote(path)) == true end
local function sh(cmd) assert(os.execute(cmd), cmd) end

-- A health file of host `host` whose triad is `mbps`.
local function health_file(path, host, mbps)
  h.write(path, table.concat({
    string.format('{"type":"header","recipe":"health","format":"pmcsh-health/1","fingerprint":{"host":"%s"},' ..
      '"n":1048576,"reps":3}', host),
    string.format('{"type":"metric","name":"triad MB/s, socket 0","value":%g,"unit":"MB/s","better":"higher",' ..
      '"samples":[%g,%g,%g]}', mbps, mbps * 0.99, mbps, mbps * 0.98),
    '{"type":"verdict","healthy":true,"failed":[],"seconds":1}', '{"type":"done"}', ""}, "\n"))
end

describe("files written in a folder another user can write", function()
  local dir, victim, shared
  before_each(function()
    dir = h.tmpdir()
    victim = dir .. "/private/victim"          -- where the other user would like root to write
    shared = dir .. "/shared"
    sh("mkdir -p " .. h.shquote(dir .. "/private") .. " " .. h.shquote(shared))
    sh("chmod 755 " .. h.shquote(dir) .. " && chmod 0777 " .. h.shquote(shared))   -- group-writable, not sticky
  end)
  after_each(function() os.execute("rm -rf " .. h.shquote(dir)) end)
  local function other(cmd)
    return h.need(h.is_root() and h.have("setpriv"), "needs root (to act as another user) and setpriv") and
      assert(os.execute("cd / && " .. AS_OTHER .. cmd), cmd)
  end

  it("survey --out DIR/ and --out FILE create nothing through a link another user planted", function()
    if not other("ln -s " .. h.shquote(victim) .. " " .. h.shquote(shared .. "/survey-nx-7-0.jsonl")) then return end
    other("ln -s " .. h.shquote(victim) .. " " .. h.shquote(shared .. "/x.jsonl"))
    for _, out in ipairs({shared .. "/", shared .. "/x.jsonl"}) do
      local r = h.run({"survey", "-e", "task-clock", "--n", "20000", "-r", "2", "-k", "copy", "--out", out},
        {env = "SLURMD_NODENAME=nx SLURM_JOB_ID=7 SLURM_PROCID=0"})
      assert.are.equal(1, r.code)
      assert.matches(".jsonl is a link of another user's: pmcsh follows none", r.err, 1, true)
      assert.is_false(exists(victim))
      assert.are.equal("", r.out)
    end
    assert.is_true(is_link(shared .. "/x.jsonl"))
  end)

  it("health --out DIR/ refuses another user's link or file before measuring, exit 2", function()
    local env = {env = "SLURMD_NODENAME=nx SLURM_JOB_ID=7 SLURM_PROCID=0"}
    local name = shared .. "/health-nx-7-0.jsonl"
    if not other("ln -s " .. h.shquote(victim) .. " " .. h.shquote(name)) then return end
    local r = h.run({"health", "-v", "--measure-only", "--n", "4096", "--reps", "2", "--chain", "64K", "--mlp-max", "2",
      "--out", shared .. "/"}, env)
    assert.are.equal(2, r.code)
    assert.matches("a link of another user's", r.err, 1, true)
    assert.are.equal("", r.out)   -- -v prints the measurements: none were made
    assert.is_false(exists(victim))
    -- an empty file of the other user's, writable by all, is not adopted
    os.remove(name)
    other("sh -c " .. h.shquote("umask 0 && : > " .. h.shquote(name)))
    r = h.run({"health", "-v", "--measure-only", "--n", "4096", "--reps", "2", "--chain", "64K", "--mlp-max", "2",
      "--out", shared .. "/"}, env)
    assert.are.equal(2, r.code)
    assert.matches("a file of another user's", r.err, 1, true)
    assert.are.equal("", r.out)
  end)

  it("stat -o follows no link of another user's; its own file is emptied as perf does", function()
    if not other("ln -s " .. h.shquote(victim) .. " " .. h.shquote(shared .. "/o.txt")) then return end
    local r = h.run({"stat", "-o", shared .. "/o.txt", "-e", "task-clock", "true"})
    assert.are_not.equal(0, r.code)
    assert.is_false(exists(victim))
    local mine = dir .. "/private/o.txt"
    h.write(mine, string.rep("old line\n", 100))
    r = h.run({"stat", "-o", mine, "-e", "task-clock", "true"})
    assert.are.equal(0, r.code, r.err)
    local text = h.slurp(mine)
    assert.not_matches("old line", text)
    assert.matches("task%-clock", text)
  end)

  it("truncates and adopts no file with another name (a hard link to a file elsewhere)", function()
    -- where fs.protected_hardlinks is 0 another user may link a file of root's into the folder
    h.write(victim, "precious\n")
    sh("ln " .. h.shquote(victim) .. " " .. h.shquote(shared .. "/o.txt"))
    local r = h.run({"stat", "-o", shared .. "/o.txt", "-e", "task-clock", "true"})
    assert.are.equal(1, r.code)
    assert.matches("a file with other names", r.err, 1, true)
    assert.are.equal("precious\n", h.slurp(victim))
    os.execute("truncate -s 0 " .. h.shquote(victim))
    sh("ln " .. h.shquote(victim) .. " " .. h.shquote(shared .. "/s.jsonl"))
    r = h.run({"survey", "-e", "task-clock", "--n", "20000", "-r", "2", "-k", "copy", "--out", shared .. "/s.jsonl"})
    assert.are.equal(1, r.code)
    assert.are.equal("", h.slurp(victim))
  end)

  it("compare --baseline writes through no planted part name or link, and replaces the file whole", function()
    local F = dir .. "/F"
    sh("mkdir " .. h.shquote(F))
    for i, mbps in ipairs({20000, 20100, 19900, 20050}) do health_file(F .. "/h" .. i .. ".jsonl", "n" .. i, mbps) end
    h.write(victim, "precious\n")
    local base = shared .. "/fleet.json"
    if not other("ln -s " .. h.shquote(victim) .. " " .. h.shquote(base .. ".part")) then return end
    local r = h.run({"compare", F, "--baseline", base})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal("precious\n", h.slurp(victim))
    assert.is_false(is_link(base))
    assert.are.equal("pmcsh-baseline/1", require("cjson").decode(h.slurp(base)).format)
    -- a link at the baseline's own name is replaced, not written through
    os.remove(base)
    other("ln -s " .. h.shquote(victim) .. " " .. h.shquote(base))
    r = h.run({"compare", F, "--baseline", base})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal("precious\n", h.slurp(victim))
    assert.is_false(is_link(base))
    -- nothing else is left in the folder
    local p = io.popen("ls -A " .. h.shquote(shared))
    local names = p:read("a"); p:close()
    assert.are.equal("fleet.json fleet.json.part", (names:gsub("\n", " "):gsub(" $", "")))
  end)

  it("a plot writes through no link and leaves no part file", function()
    if not h.need(h.have("gnuplot")) then return end
    local s = dir .. "/s.jsonl"
    local r = h.run({"survey", "-e", "task-clock", "--n", "20000", "-r", "2", "-k", "copy", "--out", s})
    assert.are.equal(0, r.code, r.err)
    h.write(victim, "precious\n")
    if not other("ln -s " .. h.shquote(victim) .. " " .. h.shquote(shared .. "/heat.png")) then return end
    r = h.run({"survey", "--report", s, "--plot", shared .. "/heat.png"})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal("precious\n", h.slurp(victim))
    assert.is_false(is_link(shared .. "/heat.png"))
    assert.are.equal("\137PNG", h.slurp(shared .. "/heat.png"):sub(1, 4))
    local p = io.popen("ls -A " .. h.shquote(shared))
    local names = p:read("a"); p:close()
    assert.are.equal("heat.png\n", names)
  end)
end)

describe("results folders", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. h.shquote(dir)) end)

  it("--out makes the missing folders above DIR/ and takes %h %j %t in them", function()
    local r = h.run({"survey", "-e", "task-clock", "--n", "20000", "-r", "2", "-k", "copy",
      "--out", dir .. "/a/%j-%t/b/"}, {env = "SLURM_JOB_ID=77 SLURM_PROCID=3 SLURMD_NODENAME=nx"})
    assert.are.equal(0, r.code, r.err)
    assert.is_true(exists(dir .. "/a/77-3/b/survey-nx-77-3.jsonl"))
  end)

  it("compare --baseline refuses to write over an input or into a folder of results", function()
    local F = dir .. "/F"
    os.execute("mkdir " .. h.shquote(F))
    for i, mbps in ipairs({20000, 20100, 19900}) do health_file(F .. "/h" .. i .. ".jsonl", "n" .. i, mbps) end
    local before = h.slurp(F .. "/h1.jsonl")
    local r = h.run({"compare", F, "--baseline", F .. "/h1.jsonl"})
    assert.are.equal(2, r.code)
    assert.matches("outside the results", r.err, 1, true)
    assert.are.equal(before, h.slurp(F .. "/h1.jsonl"))
    r = h.run({"compare", F, "--baseline", F .. "/fleet.json"})
    assert.are.equal(2, r.code)
    assert.is_false(exists(F .. "/fleet.json"))
    r = h.run({"compare", F .. "/h1.jsonl", F .. "/h2.jsonl", F .. "/h3.jsonl", "--baseline", F .. "/h2.jsonl"})
    assert.are.equal(2, r.code)
  end)
end)

describe("a survey's records", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. h.shquote(dir)) end)

  it("are all read back: a long run fits the reader's line, a longer one is refused before measuring", function()
    local s = dir .. "/big.jsonl"
    local r = h.run({"survey", "-e", "task-clock,page-faults,context-switches", "-k", "copy", "--n", "4096",
      "-r", "20000", "--no-baseline", "--out", s})
    assert.are.equal(0, r.code, r.err)
    local f = assert(io.open(s))
    local longest = 0
    for l in f:lines() do longest = math.max(longest, #l) end
    f:close()
    assert.is_true(longest > 1 << 20, "the run's line is over the old 1 MiB cap: " .. longest)
    for _, args in ipairs({{"survey", "--report", s}, {"compare", s, s}}) do
      r = h.run(args)
      assert.are.equal(0, r.code, table.concat(args, " ") .. ": " .. r.err)
    end
    r = h.run({"survey", "-e", "task-clock,page-faults,context-switches", "-k", "copy", "--n", "4096",
      "-r", "1000000", "--no-baseline", "--out", dir .. "/huge.jsonl"})
    assert.are.equal(2, r.code)
    assert.matches("at most %-%-reps %d+", r.err)
    assert.is_false(exists(dir .. "/huge.jsonl"))
  end)
end)

describe("the reading metatable", function()
  it("answers nothing when its __index is called by hand on another value", function()
    local r = h.run({"-e", 'local mt = debug.getmetatable(pmc.group{"task-clock"}:read()); ' ..
      'print(mt.__index(pmc.group{"task-clock"}, "x") == nil, mt.__index(5, "x") == nil, mt.__index({}, 1) == nil)'})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal("true\ttrue\ttrue\n", r.out)
  end)
end)

describe("a filesystem that takes no locks", function()
  it("is written with one warning, after measuring as before (A12)", function()
    if not h.need(h.have("cc")) then return end
    local dir = h.tmpdir()
    h.write(dir .. "/nolock.c", "#include <errno.h>\nint flock(int fd, int op) { (void)fd; (void)op; errno = ENOSYS; return -1; }\n")
    assert(os.execute(string.format("cc -shared -fPIC -o %s/nolock.so %s/nolock.c", dir, dir)))
    local r = h.run({"survey", "-e", "task-clock", "--n", "20000", "-r", "2", "-k", "copy", "--out", dir .. "/s.jsonl"},
      {env = "LD_PRELOAD=" .. h.shquote(dir .. "/nolock.so")})
    assert.are.equal(0, r.code, r.err)
    local _, warnings = r.err:gsub("takes no locks", "")
    assert.are.equal(1, warnings)
    local rep = h.run({"survey", "--report", dir .. "/s.jsonl"})
    assert.are.equal(0, rep.code, rep.err)
    assert.matches("task%-clock", rep.out)
    os.execute("rm -rf " .. h.shquote(dir))
  end)
end)

describe("a hostile group member's second look", function()
  local dir, private, shared
  before_each(function()
    dir = h.tmpdir()
    private, shared = dir .. "/private", dir .. "/shared"
    sh("mkdir -p " .. h.shquote(private) .. " " .. h.shquote(shared))
    sh("chmod 755 " .. h.shquote(dir) .. " && chmod 0777 " .. h.shquote(shared))
  end)
  after_each(function() os.execute("rm -rf " .. h.shquote(dir)) end)
  local function other(cmd)
    return h.need(h.is_root() and h.have("setpriv"), "needs root (to act as another user) and setpriv") and
      assert(os.execute("cd / && " .. AS_OTHER .. cmd), cmd)
  end
  local function ls(d)
    local p = io.popen("ls -A " .. h.shquote(d))
    local names = p:read("a"); p:close()
    return names
  end

  it("follows no link of another user's in a folder of the path: --out DIR/, %h, --baseline, --plot (F1)", function()
    if not other("ln -s " .. h.shquote(private) .. " " .. h.shquote(shared .. "/results")) then return end
    other("ln -s " .. h.shquote(private) .. " " .. h.shquote(shared .. "/nx"))
    local env = {env = "SLURMD_NODENAME=nx SLURM_JOB_ID=7 SLURM_PROCID=0"}
    for _, out in ipairs({shared .. "/results/", shared .. "/%h/x.jsonl", shared .. "/results/sub/"}) do
      local r = h.run({"survey", "-e", "task-clock", "--n", "20000", "-r", "2", "-k", "copy", "--out", out}, env)
      assert.are_not.equal(0, r.code, out)
      assert.matches("is a link of another user's", r.err, 1, true)
    end
    local F = dir .. "/F"
    sh("mkdir " .. h.shquote(F))
    for i, mbps in ipairs({20000, 20100, 19900}) do health_file(F .. "/h" .. i .. ".jsonl", "n" .. i, mbps) end
    local r = h.run({"compare", F, "--baseline", shared .. "/results/fleet.json"})
    assert.are_not.equal(0, r.code)
    assert.are.equal("", ls(private))
  end)

  it("a results file it made and wrote nothing to is removed only where it is still that file (F2)", function()
    sh("mkdir " .. h.shquote(shared .. "/d") .. " && chmod 0777 " .. h.shquote(shared .. "/d"))
    h.write(private .. "/x.jsonl", "precious\n")
    local results = require("pmcsh.results")
    local w = assert(results.create(shared .. "/d/x.jsonl"))
    -- the folder moved aside, a link of the other user's to a folder of root's in its place
    if not other("sh -c " .. h.shquote("mv " .. shared .. "/d " .. shared .. "/d.old && ln -s " .. private .. " " ..
      shared .. "/d")) then w:close(); return end
    assert(w:close())
    assert.are.equal("precious\n", h.slurp(private .. "/x.jsonl"))
  end)

  it("writes to no FIFO of another user's: stat -o refuses at once, never blocks (F7)", function()
    if not other("mkfifo " .. h.shquote(shared .. "/o.txt")) then return end
    local r = h.run({"stat", "-o", shared .. "/o.txt", "-e", "task-clock", "--", "true"}, {env = "timeout 20"})
    assert.are.equal(1, r.code)
    assert.matches("a FIFO or device of another user's", r.err, 1, true)
  end)

  it("runs no flags of a resumed file's header as a command (F5)", function()
    local s = shared .. "/s.jsonl"
    h.write(dir .. "/k.c", "#include <stddef.h>\ndouble f(double *restrict a, double *restrict b, double *restrict c, " ..
      "double s, size_t n) { for (size_t j = 0; j < n; j++) c[j] = a[j]; return 0; }\n")
    local r = h.run({"survey", "--loop", dir .. "/k.c:f", "-e", "task-clock", "--n", "20000", "-r", "2", "--out", s},
      {env = "XDG_CACHE_HOME=" .. h.shquote(dir .. "/cache")})
    assert.are.equal(0, r.code, r.err)
    -- an unfinished survey whose header's cflags would be a command to a shell
    local lines = h.lines(h.slurp(s))
    local hdr = require("cjson").decode(lines[1])
    hdr.loops[1].cflags = "-shared -fPIC; touch " .. dir .. "/PWNED; true"
    h.write(s, require("cjson").encode(hdr) .. "\n")
    h.run({"survey", "--resume", s}, {env = "XDG_CACHE_HOME=" .. h.shquote(dir .. "/cache2")})
    assert.is_false(exists(dir .. "/PWNED"))
  end)

  it("keeps built loops only in a folder of the user's own, keyed by the source's place and its headers (F6)", function()
    h.write(dir .. "/k.h", "#define K 1\n")
    local src = '#include "k.h"\n#include <stddef.h>\ndouble f(double *restrict a, double *restrict b, ' ..
      'double *restrict c, double s, size_t n) { for (size_t j = 0; j < n; j++) c[j] = a[j] * K; return 0; }\n'
    h.write(dir .. "/k.c", src)
    sh("mkdir " .. h.shquote(dir .. "/other") .. " && cp " .. h.shquote(dir .. "/k.c") .. " " .. h.shquote(dir .. "/other/k.c") ..
      " && cp " .. h.shquote(dir .. "/k.h") .. " " .. h.shquote(dir .. "/other/k.h"))
    local loops = require("pmcsh.loops")
    local function object(path, cache)
      local p = io.popen("XDG_CACHE_HOME=" .. h.shquote(cache) .. " " .. h.shquote(h.exe) .. " -e " ..
        h.shquote('print(require("pmcsh.loops").info(assert(stream.loop("' .. path .. '", "f"))).object)'))
      local o = p:read("l"); p:close()
      return o
    end
    local cache = dir .. "/cache"
    local a = object(dir .. "/k.c", cache)
    assert.are.equal(a, object(dir .. "/k.c", cache))                     -- built once
    assert.are_not.equal(a, object(dir .. "/other/k.c", cache))           -- the same bytes elsewhere: not the same build
    h.write(dir .. "/k.h", "#define K 2\n")
    assert.are_not.equal(a, object(dir .. "/k.c", cache))                 -- an edited header builds again
    -- a cache folder another user can write is no cache
    sh("mkdir -p " .. h.shquote(shared .. "/c/pmcsh/loops") .. " && chmod -R 0777 " .. h.shquote(shared .. "/c"))
    local o = object(dir .. "/k.c", shared .. "/c")
    assert.is_truthy(o)
    assert.is_nil(o:find(shared, 1, true))
  end)
end)

describe("a hostile group member's third look", function()
  local dir, private, shared
  before_each(function()
    dir = h.tmpdir()
    private, shared = dir .. "/private", dir .. "/shared"
    sh("mkdir -p " .. h.shquote(private) .. " " .. h.shquote(shared))
    sh("chmod 755 " .. h.shquote(dir) .. " && chmod 0777 " .. h.shquote(shared))
  end)
  after_each(function() os.execute("rm -rf " .. h.shquote(dir)) end)

  it("follows no link, not even root's own, in a folder others can rename in", function()
    -- root's own link, renamed by the other user to the name root writes to
    sh("ln -s " .. h.shquote(private) .. " " .. h.shquote(shared .. "/results"))
    local r = h.run({"survey", "-e", "task-clock", "--n", "20000", "-r", "2", "-k", "copy", "--out", shared .. "/results/"})
    assert.are_not.equal(0, r.code)
    assert.matches("results is a link in a folder others can write: pmcsh follows none", r.err, 1, true)
    local p = io.popen("ls -A " .. h.shquote(private))
    assert.are.equal("", p:read("a")); p:close()
  end)

  it("reads no file of the kernel's, nor a baseline of more than one line", function()
    sh("mkdir " .. h.shquote(private .. "/cmp") .. " && ln -s /proc/self/status " .. h.shquote(private .. "/cmp/c.jsonl"))
    local r = h.run({"compare", private .. "/cmp/c.jsonl", private .. "/cmp/c.jsonl"}, {env = "timeout 20"})
    assert.are.equal(1, r.code)
    assert.matches("not a regular file", r.err, 1, true)
    h.write(private .. "/b.json", '{"format":"pmcsh-baseline/1","z":3.5,"band":0.1,"metrics":{}}\n{}\n')
    r = h.run({"health", "--baseline", private .. "/b.json"})
    assert.are.equal(2, r.code)
    assert.matches("a baseline is one line", r.err, 1, true)
  end)

  it("refuses a file of more records than any recipe writes, before holding them", function()
    local f = assert(io.open(private .. "/many.jsonl", "w"))
    f:write('{"recipe":"health","fingerprint":{"host":"n1"}}\n')
    f:write(string.rep('{"type":"note"}\n', require("pmcsh.compare").MAX_RECORDS + 1))
    f:close()
    local r = h.run({"compare", private .. "/many.jsonl", private .. "/many.jsonl"})
    assert.are.equal(1, r.code)
    assert.matches("more than %d+ records", r.err)
  end)
end)

describe("a hostile group member's fourth look", function()
  local dir, shared
  before_each(function()
    dir = h.tmpdir()
    shared = dir .. "/shared"
    sh("mkdir -p " .. h.shquote(shared) .. " && chmod 755 " .. h.shquote(dir) .. " && chmod 0777 " .. h.shquote(shared))
  end)
  after_each(function() os.execute("rm -rf " .. h.shquote(dir)) end)

  it("builds a loop only in the real folder it checked: TMPDIR another user's link to /tmp is /tmp", function()
    if not h.need(h.is_root() and h.have("setpriv"), "needs root (to act as another user) and setpriv") then return end
    assert(os.execute("cd / && " .. AS_OTHER .. "ln -s /tmp " .. h.shquote(shared .. "/t")))
    h.write(dir .. "/k.c", "#include <stddef.h>\ndouble f(double *restrict a, double *restrict b, double *restrict c, " ..
      "double s, size_t n) { for (size_t j = 0; j < n; j++) c[j] = a[j]; return 0; }\n")
    local p = io.popen("cd / && env -u HOME XDG_CACHE_HOME=" .. h.shquote(shared .. "/cache") .. " TMPDIR=" ..
      h.shquote(shared .. "/t") .. " " .. h.shquote(h.exe) .. " -e " ..
      h.shquote('print(stream.loop("' .. dir .. '/k.c", "f"):info().path)'))
    local path = p:read("l")
    p:close()
    assert.matches("^/tmp/%.build%-[%w]+/out$", path)   -- the checked real path, never the link's name
    local l = io.popen("ls -A " .. h.shquote(shared))
    assert.are.equal("t\n", l:read("a"))                   -- and nothing made in the group's folder
    l:close()
  end)

  it("bounds a file compare reads that is not a survey's: 8 MiB", function()
    local f = assert(io.open(dir .. "/big.jsonl", "w"))
    f:write('{"recipe":"health","fingerprint":{"host":"n1"}}\n')
    local rec = '{"type":"metric","name":"m","value":1,"unit":"x","better":"higher","samples":[' ..
      string.rep("1,", 200000) .. '1]}\n'
    for _ = 1, 25 do f:write(rec) end
    f:close()
    local r = h.run({"compare", dir .. "/big.jsonl", dir .. "/big.jsonl"})
    assert.are.equal(1, r.code)
    assert.matches("over %d+ bytes", r.err)
  end)
end)
