#!/usr/bin/env bash
# Measures how long `geo-cluster` takes to seed an SQLite store from a layer file and to
# rebuild a live layer from the store at start, for N sightings (default 1,000,000).
#
#   Benchmarks/store_rebuild.sh [N]
#
# It builds the release binary, writes N deterministic sightings over Korea to a GeoJSON
# file in a temporary directory, then times three runs of `geo-cluster query` that each
# answer one `stats` request: the first seeds the store from the file, the next two
# rebuild the layer from the store (the file is removed first, so it cannot be read).
set -euo pipefail
N=${1:-1000000}
cd "$(dirname "$0")/.."
swift build -c release --product geo-cluster >/dev/null
BIN=.build/release/geo-cluster
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

python3 - "$N" "$WORK/birds.geojson" <<'PY'
import random, sys
n, path = int(sys.argv[1]), sys.argv[2]
rng = random.Random(42)
species = [f"species-{i}" for i in range(200)]
with open(path, "w") as out:
    out.write('{"type":"FeatureCollection","features":[\n')
    for i in range(n):
        lon = 124.5 + rng.random() * 5.5
        lat = 33.0 + rng.random() * 5.5
        day = 1 + i % 28
        out.write(('' if i == 0 else ',\n') +
                  f'{{"type":"Feature","id":"s{i}","geometry":{{"type":"Point","coordinates":[{lon:.6f},{lat:.6f}]}},'
                  f'"properties":{{"species":"{rng.choice(species)}","count":{1 + i % 5},'
                  f'"observed_at":"2025-05-{day:02d}T06:30:00+09:00"}}}}')
    out.write('\n]}\n')
PY

run() {
  local label=$1
  local start end
  start=$(date +%s.%N)
  echo '{"id":1,"op":"stats","layer":"birds"}' | "$BIN" query --store "sqlite:$WORK/store.sqlite" \
      --layer-file "sightings:birds=$WORK/birds.geojson" >"$WORK/answer.json"
  end=$(date +%s.%N)
  printf '%-28s %6.2f s   %s\n' "$label" "$(echo "$end - $start" | bc)" "$(head -c 80 "$WORK/answer.json")"
}

echo "sightings: $N"
run "seed store from file"
ls -l "$WORK/store.sqlite" | awk '{printf "store file: %.0f MB\n", $5 / 1048576}'
rm "$WORK/birds.geojson"
echo '{"type":"FeatureCollection","features":[]}' >"$WORK/birds.geojson"
run "rebuild from store"
run "rebuild from store (again)"
