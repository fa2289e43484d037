#!/usr/bin/env python3
"""Sightings over the points that `bench-radius points` wrote to WORK/points.f64
(little-endian lon, lat doubles), for Benchmarks/ten_million.sh and Benchmarks/startup.sh:

- WORK/birds.geojson: a FeatureCollection of sightings, ids s0, s1, ..., 200 species
  (species-N), counts 1-5, observation times over 28 days of May 2025 at +09:00; with
  --names korean, the app's kind of text instead: 200 Korean species names of 2 to 7
  Hangul syllables (60 of them longer than the 15 bytes a Swift string holds inline,
  as many real names are: 노랑부리저어새) and an `observer_id` per sighting, one of
  5,000 observers, each a 36-character UUID;
- WORK/centres.lua: CENTRES of the points (a fixed random sample) as the viewport centres
  of Benchmarks/wrk_viewport.lua.

    python3 Benchmarks/write_sightings.py WORK [--centres 10000] [--names plain|korean]
"""
import argparse
import random
import uuid

from write_viewport_points import read_points, write_centres


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("work")
    parser.add_argument("--centres", type=int, default=10000)
    parser.add_argument("--names", choices=["plain", "korean"], default="plain")
    arguments = parser.parse_args()
    work = arguments.work

    points = read_points(work)
    generator = random.Random(20261127)
    if arguments.names == "korean":
        species = korean_names(random.Random(7))
        observers = [str(uuid.UUID(int=random.Random(11 + k).getrandbits(128))) for k in range(5000)]
    with open(f"{work}/birds.geojson", "w") as out:
        out.write('{"type":"FeatureCollection","features":[')
        for i, (lon, lat) in enumerate(points):
            k = generator.randrange(200)
            if arguments.names == "korean":
                members = '"species":"%s","count":%d,"observed_at":"2025-05-%02dT06:30:00+09:00","observer_id":"%s"' % (
                    species[k], 1 + i % 5, 1 + i % 28, observers[generator.randrange(5000)])
            else:
                members = '"species":"species-%d","count":%d,"observed_at":"2025-05-%02dT06:30:00+09:00"' % (
                    k, 1 + i % 5, 1 + i % 28)
            out.write(("," if i else "") + '{"type":"Feature","id":"s%d","geometry":{"type":"Point","coordinates":[%.6f,%.6f]},'
                      '"properties":{%s}}' % (i, lon, lat, members))
        out.write("]}")
    write_centres(work, points, arguments.centres)


def korean_names(generator):
    """200 distinct names of Hangul syllables: 140 of 2 to 5 syllables (6 to 15 bytes) and
    60 of 6 or 7 (18 or 21 bytes)."""
    names = []
    while len(names) < 200:
        length = generator.randint(2, 5) if len(names) < 140 else generator.randint(6, 7)
        name = "".join(chr(0xAC00 + generator.randrange(11172)) for _ in range(length))
        if name not in names:
            names.append(name)
    return names


if __name__ == "__main__":
    main()
