#!/usr/bin/env bash
# bench/ext-first.sh — what a Go extension's first call costs a process:
# `pi -p x --no-session --script S` (one turn reading a file, then an
# answer) in a project with one Go extension whose tool_call hook runs on
# that read (examples/plugins/protect-paths, installed, compilation cache
# warm, lazily loaded: its first call is in the run) against the same run
# in a project without it, interleaved. CPU (user + system, microsecond
# accounting) and peak RSS of each run come from bench/testdata/rusage;
# medians, and the extension's cost as the difference of the medians.
# With PI_OLD=path/to/old/pi, the old binary's rows too (its own cache
# home, cache and projects), before and after in one run.
#
# Usage: bench/ext-first.sh [runs]   (default 11)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
runs=${1:-11}
build_pi
go build -o "$tmp/rusage" ./bench/testdata/rusage
GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o "$tmp/protect-paths.wasm" ./examples/plugins/protect-paths
echo '{"turns":[{"toolCalls":[{"name":"read","arguments":{"path":"main.go"}}]},{"text":"ok"}]}' >"$tmp/script.json"
export HOME="$tmp/home"
mkdir -p "$HOME"
# KEY: the environment of one binary (its own PI_HOME and cache).
env_of() { echo "PI_HOME=$tmp/$1/home PI_CACHE_DIR=$tmp/$1/cache"; }
install() { # PI KEY: its projects, the extension installed in KEY/hook
	mkdir -p "$tmp/$2/hook" "$tmp/$2/none"
	printf 'package main\n' >"$tmp/$2/hook/main.go"
	printf 'package main\n' >"$tmp/$2/none/main.go"
	(cd "$tmp/$2/hook" && env $(env_of "$2") "$1" ext install "$tmp/protect-paths.wasm" >/dev/null 2>&1)
	# Warm-up: the first run records the extension for lazy loads.
	(cd "$tmp/$2/hook" && env $(env_of "$2") "$1" -p x --no-session --script "$tmp/script.json" >/dev/null 2>&1)
}
install "$tmp/pi" new
[ -n "$old" ] && install "$old" old
# one LABEL PI KEY DIR: one timed run, "LABEL wall_s cpu_s maxrss_kb" to $tmp/rows.
one() {
	local r
	r=$(cd "$tmp/$3/$4" && env $(env_of "$3") "$tmp/rusage" "$2" -p x --no-session --script "$tmp/script.json")
	echo "$1 $r" >>"$tmp/rows"
}
for _ in $(seq 1 "$runs"); do
	one none "$tmp/pi" new none
	one hook "$tmp/pi" new hook
	if [ -n "$old" ]; then
		one old-none "$old" old none
		one old-hook "$old" old hook
	fi
done
echo "| run | median wall s | median CPU ms | median peak RSS MiB |"
echo "| --- | ---: | ---: | ---: |"
for r in none hook old-none old-hook; do
	grep -q "^$r " "$tmp/rows" || continue
	printf '| %s | %s | %.1f | %.1f |\n' "$r" "$(median "$r" 2)" "$(awk -v c="$(median "$r" 3)" 'BEGIN{print c*1000}')" "$(awk -v k="$(median "$r" 4)" 'BEGIN{print k/1024}')"
done
for p in "" old-; do
	grep -q "^${p}hook " "$tmp/rows" || continue
	awk -v l="${p}hook" -v c1="$(median "${p}hook" 3)" -v c0="$(median "${p}none" 3)" -v r1="$(median "${p}hook" 4)" -v r0="$(median "${p}none" 4)" \
		'BEGIN { printf "%s over %snone: +%.1f ms CPU, +%.1f MiB peak RSS (target: <= 40 ms, <= 15 MiB)\n", l, substr(l, 1, length(l)-4), (c1-c0)*1000, (r1-r0)/1024 }'
done
echo "($runs interleaved runs each)"
