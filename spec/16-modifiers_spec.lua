-- One grammar for event modifiers (pmc_name_parse, core/evname.c): the
-- split into base and privilege that pmc.parse_name gives is the one
-- pmc.split, the survey's plan, pmcsh stat and the survey report use.
local h = require("helpers")
local errors = require("pmcsh.errors")
local pmc = require("pmcsh.pmc")
local plan = require("pmcsh.survey.plan")

-- name -> form, base, privilege, members (a group's, modifiers applied)
local GOOD = {
  {"msr/tsc/", "sysfs", "msr/tsc/", nil},
  {"cycles:u", "name", "cycles", "u"},
  {"cpu/event=0x3c/k", "sysfs", "cpu/event=0x3c/", "k"},
  {"{a,b}:u", "group", "a,b", "u", {"a:u", "b:u"}},
  {"{page-faults,msr/tsc/}:k", "group", "page-faults,msr/tsc/", "k", {"page-faults:k", "msr/tsc/k"}},
  {"INST_RETIRED:ANY_P:k", "name", "INST_RETIRED:ANY_P", "k"},
  {"page-faults:Gu", "name", "page-faults", "u"},
}

-- bad name -> the words its error says
local BAD = {
  ["cycles:u:k"] = "two modifier strings",
  ["page-faults:uu"] = "repeats a letter",
  ["cycles:x"] = "bad modifier 'x'",
  ["msr/tsc/q"] = "bad modifier 'q'",
  ["{a,b:u"] = "unbalanced braces",
  ["a,b}:u"] = "unbalanced braces",
  ["msr/tsc"] = "unbalanced slashes",
  ["{page-faults:u,b}:k"] = "two privilege modifiers",
  ["{a,b}u"] = "bad group modifier",
}

local function raised(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "no error")
  return e
end

describe("an event name's modifiers", function()
  it("parse into form, base and privilege, one table for every form", function()
    for _, c in ipairs(GOOD) do
      local p = pmc.parse_name(c[1])
      assert.are.same({c[2], c[3], c[4], c[5]}, {p.form, p.base, p.privilege, p.members}, c[1])
    end
  end)

  it("compose in each form's syntax: after the slash for sysfs, after ':' otherwise", function()
    assert.are.same({"msr/tsc/u", "msr/tsc/k", "cycles:u", "cycles:k", "cpu/event=0x3c/u", "cpu/event=0x3c/k",
      "{a,b}:u", "{a,b}:k", "page-faults:Gu", "page-faults:Gk"},
      pmc.split{"msr/tsc/", "cycles", "cpu/event=0x3c/", "{a,b}", "page-faults:G"})
  end)

  it("are split alike by pmc.split and the survey's plan, and read back alike by the report", function()
    for _, c in ipairs(GOOD) do
      local plain = pmc.parse_name(c[1]).plain
      local units = plan.plan{events = {plain}, split = true}
      local pair = pmc.split{plain}
      assert.are.same(pair, units[1].labels, plain)
      for i, priv in ipairs{"u", "k"} do
        local p = pmc.parse_name(pair[i])
        -- what the report and the instructions check take back from a label
        assert.are.same({priv, plain}, {p.privilege, p.plain}, pair[i])
      end
      if c[4] then
        -- an event with its own privilege: one row in the plan, refused by split
        local own = plan.plan{events = {c[1]}, split = true}
        assert.are.same({{c[1]}, "single"}, {own[1].labels, own[1].kind}, c[1])
        assert.is_true(errors.is(raised(pmc.split, {c[1]}), "argument"), c[1])
      end
    end
  end)

  it("refuse a bad name with an error of kind argument, the same words in pmc, the plan and pmcsh stat", function()
    for name, why in pairs(BAD) do
      local e = raised(pmc.parse_name, name)
      assert.is_true(errors.is(e, "argument"), name)
      assert.matches(why, e.message, 1, true, name)
      assert.matches(why, tostring(raised(pmc.split, {name})), 1, true, name)
      local u = raised(plan.plan, {events = {name}, split = true})
      assert.is_true(errors.is(u, "usage"), name)
      assert.are.equal(e.message, u.message, name)
      local r = h.run({"stat", "-e", name, "--", "true"})
      assert.are.equal(2, r.code, name .. ": " .. r.err)
      assert.matches(why, r.err, 1, true, name)
    end
  end)

  it("expand a group as pmcsh stat counts it: each member with the group's modifier", function()
    local r = h.run({"stat", "-x", ",", "-e", "{page-faults,context-switches}:u", "--", "true"})
    assert.are.equal(0, r.code, r.err)
    local rows = {}
    for line in r.err:gmatch("[^\n]+") do rows[#rows + 1] = line:match("^[^,]*,[^,]*,([^,]*),") end
    assert.are.same(pmc.parse_name("{page-faults,context-switches}:u").members, rows)
  end)
end)
