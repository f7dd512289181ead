#!/usr/bin/env bash
# bench/startup.sh — start-up time of `pi version`: median wall time over N
# runs, and the CPU time (user+sys) per run. With the reference agent
# installed outside the repository (npm i @mariozechner/pi-coding-agent@0.73.1
# in REF_DIR), also times its `--version` for comparison.
#
# Usage: bench/startup.sh [runs] [REF_DIR]   (from the repository root)
set -euo pipefail
runs=${1:-200}
ref=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/pi" ./cmd/pi

median_ms() { # command...: median wall ms of $runs runs
	local i
	: > "$tmp/t"
	for i in $(seq 1 "$runs"); do
		local s e
		s=$(date +%s%N)
		"$@" > /dev/null
		e=$(date +%s%N)
		echo $(( (e - s) / 1000 )) >> "$tmp/t"
	done
	sort -n "$tmp/t" | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]/1000}'
}

cpu_ms() { # command...: (user+sys) ms per run over $runs runs
	/usr/bin/time -f "%U %S" -o "$tmp/cpu" bash -c 'for i in $(seq 1 '"$runs"'); do "$@" >/dev/null; done' _ "$@"
	awk -v n="$runs" '{printf "%.2f", ($1+$2)*1000/n}' "$tmp/cpu"
}

echo "pi version: median $(median_ms "$tmp/pi" version) ms wall, $(cpu_ms "$tmp/pi" version) ms CPU per run ($runs runs)"
if [ -n "$ref" ]; then
	cli="$ref/node_modules/@mariozechner/pi-coding-agent/dist/cli.js"
	old=$runs; runs=$(( runs < 10 ? runs : 10 ))
	echo "reference pi --version: median $(median_ms node "$cli" --version) ms wall ($runs runs)"
	runs=$old
fi
