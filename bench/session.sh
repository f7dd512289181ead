#!/usr/bin/env bash
# bench/session.sh — resuming a long session: `pi -p x --session FILE
# --script S` on a fresh copy of a session of N entries without compaction
# (bench/testdata/mksession writes it through runtime/session as pi does:
# user prompts, assistant tool calls, results, answers, ~500 bytes a line),
# against the same run with --no-session. Interleaved runs, medians; peak
# RSS from GNU time, and what the session adds to it over the file's size.
# With PI_OLD=path/to/old/pi, the old binary's rows too (before and after
# in one run).
#
# Usage: bench/session.sh [runs] [entries]   (default 5 runs, 10000 entries)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
runs=${1:-5}
entries=${2:-10000}
build_pi
need_tools
# Both binaries as fresh copies: how a binary's file sits in the page
# cache (written by the linker, copied, old) moves its peak RSS by 5-15
# MiB (the pages the kernel maps around each fault), so the two are
# copied alike and each resume is compared with its own --no-session run.
cp "$tmp/pi" "$tmp/pi.new" && mv "$tmp/pi.new" "$tmp/pi"
if [ -n "$old" ]; then
	cp "$old" "$tmp/pi.old"
	old=$tmp/pi.old
fi
go build -o "$tmp/mksession" ./bench/testdata/mksession
mkdir -p "$tmp/w"
"$tmp/mksession" "$tmp/session.jsonl" "$entries"
size=$(stat -c %s "$tmp/session.jsonl")
echo '{"turns":[{"text":"ok"}]}' >"$tmp/script.json"
export HOME="$tmp/home" PI_HOME="$tmp/home/.pi"
mkdir -p "$HOME"
run=(-p x --script "$tmp/script.json" --cwd "$tmp/w")
# resume LABEL PI: one timed run on a fresh copy of the session (each run
# appends its prompt and answer).
resume() {
	cp "$tmp/session.jsonl" "$tmp/run.jsonl"
	measure "$1" "$2" "${run[@]}" --session "$tmp/run.jsonl"
}
for _ in $(seq 1 "$runs"); do
	measure fresh "$tmp/pi" "${run[@]}" --no-session
	resume resume "$tmp/pi"
	if [ -n "$old" ]; then
		measure old-fresh "$old" "${run[@]}" --no-session
		resume old-resume "$old"
	fi
done
header fresh
for r in fresh resume old-fresh old-resume; do row "$r" fresh; done
for r in resume old-resume; do
	grep -q "^$r " "$tmp/rows" || continue
	base=fresh
	[ "$r" = old-resume ] && base=old-fresh
	awk -v l="$r" -v a="$(median "$r" 4)" -v b="$(median "$base" 4)" -v s="$size" 'BEGIN { printf "%s: +%.1f MiB peak RSS over %s = %.2f× the file (%.2f MB, %s entries)\n", l, (a-b)/1024, "'"$base"'", (a-b)*1024/s, s/1e6, "'"$entries"'" }'
done
echo "($runs interleaved runs each)"
