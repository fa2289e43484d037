#!/usr/bin/env python3
"""Writes the sample layers of Data/ from our own tables with a fixed seed.

Running it again gives byte-identical files. Standard library only.

    python3 Data/tools/generate_samples.py
"""
import datetime
import json
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.dirname(HERE)
SEED = 20261122

# Major Korean railway stations, compiled by us from general knowledge of where the
# station buildings are. Positions are approximate (typically within a few hundred
# metres) and not surveyed. id, Korean name, English name, lon, lat, lines.
STATIONS = [
    ("seoul", "서울", "Seoul", 126.9707, 37.5547, ["KTX", "Gyeongbu Line", "Gyeongui Line", "AREX"]),
    ("yongsan", "용산", "Yongsan", 126.9648, 37.5298, ["KTX", "Honam Line", "Jeolla Line", "ITX"]),
    ("suseo", "수서", "Suseo", 127.1044, 37.4876, ["SRT"]),
    ("cheongnyangni", "청량리", "Cheongnyangni", 127.0470, 37.5801, ["KTX", "Gangneung Line", "Jungang Line", "ITX"]),
    ("gwangmyeong", "광명", "Gwangmyeong", 126.8847, 37.4162, ["KTX"]),
    ("suwon", "수원", "Suwon", 127.0001, 37.2664, ["KTX", "Gyeongbu Line"]),
    ("cheonan-asan", "천안아산", "Cheonan-Asan", 127.1046, 36.7944, ["KTX", "SRT"]),
    ("osong", "오송", "Osong", 127.3272, 36.6203, ["KTX", "SRT"]),
    ("daejeon", "대전", "Daejeon", 127.4341, 36.3324, ["KTX", "SRT", "Gyeongbu Line"]),
    ("seodaejeon", "서대전", "Seodaejeon", 127.4044, 36.3226, ["KTX", "Honam Line"]),
    ("gimcheon-gumi", "김천구미", "Gimcheon-Gumi", 128.1793, 36.1136, ["KTX", "SRT"]),
    ("dongdaegu", "동대구", "Dongdaegu", 128.6284, 35.8793, ["KTX", "SRT", "Gyeongbu Line"]),
    ("singyeongju", "신경주", "Singyeongju", 129.1795, 35.7983, ["KTX", "SRT"]),
    ("ulsan", "울산", "Ulsan", 129.1388, 35.5514, ["KTX", "SRT"]),
    ("busan", "부산", "Busan", 129.0403, 35.1151, ["KTX", "SRT", "Gyeongbu Line"]),
    ("iksan", "익산", "Iksan", 126.9461, 35.9403, ["KTX", "SRT", "Honam Line", "Jeolla Line"]),
    ("jeonju", "전주", "Jeonju", 127.1613, 35.8498, ["KTX", "Jeolla Line"]),
    ("gwangju-songjeong", "광주송정", "Gwangju-Songjeong", 126.7926, 35.1378, ["KTX", "SRT", "Honam Line"]),
    ("mokpo", "목포", "Mokpo", 126.3872, 34.7913, ["KTX", "SRT", "Honam Line"]),
    ("suncheon", "순천", "Suncheon", 127.5016, 34.9452, ["KTX", "Jeolla Line", "Gyeongjeon Line"]),
    ("yeosu-expo", "여수엑스포", "Yeosu-EXPO", 127.7451, 34.7530, ["KTX", "Jeolla Line"]),
    ("gangneung", "강릉", "Gangneung", 128.8967, 37.7640, ["KTX", "Gangneung Line"]),
    ("pyeongchang", "평창", "Pyeongchang", 128.3984, 37.5645, ["KTX", "Gangneung Line"]),
    ("masan", "마산", "Masan", 128.5766, 35.2551, ["KTX", "Gyeongjeon Line"]),
    ("changwon-jungang", "창원중앙", "Changwon-Jungang", 128.7030, 35.2357, ["KTX", "Gyeongjeon Line"]),
    ("jinju", "진주", "Jinju", 128.1140, 35.1627, ["KTX", "Gyeongjeon Line"]),
    ("pohang", "포항", "Pohang", 129.3414, 36.0717, ["KTX"]),
    ("andong", "안동", "Andong", 128.6843, 36.5630, ["KTX", "Jungang Line"]),
]

