#!/usr/bin/env bash
# bench/ext-start.sh — what installed extensions cost a call that does not
# use them: `pi tool call ls` in a project with the four Go example
# extensions installed (loc, bash-env, protect-paths, redact) against the
# same project with only the two whose hooks that call runs (protect-paths
# and redact), side by side, alternating, compilation cache warm. Prints the
# median wall time and the median peak RSS (/usr/bin/time -v) of each.
#
# Usage: bench/ext-start.sh [runs]   (from the repository root)
set -euo pipefail
runs=${1:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/pi" ./cmd/pi
for e in loc bash-env protect-paths redact; do
	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o "$tmp/$e.wasm" "./examples/plugins/$e"
done
export PI_HOME="$tmp/home" PI_CACHE_DIR="$tmp/cache"
mkdir -p "$tmp/four" "$tmp/two"
printf 'package main\n' > "$tmp/four/main.go"
printf 'package main\n' > "$tmp/two/main.go"
(cd "$tmp/four" && for e in loc bash-env protect-paths redact; do
	g=(); [ "$e" = loc ] && g=(--grant fs=ro:.)
	"$tmp/pi" ext install "$tmp/$e.wasm" "${g[@]}" > /dev/null 2>&1
done)
(cd "$tmp/two" && for e in protect-paths redact; do
	"$tmp/pi" ext install "$tmp/$e.wasm" > /dev/null 2>&1
done)
# Warm-up: one call each (fills the compilation cache for each limit).
(cd "$tmp/four" && "$tmp/pi" tool call ls '{}' > /dev/null)
(cd "$tmp/two" && "$tmp/pi" tool call ls '{}' > /dev/null)

one() { # dir: "wall_ms rss_kb" of one call
	(cd "$1" && /usr/bin/time -v -o "$tmp/tv" "$tmp/pi" tool call ls '{}' > /dev/null 2>&1)
	awk '/Elapsed \(wall clock\)/ {n=split($NF,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; w=s*1000}
	     /Maximum resident set size/ {r=$NF}
	     END {printf "%d %d\n", w, r}' "$tmp/tv"
}
: > "$tmp/four.txt"; : > "$tmp/two.txt"
for i in $(seq 1 "$runs"); do
	one "$tmp/four" >> "$tmp/four.txt"
	one "$tmp/two" >> "$tmp/two.txt"
done
med() { sort -n -k"$2" "$1" | awk -v k="$2" '{a[NR]=$k} END {print a[int((NR+1)/2)]}'; }
w4=$(med "$tmp/four.txt" 1); r4=$(med "$tmp/four.txt" 2)
w2=$(med "$tmp/two.txt" 1); r2=$(med "$tmp/two.txt" 2)
echo "pi tool call ls, $runs runs each, alternating, median:"
echo "  four Go extensions (loc, bash-env, protect-paths, redact): ${w4} ms wall, $((r4/1024)) MiB peak RSS"
echo "  only protect-paths and redact:                          ${w2} ms wall, $((r2/1024)) MiB peak RSS"
awk -v a="$w4" -v b="$w2" -v c="$r4" -v d="$r2" 'BEGIN {printf "  ratio: %.2fx wall, %.2fx peak RSS (goal <= 1.2x, <= 1.3x)\n", a/b, c/d}'
