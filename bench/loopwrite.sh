#!/usr/bin/env bash
# bench/loopwrite.sh — a 20 MB write through the whole agent loop: `pi -p go
# --no-session --script FILE`, the scripted model calling write with the
# content of bench/write.sh, and `pi -p go --no-session --base-url URL`, the
# OpenAI provider streaming the same call from a loopback server
# (bench/testdata/sseserve, 1000 chunks), against `pi tool call write` of
# the same arguments (the tool alone). Interleaved runs, medians; peak RSS
# from GNU time. With PI_OLD=path/to/old/pi, the old binary's rows too
# (before and after in one run).
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
write_args "$mb" 60
{ printf '{"turns":[{"toolCalls":[{"name":"write","arguments":'; tr -d '\n' <"$tmp/args.json"; printf '}]},{"text":"done"}]}'; } >"$tmp/script.json"
size=$(stat -c %s "$tmp/content")
export HOME="$tmp/home" PI_HOME="$tmp/home/.pi"
mkdir -p "$HOME"
# The loopback model server, stopped by its pid when the script ends.
"$tmp/sseserve" "$tmp/args.json" >"$tmp/url" &
server=$!
trap 'kill "$server" 2>/dev/null; rm -rf "$tmp"' EXIT
until [ -s "$tmp/url" ]; do sleep 0.1; done
url=$(head -n 1 "$tmp/url")
http=(-p go --no-session --base-url "$url" --model m --api-key k --cwd "$tmp/w")
written() {
	cmp -s "$tmp/content" "$tmp/w/out.txt" || { echo "$1 wrote something else" >&2; exit 1; }
	rm -f "$tmp/w/out.txt"
}
for _ in $(seq 1 "$runs"); do
	measure tool-write "$tmp/pi" tool call write "@$tmp/args.json" --cwd "$tmp/w"
	measure loop-write "$tmp/pi" -p go --no-session --script "$tmp/script.json" --cwd "$tmp/w"
	written loop-write
	measure loop-write-http "$tmp/pi" "${http[@]}"
	written loop-write-http
	if [ -n "$old" ]; then
		measure old-loop-write "$old" -p go --no-session --script "$tmp/script.json" --cwd "$tmp/w"
		written old-loop-write
		measure old-loop-write-http "$old" "${http[@]}"
		written old-loop-write-http
	fi
done
header tool-write
for r in tool-write loop-write old-loop-write loop-write-http old-loop-write-http; do row "$r" tool-write; done
for r in loop-write old-loop-write loop-write-http old-loop-write-http; do
	grep -q "^$r " "$tmp/rows" || continue
	awk -v l="$r" -v r="$(median "$r" 4)" -v s="$size" 'BEGIN { printf "%s peak RSS = %.2f× the content (%.1f MB)\n", l, r*1024/s, s/1e6 }'
done
echo "($runs interleaved runs each)"
