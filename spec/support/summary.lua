-- busted output handler: busted's plain terminal output, then the one line
-- CI reads: "N passed, N failed" (", N skipped" when specs are pending).
return function(options)
  local busted = require("busted")
  local plain = require("busted.outputHandlers.plainTerminal")(options)
  local handler = require("busted.outputHandlers.base")()

  local function on_suite_end()
    local failed = handler.failuresCount + handler.errorsCount
    local line = string.format("%d passed, %d failed", handler.successesCount, failed)
    if handler.pendingsCount > 0 then
      line = line .. string.format(", %d skipped", handler.pendingsCount)
    end
    io.write("\n", line, "\n")
    io.flush()
    return nil, true
  end

  local base_subscribe = handler.subscribe
  function handler:subscribe(opts)
    base_subscribe(self, opts)
    plain:subscribe(opts)
    busted.subscribe({"suite", "end"}, on_suite_end)
  end
  return handler
end
