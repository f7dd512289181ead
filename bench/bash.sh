#!/usr/bin/env bash
# bench/bash.sh — `pi tool call bash` on a command that prints BYTES
# (default 300 MB of 100-character lines) against the same pipeline sent to
# /dev/null (the bare pipeline) and, for reference, piped through `cat`
# into a file (the least any capture that keeps the full output in a file
# must do, as pi must). CPU is user+sys of the whole process tree (GNU time
# counts the pipeline's processes in pi's and bash's). Interleaved runs,
# medians; peak RSS is pi's own (the largest process of the tree).
#
# Usage: bench/bash.sh [runs] [bytes]   (default 7 runs, 300000000)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
runs=${1:-7}
bytes=${2:-300000000}
build_pi
need_tools
pipeline="head -c $bytes /dev/zero | tr '\\0' a | fold -w 100"
args=$(printf '{"command":"%s"}' "${pipeline//\\/\\\\}")
mkdir -p "$tmp/b"
for _ in $(seq 1 "$runs"); do
	measure devnull bash -c "$pipeline > /dev/null"
	measure pi-bash "$tmp/pi" tool call bash "$args" --cwd "$tmp/b"
	# the full-output file pi kept
	rm -rf "${TMPDIR:-/tmp}"/pi-*/pi-bash-*.log 2>/dev/null || true
	if [ -n "$old" ]; then
		measure old-pi-bash "$old" tool call bash "$args" --cwd "$tmp/b"
		rm -rf "${TMPDIR:-/tmp}"/pi-*/pi-bash-*.log 2>/dev/null || true
	fi
	measure cat-to-file bash -c "$pipeline | cat > '$tmp/b/catfile'"
	rm -f "$tmp/b/catfile"
done
echo "pipeline: $pipeline"
header devnull
row devnull devnull
row cat-to-file devnull
row pi-bash devnull
row old-pi-bash devnull
echo "($runs interleaved runs each)"
