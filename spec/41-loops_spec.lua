-- The user's own loops (include/pmcsh/loop.h): built here from C, loaded,
-- run by the STREAM engine, checked for what physics says of them: bytes
-- per element from their arrays or descriptor, validation against what
-- the loop leaves in one element, first-touch faults, the loop's own
-- disassembly; their crashes and bad files said in one line.
local h = require("helpers")
local cjson = require("cjson")
local paths = require("pmcsh.paths")
local stream = require("pmcsh.stream")
local loops = require("pmcsh.loops")
local kit = h.kernel_it(it)

local INCLUDE = paths.root .. "/include"
local PAGE = 4096

local SOURCES = {
  -- STREAM's convention, bare: triad by another name
  ["triad2.c"] = [[
#include <stddef.h>
double triad2(double *restrict a, double *restrict b, double *restrict c, double s, size_t n)
{
	for (size_t j = 0; j < n; j++)
		a[j] = b[j] + s * c[j];
	return 0;
}
/* wrong in one element of each call: validation must see it */
double broken(double *restrict a, double *restrict b, double *restrict c, double s, size_t n)
{
	for (size_t j = 0; j < n; j++)
		a[j] = b[j] + s * c[j] + (j == n / 2 && n > 1);
	return 0;
}
]],
  -- a descriptor: its name, arrays, flops
  ["described.c"] = [[
#include <pmcsh/loop.h>
static double axpy(double *restrict a, double *restrict b, double *restrict c, double s, size_t n)
{
	(void)c;
	for (size_t j = 0; j < n; j++)
		b[j] = b[j] + s * a[j];
	return 0;
}
PMCSH_LOOP(axpy) = {.version = PMCSH_LOOP_VERSION, .name = "axpy", .convention = PMCSH_STREAM, .stream = axpy,
	.reads = PMCSH_A | PMCSH_B, .writes = PMCSH_B, .flops = 2};
]],
  -- wrong in every element alike: its own replay agrees, its reference does not
  ["offby1.c"] = [[
#include <pmcsh/loop.h>
static double plain(double *restrict a, double *restrict b, double *restrict c, double s, size_t n)
{
	for (size_t j = 0; j < n; j++)
		a[j] = b[j] + s * c[j];
	return 0;
}
static double off(double *restrict a, double *restrict b, double *restrict c, double s, size_t n)
{
	for (size_t j = 0; j < n; j++)
		a[j] = b[j] + s * c[j] + 1;
	return 0;
}
double bare_off(double *restrict a, double *restrict b, double *restrict c, double s, size_t n)
{
	return off(a, b, c, s, n);
}
PMCSH_LOOP(off) = {.version = PMCSH_LOOP_VERSION, .name = "off", .convention = PMCSH_STREAM, .stream = off,
	.reads = PMCSH_B | PMCSH_C, .writes = PMCSH_A, .reference = plain};
]],
  -- the loop's own data: init writes the first `touched` of every 8 pages
  ["own.c"] = [[
#include <stdlib.h>
#include <stddef.h>
#include <sys/mman.h>
/* mmap'd, 4 KiB pages: no allocator (nor a sanitizer's) touches any of it */
struct st { double *x; size_t lo, bytes; };
static size_t touched(void) { const char *t = getenv("OWN_TOUCHED"); return t ? strtoul(t, 0, 10) : 0; }
void *fillown_init(size_t n, int thread, int nthreads)
{
	struct st *s = malloc(sizeof *s);
	size_t lo = n / nthreads * thread, hi = thread + 1 == nthreads ? n : n / nthreads * (thread + 1);
	s->lo = lo;
	s->bytes = ((hi - lo) * sizeof(double) + 4095) / 4096 * 4096;
	s->x = mmap(NULL, s->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	madvise(s->x, s->bytes, MADV_NOHUGEPAGE);
	size_t pages = s->bytes / 4096, t = touched();
	for (size_t p = 0; p < pages; p++)
		if (p % 8 < t) s->x[p * 512] = 0;
	return s;
}
void fillown_fini(void *p) { struct st *s = p; munmap(s->x, s->bytes); free(s); }
void fillown(void *p, size_t begin, size_t end)
{
	struct st *s = p;
	for (size_t j = begin; j < end; j++)
		s->x[j - s->lo] = 1.0;
}
]],
  -- crashes on its 21st call
  ["crash.c"] = [[
#include <stddef.h>
double boom(double *restrict a, double *restrict b, double *restrict c, double s, size_t n)
{
	static int calls;
	if (++calls > 20) { volatile int *p = 0; *p = 1; }
	for (size_t j = 0; j < n; j++) c[j] = a[j];
	return 0;
}
]],
}

local dir
setup(function()
  dir = h.tmpdir()
  for name, src in pairs(SOURCES) do h.write(dir .. "/" .. name, src) end
  assert(os.execute(string.format("cc -O2 -I%s -shared -fPIC -o %s/triad2.so %s/triad2.c", h.shquote(INCLUDE), dir, dir)))
end)
teardown(function() os.execute("rm -rf " .. h.shquote(dir)) end)

-- pmcsh with the loops' cache in the spec's folder
local function run(args, env)
  return h.run(args, {env = string.format("cd %s && XDG_CACHE_HOME=%s/cache %s", h.shquote(dir), h.shquote(dir),
    env or "")})
end

describe("a loop of the user's", function()
  it("in STREAM's convention is found reading b and c and writing a: 24 bytes per element, as triad", function()
    local l = assert(stream.loop(dir .. "/triad2.so", "triad2"))
    local i = l:info()
    assert.are.same({"stream", {"b", "c"}, {"a"}, 24, 32, true}, {i.convention, i.reads, i.writes, i.bytes, i.bytes_wa, i.probed})
    local s = assert(stream.new{n = 100000, threads = 1, quiet = true})
    local r = assert(s:run(l, {reps = 3}))
    assert.are.equal(24, r.bytes_per_iter)
    assert.is_true(r.validation.a <= r.validation.bound)
    -- a=1, b=2, c=0; after a warm-up and 3 triads a = b + 3c = 2 each time
    assert.are.equal(2, r.validation.expected.a)
    s:close(); l:close()
  end)

  it("fails validation when it leaves one element wrong", function()
    local l = assert(stream.loop(dir .. "/triad2.so", "broken"))
    local s = assert(stream.new{n = 100000, threads = 1, quiet = true})
    local ok, err = pcall(s.run, s, l, {reps = 2})
    assert.is_false(ok)
    assert.matches("validation failed: array a", tostring(err))
    s:close(); l:close()
  end)

  it("is validated against its descriptor's reference: a loop wrong in every element alike fails", function()
    local flags = {cflags = "-O2 -I" .. INCLUDE .. " -shared -fPIC"}
    local bare = assert(stream.loop(dir .. "/offby1.c", "bare_off", flags))
    local s = assert(stream.new{n = 100000, threads = 1, quiet = true})
    assert(s:run(bare, {reps = 2}))   -- replaying itself, it agrees with itself
    local l = assert(stream.loop(dir .. "/offby1.c", "off", flags))
    assert.is_true(l:info().reference)
    local ok, err = pcall(s.run, s, l, {reps = 2})
    assert.is_false(ok)
    assert.matches("validation failed: array a", tostring(err))
    s:close(); l:close(); bare:close()
  end)

  it("built from C by its content once, with its descriptor's name, arrays and flops", function()
    local l = assert(stream.loop(dir .. "/described.c", "axpy", {cflags = "-O2 -I" .. INCLUDE .. " -shared -fPIC"}))
    local i = loops.info(l)
    assert.are.same({"axpy", true, false, {"a", "b"}, {"b"}, 24, 2}, {i.name, i.described, i.probed, i.reads, i.writes,
      i.bytes, i.flops})
    assert.matches("%-O2 %-I", i.command)
    local again = assert(stream.loop(dir .. "/described.c", "axpy", {cflags = "-O2 -I" .. INCLUDE .. " -shared -fPIC"}))
    assert.are.equal(i.object, loops.info(again).object)   -- the cache: the same source and command
    l:close(); again:close()
  end)

  it("is disassembled from its own object: instructions per element from its stores", function()
    local l = assert(stream.loop(dir .. "/triad2.so", "triad2"))
    local d = assert(stream.disasm(l))
    local stores = 0
    for _, line in ipairs(d.lines) do if line:match("mov%a*%s+%%[xyz]?mm%d+,.*%(") or line:match("%sstr?%s") then stores = stores + 1 end end
    assert.is_true(d.instructions >= 3 and d.elements >= 1)
    assert.are.equal(d.instructions / d.elements, d.per_element)
    l:close()
  end)
end)

describe("survey --loop", function()
  kit("checks first touch of a STREAM-convention loop's arrays (fresh): 3 arrays of their pages", function()
    -- short windows, which a busy machine seldom preempts (a pair that counted a context switch is dropped)
    local r = run({"survey", "--loop", "triad2.c:triad2", "-e", "page-faults", "--fresh", "--n", "64K", "-r", "10", "--json"})
    assert.are.equal(0, r.code, r.err)
    local row
    for _, rec in ipairs(select(2, h.json_lines(r.out))) do if rec.name == "page-faults:u" and rec.context.kernel == "triad2" then row = rec end end
    assert.is_not_nil(row, r.out)
    -- each window touches its slice of each array (the survey's slice of n, fresh)
    local slice = require("pmcsh.survey.engine_stream").slice(64 * 1024, 1, true)
    assert.are.equal(3 * slice * 8 / PAGE, row.expected)
    if not h.need(row.pairs_kept > 0, "every pair was disturbed on this busy machine") then return end
    assert.are.equal("pass", row.verdict)
  end)

  kit("an own-data loop faults in its windows on the pages its init left untouched, none where init touched all", function()
    -- each window runs a slice of the loop's fresh state: its pages, less those init touched (t of every 8)
    local pages = require("pmcsh.survey.engine_stream").slice(512 * 1024, 1, true) * 8 / PAGE
    for _, t in ipairs({{touched = 0, pages = pages}, {touched = 3, pages = pages * 5 / 8}, {touched = 8, pages = 0}}) do
      local r = run({"survey", "--loop", "own.c:fillown", "-e", "page-faults", "--fresh", "--n", "512K", "-r", "6", "-t", "1",
        "--json"}, "OWN_TOUCHED=" .. t.touched)
      assert.are.equal(0, r.code, r.err)
      local row
      for _, rec in ipairs(select(2, h.json_lines(r.out))) do if rec.name == "page-faults:u" then row = rec end end
      assert.is_not_nil(row, r.out)
      if not h.need(row.pairs_kept > 0, "every pair was disturbed on this busy machine") then return end
      -- every window on fresh state: the faults are its cost, not per element (a
      -- slice of 127 pages meets the pattern of 8 where it falls: a page either way)
      assert.is_true(math.abs(t.pages - row.intercept) <= (t.touched % 8 == 0 and 0 or 1),
        string.format("OWN_TOUCHED=%d: %.2f faults per window, want %.2f", t.touched, row.intercept, t.pages))
      -- per element none: a pair's windows differ by a page at most, over a slice's elements
      local slack = t.touched % 8 == 0 and 0 or 1 / (pages * PAGE / 8)
      assert.is_true(math.abs(row.value) <= slack * (1 + 1e-9), "OWN_TOUCHED=" .. t.touched .. ": " .. row.value)
    end
  end)

  it("keeps the runs a crashing loop finished, names the loop, the signal and the run, and --report shows them", function()
    -- no runs without counters: the loop's first run, a counted one, makes its 21st call
    local r = run({"survey", "--loop", "crash.c:boom", "-k", "copy", "-e", "task-clock", "--n", "64K", "-r", "4",
      "--no-baseline", "--out", "cr.jsonl"})
    assert.are_not.equal(0, r.code)
    assert.matches("the loop boom of [^ ]*crash%.c crashed: SIGSEGV", r.err)
    assert.matches("survey run %d+ of %d+ %(boom, group 1%)", r.err)
    assert.matches("pmcsh survey --resume cr.jsonl continues", r.err, 1, true)
    local rep = run({"survey", "--report", "cr.jsonl"})
    assert.are.equal(0, rep.code, rep.err)
    assert.matches("task%-clock", rep.out)
    local runs = 0
    for l in h.slurp(dir .. "/cr.jsonl"):gmatch("[^\n]+") do if cjson.decode(l).type == "run" then runs = runs + 1 end end
    assert.is_true(runs >= 1)
  end)

  it("refuses each bad loop in one line, exit 2, before measuring", function()
    os.execute(string.format("cp %s/triad2.so %s/other.so && printf '\\267\\000' | dd of=%s/other.so bs=1 seek=18 " ..
      "conv=notrunc 2>/dev/null", dir, dir, dir))   -- e_machine: aarch64
    h.write(dir .. "/bad.c", "int x(\n")
    local cases = {
      {"nosuch.so:f", "nosuch.so: No such file or directory"},
      {"triad2.so:nof", "exports no symbol nof"},
      {"/etc/passwd:f", "is not a shared object"},
      {"other.so:triad2", "is aarch64 64-bit code; this pmcsh runs"},
      {"bad.c:x", "cannot build bad.c"},
    }
    for _, c in ipairs(cases) do
      local r = run({"survey", "--loop", c[1], "-e", "task-clock"})
      assert.are.equal(2, r.code, c[1] .. ": " .. r.err)
      assert.matches(c[2], r.err, 1, true)
      assert.are.equal("", r.out)
      assert.not_matches("traceback", r.err)
    end
  end)

  it("renders a file of loops without loading them: a report runs no code a file names", function()
    local r = run({"survey", "--loop", "triad2.so:triad2", "-e", "task-clock", "--n", "64K", "-r", "2", "--out", "t.jsonl"})
    assert.are.equal(0, r.code, r.err)
    os.remove(dir .. "/triad2.so")
    local rep = run({"survey", "--report", "t.jsonl"})
    assert.are.equal(0, rep.code, rep.err)
    assert.matches("triad2", rep.out)
    assert.matches("MB/s", rep.out)
    assert(os.execute(string.format("cc -O2 -shared -fPIC -o %s/triad2.so %s/triad2.c", dir, dir)))
  end)
end)

describe("bench-stream --loop", function()
  it("runs the loop by pmcsh and by the plain C driver, interleaved, with the A/A floor beside it", function()
    local r = run({"bench-stream", "--loop", "triad2.so:triad2", "--n", "256K", "--rounds", "3", "--json"})
    assert.are.equal(0, r.code, r.err)
    local _, recs = h.json_lines(r.out)
    assert.are.equal(1, #recs)
    local c = recs[1]
    assert.are.same({"triad2 MB/s", "triad2"}, {c.name, c.context.loop})
    for _, f in ipairs({"value", "driver_mbps", "ratio", "paired_ratio", "aa_ratio"}) do
      assert.is_true(type(c[f]) == "number" and c[f] > 0, f)
    end
    assert.is_true(math.abs(c.ratio - c.value / c.driver_mbps) < 1e-9)
  end)

  it("refuses a loop on its own data, which the plain driver cannot run, exit 2", function()
    local r = run({"bench-stream", "--loop", "own.c:fillown"})
    assert.are.equal(2, r.code)
    assert.matches("on its own data", r.err, 1, true)
  end)
end)

describe("events known by what they count", function()
  local pmc = require("pmcsh.pmc")
  it("one identity for the names of one event, another for another", function()
    assert.are.equal(pmc.identity("page-faults"), pmc.identity("perf::FAULTS"))
    assert.are.equal(pmc.identity("page-faults"), pmc.identity("perf::PERF_COUNT_SW_PAGE_FAULTS"))
    assert.are_not.equal(pmc.identity("page-faults"), pmc.identity("minor-faults"))
    assert.are_not.equal(pmc.identity("instructions"), pmc.identity("cycles"))
    assert.is_nil(pmc.identity("no-such-event"))
  end)

  kit("the first-touch check of a loop reads perf::FAULTS as page-faults: the check is the encoding's", function()
    local r = run({"survey", "--loop", "triad2.c:triad2", "-e", "perf::FAULTS", "--fresh", "--n", "256K", "-r", "6",
      "--json"})
    assert.are.equal(0, r.code, r.err)
    local row
    for _, rec in ipairs(select(2, h.json_lines(r.out))) do if rec.name == "perf::FAULTS:u" then row = rec end end
    assert.is_not_nil(row, r.out)
    if not h.need(row.pairs_kept > 0, "every pair was disturbed on this busy machine") then return end
    local slice = require("pmcsh.survey.engine_stream").slice(256 * 1024, 1, true)
    assert.are.same({3 * slice * 8 / PAGE, "pass"}, {row.expected, row.verdict})
  end)
end)
