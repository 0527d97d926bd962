-- Driver (spec/fuzz/lua.c): a survey results file (JSON lines) read as
-- `pmcsh survey --report FILE` reads it: pmcsh.results checks each line,
-- survey.load builds the state, and the table, CSV and JSON are rendered
-- from it with each statistic.  nil and a message is the reader's answer
-- to a bad file; an error raised anywhere, after the reader accepted the
-- file, is a finding.
local survey = require("pmcsh.survey")
local path = os.tmpname()

return function(data)
  local f = assert(io.open(path, "wb"))
  assert(f:write(data))
  f:close()
  local st, err = survey.load(path)
  if not st then
    assert(type(err) == "string", "load failed without a message")
    return
  end
  for _, stat in ipairs({"mean", "median", "min", "max"}) do
    assert(type(survey.report(st, {stat = stat})) == "string")
  end
  assert(type(survey.csv(st, {})) == "string")
  assert(type(survey.json(st, {})) == "string")
end
