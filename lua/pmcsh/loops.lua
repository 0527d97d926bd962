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
-- for this process only, in a private folder).
local function cache_dir()
  local base, why = os.getenv("XDG_CACHE_HOME"), nil
  if base and base ~= "" then
    local parent, name = base:match("^(.*)/([^/]+)/*$")
    local checked = not sys.realpath(base) and parent and sys.private_real(parent ~= "" and parent or "/")
    if checked then sys.mkdirs(checked .. "/" .. name) end   -- made only in a folder checked first
    base, why = sys.private_real(base)
  else
    local home = os.getenv("HOME")
    if not home or home == "" then return nil, "no HOME or XDG_CACHE_HOME to keep it in" end
    base, why = sys.private_real(home)
    base = base and base .. "/.cache"
  end
  if not base then return nil, why end
  local dir = base .. "/pmcsh/loops"
  local ok, err = sys.mkdirs(dir)
  if not ok then return nil, err end
  return sys.private_real(dir)
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

-- The words of a command line, each quoted for the shell: flags from a
-- file (a resumed survey's) are never commands.
local function words(str)
  local t = {}
  for w in str:gmatch("%S+") do t[#t + 1] = text.shell(w) end
  return table.concat(t, " ")
end

local function slurp(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

-- The shared object (or, with suffix "", the program) built from `path`
-- with cc and cflags: object, command and, where nothing is cached, the
-- private folder it lies in (the caller's to remove); nil, message, errno
-- (the compiler's own message).  The source is preprocessed once, into a private folder
-- (its own folder kept for "..." includes); the cache key is the command,
-- the source's place and that output, and the compiler builds that very
-- output: no header or source swapped in between is ever built under a
-- key made of other bytes (an edited header builds again).
function M.build(path, cflags, suffix)
  errors.check("build", 1, path, "string")
  errors.check("build", 2, cflags, "string?")
  errors.check("build", 3, suffix, "string?")
  local f, ferr, errno = sys.open(path, "read")
  if not f then return nil, ferr, errno end
  local src = f:read("a")
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
  local cache = cache_dir()
  local work, werr, werrno = csys.mkdtemp((cache or sys.scratch()) .. "/.build-")
  if not work then return nil, "cannot make a folder to build in: " .. tostring(werr), werrno end
  local function cleanup(keep)
    for _, n in ipairs({"src." .. ext, "pp.i", "pp.s", "err"}) do os.remove(work .. "/" .. n) end
    if not keep then os.remove(work .. "/out") end
    os.remove(work)
  end
  local copy = work .. "/src." .. ext
  local cf = io.open(copy, "wb")
  if not cf then cleanup(); return nil, "cannot write " .. copy end
  -- messages name the user's file, not the copy (.s has no line markers)
  cf:write(ext ~= "s" and string.format("# 1 %q\n", path) or "", src)
  cf:close()
  local function fail(said)
    cleanup()
    return nil, string.format("cannot build %s (%s %s): %s", path, cc, cflags,
      said ~= "" and text.inert(said:gsub("%s+$", ""), true) or "the compiler failed"), sys.ENOEXEC
  end
  -- one preprocessing, whose output is both the key and what is compiled
  local input = copy
  if ext ~= "s" then
    input = work .. (ext == "S" and "/pp.s" or "/pp.i")
    if os.execute(string.format("%s %s%s -iquote %s -E -o %s %s 2>%s", cc, words(cflags), incflag, text.shell(srcdir),
        text.shell(input), text.shell(copy), text.shell(work .. "/err"))) ~= true then
      return fail(slurp(work .. "/err") or "")
    end
  end
  -- the private folder's own name (in the line markers) is not part of the key
  local pp = (slurp(input) or ""):gsub(work:gsub("%p", "%%%0"), "")
  local name = digest(table.concat({cc, cflags, real, ext, pp}, "\0")) .. (suffix or ".so")
  local object = cache and (cache .. "/" .. name)
  local command = string.format("%s %s%s -o %s %s", cc, cflags, incflag, text.shell(object or name), text.shell(path))
  local st = object and sys.stat(object, true)
  if st and st.type == "file" and st.size > 0 and st.uid == csys.geteuid() then cleanup(); return object, command end
  local out = work .. "/out"
  if os.execute(string.format("%s %s -o %s %s 2>%s", cc, words(cflags), text.shell(out), text.shell(input),
      text.shell(work .. "/err"))) ~= true then
    return fail(slurp(work .. "/err") or "")
  end
  if not object then   -- no cache: the build stays in its private folder while its loop lives
    cleanup(true)
    return out, command, work
  end
  local ok, merr = os.rename(out, object)
  cleanup()
  if not ok then return nil, merr end
  return object, command
end

-- A loop, open: the engine's handle (s:run takes it as a kernel's name),
-- with what it was made from.
M.open = doc(function(path, symbol, opts)
  errors.check("loop", 1, path, "string")
  errors.check("loop", 2, symbol, "string?")
  errors.check("loop", 3, opts, "table?")
  opts = opts or {}
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
