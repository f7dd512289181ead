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
# always, the others print everything (to /dev/null).
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
pi() { "$tmp/pi" tool call "$1" "$2" --cwd "$tmp"; }
big=100000000
for d in "${dirs[@]}"; do
	for _ in $(seq 1 "$rounds"); do
		measure "find-gnu" find "$d" -name '*.go'
		measure "find-fd" "$FD" -H -g '*.go' . "$d"
		measure "find-pi" "$tmp/pi" tool call find "{\"pattern\":\"**/*.go\",\"path\":\"$d\",\"limit\":$big}" --cwd "$tmp"
		measure "literal-rg" rg -n --hidden --no-require-git -F CloseWithError "$d"
		measure "literal-pi" "$tmp/pi" tool call grep "{\"pattern\":\"CloseWithError\",\"literal\":true,\"path\":\"$d\",\"limit\":$big}" --cwd "$tmp"
		measure "glob-rg" rg -n --hidden --no-require-git -F -g '*.go' CloseWithError "$d"
		measure "glob-pi" "$tmp/pi" tool call grep "{\"pattern\":\"CloseWithError\",\"literal\":true,\"glob\":\"*.go\",\"path\":\"$d\",\"limit\":$big}" --cwd "$tmp"
		measure "regex-rg" rg -n --hidden --no-require-git 'func \w+Close\(' "$d"
		measure "regex-pi" "$tmp/pi" tool call grep "{\"pattern\":\"func \\\\w+Close\\\\(\",\"path\":\"$d\",\"limit\":$big}" --cwd "$tmp"
		measure "icase-rg" rg -n --hidden --no-require-git -i -F closewitherror "$d"
		measure "icase-pi" "$tmp/pi" tool call grep "{\"pattern\":\"closewitherror\",\"ignoreCase\":true,\"literal\":true,\"path\":\"$d\",\"limit\":$big}" --cwd "$tmp"
	done
	echo
	echo "## $d ($(find "$d" | wc -l) entries)"
	header "native"
	row find-gnu find-gnu
	row find-fd find-gnu
	row find-pi find-gnu
	printf '| find-pi ÷ fd | | %s | | %s | |\n' "$(ratio "$(median find-pi 2)" "$(median find-fd 2)")" "$(ratio "$(median find-pi 3)" "$(median find-fd 3)")"
	for k in literal glob regex icase; do
		row "$k-rg" "$k-rg"
		row "$k-pi" "$k-rg"
	done
	mv "$tmp/rows" "$tmp/rows.$(basename "$d")"
done
echo "($rounds interleaved rounds; rg and fd use their default threads, $(nproc) here)"
