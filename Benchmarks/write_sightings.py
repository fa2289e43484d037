#!/usr/bin/env python3
"""Sightings over the points that `bench-radius points` wrote to WORK/points.f64
(little-endian lon, lat doubles), for Benchmarks/ten_million.sh and Benchmarks/startup.sh:

- WORK/birds.geojson: a FeatureCollection of sightings, ids s0, s1, ..., 200 species
  (species-N), counts 1-5, observation times over 28 days of May 2025 at +09:00;
- WORK/centres.lua: CENTRES of the points (a fixed random sample) as the viewport centres
  of Benchmarks/wrk_viewport.lua.

    python3 Benchmarks/write_sightings.py WORK [--centres 10000]
"""
import argparse
import random
import struct


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("work")
    parser.add_argument("--centres", type=int, default=10000)
    arguments = parser.parse_args()
    work = arguments.work

    raw = open(f"{work}/points.f64", "rb").read()
    values = struct.unpack(f"<{len(raw) // 8}d", raw)
    points = list(zip(values[0::2], values[1::2]))
    generator = random.Random(20261127)
    with open(f"{work}/birds.geojson", "w") as out:
        out.write('{"type":"FeatureCollection","features":[')
        for i, (lon, lat) in enumerate(points):
            out.write(("," if i else "") + '{"type":"Feature","id":"s%d","geometry":{"type":"Point","coordinates":[%.6f,%.6f]},'
                      '"properties":{"species":"species-%d","count":%d,"observed_at":"2025-05-%02dT06:30:00+09:00"}}'
                      % (i, lon, lat, generator.randrange(200), 1 + i % 5, 1 + i % 28))
        out.write("]}")
    centres = random.Random(20261122).sample(points, min(arguments.centres, len(points)))
    with open(f"{work}/centres.lua", "w") as out:
        out.write("return {" + ",".join("{%r,%r}" % c for c in centres) + "}\n")


if __name__ == "__main__":
    main()
