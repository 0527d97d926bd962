#!/usr/bin/env bash
# perf's own stat tests (Debian's linux-perf: tests/shell/stat.sh,
# stat+csv_output.sh, stat+json_output.sh, stat+csv_summary.sh and their
# lib/), run unchanged from a copy, twice: with perf, then with a `perf`
# first on PATH that sends `perf stat ...` (record and report included) to
# `pmcsh stat`.  These four tests call nothing of perf's but `perf stat`
# (and python3 for the JSON linter), so only that word is pmcsh's; any
# other perf command goes to the real perf, unchanged, should a later
# version of the tests call one.
# A test passes when pmcsh's run ends as perf's does: the same exit status
# and every "[Success]" line perf printed printed again.  Where perf itself
# fails a test on this machine, the checks perf passed before failing are
# still held to; the rest is said, not counted.  stat+csv_summary.sh passes
# when nothing is printed, so its rows are checked here too: the summary
# row, its absence with --no-csv-summary, and the summary's count equal to
# the sum of the intervals' counts.
set -uo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"
passed=0 failed=0
ok() { echo "ok $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }

sh .ci/deps.sh linux-perf python3 >/dev/null || { echo "FAIL perf-stat: linux-perf not installed"; echo "0 passed, 1 failed"; exit 1; }
src="$(dpkg -L linux-perf | grep '/tests/shell/stat.sh$' | head -n 1)"
src="${src%/stat.sh}"
real="$(command -v perf)"
if [ -z "$src" ] || [ -z "$real" ]; then
	echo "FAIL perf-stat: linux-perf ships no tests/shell/stat.sh here"; echo "0 passed, 1 failed"; exit 1
fi
[ -x ./pmcsh ] || make -s >/dev/null

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp -r "$src" "$tmp/shell"
mkdir "$tmp/bin"
cat >"$tmp/bin/perf" <<EOF
#!/bin/sh
# perf stat ... is pmcsh stat ...; every other perf command is perf's
if [ "\${1:-}" = stat ]; then shift; exec "$root/pmcsh" stat "\$@"; fi
exec "$real" "\$@"
EOF
chmod +x "$tmp/bin/perf"

# run_test NAME PATH-PREFIX: output in $tmp/NAME.PREFIX.out, status in .rc
run_test() {
	(cd "$tmp/shell" && PATH="$2$PATH" timeout 600 bash "./$1" >"$tmp/$1.$3.out" 2>&1; echo $? >"$tmp/$1.$3.rc")
}

for t in stat.sh stat+csv_output.sh stat+json_output.sh stat+csv_summary.sh; do
	if [ ! -f "$tmp/shell/$t" ]; then fail "$t: not in $src"; continue; fi
	run_test "$t" "" perf
	run_test "$t" "$tmp/bin:" pmcsh
	prc="$(cat "$tmp/$t.perf.rc")" mrc="$(cat "$tmp/$t.pmcsh.rc")"
	missing="$(grep -F '[Success]' "$tmp/$t.perf.out" | while IFS= read -r l; do
		grep -qxF -- "$l" "$tmp/$t.pmcsh.out" || echo "$l"; done)"
	nok="$(grep -c -F '[Success]' "$tmp/$t.pmcsh.out")"
	if [ -n "$missing" ]; then
		fail "$t: perf passes, through pmcsh not: $(echo "$missing" | head -n 1); pmcsh said: $(grep -v -F '[Success]' "$tmp/$t.pmcsh.out" | head -n 5 | tr '\n' ' ')"
	elif [ "$prc" = 0 ] && [ "$mrc" != 0 ]; then
		fail "$t: perf exits 0, through pmcsh $mrc: $(tail -n 5 "$tmp/$t.pmcsh.out" | tr '\n' ' ')"
	elif [ "$prc" != 0 ]; then
		ok "$t: perf itself fails it here (exit $prc at: $(grep -v -F '[Success]' "$tmp/$t.perf.out" | grep -m1 -v '^\s*$'));" \
			"through pmcsh exit $mrc, $nok checks passed, each perf passed among them"
	else
		ok "$t: exit 0 as perf's, $nok checks passed ($(grep -c -F '[Success]' "$tmp/$t.perf.out") with perf)"
	fi
done

# stat+csv_summary.sh's own commands, their rows read: the shape of each
# line (fields, and whether it starts with a time, "summary" or a count) as
# perf's, then the counts of a counted event
shape() { awk '{ k = $1 ~ /^[0-9]+\.[0-9]+$/ ? "time" : $1 == "summary" ? "summary" : "count"; print k, NF }'; }
for extra in "" "--no-csv-summary"; do
	cmd="stat -e cycles -x' ' -I1000 --interval-count 1 --summary $extra"
	theirs="$(eval "\"$real\" $cmd" 2>&1 | shape)"
	ours="$(eval "PATH=\"$tmp/bin:\$PATH\" perf $cmd" 2>&1 | shape)"
	if [ -n "$ours" ] && [ "$ours" = "$theirs" ]; then ok "csv summary rows of perf $cmd: $(echo $ours)"
	else fail "csv summary rows of perf $cmd: perf's '$(echo $theirs)', pmcsh's '$(echo $ours)'"; fi
done
out="$(PATH="$tmp/bin:$PATH" perf stat -e task-clock -x, -I 200 --interval-count 3 --summary 2>&1)"
sum="$(echo "$out" | awk -F, '$1 ~ /^ *[0-9]/ { s += $2; n++ } $1 ~ /summary/ { v = $2; m++ }
	END { d = s - v; if (d < 0) d = -d; printf "%d intervals, %d summary, %.2f vs %.2f msec: %s", n, m, s, v, (n == 3 && m == 1 && d <= 0.01 * n) ? "equal" : "differ" }')"
case "$sum" in *equal) ok "csv summary of task-clock is its intervals' sum: $sum" ;;
	*) fail "csv summary of task-clock: $sum; $(echo "$out" | head -n 5 | tr '\n' ' ')" ;; esac

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
