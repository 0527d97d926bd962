-- The loop door as a newcomer meets it: loops written as one would (a
-- stencil, a dot product with a reduction, one that includes the header),
-- built with no flags, --cflags added to the defaults, a loop that fails
-- validation left out while the others are measured, f_init_part told its
-- thread's part, the default symbol named, the ISA read from the loop's own
-- code, and every refusal naming its reason, never a file:line of pmcsh's.
local h = require("helpers")
local cjson = require("cjson")
local errors = require("pmcsh.errors")
local stream = require("pmcsh.stream")
local loops = require("pmcsh.loops")
local text = require("pmcsh.text")

local SOURCES = {
  -- includes the header for its descriptor, as a descriptor needs
  ["scale2.c"] = [[
#include <pmcsh/loop.h>
static double scale2(double *restrict a, double *restrict b, double *restrict c, double s, size_t n)
{
	(void)a;
	for (size_t i = 0; i < n; i++)
		c[i] = s * b[i];
	return 0;
}
PMCSH_LOOP(scale2) = {.version = PMCSH_LOOP_VERSION, .name = "scale2", .convention = PMCSH_STREAM,
	.stream = scale2, .reads = PMCSH_B, .writes = PMCSH_C, .flops = 1};
]],
  -- a three-point stencil over interior points: not one value in every element
  ["stencil.c"] = [[
#include <stddef.h>
double stencil(double *restrict a, double *restrict b, double *restrict c, double s, size_t n)
{
	(void)c; (void)s;
	for (size_t i = 1; i + 1 < n; i++)
		a[i] = (b[i - 1] + b[i] + b[i + 1]) / 3;
	return 0;
}
]],
  -- the same stencil on its own data, as the left-out line says to do
  ["stencil_own.c"] = [[
#include <stdlib.h>
#include <stddef.h>
struct st { double *a, *b; size_t lo; };
void *stencil_own_init_part(size_t begin, size_t end, size_t n, int thread, int nthreads)
{
	struct st *s = malloc(sizeof *s);
	size_t m = end - begin + 2;   /* its part and a halo each side */
	s->a = malloc(m * sizeof(double));
	s->b = malloc(m * sizeof(double));
	for (size_t j = 0; j < m; j++) s->a[j] = 0, s->b[j] = j;
	s->lo = begin;
	(void)n; (void)thread; (void)nthreads;
	return s;
}
void stencil_own_fini(void *p) { struct st *s = p; free(s->a); free(s->b); free(s); }
void stencil_own(void *p, size_t begin, size_t end)
{
	struct st *s = p;
	for (size_t j = begin - s->lo + 1; j < end - s->lo + 1; j++)
		s->a[j] = (s->b[j - 1] + s->b[j] + s->b[j + 1]) / 3;
}
]],
  -- a dot product: a reduction, which -O2 leaves scalar (no reassociation)
  ["dot.c"] = [[
#include <stddef.h>
double dot(double *restrict a, double *restrict b, double *restrict c, double s, size_t n)
{
	double sum = 0;
	(void)c; (void)s;
	for (size_t i = 0; i < n; i++)
		sum += a[i] * b[i];
	return sum;
}
]],
  -- right for its first calls, then wrong in one element: fails mid-survey
  ["drift.c"] = [[
#include <stddef.h>
double drift(double *restrict a, double *restrict b, double *restrict c, double s, size_t n)
{
	static int calls;
	int wrong = ++calls > 6;
	for (size_t i = 0; i < n; i++)
		a[i] = b[i] + s * c[i] + (wrong && i == n / 2);
	return 0;
}
]],
  ["triad3.c"] = [[
#include <stddef.h>
double triad3(double *restrict a, double *restrict b, double *restrict c, double s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		a[i] = b[i] + s * c[i];
	return 0;
}
]],
  -- builds only with the flag it asks for
  ["flagged.c"] = [[
#include <stddef.h>
#ifndef WANT_FLAG
#error give -DWANT_FLAG
#endif
double loop(double *restrict a, double *restrict b, double *restrict c, double s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		a[i] = b[i] + s * c[i];
	return 0;
}
]],
  -- own data: each init logs the part it is told, each call a range outside it
  ["part.c"] = [[
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
struct st { double *x; size_t lo, hi; };
static void note(const char *what, int thread, size_t a, size_t b)
{
	FILE *f = fopen(PART_LOG, "a");
	if (f) { fprintf(f, "%s %d %zu %zu\n", what, thread, a, b); fclose(f); }
}
void *part_init_part(size_t begin, size_t end, size_t n, int thread, int nthreads)
{
	struct st *s = malloc(sizeof *s);
	s->lo = begin, s->hi = end;
	s->x = calloc(end - begin + 1, sizeof(double));
	note("init", thread, begin, end);
	(void)n; (void)nthreads;
	return s;
}
void part_fini(void *p) { struct st *s = p; free(s->x); free(s); }
void part(void *p, size_t begin, size_t end)
{
	struct st *s = p;
	if (begin < s->lo || end > s->hi) { note("outside", -1, begin, end); return; }
	for (size_t j = begin; j < end; j++) s->x[j - s->lo] += 1.0;
}
]],
  -- a version-1 descriptor (built before init_part existed): init is told n
  ["v1.c"] = [[
#include <stdio.h>
#include <stdlib.h>
#include <pmcsh/loop.h>
struct v1 { int version; const char *name, *description; int convention; pmcsh_stream_fn *stream;
	pmcsh_own_fn *own; pmcsh_init_fn *init; pmcsh_fini_fn *fini; unsigned reads, writes; int reduction;
	double bytes, flops, elements_per_trip; pmcsh_stream_fn *reference; };
static void *init(size_t n, int thread, int nthreads)
{
	FILE *f = fopen(PART_LOG, "a");
	if (f) { fprintf(f, "n %zu %d %d\n", n, thread, nthreads); fclose(f); }
	return NULL;
}
static void own(void *p, size_t begin, size_t end) { (void)p; (void)begin; (void)end; }
const struct v1 old_pmcsh_loop = {.version = 1, .name = "old", .convention = PMCSH_OWN, .own = own, .init = init};
]],
}

