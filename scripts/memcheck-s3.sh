#!/usr/bin/env bash
# memcheck-s3.sh BIN [BYTES [RECORDS]]: peak RSS of migrate and rehydrate
# of a transcript with one line of BYTES (default 1e9), its payload stored
# in S3: a versitygw (go install github.com/versity/versitygw/cmd/versitygw@v1.8.0)
# started on loopback for the run. The round trip must be identical. Then
# ls and cat of a registry of RECORDS records (default 1e6) in a bucket:
# versitygw's posix backend keeps an object as a file under its key, so
# the registry genregistry writes into the bucket's folder is its objects.
set -euo pipefail
bin=$(realpath "$1")
bytes=${2:-1000000000}
records=${3:-1000000}
gw=$(command -v versitygw || echo "$HOME/go/bin/versitygw")
[ -x "$gw" ] || { echo "memcheck-s3: versitygw not found" >&2; exit 2; }
dir=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
mkdir -p "$dir/gw/memcheck"
go run ./internal/reggen/cmd/genregistry -n "$records" -out "$dir/gw/memcheck/registry-store"
port=$(( 20000 + RANDOM % 20000 ))
ROOT_ACCESS_KEY=memcheck ROOT_SECRET_KEY=memchecksecret "$gw" --port "127.0.0.1:$port" posix "$dir/gw" >"$dir/gw.log" 2>&1 &
pid=$!
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
export AWS_ENDPOINT_URL_S3="http://127.0.0.1:$port" AWS_ACCESS_KEY_ID=memcheck AWS_SECRET_ACCESS_KEY=memchecksecret \
  AWS_REGION=us-east-1 AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
go run ./internal/sessiongen/cmd/gensessions -bigline "$bytes" -out "$dir/orig.jsonl" >/dev/null
cp "$dir/orig.jsonl" "$dir/big.jsonl"
/usr/bin/time -f "migrate into S3, a line of $bytes bytes: %M KiB peak RSS, %e s" \
  "$bin" --progress never migrate --store s3://memcheck/store "$dir/big.jsonl" >/dev/null
/usr/bin/time -f "rehydrate from S3: %M KiB peak RSS, %e s" \
  "$bin" --progress never rehydrate --store s3://memcheck/store "$dir/big.jsonl" | cmp - "$dir/orig.jsonl"
echo "round trip through S3: identical"
rows=$(/usr/bin/time -f "ls of a registry of $records records in S3: %M KiB peak RSS, %e s" \
  "$bin" --progress never ls --store s3://memcheck/registry-store | tail -n +2 | wc -l)
[ "$rows" -eq "$records" ] || { echo "memcheck-s3: ls listed $rows rows of $records" >&2; exit 1; }
# The registry's artifacts are not in the bucket: cat finds the record of
# the tool call, then reports its artifact missing.
out=$(/usr/bin/time -f "cat by tool call id from it: %M KiB peak RSS, %e s" \
  "$bin" --progress never cat --store s3://memcheck/registry-store toolu_00000042 2>&1 >/dev/null || true)
grep -q 'artifact not found' <<<"$out" || { echo "memcheck-s3: cat: $out" >&2; exit 1; }
grep 'peak RSS' <<<"$out"
