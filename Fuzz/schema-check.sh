#!/usr/bin/env bash
# A bounded property-based check of docs/openapi.yaml against a running server (run by
# Fuzz/run.sh after the fuzzers, so by make fuzz and CI).
#
#   Fuzz/schema-check.sh                        # .build/debug/geo-cluster, built when missing
#   Fuzz/schema-check.sh path/to/geo-cluster
#   SCHEMA_EXAMPLES=100 Fuzz/schema-check.sh    # test cases per operation and phase (default 25)
#   SCHEMA_SPEC=/tmp/openapi.yaml Fuzz/schema-check.sh   # check another copy of the spec
#   SCHEMA_SEED=7 Fuzz/schema-check.sh          # another fixed seed (default 20261124)
#
# Starts `geo-cluster serve --data Data` on a free port of 127.0.0.1 and runs schemathesis
# (pinned, installed into .build-fuzz/schemathesis-venv when missing) over every operation
# of the spec: its examples, boundary values, random valid and invalid requests, and
# stateful sequences. It fails when an answer is a 5xx, has a status, a content type,
# headers or a body the spec does not document for it. The server always stops at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

binary=${1:-.build/debug/geo-cluster}
spec=${SCHEMA_SPEC:-docs/openapi.yaml}
examples=${SCHEMA_EXAMPLES:-25}
seed=${SCHEMA_SEED:-20261124}
schemathesis_version=4.32.5
venv=.build-fuzz/schemathesis-venv
checks=not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance

case $binary in /*) ;; *) binary=$root/$binary ;; esac
case $spec in /*) ;; *) spec=$root/$spec ;; esac
[ -f "$spec" ] || { echo "schema-check: no spec at $spec" >&2; exit 2; }

if [ ! -x "$binary" ]; then
  if [ "$binary" = "$root/.build/debug/geo-cluster" ]; then
    echo "schema-check: building geo-cluster (swift build --product geo-cluster)"
    swift build --product geo-cluster
  else
    echo "schema-check: no executable at $binary" >&2
    exit 2
  fi
fi

if ! "$venv/bin/schemathesis" --version 2>/dev/null | grep -qF "$schemathesis_version"; then
  echo "schema-check: installing schemathesis $schemathesis_version into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv" || { echo "schema-check: python3 -m venv failed (apt-get install python3-venv)" >&2; exit 2; }
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$schemathesis_version"
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/schema-check.XXXXXX")
server_pid=
checker_pid=
cleanup() {
  if [ -n "$checker_pid" ]; then
    kill "$checker_pid" 2>/dev/null || true
    wait "$checker_pid" 2>/dev/null || true
  fi
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# POST /v1/query bodies are application/x-ndjson: plain text on the wire, so schemathesis
# may send them with its text/plain serializer.
cat > "$scratch/hooks.py" <<'EOF'
import schemathesis

schemathesis.serializer.alias("application/x-ndjson", "text/plain")
EOF

# Requests that reach the engine's logic: the nearby, reachability and write routes get a layer
# (and a station) that exists in Data; every other parameter is generated. The coverage
# phase also sends methods a path does not take (they must get 405); QUERY is left out:
# the server implements it on no path and answers 501 `method_not_implemented` by design
# (docs/HTTP.md), which not_a_server_error would take for a server error.
cat > "$scratch/schemathesis.toml" <<'EOF'
[phases.coverage]
unexpected-methods = ["get", "put", "post", "delete", "options", "patch", "trace"]

[[operations]]
include-operation-id = "reachable"
parameters = { "query.layer" = "places", "query.station" = "seoul", "query.stations_layer" = "stations" }

[[operations]]
include-operation-id = "route"
parameters = { "query.layer" = "helsinki_places", "query.station" = "helsinki-central", "query.stations_layer" = "helsinki_stations", "query.place" = "n59622323" }

[[operations]]
include-operation-id = "nearby"
parameters = { "path.layer" = "places" }

[[operations]]
include-operation-id = "species"
parameters = { "path.layer" = "sightings" }

[[operations]]
include-operation-id = "stations"
parameters = { "query.stations_layer" = "stations" }

[[operations]]
include-operation-id-regex = "^(listPoints|insertPoints|upsertPoints|upsertPoint|deletePoints|deletePoint|getPoint)$"
parameters = { "path.layer" = "places" }
EOF

# The server: in-memory layers only (no store), on a port the kernel picks.
env -u GEO_CLUSTER_STORE -u GEO_CLUSTER_CORS_ORIGINS -u GEO_CLUSTER_KEYS \
  "$binary" serve --data "$root/Data" --host 127.0.0.1 --port 0 --idle-timeout 0 2>"$scratch/server.log" &
server_pid=$!
port=
for _ in $(seq 1 600); do
  port=$(sed -n 's|.*geo-cluster listening on http://127\.0\.0\.1:\([0-9][0-9]*\).*|\1|p' "$scratch/server.log" | head -n 1)
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$port" ]; then
  cat "$scratch/server.log" >&2
  echo "schema-check: FAIL: the server did not start" >&2
  exit 1
fi

echo "schema-check: $(basename "$spec") against http://127.0.0.1:$port, $examples examples per operation, seed $seed"
start=$(date +%s)
status=0
# Run from the scratch directory, so that no schemathesis.toml or .hypothesis of the
# tree is read or written; no proxy, the server is local.
# In the background, so that a signal to this script stops it at once (through the traps).
(cd "$scratch" && exec env -u http_proxy -u HTTP_PROXY -u https_proxy -u HTTPS_PROXY -u all_proxy -u ALL_PROXY \
  NO_PROXY=127.0.0.1 SCHEMATHESIS_HOOKS="$scratch/hooks.py" \
  timeout 600 "$root/$venv/bin/schemathesis" --config-file "$scratch/schemathesis.toml" run "$spec" \
    --url "http://127.0.0.1:$port" \
    --checks "$checks" \
    --max-examples "$examples" --workers 1 --seed "$seed" --request-timeout 10 \
    --generation-database none --no-color) >"$scratch/schemathesis.log" 2>&1 &
checker_pid=$!
wait "$checker_pid" || status=$?
checker_pid=
seconds=$(( $(date +%s) - start ))

if ! kill -0 "$server_pid" 2>/dev/null; then
  echo "schema-check: the server exited during the run:" >&2
  tail -n 40 "$scratch/server.log" >&2
  [ "$status" -ne 0 ] || status=1
fi

cases=$(grep -E '^ +[0-9]+ generated' "$scratch/schemathesis.log" | tail -n 1 | sed 's/^ *//')
if [ "$status" -eq 0 ]; then
  echo "schema-check: PASS: ${cases:-no test cases reported} in ${seconds}s (checks: $checks)"
else
  cat "$scratch/schemathesis.log"
  [ "$status" -eq 124 ] && echo "schema-check: schemathesis ran past 600 s and was stopped" >&2
  echo "schema-check: FAIL (exit $status): ${cases:-no test cases reported} in ${seconds}s; replay with" \
    "${SCHEMA_SPEC:+SCHEMA_SPEC=$SCHEMA_SPEC }SCHEMA_SEED=$seed SCHEMA_EXAMPLES=$examples Fuzz/schema-check.sh${1:+ $1}" >&2
  exit 1
fi
