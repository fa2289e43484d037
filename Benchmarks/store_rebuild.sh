#!/usr/bin/env bash
# Measures how long `geo-cluster` takes to seed an SQLite store from a layer file and to
# rebuild a live layer from the store at start, for N sightings (default 1,000,000).
#
#   Benchmarks/store_rebuild.sh [N] [STORE]
#
# STORE is a --store value (default: an SQLite file in the temporary directory); a
# PostgreSQL database given there must not hold the layer `birds` yet.
#
# It builds the release binary, writes N deterministic sightings over Korea to a GeoJSON
# file in a temporary directory, then times three runs of `geo-cluster query` that each
# answer one `stats` request: the first seeds the store from the file, the next two
# rebuild the layer from the store (the file is emptied first, so it cannot be the
# source). Each run prints its wall time and peak resident memory (GNU time).
#
# With IDS=random each sighting gets a random id of 16 hex digits (as an app that makes
# its own ids writes them) instead of s0, s1, …, so that the ids' order is not the order
# the rows were written in.
set -euo pipefail
N=${1:-1000000}
cd "$(dirname "$0")/.."
STORE_ARG=${2:-}
swift build -c release --product geo-cluster >/dev/null
BIN=.build/release/geo-cluster
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
STORE=${STORE_ARG:-sqlite:$WORK/store.sqlite}

python3 - "$N" "$WORK/birds.geojson" "${IDS:-sequential}" <<'PY'
import random, sys
n, path, ids = int(sys.argv[1]), sys.argv[2], sys.argv[3]
rng = random.Random(42)
id_rng = random.Random(7)
species = [f"species-{i}" for i in range(200)]
with open(path, "w") as out:
    out.write('{"type":"FeatureCollection","features":[\n')
    for i in range(n):
        lon = 124.5 + rng.random() * 5.5
        lat = 33.0 + rng.random() * 5.5
        day = 1 + i % 28
        out.write(('' if i == 0 else ',\n') +
                  f'{{"type":"Feature","id":"{f"{id_rng.getrandbits(64):016x}" if ids == "random" else f"s{i}"}","geometry":{{"type":"Point","coordinates":[{lon:.6f},{lat:.6f}]}},'
                  f'"properties":{{"species":"{rng.choice(species)}","count":{1 + i % 5},'
                  f'"observed_at":"2025-05-{day:02d}T06:30:00+09:00"}}}}')
    out.write('\n]}\n')
PY

run() {
  local label=$1
  echo '{"id":1,"op":"stats","layer":"birds"}' | /usr/bin/time -o "$WORK/time.txt" -f '%e %M' \
      "$BIN" query --store "$STORE" \
      --layer-file "sightings:birds=$WORK/birds.geojson" >"$WORK/answer.json"
  read -r seconds kilobytes <"$WORK/time.txt"
  printf '%-28s %6.2f s   peak RSS %5d MB   %s\n' "$label" "$seconds" "$((kilobytes / 1024))" \
      "$(grep -o '"count":[0-9]*' "$WORK/answer.json")"
}

echo "sightings: $N"
run "seed store from file"
[ -f "$WORK/store.sqlite" ] && ls -l "$WORK/store.sqlite" | awk '{printf "store file: %.0f MB\n", $5 / 1048576}'
rm "$WORK/birds.geojson"
echo '{"type":"FeatureCollection","features":[]}' >"$WORK/birds.geojson"
run "rebuild from store"
run "rebuild from store (again)"
