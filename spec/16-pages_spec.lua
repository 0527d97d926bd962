-- Page policy (kernels/pages.c): one vocabulary and one set of huge-page
-- messages for the STREAM arrays and the chase chains.
local stream = require("pmcsh.stream")
local chase = require("pmcsh.chase")
local machine = require("pmcsh.machine")
local h = require("helpers")

local MiB = 1024 * 1024

describe("page policies", function()
  it("are one list, default first, named alike by both engines in any case", function()
    local names = {}
    for _, p in ipairs(chase.page_policies()) do names[#names + 1] = p.name end
    assert.are.same({"4k", "thp", "2m", "1g"}, names)
    local s <close> = assert(stream.new{n = 4096, threads = 1, pages = "THP", quiet = true})
    assert.are.equal("thp", s:info().pages)
    local c <close> = assert(chase.chain{size = 65536, pages = "4K"})
    assert.are.equal("4k", c:info().pages)
  end)

  it("refuse reserved pages that are not free with one sentence counting the pages needed", function()
    local free
    for _, hp in ipairs(machine.hugepages()) do
      if hp.size == 2 * MiB then free = hp.free end
    end
    if not h.need(free == 0, "2 MiB huge pages are free here (or none exist): nothing to refuse") then return end
    -- stream: 3 arrays of 2 MiB + 8 bytes of offset each round up to 2 pages: 6
    local s, smsg, serr = stream.new{n = 2 * MiB // 8, offset = 8, threads = 1, pages = "2m", quiet = true}
    -- chase: one buffer of 6 MiB: 3 pages
    local c, cmsg, cerr = chase.chain{size = 6 * MiB, pages = "2M"}
    assert.is_nil(s)
    assert.is_nil(c)
    assert.matches('pages 2m need 6 free 2 MiB huge pages, 0 are reserved and free', smsg)
    assert.matches('pages 2m need 3 free 2 MiB huge pages, 0 are reserved and free', cmsg)
    assert.matches("nr_hugepages", cmsg)
    assert.are.same({12, 12}, {serr, cerr})   -- ENOMEM
  end)
end)
