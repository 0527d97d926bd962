-- The fifth audit's loop and code-loading findings (issue 40), each at its
-- cause: nothing a results file names is built or loaded unless it is the
-- user's own and its flags a file may give; recipes, like the loop cache,
-- only from folders nobody else writes; the cache keyed by the compiler
-- and the cpu it builds for; builds bounded and cleaned; a loop that
-- ends the process, never returns or loads badly is said in one line.
local h = require("helpers")
local cjson = require("cjson")
local paths = require("pmcsh.paths")
local stream = require("pmcsh.stream")
local loops = require("pmcsh.loops")

local INCLUDE = paths.root .. "/include"
local dir

local SCALE2 = [[
#include <stddef.h>
double scale2(double *a, double *b, double *c, double s, size_t n)
{
	(void)a;
	for (size_t i = 0; i < n; i++)
		b[i] = s * c[i];
	return 0;
}
]]

-- STREAM's convention; after `after` calls (the probe makes 4) it does `what`
local function ender(name, after, what)
  return string.format([[
#include <assert.h>
#include <stdlib.h>
#include <stddef.h>
#include <unistd.h>
double %s(double *a, double *b, double *c, double s, size_t n)
{
	static int calls;
	if (__atomic_add_fetch(&calls, 1, __ATOMIC_SEQ_CST) > %d) { %s; }
	for (size_t i = 0; i < n; i++)
		a[i] = b[i] + s * c[i];
	return 0;
}
]], name, after, what)
end

local function run(args, env)
  return h.run(args, {env = string.format("cd %s && XDG_CACHE_HOME=%s/cache %s", h.shquote(dir), h.shquote(dir),
    env or "")})
end

local function sh(cmd) return os.execute(string.format("cd %s && %s", h.shquote(dir), cmd)) end

-- A results file whose header is `header` changed by edit (the header of
-- a survey of scale2.c made here).
local function forged(name, edit)
  local lines = h.lines(h.slurp(dir .. "/s.jsonl"))
  local hdr = cjson.decode(lines[1])
  edit(hdr.loops[1])
  h.write(dir .. "/" .. name, cjson.encode(hdr) .. "\n")
end

local function builds_left()
  local n = 0
  for name in (io.popen("ls -a " .. h.shquote(dir .. "/cache/pmcsh/loops")):read("a")):gmatch("[^\n]+") do
    if name:match("^%.build%-") then n = n + 1 end
  end
  return n
end

setup(function()
  dir = h.tmpdir()
  h.write(dir .. "/scale2.c", SCALE2)
  local r = run({"survey", "--loop", "scale2.c:scale2", "-e", "task-clock", "--n", "64K", "-r", "2", "--out", "s.jsonl"})
  assert(r.code == 0, r.err)
end)

teardown(function() os.execute("chmod -R u+w " .. h.shquote(dir) .. "; rm -rf " .. h.shquote(dir)) end)

