-- Driver (spec/fuzz/lua.c): the loop fields of a survey header read back
-- for --resume (pmcsh survey --resume FILE): a results file (input that
-- starts with "{") read by survey.load, its header's loops then judged as
-- a resume judges them (engine_stream.loop.resume, nothing named again);
-- any other input is a cflags string judged by loops.file_flags.  nil and
-- a message is the answer to a bad file; an error raised is a finding, and
-- so is an accepted flag that could make the compiler run, load, read or
-- write something it names (checked here by its own rules, not the
-- allow-list's patterns).
local survey = require("pmcsh.survey")
local engine_stream = require("pmcsh.survey.engine_stream")
local loops = require("pmcsh.loops")
local sys = require("pmcsh.sys")
local path = os.tmpname()

local REFUSED = {"-B", "-X", "-x", "-o", "-l", "-L", "-i", "-specs", "-wrapper", "-fplugin", "-fpass-plugin", "-fuse-ld",
  "-fprofile", "-fdump", "-Wl,", "-Wa,", "-Wp,", "-mllvm", "-save-temps", "--"}

local function harmless(cflags)
  for w in cflags:gmatch("%S+") do
    assert(w:sub(1, 1) == "-", "a bare word accepted: " .. w)
    assert(not w:find("/", 1, true) or w:match("^%-I/"), "a path accepted: " .. w)
    for _, bad in ipairs(REFUSED) do assert(w:sub(1, #bad) ~= bad, "accepted: " .. w) end
    assert(not w:find("[@$`'\"\\;|&<>(){}]"), "a shell or response-file character accepted: " .. w)
    assert(not (w:match("^%-W") and w:find(",", 1, true)), "options passed on accepted: " .. w)
  end
end

return function(data)
  if data:sub(1, 1) ~= "{" then
    local ok, why = loops.file_flags(data)
    if ok then harmless(data) else assert(type(why) == "string", "file_flags refused without a message") end
    return
  end
  local f = assert(io.open(path, "wb"))
  assert(f:write(data))
  f:close()
  local st, err = survey.load(path)
  if not st then
    assert(type(err) == "string", "load failed without a message")
    return
  end
  local ok, why = engine_stream.loop.resume(st.header, {}, true)
  if not ok then
    assert(type(why) == "string", "resume refused without a message")
    return
  end
  for _, l in ipairs(st.header.loops or {}) do
    if l.cflags then harmless(l.cflags) end
    assert(sys.code_file(l.path), "a loop file another user writes accepted: " .. l.path)
  end
end
