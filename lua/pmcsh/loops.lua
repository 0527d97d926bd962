-- The user's own loops (include/pmcsh/loop.h): a shared object loaded, or a
-- .c/.s file built first with $CC (cached by content: the same source and
-- command build once), as a kernel the STREAM engine runs as it runs its
-- own (s:run(loop, {...})).
local C = require("pmcsh._stream")
local csys = require("pmcsh._sys")
local doc = require("pmcsh.help").doc
local errors = require("pmcsh.errors")
local sys = require("pmcsh.sys")
local text = require("pmcsh.text")

local M = {}

M.CC = "cc"
M.CFLAGS = "-O3 -march=native -shared -fPIC"

-- FNV-1a, 64 bits: a cache key, not a defence (the cache is the user's own).
local function digest(s)
  local h = -3750763034362895579   -- 14695981039346656037
  for i = 1, #s do h = (h ~ s:byte(i)) * 1099511628211 end
  return string.format("%016x", h)
end

local function cache_dir()
  local base = os.getenv("XDG_CACHE_HOME")
  if not base or base == "" then
    local home = os.getenv("HOME")
    base = (home and home ~= "" and home or "/tmp") .. "/.cache"
  end
  return base .. "/pmcsh/loops"
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

-- The shared object (or, with suffix "", the program) built from `path`
-- with cc and cflags, from the cache when the same source was built with
-- the same command: object, command; nil, message, errno (the compiler's
-- own message).
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
  local dir = cache_dir()
  local object = string.format("%s/%s%s", dir, digest(cc .. "\0" .. cflags .. "\0" .. path:match("[^.]*$") .. "\0" .. src),
    suffix or ".so")
  local command = string.format("%s %s -o %s %s", cc, cflags, text.shell(object), text.shell(path))
  local st = sys.stat(object)
  if st and st.type == "file" and st.size > 0 then return object, command end
  local ok, merr, merrno = sys.mkdirs(dir)
  if not ok then return nil, string.format("cannot make the loops' cache %s: %s", dir, merr), merrno end
  -- built beside its name, then renamed: a build stopped half way is never taken
  local tf, tmp = csys.mkstemp(object)
  if not tf then return nil, tmp end
  tf:close()
  local errf = os.tmpname()
  local run = string.format("%s %s -o %s %s 2>%s", cc, cflags, text.shell(tmp), text.shell(path), text.shell(errf))
  local built = os.execute(run)
  local ef = io.open(errf, "r")
  local said = ef and ef:read("a") or ""
  if ef then ef:close() end
  os.remove(errf)
  if built ~= true then
    os.remove(tmp)
    return nil, string.format("cannot build %s (%s %s): %s", path, cc, cflags,
      said ~= "" and text.inert(said:gsub("%s+$", ""), true) or "the compiler failed"), sys.ENOEXEC
  end
  ok, merr = os.rename(tmp, object)
  if not ok then os.remove(tmp); return nil, merr end
  return object, command
end

-- A loop, open: the engine's handle (s:run takes it as a kernel's name),
-- with what it was made from.
M.open = doc(function(path, symbol, opts)
  errors.check("loop", 1, path, "string")
  errors.check("loop", 2, symbol, "string?")
  errors.check("loop", 3, opts, "table?")
  opts = opts or {}
  local object, command = path, nil
  if source(path) then
    local err, errno
    object, err, errno = M.build(path, opts.cflags)
    if not object then return nil, err, errno end
    command = err
  end
  local l, msg, errno = C.loop(object, symbol, path)
  if not l then return nil, msg, errno end
  M.made[l] = {source = object ~= path and path or nil, object = object, command = command}
  return l
end, "stream.loop", [[
stream.loop(path[, symbol][, opts]) -> loop, or nil, message, errno (opts: {cflags=})
Your own loop (include/pmcsh/loop.h), for s:run(loop, {...}) and
s:measure as a kernel's name: path is a shared object, or a .c/.s file
built with $CC (default cc) -O3 -march=native -shared -fPIC (cflags=
replaces the flags) into ~/.cache/pmcsh/loops, once per source and
command.  symbol: the loop (default "loop").  A bare symbol is STREAM's
convention, double f(a, b, c, s, n), unless the object exports f_init:
then it is void f(state, begin, end) on its own data.  loop:info() says
which, and what it reads, writes and moves; errno ENOENT (no file or
symbol), ENOEXEC (not a shared object of this machine, or it did not
build: the compiler's message), EINVAL (a descriptor pmcsh cannot use).]])

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
  for k, v in pairs(M.made[l] or {}) do i[k] = v end
  return i
end

local loop_methods = C.loop_methods
doc(loop_methods.info, "loop:info", [[
loop:info() -> {name=, symbol=, path=, convention="stream"|"own", description=,
  described=, probed=, reference=, reads=, writes=, reduction=, loads=, stores=, bytes=,
  bytes_wa=, flops=, elements_per_trip=, init=, fini=}
The loop as the engine runs it.  STREAM's convention: the arrays read and
written (from its descriptor, else found by running it on one element of
each, probed=true) give loads, stores and bytes per element as for the
built-ins; its own data: bytes and flops as its descriptor says (absent
where it says nothing).]])
doc(loop_methods.close, "loop:close", [[
loop:close(): unloads the shared object (also on garbage collection and
<close>); using the loop afterwards raises an error.]])

return M
