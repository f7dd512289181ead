#!/usr/bin/env bash
# bench/edit.sh — `pi tool call edit` of one line in the middle of a 20 MB
# file against `sed -i` of the same line (and a bare copy with cp for
# scale). Interleaved runs, medians; peak RSS from GNU time.
#
# Usage: bench/edit.sh [runs] [MB]   (default 9 runs, 20 MB)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
runs=${1:-9}
mb=${2:-20}
build_pi
need_tools
mkdir -p "$tmp/e"
lines=$((mb * 10000))
awk -v n=$lines 'BEGIN { x = sprintf("%90s", ""); gsub(/ /, "x", x); for (i = 1; i <= n; i++) printf "%08d %s\n", i, x }' >"$tmp/e/big.txt"
mid=$(printf '%08d' $((lines / 2)))
x=$(printf '%90s' '' | tr ' ' x)
y=$(printf '%90s' '' | tr ' ' y)
for i in $(seq 1 "$runs"); do
	from=$x to=$y
	[ $((i % 2)) = 0 ] && from=$y to=$x
	measure sed-i sed -i "s/^$mid $from\$/$mid $to/" "$tmp/e/big.txt"
	measure pi-edit "$tmp/pi" tool call edit "{\"path\":\"big.txt\",\"edits\":[{\"oldText\":\"$mid $to\",\"newText\":\"$mid $from\"}]}" --cwd "$tmp/e"
	grep -q "^$mid $from\$" "$tmp/e/big.txt" || { echo "pi did not edit" >&2; exit 1; }
	measure cp cp "$tmp/e/big.txt" "$tmp/e/copy.txt"
	if [ -n "$old" ]; then
		measure old-pi-edit "$old" tool call edit "{\"path\":\"big.txt\",\"edits\":[{\"oldText\":\"$mid $from\",\"newText\":\"$mid $to\"}]}" --cwd "$tmp/e"
		measure old-pi-edit "$old" tool call edit "{\"path\":\"big.txt\",\"edits\":[{\"oldText\":\"$mid $to\",\"newText\":\"$mid $from\"}]}" --cwd "$tmp/e"
	fi
done
size=$(stat -c %s "$tmp/e/big.txt")
header sed-i
row sed-i sed-i
row pi-edit sed-i
row old-pi-edit sed-i
row cp sed-i
awk -v r="$(median pi-edit 4)" -v s="$size" 'BEGIN { printf "file %.1f MB; pi peak RSS = %.2f× the file\n", s/1e6, r*1024/s }'
echo "($runs interleaved runs each)"
