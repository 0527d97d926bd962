local R = require("pmcsh._regions")
local evs = {}
for i = 1, tonumber(arg[1]) do evs[i] = "instructions:u" end
local enc = assert(R.encode(evs))
print(enc)
os.execute("rm -rf /tmp/d && mkdir -p /tmp/d")
os.execute("PMCSH_MARKER_DIR=/tmp/d PMCSH_MARKER_EVENTS='" .. enc .. "' spec/lab/regions/lab_regions 1000 2000 0 p10 p20 i10 i20")
for f in io.popen("ls /tmp/d"):read("a"):gmatch("%S+") do
  local t = assert(R.read("/tmp/d/" .. f))
  print(require("cjson").encode(t.cost))
  for _, th in ipairs(t.threads) do print("user_read", th.user_read) end
  for _, r in ipairs(t.regions) do print(r.name, r.threads[1].inclusive[1], r.threads[1].calls) end
end
