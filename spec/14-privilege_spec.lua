-- Nothing let in: pmcsh refuses to run setuid or setgid, trusts no path from
-- the environment when the kernel marks it secure (file capabilities, as
-- admins grant cap_perfmon to perf tools), and keeps event terms to the
-- sysfs name grammar.  The setuid and capability cases need root to make
-- the copies and setpriv/setcap to use them; elsewhere they are pending.
local h = require("helpers")

local function sh(cmd)
  local p = assert(io.popen(cmd .. " 2>&1"))
  local out = p:read("a")
  local _, _, code = p:close()
  return out, code
end

local function root_tools()
  return h.is_root() and h.have("setpriv") and h.have("setcap"), "needs root, setpriv and setcap to make privileged copies"
end

-- A copy of the installed tree (binary beside lua/, scripts/, events/)
-- readable by nobody, in a fresh folder.
local function copy()
  local d = h.tmpdir()
  local root = require("pmcsh.paths").root
  sh(string.format("cp -r %s %s/lua %s/scripts %s/events %s/ && chmod -R a+rX %s",
    h.shquote(h.exe), h.shquote(root), h.shquote(root), h.shquote(root), d, d))
  return d
end

local AS_NOBODY = "cd / && setpriv --reuid=65534 --regid=65534 --clear-groups "

describe("privilege", function()
  it("refuses to run setuid, before any Lua runs", function()
    if not h.need(root_tools()) then return end
    local d = copy()
    sh("chmod u+s " .. d .. "/pmcsh")
    local out, code = sh(AS_NOBODY .. d .. "/pmcsh -e 'print(io.open(\"/etc/shadow\"):read(\"l\"))'")
    sh("rm -rf " .. d)
    assert.are.equal(1, code)
    assert.matches("refusing to run setuid or setgid", out)
    assert.not_matches("root:", out)
  end)

  it("with file capabilities counts, but takes no recipe folder, LUA_INIT or LUA_PATH from the environment", function()
    if not h.need(root_tools()) then return end
    local d = copy()
    sh("setcap cap_perfmon+ep " .. d .. "/pmcsh")
    local recipes = h.tmpdir()
    sh("cp spec/fixtures/recipes/greet.lua " .. recipes .. "/ && chmod -R a+rX " .. recipes)
    local env = "env PMCSH_PATH=" .. recipes .. " LUA_INIT='print(\"init ran\")' LUA_PATH='/tmp/?.lua' PMCSH_HOME=/tmp "
    local out, code = sh(AS_NOBODY .. env .. d .. "/pmcsh greet")
    assert.are.equal(1, code)
    assert.matches("cannot open greet", out)
    assert.not_matches("init ran", out)
    out = sh(AS_NOBODY .. env .. d .. "/pmcsh -e 'print(require(\"pmcsh.paths\").secure, package.path:find(\"/tmp/\", 1, true))'")
    assert.are.equal("true\tnil\n", out)
    -- and the capability counts what paranoid would refuse to nobody
    out = sh(AS_NOBODY .. d .. "/pmcsh -e 'print(assert(pmc.group{\"page-faults:k\"}) ~= nil)'")
    sh("rm -rf " .. d .. " " .. recipes)
    assert.are.equal("true\n", out)
  end)

  it("keeps PMU and term names to the sysfs grammar, so no path leaves sysfs", function()
    local pmc = require("pmcsh.pmc")
    for ev, why in pairs{
      ["msr/../../../../../../etc/shadow/"] = "bad term '%.%./%.%./%.%./%.%./%.%./%.%./etc/shadow' for PMU msr",
      ["../x/tsc/"] = "bad PMU name '%.%.'",
      ["msr/a/b/tsc/"] = "bad term 'a/b/tsc'",
      ["msr/event=0x1,../../x=1/"] = "bad term '%.%./%.%./x'",
      ["msr//"] = "no event or terms between the slashes",
      ["msr/,,,/"] = "no event or terms between the slashes",
    } do
      local ok, msg, errno = pmc.info(ev)
      assert.is_nil(ok, ev)
      assert.matches(why, msg)
      assert.are.equal(22, errno)
    end
    local r = h.run({"stat", "-e", "msr/../../../../../../etc/shadow/", "--", "true"})
    assert.are_not.equal(0, r.code)
    assert.not_matches("root:", r.err .. r.out)
  end)
end)