local dir
setup(function()
  dir = h.tmpdir()
  for name, src in pairs(SOURCES) do h.write(dir .. "/" .. name, src) end
  h.write(dir .. "/bad.c", "double f(double *a) { return a[0] +; }\n")
end)
teardown(function() os.execute("rm -rf " .. h.shquote(dir)) end)

-- pmcsh in the spec's folder, the loops' cache in it
local function run(args, env)
  return h.run(args, {env = string.format("cd %s && XDG_CACHE_HOME=%s/cache %s", h.shquote(dir), h.shquote(dir),
    env or "")})
end

-- the JSON records of a survey, by kernel
local function by_kernel(out)
  local k = {}
  for _, rec in ipairs(select(2, h.json_lines(out))) do
    if rec.context and rec.context.kernel then k[rec.context.kernel] = rec end
  end
  return k
end

-- no position in pmcsh's own files reaches a user
local function no_position(text)
  assert.not_matches("%.lua:%d+", text)
  assert.not_matches("traceback", text)
end

describe("a loop that includes <pmcsh/loop.h>", function()
  it("builds from the source tree with no flags, its descriptor read", function()
    local r = run({"survey", "--loop", "scale2.c:scale2", "-e", "task-clock", "--n", "64K", "-r", "2", "--json"})
    assert.are.equal(0, r.code, r.err)
    assert.is_not_nil(by_kernel(r.out).scale2, r.out)
    local l = assert(stream.loop(dir .. "/scale2.c", "scale2"))
    local i = loops.info(l)
    assert.are.same({"scale2", true, {"b"}, {"c"}, 16}, {i.name, i.described, i.reads, i.writes, i.bytes})
    assert.matches("-I " .. text.shell(loops.include()), i.command, 1, true)
    l:close()
  end)

  it("builds with an installed pmcsh, which adds its installed include/", function()
    local dest = h.tmpdir()
    assert.is_true(os.execute(string.format("make -s -o %s install BIN=%s DESTDIR=%s PREFIX=/opt/pmcsh >/dev/null 2>&1",
      h.shquote(h.exe), h.shquote(h.exe), h.shquote(dest))))
    os.execute(string.format("cp %s/scale2.c %s/", h.shquote(dir), h.shquote(dest)))
    local p = io.popen(string.format("cd / && XDG_CACHE_HOME=%s/cache %s -e %s 2>&1", h.shquote(dest),
      h.shquote(dest .. "/opt/pmcsh/bin/pmcsh"), h.shquote('local l = assert(stream.loop("' .. dest ..
      '/scale2.c", "scale2")); print(l:info().described, require("pmcsh.loops").include())')))
    local out = p:read("a"); p:close()
    os.execute("rm -rf " .. h.shquote(dest))
    assert.matches("^true\t" .. (dest .. "/opt/pmcsh/include"):gsub("%p", "%%%0") .. "\n$", out)
  end)
end)

