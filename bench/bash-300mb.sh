#!/usr/bin/env bash
# bench/bash-300mb.sh — peak RSS and wall time of `pi tool call bash` on a
# command that prints 300 MB, against the same pipeline sent to /dev/null and,
# for reference, piped through `cat` into a file (the least any capture that
# keeps the full output in a file must do).
#
# Usage: bench/bash-300mb.sh [runs] [bytes]   (from the repository root)
# Needs /usr/bin/time (GNU time). Builds pi into a temp dir.
set -euo pipefail
runs=${1:-3}
bytes=${2:-300000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/pi" ./cmd/pi
pipeline="head -c $bytes /dev/zero | tr '\\0' a | fold -w 100"
args=$(printf '{"command":"%s"}' "${pipeline//\\/\\\\}")

measure() { # label, command...: prints "label wall_s rss_kb"
	local label=$1; shift
	/usr/bin/time -f "%e %M" -o "$tmp/time" "$@" > "$tmp/out"
	echo "$label $(cat "$tmp/time")"
}

echo "pipeline: $pipeline"
echo "run devnull_wall_s devnull_rss_kb pi_wall_s pi_rss_kb ratio catfile_wall_s"
: > "$tmp/rows"
for i in $(seq 1 "$runs"); do
	read -r _ dw dr < <(measure devnull bash -c "$pipeline > /dev/null")
	read -r _ pw pr < <(measure pi "$tmp/pi" tool call bash "$args")
	full=$(grep -o '"fullOutputPath":"[^"]*"' "$tmp/out" | cut -d'"' -f4 || true)
	[ -n "$full" ] && rm -f "$full"
	read -r _ cw _ < <(measure catfile bash -c "$pipeline | cat > '$tmp/catfile'")
	rm -f "$tmp/catfile"
	row="$i $dw $dr $pw $pr $(awk -v a="$pw" -v b="$dw" 'BEGIN{printf "%.2f", a/b}') $cw"
	echo "$row" | tee -a "$tmp/rows"
done
# Medians of the wall times and their ratio; the largest pi RSS.
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
dmed=$(cut -d' ' -f2 "$tmp/rows" | median)
pmed=$(cut -d' ' -f4 "$tmp/rows" | median)
cmed=$(cut -d' ' -f7 "$tmp/rows" | median)
rmax=$(cut -d' ' -f5 "$tmp/rows" | sort -n | tail -1)
awk -v d="$dmed" -v p="$pmed" -v c="$cmed" -v r="$rmax" 'BEGIN {
	printf "median devnull %.2f s, median pi %.2f s (ratio %.2f), median cat>file %.2f s (ratio %.2f), max pi RSS %.1f MB\n", d, p, p/d, c, c/d, r/1024
}'
