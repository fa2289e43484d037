#!/usr/bin/env bash
# geo-cluster against what a user would build instead: plain Node `http` with supercluster
# 8.0.1 (Benchmarks/node_supercluster_server.mjs), with wrk, on the viewport requests of
# Benchmarks/wrk_viewport.lua over 1M points of the Korea mixture (the points and viewport
# centres are written as Benchmarks/wrk_viewport.sh writes them).
#
#   Benchmarks/wrk_vs_node.sh                          # both algorithms, gzip and plain, 3 rounds of 20 s
#   Benchmarks/wrk_vs_node.sh --servers ../before/.build/release/geo-cluster,.build/release/geo-cluster
#   Benchmarks/wrk_vs_node.sh --algorithms radius --encodings gzip --rounds 1 --answer-cache-mb 64
#   Benchmarks/wrk_vs_node.sh --answer-cache-mb 64 --centres 20     # 280 views asked again and again
#   Benchmarks/wrk_vs_node.sh --encodings 304,healthz --answer-cache-mb 64   # revalidation against /healthz
#
# In each round it starts, in turn and each fresh on the same points: the Node server, then
# for each algorithm (layers.json `options.algorithm`: radius or live) each geo-cluster
# binary of --servers (labelled A, B, ... in that order). On each it runs, per encoding,
# wrk for --warmup (not counted) and then for --duration, with `Accept-Encoding: gzip`
# ("gzip") or without it ("plain"), and records req/s, p99, the mean KB read per answer
# (headers included), the server's CPU time per request (utime + stime of
# /proc/<pid>/stat, all its threads, before and after the measured run), its resident
# memory after the run (VmRSS) and the 1-minute load average before and after.
# Both servers get the same cluster options (--radius, --extent, --min-zoom, --max-zoom,
# --min-points; geo-cluster's defaults). geo-cluster runs with --answer-cache-mb 0 unless
# told otherwise, so that every request computes and compresses its answer, as the Node
# server (no cache, no ETag) always does. The views are random among --centres centres
# (10,000 by default, as wrk_viewport.sh) times 14 zooms, so they seldom repeat; with a
# few centres they do, and an answer cache can keep them (its hits and misses are printed).
# Node gzips with zlib at level 4 (--node-gzip-level).
# --kept-items N sets the live layer's `kept_items` option (the items its kept groups may
# hold, docs/LIVE.md "Kept groups"); by default the layer's own budget applies.
# Two more encodings measure what a request costs besides its answer: "304" asks again for
# one of --revalidate views (200 by default, random centres and zooms) with the entity
# tag the server gave it a moment before (`If-None-Match`, Benchmarks/wrk_revalidate.lua;
# any answer but 304 counts as an error), and "healthz" asks for `GET /healthz`. The
# Node server has no entity tags, so it runs "healthz" only. With both, the table ends
# with each geo-cluster run's CPU per 304 over its CPU per /healthz.
#
# It prints every run, then a table of medians over the rounds (min-max in brackets) with
# the CPU ratio of each binary to A and the req/s and CPU ratios of geo-cluster to Node.
# It also fetches three fixed views from each server in the first round and compares
# them: the radius layer should answer exactly what supercluster answers.
#
# wrk, the servers and Node share the machine's cores: Node answers on one thread (zlib
# on libuv's pool), geo-cluster on all cores. On a shared machine the rates are capped
# and noisy; CPU per request is the figure to read, with the load averages.
#
# Builds only what is missing (this checkout's release geo-cluster when --servers is not
# given, and bench-radius to write the points). Node needs supercluster and kdbush in
# --peers (default ../shared/peers beside the checkout); when they or node are absent it
# says why and measures geo-cluster alone. Needs wrk, python3 and curl.
set -euo pipefail
cd "$(dirname "$0")/.."

algorithms="radius live"
encodings="gzip plain"
duration=20s
warmup=3s
rounds=3
connections=32
threads=2
count=1000000
centres=10000
revalidate=200
port=8089
servers=""
answer_cache_mb=0
peers=../shared/peers
node_gzip_level=4
radius=40 extent=512 min_zoom=0 max_zoom=16 min_points=2
kept_items=""
while [ $# -gt 0 ]; do
    case "$1" in
        --algorithms) algorithms=${2//,/ }; shift 2 ;;
        --encodings) encodings=${2//,/ }; shift 2 ;;
        --duration) duration=$2; shift 2 ;;
        --warmup) warmup=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --connections) connections=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        --count) count=$2; shift 2 ;;
        --centres) centres=$2; shift 2 ;;
        --revalidate) revalidate=$2; shift 2 ;;
        --port) port=$2; shift 2 ;;
        --servers) servers=${2//,/ }; shift 2 ;;
        --answer-cache-mb) answer_cache_mb=$2; shift 2 ;;
        --peers) peers=$2; shift 2 ;;
        --node-gzip-level) node_gzip_level=$2; shift 2 ;;
        --radius) radius=$2; shift 2 ;;
        --extent) extent=$2; shift 2 ;;
        --min-zoom) min_zoom=$2; shift 2 ;;
        --max-zoom) max_zoom=$2; shift 2 ;;
        --min-points) min_points=$2; shift 2 ;;
        --kept-items) kept_items=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done