describe("--cflags", function()
  it("adds to the default flags: the object is still a shared one, built -O3 -march=native", function()
    local r = run({"survey", "--loop", "flagged.c", "--cflags", "-DWANT_FLAG", "-e", "task-clock", "--n", "64K",
      "-r", "2", "--out", "f.jsonl"})
    assert.are.equal(0, r.code, r.err)
    local hdr = cjson.decode(h.slurp(dir .. "/f.jsonl"):match("^[^\n]+"))
    assert.are.equal(loops.CFLAGS .. " -DWANT_FLAG", hdr.loops[1].cflags)
    assert.matches(loops.CFLAGS .. " -DWANT_FLAG -I ", hdr.loops[1].command, 1, true)
    os.remove(dir .. "/f.jsonl")
  end)

  it("with --no-default-cflags are the user's alone: without -shared the linker says so", function()
    local r = run({"survey", "--loop", "flagged.c", "--no-default-cflags", "--cflags", "-O1 -DWANT_FLAG",
      "-e", "task-clock"})
    assert.are.equal(2, r.code, r.err)
    assert.matches("cannot build flagged.c (cc -O1 -DWANT_FLAG): ", r.err, 1, true)
    assert.matches("main", r.err)   -- the linker's own words: no -shared, a program without main
    r = run({"survey", "--loop", "flagged.c", "--no-default-cflags", "--cflags", "-O1 -DWANT_FLAG -shared -fPIC",
      "-e", "task-clock", "--n", "64K", "-r", "2", "--json"})
    assert.are.equal(0, r.code, r.err)
    assert.is_not_nil(by_kernel(r.out).loop, r.out)
    local help = run({"survey", "--help"}).out
    assert.matches("--cflags[^\n]*added", help)
    assert.matches("--no-default-cflags", help, 1, true)
  end)

  it("is bench-stream's too", function()
    local r = run({"bench-stream", "--loop", "flagged.c", "--n", "64K", "--rounds", "1"})
    assert.are.equal(2, r.code)
    assert.matches("give %-DWANT_FLAG", r.err)   -- the compiler's #error
    r = run({"bench-stream", "--loop", "flagged.c", "--cflags", "-DWANT_FLAG", "--n", "64K", "--rounds", "1", "--json"})
    assert.are.equal(0, r.code, r.err)
    assert.are.equal("loop", select(2, h.json_lines(r.out))[1].context.loop)
    r = run({"bench-stream", "--loop", "scale2.c:scale2", "--n", "64K", "--rounds", "1", "--json"})
    assert.are.equal(0, r.code, r.err)   -- the plain driver runs a descriptor's static function
  end)
end)

