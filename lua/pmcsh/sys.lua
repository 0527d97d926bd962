-- The operating system as recipes use it: files and folders, the clock,
-- the terminal, Ctrl-C, and the errno names callers decide on (the
-- facade over pmcsh._sys; only lua/pmcsh reaches the C module).
local C = require("pmcsh._sys")
local doc = require("pmcsh.help").doc

local M = {}

for _, name in ipairs({"EINTR", "EPERM", "ENOENT", "ENXIO", "EACCES", "ENODEV", "EINVAL", "ENOSYS", "EOPNOTSUPP",
                       "EAGAIN", "EWOULDBLOCK", "EBUSY", "ESRCH", "ENOMEM"}) do
  M[name] = C[name]
end

M.stat = doc(function(path) return C.stat(path) end, "sys.stat", [[
sys.stat(path) -> {type = "file"|"dir"|"other", size =} | nil, msg, errno]])

M.dir = doc(function(path) return C.dir(path) end, "sys.dir", [[
sys.dir(path) -> the names in a folder (unsorted, no . or ..) | nil, msg, errno]])

M.realpath = doc(function(path) return C.realpath(path) end, "sys.realpath", [[
sys.realpath(path) -> the absolute path, links, . and .. resolved | nil, msg, errno]])

M.now = doc(function() return C.now() end, "sys.now", [[
sys.now() -> seconds on the monotonic clock (a difference of two is a duration)]])

M.sleep = doc(function(s) return C.sleep(s) end, "sys.sleep", [[
sys.sleep(seconds) -> sleeps; Ctrl-C ends it early (sys.interrupted() says so)]])

M.getpid = doc(function() return C.getpid() end, "sys.getpid", [[
sys.getpid() -> this process's id]])

M.isatty = doc(function(stream) return C.isatty(stream) end, "sys.isatty", [[
sys.isatty("stdin"|"stdout"|"stderr") -> whether it is a terminal]])

M.columns = doc(function(stream) return C.columns(stream) end, "sys.columns", [[
sys.columns("stdout") -> the terminal's width in columns, or nil]])

M.interrupted = doc(function() return C.interrupted() end, "sys.interrupted", [[
sys.interrupted() -> whether Ctrl-C was pressed during this command]])

return doc(M, "sys", [[
sys: the operating system as recipes use it.
  sys.stat(path), sys.dir(path), sys.realpath(path)   files and folders
  sys.now(), sys.sleep(s), sys.getpid()                the clock, this process
  sys.isatty(stream), sys.columns(stream)              the terminal
  sys.interrupted()                                    Ctrl-C during this command
  sys.EINTR, sys.ENOENT, sys.EACCES, ...               errno values, to compare
      with the third value of a nil, message, errno answer]])
