-- The machine's floating-point ceilings (pmcsh.peak, kernels/peak.c) and
-- the floating-point work read from a loop's machine code
-- (pmcsh.stream.fparith): what the compiler made must do the operations
-- the descriptor says, and the measured peak must be a whole number of
-- multiply-add pipes at the clock the dependent chain measures.
local h = require("helpers")
local peak = require("pmcsh.peak")
local fparith = require("pmcsh.stream.fparith")
local stream = require("pmcsh.stream")
local disasm = require("pmcsh.stream.disasm")
local errors = require("pmcsh.errors")

describe("stream.fparith", function()
  it("counts operations per lane, a fused multiply-add as two, as FP_ARITH counts them", function()
    local cases = {
      {"vfmadd231pd %ymm1,%ymm2,%ymm3", 8, 256}, {"vfnmsub132ss %xmm1,%xmm2,%xmm3", 2, 32},
      {"vaddsd %xmm1,%xmm2,%xmm3", 1, 64}, {"mulps %xmm1,%xmm2", 4, 128},
      {"vmulpd (%rax),%ymm1,%ymm2", 4, 256}, {"vfmadd132ps %zmm1,%zmm0,%zmm2", 32, 512},
      {"vsqrtpd %ymm0,%ymm1", 4, 256}, {"divsd %xmm1,%xmm0", 1, 64},
      {"fmla v0.2d, v1.2d, v2.2d", 4, 128}, {"fadd v0.4s, v1.4s, v2.4s", 4, 128},
      {"fadd d0, d1, d2", 1, 64}, {"fmadd s0, s1, s2, s3", 2, 32},
      -- no floating-point arithmetic
      {"vmovapd %ymm1,(%rax)", 0}, {"vxorpd %xmm0,%xmm0,%xmm0", 0}, {"vcvtsi2sd %rax,%xmm0,%xmm0", 0},
      {"vpaddq %ymm1,%ymm2,%ymm3", 0}, {"vpsubd %xmm1,%xmm2,%xmm3", 0}, {"vcmppd $0x1,%ymm1,%ymm2,%ymm3", 0},
      {"ldr q0, [x1]", 0}, {"add x0, x0, #0x8", 0}, {"addq $0x8,%rax", 0},
    }
    for _, c in ipairs(cases) do
      local r = fparith.count({"  4011a0:\t" .. c[1]})
      assert.are.equal(c[2], r.flops, c[1])
      assert.are.equal(c[3], r.widest, c[1])
    end
    local r = fparith.count({"vfmadd231pd %ymm1,%ymm2,%ymm3", "vaddps %xmm1,%xmm2,%xmm3"})
    assert.are.same({8, 4, 2, 1, 8, 4}, {r.flops - r.single, r.single, r.instructions, r.fma, r.double, r.single})
  end)

  it("reads 0, 1, 1 and 2 flops per element in copy, scale, add and triad of every variant built", function()
    if not h.need(not h.sanitized, "built with the sanitizer (make asan): its checks sit in every inner loop") then return end
    if not h.need(h.have("objdump")) then return end
    local want = {copy = 0, scale = 1, add = 1, triad = 2}
    local isas = 0
    for _, v in ipairs(stream.machine().variants) do
      local isa = v.name
      for name, flops in pairs(want) do
        local d = stream.disasm(name, {isa = isa, quiet = true})
        if d then
          isas = isas + 1
          assert.are.equal(flops, fparith.count(d.lines).flops / d.elements, isa .. " " .. name)
        end
      end
    end
    assert.is_true(isas >= 4)
  end)
end)

describe("peak", function()
  it("builds each kernel as it says: its accumulators' operations on registers of its width", function()
    if not h.need(not h.sanitized, "built with the sanitizer (make asan)") then return end
    if not h.need(h.have("objdump")) then return end
    local ks = peak.kernels()
    assert.is_true(#ks >= 4)
    for _, k in ipairs(ks) do
      assert.are.equal(k.accumulators * k.lanes * 2, k.flops_per_trip, k.name)
      local d = assert(disasm.read{kernel = k.name, symbol = k.symbol, d = {loads = 0, stores = 0, elements_per_trip = 1}})
      local c = fparith.count(d.lines)
      assert.are.equal(k.flops_per_trip, c.flops, k.name)
      assert.are.equal(k.bits, c.widest, k.name)
      assert.are.equal(k.fma and k.accumulators or 0, c.fma, k.name)
      assert.are.equal(0, d.stored + d.loaded, k.name .. ": no memory traffic in the loop")
    end
  end)

  it("measures whole multiply-add pipes at the clock the dependent chain gives", function()
    if not h.need(not h.sanitized, "built with the sanitizer (make asan)") then return end
    -- one figure per width, each the best of its windows over the same
    -- best of the chain's: a disturbed window reads low, so three tries
    -- are allowed before a busy machine is named as the reason
    local off
    for _ = 1, 3 do
      off = nil
      local clock = peak.clock{reps = 25}
      assert.is_true(clock.hz > 1e8 and clock.hz < 1e10, tostring(clock.hz))
      for _, r in ipairs(peak.flops{clock = clock.hz, reps = 25}) do
        assert.is_true(r.pipes >= 1 and r.pipes <= 8, r.kernel .. ": " .. r.pipes_measured)
        assert.near(r.gflops, r.theoretical_gflops * r.pipes_measured / r.pipes, 1e-9 * r.gflops)
        if math.abs(r.pipes_measured - r.pipes) > 0.15 * r.pipes then off = r end
      end
      if not off then break end
    end
    if off and h.need(false, string.format("%s read %.2f pipes three times: this machine's load disturbed every window",
        off.kernel, off.pipes_measured)) then return end
  end)

  it("runs on every cpu at once and says what it refuses", function()
    local n = #require("pmcsh.machine").cpus()
    local r = peak.flops{threads = n, kernels = {peak.kernels()[1].name}, reps = 3}
    assert.are.equal(1, #r)
    assert.are.equal(n, r[1].threads)
    assert.is_true(r[1].gflops > 0)
    for _, bad in ipairs({{threads = 0}, {threads = n + 1}, {threads = 1.5}, {reps = "x"}, {color = 1}}) do
      local ok, e = pcall(peak.flops, bad)
      assert.is_false(ok)
      assert.is_true(errors.is(e, "argument"), tostring(e))
    end
    local ok, e = pcall(peak.clock, "fast")
    assert.is_false(ok)
    assert.matches("table expected", tostring(e))
  end)
end)
