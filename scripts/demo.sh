#!/usr/bin/env bash
# Migrate a temporary copy of example sessions, print the savings, and
# prove that rehydrating gives back every byte.
set -euo pipefail
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cp -R "$src" "$work/sessions"
echo "== transcript-tool migrate $src (a copy in $work)"
"$bin" --progress never migrate "$work/sessions"
echo
echo "== migrate again: nothing left to do"
"$bin" --progress never migrate "$work/sessions" | tail -n 1
echo
echo "== rehydrate and compare with the originals"
"$bin" --progress never rehydrate --out "$work/restored" "$work/sessions" >/dev/null
(cd "$src" && find . -name '*.jsonl' -type f | sort | xargs sha256sum) >"$work/want.sha256"
(cd "$work/restored" && sha256sum -c --quiet "$work/want.sha256")
echo "all $(wc -l <"$work/want.sha256") transcripts restored byte for byte"
