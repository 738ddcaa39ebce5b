#!/usr/bin/env bash
# Migrate a temporary copy of example sessions, print the savings, and
# prove that rehydrating gives back every byte.
set -euo pipefail
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The sessions of the tests but for the one made to be of no known format
# (a pi session cut off before its header): migrate skips it with a
# warning, which is for the tests to see, not for the demo.
mkdir "$work/sessions"
find "$src" -maxdepth 1 -name '*.jsonl' ! -name 'bom-big-first-line.jsonl' -exec cp {} "$work/sessions/" \;
echo "== transcript-tool migrate $src (a copy in $work)"
"$bin" --progress never migrate "$work/sessions"
echo
echo "== migrate again: nothing left to do"
"$bin" --progress never migrate "$work/sessions" | head -n 1
echo
echo "== rehydrate and compare with the originals"
"$bin" --progress never rehydrate --out "$work/restored" "$work/sessions" >/dev/null
(cd "$src" && find . -maxdepth 1 -name '*.jsonl' ! -name 'bom-big-first-line.jsonl' -type f | sort | xargs sha256sum) >"$work/want.sha256"
(cd "$work/restored" && sha256sum -c --quiet "$work/want.sha256")
echo "all $(wc -l <"$work/want.sha256") transcripts restored byte for byte"
