#!/usr/bin/env python3
"""Write rate and change-feed delay of geo-cluster replicas on one store.

    Benchmarks/store_writes.py --a 8081 [--b 8082] [--batches 200] [--size 100]

Sends insert batches of `size` sightings to the replica on port A through POST /v1/query,
one request at a time, and reports batches and records per second (each acknowledged
only once committed). With --b, it then writes single-record batches to A and polls
B's GET /v1/layers/birds until the record count shows each one, and reports the delay
(median, p90, max). The layer `birds` (sightings) must be loaded on both.
"""
import argparse, json, statistics, time, urllib.request, uuid

def post(port, line):
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/query", data=(json.dumps(line) + "\n").encode(),
                                     method="POST")
    with urllib.request.urlopen(request) as response:
        answer = json.loads(response.read().decode().splitlines()[0])
    if not answer.get("ok"):
        raise SystemExit(f"write failed: {answer}")
    return answer["result"]

def count(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/layers/birds") as response:
        return json.loads(response.read())["count"]

def records(prefix, n):
    return [{"id": f"{prefix}-{i}", "lon": 126 + (i % 300) * 0.01, "lat": 35 + (i // 300 % 300) * 0.01,
             "species": f"species-{i % 50}", "count": 1, "observed_at": "2025-05-01T06:30:00+09:00"} for i in range(n)]

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--a", type=int, required=True)
    parser.add_argument("--b", type=int)
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--samples", type=int, default=50)
    args = parser.parse_args()
    run = uuid.uuid4().hex[:8]

    batches = [records(f"{run}-{k}", args.size) for k in range(args.batches)]
    start = time.perf_counter()
    for k, batch in enumerate(batches):
        post(args.a, {"id": k, "op": "insert", "layer": "birds", "records": batch})
    seconds = time.perf_counter() - start
    print(f"writes: {args.batches} batches of {args.size} in {seconds:.2f} s: "
          f"{args.batches / seconds:.0f} batches/s, {args.batches * args.size / seconds:.0f} records/s")

    if args.b:
        delays = []
        for k in range(args.samples):
            expected = count(args.a) + 1
            sent = time.perf_counter()
            post(args.a, {"op": "insert", "layer": "birds", "records": records(f"{run}-d{k}", 1)})
            while count(args.b) < expected:
                time.sleep(0.001)
            delays.append((time.perf_counter() - sent) * 1000)
        delays.sort()
        print(f"feed delay (write acknowledged on A to visible on B, incl. the write): "
              f"median {statistics.median(delays):.1f} ms, p90 {delays[int(len(delays) * 0.9)]:.1f} ms, "
              f"max {delays[-1]:.1f} ms over {len(delays)} writes")

main()