for tool in wrk python3 curl; do
    command -v "$tool" >/dev/null || { echo "$tool is needed" >&2; exit 1; }
done
# Builds what is missing and finds Node and the peers (sets with_node).
source Benchmarks/node_comparison.sh

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
# The points as a GeoJSON layer, --centres of them as the viewport centres of the Lua
# script, and three views (zooms 5, 10 and 15) to compare the servers' answers.
python3 Benchmarks/write_viewport_points.py "$work" --centres "$centres" --views --revalidate "$revalidate"

ticks=$(getconf CLK_TCK)
# utime + stime of a process (all its threads), in clock ticks; fields after the ")" of comm.
cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
load1() { cut -d' ' -f1 /proc/loadavg; }
# Resident memory of a process, in kB.
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

# Starts a server (label, algorithm) in the background as $server and waits until it answers.
start_server() {
    local label=$1 algorithm=$2 ready
    if [ "$label" = node ]; then
        node Benchmarks/node_supercluster_server.mjs --data "$work/korea.geojson" --layer korea \
            --port "$port" --peers "$peers" --gzip-level "$node_gzip_level" --radius "$radius" \
            --extent "$extent" --min-zoom "$min_zoom" --max-zoom "$max_zoom" --min-points "$min_points" &
        ready=/healthz
    else
        local kept=""
        if [ -n "$kept_items" ] && [ "$algorithm" = live ]; then kept=",\"kept_items\":$kept_items"; fi
        cat > "$work/layers.json" <<JSON
{"layers":[{"name":"korea","kind":"points","file":"korea.geojson","options":{"algorithm":"$algorithm","radius":$radius,"extent":$extent,"min_zoom":$min_zoom,"max_zoom":$max_zoom,"min_points":$min_points$kept}}]}
JSON
        "${binary_of[$label]}" serve --data "$work" --port "$port" --log-level warning \
            --answer-cache-mb "$answer_cache_mb" &
        ready=/readyz
    fi
    server=$!
    until curl -fs "http://127.0.0.1:$port$ready" >/dev/null 2>&1; do
        kill -0 "$server" 2>/dev/null || { echo "$label server exited" >&2; exit 1; }
        sleep 1
    done
}

stop_server() { kill "$server"; wait "$server" 2>/dev/null || true; server=""; }

# The --revalidate views with the entity tags $server gives them now, as the Lua table
# Benchmarks/wrk_revalidate.lua reads (REVALIDATE).
fetch_tags() {
    local path tag
    echo "return {" > "$work/revalidate.lua"
    while read -r path; do
        tag=$(curl -fs -D - -o /dev/null "http://127.0.0.1:$port$path" | tr -d '\r' \
            | awk 'tolower($1) == "etag:" { print $2 }')
        [ -n "$tag" ] || { echo "no ETag for $path" >&2; exit 1; }
        printf '{"%s",%s},\n' "$path" "$(printf '%s' "$tag" | sed 's/"/\\"/g; s/.*/"&"/')" >> "$work/revalidate.lua"
    done < "$work/revalidate.txt"
    echo "}" >> "$work/revalidate.lua"
}

# One measured wrk run on $server; appends a line to $work/runs.tsv.
measure() {
    local round=$1 label=$2 algorithm=$3 encoding=$4
    local options=() load_before load_after cpu_before cpu_after rss
    case "$encoding" in
        gzip) options=(-H "Accept-Encoding: gzip" -s Benchmarks/wrk_viewport.lua) ;;
        plain) options=(-s Benchmarks/wrk_viewport.lua) ;;
        304) fetch_tags; options=(-s Benchmarks/wrk_revalidate.lua) ;;
        healthz) options=() ;;
    esac
    local url="http://127.0.0.1:$port"
    [ "$encoding" = healthz ] && url="$url/healthz"
    CENTRES="$work/centres.lua" REVALIDATE="$work/revalidate.lua" \
        wrk -t"$threads" -c"$connections" -d"$warmup" "${options[@]}" "$url" > /dev/null
    load_before=$(load1); cpu_before=$(cpu_ticks "$server")
    CENTRES="$work/centres.lua" REVALIDATE="$work/revalidate.lua" \
        wrk -t"$threads" -c"$connections" -d"$duration" --latency "${options[@]}" "$url" > "$work/wrk.txt"
    cpu_after=$(cpu_ticks "$server"); load_after=$(load1); rss=$(rss_kb "$server")
    python3 - "$work/wrk.txt" "$round" "$label" "$algorithm" "$encoding" "$((cpu_after - cpu_before))" "$ticks" \
        "$load_before" "$load_after" "$rss" >> "$work/runs.tsv" <<'PYTHON'
