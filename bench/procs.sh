#!/usr/bin/env bash
# bench/procs.sh — bash's process bookkeeping after a call that ended
# normally (procs.Call.Exited), with no extra process on the host and with
# 2,000 idle `sleep` processes that are not pi's: "tree" walks pi's own
# descendants (what pi does; "tree-nocgroup" without cgroups), "scan" lists
# all of /proc (what it did before). Runs BenchmarkCallBookkeeping `runs`
# times (each run does both host sizes, so they interleave) and prints the
# median time per call of each, and the tree's ratio host+2000 / host+0.
#
# Usage: bench/procs.sh [runs] [calls]   (from the repository root)
set -euo pipefail
runs=${1:-5}
calls=${2:-300}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
go test -c -o "$tmp/procs.test" ./internal/procs
(cd internal/procs && "$tmp/procs.test" -test.run '^$' -test.bench CallBookkeeping \
	-test.benchtime "${calls}x" -test.count "$runs") | tee "$tmp/out" | grep '^Benchmark'
awk '/^BenchmarkCallBookkeeping/ {
	name=$1; sub(/^BenchmarkCallBookkeeping\//, "", name); sub(/-[0-9]+$/, "", name)
	v[name]=v[name] " " $3
}
END {
	for (name in v) {
		n=split(substr(v[name], 2), a, " ")
		for (i=1; i<=n; i++) for (j=i+1; j<=n; j++) if (a[j] < a[i]) { t=a[i]; a[i]=a[j]; a[j]=t }
		m[name]=(n % 2) ? a[(n+1)/2] : (a[n/2]+a[n/2+1])/2
		printf "%-14s median %8.1f µs per call (%d runs)\n", name, m[name]/1000, n
	}
	if (m["host+0/tree"] > 0) printf "tree: host+2000 / host+0 = %.2f\n", m["host+2000/tree"]/m["host+0/tree"]
	if (m["host+0/tree-nocgroup"] > 0) printf "tree-nocgroup: host+2000 / host+0 = %.2f\n", m["host+2000/tree-nocgroup"]/m["host+0/tree-nocgroup"]
	if (m["host+2000/tree"] > 0) printf "host+2000: scan / tree = %.0f\n", m["host+2000/scan"]/m["host+2000/tree"]
}' "$tmp/out"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
