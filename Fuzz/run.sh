#!/usr/bin/env bash
# Builds the libFuzzer targets and runs each for a bounded time (make fuzz), then checks
# docs/openapi.yaml against the running server (Fuzz/schema-check.sh).
#
#   Fuzz/run.sh                  # each target for $FUZZ_SECONDS (default 60) seconds
#   FUZZ_SECONDS=600 Fuzz/run.sh
#   SCHEMA_EXAMPLES=100 Fuzz/run.sh   # more test cases per operation in the schema check
#
# The corpora start from the golden request files (Tests/GeoClusterEngineTests/Golden)
# and grow in .build-fuzz/corpus/<target>. A crash, a trap, or an input that runs for more
# than 10 s fails the run; libFuzzer saves the input under .build-fuzz/artifacts/ and
# prints its path (replay it with `.build-fuzz/release/<target> <file>`). A failure of the
# schema check fails the run too; it uses the debug build .build/debug/geo-cluster,
# built when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
scratch=.build-fuzz

for target in fuzz-lines fuzz-http; do
  GEO_CLUSTER_FUZZ=1 swift build --scratch-path "$scratch" -c release --product "$target" \
    -Xswiftc -sanitize=fuzzer -Xswiftc -use-ld=lld -Xlinker --allow-multiple-definition
done

# Seeds: every golden request line, as a line for fuzz-lines and as the body of a
# POST /v1/query for fuzz-http, plus requests for the REST and write routes.
mkdir -p "$scratch/corpus/fuzz-lines" "$scratch/corpus/fuzz-http" "$scratch/artifacts"
n=0
for file in Tests/GeoClusterEngineTests/Golden/*.request.jsonl; do
  while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    printf '%s' "$line" > "$scratch/corpus/fuzz-lines/golden-$n"
    printf 'POST /v1/query HTTP/1.1\r\nHost: fuzz\r\nContent-Length: %d\r\n\r\n%s' \
      "$(printf '%s' "$line" | wc -c)" "$line" > "$scratch/corpus/fuzz-http/golden-$n"
  done < "$file"
done
http="$scratch/corpus/fuzz-http"
printf 'GET /v1/layers/sightings/clusters?bbox=124,33,132,39&zoom=6&species=Grus%%20japonensis HTTP/1.1\r\nHost: fuzz\r\n\r\n' > "$http/clusters"
printf 'GET /v1/layers/pts/tiles/6/54/24.mvt HTTP/1.1\r\nHost: fuzz\r\n\r\n' > "$http/tile"
printf 'GET /v1/reachable?layer=places&station=seoul&remaining_minutes=90 HTTP/1.1\r\nHost: fuzz\r\n\r\n' > "$http/reachable"
printf 'PUT /v1/layers/places/points/p9 HTTP/1.1\r\nHost: fuzz\r\nContent-Length: 58\r\n\r\n{"lon":127.03,"lat":37.5,"name":"Cafe","category":"cafe"}' > "$http/put"
printf 'DELETE /v1/layers/places/points/p1 HTTP/1.1\r\nHost: fuzz\r\n\r\n' > "$http/delete"
printf 'POST /v1/query HTTP/1.1\r\nHost: fuzz\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"op"\r\n9\r\n:"stats"}\r\n0\r\n\r\n' > "$http/chunked"

status=0
for target in fuzz-lines fuzz-http; do
  echo "fuzzing $target for $seconds s"
  if ! "$scratch/release/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
      -artifact_prefix="$scratch/artifacts/$target-" "$scratch/corpus/$target" 2>"$scratch/$target.log"; then
    status=1
    tail -n 40 "$scratch/$target.log"
    echo "$target found a failing input; it is saved under $scratch/artifacts/" >&2
  else
    grep -E '^stat::number_of_executed_units|^Done' "$scratch/$target.log" || true
  fi
done

echo "checking docs/openapi.yaml against the server"
if ! bash Fuzz/schema-check.sh; then
  status=1
fi
exit $status
