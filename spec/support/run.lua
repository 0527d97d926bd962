-- Runs busted with pmcsh as the interpreter: `pmcsh spec/support/run.lua [busted args] [paths]`.
local here = arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/?.lua;" .. package.path
local args = {"-o", here .. "/summary.lua", "--pattern=_spec%.lua$"}
for i = 1, #arg do args[#args + 1] = arg[i] end
if #arg == 0 then args[#args + 1] = "spec" end
args[0] = "busted"
arg = args
require("busted.runner")({standalone = false})
