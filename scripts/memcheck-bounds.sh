#!/usr/bin/env bash
# memcheck-bounds.sh BIN: peak RSS where the input, not the tool, would
# choose the memory, each checked against its bound (exit 1 past it):
#  - 8 Codex rollouts of some 150 KB, each a zstd frame that declares a
#    128 MiB window, read at --jobs 8: the windows share one budget for
#    the run, 256 MiB;
#  - a store whose registry segment holds a line of REGLINE bytes
#    (default 300 MB) among its records: verify, ls, cat and recall pass
#    over it without holding it, 64 MiB;
#  - a registry segment of BADLINES lines that are not records (default
#    8 million): ls and cat tell each one, holding none, 64 MiB.
set -euo pipefail
bin=$(realpath "$1")
regline=${REGLINE:-300000000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# peak LIMIT_MIB LABEL WANT_STATUS CMD...: runs CMD, its output dropped,
# prints its peak RSS and fails past LIMIT_MIB or on another exit status.
peak() {
	local limit=$1 label=$2 want=$3 st=0 kib secs
	shift 3
	/usr/bin/time -o "$dir/time" -f "%M %e" "$@" >/dev/null 2>"$dir/stderr" || st=$?
	read -r kib secs < <(tail -n 1 "$dir/time")
	echo "$label: $kib KiB peak RSS, $secs s (bound $limit MiB)"
	if [ "$st" -ne "$want" ]; then
		echo "memcheck: $label exited $st, not $want:" >&2
		cat "$dir/stderr" >&2
		exit 1
	fi
	if [ "$kib" -gt $((limit * 1024)) ]; then
		echo "memcheck: $label is over $limit MiB" >&2
		exit 1
	fi
}

w="$dir/rollouts"
"${GO:-go}" run ./internal/sessiongen/cmd/gensessions -rollouts 8 -window 27 -out "$w"
label="8 rollouts declaring 128 MiB windows"
peak 256 "$label, check --jobs 8" 1 "$bin" --progress never check --jobs 8 "$w" # their payloads are violations
peak 256 "$label, migrate --dry-run --jobs 8" 0 "$bin" --progress never migrate --dry-run --jobs 8 "$w"
peak 256 "$label, migrate --jobs 8" 0 "$bin" --progress never migrate --jobs 8 --store "$dir/wstore" "$w"

r="$dir/reg"
mkdir -p "$r"
cp testdata/sessions/claude-session.jsonl testdata/sessions/codex-rollout.jsonl "$r/"
"$bin" --progress never migrate --store "$r/store" "$r" >/dev/null
seg=$(ls "$r/store/registry/"*.jsonl | head -n 1)
hash=$(head -c 200 "$seg" | sed -n 's/^{"hash":"\([0-9a-f]*\)".*/\1/p')
# A line that would be a record if it were read: a hash, and a summary of
# REGLINE bytes.
{ printf '{"hash":"%s","size":1,"media":"text/plain","summary":"' "$hash"; head -c "$regline" /dev/zero | tr '\0' x; printf '"}\n'; } >>"$seg"
peak 64 "a registry line of $regline bytes, verify" 1 "$bin" --progress never verify --store "$r/store" "$r"
peak 64 "a registry line of $regline bytes, ls" 1 "$bin" --progress never ls --store "$r/store"
peak 64 "a registry line of $regline bytes, cat" 0 "$bin" --progress never cat --store "$r/store" "$hash"
peak 64 "a registry line of $regline bytes, recall" 0 "$bin" --progress never recall --store "$r/store" "$r/claude-session.jsonl"

# A segment of BADLINES lines that are not records (default 8 million,
# 24 MB) after a thousand records: ls indexes it, then lists through its
# index, and cat looks a tool call id up through it (the store has no
# objects: status 2), each telling every bad line and holding none of
# their numbers, 64 MiB.
badlines=${BADLINES:-8000000}
b="$dir/badlines"
"${GO:-go}" run ./internal/reggen/cmd/genregistry -n 1000 -out "$b"
seg=$(ls "$b/registry/"*.jsonl)
awk -v n="$badlines" 'BEGIN { for (i = 0; i < n; i++) print "{}" }' >>"$seg"
peak 64 "a registry of $badlines lines that are not records, ls (indexing it)" 1 "$bin" --progress never ls --store "$b"
peak 64 "a registry of $badlines lines that are not records, ls" 1 "$bin" --progress never ls --store "$b"
peak 64 "a registry of $badlines lines that are not records, cat by tool call id" 2 "$bin" --progress never cat --store "$b" toolu_00000005
