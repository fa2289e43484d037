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

from write_viewport_points import read_points, write_centres


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("work")
    parser.add_argument("--centres", type=int, default=10000)
    arguments = parser.parse_args()
    work = arguments.work

    points = read_points(work)
    generator = random.Random(20261127)
    with open(f"{work}/birds.geojson", "w") as out:
        out.write('{"type":"FeatureCollection","features":[')
        for i, (lon, lat) in enumerate(points):
            out.write(("," if i else "") + '{"type":"Feature","id":"s%d","geometry":{"type":"Point","coordinates":[%.6f,%.6f]},'
                      '"properties":{"species":"species-%d","count":%d,"observed_at":"2025-05-%02dT06:30:00+09:00"}}'
                      % (i, lon, lat, generator.randrange(200), 1 + i % 5, 1 + i % 28))
        out.write("]}")
    write_centres(work, points, arguments.centres)


if __name__ == "__main__":
    main()
