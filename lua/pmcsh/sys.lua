-- The operating system as recipes use it: files and folders, the clock,
-- the terminal, Ctrl-C, and the errno names callers decide on (the
-- facade over pmcsh._sys; only lua/pmcsh reaches the C module).
local C = require("pmcsh._sys")
local doc = require("pmcsh.help").doc
local errors = require("pmcsh.errors")
local paths = require("pmcsh.paths")

local M = {}

for _, name in ipairs({"EINTR", "EPERM", "ENOENT", "ENXIO", "EACCES", "ENODEV", "EINVAL", "ENOSYS", "EOPNOTSUPP",
                       "EAGAIN", "EWOULDBLOCK", "EBUSY", "ESRCH", "ENOMEM", "EEXIST", "ENOEXEC", "ELOOP", "ENOLCK",
                       "ENOTSUP", "EISDIR"}) do
  M[name] = C[name]
end

M.stat = doc(function(path, link) return C.stat(path, link) end, "sys.stat", [[
sys.stat(path[, link]) -> {type = "file"|"dir"|"link"|"other", size =, uid =, mode =} | nil, msg, errno
  (with link true a link is itself, "link", not what it points to)]])

M.dir = doc(function(path) return C.dir(path) end, "sys.dir", [[
sys.dir(path) -> the names in a folder (unsorted, no . or ..) | nil, msg, errno]])

M.realpath = doc(function(path) return C.realpath(path) end, "sys.realpath", [[
sys.realpath(path) -> the absolute path, links, . and .. resolved | nil, msg, errno]])

M.now = doc(function() return C.now() end, "sys.now", [[
sys.now() -> seconds on the monotonic clock (a difference of two is a duration)]])

M.sleep = doc(function(s) return C.sleep(s) end, "sys.sleep", [[
sys.sleep(seconds) -> sleeps; Ctrl-C ends it early (sys.interrupted() says so)]])

