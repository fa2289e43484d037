#!/usr/bin/env bash
# `geo-cluster query` (JSON lines on stdin and stdout) against what a user would build
# instead: Node 20 with supercluster 8.0.1 reading the same lines
# (Benchmarks/node_supercluster_server.mjs --lines 1), on 1M points of the Korea mixture.
#
#   Benchmarks/lines_vs_node.sh                           # 40,000 views, 3 rounds
#   Benchmarks/lines_vs_node.sh --views 10000 --rounds 5 --count 200000
#   Benchmarks/lines_vs_node.sh --servers ../before/.build/release/geo-cluster,.build/release/geo-cluster
#
# The stream mixes what a map client asks while it is used: for each of --views views (a
# 1280 x 800 view around a random point at a random zoom 3-16, as Benchmarks/wrk_viewport.lua
# asks), a `clusters` line, then `expansion_zoom` and `leaves` (10) on the first cluster
# of that view's answer (the radius layer's cluster ids are supercluster's, so both answer
# the same lines). Each round starts, in turn and each fresh on the same points, Node and
# each geo-cluster binary of --servers (labelled A, B, ... in that order), waits until the
# process answers a first line (the points are loaded and indexed), reads its CPU time
# (utime + stime of /proc/<pid>/stat), writes the whole stream into its stdin while
# reading its answers, and reads the CPU time again once the last answer is in. So
# loading is not counted; CPU per line and lines per second (wall time from the first
# line written to the last answer read) are. Every answer must be `"ok":true`.
#
# It prints every run, then medians over the rounds with the ratios of each binary to Node,
# and the 1-minute load average. Builds only what is missing (this checkout's release
# geo-cluster when --servers is not given, and bench-radius to write the points). Node
# needs supercluster and kdbush in --peers (default ../shared/peers beside the checkout);
# when they or node are absent it says why and measures geo-cluster alone. Needs python3.
set -euo pipefail
cd "$(dirname "$0")/.."

views=40000
rounds=3
count=1000000
centres=10000
servers=""
peers=../shared/peers
radius=40 extent=512 min_zoom=0 max_zoom=16 min_points=2
while [ $# -gt 0 ]; do
    case "$1" in
        --views) views=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --count) count=$2; shift 2 ;;
        --centres) centres=$2; shift 2 ;;
        --servers) servers=${2//,/ }; shift 2 ;;
        --peers) peers=$2; shift 2 ;;
        --radius) radius=$2; shift 2 ;;
        --extent) extent=$2; shift 2 ;;
        --min-zoom) min_zoom=$2; shift 2 ;;
        --max-zoom) max_zoom=$2; shift 2 ;;
        --min-points) min_points=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done

command -v python3 >/dev/null || { echo "python3 is needed" >&2; exit 1; }
# Builds what is missing and finds Node and the peers (sets with_node).
source Benchmarks/node_comparison.sh

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "writing $count Korea-mixture points and $views views"
Benchmarks/.build/release/bench-radius points --distribution korea --count "$count" \
    --points "$work/points.f64" --viewports "$work/viewports.f64"
python3 Benchmarks/write_viewport_points.py "$work" --centres "$centres" --lines "$views"
cat > "$work/layers.json" <<JSON
{"layers":[{"name":"korea","kind":"points","file":"korea.geojson","options":{"algorithm":"radius","radius":$radius,"extent":$extent,"min_zoom":$min_zoom,"max_zoom":$max_zoom,"min_points":$min_points}}]}
JSON

first=${servers%% *}
python3 - "$work" "$first" "$rounds" "$with_node" "$peers" "$radius $extent $min_zoom $max_zoom $min_points" $servers <<'PYTHON'
import json, os, statistics, subprocess, sys, threading, time
work, first, rounds, with_node, peers, options = sys.argv[1:7]
servers = sys.argv[7:]
radius, extent, min_zoom, max_zoom, min_points = options.split()
rounds = int(rounds)
ticks = os.sysconf("SC_CLK_TCK")

def command(label):
    if label == "node":
        return ["node", "Benchmarks/node_supercluster_server.mjs", "--lines", "1", "--data", f"{work}/korea.geojson",
                "--peers", peers, "--radius", radius, "--extent", extent, "--min-zoom", min_zoom,
                "--max-zoom", max_zoom, "--min-points", min_points]
    return [binaries[label], "query", "--data", work]

def cpu_ticks(pid):
    text = open(f"/proc/{pid}/stat").read()
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[11]) + int(fields[12])

def load1():
    return float(open("/proc/loadavg").read().split()[0])

PING = b'{"id":0,"op":"clusters","layer":"korea","bbox":[0,0,0.001,0.001],"zoom":0}\n'