describe("a loop that fails validation", function()
  it("raises an error of kind validation with no position", function()
    local l = assert(stream.loop(dir .. "/stencil.c", "stencil"))
    local s = assert(stream.new{n = 1 << 16, threads = 1, quiet = true})
    local ok, e = pcall(s.run, s, l, {reps = 1})
    assert.is_false(ok)
    assert.is_true(errors.is(e, "validation"))
    assert.are.equal("stencil", e.kernel)
    assert.matches("^validation failed: array a", tostring(e))
    s:close(); l:close()
  end)

  it("is left out of the survey with one line saying what to do, the others measured", function()
    local r = run({"survey", "--loop", "stencil.c:stencil", "--loop", "triad3.c:triad3", "--loop", "dot.c:dot",
      "-k", "triad", "-e", "task-clock", "--n", "64K", "-r", "2", "--json"})
    assert.are.equal(0, r.code, r.err)
    local k = by_kernel(r.out)
    assert.is_not_nil(k.triad, r.out)
    assert.is_not_nil(k.triad3, r.out)
    assert.is_not_nil(k.dot, r.out)
    assert.is_nil(k.stencil)
    local said = {}
    for line in r.err:gmatch("[^\n]+") do if line:find("stencil", 1, true) then said[#said + 1] = line end end
    assert.are.equal(1, #said, r.err)
    assert.matches("^pmcsh survey: %-%-loop stencil%.c:stencil left out: validation failed", said[1])
    assert.matches(".reference", said[1], 1, true)
    assert.matches("own data", said[1], 1, true)
    no_position(r.err)
  end)

  it("only after its first runs stops the survey saying what to do, no position", function()
    local r = run({"survey", "--loop", "drift.c:drift", "-e", "task-clock", "--n", "64K", "-r", "4", "-t", "1"})
    assert.are.equal(1, r.code, r.err)
    assert.matches("pmcsh survey: validation failed: array a[^\n]*kernel drift[^\n]*own data", r.err)
    no_position(r.err)
  end)

  it("alone, is refused with that line, exit 2; on its own data, as the line says, it is measured", function()
    local r = run({"survey", "--loop", "stencil.c:stencil", "-e", "task-clock"})
    assert.are.equal(2, r.code, r.err)
    assert.matches("left out: validation failed.*own data.*nothing else to measure", r.err)
    assert.are.equal("", r.out)
    no_position(r.err)
    r = run({"survey", "--loop", "stencil_own.c:stencil_own", "-e", "task-clock", "--n", "64K", "-r", "2", "--json"})
    assert.are.equal(0, r.code, r.err)
    assert.is_not_nil(by_kernel(r.out).stencil_own, r.out)
  end)
end)

describe("f_init_part", function()
  it("is told its thread's part, exactly the elements the loop is given on that thread", function()
    local log = dir .. "/parts.log"
    local flags = {cflags = string.format('-DPART_LOG="%s"', log)}
    local l = assert(stream.loop(dir .. "/part.c", "part", flags))
    assert.are.same({"own", true, true}, {l:info().convention, l:info().init, l:info().init_part})
    local threads = math.min(2, #stream.machine().cpus)
    local n = 1 << 16
    local s = assert(stream.new{n = n, threads = threads, quiet = true, touch = false})
    os.remove(log)
    -- whole windows and the pairs' head and tail windows
    assert(s:run(l, {reps = 2}))
    assert(s:run(l, {reps = 4, alternate = true}))
    local parts, inits = s:parts(), 0
    for line in h.slurp(log):gmatch("[^\n]+") do
      local what, t, b, e = line:match("^(%a+) (%-?%d+) (%d+) (%d+)$")
      assert.are.equal("init", what, line)   -- never a range outside the part told
      local p = parts[tonumber(t) + 1]
      assert.are.same({p.first - 1, p.first - 1 + p.count}, {tonumber(b), tonumber(e)})
      inits = inits + 1
    end
    assert.are.equal(2 * threads, inits)   -- once per thread and run
    local covered = 0
    for _, p in ipairs(parts) do covered = covered + p.count end
    assert.are.equal(n, covered)
    s:close(); l:close()
  end)

  it("leaves a version-1 descriptor's init as it was: told n", function()
    local log = dir .. "/v1.log"
    local l = assert(stream.loop(dir .. "/v1.c", "old", {cflags = string.format('-DPART_LOG="%s"', log)}))
    assert.are.same({"own", true, false}, {l:info().convention, l:info().init, l:info().init_part})
    local s = assert(stream.new{n = 4096, threads = 1, quiet = true, touch = false})
    assert(s:run(l, {reps = 1}))
    assert.are.equal("n 4096 0 1\n", h.slurp(log))
    s:close(); l:close()
  end)
end)

describe("--loop FILE without :SYMBOL", function()
  it("looks for the default symbol loop, which --help names, and its error names it", function()
    local r = run({"survey", "--loop", "dot.c", "-e", "task-clock"})
    assert.are.equal(2, r.code)
    assert.matches("dot.c exports no symbol loop (the default when none is named)", r.err, 1, true)
    assert.matches("dot.c:SYMBOL", r.err, 1, true)
    no_position(r.err)
    assert.matches("SYMBOL default: loop", run({"survey", "--help"}).out, 1, true)
    assert.matches("SYMBOL default: loop", run({"bench-stream", "--help"}).out, 1, true)
  end)
end)

describe("a loop's ISA", function()
  it("is read from its own code: a scalar -O2 dot product is scalar, a vectorised triad its widest register", function()
    if not h.need(h.have("objdump"), "objdump (binutils) reads the loop's code") then return end
    local dot = assert(stream.loop(dir .. "/dot.c", "dot", {cflags = "-O2 -shared -fPIC", default_cflags = false}))
    local s = assert(stream.new{n = 1 << 16, threads = 1, quiet = true})
    local r = assert(s:run(dot, {reps = 1}))
    assert.are.equal("scalar", r.isa)
    assert.matches("scalar loop", tostring(r), 1, true)
    -- every instruction of its loop scalar: no packed double in it
    for _, line in ipairs(stream.disasm(dot).lines) do assert.not_matches("pd%s", line) end
    local tri = assert(stream.loop(dir .. "/triad3.c", "triad3"))
    local d = assert(stream.disasm(tri))
    local widest = "scalar"
    for _, reg in ipairs({"xmm", "ymm", "zmm"}) do
      for _, line in ipairs(d.lines) do
        if line:match("p[sd]%s") and line:find("%" .. reg, 1, true) and not line:match("mov%a*%s+%%") then widest = reg end
      end
    end
    if d.lines[1] and d.lines[1]:match("%%") then   -- x86's listing
      assert.are.equal(widest, assert(s:run(tri, {reps = 1})).isa)
    end
    s:close(); dot:close(); tri:close()
  end)
end)

describe("every refusal", function()
  it("names its reason: no such file, the compiler's message, the symbol not exported", function()
    for _, recipe in ipairs({"survey", "bench-stream"}) do
      local r = run({recipe, "--loop", "nosuch.c:f"})
      assert.are.equal(2, r.code, r.err)
      assert.matches("nosuch.c: No such file or directory", r.err, 1, true)
      no_position(r.err)
      r = run({recipe, "--loop", "bad.c:f"})
      assert.are.equal(2, r.code, r.err)
      assert.matches("cannot build bad.c", r.err, 1, true)
      assert.matches("bad.c:1:%d+: error: expected expression", r.err)
      no_position(r.err)
      r = run({recipe, "--loop", "scale2.c:nosuch"})
      assert.are.equal(2, r.code, r.err)
      assert.matches("scale2.c exports no symbol nosuch (a static function is not exported)", r.err, 1, true)
    end
  end)
end)
