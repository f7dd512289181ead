#!/usr/bin/env bash
# bench/all.sh — every figure of docs/performance.md's first table in one
# run, one script after the other: start-up, write (the tool, then through
# the loop), edit, bash, find and grep. Each prints the machine's load when
# it starts.
#
# Usage: bench/all.sh [quick]   (quick: fewer rounds, for a smoke test)
set -euo pipefail
cd "$(dirname "$0")"
if [ "${1:-}" = quick ]; then
	./startup.sh 20; ./write.sh 3; ./loopwrite.sh 3; ./edit.sh 3; ./bash.sh 3 30000000; ./search.sh 2
else
	./startup.sh; ./write.sh; ./loopwrite.sh; ./edit.sh; ./bash.sh; ./search.sh
fi
