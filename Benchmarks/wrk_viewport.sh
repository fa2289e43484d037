#!/usr/bin/env bash
# HTTP throughput of viewport cluster requests against /healthz, with wrk, on 1M points
# of the Korea mixture (Benchmarks/BenchmarkSupport/PointSets.swift, the set the other
# benchmarks use).
#
#   Benchmarks/wrk_viewport.sh                        # both algorithms, 30 s each, 32 connections
#   Benchmarks/wrk_viewport.sh --algorithms live --duration 60s --connections 64 --threads 2
#   Benchmarks/wrk_viewport.sh --servers ../before/.build/release/geo-cluster,.build/release/geo-cluster
#
# --servers compares builds in one run: for each algorithm, each server binary in turn
# (default: this checkout's release build).
#
# For each algorithm (layers.json `options.algorithm`: radius or live) it starts
# `geo-cluster serve` on the layer, runs wrk with Benchmarks/wrk_viewport.lua (a
# 1280x800-pixel viewport at a random zoom 3-16 centred on a random point of the set),
# then wrk on /healthz with the same duration, connections and threads, and prints both
# rates, their ratio and the p99 latencies. wrk and the server share the machine's cores.
# Installs wrk (Debian package) when it is missing; needs python3 and curl.
set -euo pipefail
cd "$(dirname "$0")/.."

algorithms="radius live"
duration=30s
connections=32
threads=2
count=1000000
port=8089
servers=.build/release/geo-cluster
while [ $# -gt 0 ]; do
    case "$1" in
        --algorithms) algorithms=${2//,/ }; shift 2 ;;
        --duration) duration=$2; shift 2 ;;
        --connections) connections=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        --count) count=$2; shift 2 ;;
        --port) port=$2; shift 2 ;;
        --servers) servers=${2//,/ }; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done

if ! command -v wrk >/dev/null; then
    echo "installing wrk"
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq wrk
fi

swift build -c release --product geo-cluster
swift build --package-path Benchmarks -c release --product bench-radius

work=$(mktemp -d)
server=""
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

echo "writing $count Korea-mixture points"
Benchmarks/.build/release/bench-radius points --distribution korea --count "$count" \
    --points "$work/points.f64" --viewports "$work/viewports.f64"
# The points as a GeoJSON layer, and 10,000 of them as the viewport centres of the Lua script.
python3 Benchmarks/write_viewport_points.py "$work"

# wrk's line "99%  12.34ms" and "Requests/sec: 1234.56".
rate() { sed -n 's/^Requests\/sec: *//p' "$1"; }
p99() { awk '$1 == "99%" { print $2 }' "$1"; }

for algorithm in $algorithms; do
    for binary in $servers; do
        cat > "$work/layers.json" <<JSON
{"layers":[{"name":"korea","kind":"points","file":"korea.geojson","options":{"algorithm":"$algorithm"}}]}
JSON
        echo "== $algorithm, $binary: loading $count points"
        "$binary" serve --data "$work" --port "$port" --log-level warning &
        server=$!
        until curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; do
            kill -0 "$server" 2>/dev/null || { echo "geo-cluster serve exited" >&2; exit 1; }
            sleep 1
        done
        curl -s "http://127.0.0.1:$port/metrics" | grep '^geocluster_layer_build_seconds' || true

        CENTRES="$work/centres.lua" wrk -t"$threads" -c"$connections" -d"$duration" --latency \
            -s Benchmarks/wrk_viewport.lua "http://127.0.0.1:$port" > "$work/viewport.txt"
        wrk -t"$threads" -c"$connections" -d"$duration" --latency "http://127.0.0.1:$port/healthz" > "$work/healthz.txt"
        cat "$work/viewport.txt"
        curl -s "http://127.0.0.1:$port/metrics" | grep -E 'requests_total\{route="/v1/layers/\{layer\}/clusters"' || true

        kill "$server"; wait "$server" 2>/dev/null || true; server=""

        viewport=$(rate "$work/viewport.txt"); healthz=$(rate "$work/healthz.txt")
        python3 - "$algorithm $binary" "$viewport" "$healthz" "$(p99 "$work/viewport.txt")" "$(p99 "$work/healthz.txt")" <<'PYTHON'
import sys
algorithm, viewport, healthz, p99_viewport, p99_healthz = sys.argv[1:]
ratio = float(viewport) / float(healthz)
print(f"{algorithm}: viewport {float(viewport):,.0f} req/s (p99 {p99_viewport}), "
      f"/healthz {float(healthz):,.0f} req/s (p99 {p99_healthz}), ratio {ratio:.0%} (target >= 70%)")
PYTHON
    done
done
