#!/usr/bin/env python3
"""A city-sized walking network for timing `route` and `reachable` with routes: a square
grid of N x N nodes 25 m apart (N = 700: 490,000 nodes, 978,600 edges, 17.5 km a side)
centred on Helsinki Central, so that the sample Helsinki places and stations lie on it.
The shipped Helsinki network has 6,032 nodes; a city's OSM walking network has hundreds
of thousands, and a search that does not stop at its targets costs in proportion to them.

Writes into WORK:
- grid.json: the network (geo-cluster-walking-network 1, edges 1% longer than the
  great-circle distance between their ends, rounded up to the centimetre);
- layers.json, with helsinki_places.geojson and helsinki_stations.geojson copied from
  DATA (the project's Data/);
- route.jsonl: REQUESTS `route` lines (a random place, 30-120 minutes, over the grid);
- list.jsonl: REQUESTS `reachable` lines with routes and the unreachable list.

    python3 Benchmarks/grid_network.py WORK [--size 700] [--requests 300] [--data Data]
    /usr/bin/time -f "%U s user" .build/release/geo-cluster query --data WORK < WORK/route.jsonl > /dev/null
"""
import argparse
import json
import math
import os
import random
import shutil


def great_circle_meters(a, b):
    radius = 6371008.8
    p1, p2 = math.radians(a[1]), math.radians(b[1])
    dp, dl = p2 - p1, math.radians(b[0] - a[0])
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * radius * math.asin(math.sqrt(h))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("work")
    parser.add_argument("--size", type=int, default=700)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "Data"))
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)

    n, step = args.size, 25.0
    lon0, lat0 = 24.9414566, 60.1713198
    dlat = step / 111320.0
    dlon = step / (111320.0 * math.cos(math.radians(lat0)))
    nodes = [[j * n + i + 1, round(lon0 + (i - n // 2) * dlon, 7), round(lat0 + (j - n // 2) * dlat, 7)]
             for j in range(n) for i in range(n)]
    edges = []
    for j in range(n):
        for i in range(n):
            k = j * n + i
            for other in ([k + 1] if i + 1 < n else []) + ([k + n] if j + 1 < n else []):
                length = great_circle_meters(nodes[k][1:], nodes[other][1:]) * 1.01
                edges.append([k, other, math.ceil(length * 100) / 100])
    network = {
        "format": "geo-cluster-walking-network", "version": 1,
        "description": f"synthetic {n} x {n} grid, 25 m apart, around Helsinki Central",
        "source": "Benchmarks/grid_network.py", "license": "CC0-1.0", "attribution": "synthetic",
        "length": "WGS84 ellipsoidal geodesic between the stored ends, metres, rounded up to the centimetre",
        "node_count": len(nodes), "edge_count": len(edges),
        "total_length_m": round(sum(e[2] for e in edges), 2),
        "node_fields": ["id", "lon", "lat"], "edge_fields": ["from", "to", "length_m"],
        "nodes": nodes, "edges": edges,
    }
    with open(os.path.join(args.work, "grid.json"), "w") as out:
        json.dump(network, out, separators=(",", ":"))

    with open(os.path.join(args.data, "layers.json")) as source:
        layers = [layer for layer in json.load(source)["layers"]
                  if layer["name"] in ("helsinki_places", "helsinki_stations")]
    for layer in layers:
        shutil.copy(os.path.join(args.data, layer["file"]), args.work)
    with open(os.path.join(args.work, "layers.json"), "w") as out:
        json.dump({"layers": layers, "networks": [{
            "name": "grid", "file": "grid.json", "format": "geo-cluster-walking-network 1",
            "description": network["description"], "license": "CC0-1.0", "attribution": "synthetic"}]}, out, indent=1)

    with open(os.path.join(args.data, "helsinki_places.geojson")) as source:
        ids = [feature["properties"].get("id") or feature.get("id") for feature in json.load(source)["features"]]
    rng = random.Random(1)
    common = {"layer": "helsinki_places", "stations_layer": "helsinki_stations", "station": "helsinki-central",
              "travel": "network", "network": "grid"}
    with open(os.path.join(args.work, "route.jsonl"), "w") as out:
        for i in range(args.requests):
            out.write(json.dumps({"id": i, "op": "route", **common, "place": rng.choice(ids),
                                  "remaining_minutes": rng.choice([30, 60, 90, 120])}) + "\n")
    with open(os.path.join(args.work, "list.jsonl"), "w") as out:
        for i in range(args.requests):
            out.write(json.dumps({"id": i, "op": "reachable", **common, "remaining_minutes": rng.choice([30, 60, 90, 120]),
                                  "include": ["route"], "include_unreachable": True, "limit": 50}) + "\n")
    print(f"{len(nodes)} nodes, {len(edges)} edges; {args.requests} requests each in route.jsonl, list.jsonl")


if __name__ == "__main__":
    main()