describe("survey --resume (H1: nothing from a file is a command)", function()
  it("refuses a header's cflags that would run a command, and runs none", function()
    os.execute("mkdir -p " .. h.shquote(dir .. "/lw"))
    forged("wrapper.jsonl", function(l)
      l.cflags = '-O2 -shared -fPIC -wrapper /bin/sh,-c,id>' .. dir .. '/lw/PWNED;exec${IFS}"$0"${IFS}"$@"'
    end)
    local r = run({"survey", "--resume", "wrapper.jsonl"})
    assert.are_not.equal(0, r.code)
    assert.matches("loop scale2: %-wrapper: not a flag a file may give", r.err)
    assert.matches("--loop PATH:scale2", r.err, 1, true)
    assert.is_nil(io.open(dir .. "/lw/PWNED"))
  end)

  it("takes from a file only optimisation, -m, -f but plugins and files, -D, -U, -std=, -g, -W and -I of one's own", function()
    for _, ok in ipairs({"-O3 -march=native -shared -fPIC", "-Ofast -mavx2 -funroll-loops -fno-tree-vectorize -DN=4 -UX " ..
        "-std=gnu11 -g -Wall -fvect-cost-model=unlimited -I/usr/include"}) do
      assert.is_true(loops.file_flags(ok), ok)
    end
    local gw = dir .. "/gw"
    os.execute("mkdir -p " .. h.shquote(gw) .. " && chmod 0775 " .. h.shquote(gw))
    for _, bad in ipairs({"-wrapper", "-specs=/tmp/x", "@/tmp/args", "-B/tmp", "-B", "-fplugin=/tmp/p.so", "-fplugin=p",
        "-fpass-plugin=/tmp/p.so", "-Xlinker", "-Wl,-plugin,/tmp/p.so", "-Wa,@/tmp/x", "-fuse-ld=/tmp/ld", "-fuse-ld=lld",
        "-fprofile-use=/tmp/x", "-fdump-tree-all", "-include", "-x", "-o", "/tmp/x.c", "-lfoo", "-L/tmp",
        "-save-temps", "-mllvm", "-I" .. gw, "-Irelative", "-DX=$(id)", "-fsanitize-ignorelist=/tmp/x", "--param"}) do
      local ok, why = loops.file_flags("-O2 " .. bad)
      assert.is_nil(ok, bad)
      assert.matches(bad:sub(1, 4), why, 1, true)
    end
  end)

  it("says what it builds; refuses a loop file in a folder another can write unless named again", function()
    forged("ok.jsonl", function(l) l.cflags = "-O2 -shared -fPIC -funroll-loops" end)
    local r = run({"survey", "--resume", "ok.jsonl"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("--resume builds the loop scale2 from " .. dir .. "/scale2.c with -O2 -shared -fPIC -funroll-loops",
      r.err, 1, true)
    local gw = dir .. "/shared"
    os.execute(string.format("mkdir -p %s && chmod 0775 %s && cp %s/scale2.c %s/", h.shquote(gw), h.shquote(gw),
      h.shquote(dir), h.shquote(gw)))
    forged("gw.jsonl", function(l) l.path = gw .. "/scale2.c"; l.cflags = "-O2 -shared -fPIC -wrapper x" end)
    r = run({"survey", "--resume", "gw.jsonl"})
    assert.are_not.equal(0, r.code)
    assert.matches("loop scale2: %-wrapper", r.err)
    forged("gw2.jsonl", function(l) l.path = gw .. "/scale2.c" end)
    r = run({"survey", "--resume", "gw2.jsonl"})
    assert.are_not.equal(0, r.code)
    assert.matches(gw .. " is a folder another user can write", r.err, 1, true)
    -- named again by the user: built as named
    r = run({"survey", "--resume", "gw.jsonl", "--loop", gw .. "/scale2.c:scale2", "--cflags", "-O1"})
    assert.are.equal(0, r.code, r.err)
    assert.matches("--resume builds the loop scale2 from " .. gw .. "/scale2.c with -O3 -march=native -shared -fPIC -O1", r.err, 1, true)
  end)
end)

describe("recipe folders (H3: the loop cache's rule)", function()
  it("skips a PMCSH_PATH or ~/.pmcsh/recipes folder another can write, saying which and why", function()
    local rd = dir .. "/recipes"
    os.execute(string.format("mkdir -p %s/home/.pmcsh && chmod 0775 %s/home && mkdir -p %s && chmod 0775 %s",
      h.shquote(dir), h.shquote(dir), h.shquote(rd), h.shquote(rd)))
    h.write(rd .. "/stat.lua", 'io.write("SHADOWED\\n") return 0\n')
    os.execute("ln -s " .. h.shquote(rd) .. " " .. h.shquote(dir .. "/home/.pmcsh/recipes"))
    for _, env in ipairs({"PMCSH_PATH=" .. h.shquote(rd), "HOME=" .. h.shquote(dir .. "/home")}) do
      local r = run({"stat", "-e", "task-clock", "--", "true"}, env)
      assert.are.equal(0, r.code, r.err)
      assert.is_nil(r.out:find("SHADOWED", 1, true), env)
      assert.matches("pmcsh: recipes in [^ ]+ are skipped: [^ ]+ is a folder another user can write", r.err)
    end
    -- the same folder made private is searched
    os.execute("chmod 0755 " .. h.shquote(rd))
    local r = run({"stat", "-e", "task-clock", "--", "true"}, "PMCSH_PATH=" .. h.shquote(rd))
    assert.matches("SHADOWED", r.out)
  end)
end)

describe("the loop cache (M2, M4, L4, L11)", function()
  it("is keyed by the compiler's identity and what it resolves -march=native to", function()
    -- a compiler that says another cpu for -### when FAKE_CPU says so
    h.write(dir .. "/mycc", '#!/bin/sh\ncase " $* " in *" -### "*) echo "cc1 -march=${FAKE_CPU:-a}" >&2;; esac\nexec cc "$@"\n')
    os.execute("chmod +x " .. h.shquote(dir .. "/mycc"))
    local function object(env)
      local r = run({"-e", "print(require('pmcsh.loops').info(assert(stream.loop('scale2.c', 'scale2'))).object)"},
        "CC=" .. h.shquote(dir .. "/mycc") .. " " .. (env or ""))
      assert.are.equal(0, r.code, r.err)
      return r.out
    end
    local a, a2, b = object("FAKE_CPU=a"), object("FAKE_CPU=a"), object("FAKE_CPU=b")
    assert.are.equal(a, a2)             -- cached
    assert.are_not.equal(a, b)          -- another cpu, another object
    h.write(dir .. "/mycc", '#!/bin/sh\n# version 2\ncase " $* " in *" -### "*) echo "cc1 -march=${FAKE_CPU:-a}" >&2;; ' ..
      'esac\nexec cc "$@"\n')
    assert.are_not.equal(a, object("FAKE_CPU=a"))   -- another compiler at the same path
  end)

  it("never caches a source whose assembler includes a file: an edited include is built", function()
    local inc = dir .. "/body.inc"
    h.write(dir .. "/inc.c", string.format([[
#include <pmcsh/loop.h>
extern const char incname[];
__asm__(".section .rodata\n.globl incname\nincname:\n.include \"%s\"\n.text\n");
static double f(double *restrict a, double *restrict b, double *restrict c, double s, size_t n)
{
	for (size_t j = 0; j < n; j++)
		a[j] = b[j] + s * c[j];
	return 0;
}
PMCSH_LOOP(f) = {.version = PMCSH_LOOP_VERSION, .name = incname, .convention = PMCSH_STREAM, .stream = f,
	.reads = PMCSH_B | PMCSH_C, .writes = PMCSH_A, .flops = 2};
]], inc))
    local flags = {cflags = "-O2 -I" .. INCLUDE .. " -shared -fPIC"}
    h.write(inc, '.asciz "first"\n')
    local l1 = assert(stream.loop(dir .. "/inc.c", "f", flags))
    assert.are.equal("first", l1:info().name)
    h.write(inc, '.asciz "second"\n')
    local l2 = assert(stream.loop(dir .. "/inc.c", "f", flags))
    assert.are.equal("second", l2:info().name)
    l1:close(); l2:close()
  end)

  it("bounds a source, removes build folders on error and Ctrl-C, sweeps stale ones", function()
    sh("truncate -s 1G huge.c")
    local t0 = os.time()
    local r = run({"-e", "print(stream.loop('huge.c', 'f'))"})
    assert.matches("huge.c: 1073741824 bytes of source; a loop's is at most 16 MiB", r.out, 1, true)
    assert.is_true(os.time() - t0 < 30)
    os.remove(dir .. "/huge.c")
    h.write(dir .. "/bad.c", "int x(\n")
    r = run({"-e", "print(stream.loop('bad.c', 'f'))"})
    assert.matches("cannot build bad.c", r.out)
    assert.are.equal(0, builds_left())
    -- a compiler that takes long, interrupted as Ctrl-C does (the whole process group)
    h.write(dir .. "/slowcc", "#!/bin/sh\nsleep 20\nexec cc \"$@\"\n")
    os.execute("chmod +x " .. h.shquote(dir .. "/slowcc"))
    sh(string.format("XDG_CACHE_HOME=%s/cache CC=%s/slowcc setsid %s -e \"print(stream.loop('scale2.c', 'scale2'))\" " ..
      ">int.out 2>&1 & p=$!; sleep 2; /bin/kill -s INT -- -$p; wait $p", h.shquote(dir), h.shquote(dir), h.shquote(h.exe)))
    assert.matches("the compiler was ended by signal 2", h.slurp(dir .. "/int.out"), 1, true)
    assert.are.equal(0, builds_left())
    -- one left by a pmcsh killed mid-build two hours ago
    sh("mkdir -p cache/pmcsh/loops/.build-old && touch cache/pmcsh/loops/.build-old/src.c && " ..
      "touch -d '2 hours ago' cache/pmcsh/loops/.build-old")
    r = run({"-e", "assert(stream.loop('scale2.c', 'scale2'))"})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal(0, builds_left())
  end)

  it("makes its folders 0700 under umask 002, and uses them", function()
    local home = dir .. "/h002"
    os.execute("mkdir -p " .. h.shquote(home))
    local function build()
      return h.run({"-e", "print(require('pmcsh.loops').info(assert(stream.loop('scale2.c', 'scale2'))).object)"},
        {env = string.format("cd %s && umask 002 && env -u XDG_CACHE_HOME HOME=%s", h.shquote(dir), h.shquote(home))})
    end
    local r = build()
    assert.are.equal(0, r.code, r.err)
    assert.matches("^" .. home:gsub("%p", "%%%0") .. "/%.cache/pmcsh/loops/", r.out)
    for _, d in ipairs({"/.cache", "/.cache/pmcsh", "/.cache/pmcsh/loops"}) do
      local p = io.popen("stat -c %a " .. h.shquote(home .. d))
      assert.are.equal("700", p:read("l"), d)
      p:close()
    end
    assert.are.equal(r.out, build().out)
  end)

  it("keeps no object the loader refuses (ET_REL from -c)", function()
    local function count()
      local p = io.popen("ls " .. h.shquote(dir .. "/cache/pmcsh/loops") .. " | wc -l")
      local n = tonumber(p:read("l")); p:close()
      return n
    end
    local before = count()
    local r = run({"-e", "print(stream.loop('scale2.c', 'scale2', {cflags = '-O2 -c -fPIC'}))"})
    assert.matches("is not a shared object %(build it with %-shared %-fPIC%)", r.out)
    assert.are.equal(before, count())
  end)

  it("says a missing file and an empty name (L7)", function()
    local r = run({"-e", "print(stream.loop('nosuch.c', 'f')) print(stream.loop(''))"})
    assert.matches("cannot read the loop's source nosuch.c: No such file or directory\t", r.out, 1, true)
    assert.matches("an empty path names no loop file", r.out, 1, true)
  end)
end)

describe("loading a loop (M5, L16)", function()
  it("refuses a truncated object and a descriptor whose name points nowhere, as loading", function()
    h.write(dir .. "/badname.c", [[
#include <pmcsh/loop.h>
static double f(double *restrict a, double *restrict b, double *restrict c, double s, size_t n)
{
	for (size_t j = 0; j < n; j++)
		a[j] = b[j] + s * c[j];
	return 0;
}
PMCSH_LOOP(f) = {.version = PMCSH_LOOP_VERSION, .name = (const char *)16, .convention = PMCSH_STREAM, .stream = f};
]])
    assert(sh(string.format("cc -O2 -shared -fPIC -I%s -o whole.so badname.c && head -c 3000 whole.so > t.so",
      h.shquote(INCLUDE))))
    local l, msg, errno = stream.loop(dir .. "/t.so", "f")
    assert.is_nil(l)
    assert.matches("cannot load [^ ]*t%.so: .*truncated", msg)
    assert.are.equal(require("pmcsh.sys").ENOEXEC, errno)
    l, msg = stream.loop(dir .. "/whole.so", "f")
    assert.is_nil(l)
    assert.matches("f_pmcsh_loop.name or .description points at no readable string", msg, 1, true)
  end)

  it("reopens fds 0-2 on /dev/null when a constructor closed them", function()
    h.write(dir .. "/closer.c", [[
#include <stddef.h>
#include <unistd.h>
__attribute__((constructor)) static void c(void) { close(0); close(1); close(2); }
double loop(double *a, double *b, double *c, double s, size_t n) { for (size_t i = 0; i < n; i++) a[i] = b[i] * s; return 0; }
]])
    local out = dir .. "/fds.txt"
    local r = run({"-e", string.format([[
local l = assert(stream.loop('closer.c'))
local f = assert(io.open(%q, 'w'))
local p = io.popen('ls -l /proc/' .. require('pmcsh.sys').getpid() .. '/fd')
f:write(p:read('a')); p:close(); f:close()]], out)})
    assert.are.equal(0, r.code, r.err)
    local fds = h.slurp(out)
    for fd = 0, 2 do assert.matches(" " .. fd .. " %-> /dev/null", fds) end
    assert.is_nil(fds:find(" [0-2] %-> [^\n]*fds%.txt"))
  end)
end)

describe("the loop guard (M6)", function()
  local function ends(name, after, what, extra)
    h.write(dir .. "/" .. name .. ".c", ender(name, after, what))
    return run({"-e", string.format("local s = stream.new{n = 4096, threads = %d, quiet = true} " ..
      "local l = assert(stream.loop('%s.c', '%s')) for i = 1, 20 do s:run(l, {reps = 1}) end", extra or 1, name, name)})
  end

  it("says exit(), abort() and a constructor's exit with the loop, and ends as they would", function()
    local r = ends("exits", 10, "exit(3)")
    assert.are.equal(3, r.code)
    assert.matches("pmcsh: the loop exits of exits.c called exit(3)", r.err, 1, true)
    r = ends("aborts", 10, "assert(n == 0)")
    assert.are.equal(134, r.code)
    assert.matches("pmcsh: the loop aborts of aborts.c aborted: SIGABRT", r.err, 1, true)
    h.write(dir .. "/ctor.c", "#include <stdlib.h>\n#include <stddef.h>\n__attribute__((constructor)) static void c(void) " ..
      "{ exit(4); }\ndouble loop(double *a, double *b, double *c, double s, size_t n) { return 0; }\n")
    r = run({"-e", "stream.loop('ctor.c')"})
    assert.are.equal(4, r.code)
    assert.matches("pmcsh: ctor.c, while being loaded for the loop loop, called exit(4)", r.err, 1, true)
  end)

  it("says a crash on 2 threads in one whole line, every time", function()
    for _ = 1, 5 do
      local r = ends("crashy", 30, "*(volatile int *)0 = 1", 2)
      assert.are.equal(139, r.code)
      assert.matches("pmcsh: the loop crashy of crashy.c crashed: SIGSEGV (an invalid memory access)\n", r.err, 1, true)
    end
  end)

  it("says a fault and a stack overflow on a worker thread alone, as on the calling thread", function()
    -- the loop faults only where it runs on a worker (not the thread that
    -- armed the guard): workers start with every signal blocked, and a
    -- blocked fault ends a process with no handler run
    h.write(dir .. "/worker.c", [[
#include <stddef.h>
#include <unistd.h>
static int down(volatile char *p, int d) { volatile char b[4096]; b[0] = p ? p[0] : 0; return d ? down(b, d + 1) + b[1] : 0; }
double null(double *a, double *b, double *c, double s, size_t n)
{ (void)b; (void)c; (void)s; if (gettid() != getpid()) *(volatile int *)0 = 1; for (size_t i = 0; i < n; i++) a[i] = a[i]; return 0; }
double deep(double *a, double *b, double *c, double s, size_t n)
{ (void)b; (void)c; (void)s; if (gettid() != getpid()) down(0, 1); for (size_t i = 0; i < n; i++) a[i] = a[i]; return 0; }
]])
    for _, sym in ipairs({"null", "deep"}) do
      for _ = 1, 3 do
        local r = run({"-e", string.format("local s = stream.new{n = 4096, threads = 2, quiet = true} " ..
          "local l = assert(stream.loop('worker.c', '%s')) for i = 1, 5 do s:run(l, {reps = 1}) end", sym)})
        assert.are.equal(139, r.code)
        assert.matches("pmcsh: the loop " .. sym .. " of worker.c crashed: SIGSEGV (an invalid memory access)\n", r.err, 1, true)
      end
    end
  end)

  it("names a loop that never returns at the first Ctrl-C, and ends at the second with a line", function()
    h.write(dir .. "/hangs.c", ender("hangs", 10, "for (;;) pause()"))
    local err = dir .. "/hang.err"
    local ok, how, code = sh(string.format("%s -e \"local s = stream.new{n = 4096, threads = 1, quiet = true} " ..
      "local l = assert(stream.loop('hangs.c', 'hangs')) for i = 1, 20 do s:run(l, {reps = 1}) end\" 2>%s & p=$!; " ..
      "sleep 2; kill -INT $p; sleep 1; kill -INT $p; wait $p", h.shquote(h.exe), h.shquote(err)))
    assert.is_nil(ok); assert.are.equal("exit", how); assert.are.equal(130, code)
    local said = h.slurp(err)
    assert.matches("pmcsh: Ctrl-C: the loop hangs of hangs.c has not returned; Ctrl-C again ends pmcsh", said, 1, true)
    assert.matches("pmcsh: the loop hangs of hangs.c never returned: ended by a second Ctrl-C", said, 1, true)
  end)

  it("names the survey's run and --resume when a loop exits", function()
    h.write(dir .. "/sexit.c", ender("sexit", 10, "exit(3)"))
    local r = run({"survey", "--loop", "sexit.c:sexit", "-e", "task-clock", "--n", "64K", "-r", "4", "--out", "x.jsonl"})
    assert.are.equal(3, r.code)
    assert.matches("the loop sexit of [^ ]*sexit%.c called exit%(3%); survey run %d+ of %d+", r.err)
    assert.matches("--resume x.jsonl", r.err, 1, true)
  end)
end)
