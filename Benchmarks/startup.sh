#!/usr/bin/env bash
# How long `geo-cluster serve` takes to be ready with a live sightings layer of N points
# (the Korea mixture of the other benchmarks, as Benchmarks/write_sightings.py writes
# them), from an SQLite store and from the GeoJSON file, for one or more builds taking
# turns in the same run.
#
#   Benchmarks/startup.sh                                         # this checkout's release build
#   Benchmarks/startup.sh --servers /tmp/before/geo-cluster,.build/release/geo-cluster --rounds 6
#   Benchmarks/startup.sh --busy 2       # with two busy loops beside it, a machine as busy as CI's
#   Benchmarks/startup.sh --sources store --count 200000 --rounds 2      # a quick look
#
# The store is seeded once from the file by the first server (`geo-cluster query`), so
# every build reads the same rows. Each round starts each server once per source with
# `--answer-cache-mb 0` and waits for /readyz; it reports the seconds until then, the CPU
# seconds the server spent by then (user and system, /proc/PID/stat), its resident memory
# and its peak (VmRSS, VmHWM), and the 1-minute load average. The summary gives the
# medians per server and source and, for each later server, the median of its ratios to
# the first server's figure of the same round. With --busy N, N `yes > /dev/null` loops
# run for the whole measurement and are stopped at the end.
#
# Builds what is missing (release geo-cluster and bench-radius). Needs python3 and curl.
set -euo pipefail
cd "$(dirname "$0")/.."

servers=.build/release/geo-cluster
rounds=4
count=1000000
busy=0
sources="store file"
port=8092
while [ $# -gt 0 ]; do
    case "$1" in
        --servers) servers=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --count) count=$2; shift 2 ;;
        --busy) busy=$2; shift 2 ;;
        --sources) sources=${2//,/ }; shift 2 ;;
        --port) port=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
for tool in python3 curl; do
    command -v "$tool" >/dev/null || { echo "$tool is needed" >&2; exit 1; }
done
IFS=, read -r -a binaries <<< "$servers"
[ -x .build/release/geo-cluster ] || swift build -c release --product geo-cluster
for binary in "${binaries[@]}"; do
    [ -x "$binary" ] || { echo "no server at $binary" >&2; exit 1; }
done
[ -x Benchmarks/.build/release/bench-radius ] \
    || swift build --package-path Benchmarks -c release --product bench-radius

work=$(mktemp -d)
server=""
loops=()
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    for loop in "${loops[@]}"; do kill "$loop" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

Benchmarks/.build/release/bench-radius points --distribution korea --count "$count" \
    --points "$work/points.f64" --viewports "$work/viewports.f64" > /dev/null
python3 Benchmarks/write_sightings.py "$work" --centres 1
echo '{"type":"FeatureCollection","features":[]}' > "$work/empty.geojson"
echo '{"id":1,"op":"stats","layer":"birds"}' \
    | "${binaries[0]}" query --store "sqlite:$work/store.sqlite" --layer-file "sightings:birds=$work/birds.geojson" \
    | grep -q "\"count\":$count" || { echo "seeding the store failed" >&2; exit 1; }
echo "$count sightings: file $(du -m "$work/birds.geojson" | cut -f1) MB, store $(du -m "$work/store.sqlite" | cut -f1) MB"

for _ in $(seq "$busy"); do
    yes > /dev/null &
    loops+=($!)
done
[ "$busy" -gt 0 ] && sleep 5

ticks=$(getconf CLK_TCK)
printf "round\tserver\tsource\tready s\tCPU s\tuser s\tsystem s\tRSS MB\tpeak MB\tload\n" > "$work/results.tsv"
for round in $(seq "$rounds"); do
    for index in "${!binaries[@]}"; do
        binary=${binaries[$index]}
        for source in $sources; do
            if [ "$source" = store ]; then
                arguments=(--store "sqlite:$work/store.sqlite" --layer-file "sightings:birds=$work/empty.geojson")
            else
                arguments=(--layer-file "sightings:birds=$work/birds.geojson")
            fi
            started=$(date +%s.%N)
            "$binary" serve "${arguments[@]}" --port "$port" --log-level warning --answer-cache-mb 0 &
            server=$!
            until curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; do
                kill -0 "$server" 2>/dev/null || { echo "$binary exited" >&2; exit 1; }
                sleep 0.02
            done
            ready=$(echo "$started $(date +%s.%N)" | awk '{ printf "%.2f", $2 - $1 }')
            read -r user system < <(awk '{ sub(/^.*\) /, ""); print $12, $13 }' "/proc/$server/stat")
            rss=$(awk '$1 == "VmRSS:" { printf "%d", $2 / 1024 }' "/proc/$server/status")
            peak=$(awk '$1 == "VmHWM:" { printf "%d", $2 / 1024 }' "/proc/$server/status")
            kill "$server"; wait "$server" 2>/dev/null || true; server=""
            line=$(awk -v r="$round" -v i="$index" -v s="$source" -v w="$ready" -v u="$user" -v y="$system" -v t="$ticks" \
                -v m="$rss" -v p="$peak" -v l="$(cut -d' ' -f1 /proc/loadavg)" \
                'BEGIN { printf "%s\t%s\t%s\t%s\t%.2f\t%.2f\t%.2f\t%s\t%s\t%s", r, i, s, w, (u + y) / t, u / t, y / t, m, p, l }')
            echo "$line" >> "$work/results.tsv"
            echo "round $round  ${binaries[$index]}  $source: ready $ready s" \
                "$(echo "$line" | awk -F'\t' '{ printf "CPU %s s (user %s, system %s), RSS %s MB, peak %s MB, load %s", $5, $6, $7, $8, $9, $10 }')"
        done
    done
done

echo
python3 - "$work/results.tsv" "$servers" <<'PYTHON'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
servers = sys.argv[2].split(",")
loads = [float(row["load"]) for row in rows]
print(f"medians over {max(int(row['round']) for row in rows)} rounds, load {min(loads):.2f}-{max(loads):.2f}")
print(f"{'server':<40} {'source':<6} {'ready s':>8} {'CPU s':>7} {'peak MB':>8} {'ready / first':>14} {'CPU / first':>12}")
for source in dict.fromkeys(row["source"] for row in rows):
    first = {row["round"]: row for row in rows if row["server"] == "0" and row["source"] == source}
    for index, server in enumerate(servers):
        mine = [row for row in rows if row["server"] == str(index) and row["source"] == source]
        ready = statistics.median(float(row["ready s"]) for row in mine)
        cpu = statistics.median(float(row["CPU s"]) for row in mine)
        peak = statistics.median(float(row["peak MB"]) for row in mine)
        ratios = ""
        if index > 0:
            r = statistics.median(float(row["ready s"]) / float(first[row["round"]]["ready s"]) for row in mine)
            c = statistics.median(float(row["CPU s"]) / float(first[row["round"]]["CPU s"]) for row in mine)
            ratios = f"{r:>14.2f} {c:>12.2f}"
        print(f"{server[-40:]:<40} {source:<6} {ready:>8.2f} {cpu:>7.2f} {peak:>8.0f} {ratios}")
PYTHON
