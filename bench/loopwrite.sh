#!/usr/bin/env bash
# bench/loopwrite.sh — a 20 MB write through the whole agent loop: `pi -p go
# --no-session --script FILE`, the scripted model calling write with the
# content of bench/write.sh, against `pi tool call write` of the same
# arguments (the tool alone). Interleaved runs, medians; peak RSS from GNU
# time. With PI_OLD=path/to/old/pi, the old binary's rows too (before and
# after in one run).
#
# Usage: bench/loopwrite.sh [runs] [MB]   (default 5 runs, 20 MB)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
runs=${1:-5}
mb=${2:-20}
build_pi
need_tools
mkdir -p "$tmp/w"
# The arguments as a model sends them (compact JSON), and the script whose
# first turn makes that call.
awk -v n=$((mb * 1000000)) -v c="$tmp/content" -v path="$tmp/w/out.txt" 'BEGIN {
	x = sprintf("%60s", ""); gsub(/ /, "x", x)
	printf "{\"path\":\"%s\",\"content\":\"", path
	for (i = 0; t < n; i++) {
		line = sprintf("%08d\tfunc \"quoted\" %s\n", i, x); t += length(line)
		printf "%s", line > c
		printf "%08d\\tfunc \\\"quoted\\\" %s\\n", i, x
	}
	print "\"}"
}' >"$tmp/args.json"
{ printf '{"turns":[{"toolCalls":[{"name":"write","arguments":'; tr -d '\n' <"$tmp/args.json"; printf '}]},{"text":"done"}]}'; } >"$tmp/script.json"
size=$(stat -c %s "$tmp/content")
export HOME="$tmp/home" PI_HOME="$tmp/home/.pi"
mkdir -p "$HOME"
for _ in $(seq 1 "$runs"); do
	measure tool-write "$tmp/pi" tool call write "@$tmp/args.json" --cwd "$tmp/w"
	measure loop-write "$tmp/pi" -p go --no-session --script "$tmp/script.json" --cwd "$tmp/w"
	cmp -s "$tmp/content" "$tmp/w/out.txt" || { echo "pi wrote something else" >&2; exit 1; }
	[ -z "$old" ] || measure old-loop-write "$old" -p go --no-session --script "$tmp/script.json" --cwd "$tmp/w"
done
header tool-write
row tool-write tool-write
row loop-write tool-write
row old-loop-write tool-write
awk -v r="$(median loop-write 4)" -v s="$size" 'BEGIN { printf "content %.1f MB; loop peak RSS = %.2f× the content\n", s/1e6, r*1024/s }'
[ -z "$old" ] || awk -v r="$(median old-loop-write 4)" -v s="$size" 'BEGIN { printf "old loop peak RSS = %.2f× the content\n", r*1024/s }'
echo "($runs interleaved runs each)"
