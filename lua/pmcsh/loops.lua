-- The user's own loops (include/pmcsh/loop.h): a shared object loaded, or a
-- .c/.s file built first with $CC (cached by content: the same source and
-- command build once), as a kernel the STREAM engine runs as it runs its
-- own (s:run(loop, {...})).
local C = require("pmcsh._stream")
local csys = require("pmcsh._sys")
local doc = require("pmcsh.help").doc
local errors = require("pmcsh.errors")
local paths = require("pmcsh.paths")
local sys = require("pmcsh.sys")
local text = require("pmcsh.text")
local format = require("pmcsh.format")

local M = {}

M.CC = "cc"
M.CFLAGS = "-O3 -march=native -shared -fPIC"
M.MAX_SOURCE = 16 << 20   -- bytes of a loop's source; its preprocessed text at most 4 times that
-- The build's options, as every recipe with --loop declares them.
M.OPTIONS = {
  cflags = {name = "cflags", type = "string", help = "flags added to those --loop builds a .c/.s file with (" ..
    M.CFLAGS .. ", and -I for <pmcsh/loop.h>)"},
  no_default = {name = "no-default-cflags", type = "flag",
    help = "build --loop with --cflags alone (then -shared -fPIC are yours to give)"},
}
local PRIVATE = 448       -- 0700
local STALE = 3600        -- seconds after which a .build-* folder no build uses is swept

-- The folder holding pmcsh/loop.h, which every build gets as -I: the
-- source tree's include/, or PREFIX/include beside PREFIX/share/pmcsh once
-- installed; nil when neither holds it.
function M.include()
  for _, dir in ipairs({paths.root .. "/include", paths.root .. "/../../include"}) do
    local f = io.open(dir .. "/pmcsh/loop.h")
    if f then f:close(); return sys.realpath(dir) or dir end
  end
  return nil
end

-- The flags a loop is built with: cflags added to the defaults (M.CFLAGS),
-- or, with defaults == false, cflags alone (then -shared -fPIC are yours).
function M.cflags(cflags, defaults)
  errors.check("cflags", 1, cflags, "string?")
  if defaults == false then return cflags or "" end
  return cflags and cflags:match("%S") and M.CFLAGS .. " " .. cflags or M.CFLAGS
end

-- FNV-1a, 64 bits: a cache key, not a defence (the cache is the user's own).
local function digest(s)
  local h = -3750763034362895579   -- 14695981039346656037
  for i = 1, #s do h = (h ~ s:byte(i)) * 1099511628211 end
  return string.format("%016x", h)
end

-- The cache: this user's own folder, written by nobody else (an object
-- found there is run): its path, or nil and why not (then a build is kept
-- for this process only, in a private folder).  Folders pmcsh makes are
-- 0700: a group-writable one (umask 002) would be refused the next time.
local function cache_dir()
  local base, why = os.getenv("XDG_CACHE_HOME"), nil
  if base and base ~= "" then
    local parent, name = base:match("^(.*)/([^/]+)/*$")
    local checked = not sys.realpath(base) and parent and sys.private_real(parent ~= "" and parent or "/")
    if checked then sys.mkdirs(checked .. "/" .. name, PRIVATE) end   -- made only in a folder checked first
    base, why = sys.private_real(base)
  else
    local home = os.getenv("HOME")
    if not home or home == "" then return nil, "no HOME or XDG_CACHE_HOME to keep it in" end
    base, why = sys.private_real(home)
    base = base and base .. "/.cache"
  end
  if not base then return nil, why end
  local dir = base .. "/pmcsh/loops"
  local ok, err = sys.mkdirs(dir, PRIVATE)
  if not ok then return nil, err end
  return sys.private_real(dir)
end

local told = false
-- The cache, said once per process where it cannot be used.
local function cache()
  local dir, why = cache_dir()
  if not dir and not told then
    told = true
    io.stderr:write(string.format("pmcsh: loops are built without a cache: %s\n", text.inert(tostring(why))))
  end
  return dir
end

-- "PATH[:SYMBOL]" -> path, symbol (nil when not given).
function M.split(spec)
  errors.check("split", 1, spec, "string")
  local path, symbol = spec:match("^(.*):([%a_][%w_]*)$")
  if path and path ~= "" then return path, symbol end
  return spec, nil
end

-- Whether `path` is source pmcsh builds (.c, .s, .S).
local function source(path) return path:match("%.[csS]$") ~= nil end

