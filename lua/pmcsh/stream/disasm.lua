-- pmcsh.stream.disasm: what the compiler made of a loop, read from its
-- machine code: objdump's listing of one symbol, its loops found by their
-- backward jumps, each measured (instructions, doubles stored and loaded,
-- elements per trip), and the inner one picked.  stream.disasm names the
-- symbol (a kernel's variant, the reference loop, a loop of the user's).
local format = require("pmcsh.format")
local paths = require("pmcsh.paths")
local shell = require("pmcsh.text").shell

local M = {}

local function exe_path()
  if paths.exe then return paths.exe end
  return "/proc/self/exe"
end


-- Doubles one instruction handles: scalar (…sd/…ss) 1, else by register.
local function width(mnem, ops)
  if mnem:match("sd$") or mnem:match("^v?movq$") then return 1 end
  if ops:find("%%zmm") then return 8 end
  if ops:find("%%ymm") then return 4 end
  if ops:find("%%xmm") then return 2 end
  return 1
end

-- AT&T syntax: destination last.  A store writes memory in its last operand;
-- a load reads memory in another operand.
local function split_ops(ops)
  local out, depth, cur = {}, 0, {}
  for ch in ops:gmatch(".") do
    if ch == "(" then depth = depth + 1 elseif ch == ")" then depth = depth - 1 end
    if ch == "," and depth == 0 then
      out[#out + 1] = table.concat(cur); cur = {}
    else
      cur[#cur + 1] = ch
    end
  end
  if #cur > 0 then out[#out + 1] = table.concat(cur) end
  return out
end

-- AArch64 (objdump's Arm syntax): the mnemonic says load or store; a q or
-- v.2d register holds two doubles, a d or x register one; ldp/stp move two.
local function width_arm(mnem, ops)
  local per = (ops:match("^%s*q%d") or ops:match("^%s*{?%s*v%d+%.2d")) and 2 or 1
  return mnem:match("p$") and 2 * per or per
end

local function classify_arm(mnem, ops)
  if ops:find("sp[,%]]") then return false, false end        -- stack spills
  return mnem:match("^st[rup1]") ~= nil, mnem:match("^ld[rup1]") ~= nil
end

local function classify(mnem, ops)
  if mnem:match("^lea") or mnem:match("^nop") or mnem:match("^prefetch") then return false, false end
  local o = split_ops(ops)
  local store, load = false, false
  for i, op in ipairs(o) do
    -- memory operands off the stack (%rsp/%rbp) are spills, not the arrays
    if op:find("%(") and not op:find("%%r[sb]p") then
      if i == #o and #o > 1 then store = true else load = true end
    end
  end
  return store, load
end

-- Parses `objdump -d` of one symbol: list of {addr=, text=, mnem=, ops=}.
local function disassemble(symbol, exe, objdump)
  exe = exe or exe_path()
  local cmd = string.format("%s -d --no-show-raw-insn %s %s 2>&1", shell(objdump or "objdump"),
    shell("--disassemble=" .. symbol), shell(exe))
  local p = io.popen(cmd, "r")
  if not p then return nil, "cannot run objdump (install binutils)" end
  local out = p:read("a")
  local ok, _, code = p:close()
  if not ok then
    return nil, "objdump failed (" .. tostring(code) .. "): " .. out:sub(1, 200)
      .. (out:find("not found") and " (install binutils)" or "")
  end
  local insns, in_sym = {}, false
  for line in out:gmatch("[^\n]+") do
    if line:match("^%x+ <" .. symbol:gsub("%p", "%%%0") .. ">:") then
      in_sym = true
    elseif line:match("^%x+ <") then
      in_sym = false
    elseif in_sym then
      local addr, text = line:match("^%s*(%x+):%s*(.-)%s*$")
      if addr and text ~= "" then
        local mnem, ops = text:match("^(%S+)%s*(.*)$")
        insns[#insns + 1] = {addr = tonumber(addr, 16), text = text, mnem = mnem or text, ops = ops or ""}
      end
    end
  end
  if #insns == 0 then
    return nil, string.format("symbol %s not found in %s (a stripped binary?)", symbol, exe)
  end
  return insns
end

-- What a build without objdump beside it (the arm64 lab's guest) knows of
-- its loops: EXE.loops, written where the binary was built (spec/lab/lab.sh),
-- a table {[symbol] = {instructions=, elements=, per_element=}}, or, for a
-- loop of the user's, {instructions=, stored=, loaded=} (doubles per trip),
-- its elements then from d (its descriptor or arrays).
local function recorded(exe, symbol, d)
  local chunk = loadfile(exe .. ".loops", "t", {})
  local ok, t = pcall(chunk or error)
  local r = ok and type(t) == "table" and t[symbol]
  if type(r) ~= "table" or type(r.instructions) ~= "number" then return nil end
  if type(r.elements) == "number" and type(r.per_element) == "number" then return r end
  if type(r.stored) ~= "number" or type(r.loaded) ~= "number" then return nil end
  local e = d.elements_per_trip or (d.stores > 0 and r.stored / d.stores) or (d.loads > 0 and r.loaded / d.loads) or nil
  return {instructions = r.instructions, elements = e, per_element = e and e > 0 and r.instructions / e or nil}
end

-- Whether the listing is objdump's Arm syntax (conditional branches
-- b.cond, cbz/cbnz; ldr).
local function arm_syntax(insns)
  for _, ins in ipairs(insns) do
    if ins.mnem:match("^b%.") or ins.mnem:match("^c?bn?z$") or ins.mnem:match("^ldr$") then return true end
  end
  return false
end

-- Loops are found by their backward jump: a jump to an address at or
-- before itself, inside the function.  Each loop is measured: instructions,
-- doubles stored and loaded per pass, hence elements per pass.
local function loops_of(insns, d)
  local first = insns[1].addr
  local loops = {}
  local arm = arm_syntax(insns)
  local classify, width = arm and classify_arm or classify, arm and width_arm or width
  local function conditional(m)
    if arm then return m:match("^b%.") or m:match("^cbn?z$") or m:match("^tbn?z$") end
    return m:match("^j") and m ~= "jmp"
  end
  local function leaves(m) return m == "jmp" or m == "b" or m:match("^ret") end
  for i, ins in ipairs(insns) do
    -- a conditional jump (an unconditional one or a ret inside would make it a merge, not a loop)
    if conditional(ins.mnem) then
      local target = tonumber(ins.ops:match("(%x+) <") or ins.ops:match("^(%x+)") or "", 16)
      local straight = true
      for j = 1, i - 1 do
        local b = insns[j]
        if target and b.addr >= target and leaves(b.mnem) then straight = false end
      end
      if target and target <= ins.addr and target >= first and straight then
        local body = {}
        local stored, loaded = 0, 0
        for j = 1, i do
          local b = insns[j]
          if b.addr >= target and not b.text:match("nop") then
            body[#body + 1] = b
            local st, ld = classify(b.mnem, b.ops)
            if st then stored = stored + width(b.mnem, b.ops) end
            if ld then loaded = loaded + width(b.mnem, b.ops) end
          end
        end
        local elements
        if d.elements_per_trip then elements = d.elements_per_trip
        elseif d.stores > 0 then elements = stored / d.stores
        elseif d.loads > 0 then elements = loaded / d.loads end
        if elements == nil or elements > 0 then
          loops[#loops + 1] = {
            from = target, to = ins.addr, instructions = #body, elements = elements,
            per_element = elements and #body / elements, body = body, stored = stored, loaded = loaded,
          }
        end
      end
    end
  end
  return loops
end

-- The instruction set a loop's body is written in, from its own code: the
-- widest vector register its packed instructions use ("zmm", "ymm",
-- "xmm"; "sve", "neon" on Arm), else "scalar".  A register copy or a
-- zeroing xor is no packed work.
local function isa_of(body, arm)
  local best, rank = "scalar", 0
  local function seen(name, r) if r > rank then best, rank = name, r end end
  for _, ins in ipairs(body) do
    local m, ops = ins.mnem, ins.ops
    if arm then
      if ops:find("z%d+%.") then seen("sve", 2)
      elseif ops:find("v%d+%.%d*[bhsd]") or ops:find("^%s*{?%s*q%d") then seen("neon", 1) end
    else
      local copy = m:match("^v?mov") and not ops:find("%(")
      local zero = m:match("^v?xorp[sd]$") or m:match("^v?pxor")
      if (m:match("p[sd]$") or m:match("^v?movdq") or m:match("^vp")) and not copy and not zero then
        if ops:find("%%zmm") then seen("zmm", 3)
        elseif ops:find("%%ymm") then seen("ymm", 2)
        elseif ops:find("%%xmm") then seen("xmm", 1) end
      end
    end
  end
  return best
end

local DISASM = format.kind("pmcsh.disasm")

-- The loop of o.symbol in o.exe (nil: this binary), o.d saying its loads,
-- stores and elements per trip where it knows them, o.kernel its name in
-- messages; objdump o.objdump (default objdump).  Returns stream.disasm's
-- table, or nil and why.
function M.read(o)
  local kernel, symbol, exe, d = o.kernel, o.symbol, o.exe, o.d
  local insns, err = disassemble(symbol, exe, o.objdump)
  if not insns then
    local rec = recorded(exe or exe_path(), symbol, d)
    if not rec then return nil, err end
    return setmetatable({kernel = kernel, symbol = symbol, instructions = rec.instructions, elements = rec.elements,
      per_element = rec.per_element, lines = {}, loops = {}, recorded = true}, DISASM)
  end
  local found = loops_of(insns, d)
  if #found == 0 then
    return nil, string.format("no loop with %s's stores/loads found in %s", kernel, symbol)
  end
  -- The inner loop: the one that moves the most elements per pass (the
  -- vector body; the others are peel and remainder loops); where the
  -- elements are not read off each loop (a descriptor gives them for all,
  -- or nothing does), the one moving the most doubles, and where two move
  -- as many the answer is that nothing tells them apart.
  local by_doubles = d.elements_per_trip or not found[1].elements
  local function moved(l) return by_doubles and (l.stored + l.loaded) or l.elements end
  local main = found[1]
  for _, l in ipairs(found) do
    if moved(l) > moved(main) then main = l end
  end
  for _, l in ipairs(found) do
    if l ~= main and by_doubles and moved(l) == moved(main) then
      return nil, string.format("%d loops in %s move as many doubles a trip, and nothing says which is the loop: " ..
        "give elements_per_trip in its descriptor (pmcsh/loop.h)", #found, symbol)
    end
  end
  local res = setmetatable({
    kernel = kernel, symbol = symbol, isa = isa_of(main.body, arm_syntax(insns)), instructions = main.instructions,
    elements = main.elements, per_element = main.per_element, from = main.from, to = main.to,
    stored = main.stored, loaded = main.loaded, lines = {}, loops = {},
  }, DISASM)
  for _, ins in ipairs(main.body) do
    res.lines[#res.lines + 1] = string.format("%8x:  %s", ins.addr, ins.text)
  end
  for _, l in ipairs(found) do
    res.loops[#res.loops + 1] = {from = l.from, to = l.to, instructions = l.instructions,
      elements = l.elements, per_element = l.per_element}
  end
  return res
end

return M