import re, sys
text = open(sys.argv[1]).read()
round_, label, algorithm, encoding, cpu, ticks, load_before, load_after, rss = sys.argv[2:]
units = {"us": 0.001, "ms": 1, "s": 1000, "m": 60000}
size = {"B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3, "TB": 1024 ** 4}
requests, seconds, read, unit = re.search(r"(\d+) requests in ([\d.]+)(\w+), ([\d.]+)(\w+) read", text).group(1, 2, 4, 5)
p99, p99_unit = re.search(r"^\s*99%\s+([\d.]+)(\w+)", text, re.M).groups()
rate = float(re.search(r"Requests/sec:\s*([\d.]+)", text).group(1))
# Runs without a Lua script (healthz) have no error line: wrk prints its own when any.
match = re.search(r"non-2xx or socket errors: (\d+)", text)
errors = int(match.group(1)) if match else 0
match = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
errors += int(match.group(1)) if match else 0
match = re.search(r"answers other than 304: (\d+)", text)
errors += int(match.group(1)) if match else 0
requests = int(requests)
print("\t".join(map(str, [round_, label, algorithm, encoding, requests, f"{rate:.1f}", float(p99) * units[p99_unit],
                           f"{int(cpu) * 1000 / int(ticks) / requests:.4f}", f"{float(read) * size[unit] / requests / 1024:.1f}",
                           load_before, load_after, errors, f"{int(rss) / 1024:.0f}"])))
PYTHON
    tail -n 1 "$work/runs.tsv" | awk -F'\t' '{ printf "  %-6s %-6s %-5s %10.0f req/s  p99 %8.2f ms  %.3f CPU ms/req  %6.1f KB/answer  RSS %s MB  load %s -> %s%s\n", $2, $3, $4, $6, $7, $8, $9, $13, $10, $11, ($12 > 0 ? "  ERRORS " $12 : "") }'
}

# The three fixed views, as sent without gzip, for the comparison at the end.
fetch_views() {
    local name=$1 n=0
    while read -r path; do
        n=$((n + 1))
        curl -fs "http://127.0.0.1:$port$path" > "$work/view-$name-$n.json"
    done < "$work/views.txt"
}

declare -A binary_of
letters=(A B C D E F G H)
labels=()
i=0
for binary in $servers; do
    binary_of[${letters[$i]}]=$binary
    labels+=("${letters[$i]}")
    echo "${letters[$i]} = $binary"
    i=$((i + 1))
done
echo "geo-cluster --answer-cache-mb $answer_cache_mb; options radius $radius, extent $extent, zooms $min_zoom-$max_zoom, min_points $min_points${kept_items:+, live kept_items $kept_items}"
echo "wrk -t$threads -c$connections, $warmup warm-up then $duration per run, views around $centres centres; $(nproc) cores"

printf "round\tserver\talgorithm\tencoding\trequests\treq/s\tp99 ms\tCPU ms/req\tKB/answer\tload before\tload after\terrors\tRSS MB\n" > "$work/runs.tsv"
for round in $(seq 1 "$rounds"); do
    echo "== round $round"
    runs=()
    [ -n "$with_node" ] && runs+=("node:-")
    for algorithm in $algorithms; do
        for label in "${labels[@]}"; do runs+=("$label:$algorithm"); done
    done
    for run in "${runs[@]}"; do
        label=${run%%:*}; algorithm=${run#*:}
        start_server "$label" "$algorithm"
        [ "$round" = 1 ] && fetch_views "$label-$algorithm"
        for encoding in $encodings; do
            [ "$label" = node ] && [ "$encoding" = 304 ] && continue
            measure "$round" "$label" "$algorithm" "$encoding"
        done
        if [ "$label" != node ] && [ "$answer_cache_mb" != 0 ]; then
            # Hits and misses of the answer cache over this server's runs, warm-ups included.
            curl -s "http://127.0.0.1:$port/metrics" | grep '^geocluster_http_answer_cache_total' \
                | sed 's/^/    /' || true
        fi
        stop_server
    done
done

echo
echo "== every run"
column -t -s $'\t' "$work/runs.tsv"
echo
python3 - "$work" "${labels[*]}" "$algorithms" "$encodings" <<'PYTHON'
import csv, json, os, statistics, sys
work, labels, algorithms, encodings = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4].split()
rows = list(csv.DictReader(open(f"{work}/runs.tsv"), delimiter="\t"))
def values(label, algorithm, encoding, field):
    return [float(r[field]) for r in rows
            if r["server"] == label and r["encoding"] == encoding and (label == "node" or r["algorithm"] == algorithm)]
