#!/usr/bin/env bash
# Run every command of two builds of transcript-tool on the same copies of
# testdata/sessions and ../shared/corpus (when present) and show where
# their outputs differ: a change meant only to restructure the code must
# print nothing here.
#
#   scripts/same-output.sh OLD_BIN NEW_BIN
#
# Each build runs in turn in the same folder, so that the absolute paths
# written into placeholders and printed in reports are the same. migrate
# runs on one worker: which file of a run writes an artifact and which
# deduplicates it, and so the order of ls, is otherwise the order in which
# the workers reached it. Exit status 0 when every output (stdout, stderr,
# exit status) and every migrated and restored file is the same, 1
# otherwise.
set -euo pipefail
export LC_ALL=C NO_COLOR=1

if [ $# -ne 2 ]; then
	echo "usage: $0 OLD_BIN NEW_BIN" >&2
	exit 2
fi
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
old=$(abs "$1")
new=$(abs "$2")
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run BIN OUT: every command, its outputs in OUT/NN-name.{out,err,status}.
run() {
	local bin=$1 out=$2 n=0
	mkdir -p "$out"
	rm -rf "$work/t"
	mkdir "$work/t"
	cp -R "$root/testdata/sessions" "$work/t/sessions"
	if [ -d "$root/../shared/corpus" ]; then
		cp -R "$root/../shared/corpus" "$work/t/corpus"
	fi
	cd "$work/t"
	step() {
		local name=$1
		shift
		n=$((n + 1))
		local f
		f=$(printf '%s/%02d-%s' "$out" "$n" "$name")
		set +e
		"$bin" --progress never "$@" >"$f.out" 2>"$f.err"
		echo $? >"$f.status"
		set -e
	}
	local s
	for s in sessions corpus; do
		[ -d "$s" ] || continue
		step "$s-stats" stats "$s"
		step "$s-stats-json" stats --json "$s"
		step "$s-check" check --no-references "$s"
		step "$s-check-json" check --no-references --format json "$s"
		step "$s-dry-run" migrate --jobs 1 --dry-run --json "$s"
		step "$s-migrate" migrate --jobs 1 --json "$s"
		step "$s-migrate-again" migrate "$s"
		step "$s-check-after" check "$s"
		step "$s-verify" verify "$s"
		step "$s-gc" gc "$s"
		local store
		for store in $(find "$s" -type d -name artifacts | sort); do
			step "$s-ls" ls --store "$store"
			step "$s-ls-json" ls --json --store "$store"
		done
		local t
		for t in $(find "$s" -name '*.jsonl' -not -path '*/artifacts/*' | sort | head -n 40); do
			step "$s-show" show "$t"
			step "$s-recall" recall "$t"
			step "$s-recall-json" recall --format json "$t"
		done
		step "$s-rehydrate" rehydrate --out "$work/t/restored-$s" "$s"
		# The registry's segments are named and stamped with the time of
		# the run; the objects and the transcripts are compared.
		(cd "$work/t" && find "$s" "restored-$s" -type f -not -path '*/registry/*' | sort | xargs sha256sum) >"$out/files-$s.sha256"
	done
	cd "$root"
	# Times of the run itself (a record's createdAt, a segment's name)
	# differ from one run to the next.
	find "$out" -type f -exec sed -i -E "s/$(date -u +%Y-%m-%d)T[0-9:.]+Z/NOW/g; s/[0-9]{8}T[0-9]{6}\.[0-9]+Z_[^_\/]+_[0-9]+_[0-9]+/SEGMENT/g" {} +
}

run "$old" "$work/old"
run "$new" "$work/new"
if diff -r "$work/old" "$work/new"; then
	echo "same output: $(find "$work/old" -name '*.status' | wc -l) commands, and the files they wrote"
else
	exit 1
fi
