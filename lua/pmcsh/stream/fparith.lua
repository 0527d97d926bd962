-- pmcsh.stream.fparith: the floating-point arithmetic in a loop's machine
-- code, counted as the hardware's own counters count it (Intel's
-- FP_ARITH_INST_RETIRED, Arm's FP_*_SPEC): each add, subtract, multiply,
-- divide, min, max, square root and reciprocal is one operation per lane,
-- a fused multiply-add two; moves, compares, conversions and logic none.
-- Lanes come from the register (x86: xmm 128, ymm 256, zmm 512 bits; Arm:
-- the arrangement, v.2d, v.4s) and the element (…pd/…ps, d/s).
local M = {}

-- x86, AT&T: [v]OPpd / OPps / OPsd / OPss, and the FMA family's
-- vf[n]m{add,sub}{132,213,231}{p,s}{d,s} (with addsub / subadd forms).
local X86_OPS = {add = 1, sub = 1, mul = 1, div = 1, min = 1, max = 1, sqrt = 1, rcp = 1, rsqrt = 1,
  hadd = 1, hsub = 1, addsub = 1}

local function x86_bits(ops)
  if ops:find("%%zmm") then return 512 end
  if ops:find("%%ymm") then return 256 end
  return 128
end

local function x86(mnem, ops)
  local m = mnem:gsub("^v", "", 1)
  local fma, packed, prec = m:match("^f(n?m[a-z]+)%d%d%d([ps])([ds])$")
  local per = 2
  if not fma then
    local op
    op, packed, prec = m:match("^(%a-)([ps])([ds])$")
    if not (op and X86_OPS[op]) then return nil end
    per = 1
  elseif not (fma:match("^n?madd") or fma:match("^n?msub") or fma:match("^maddsub") or fma:match("^msubadd")) then
    return nil
  end
  local lanes = 1
  if packed == "p" then lanes = x86_bits(ops) // (prec == "d" and 64 or 32) end
  return per * lanes, prec == "d" and "double" or "single", packed == "p" and x86_bits(ops) or (prec == "d" and 64 or 32), per == 2
end

-- Arm (objdump's syntax): fadd fsub fmul fdiv fmin fmax fminnm fmaxnm fsqrt
-- fabd (1), fmla fmls fmadd fmsub fnmadd fnmsub (2); lanes from v.Nd/v.Ns.
local ARM_ONE = {fadd = 1, fsub = 1, fmul = 1, fdiv = 1, fmin = 1, fmax = 1, fminnm = 1, fmaxnm = 1, fsqrt = 1,
  fabd = 1, fmulx = 1, frecpe = 1, frsqrte = 1}
local ARM_TWO = {fmla = 1, fmls = 1, fmadd = 1, fmsub = 1, fnmadd = 1, fnmsub = 1}

local function arm(mnem, ops)
  local per = ARM_ONE[mnem] and 1 or ARM_TWO[mnem] and 2
  if not per then return nil end
  local n, e = ops:match("^%s*v%d+%.(%d+)([ds])")
  if n then
    return per * tonumber(n), e == "d" and "double" or "single", tonumber(n) * (e == "d" and 64 or 32), per == 2
  end
  local r = ops:match("^%s*([dsh])%d")
  if not r or r == "h" then return nil end
  return per, r == "d" and "double" or "single", r == "d" and 64 or 32, per == 2
end

-- count(lines) -> {flops=, instructions= (FP arithmetic ones), fma=,
-- widest= (bits of the widest FP arithmetic register, nil: none), double=,
-- single= (flops of each precision)}.  lines: objdump's text per
-- instruction ("mnemonic operands", an address prefix allowed).
function M.count(lines)
  local r = {flops = 0, instructions = 0, fma = 0, double = 0, single = 0}
  for _, line in ipairs(lines) do
    local text = line:gsub("^%s*%x+:%s*", "")
    local mnem, ops = text:match("^(%S+)%s*(.*)$")
    if mnem then
      local flops, prec, bits, fused
      if ops:find("%%") or mnem:match("^v?f?[a-z]+[ps][ds]$") then flops, prec, bits, fused = x86(mnem, ops) end
      if not flops then flops, prec, bits, fused = arm(mnem, ops) end
      if flops then
        r.flops = r.flops + flops
        r.instructions = r.instructions + 1
        r[prec] = r[prec] + flops
        if fused then r.fma = r.fma + 1 end
        if not r.widest or bits > r.widest then r.widest = bits end
      end
    end
  end
  return r
end

return M
