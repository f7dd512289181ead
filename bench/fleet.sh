#!/usr/bin/env bash
# bench/fleet.sh — pi fleet's throughput and per-task overhead on this
# machine: batches of 32 tasks (a scripted model making one bash edit, so
# no model time) through the embedded NATS server and one worker running
# real pi processes, at 1, 4 and 16 runs at once (BenchmarkFleet in
# runtime/fleet). Prints tasks per minute and, per task, the pi run's
# time, the workspace's (unpack, git baseline, patch) and the queue's
# (submit, claim, storing the result, status, ack), in ms.
#
# Usage: bench/fleet.sh [batches]   (from the repository root; default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
batches=${1:-2}
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
go test -run '^$' -bench BenchmarkFleet -benchtime "${batches}x" ./runtime/fleet | grep '^Benchmark'
