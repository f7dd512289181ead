# bench/lib.sh — helpers the bench scripts source: building, timing with
# GNU time, medians, and installing the native tools compared against.

# Every script runs from the repository root and keeps its files in $tmp.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# PI_OLD, when set, is another pi binary (an older build) that the
# scripts run too, interleaved, in rows named old-...: before and after in
# one run.
old=${PI_OLD:-}

# build_pi builds ./cmd/pi into $tmp/pi (and the floors and the loopback
# model server under bench/).
build_pi() {
	go build -o "$tmp/pi" ./cmd/pi
	go build -o "$tmp/hello" ./bench/testdata/hello
	go build -o "$tmp/loadwrite" ./bench/testdata/loadwrite
	go build -o "$tmp/sseserve" ./bench/testdata/sseserve
}

# need_tools installs what is missing of GNU time, fd and ripgrep (Debian
# packages time, fd-find, ripgrep) with apt-get.
need_tools() {
	local missing=()
	[ -x /usr/bin/time ] || missing+=(time)
	command -v fdfind >/dev/null 2>&1 || command -v fd >/dev/null 2>&1 || missing+=(fd-find)
	command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
	if [ ${#missing[@]} -gt 0 ]; then
		local sudo=""
		[ "$(id -u)" = 0 ] || sudo=sudo
		echo "installing ${missing[*]} with apt-get" >&2
		$sudo apt-get update -qq >/dev/null
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
	fi
	FD=$(command -v fdfind || command -v fd)
}

# measure LABEL CMD...: runs CMD once (stdout to /dev/null) under GNU time
# and appends "LABEL wall_s cpu_s maxrss_kb" to $tmp/rows: the wall time
# from bash's microsecond clock around it ($EPOCHREALTIME, read without
# starting a process, so no `date` run is timed with it), user+sys CPU (10 ms steps) and peak
# RSS from GNU time.
measure() {
	local label=$1 s e
	shift
	s=${EPOCHREALTIME/[.,]/}
	/usr/bin/time -f "%U %S %M" -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || {
		echo "$label failed:" >&2
		cat "$tmp/err" >&2
		return 1
	}
	e=${EPOCHREALTIME/[.,]/}
	read -r user sys rss <"$tmp/time"
	echo "$label $(awk -v d=$((e - s)) 'BEGIN{printf "%.4f", d/1e6}') $(awk -v u="$user" -v s="$sys" 'BEGIN{printf "%.2f", u+s}') $rss" >>"$tmp/rows"
}

# median LABEL FIELD: the median of field FIELD (2 wall, 3 CPU, 4 RSS) of
# LABEL's rows.
median() {
	awk -v l="$1" -v f="$2" '$1 == l {print $f}' "$tmp/rows" | sort -g |
		awk '{v[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print v[(NR+1)/2]; else printf "%.4f\n", (v[NR/2]+v[NR/2+1])/2}'
}

# ratio A B: A/B to two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b > 0) printf "%.2f", a/b; else print "nan" }'; }

# row LABEL BASE: a table row for LABEL with its medians and ratios to BASE
# (none when LABEL was not measured).
row() {
	grep -q "^$1 " "$tmp/rows" || return 0
	local w c r bw bc
	w=$(median "$1" 2); c=$(median "$1" 3); r=$(median "$1" 4)
	bw=$(median "$2" 2); bc=$(median "$2" 3)
	printf '| %s | %s | %s | %s | %s | %.1f |\n' "$1" "$w" "$(ratio "$w" "$bw")" "$c" "$(ratio "$c" "$bc")" "$(awk -v r="$r" 'BEGIN{print r/1024}')"
}

header() {
	echo "| run | median wall s | wall ÷ $1 | median CPU s | CPU ÷ $1 | median peak RSS MiB |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: |"
}

# write_args MB WIDTH: a content file of MB megabytes ($tmp/content, lines of
# WIDTH x's behind a number, a tab and quotes) and the write call's
# arguments for it as a model sends them, compact JSON with the content as
# a JSON string ($tmp/args.json, the path $tmp/w/out.txt).
write_args() {
	awk -v n=$(($1 * 1000000)) -v w="$2" -v c="$tmp/content" -v path="$tmp/w/out.txt" 'BEGIN {
		x = sprintf("%" w "s", ""); gsub(/ /, "x", x)
		printf "{\"path\":\"%s\",\"content\":\"", path
		for (i = 0; t < n; i++) {
			line = sprintf("%08d\tfunc \"quoted\" %s\n", i, x); t += length(line)
			printf "%s", line > c
			printf "%08d\\tfunc \\\"quoted\\\" %s\\n", i, x
		}
		print "\"}"
	}' >"$tmp/args.json"
}

echo "# $(basename "$0") at $(git rev-parse --short HEAD 2>/dev/null || echo '?'); $(nproc) cores; load: $(uptime | sed 's/.*load average: //')"
