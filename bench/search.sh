#!/usr/bin/env bash
# bench/search.sh — pi's find and grep, as `pi tool call`, against GNU find,
# fd and ripgrep over real trees (GOROOT and the Go module cache by
# default). Every command runs once per round, in turn (interleaved), for
# N rounds; the table has medians and the ratio to the native tool.
# fd and ripgrep are installed with apt-get when missing.
#
# What each run does: pi walks every entry, honours .gitignore (also
# outside a git repository), skips .git and binary files, and includes
# hidden files; so do `rg --hidden --no-require-git` and `fd -H` (fd 8
# reads .gitignore only inside a git repository). pi lists at most
# 100000000 results (no limit in effect); its text is cut at 50KB as
# always, the others print everything (to /dev/null). `pi version` runs
# in every round too: the "less start-up" rows take its median wall time
# off pi's grep times before the ratio to ripgrep.
#
# Usage: bench/search.sh [rounds] [DIR...]   (default 7 rounds)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rounds=${1:-7}
shift || true
dirs=("$@")
[ ${#dirs[@]} -gt 0 ] || dirs=("$(go env GOROOT)" "$(go env GOMODCACHE)")
build_pi
need_tools
# both LABEL ARGS...: measures `pi tool call ARGS` as pi-LABEL and, with
# PI_OLD, the old binary as old-LABEL.
both() {
	local label=$1
	shift
	measure "$label-pi" "$tmp/pi" tool call "$@" --cwd "$tmp"
	[ -z "$old" ] || measure "$label-old" "$old" tool call "$@" --cwd "$tmp"
}
big=100000000
for d in "${dirs[@]}"; do
	for _ in $(seq 1 "$rounds"); do
		measure "version-pi" "$tmp/pi" version
		measure "find-gnu" find "$d" -name '*.go'
		measure "find-fd" "$FD" -H -g '*.go' . "$d"
		both find find "{\"pattern\":\"**/*.go\",\"path\":\"$d\",\"limit\":$big}"
		measure "literal-rg" rg -n --hidden --no-require-git -F CloseWithError "$d"
		both literal grep "{\"pattern\":\"CloseWithError\",\"literal\":true,\"path\":\"$d\",\"limit\":$big}"
		measure "glob-rg" rg -n --hidden --no-require-git -F -g '*.go' CloseWithError "$d"
		both glob grep "{\"pattern\":\"CloseWithError\",\"literal\":true,\"glob\":\"*.go\",\"path\":\"$d\",\"limit\":$big}"
		measure "regex-rg" rg -n --hidden --no-require-git 'func \w+Close\(' "$d"
		both regex grep "{\"pattern\":\"func \\\\w+Close\\\\(\",\"path\":\"$d\",\"limit\":$big}"
		measure "icase-rg" rg -n --hidden --no-require-git -i -F closewitherror "$d"
		both icase grep "{\"pattern\":\"closewitherror\",\"ignoreCase\":true,\"literal\":true,\"path\":\"$d\",\"limit\":$big}"
	done
	echo
	echo "## $d ($(find "$d" | wc -l) entries)"
	header "native"
	row find-gnu find-gnu
	row find-fd find-gnu
	row find-pi find-gnu
	row find-old find-gnu
	printf '| find-pi ÷ fd | | %s | | %s | |\n' "$(ratio "$(median find-pi 2)" "$(median find-fd 2)")" "$(ratio "$(median find-pi 3)" "$(median find-fd 3)")"
	[ -z "$old" ] || printf '| find-old ÷ fd | | %s | | %s | |\n' "$(ratio "$(median find-old 2)" "$(median find-fd 2)")" "$(ratio "$(median find-old 3)" "$(median find-fd 3)")"
	for k in literal glob regex icase; do
		row "$k-rg" "$k-rg"
		row "$k-pi" "$k-rg"
		row "$k-old" "$k-rg"
	done
	# pi's start-up (package init, config) is the same for every call:
	# the search itself is the wall time less that of `pi version`.
	row version-pi literal-rg
	for k in literal glob regex icase; do
		printf '| %s-pi less start-up ÷ rg | | %s | | | |\n' "$k" \
			"$(ratio "$(awk -v a="$(median "$k-pi" 2)" -v b="$(median version-pi 2)" 'BEGIN{printf "%.4f", a-b}')" "$(median "$k-rg" 2)")"
	done
	mv "$tmp/rows" "$tmp/rows.$(basename "$d")"
done
echo "($rounds interleaved rounds; rg and fd use their default threads, $(nproc) here)"
