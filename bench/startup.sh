#!/usr/bin/env bash
# bench/startup.sh — start-up of `pi version` and `pi tool call ls '{}'`
# against a Go hello world (bench/testdata/hello), interleaved: each round runs
# each once, in turn. pi is built twice: as `go build` makes it on a machine
# with a C compiler (cgo on: net and os/user link libc dynamically) and with
# CGO_ENABLED=0 (static, as the README's install line builds it, and as a
# hello world is); medians of the wall times (bash's microsecond clock,
# $EPOCHREALTIME, around each run: reading it starts no process, so only
# the fork and exec of the command itself is timed with it), CPU per run
# from GNU time over all runs, peak RSS of one run.
# With the reference agent installed outside the repository (npm i
# @mariozechner/pi-coding-agent@0.73.1 in REF_DIR), also its --version.
#
# Usage: bench/startup.sh [rounds] [REF_DIR]   (default 200 rounds)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rounds=${1:-200}
ref=${2:-}
build_pi
CGO_ENABLED=0 go build -o "$tmp/pi-static" ./cmd/pi
need_tools
cd "$tmp"
mkdir -p work
names=(hello "pi-version" "pi-tool-call-ls" "static-pi-version" "static-pi-tool-call-ls")
cmds=("$tmp/hello" "$tmp/pi version" "$tmp/pi tool call ls {} --cwd $tmp/work"
	"$tmp/pi-static version" "$tmp/pi-static tool call ls {} --cwd $tmp/work")
if [ -n "$old" ]; then
	names+=("old-pi-version" "old-pi-tool-call-ls")
	cmds+=("$old version" "$old tool call ls {} --cwd $tmp/work")
fi
for _ in $(seq 1 "$rounds"); do
	for i in "${!cmds[@]}"; do
		s=${EPOCHREALTIME/[.,]/}
		${cmds[$i]} >/dev/null
		e=${EPOCHREALTIME/[.,]/}
		echo "${names[$i]} $((e - s))" >>"$tmp/wall"
	done
done
med() { awk -v l="$1" '$1 == l {print $2}' "$tmp/wall" | sort -n | awk '{v[NR]=$1} END {printf "%.2f", v[int((NR+1)/2)]/1000}'; }
cpu() { # ms of user+sys per run, over 50 runs
	/usr/bin/time -f "%U %S" -o "$tmp/cpu" bash -c 'for i in $(seq 50); do '"$1"' >/dev/null; done'
	awk '{printf "%.2f", ($1+$2)*1000/50}' "$tmp/cpu"
}
rss() { /usr/bin/time -f "%M" -o "$tmp/rss" $1 >/dev/null; awk '{printf "%.1f", $1/1024}' "$tmp/rss"; }
hw=$(med hello)
echo "| run | median wall ms | ÷ hello world | CPU ms per run | peak RSS MiB |"
echo "| --- | ---: | ---: | ---: | ---: |"
for i in "${!cmds[@]}"; do
	w=$(med "${names[$i]}")
	printf '| %s | %s | %s | %s | %s |\n' "${names[$i]}" "$w" "$(ratio "$w" "$hw")" "$(cpu "${cmds[$i]}")" "$(rss "${cmds[$i]}")"
done
echo "($rounds interleaved rounds)"
if [ -n "$ref" ]; then
	cli="$ref/node_modules/@mariozechner/pi-coding-agent/dist/cli.js"
	s=${EPOCHREALTIME/[.,]/}
	for _ in $(seq 10); do node "$cli" --version >/dev/null; done
	e=${EPOCHREALTIME/[.,]/}
	echo "reference pi --version: $(( (e - s) / 10000 )) ms per run (10 runs)"
fi
