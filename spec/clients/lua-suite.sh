#!/usr/bin/env bash
# Lua 5.4.4's own test suite (its testes/ folder, as the Lua authors tag
# it) run with pmcsh as the interpreter: all.lua portable (_U=true, as
# Lua's docs run it) must end with "final OK" and print what lua5.4 prints
# (times and sizes aside); main.lua (lua(1) itself) must pass but for its
# test of -h, which pmcsh answers with its help: unchanged, it stops at that
# line, and without that line it ends with "OK".  The suite is read-only
# where it is kept (LUA_TESTES, else ../shared/peers/lua-5.4.4-testes beside
# the project or its worktree folder): it runs on a copy in a scratch folder,
# as main.lua writes files in the current folder.
set -uo pipefail
cd "$(dirname "$0")/../.."
root="$(pwd)"
sh .ci/deps.sh lua5.4 >/dev/null || true
pmcsh="$root/pmcsh"
passed=0 failed=0
ok() { echo "ok $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit; }

src="${LUA_TESTES:-}"
if [ -z "$src" ]; then
	for d in "$root/../shared/peers/lua-5.4.4-testes" "$root/../../shared/peers/lua-5.4.4-testes"; do
		[ -f "$d/all.lua" ] && { src="$d"; break; }
	done
fi
if [ -z "$src" ] || [ ! -f "$src/all.lua" ] || [ ! -f "$src/main.lua" ]; then
	fail lua-suite "no Lua 5.4.4 testes folder (set LUA_TESTES=DIR, the testes/ of lua/lua's tag v5.4.4)"
	finish
fi
[ -x "$pmcsh" ] || { fail lua-suite "no ./pmcsh: run make first"; finish; }

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# times, sizes and counts differ from run to run, and so do the garbage
# collector's progress dots: neither digits nor dots are compared
numbers() { sed -E 's/[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?[KM]?//g; s/\.//g' "$1"; }

# ---- all.lua, portable --------------------------------------------------
cp -r "$src" "$scratch/pmcsh" && chmod -R u+w "$scratch/pmcsh"
(cd "$scratch/pmcsh" && timeout 600 "$pmcsh" -e "_U=true" all.lua >"$scratch/all.out" 2>&1)
status=$?
if [ "$status" -eq 0 ] && grep -q "^final OK" "$scratch/all.out"; then
	ok all.lua-portable
else
	fail all.lua-portable "status $status; its last lines: $(tail -n 6 "$scratch/all.out" | tr '\n' '|')"
fi
if command -v lua5.4 >/dev/null; then
	cp -r "$src" "$scratch/lua" && chmod -R u+w "$scratch/lua"
	(cd "$scratch/lua" && timeout 600 lua5.4 -e "_U=true" all.lua >"$scratch/lua.out" 2>&1)
	if diff <(numbers "$scratch/lua.out") <(numbers "$scratch/all.out") >"$scratch/all.diff"; then
		ok all.lua-prints-as-lua5.4
	else
		fail all.lua-prints-as-lua5.4 "$(head -n 8 "$scratch/all.diff" | tr '\n' '|')"
	fi
else
	fail all.lua-prints-as-lua5.4 "lua5.4 is not installed (sh .ci/deps.sh lua5.4)"
fi

# ---- main.lua: lua(1) -----------------------------------------------------
# pmcsh processes still running in main.lua's folder: the scripts its
# Ctrl-C tests start in the background must be gone when it ends
leftovers() {
	local pids="" d p
	for d in /proc/[0-9]*; do
		p="${d#/proc/}"
		[ "$(readlink "$d/cwd" 2>/dev/null)" = "$scratch/main" ] || continue
		[ "$(readlink "$d/exe" 2>/dev/null)" = "$(readlink -f "$pmcsh")" ] && pids="$pids $p"
	done
	echo "$pids"
}
# main.lua's Ctrl-C tests read a background script's pid from
# 'lua -e "..." & echo $!', racing the script's own first line: when it
# wins (the pid read is 12 or 15, the script's output), main.lua fails
# there, with lua5.4 too.  That run is retried, up to three.
run_main() {
	local i
	for i in 1 2 3; do
		(cd "$scratch/main" && timeout 600 "$pmcsh" "$1" >"$2" 2>&1)
		status=$?
		grep -q "background, pid 1[25])" "$2" || return
		sleep 1
		kill $(leftovers) 2>/dev/null
	done
}
line="$(grep -n "^NoRun(\"unrecognized option '-h'\", \"lua -h\")" "$src/main.lua" | cut -d: -f1)"
if [ -z "$line" ]; then
	fail main.lua "its test of -h (NoRun(\"unrecognized option '-h'\", ...)) not found: not Lua 5.4.4's main.lua?"
	finish
fi
cp -r "$src" "$scratch/main" && chmod -R u+w "$scratch/main"
run_main main.lua "$scratch/main.out"
# its NoRun asserts (main.lua:72), called from the -h line
if [ "$status" -ne 0 ] && grep -q "assertion failed" "$scratch/main.out" &&
	[ "$(grep -c "main.lua:[0-9]*: in main chunk" "$scratch/main.out")" -eq 1 ] &&
	grep -q "main.lua:$line: in main chunk" "$scratch/main.out"; then
	ok "main.lua-stops-only-at-its-h-test-line-$line"
else
	fail main.lua-stops-only-at-its-h-test "status $status; expected main.lua:$line; its last lines: $(tail -n 4 "$scratch/main.out" | tr '\n' '|')"
fi
sed "${line}s/.*/-- line $line, lua -h: pmcsh prints its help there (deliberate)/" "$scratch/main/main.lua" >"$scratch/main/main-h.lua"
run_main main-h.lua "$scratch/main-h.out"
if [ "$status" -eq 0 ] && [ "$(tail -n 1 "$scratch/main-h.out")" = "OK" ]; then
	ok main.lua-but-h
else
	fail main.lua-but-h "status $status; its last lines: $(tail -n 6 "$scratch/main-h.out" | tr '\n' '|')"
fi
sleep 1
left="$(leftovers)"
if [ -z "$left" ]; then
	ok main.lua-ctrl-c-ends-its-scripts
else
	fail main.lua-ctrl-c-ends-its-scripts "still running after its Ctrl-C test:$left (killed now)"
	kill $left 2>/dev/null
fi
out="$("$pmcsh" -h 2>&1)"
status=$?
if [ "$status" -eq 0 ] && printf '%s\n' "$out" | grep -q "^usage: .* \[options\] \[script \[args\]\]"; then
	ok pmcsh-h-prints-its-help
else
	fail pmcsh-h-prints-its-help "status $status: $(printf '%s\n' "$out" | head -n 2 | tr '\n' '|')"
fi
finish
