#!/usr/bin/env bash
# LuaRocks (Debian's) on pmcsh's rockspec, as a user runs it: lint, then
# make into a fresh tree from a fresh copy of the sources (LuaRocks gives
# its own CFLAGS), then stock lua5.4 with that tree's path requires
# pmcsh.pmc and counts the page faults of a one-call region exactly: a
# first touch of N fresh 4 KiB pages is N faults.
set -uo pipefail
cd "$(dirname "$0")/../.."
passed=0 failed=0
ok() { echo "ok $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
finish() { echo "$passed passed, $failed failed"; exit $((failed > 0)); }

sh .ci/deps.sh luarocks lua5.4 liblua5.4-dev libpfm4-dev >/dev/null || { fail deps "cannot install luarocks"; finish; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
src="$tmp/src" tree="$tmp/tree"
mkdir -p "$src"
git ls-files -co --exclude-standard -z | xargs -0 tar cf - | tar xf - -C "$src"
rock="$(ls pmcsh-*.rockspec)"

if out="$(cd "$src" && luarocks lint "$rock" 2>&1)"; then ok "luarocks lint $rock"; else fail "luarocks lint" "$out"; fi

if out="$(cd "$src" && luarocks --lua-version 5.4 make --tree "$tree" "$rock" 2>&1)"; then
	ok "luarocks --lua-version 5.4 make --tree T"
else
	fail "luarocks make" "$(printf '%s\n' "$out" | tail -n 15)"
	finish
fi

# what LuaRocks deploys as modules: the C module and the Lua layer only
mods="$(cd "$tree/lib/lua/5.4" && ls)"
if [ "$mods" = "pmcsh.so" ]; then ok "only pmcsh.so in lib/lua/5.4"; else fail "lib/lua/5.4" "holds: $mods"; fi

eval "$(luarocks --lua-version 5.4 path --tree "$tree")"
for n in 1 64 1000; do
	got="$(lua5.4 -e "
		local pmc = require('pmcsh.pmc')
		local g = assert(pmc.group{'page-faults:u'})
		local r = assert(pmc.probe(g, 'touch', $n * 4096))
		print(math.tointeger(r[1].value))" 2>&1)"
	if [ "$got" = "$n" ]; then ok "lua5.4 counts $n faults touching $n fresh pages"
	else fail "lua5.4 page faults" "touched $n pages, counted: $got"; fi
done
finish