-- The words of a command line, each quoted for the shell.
local function words(str)
  local t = {}
  for w in str:gmatch("%S+") do t[#t + 1] = text.shell(w) end
  return table.concat(t, " ")
end

-- Flags a file may give a build (a resumed survey's header): optimisation,
-- -m..., -f... but those that load a plugin, pick a linker or tool, or
-- read or write a file, -D, -U, -std=, -g, warnings, and -I of a folder
-- of this user's (sys.private_real).  Anything else (-wrapper, -specs=,
-- @FILE, -B, -Wl,..., -x, a bare word) would be a command from the file.
local FILE_FLAGS = {"^%-O%w*$", "^%-g[%w%-]*$", "^%-std=[%w+]+$", "^%-m%w[%w_.,+=%-]*$", "^%-D[%a_][%w_]*$",
  "^%-D[%a_][%w_]*=[%w_.+%-]*$", "^%-U[%a_][%w_]*$", "^%-W%a[%w%-=]*$", "^%-w$", "^%-shared$", "^%-pipe$",
  "^%-pthread$"}
local F_REFUSED = {"plugin", "pass-plugin", "use-", "ld-", "linker", "profile", "auto-profile", "dump", "opt-info",
  "save-", "stack-usage", "callgraph-info", "compare-debug", "sanitize", "coverage", "test-coverage", "crash-",
  "module", "xray", "instrument", "debug-prefix-map", "file-prefix-map", "macro-prefix-map", "syntax-only",
  "preprocessed", "self-test", "diagnostics", "deps", "offload", "input-charset", "exec-charset", "wide-exec-charset",
  "lto", "spec", "gnu-tm", "openacc", "openmp", "embed", "debug-compilation-dir", "coverage-"}

-- words that name a file, a folder or a tool anywhere in an -f flag's name
local F_NAMING = {"plugin", "module", "file", "path", "dir", "list", "map", "linker"}

local function file_flag(w)
  for _, pat in ipairs(FILE_FLAGS) do if w:match(pat) and not w:match("^%-mllvm") then return true end end
  local name = w:match("^%-f(%w[%w%-]*)=?[%w_.,+%-]*$")
  if name then
    name = name:gsub("^no%-", "")
    for _, bad in ipairs(F_REFUSED) do
      if name:sub(1, #bad) == bad then return nil, "it loads, runs, reads or writes what it names" end
    end
    for _, bad in ipairs(F_NAMING) do
      if name:find(bad, 1, true) then return nil, "it loads, runs, reads or writes what it names" end
    end
    return true
  end
  local dir = w:match("^%-I(/[^\0]*)$")
  if dir then
    local ok, why = sys.private_real(dir)
    if ok then return true end
    return nil, "its headers are not this user's alone: " .. text.inert(tostring(why))
  end
  return nil, "not a flag a file may give (optimisation, -m, -f, -D, -U, -I, -std=, -g, -W)"
end

-- Whether cflags read from a file may build a loop: true, or nil and why.
function M.file_flags(cflags)
  errors.check("file_flags", 1, cflags, "string")
  for w in cflags:gmatch("%S+") do
    local ok, why = file_flag(w)
    if not ok then return nil, string.format("%s: %s", text.inert(w), why) end
  end
  return true
end

local function slurp(path, most)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read(most or "a")
  f:close()
  return s
end

local idents = {}
-- The compiler as it builds with cflags, for the cache key: the driver
-- PATH finds (its real path, size and time), its --version and its own
-- commands for these flags (-###: -march=native resolved to this cpu's
-- model and features, the cc1 and as it runs).  Another compiler (module
-- load gcc/13) or another node's cpu is another key.
local function compiler_id(cc, cflags)
  local key = cc .. "\0" .. cflags
  if idents[key] then return idents[key] end
  local p = io.popen(string.format("command -v %s 2>/dev/null; %s --version 2>&1; %s %s -### -E -x c /dev/null 2>&1",
    text.shell(cc:match("^%s*(%S*)")), cc, cc, words(cflags)))
  local said = p and p:read("a") or ""
  if p then p:close() end
  -- this folder's name (clang's -fdebug-compilation-dir=) is no part of the compiler
  said = said:gsub("(%-f[%w%-]*compilation%-dir=)[^\"\n]*", "%1")
  local driver = said:match("^([^\n]*)")
  local real = driver ~= "" and sys.realpath(driver)
  local st = real and sys.stat(real)
  idents[key] = string.format("%s %s %s\n%s", tostring(real), st and st.size or "", st and st.mtime or "", said)
  return idents[key]
end

-- Whether the file is an ELF shared object (e_type ET_DYN, in its byte order).
local function shared_object(file)
  local h = slurp(file, 20)
  if not h or #h < 20 or h:sub(1, 4) ~= "\127ELF" then return false end
  local t = h:byte(6) == 1 and h:byte(17) | h:byte(18) << 8 or h:byte(17) << 8 | h:byte(18)
  return t == 3
end

-- A folder's names removed, then the folder (all but `keep`, and then the folder stays).
local function remove_tree(dir, keep)
  for _, n in ipairs(sys.dir(dir) or {}) do
    if n ~= keep then os.remove(dir .. "/" .. n) end
  end
  if not keep then os.remove(dir) end
end

local swept = false
-- Build folders another pmcsh left (killed mid-build) swept once per
-- process: this user's, untouched for STALE seconds.
local function sweep(dir)
  if swept then return end
  swept = true
  for _, n in ipairs(sys.dir(dir) or {}) do
    local st = n:match("^%.build%-") and sys.stat(dir .. "/" .. n, true)
    if st and st.type == "dir" and st.uid == csys.geteuid() and os.time() - st.mtime > STALE then
      remove_tree(dir .. "/" .. n)
    end
  end
end

-- Runs a compiler command: true, or nil and what it said (a signal said as one).
local function compile(cmd, err)
  local ok, how, code = os.execute(cmd .. " 2>" .. text.shell(err))
  if ok == true then return true end
  local said = (slurp(err) or ""):gsub("%s+$", "")
  if how == "signal" then return nil, string.format("%sthe compiler was ended by signal %d", said ~= "" and said ..
    "; " or "", code), code == 2 and sys.EINTR or sys.ENOEXEC end
  return nil, said ~= "" and said or "the compiler failed", sys.ENOEXEC
end

-- The shared object (or, with suffix "", the program) built from `path`
-- with cc and cflags: object, command and, where nothing is cached, the
-- private folder it lies in (the caller's to remove); nil, message, errno
-- (the compiler's own message).  The source is preprocessed once, into a
-- private folder (its own folder kept for "..." includes); the cache key
-- is the compiler's identity (compiler_id), the command, the source's
-- place and that output, and the compiler builds that very output: no
-- header or source swapped in between is ever built under a key made of
-- other bytes (an edited header builds again).  What the assembler
-- includes (.include, .incbin) is not in that output: such a source is
-- built every time, never cached; so is an object the loader would refuse.
-- The build folder goes on every way out (an error, Ctrl-C).
function M.build(path, cflags, suffix)
  errors.check("build", 1, path, "string")
  errors.check("build", 2, cflags, "string?")
  errors.check("build", 3, suffix, "string?")
  local f, size, errno = sys.open(path, "read")
  if not f then return nil, "cannot read the loop's source " .. tostring(size), errno end
  if size > M.MAX_SOURCE then
    f:close()
    return nil, string.format("%s: %d bytes of source; a loop's is at most %d MiB", path, size, M.MAX_SOURCE >> 20),
      sys.EINVAL
  end
  local src = f:read(M.MAX_SOURCE)
  f:close()
  local cc = os.getenv("CC")
  cc = cc and cc ~= "" and cc or M.CC
  cflags = cflags or M.CFLAGS
  -- pmcsh's own headers after the user's flags: a -I of theirs is searched first
  local inc = M.include()
  local incflag = inc and " -I " .. text.shell(inc) or ""
  local ext = path:match("%.(%w+)$") or "c"
  local real = sys.realpath(path) or path
  local srcdir = real:match("^(.*)/[^/]*$") or "."
  local cache = cache()
  if cache then sweep(cache) end
  local work, werr, werrno = csys.mkdtemp((cache or sys.scratch()) .. "/.build-")
  if not work then return nil, "cannot make a folder to build in: " .. tostring(werr), werrno end
  local kept = nil
  local _ <close> = setmetatable({}, {__close = function() remove_tree(work, kept) end})
  local copy = work .. "/src." .. ext
  local cf = io.open(copy, "wb")
  if not cf then return nil, "cannot write " .. copy end
  -- messages name the user's file, not the copy (.s has no line markers)
  cf:write(ext ~= "s" and string.format("# 1 %q\n", path) or "", src or "")
  cf:close()
  local function fail(said, errno_)
    return nil, string.format("cannot build %s (%s %s): %s", path, cc, cflags, text.inert(said, true)), errno_
  end
  -- one preprocessing, whose output is both the key and what is compiled
  local input, err = copy, work .. "/err"
  if ext ~= "s" then
    input = work .. (ext == "S" and "/pp.s" or "/pp.i")
    local ok, said, e = compile(string.format("%s %s%s -iquote %s -E -o %s %s", cc, words(cflags), incflag,
      text.shell(srcdir), text.shell(input), text.shell(copy)), err)
    if not ok then return fail(said, e) end
  end
  local pst = sys.stat(input)
  if not pst or pst.size > 4 * M.MAX_SOURCE then
    return fail(string.format("its preprocessed text is over %d MiB", 4 * M.MAX_SOURCE >> 20), sys.EINVAL)
  end
  -- the private folder's own name (in the line markers) is not part of the key
  local pp = (slurp(input) or ""):gsub(work:gsub("%p", "%%%0"), "")
  local low = pp:lower()
  local includes = low:find("%.include%f[^%w_]") or low:find("%.incbin%f[^%w_]")
  local name = digest(table.concat({compiler_id(cc, cflags), cc, cflags, real, ext, pp}, "\0")) .. (suffix or ".so")
  local object = cache and not includes and (cache .. "/" .. name)
  local command = string.format("%s %s%s -o %s %s", cc, cflags, incflag, text.shell(object or name), text.shell(path))
  local st = object and sys.stat(object, true)
  if st and st.type == "file" and st.size > 0 and st.uid == csys.geteuid() then return object, command end
  local out = work .. "/out"
  local ok, said, e = compile(string.format("%s %s -o %s %s", cc, words(cflags), text.shell(out), text.shell(input)), err)
  if not ok then return fail(said, e) end
  -- no cache, or nothing to keep in it: the build stays in its private folder while its loop lives
  if not object or (suffix or ".so") == ".so" and not shared_object(out) then
    kept = "out"
    return out, command, work
  end
  local rok, merr = os.rename(out, object)
  if not rok then return nil, merr end
  return object, command
end

-- A loop, open: the engine's handle (s:run takes it as a kernel's name),
-- with what it was made from.
M.open = doc(function(path, symbol, opts)
  errors.check("loop", 1, path, "string")
  errors.check("loop", 2, symbol, "string?")
  errors.check("loop", 3, opts, "table?")
  opts = opts or {}
  if path == "" then return nil, "stream.loop: an empty path names no loop file", sys.ENOENT end
  local object, command, scratch_dir = path, nil, nil
  if source(path) then
    local built, a, b = M.build(path, M.cflags(opts.cflags, opts.default_cflags))   -- object, command, folder | nil, message, errno
    if not built then return nil, a, b end
    object, command, scratch_dir = built, a, b
  end
  -- an uncached build's folder goes with the loop (its finalizer; lua_close at exit)
  local keep = scratch_dir and setmetatable({}, {__gc = function()
    os.remove(scratch_dir .. "/out"); os.remove(scratch_dir)
  end})
  local l, msg, errno = C.loop(object, symbol, path)
  if not l then return nil, msg, errno end
  M.made[l] = {source = object ~= path and path or nil, object = object, command = command, keep = keep}
  return l
end, "stream.loop", [[
stream.loop(path[, symbol][, opts]) -> loop, or nil, message, errno
  (opts: {cflags=, default_cflags=true})
Your own loop (include/pmcsh/loop.h), for s:run(loop, {...}) and
s:measure as a kernel's name: path is a shared object, or a .c/.s file
built with $CC (default cc) -O3 -march=native -shared -fPIC, then cflags=
(added to those; default_cflags=false drops them: then -shared -fPIC are
yours to give), and -I for pmcsh's own include/ (<pmcsh/loop.h> is found
with no flag), into ~/.cache/pmcsh/loops, once per source and command.
symbol: the loop's function (default "loop").  A bare symbol is STREAM's
convention, double f(a, b, c, s, n), unless the object exports
f_init_part or f_init: then it is void f(state, begin, end) on its own
data.  loop:info() says which, and what it reads, writes and moves; errno
ENOENT (no file or symbol), ENOEXEC (not a shared object of this machine,
or it did not build: the compiler's message), EINVAL (a descriptor pmcsh
cannot use).]])

-- Whether x is a loop (stream.loop's).
function M.is(x)
  return type(x) == "userdata" and getmetatable(x) == "pmcsh.loop"   -- the class's __metatable
end

-- What the crash guard adds to the line a loop's crash prints (the
-- survey's run, and how to resume it); nil or "" clears it.
function M.note(s)
  errors.check("note", 1, s, "string?")
  C.crash_note(s or "")
end

-- What the loop was made from: {source=, object=, command=} (weak: it goes with the loop).
M.made = setmetatable({}, {__mode = "k"})

-- loop:info() with where it came from (source, object, command).
function M.info(l)
  local i = l:info()
  for k, v in pairs(M.made[l] or {}) do if k ~= "keep" then i[k] = v end end
  return i
end

format.adopt(C.loop_info_meta)   -- print(l:info()) prints what the REPL shows
local loop_methods = C.loop_methods
doc(loop_methods.info, "loop:info", [[
loop:info() -> {name=, symbol=, path=, convention="stream"|"own", description=,
  described=, probed=, reference=, reads=, writes=, reduction=, loads=, stores=, bytes=,
  bytes_wa=, flops=, elements_per_trip=, init=, init_part=, fini=}
The loop as the engine runs it.  STREAM's convention: the arrays read and
written (from its descriptor, else found by running it on one element of
each, probed=true) give loads, stores and bytes per element as for the
built-ins; its own data: bytes and flops as its descriptor says (absent
where it says nothing).]])
doc(loop_methods.close, "loop:close", [[
loop:close(): unloads the shared object (also on garbage collection and
<close>); using the loop afterwards raises an error.]])

return M
