#!/usr/bin/env python3
"""One client's view latency, zoom by zoom.

Asks a running `geo-cluster serve` for the views that Benchmarks/wrk_viewport.lua asks
(1280 x 800 pixels, a random zoom 3-16, centred on a random one of the centres), one at
a time over one kept-alive connection, for a number of seconds, and prints the p50 and
p99 of all of them, then per zoom the p50, p90, p99, the slowest and the mean answer
size. With `--pid` it also prints the server's CPU time per view (utime + stime of
/proc/PID/stat, all threads, over the run). Where the one-client run of
Benchmarks/ten_million.sh gives one p99, this says which zooms it comes from.

    Benchmarks/views_by_zoom.py --port 8091 --centres centres.lua --seconds 20 --pid 1234

CENTRES is a Lua file as wrk_viewport.lua reads it (`return {{lon, lat}, ...}`, written by
Benchmarks/wrk_viewport.sh and ten_million.sh). The generator is seeded (--seed), so
runs ask the same views in the same order.
"""
import argparse
import http.client
import math
import os
import random
import re
import time

MAX_LATITUDE = 85.0511287798


def world_pixel(lon, lat, size):
    sine = math.sin(lat * math.pi / 180)
    return (lon + 180) / 360 * size, (0.5 - math.log((1 + sine) / (1 - sine)) / (4 * math.pi)) * size


def coordinate(x, y, size):
    n = math.pi * (1 - 2 * y / size)
    return x / size * 360 - 180, (2 * math.atan(math.exp(n)) - math.pi / 2) * 180 / math.pi


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def percentile(values, fraction):
    return values[min(len(values) - 1, int(len(values) * fraction))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8091)
    parser.add_argument("--layer", default="korea")
    parser.add_argument("--centres", required=True)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--pid", type=int)
    arguments = parser.parse_args()

    with open(arguments.centres) as source:
        centres = [(float(lon), float(lat)) for lon, lat in re.findall(r"\{([-0-9.e]+),([-0-9.e]+)\}", source.read())]
    if not centres:
        raise SystemExit(f"no centres in {arguments.centres}")
    generator = random.Random(arguments.seed)
    connection = http.client.HTTPConnection("127.0.0.1", arguments.port)
    latencies = {zoom: [] for zoom in range(3, 17)}
    sizes = {zoom: 0 for zoom in range(3, 17)}
    ticks = cpu_ticks(arguments.pid) if arguments.pid else 0
    deadline = time.monotonic() + arguments.seconds
    while time.monotonic() < deadline:
        lon, lat = generator.choice(centres)
        zoom = generator.randint(3, 16)
        size = 256 * 2 ** zoom
        x, y = world_pixel(lon, lat, size)
        west, north = coordinate(x - 640, y - 400, size)
        east, south = coordinate(x + 640, y + 400, size)
        path = "/v1/layers/%s/clusters?bbox=%.6f,%.6f,%.6f,%.6f&zoom=%d" % (
            arguments.layer, max(-180, west), max(-MAX_LATITUDE, south), min(180, east), min(MAX_LATITUDE, north), zoom)
        sent = time.perf_counter()
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
        elapsed = (time.perf_counter() - sent) * 1000
        if response.status != 200:
            raise SystemExit(f"{path} answered {response.status}")
        latencies[zoom].append(elapsed)
        sizes[zoom] += len(body)
    every = sorted(value for values in latencies.values() for value in values)
    line = f"{len(every)} views: p50 {percentile(every, 0.5):.2f} ms, p99 {percentile(every, 0.99):.2f} ms"
    if arguments.pid:
        line += f", server CPU per view {(cpu_ticks(arguments.pid) - ticks) * 1000 / os.sysconf('SC_CLK_TCK') / len(every):.3f} ms"
    print(line)
    print("zoom\tviews\tp50 ms\tp90 ms\tp99 ms\tmax ms\tmean KB")
    for zoom, values in latencies.items():
        if not values:
            continue
        values.sort()
        print(f"{zoom}\t{len(values)}\t{percentile(values, 0.5):.2f}\t{percentile(values, 0.9):.2f}\t"
              f"{percentile(values, 0.99):.2f}\t{values[-1]:.2f}\t{sizes[zoom] / len(values) / 1000:.0f}")


if __name__ == "__main__":
    main()
