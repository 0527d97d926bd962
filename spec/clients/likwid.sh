#!/usr/bin/env bash
# LIKWID's own examples (Debian's likwid ships them in
# /usr/share/likwid/examples), built unchanged against pmcsh installed in a
# fresh PREFIX with the README's line, and run under pmcsh stat --regions:
# every C example that uses only the Marker API, and the Fortran one where
# gfortran is.  Each is checked against what its source implies: the
# region's calls per thread, the time each call sleeps, and counts that
# are there (task-clock > 0).  Prints each example's regions and counts.
set -uo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"
passed=0 failed=0
ok() { echo "ok $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
finish() { echo "$passed passed, $failed failed"; exit $((failed > 0)); }

sh .ci/deps.sh likwid pkg-config gcc >/dev/null || { fail deps "cannot install likwid"; finish; }
sh .ci/deps.sh gfortran >/dev/null 2>&1 || true   # the Fortran example where it can be had
ex=/usr/share/likwid/examples
[ -d "$ex" ] || { fail examples "$ex missing (Debian's likwid ships it)"; finish; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
if out="$(make -s -C "$root" install PREFIX="$prefix" 2>&1)"; then ok "make install PREFIX=$prefix"
else fail "make install" "$out"; finish; fi
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
export OMP_NUM_THREADS=2   # the examples' parallel regions: 2 threads on any machine

# What each example's source implies: its region, the calls of it per
# thread (the loop around START/STOP: 10 in C, none in Fortran), and the
# seconds each call sleeps (#define SLEEPTIME).
declare -A CALLS=([C-markerAPI]=10 [F-markerAPI]=1)

# run NAME BINARY: under pmcsh stat --regions, its -x rows checked
run() {
	local name="$1" bin="$2" csv="$tmp/$1.csv" sleep calls
	sleep="$(sed -n 's/^#define SLEEPTIME \([0-9]*\).*/\1/p' "$ex/$name".*)"
	if ! out="$("$root/pmcsh" stat --regions -e task-clock,page-faults -x , -o "$csv" -- "$bin" 2>&1)"; then
		fail "$name under pmcsh stat --regions" "$(printf '%s\n' "$out" | tail -n 5)"
		return
	fi
	echo "   $name: region,thread,calls,iterations,inclusive,exclusive,unit,event,...,seconds"
	grep -v '^#' "$csv" | grep -v '^$' | sed 's/^/   /'
	calls="${CALLS[$name]:-}"
	# the sum row of task-clock, and each thread's
	awk -F, -v calls="$calls" -v threads="$OMP_NUM_THREADS" -v sleep="$sleep" '
		$1 == "" || $8 != "task-clock" { next }
		{ regions[$1] = 1 }
		$2 == "all" { sum = $3; secs = $14; tc = $5 }
		$2 != "all" { n++; if (calls != "" && $3 != calls) bad = bad " thread " $2 " made " $3 " calls" }
		END {
			if (length(regions) != 1 || !("example" in regions)) { print "regions other than example"; exit 1 }
			if (calls != "" && sum != calls * threads) { print sum " calls, not " calls * threads; exit 1 }
			if (n != threads) { print n " threads, not " threads; exit 1 }
			if (bad != "") { print bad; exit 1 }
			if (!(tc > 0)) { print "task-clock " tc; exit 1 }
			if (sleep != "" && (secs < sum * sleep || secs > sum * sleep * 1.5)) {
				print secs " s in " sum " calls of sleep(" sleep ")"; exit 1 }
		}' "$csv" >"$tmp/why" && ok "$name: region example, ${calls:-?} calls on each of $OMP_NUM_THREADS threads, ${sleep}s each" ||
		fail "$name" "$(cat "$tmp/why")"
	# LIKWID_MARKER_GET, printed by the example: its last calls and time
	if [ -n "$calls" ] && printf '%s\n' "$out" | grep -q "called $calls times"; then
		t="$(printf '%s\n' "$out" | sed -n 's/.*total measurement time is *\([0-9.]*\).*/\1/p' | sort -g | tail -n 1)"
		if awk -v t="$t" -v c="$calls" -v s="$sleep" 'BEGIN { exit !(t >= c * s && t < c * s * 1.5) }'; then
			ok "$name: LIKWID_MARKER_GET says $calls calls, $t s"
		else fail "$name GET" "time $t for $calls calls of sleep($sleep)"; fi
	elif [ -n "$calls" ]; then
		fail "$name GET" "no 'called $calls times' in: $(printf '%s\n' "$out" | grep called | tail -n 2)"
	fi
}

for src in "$ex"/*.c; do
	name="$(basename "$src" .c)"
	if ! grep -q 'likwid-marker.h' "$src" || grep -Eq 'perfmon_|topology_|numa_|affinity_|gpumarker|nvmon' "$src"; then
		echo "   $name: not only the Marker API (LIKWID's library or GPU API): not built"
		continue
	fi
	# the README's line; -fopenmp and -lm as LIKWID's examples Makefile adds them
	if out="$(cc -fopenmp -DLIKWID_PERFMON "$src" $(pkg-config --cflags --libs pmcsh-likwid) -lm -o "$tmp/$name" 2>&1)"; then
		ok "$name builds with cc -DLIKWID_PERFMON app.c \$(pkg-config --cflags --libs pmcsh-likwid)"
		run "$name" "$tmp/$name"
	else
		fail "$name build" "$out"
	fi
done

if command -v gfortran >/dev/null; then
	name=F-markerAPI
	if out="$(cd "$tmp" && gfortran -fopenmp -DLIKWID_PERFMON "$ex/$name.F90" $(pkg-config --cflags --libs pmcsh-likwid) -o "$tmp/$name" 2>&1)"; then
		ok "$name builds with gfortran (use likwid)"
		run "$name" "$tmp/$name"
	else
		fail "$name build" "$out"
	fi
else
	echo "   F-markerAPI: no gfortran here: not built"
fi
finish
