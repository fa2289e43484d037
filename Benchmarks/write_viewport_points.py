#!/usr/bin/env python3
"""The inputs of the wrk benchmarks (wrk_viewport.sh, wrk_vs_node.sh), from the points that
`bench-radius points` wrote to WORK/points.f64 (little-endian lon, lat doubles):

- WORK/korea.geojson: the points as a GeoJSON FeatureCollection, ids 0, 1, ...;
- WORK/centres.lua: CENTRES of them (a fixed random sample) as the viewport centres of
  Benchmarks/wrk_viewport.lua;
- with --views, WORK/views.txt: three clusters requests (zooms 5, 10 and 15 around the
  first three centres, 1280 x 800 pixels of 256-pixel tiles, as wrk_viewport.lua computes
  them), for comparing servers' answers.

    python3 Benchmarks/write_viewport_points.py WORK [--centres 10000] [--views]
"""
import argparse
import math
import random
import struct


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("work")
    parser.add_argument("--centres", type=int, default=10000)
    parser.add_argument("--views", action="store_true")
    arguments = parser.parse_args()
    work = arguments.work

    raw = open(f"{work}/points.f64", "rb").read()
    values = struct.unpack(f"<{len(raw) // 8}d", raw)
    points = list(zip(values[0::2], values[1::2]))
    with open(f"{work}/korea.geojson", "w") as out:
        out.write('{"type":"FeatureCollection","features":[')
        for i, (lon, lat) in enumerate(points):
            out.write(("," if i else "") + '{"type":"Feature","id":%d,"geometry":{"type":"Point","coordinates":[%r,%r]},"properties":null}' % (i, lon, lat))
        out.write("]}")
    centres = random.Random(20261122).sample(points, arguments.centres)
    with open(f"{work}/centres.lua", "w") as out:
        out.write("return {" + ",".join("{%r,%r}" % c for c in centres) + "}\n")
    if arguments.views:
        with open(f"{work}/views.txt", "w") as out:
            for centre, zoom in zip(centres, (5, 10, 15)):
                out.write(view(*centre, zoom) + "\n")


def view(lon, lat, zoom):
    """The clusters request of a 1280 x 800 view centred on (lon, lat) at `zoom`."""
    size = 256 * 2 ** zoom
    sine = math.sin(lat * math.pi / 180)
    x, y = (lon + 180) / 360 * size, (0.5 - math.log((1 + sine) / (1 - sine)) / (4 * math.pi)) * size

    def coordinate(px, py):
        n = math.pi * (1 - 2 * py / size)
        return px / size * 360 - 180, (2 * math.atan(math.exp(n)) - math.pi / 2) * 180 / math.pi

    west, north = coordinate(x - 640, y - 400)
    east, south = coordinate(x + 640, y + 400)
    return "/v1/layers/korea/clusters?bbox=%.6f,%.6f,%.6f,%.6f&zoom=%d" % (west, south, east, north, zoom)


if __name__ == "__main__":
    main()
