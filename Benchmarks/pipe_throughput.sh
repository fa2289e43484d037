#!/usr/bin/env bash
# End-to-end throughput of `geo-cluster query`: builds the release executable, writes N
# small request lines of two workloads (below) and times the whole process answering them
# over the sample layers in Data/, once with the file as stdin and once through
# `cat file |`. Prints lines per second; the time includes loading the layers, which is
# measured on its own and subtracted in the last column.
#
#   Benchmarks/pipe_throughput.sh              # 1,000,000 lines, 3 runs each
#   Benchmarks/pipe_throughput.sh 200000 5     # N lines, runs
set -euo pipefail
cd "$(dirname "$0")/.."
lines=${1:-1000000}
runs=${2:-3}

swift build -c release --product geo-cluster
binary=.build/release/geo-cluster
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A cluster id of the sightings layer at zoom 5, from the engine itself.
cluster=$(echo '{"op":"clusters","layer":"sightings","bbox":[124,33,132,39],"zoom":5}' \
    | "$binary" query --data Data | grep -o '"cluster_id":[0-9]*' | head -1 | cut -d: -f2)
[ -n "$cluster" ] || { echo "no cluster found in the sightings layer" >&2; exit 1; }

# Two workloads of small requests: "mixed" alternates `expansion_zoom` on that cluster
# (the live index computes its split zoom from its grid for each request) with `stats`;
# "stats" asks only `stats`, so nearly all its time is reading, parsing, encoding and
# writing lines.
awk -v n="$lines" -v c="$cluster" 'BEGIN {
    for (i = 1; i <= n; i++) {
        if (i % 2) printf "{\"id\":%d,\"op\":\"expansion_zoom\",\"layer\":\"sightings\",\"cluster_id\":%s}\n", i, c
        else printf "{\"id\":%d,\"op\":\"stats\"}\n", i
    }
}' > "$work/mixed.jsonl"
awk -v n="$lines" 'BEGIN { for (i = 1; i <= n; i++) printf "{\"id\":%d,\"op\":\"stats\"}\n", i }' > "$work/stats.jsonl"
: > "$work/empty.jsonl"

# Seconds of the best of $runs runs of a shell command.
best() {
    local best=""
    for _ in $(seq "$runs"); do
        local start end
        start=$(date +%s.%N)
        bash -c "$1"
        end=$(date +%s.%N)
        best=$(echo "$start $end ${best:-1e9}" | awk '{ t = $2 - $1; print (t < $3 ? t : $3) }')
    done
    echo "$best"
}

for workload in mixed stats; do
    answers=$("$binary" query --data Data < "$work/$workload.jsonl" | grep -c '"ok":true' || true)
    [ "$answers" -eq "$lines" ] || { echo "$workload: $answers good answers to $lines requests" >&2; exit 1; }
done

startup=$(best "$binary query --data Data < $work/empty.jsonl > /dev/null")
echo "$lines lines, best of $runs runs; loading Data/ alone takes ${startup} s"
printf '%-10s %-18s %10s %12s %22s\n' "workload" "input" "seconds" "lines/s" "lines/s after loading"
for workload in mixed stats; do
    redirect=$(best "$binary query --data Data < $work/$workload.jsonl > /dev/null")
    piped=$(best "cat $work/$workload.jsonl | $binary query --data Data > /dev/null")
    for row in "stdin from file:$redirect" "cat file |:$piped"; do
        awk -v w="$workload" -v name="${row%%:*}" -v s="${row##*:}" -v l="$startup" -v n="$lines" 'BEGIN {
            printf "%-10s %-18s %10.3f %12.0f %22.0f\n", w, name, s, n / s, n / (s - l)
        }'
    done
done
