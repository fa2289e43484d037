#!/usr/bin/env bash
# A live sightings layer of 1M and of 10M points (the Korea mixture of the other
# benchmarks) on one machine: how long `geo-cluster serve` takes to be ready from a
# GeoJSON file, how much memory it holds, viewport requests with wrk, and writes while
# the map is in use.
#
#   Benchmarks/ten_million.sh                                  # 1M then 10M
#   Benchmarks/ten_million.sh --counts 10000000 --duration 60s
#   Benchmarks/ten_million.sh --counts 200000 --duration 5s --warmup 2s    # a quick look
#   Benchmarks/ten_million.sh --counts 10000000 --by-zoom       # and one client's views zoom by zoom
#   Benchmarks/ten_million.sh --counts 10000000 --names korean  # Korean species names, observers
#
# For each count it writes the points as sightings (Benchmarks/write_sightings.py: 200
# species, counts 1-5, one month of observation times; with --names korean, Korean species
# names, 60 of the 200 longer than 15 bytes, and a UUID observer_id) to a GeoJSON file, starts
# `geo-cluster serve --layer-file sightings:korea=FILE --answer-cache-mb 0` (so every
# request is computed), and reports:
# - ready: seconds from start until /readyz answers, the CPU seconds spent by then, and
#   the peak resident memory (VmHWM) at that moment;
# - views: wrk with Benchmarks/wrk_viewport.lua (1280 x 800 views at zooms 3-16 around
#   10,000 random points of the set), --warmup not counted, then --duration: req/s, p50,
#   p99, the server's CPU per request, resident memory (VmRSS) after; then --duration
#   from one connection, whose p50 and p99 are the requests' own latency (with 32
#   connections on 2 cores most of a request's time is waiting behind the others);
# - under writes: the same wrk run while one client inserts batches of --batch new
#   sightings through POST /v1/layers/korea/points, one at a time: records per second
#   acknowledged, write p50/p99, and the viewports' p99 meanwhile;
# - with --by-zoom, after the one-client run: Benchmarks/views_by_zoom.py for --duration
#   (one client's latency per zoom and the server's CPU per view);
# - memory at the end: VmRSS and VmHWM, VmRSS per point, and the kept display groups'
#   items, budget and heap memory (from /metrics; also printed after the views).
# From the resident memory per point (the growth between the smallest and the largest
# count) it estimates the points this machine's memory would hold (MemTotal less 2 GiB).
#
# wrk, the server and the writer share the machine's cores; the 1-minute load average is
# printed with each run. Builds what is missing (release geo-cluster and bench-radius).
# Needs wrk, python3 and curl.
set -euo pipefail
cd "$(dirname "$0")/.."

counts="1000000 10000000"
duration=30s
warmup=10s
connections=32
threads=2
batch=100
port=8091
binary=.build/release/geo-cluster
by_zoom=""
names=plain
while [ $# -gt 0 ]; do
    case "$1" in
        --counts) counts=${2//,/ }; shift 2 ;;
        --duration) duration=$2; shift 2 ;;
        --warmup) warmup=$2; shift 2 ;;
        --connections) connections=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        --batch) batch=$2; shift 2 ;;
        --port) port=$2; shift 2 ;;
        --server) binary=$2; shift 2 ;;
        --by-zoom) by_zoom=1; shift ;;
        --names) names=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
for tool in wrk python3 curl; do
    command -v "$tool" >/dev/null || { echo "$tool is needed" >&2; exit 1; }
done
[ -x "$binary" ] || swift build -c release --product geo-cluster
[ -x Benchmarks/.build/release/bench-radius ] \
    || swift build --package-path Benchmarks -c release --product bench-radius

work=$(mktemp -d)
server=""
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