def summary(xs, digits):
    if not xs: return "-"
    text = f"{statistics.median(xs):,.{digits}f}"
    return text + (f" ({min(xs):,.{digits}f}-{max(xs):,.{digits}f})" if len(xs) > 1 else "")
def median(label, algorithm, encoding, field):
    xs = values(label, algorithm, encoding, field)
    return statistics.median(xs) if xs else None
with_node = any(r["server"] == "node" for r in rows)
print("== medians over the rounds (min-max)" + ("; node's rows are the same runs under each algorithm" if with_node else ""))
head = ["algorithm", "encoding", "server", "req/s", "p99 ms", "CPU ms/req", "KB/answer", "RSS MB", "CPU / A"]
if with_node: head += ["req/s / node", "CPU / node"]
table = [head]
for algorithm in algorithms:
    for encoding in encodings:
        for label in (["node"] if with_node else []) + labels:
            line = [algorithm, encoding, label, summary(values(label, algorithm, encoding, "req/s"), 0),
                    summary(values(label, algorithm, encoding, "p99 ms"), 1),
                    summary(values(label, algorithm, encoding, "CPU ms/req"), 3),
                    summary(values(label, algorithm, encoding, "KB/answer"), 1),
                    summary(values(label, algorithm, encoding, "RSS MB"), 0)]
            cpu = median(label, algorithm, encoding, "CPU ms/req")
            cpu_a = median(labels[0], algorithm, encoding, "CPU ms/req")
            line.append(f"{cpu / cpu_a:.2f}" if label != "node" and cpu and cpu_a else "")
            if with_node:
                rate, node_rate = median(label, algorithm, encoding, "req/s"), median("node", algorithm, encoding, "req/s")
                node_cpu = median("node", algorithm, encoding, "CPU ms/req")
                line += [f"{rate / node_rate:.2f}" if label != "node" and rate and node_rate else "",
                         f"{cpu / node_cpu:.2f}" if label != "node" and cpu and node_cpu else ""]
            table.append(line)
widths = [max(len(row[i]) for row in table) for i in range(len(head))]
for row in table:
    print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)))
loads = [float(r[k]) for r in rows for k in ("load before", "load after")]
print(f"1-minute load average over the runs: {min(loads):.2f}-{max(loads):.2f} (median {statistics.median(loads):.2f})")
errors = sum(int(r["errors"]) for r in rows)
if errors: print(f"WARNING: {errors} non-2xx, socket errors or (304 runs) other answers (see every run)")
if "304" in encodings and "healthz" in encodings:
    print("\n== CPU per 304 over CPU per /healthz, each server's own runs (median, min-max over the rounds)")
    for algorithm in algorithms:
        for label in labels:
            ratios = []
            for round_ in sorted({r["round"] for r in rows}):
                cpu = {r["encoding"]: float(r["CPU ms/req"]) for r in rows
                       if r["round"] == round_ and r["server"] == label and r["algorithm"] == algorithm}
                if "304" in cpu and cpu.get("healthz"): ratios.append(cpu["304"] / cpu["healthz"])
            if ratios: print(f"  {label} {algorithm:6} {summary(ratios, 2)}")

# The three fixed views: features, clusters, points counted (sum of point_count and lone points).
def counts(path):
    features = json.load(open(path))["features"]
    clusters = [f for f in features if (f.get("properties") or {}).get("cluster")]
    return len(features), len(clusters), sum(f["properties"]["point_count"] for f in clusters) + len(features) - len(clusters)
def canonical(path):
    return sorted(json.dumps(f, sort_keys=True) for f in json.load(open(path))["features"])
views = open(f"{work}/views.txt").read().split()
print("\n== three views (features / clusters / points) from the first round")
for n, view in enumerate(views, 1):
    print(view)
    node = f"{work}/view-node---{n}.json"
    for algorithm in algorithms:
        for label in labels:
            path = f"{work}/view-{label}-{algorithm}-{n}.json"
            if not os.path.exists(path): continue
            note = ""
            if os.path.exists(node) and algorithm == "radius":
                note = "  same features as node" if canonical(path) == canonical(node) else "  DIFFERS from node"
            print(f"  {label} {algorithm:6} %d / %d / %d{note}" % counts(path))
    if os.path.exists(node): print("  node          %d / %d / %d" % counts(node))
PYTHON