M.geteuid = doc(function() return C.geteuid() end, "sys.geteuid", [[
sys.geteuid() -> this process's effective user id (0: root)]])

M.getpid = doc(function() return C.getpid() end, "sys.getpid", [[
sys.getpid() -> this process's id]])
M.numeric_locale = doc(function() return C.numeric_locale() end, "sys.numeric_locale", [[
sys.numeric_locale() -> {thousands_sep=, decimal_point=, grouping={3,...}}: the
  environment's number conventions (LC_ALL, LC_NUMERIC, LANG), as perf stat's
  -B reads them; pmcsh's own stay C's]])

M.isatty = doc(function(stream) return C.isatty(stream) end, "sys.isatty", [[
sys.isatty("stdin"|"stdout"|"stderr") -> whether it is a terminal]])

M.columns = doc(function(stream) return C.columns(stream) end, "sys.columns", [[
sys.columns("stdout") -> the terminal's width in columns, or nil]])

M.interrupted = doc(function() return C.interrupted() end, "sys.interrupted", [[
sys.interrupted() -> whether Ctrl-C was pressed during this command]])

-- Files as a careful Unix tool writes them: pmcsh never writes through a
-- link another user planted, never adopts another user's file, and
-- replaces a file whole or not at all.  A path with a NUL byte is a bad
-- argument (_sys's check), raised at the caller (errors.facade).


-- A folder's real path where every folder to it is this user's or root's
-- and written by nobody else (C.private), else nil and why: the path used
-- from then on is the one checked, never the name re-resolved.
function M.private_real(p)
  local real = C.realpath(p)
  if not real then return nil, p .. ": no such folder" end
  local ok, why = C.private(real)
  if not ok then return nil, why end
  return real
end

-- The one rule for code pmcsh takes from a file (a recipe, a cached loop,
-- a loop a results file names): the file regular, this user's or root's,
-- written by nobody else, in a folder private_real accepts.  Its real
-- path, or nil and why.
function M.code_file(path)
  if path:find("\0", 1, true) then return nil, "a path with a NUL byte" end
  local real = C.realpath(path)
  if not real then return nil, path .. ": no such file" end
  local st = C.stat(real)
  if not st or st.type ~= "file" then return nil, real .. ": not a regular file" end
  if (st.uid ~= C.geteuid() and st.uid ~= 0) or st.mode & 18 ~= 0 then   -- 18: 0022, group/other write
    return nil, real .. " is a file another user can write or owns: pmcsh runs no code from it"
  end
  local dir = real:match("^(.*)/[^/]*$")
  local ok, why = M.private_real(dir ~= "" and dir or "/")
  if not ok then return nil, why end
  return real
end

-- The events/ folder: beside the binary or installed (pmcsh.paths), else ./events.
function M.events_dir()
  return paths.events or "events"
end

-- A data file (events/): Lua text run in an empty environment, so it names
-- no function it could call; its table, or nil and a message.
function M.load_data(path)
  local chunk, err = loadfile(path, "t", {})
  if not chunk then return nil, string.format("cannot load %s: %s", path, err) end
  local ok, t = pcall(chunk)
  if not ok then return nil, string.format("cannot load %s: %s", path, t) end
  if type(t) ~= "table" then return nil, string.format("%s does not return a table", path) end
  return t
end

-- Where a private folder of pmcsh's own is made (C.mkdtemp): /tmp (sticky:
-- nobody renames it), $TMPDIR only where it is as private.
function M.scratch()
  local t = os.getenv("TMPDIR")
  return t and t ~= "" and M.private_real(t) or "/tmp"
end

M.open = doc(errors.facade("open", function(path, how)
  errors.check("open", 1, path, "string")
  errors.check("open", 2, how, "string")
  return C.open(path, how)
end), "sys.open", [[
sys.open(path, how) -> file, size, kind | nil, msg, errno
  how "new":    a new file, made here; never an existing name, never through
                a link (errno sys.EEXIST)
  how "append": an existing file, to read and add to: a regular file of this
                user's with no other name (kind "file"), or a device or FIFO of
                this user's or root's ("device")
  how "read":   a regular file; a FIFO, a device or a file of procfs or sysfs is
                refused, never waited on
  on the way, a link is followed only where it is this user's or root's, in a
  folder nobody else writes or a sticky one (else sys.ELOOP)]])

-- A file to write, as perf's -o: a new one, or an existing one of this
-- user's emptied (kept where append), never through another user's link.
M.create = doc(errors.facade("create", function(path, append)
  errors.check("create", 1, path, "string")
  local f, size, kind = C.open(path, "new")
  if f then return f, 0, kind, true end
  if size == nil or kind ~= M.EEXIST then return f, size, kind end
  f, size, kind = C.open(path, "append")
  if f and kind == "file" and not append and size > 0 then
    local ok, err, errno = C.truncate(f, 0)
    if not ok then f:close(); return nil, err, errno end
    size = 0
  end
  return f, size, kind, false
end), "sys.create", [[
sys.create(path[, append]) -> file, size, kind, made | nil, msg, errno
  a file to write: made when missing (made true), emptied when it is this
  user's (kept with append true); never another user's, never through a
  link sys.open would not follow]])

-- fill(file) -> true | nil, msg: writes the content; an error or nil
-- leaves path as it was.
M.replace = doc(errors.facade("replace", function(path, fill)
  errors.check("replace", 1, path, "string")
  errors.check("replace", 2, fill, "function")
  local f, tmp, errno = C.replacement(path)   -- in path's folder as walked now, renamed there
  if not f then return nil, tmp, errno end
  local r = table.pack(pcall(fill, f))
  local ok, err = r[1] and r[2], r[1] and r[3] or r[2]
  if ok then
    local flushed, ferr = f:flush()
    if not flushed then ok, err = nil, ferr end
  end
  local closed, cerr = f:close()
  if ok and not closed then ok, err = nil, cerr end
  if ok then return tmp:commit() end
  tmp:discard()
  if not r[1] then error(r[2], 0) end
  return nil, err
end), "sys.replace", [[
sys.replace(path, fill) -> true | nil, msg, errno
  writes path whole or not at all: fill(file) writes a new file beside it
  (a name nobody can guess, made here), renamed over path once fill returns
  true and the data is written; on nil, msg or an error path is as it was]])

-- Makes path and the folders above it that are missing.
M.mkdirs = doc(errors.facade("mkdirs", function(path, mode)
  errors.check("mkdirs", 1, path, "string")
  errors.check("mkdirs", 2, mode, "number?")
  return C.mkdir(path, mode)
end), "sys.mkdirs", [[
sys.mkdirs(path[, mode]) -> true | nil, msg, errno: the folder and those above it, made where
  missing (with mode, default 0777, under the umask); a link on the way is followed only where
  it is this user's or root's]])

return doc(M, "sys", [[
sys: the operating system as recipes use it.
  sys.stat(path), sys.dir(path), sys.realpath(path)   files and folders
  sys.open(path, how), sys.create(path), sys.replace(path, fill), sys.mkdirs(path)
                                                      files written safely
  sys.now(), sys.sleep(s), sys.getpid()                the clock, this process
  sys.isatty(stream), sys.columns(stream)              the terminal
  sys.interrupted()                                    Ctrl-C during this command
  sys.EINTR, sys.ENOENT, sys.EACCES, ...               errno values, to compare
      with the third value of a nil, message, errno answer]])
