-- Cycles of a directed graph, edges = {a = {b = <truthy>, ...}, ...}: a
-- depth-first search in name order, each back edge one cycle, written as
-- its path {"a", "b", "a"}.  The Lua require graph (requires.lua) and the
-- C call graph (cgraph.lua) are both read with it.
local M = {}

function M.cycles(edges)
  local cycles, state, stack = {}, {}, {}
  local function visit(n)
    state[n] = "open"
    stack[#stack + 1] = n
    local next_ = {}
    for m in pairs(edges[n] or {}) do next_[#next_ + 1] = m end
    table.sort(next_)
    for _, m in ipairs(next_) do
      if state[m] == "open" then
        local c = {}
        for i = #stack, 1, -1 do table.insert(c, 1, stack[i]); if stack[i] == m then break end end
        c[#c + 1] = m
        cycles[#cycles + 1] = c
      elseif not state[m] then
        visit(m)
      end
    end
    stack[#stack] = nil
    state[n] = "done"
  end
  local names = {}
  for n in pairs(edges) do names[#names + 1] = n end
  table.sort(names)
  for _, n in ipairs(names) do if not state[n] then visit(n) end end
  return cycles
end

return M
