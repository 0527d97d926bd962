-- Comparing results: many hosts' files as a fleet (each node against the
-- fleet's median, by the robust z-score), or two sides as an A/B (the
-- difference with an interval from the runs each side holds: run-to-run
-- noise, which the repetitions inside one run do not show).  This is the
-- door; the parts live beside it:
--   pmcsh.compare.sets    results files read as sets of typed metrics (no reader per recipe)
--   pmcsh.compare.fleet   the fleet's statistics, the fingerprints' differences, health's baseline
--   pmcsh.compare.ab      an A/B against run-to-run noise
local ab = require("pmcsh.compare.ab")
local fleet = require("pmcsh.compare.fleet")
local sets = require("pmcsh.compare.sets")

local M = {}

M.Z, M.BAND, M.LEVEL = fleet.Z, fleet.BAND, ab.LEVEL
M.LIMIT, M.MAX_RECORD, M.MAX_RECORDS, M.MAX_FILE = sets.LIMIT, sets.MAX_RECORD, sets.MAX_RECORDS, sets.MAX_FILE

M.read, M.only, M.hosts = sets.read, sets.only, sets.hosts
M.fleet, M.flat, M.differences = fleet.fleet, fleet.flat, fleet.differences
M.BASELINE, M.baseline, M.read_baseline = fleet.BASELINE, fleet.baseline, fleet.read_baseline
M.ab, M.ab_differences = ab.ab, ab.ab_differences

return M