def run(label, stream, keep=None):
    """Feeds `stream` (bytes, one request per line) to a fresh process once it is ready;
    returns (lines, CPU seconds, wall seconds, bad answers) of the stream alone."""
    errors = open(f"{work}/{label}.err", "w+b")
    process = subprocess.Popen(command(label), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=errors, bufsize=0)
    def failed(message):
        errors.seek(0)
        sys.exit(f"{label}: {message}; its stderr ends:\n" + errors.read()[-2000:].decode(errors="replace"))
    process.stdin.write(PING)
    line = process.stdout.readline()
    if b'"ok":true' not in line:
        failed(f"no answer to the first line (got {line[:200]!r})")
    expected = stream.count(b"\n")
    cpu_before, load_before = cpu_ticks(process.pid), load1()
    started = time.perf_counter()
    writer = threading.Thread(target=lambda: process.stdin.write(stream))
    writer.start()
    # Errors are counted as `"ok":false` in the chunks and across their seams, without
    # joining chunks (the reader shares the cores with the process it measures).
    answered, bad, previous, chunks = 0, 0, b"", []
    while answered < expected:
        chunk = process.stdout.read(1 << 20)
        if not chunk:
            failed(f"ended after {answered} of {expected} answers")
        if keep is not None: chunks.append(chunk)
        answered += chunk.count(b"\n")
        bad += chunk.count(b'"ok":false') + (previous[-9:] + chunk[:9]).count(b'"ok":false')
        previous = chunk
    wall = time.perf_counter() - started
    cpu = (cpu_ticks(process.pid) - cpu_before) / ticks
    load_after = load1()
    writer.join()
    process.stdin.close()
    process.wait()
    if keep is not None: keep.extend(b"".join(chunks).splitlines())
    return expected, cpu, wall, bad, load_before, load_after

letters = "ABCDEFGH"
binaries = {letters[i]: path for i, path in enumerate(servers)}
for label, path in binaries.items(): print(f"{label} = {path}")

# The mixed stream: the views' clusters lines, each followed by expansion_zoom and leaves
# on the first cluster that geo-cluster (binary A) answers for that view.
views = open(f"{work}/views.jsonl", "rb").read()
answers = []
run("A", views, keep=answers)
lines, n, with_cluster = [], 0, 0
for request, answer in zip(views.splitlines(), answers):
    n += 1
    lines.append(b'{"id":%d,' % n + request.split(b",", 1)[1])
    features = json.loads(answer)["result"]["features"]
    cluster = next((f["properties"]["cluster_id"] for f in features if (f.get("properties") or {}).get("cluster")), None)
    if cluster is None: continue
    with_cluster += 1
    n += 1; lines.append(b'{"id":%d,"op":"expansion_zoom","layer":"korea","cluster_id":%d}' % (n, cluster))
    n += 1; lines.append(b'{"id":%d,"op":"leaves","layer":"korea","cluster_id":%d,"limit":10,"offset":0}' % (n, cluster))
stream = b"\n".join(lines) + b"\n"
print(f"stream: {n:,} lines ({len(views.splitlines()):,} clusters, {with_cluster:,} views with a cluster: "
      f"expansion_zoom and leaves on it), {len(stream) / 1e6:.1f} MB")

# Each binary answers what Node answers: the first 300 answers, as parsed (same features
# in the same order).
if with_node:
    def canonical(line):
        # leaves' total, limit and offset are geo-cluster's own (supercluster has no total).
        result = json.loads(line)["result"]
        return {key: value for key, value in result.items() if key not in ("total", "limit", "offset")}
    sample = b"\n".join(lines[:300]) + b"\n"
    theirs = []
    run("node", sample, keep=theirs)
    for label in binaries:
        mine = []
        run(label, sample, keep=mine)
        same = sum(canonical(a) == canonical(b) for a, b in zip(mine, theirs))
        print(f"the first {len(theirs)} answers: {same} the same from {label} and node")

labels = (["node"] if with_node else []) + list(binaries)
rows = []
print(f"{'round':<6} {'process':<8} {'lines':>9} {'CPU s':>8} {'wall s':>8} {'CPU us/line':>12} {'lines/s':>10}  load")
for round_ in range(1, rounds + 1):
    for label in labels:
        count, cpu, wall, bad, before, after = run(label, stream)
        if bad: sys.exit(f"{label}: {bad} answers not ok")
        rows.append((label, cpu / count * 1e6, count / wall, before, after))
        print(f"{round_:<6} {label:<8} {count:>9,} {cpu:>8.2f} {wall:>8.2f} {cpu / count * 1e6:>12.1f} {count / wall:>10,.0f}  {before:.2f} -> {after:.2f}")

print("\n== medians over the rounds (min-max)")
def values(label, index): return [row[index] for row in rows if row[0] == label]
def summary(xs, digits): return f"{statistics.median(xs):,.{digits}f} ({min(xs):,.{digits}f}-{max(xs):,.{digits}f})"
head = f"{'process':<8} {'CPU us/line':>24} {'lines/s':>28}"
print(head + ("  node CPU / this   this lines/s / node" if with_node else ""))
for label in labels:
    line = f"{label:<8} {summary(values(label, 1), 1):>24} {summary(values(label, 2), 0):>28}"
    if with_node and label != "node":
        line += f"  {statistics.median(values('node', 1)) / statistics.median(values(label, 1)):>15.2f}x" \
                f"  {statistics.median(values(label, 2)) / statistics.median(values('node', 2)):>19.2f}x"
    print(line)
loads = [row[3] for row in rows] + [row[4] for row in rows]
print(f"1-minute load average over the runs: {min(loads):.2f}-{max(loads):.2f} (median {statistics.median(loads):.2f}); {os.cpu_count()} cores")
PYTHON