ticks=$(getconf CLK_TCK)
cpu_seconds() { awk -v t="$ticks" '{ sub(/^.*\) /, ""); printf "%.1f", ($12 + $13) / t }' "/proc/$1/stat"; }
cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
memory_mb() { awk -v k="$2:" '$1 == k { printf "%d", $2 / 1024 }' "/proc/$1/status"; }
load1() { cut -d' ' -f1 /proc/loadavg; }
# The kept display groups (from /metrics): "ITEMS items of a budget of BUDGET, MB MB".
kept_groups() {
    curl -fs "http://127.0.0.1:$port/metrics" | awk '
        /^geocluster_layer_kept_items\{/ { items = $2 } /^geocluster_layer_kept_items_budget\{/ { budget = $2 }
        /^geocluster_layer_kept_bytes\{/ { bytes = $2 }
        END { if (budget) printf "%d items of a budget of %d, %d MB", items, budget, bytes / 1048576 }'
}

# wrk on the views; prints "req/s p50_ms p99_ms requests". A third argument "one" asks
# with one connection (latency without queueing behind other requests).
views() {
    local seconds=$1 latency=() t=$threads c=$connections
    [ "$2" = measured ] && latency=(--latency)
    [ "${3:-}" = one ] && t=1 c=1
    CENTRES="$work/centres.lua" wrk -t"$t" -c"$c" -d"$seconds" "${latency[@]}" \
        -s Benchmarks/wrk_viewport.lua "http://127.0.0.1:$port" > "$work/wrk.txt"
    python3 - "$work/wrk.txt" <<'PYTHON'
import re, sys
text = open(sys.argv[1]).read()
units = {"us": 0.001, "ms": 1, "s": 1000, "m": 60000}
def percentile(p):
    match = re.search(rf"^\s*{p}%\s+([\d.]+)(\w+)", text, re.M)
    return float(match.group(1)) * units[match.group(2)] if match else float("nan")
rate = float(re.search(r"Requests/sec:\s*([\d.]+)", text).group(1))
requests = int(re.search(r"(\d+) requests in", text).group(1))
errors = int(re.search(r"non-2xx or socket errors: (\d+)", text).group(1))
if errors: sys.exit(f"{errors} non-2xx or socket errors")
print(f"{rate:.0f} {percentile(50):.2f} {percentile(99):.2f} {requests}")
PYTHON
}

printf "count\tready s\tready CPU s\tpeak MB at ready\treq/s\tp50 ms\tp99 ms\tCPU ms/req\tone client p50 ms\tone client p99 ms\tRSS MB after views\twrites rec/s\twrite p50 ms\twrite p99 ms\tp99 ms under writes\tRSS MB\tpeak MB\tbytes/point\tload\n" > "$work/results.tsv"
for count in $counts; do
    echo "== $count points"
    Benchmarks/.build/release/bench-radius points --distribution korea --count "$count" \
        --points "$work/points.f64" --viewports "$work/viewports.f64" > /dev/null
    python3 Benchmarks/write_sightings.py "$work" --names "$names"
    echo "  layer file: $(du -m "$work/birds.geojson" | cut -f1) MB"
    started=$(date +%s.%N)
    "$binary" serve --layer-file "sightings:korea=$work/birds.geojson" --port "$port" \
        --log-level warning --answer-cache-mb 0 &
    server=$!
    until curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; do
        kill -0 "$server" 2>/dev/null || { echo "the server exited" >&2; exit 1; }
        sleep 0.2
    done
    ready=$(echo "$started $(date +%s.%N)" | awk '{ printf "%.1f", $2 - $1 }')
    ready_cpu=$(cpu_seconds "$server"); ready_peak=$(memory_mb "$server" VmHWM)
    echo "  ready after $ready s ($ready_cpu CPU s), peak $ready_peak MB, resident $(memory_mb "$server" VmRSS) MB"

    views "$warmup" warmup > /dev/null
    load=$(load1); before=$(cpu_ticks "$server")
    read -r rate p50 p99 requests < <(views "$duration" measured)
    cpu_per_request=$(awk -v a="$before" -v b="$(cpu_ticks "$server")" -v t="$ticks" -v n="$requests" \
        'BEGIN { printf "%.3f", (b - a) * 1000 / t / n }')
    rss_views=$(memory_mb "$server" VmRSS)
    echo "  views: $rate req/s, p50 $p50 ms, p99 $p99 ms, $cpu_per_request CPU ms/req, resident $rss_views MB (load $load)"
    echo "  kept groups after the views: $(kept_groups)"
    read -r _ one_p50 one_p99 _ < <(views "$duration" measured one)
    echo "  views from one client: p50 $one_p50 ms, p99 $one_p99 ms"
    if [ -n "$by_zoom" ]; then
        zoom_seconds=${duration%s}
        [[ "$zoom_seconds" =~ ^[0-9]+$ ]] || zoom_seconds=20
        python3 Benchmarks/views_by_zoom.py --port "$port" --centres "$work/centres.lua" --seconds "$zoom_seconds" \
            --pid "$server" | sed 's/^/    /'
    fi

    # Writes while wrk asks for views: one writer, batches of new sightings, until wrk ends.
    python3 - "$port" "$batch" "$work/writes.txt" <<'PYTHON' &
import http.client, json, os, random, statistics, sys, time
port, size, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
connection = http.client.HTTPConnection("127.0.0.1", port)
generator = random.Random(7)
latencies, written, n, start = [], 0, 0, time.perf_counter()
deadline = start + 3600
while time.perf_counter() < deadline:
    records = [{"id": f"w{n}-{i}", "lon": 126 + generator.random() * 3, "lat": 34.5 + generator.random() * 3,
                "species": f"species-{generator.randrange(200)}", "count": 1,
                "observed_at": "2025-06-01T06:30:00+09:00"} for i in range(size)]
    body = json.dumps(records)
    sent = time.perf_counter()
    try:
        connection.request("POST", "/v1/layers/korea/points", body, {"Content-Type": "application/json"})
        response = connection.getresponse(); response.read()
    except (ConnectionError, http.client.HTTPException):
        break  # the server is stopping
    if response.status != 201: sys.exit(f"write answered {response.status}")
    latencies.append((time.perf_counter() - sent) * 1000)
    written += size; n += 1
    try:
        # Replaced whole (written aside, then renamed): the writer is killed at any moment.
        with open(out + ".part", "w") as part:
            part.write(f"{written / (time.perf_counter() - start):.0f} {statistics.median(latencies):.2f} "
                       f"{sorted(latencies)[int(len(latencies) * 0.99)]:.2f} {written}\n")
        os.replace(out + ".part", out)
    except OSError:
        break
PYTHON
    writer=$!
    read -r _ _ p99_writes _ < <(views "$duration" measured)
    kill "$writer" 2>/dev/null || true; wait "$writer" 2>/dev/null || true
    if [ -s "$work/writes.txt" ]; then
        read -r write_rate write_p50 write_p99 written < "$work/writes.txt"
    else
        write_rate=0 write_p50=nan write_p99=nan written=0
    fi
    rm -f "$work/writes.txt" "$work/writes.txt.part"
    echo "  under writes: $written records at $write_rate records/s (write p50 $write_p50 ms, p99 $write_p99 ms); views p99 $p99_writes ms"

    rss=$(memory_mb "$server" VmRSS); peak=$(memory_mb "$server" VmHWM)
    per_point=$(awk -v r="$rss" -v n="$count" 'BEGIN { printf "%.0f", r * 1048576 / n }')
    echo "  memory: resident $rss MB, peak $peak MB, $per_point bytes per point"
    echo "  kept groups at the end: $(kept_groups)"
    kill "$server"; wait "$server" 2>/dev/null || true; server=""
    printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$count" "$ready" "$ready_cpu" \
        "$ready_peak" "$rate" "$p50" "$p99" "$cpu_per_request" "$one_p50" "$one_p99" "$rss_views" "$write_rate" "$write_p50" \
        "$write_p99" "$p99_writes" "$rss" "$peak" "$per_point" "$load" >> "$work/results.tsv"
done

echo
column -t -s $'\t' "$work/results.tsv"
python3 - "$work/results.tsv" <<'PYTHON'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
if len(rows) >= 2:
    first, last = rows[0], rows[-1]
    growth = float(last["count"]) / float(first["count"])
    print(f"\nfrom {int(first['count']):,} to {int(last['count']):,} points ({growth:g}x):")
    for field in ("ready s", "ready CPU s", "peak MB at ready", "p50 ms", "p99 ms", "CPU ms/req", "one client p50 ms",
                  "one client p99 ms", "RSS MB", "p99 ms under writes"):
        a, b = float(first[field]), float(last[field])
        print(f"  {field:22} {a:>10g} -> {b:>10g}  ({b / a:.2f}x)" if a else f"  {field:22} {a} -> {b}")
total = next(int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal:")) * 1024
# Bytes per point: the growth from the smallest to the largest count when there are two
# (so the process's own baseline is left out), else the largest count's share.
per_point = float(rows[-1]["bytes/point"])
if len(rows) >= 2 and float(rows[-1]["count"]) > float(rows[0]["count"]):
    per_point = (float(rows[-1]["RSS MB"]) - float(rows[0]["RSS MB"])) * 1048576 / (float(rows[-1]["count"]) - float(rows[0]["count"]))
peak_ratio = float(rows[-1]["peak MB"]) / float(rows[-1]["RSS MB"])
usable = total - 2 * 1024 ** 3
print(f"\nthis machine: {total / 1024 ** 3:.1f} GiB; at {per_point:.0f} resident bytes per point it holds about "
      f"{usable / per_point / 1e6:.0f}M points running, or {usable / per_point / peak_ratio / 1e6:.0f}M if the start-up "
      f"peak ({peak_ratio:.1f}x the running memory) must fit too")
PYTHON
