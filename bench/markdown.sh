#!/usr/bin/env bash
# bench/markdown.sh — the TUI's markdown renderer: BenchmarkMarkdownFull
# (the whole render of a 100 KB answer, 100 columns, 256 colours) and
# BenchmarkMarkdownLive100K (one live re-render near the end of it), from
# cmd/pi/internal/tui. With a base commit, its renderer runs too,
# interleaved, in rows named old-...: the base's tree is exported with
# `git archive` and given this tree's benchmark files (render_bench_test.go,
# mdcorpus_test.go), so a base must have the test helpers they use
# (colourMD, liveTail: any commit since the renderer came).
#
# Usage: bench/markdown.sh [runs] [base]   (default 9 runs, no base)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
runs=${1:-9}
base=${2:-}
pkg=cmd/pi/internal/tui
go test -c -o "$tmp/new.test" ./$pkg
if [ -n "$base" ]; then
	mkdir -p "$tmp/base"
	git archive "$base" | tar -x -C "$tmp/base"
	cp $pkg/render_bench_test.go $pkg/mdcorpus_test.go "$tmp/base/$pkg/"
	(cd "$tmp/base" && go test -c -o "$tmp/old.test" ./$pkg)
fi
# bench LABEL BINARY: one run of both benchmarks; rows "LABEL-full wall-ms
# cpu-ms MB/s cpu-MB/s" and "LABEL-live wall-ms cpu-ms".
bench() {
	(cd $pkg && "$2" -test.run '^$' -test.bench '^BenchmarkMarkdown(Full|Live100K)$' -test.benchtime 20x) |
		awk -v l="$1" '/^BenchmarkMarkdown/ {
			name = ($1 ~ /Full/) ? "full" : "live"
			mbs = cpumbs = ""
			for (i = 2; i < NF; i++) {
				if ($(i+1) == "ns/op") ns = $i
				if ($(i+1) == "cpu-ms/op") cpu = $i
				if ($(i+1) == "MB/s") mbs = $i
				if ($(i+1) == "cpu-MB/s") cpumbs = $i
			}
			printf "%s-%s %.3f %.3f %s %s\n", l, name, ns / 1e6, cpu, mbs, cpumbs
		}' >>"$tmp/rows"
}
for i in $(seq 1 "$runs"); do
	bench new "$tmp/new.test"
	[ -z "$base" ] || bench old "$tmp/old.test"
done
echo "| run | median wall ms | median CPU ms | MB/s (wall) | MB/s (CPU) |"
echo "| --- | ---: | ---: | ---: | ---: |"
for r in old-full new-full old-live new-live; do
	grep -q "^$r " "$tmp/rows" || continue
	if [ "${r#*-}" = full ]; then
		printf '| %s | %s | %s | %s | %s |\n' "$r" "$(median "$r" 2)" "$(median "$r" 3)" "$(median "$r" 4)" "$(median "$r" 5)"
	else
		printf '| %s | %s | %s | | |\n' "$r" "$(median "$r" 2)" "$(median "$r" 3)"
	fi
done
echo "($runs interleaved runs each, 20 renders a run; load at the end: $(uptime | sed 's/.*load average: //'))"