# Species: scientific, Korean, English, season, typical flock size (mean count).
SPECIES = [
    ("Grus monacha", "흑두루미", "Hooded Crane", "winter", 40),
    ("Grus japonensis", "두루미", "Red-crowned Crane", "winter", 8),
    ("Antigone vipio", "재두루미", "White-naped Crane", "winter", 20),
    ("Sibirionetta formosa", "가창오리", "Baikal Teal", "winter", 2000),
    ("Platalea minor", "저어새", "Black-faced Spoonbill", "summer", 6),
    ("Platalea leucorodia", "노랑부리저어새", "Eurasian Spoonbill", "winter", 5),
    ("Calidris pygmaea", "넓적부리도요", "Spoon-billed Sandpiper", "passage", 1),
    ("Numenius madagascariensis", "알락꼬리마도요", "Far Eastern Curlew", "passage", 25),
    ("Calidris tenuirostris", "붉은어깨도요", "Great Knot", "passage", 150),
    ("Calidris alpina", "민물도요", "Dunlin", "passage", 200),
    ("Cygnus cygnus", "큰고니", "Whooper Swan", "winter", 30),
    ("Anser serrirostris", "큰기러기", "Tundra Bean Goose", "winter", 120),
    ("Anser albifrons", "쇠기러기", "Greater White-fronted Goose", "winter", 150),
    ("Ardea alba", "중대백로", "Great Egret", "summer", 4),
    ("Ardea cinerea", "왜가리", "Grey Heron", "resident", 3),
    ("Aix galericulata", "원앙", "Mandarin Duck", "resident", 10),
    ("Anas platyrhynchos", "청둥오리", "Mallard", "winter", 40),
    ("Aegypius monachus", "독수리", "Cinereous Vulture", "winter", 15),
    ("Haliaeetus pelagicus", "참수리", "Steller's Sea Eagle", "winter", 1),
    ("Haliaeetus albicilla", "흰꼬리수리", "White-tailed Eagle", "winter", 1),
    ("Ciconia boyciana", "황새", "Oriental Stork", "winter", 3),
    ("Chroicocephalus saundersi", "검은머리갈매기", "Saunders's Gull", "winter", 12),
    ("Larus crassirostris", "괭이갈매기", "Black-tailed Gull", "resident", 60),
    ("Pica serica", "까치", "Oriental Magpie", "resident", 3),
    ("Passer montanus", "참새", "Eurasian Tree Sparrow", "resident", 15),
    ("Hypsipetes amaurotis", "직박구리", "Brown-eared Bulbul", "resident", 4),
    ("Streptopelia orientalis", "멧비둘기", "Oriental Turtle Dove", "resident", 3),
    ("Hirundo rustica", "제비", "Barn Swallow", "summer", 6),
    ("Alcedo atthis", "물총새", "Common Kingfisher", "summer", 1),
    ("Egretta garzetta", "쇠백로", "Little Egret", "summer", 5),
]

# Wetland and estuary hotspots (approximate centres), with spread in degrees.
HOTSPOTS = [
    ("Suncheon Bay", 127.51, 34.86, 0.04), ("Nakdong Estuary", 128.95, 35.08, 0.05),
    ("Junam Reservoir", 128.68, 35.32, 0.02), ("Upo Wetland", 128.42, 35.55, 0.02),
    ("Cheonsu Bay", 126.40, 36.62, 0.06), ("Geum River Estuary", 126.74, 36.02, 0.05),
    ("Saemangeum", 126.60, 35.82, 0.08), ("Han River Estuary", 126.68, 37.72, 0.05),
    ("Cheorwon Plain", 127.30, 38.22, 0.06), ("Hwaseong Wetland", 126.74, 37.20, 0.04),
    ("Yubu Island", 126.56, 36.01, 0.02), ("Gyeongpo Lake", 128.90, 37.80, 0.02),
    ("Hado, Jeju", 126.90, 33.51, 0.03), ("Seosan Lakes", 126.42, 36.70, 0.05),
    ("Gangseo, Busan", 128.88, 35.13, 0.04), ("Ulsan Taehwa River", 129.30, 35.55, 0.03),
]

MONTHS = {
    "winter": [11, 12, 1, 2, 3], "summer": [4, 5, 6, 7, 8, 9],
    "passage": [4, 5, 8, 9, 10], "resident": list(range(1, 13)),
}

# A coarse outline of mainland South Korea for background sightings (lon, lat).
MAINLAND = [(126.1, 34.6), (126.5, 34.3), (127.4, 34.6), (128.4, 34.8), (129.0, 35.0),
            (129.4, 35.5), (129.5, 36.1), (129.4, 36.8), (129.1, 37.4), (128.6, 38.0),
            (128.3, 38.5), (127.6, 38.3), (126.9, 37.9), (126.6, 37.7), (126.6, 37.3),
            (126.5, 36.9), (126.2, 36.7), (126.5, 36.1), (126.5, 35.6), (126.3, 35.1)]

CATEGORIES = [("cafe", 30), ("restaurant", 60), ("attraction", 90), ("park", 45), ("market", 60),
              ("museum", 90), ("viewpoint", 20), ("shopping", 45), ("temple", 60)]
