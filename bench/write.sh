#!/usr/bin/env bash
# bench/write.sh — `pi tool call write @ARGS` of a 20 MB file (lines with
# the tabs, quotes and newlines JSON escapes) against bench/testdata/loadwrite, the
# bare floor: read the same arguments, json.Unmarshal, write a temporary
# file, fsync, rename. Interleaved runs, medians; peak RSS from GNU time.
#
# Usage: bench/write.sh [runs] [MB]   (default 9 runs, 20 MB)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
runs=${1:-9}
mb=${2:-20}
build_pi
need_tools
mkdir -p "$tmp/w"
# The content, and the arguments as a model would send them: the content
# as a JSON string (tabs, quotes and newlines escaped).
write_args "$mb" 78
size=$(stat -c %s "$tmp/content")
for _ in $(seq 1 "$runs"); do
	measure loadwrite "$tmp/loadwrite" "$tmp/args.json"
	measure pi-write "$tmp/pi" tool call write "@$tmp/args.json" --cwd "$tmp/w"
	cmp -s "$tmp/content" "$tmp/w/out.txt" || { echo "pi wrote something else" >&2; exit 1; }
	[ -z "$old" ] || measure old-pi-write "$old" tool call write "@$tmp/args.json" --cwd "$tmp/w"
done
header loadwrite
row loadwrite loadwrite
row pi-write loadwrite
row old-pi-write loadwrite
awk -v r="$(median pi-write 4)" -v s="$size" 'BEGIN { printf "content %.1f MB; pi peak RSS = %.2f× the content\n", s/1e6, r*1024/s }'
echo "($runs interleaved runs each)"
