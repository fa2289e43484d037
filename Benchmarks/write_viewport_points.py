#!/usr/bin/env python3
"""The inputs of the wrk benchmarks (wrk_viewport.sh, wrk_vs_node.sh), from the points that
`bench-radius points` wrote to WORK/points.f64 (little-endian lon, lat doubles):

- WORK/korea.geojson: the points as a GeoJSON FeatureCollection, ids 0, 1, ...;
- WORK/centres.lua: CENTRES of them (a fixed random sample) as the viewport centres of
  Benchmarks/wrk_viewport.lua;
- with --views, WORK/views.txt: three clusters requests (zooms 5, 10 and 15 around the
  first three centres, 1280 x 800 pixels of 256-pixel tiles, as wrk_viewport.lua computes
  them), for comparing servers' answers;
- with --lines N, WORK/views.jsonl: N `clusters` request lines of geo-cluster query (layer
  "korea"), each a view as wrk_viewport.lua asks for (a random centre of CENTRES, a
  random zoom 3-16), for Benchmarks/lines_vs_node.sh;
- with --revalidate N, WORK/revalidate.txt: N clusters request paths (a random centre of
  CENTRES, a random zoom 3-16), which wrk_vs_node.sh asks for once and then asks again
  with their entity tags (its "304" runs).

    python3 Benchmarks/write_viewport_points.py WORK [--centres 10000] [--views] [--lines N] [--revalidate N]
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
    parser.add_argument("--lines", type=int, default=0)
    parser.add_argument("--revalidate", type=int, default=0)
    arguments = parser.parse_args()
    work = arguments.work

    points = read_points(work)
    with open(f"{work}/korea.geojson", "w") as out:
        out.write('{"type":"FeatureCollection","features":[')
        for i, (lon, lat) in enumerate(points):
            out.write(("," if i else "") + '{"type":"Feature","id":%d,"geometry":{"type":"Point","coordinates":[%r,%r]},"properties":null}' % (i, lon, lat))
        out.write("]}")
    centres = write_centres(work, points, arguments.centres)
    if arguments.views:
        with open(f"{work}/views.txt", "w") as out:
            for centre, zoom in zip(centres, (5, 10, 15)):
                out.write(path(view(*centre, zoom), zoom) + "\n")
    if arguments.lines:
        generator = random.Random(20261127)
        with open(f"{work}/views.jsonl", "w") as out:
            for n in range(1, arguments.lines + 1):
                zoom = generator.randint(3, 16)
                bbox = ",".join("%.6f" % value for value in view(*generator.choice(centres), zoom))
                out.write('{"id":%d,"op":"clusters","layer":"korea","bbox":[%s],"zoom":%d}\n' % (n, bbox, zoom))
    if arguments.revalidate:
        generator = random.Random(20261128)
        with open(f"{work}/revalidate.txt", "w") as out:
            for _ in range(arguments.revalidate):
                zoom = generator.randint(3, 16)
                out.write(path(view(*generator.choice(centres), zoom), zoom) + "\n")


def read_points(work):
    """The (lon, lat) pairs of WORK/points.f64."""
    raw = open(f"{work}/points.f64", "rb").read()
    values = struct.unpack(f"<{len(raw) // 8}d", raw)
    return list(zip(values[0::2], values[1::2]))


def write_centres(work, points, count):
    """WORK/centres.lua: `count` of the points (a fixed random sample), returned too."""
    centres = random.Random(20261122).sample(points, min(count, len(points)))
    with open(f"{work}/centres.lua", "w") as out:
        out.write("return {" + ",".join("{%r,%r}" % c for c in centres) + "}\n")
    return centres


def path(bbox, zoom):
    """The clusters request of layer "korea" for `bbox` at `zoom`, as wrk_viewport.lua writes it."""
    return "/v1/layers/korea/clusters?bbox=%.6f,%.6f,%.6f,%.6f&zoom=%d" % (bbox + (zoom,))


def view(lon, lat, zoom):
    """The bbox (west, south, east, north) of a 1280 x 800 view centred on (lon, lat) at
    `zoom`, clamped to the Web Mercator world as wrk_viewport.lua clamps it."""
    size = 256 * 2 ** zoom
    sine = math.sin(lat * math.pi / 180)
    x, y = (lon + 180) / 360 * size, (0.5 - math.log((1 + sine) / (1 - sine)) / (4 * math.pi)) * size

    def coordinate(px, py):
        n = math.pi * (1 - 2 * py / size)
        return px / size * 360 - 180, (2 * math.atan(math.exp(n)) - math.pi / 2) * 180 / math.pi

    west, north = coordinate(x - 640, y - 400)
    east, south = coordinate(x + 640, y + 400)
    limit = 85.0511287798

    def clamp(value, low, high):
        return max(low, min(high, value))
    return (clamp(west, -180, 180), clamp(south, -limit, limit), clamp(east, -180, 180), clamp(north, -limit, limit))


if __name__ == "__main__":
    main()