CATEGORY_KO = {"cafe": "카페", "restaurant": "식당", "attraction": "명소", "park": "공원", "market": "시장",
               "museum": "박물관", "viewpoint": "전망대", "shopping": "쇼핑", "temple": "사찰"}
PLACE_STATIONS = ["seoul", "busan", "daejeon", "gangneung", "jeonju", "singyeongju", "suncheon", "yeosu-expo"]


def inside(lon, lat, polygon):
    crossing = False
    j = len(polygon) - 1
    for i, (xi, yi) in enumerate(polygon):
        xj, yj = polygon[j]
        if (yi > lat) != (yj > lat) and lon < (xj - xi) * (lat - yi) / (yj - yi) + xi:
            crossing = not crossing
        j = i
    return crossing


def feature(fid, lon, lat, properties):
    return {"type": "Feature", "id": fid, "properties": properties,
            "geometry": {"type": "Point", "coordinates": [round(lon, 6), round(lat, 6)]}}


def write(name, features):
    path = os.path.join(DATA, name)
    with open(path, "w", encoding="utf-8") as out:
        json.dump({"type": "FeatureCollection", "features": features}, out,
                  ensure_ascii=False, separators=(",", ":"))
        out.write("\n")


def stations():
    return [feature(sid, lon, lat, {"name": ko, "name_en": en, "lines": lines})
            for sid, ko, en, lon, lat, lines in STATIONS]


def places(rng):
    by_id = {s[0]: s for s in STATIONS}
    result = []
    for sid in PLACE_STATIONS:
        _, ko, en, lon0, lat0, _ = by_id[sid]
        for n in range(1, 81):
            category, dwell = CATEGORIES[rng.randrange(len(CATEGORIES))]
            distance = 200 + 3800 * rng.random() ** 1.5          # metres, denser near the station
            bearing = 2 * math.pi * rng.random()
            dlat = distance * math.cos(bearing) / 111_320
            dlon = distance * math.sin(bearing) / (111_320 * math.cos(math.radians(lat0)))
            result.append(feature(f"{sid}-{n:03d}", lon0 + dlon, lat0 + dlat, {
                "name": f"{ko} {CATEGORY_KO[category]} {n}", "name_en": f"{category.title()} {n} ({en})",
                "category": category, "dwell_minutes": dwell, "station_id": sid, "source": "generated"}))
    return result


def sightings(rng, count=12000):
    start = datetime.datetime(2023, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=9)))
    result = []
    n = 0
    while len(result) < count:
        scientific, ko, en, season, mean = SPECIES[rng.randrange(len(SPECIES))]
        if rng.random() < 0.1:
            lon, lat = rng.uniform(126.1, 129.5), rng.uniform(34.3, 38.5)
            if not inside(lon, lat, MAINLAND):
                continue
            site = None
        else:
            site, hlon, hlat, spread = HOTSPOTS[rng.randrange(len(HOTSPOTS))]
            lon, lat = rng.gauss(hlon, spread), rng.gauss(hlat, spread)
        year = 2023 + rng.randrange(3)
        month = rng.choice(MONTHS[season])
        day = 1 + rng.randrange(28)
        minute = rng.randrange(6 * 60, 18 * 60)
        observed = start.replace(year=year, month=month, day=day, hour=minute // 60, minute=minute % 60)
        count_seen = max(1, int(rng.expovariate(1 / mean)))
        n += 1
        properties = {"species": scientific, "species_ko": ko, "species_en": en, "count": count_seen,
                      "observed_at": observed.isoformat(), "observer_id": f"obs-{rng.randrange(400):03d}"}
        if site:
            properties["site"] = site
        result.append(feature(f"s{n:05d}", lon, lat, properties))
    return result


def main():
    rng = random.Random(SEED)
    write("stations.geojson", stations())
    write("places.geojson", places(rng))
    write("sightings.geojson", sightings(rng))
    layers = {"layers": [
        {"name": "sightings", "kind": "sightings", "file": "sightings.geojson",
         "description": "Synthetic bird sightings at Korean wetlands, with seasonality", "license": "CC0-1.0"},
        {"name": "places", "kind": "places", "file": "places.geojson",
         "description": "Synthetic places around eight railway stations", "license": "CC0-1.0"},
        {"name": "stations", "kind": "stations", "file": "stations.geojson",
         "description": "Major Korean railway stations (approximate positions)", "license": "CC0-1.0"},
    ]}
    with open(os.path.join(DATA, "layers.json"), "w", encoding="utf-8") as out:
        json.dump(layers, out, ensure_ascii=False, indent=2)
        out.write("\n")


if __name__ == "__main__":
    main()
